//! Fuzz target: the analysis must never panic, whatever the capture holds. The bytes are read
//! as a capture file, decoded into events in batches as `analyze` does, fed to the analyser,
//! and its report (findings included) serialised as the JSON output is.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rdmascope_analyze::{Analyzer, Batch, Config, PacketMeta};
use rdmascope_capture::CaptureReader;

/// Events per batch: small, so batch ends (and the touch ahead at them) come often.
const BATCH: usize = 16;

fuzz_target!(|data: &[u8]| {
    let src: Box<dyn std::io::Read + Send> = Box::new(std::io::Cursor::new(data.to_vec()));
    let Ok(mut r) = CaptureReader::from_reader("fuzz", src) else {
        return;
    };
    // Few flows tracked one by one, so the untracked path is reached too.
    let mut an = Analyzer::new(Config {
        max_flows: Some(32),
        ..Config::default()
    });
    let opts = Default::default();
    let mut batch = Batch::default();
    let mut n = 0;
    while let Ok(Some(rec)) = r.next() {
        n += 1;
        let meta = PacketMeta {
            number: n,
            ts_ns: rec.ts_ns,
            orig_len: rec.orig_len,
            if_id: rec.if_id,
            if_speed: rec.if_speed,
        };
        batch.decode(meta, rec.linktype, rec.data, rec.orig_len, &opts);
        if batch.events().len() == BATCH {
            an.feed(&batch);
            batch.clear();
        }
    }
    an.feed(&batch);
    let report = an.finish();
    let _ = serde_json::to_vec(&report);
});
