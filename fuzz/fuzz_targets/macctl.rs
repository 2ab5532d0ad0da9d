//! Fuzz target: the macctl parser must never panic on any bytes.
#![no_main]
#[allow(unused_imports)]
use rdmascope_wire::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = macctl::MacControl::parse(data);
});
