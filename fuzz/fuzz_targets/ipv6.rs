//! Fuzz target: the ipv6 parser must never panic on any bytes.
#![no_main]
#[allow(unused_imports)]
use rdmascope_wire::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = ip::Ipv6Packet::new_checked(data) { let _ = ip::Ipv6Repr::parse(&p); }
});
