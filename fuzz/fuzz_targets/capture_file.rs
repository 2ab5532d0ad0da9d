//! Fuzz target: the capture-file reader must never panic, whatever the file holds.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rdmascope_capture::CaptureReader;

fuzz_target!(|data: &[u8]| {
    let src: Box<dyn std::io::Read + Send> = Box::new(std::io::Cursor::new(data.to_vec()));
    if let Ok(mut r) = CaptureReader::from_reader("fuzz", src) {
        while let Ok(Some(rec)) = r.next() {
            let _ = rdmascope_wire::Frame::decode(rec.linktype, rec.data, rec.orig_len, &Default::default());
        }
    }
});
