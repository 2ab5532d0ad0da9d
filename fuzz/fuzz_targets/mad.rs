//! Fuzz target: the mad parser must never panic on any bytes.
#![no_main]
#[allow(unused_imports)]
use rdmascope_wire::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = mad::Mad::parse(data);
    if data.len() >= 2 { let _ = mad::CmMessage::parse(0x10 + u16::from(data[0] % 11), &data[1..]); }
});
