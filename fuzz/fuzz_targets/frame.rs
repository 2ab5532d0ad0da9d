//! Fuzz target: the frame parser must never panic on any bytes.
#![no_main]
#[allow(unused_imports)]
use rdmascope_wire::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    const LT: [u32; 11] = [1, 12, 14, 101, 113, 197, 242, 247, 228, 229, 276];
    if let Some((&sel, rest)) = data.split_first() {
        let f = Frame::decode(LT[usize::from(sel) % LT.len()], rest, rest.len() as u32 + u32::from(sel & 1) * 64, &DecodeOptions::default());
        fields::visit(&fields::RecordMeta::default(), &f, &mut |_, v| { let _ = v.to_string(); });
    }
});
