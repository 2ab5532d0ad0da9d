//! Fuzz target: the bth parser must never panic on any bytes.
#![no_main]
#[allow(unused_imports)]
use rdmascope_wire::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = bth::BthPacket::new_checked(data) { let _ = bth::BthRepr::parse(&p); }
});
