//! Helpers shared by the integration tests: the external corpus and decoding whole files.

#![allow(dead_code)]

use std::path::PathBuf;

use rdmascope_capture::CaptureReader;
use rdmascope_wire::{DecodeOptions, Frame};

/// `$RDMASCOPE_CORPUS`, or `None` with a printed notice (the test then skips).
pub fn corpus() -> Option<PathBuf> {
    match std::env::var_os("RDMASCOPE_CORPUS") {
        Some(p) if PathBuf::from(&p).is_dir() => Some(PathBuf::from(p)),
        _ => {
            eprintln!("NOTICE: RDMASCOPE_CORPUS is not set (or not a directory): skipping the corpus test. .ci/run sets it to ../shared/captures.");
            None
        }
    }
}

/// Capture files in the corpus, sorted.
pub fn corpus_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read corpus dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|x| x == "pcap" || x == "pcapng" || x == "gz")
        })
        .collect();
    v.sort();
    v
}

/// One record, owned.
pub struct Rec {
    pub number: u64,
    pub ts_ns: u64,
    pub linktype: u32,
    pub orig_len: u32,
    pub data: Vec<u8>,
}

impl Rec {
    pub fn decode(&self, opts: &DecodeOptions) -> Frame<'_> {
        Frame::decode(self.linktype, &self.data, self.orig_len, opts)
    }
}

/// Every record of a file.
pub fn read_all(path: &std::path::Path) -> Vec<Rec> {
    let mut r = CaptureReader::open(path.to_str().unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let mut out = Vec::new();
    while let Some(rec) = r.next().unwrap_or_else(|e| panic!("{e}")) {
        out.push(Rec {
            number: out.len() as u64 + 1,
            ts_ns: rec.ts_ns,
            linktype: rec.linktype,
            orig_len: rec.orig_len,
            data: rec.data.to_vec(),
        });
    }
    out
}

/// `tshark` on PATH, or `None` with a printed notice.
pub fn tshark() -> Option<&'static str> {
    let ok = std::process::Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Some("tshark")
    } else {
        eprintln!("NOTICE: tshark is not installed: skipping the Wireshark differential test (apt-get install -y tshark; .ci/run does this).");
        None
    }
}

/// The `rdmascope` binary under test.
pub fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_rdmascope"))
}

/// A temporary directory for one test file of this process. The tests of a file share it and
/// run in parallel, so none removes it; instead, directories of the same tag left by test
/// processes that have exited are removed here (some hold hundreds of MB of captures).
pub fn tmp_dir(tag: &str) -> PathBuf {
    let prefix = format!("rdmascope-{tag}-");
    let me = std::process::id();
    if std::path::Path::new("/proc/self").exists() {
        let stale = std::fs::read_dir(std::env::temp_dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let pid: u32 = name.strip_prefix(&prefix)?.parse().ok()?;
                let gone = pid != me && !std::path::Path::new(&format!("/proc/{pid}")).exists();
                gone.then(|| e.path())
            });
        for d in stale {
            let _ = std::fs::remove_dir_all(d);
        }
    }
    let d = std::env::temp_dir().join(format!("{prefix}{me}"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every `gen` scenario.
pub const SCENARIOS: [&str; 10] = [
    "clean",
    "lossy",
    "rnr",
    "incast",
    "pfc-storm",
    "misconfig",
    "ib",
    "mixed",
    "reorder",
    "errors",
];
