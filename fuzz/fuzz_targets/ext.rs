//! Fuzz target: the ext parser must never panic on any bytes.
#![no_main]
#[allow(unused_imports)]
use rdmascope_wire::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((&op, rest)) = data.split_first() { let _ = ext::ExtHeaders::parse(opcode::OpInfo::of(op).ext, rest); }
});
