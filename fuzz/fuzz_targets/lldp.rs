//! Fuzz target: walking an LLDPDU and reading its DCB TLVs must never panic on any bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rdmascope_wire::lldp::LldpPacket;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = LldpPacket::new_checked(data) {
        let _ = p.tlvs().count();
        let _ = (p.sender().map(|s| s.to_string()), p.port().map(|s| s.to_string()));
        let _ = (p.ttl(), p.pfc(), p.ets(), p.cn(), p.app().count());
        let _ = (p.any_pfc(), p.any_app().count(), p.cee_app().count());
    }
});
