//! Fuzz target: the link parser must never panic on any bytes.
#![no_main]
#[allow(unused_imports)]
use rdmascope_wire::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = link::SllRepr::parse(data); let _ = link::Sll2Repr::parse(data); let _ = link::ErfRepr::parse(data); let _ = link::IpoibRepr::parse(data);
});
