//! End-to-end capture and replay over a real veth pair between two network namespaces.
//!
//! Needs root (CI runs as root) and iproute2; skips with a notice otherwise. The tests run one
//! at a time (they share the CPU with the replay's pacing loop), and every namespace, link and
//! mount they create is removed by a guard's `Drop`, which also runs when a test fails.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{bin, read_all, tmp_dir};

static SERIAL: Mutex<()> = Mutex::new(());
static NEXT: AtomicU32 = AtomicU32::new(0);

fn can_run() -> bool {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let ip = Command::new("ip")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !root || !ip {
        eprintln!(
            "NOTICE: skipping the live veth test: it needs root and iproute2 (`ip`); \
             root={root} ip={ip}. CI runs as root and .ci/run installs iproute2."
        );
    }
    root && ip
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two namespaces joined by a veth pair; both removed on drop.
struct Link {
    ns: [String; 2],
    dev: [String; 2],
}

impl Link {
    fn new() -> Self {
        let id = format!(
            "{}x{}",
            std::process::id() % 100_000,
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let ns = [format!("rdmascope-a{id}"), format!("rdmascope-b{id}")];
        let dev = [format!("rsa{id}"), format!("rsb{id}")];
        let link = Self { ns, dev };
        for n in &link.ns {
            ip(&["netns", "add", n]);
        }
        ip(&[
            "link",
            "add",
            &link.dev[0],
            "type",
            "veth",
            "peer",
            "name",
            &link.dev[1],
        ]);
        for i in 0..2 {
            ip(&["link", "set", &link.dev[i], "netns", &link.ns[i]]);
            ip(&[
                "-n",
                &link.ns[i],
                "link",
                "set",
                &link.dev[i],
                "mtu",
                "9000",
            ]);
            ip(&["-n", &link.ns[i], "link", "set", &link.dev[i], "up"]);
        }
        link
    }

    /// `rdmascope ARGS` inside namespace `i`.
    fn cmd(&self, i: usize, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args([
            "netns",
            "exec",
            &self.ns[i],
            env!("CARGO_BIN_EXE_rdmascope"),
        ]);
        c.args(args);
        c
    }

    /// Starts `capture` on side 0 and waits until it says it is capturing.
    fn start_capture(&self, args: &[&str], stderr_file: &Path) -> Child {
        let mut full = vec!["capture", "-i", &self.dev[0]];
        full.extend_from_slice(args);
        let err = std::fs::File::create(stderr_file).unwrap();
        let child = self
            .cmd(0, &full)
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .expect("start capture");
        let t0 = Instant::now();
        while !std::fs::read_to_string(stderr_file)
            .unwrap_or_default()
            .contains("capturing on")
        {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "capture did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        child
    }

    /// Replays `file` from side 1.
    fn replay(&self, file: &Path, args: &[&str]) -> String {
        let mut full = vec!["replay", file.to_str().unwrap(), "-i", &self.dev[1]];
        full.extend_from_slice(args);
        let out = self.cmd(1, &full).output().expect("replay");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "replay failed: {err}");
        err
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        for n in &self.ns {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

fn gen(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let st = bin()
        .args(["gen", "-o", out.to_str().unwrap()])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    out
}

fn wait(mut child: Child, limit: Duration) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            panic!("the process did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kernel_drops(stderr: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.contains("dropped by the kernel"))
        .unwrap_or_else(|| panic!("no summary line in: {stderr}"));
    let before = line.split(" dropped by the kernel").next().unwrap();
    before.rsplit(' ').next().unwrap().parse().unwrap()
}

fn assert_identical(sent: &Path, got: &Path) {
    let a = read_all(sent);
    let b = read_all(got);
    assert_eq!(
        a.len(),
        b.len(),
        "frame count: sent {} captured {}",
        a.len(),
        b.len()
    );
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.data, y.data, "frame {} differs", x.number);
        assert_eq!(x.orig_len, y.orig_len, "frame {} length", x.number);
    }
}

/// `show` and tshark both read every one of the `packets` records of `file`, without an error
/// or a "cut short" complaint.
fn assert_readable_to_the_end(file: &Path, packets: usize) {
    let show = bin()
        .args(["show", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        show.status.success(),
        "{}",
        String::from_utf8_lossy(&show.stderr)
    );
    assert_eq!(show.stdout.iter().filter(|&&b| b == b'\n').count(), packets);
    if let Some(tshark) = common::tshark() {
        let t = Command::new(tshark)
            .args([
                "-r",
                file.to_str().unwrap(),
                "-T",
                "fields",
                "-e",
                "frame.number",
            ])
            .output()
            .unwrap();
        let terr = String::from_utf8_lossy(&t.stderr);
        assert!(
            t.status.success() && !terr.contains("cut short"),
            "tshark: {terr}"
        );
        assert_eq!(t.stdout.iter().filter(|&&b| b == b'\n').count(), packets);
    }
}

fn identical_at_100k_pps(gen_args: &[&str], packets: usize) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run() {
        return;
    }
    let dir = tmp_dir("live-identical");
    let count = packets.to_string();
    let mut args = vec!["--packets", &count];
    args.extend_from_slice(gen_args);
    let sent = gen(&dir, "sent.pcap", &args);
    let got = dir.join("got.pcapng");
    let err = dir.join("capture.err");
    let link = Link::new();
    let cap = link.start_capture(
        &[
            "-w",
            got.to_str().unwrap(),
            "-c",
            &count,
            "--duration",
            "60s",
        ],
        &err,
    );
    let replay = link.replay(&sent, &["--pps", "100000"]);
    assert!(
        replay.contains(&format!("sent {packets} frames")),
        "{replay}"
    );
    let st = wait(cap, Duration::from_secs(60));
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert!(st.success(), "capture failed: {stderr}");
    assert_eq!(kernel_drops(&stderr), 0, "{stderr}");
    assert!(
        stderr.contains(&format!("{packets} packets captured")),
        "{stderr}"
    );
    assert_identical(&sent, &got);
    // The interface block names the interface, with nanosecond timestamps; the section comment
    // names the host and the kernel.
    let mut r = rdmascope_capture::CaptureReader::open(got.to_str().unwrap()).unwrap();
    assert!(r.next().unwrap().is_some());
    let ifs = r.interfaces();
    assert_eq!(ifs.len(), 1);
    assert_eq!(ifs[0].name.as_deref(), Some(link.dev[0].as_str()));
    assert_eq!((ifs[0].linktype, ifs[0].ts_per_sec), (1, 1_000_000_000));
    let head = std::fs::read(&got).unwrap();
    let head = String::from_utf8_lossy(&head[..256.min(head.len())]).into_owned();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert!(
        head.contains("rdmascope") && head.contains(kernel.trim()),
        "{head}"
    );
    let mode = std::fs::metadata(&got).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o600
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn replayed_frames_are_captured_byte_identical_at_100k_pps() {
    identical_at_100k_pps(&["--scenario", "mixed"], 100_000);
}

#[test]
fn vlan_tags_the_kernel_strips_are_put_back() {
    identical_at_100k_pps(&["--scenario", "lossy", "--vlan", "100", "--ipv6"], 20_000);
}

#[test]
fn sigint_leaves_a_file_tshark_and_show_read_to_the_end() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run() {
        return;
    }
    let dir = tmp_dir("live-sigint");
    let sent = gen(
        &dir,
        "sent.pcap",
        &["--scenario", "mixed", "--packets", "100000"],
    );
    let got = dir.join("got.pcapng");
    let err = dir.join("capture.err");
    let link = Link::new();
    let cap = link.start_capture(&["-w", got.to_str().unwrap()], &err);
    let pid = cap.id();
    std::thread::scope(|s| {
        s.spawn(|| link.replay(&sent, &["--pps", "50000"]));
        std::thread::sleep(Duration::from_millis(800));
        let st = Command::new("sh")
            .args(["-c", &format!("kill -INT {pid}")])
            .status()
            .unwrap();
        assert!(st.success());
    });
    let st = wait(cap, Duration::from_secs(30));
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert!(st.success(), "capture after SIGINT: {stderr}");
    assert!(stderr.contains("SIGINT received"), "{stderr}");
    let ours = read_all(&got);
    assert!(
        !ours.is_empty() && ours.len() < 100_000,
        "{} packets",
        ours.len()
    );
    assert_readable_to_the_end(&got, ours.len());
    std::fs::remove_dir_all(&dir).ok();
}

/// A small tmpfs mounted for one test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn new(dir: PathBuf, size: &str) -> Self {
        std::fs::create_dir_all(&dir).unwrap();
        let st = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size}"),
                "tmpfs",
                dir.to_str().unwrap(),
            ])
            .status()
            .unwrap();
        assert!(st.success(), "mount tmpfs");
        Self(dir)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_ends_with_a_clear_error_and_a_readable_file() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run() {
        return;
    }
    let dir = tmp_dir("live-full");
    let sent = gen(
        &dir,
        "sent.pcap",
        &["--scenario", "mixed", "--packets", "20000"],
    );
    let fs = Tmpfs::new(dir.join("small"), "2m");
    let got = fs.0.join("got.pcapng");
    let err = dir.join("capture.err");
    let link = Link::new();
    let cap = link.start_capture(&["-w", got.to_str().unwrap(), "--duration", "30s"], &err);
    link.replay(&sent, &["--pps", "100000"]);
    let st = wait(cap, Duration::from_secs(40));
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert!(!st.success(), "a full disk must fail the capture: {stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(
        stderr.contains(got.to_str().unwrap()),
        "the error names the file: {stderr}"
    );
    let ours = read_all(&got);
    assert!(!ours.is_empty());
    assert_readable_to_the_end(&got, ours.len());
    drop(fs);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn ring_files_rotate_at_the_size_asked_and_keep_n() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run() {
        return;
    }
    let dir = tmp_dir("live-ring");
    let sent = gen(
        &dir,
        "sent.pcap",
        &["--scenario", "mixed", "--packets", "3000"],
    );
    let out = dir.join("ring").join("cap.pcapng");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let err = dir.join("capture.err");
    let link = Link::new();
    let size = 200_000u64;
    let cap = link.start_capture(
        &[
            "-w",
            out.to_str().unwrap(),
            "-c",
            "3000",
            "--file-size",
            "200k",
            "--files",
            "3",
            "--duration",
            "60s",
        ],
        &err,
    );
    link.replay(&sent, &["--pps", "20000"]);
    let st = wait(cap, Duration::from_secs(60));
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert!(st.success(), "{stderr}");
    let mut files: Vec<PathBuf> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 3, "{files:?}");
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let index = |n: &str| -> u32 {
        n.trim_start_matches("cap-")
            .trim_end_matches(".pcapng")
            .parse()
            .unwrap()
    };
    let first = index(&names[0]);
    assert!(first >= 3, "the oldest files were removed: {names:?}");
    assert_eq!([index(&names[1]), index(&names[2])], [first + 1, first + 2]);
    let all = read_all(&sent);
    let max_block = all
        .iter()
        .map(|r| 32 + r.data.len().div_ceil(4) * 4)
        .max()
        .unwrap() as u64;
    let mut kept = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let len = std::fs::metadata(f).unwrap().len();
        assert!(len <= size, "{} is {len} bytes, over {size}", names[i]);
        if i < 2 {
            assert!(
                len + max_block > size,
                "{} rotated early at {len} bytes",
                names[i]
            );
        }
        kept.extend(read_all(f));
    }
    // The kept files hold the newest packets, in order, with nothing missing between them.
    let tail = &all[all.len() - kept.len()..];
    assert!(tail.iter().zip(&kept).all(|(a, b)| a.data == b.data));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn namespaces_and_links_are_removed_when_a_test_fails() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run() {
        return;
    }
    let mut names = None;
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let link = Link::new();
        names = Some((link.ns.clone(), link.dev.clone()));
        panic!("a failing test");
    }));
    assert!(r.is_err());
    let (ns, dev) = names.unwrap();
    let list = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    for n in &ns {
        assert!(!list.contains(n.as_str()), "{n} left behind");
    }
    let links = Command::new("ip")
        .args(["-o", "link", "show"])
        .output()
        .unwrap();
    let links = String::from_utf8_lossy(&links.stdout);
    for d in &dev {
        assert!(!links.contains(d.as_str()), "{d} left behind");
    }
}

#[test]
fn replay_reports_send_errors_and_capture_names_missing_interfaces() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run() {
        return;
    }
    let out = bin()
        .args(["capture", "-i", "rdmascope-nope0", "-c", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("no interface named \"rdmascope-nope0\""),
        "{err}"
    );
    let dir = tmp_dir("live-errors");
    // Frames larger than the veth MTU (200 here) cannot be sent: each is counted and reported.
    let sent = gen(
        &dir,
        "big.pcap",
        &["--scenario", "clean", "--packets", "50"],
    );
    let link = Link::new();
    ip(&["-n", &link.ns[1], "link", "set", &link.dev[1], "mtu", "200"]);
    let out = link
        .cmd(
            1,
            &[
                "replay",
                sent.to_str().unwrap(),
                "-i",
                &link.dev[1],
                "--topspeed",
            ],
        )
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("send errors") && err.contains("first send error: frame"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A replay waiting out a long gap in the capture (an hour here), or a rate so low that the
/// next frame is due beyond what the clock can say, stops at SIGINT at once.
#[test]
fn sigint_stops_a_replay_in_a_long_wait() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !can_run() {
        return;
    }
    let dir = tmp_dir("live-replay-wait");
    let sent = gen(&dir, "two.pcap", &["--scenario", "clean", "--packets", "2"]);
    // Classic pcap, little-endian: the second record an hour after the first.
    let mut b = std::fs::read(&sent).unwrap();
    let second = 24 + 16 + u32::from_le_bytes(b[32..36].try_into().unwrap()) as usize;
    let sec = u32::from_le_bytes(b[second..second + 4].try_into().unwrap()) + 3600;
    b[second..second + 4].copy_from_slice(&sec.to_le_bytes());
    let gap = dir.join("gap.pcap");
    std::fs::write(&gap, &b).unwrap();
    let link = Link::new();
    for (file, pace) in [(&gap, &[][..]), (&sent, &["--pps", "1e-300"][..])] {
        let mut args = vec!["replay", file.to_str().unwrap(), "-i", &link.dev[1]];
        args.extend_from_slice(pace);
        let err_file = dir.join("replay.err");
        let child = link
            .cmd(1, &args)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err_file).unwrap())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let st = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let st = wait(child, Duration::from_secs(5));
        let err = std::fs::read_to_string(&err_file).unwrap();
        assert!(st.success(), "replay {pace:?}: {err}");
        assert!(
            err.contains("SIGINT received") && err.contains("sent 1 frames"),
            "{err}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
