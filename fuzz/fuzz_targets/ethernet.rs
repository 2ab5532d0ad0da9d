//! Fuzz target: the ethernet parser must never panic on any bytes.
#![no_main]
#[allow(unused_imports)]
use rdmascope_wire::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = ethernet::EthernetFrame::new_checked(data) { let _ = ethernet::EthernetRepr::parse(&f); }
    if data.len() >= 2 { let _ = ethernet::VlanRepr::parse(0x8100, &data[2..]); }
});
