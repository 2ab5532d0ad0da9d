//! Fuzz target: the ipv4 parser must never panic on any bytes.
#![no_main]
#[allow(unused_imports)]
use rdmascope_wire::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = ip::Ipv4Packet::new_checked(data) { let _ = ip::Ipv4Repr::parse(&p); let _ = p.verify_checksum(); }
});
