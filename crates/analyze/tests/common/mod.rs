//! What several integration tests share: the `clean` scenario's events, and one finding of
//! the report of some events.

// Each test crate that shares this module uses only some of it.
#![allow(dead_code)]

use rdmascope_analyze::{Analyzer, Config, Event, PacketMeta};
use rdmascope_synth::{generate, GenOptions, Scenario, Sink};
use rdmascope_wire::link::linktype;
use rdmascope_wire::opcode::{OpInfo, Operation};
use rdmascope_wire::DecodeOptions;
use serde_json::Value;

/// The frames of interface 0 (the Ethernet one) with their timestamps.
struct Eth(Vec<(u64, Vec<u8>)>);

impl Sink for Eth {
    fn frame(&mut self, iface: u32, ts: u64, _: u32, data: &[u8]) -> std::io::Result<()> {
        if iface == 0 {
            self.0.push((ts, data.to_vec()));
        }
        Ok(())
    }
}

/// The events of the first 2,000 frames of the `clean` scenario.
pub fn clean_events() -> Vec<Event> {
    scenario_events(Scenario::Clean, 2000)
}

/// The events of the first `packets` frames on the Ethernet interface of `scenario`.
pub fn scenario_events(scenario: Scenario, packets: u64) -> Vec<Event> {
    let mut eth = Eth(Vec::new());
    let o = GenOptions {
        scenario,
        packets: Some(packets),
        ..GenOptions::default()
    };
    generate(&o, &mut eth).expect("scenario");
    let opts = DecodeOptions::default();
    eth.0
        .iter()
        .enumerate()
        .map(|(n, (ts, d))| {
            let meta = PacketMeta {
                number: n as u64 + 1,
                ts_ns: *ts,
                orig_len: d.len() as u32,
                if_id: 0,
                if_speed: None,
            };
            Event::decode(meta, linktype::ETHERNET, d, d.len() as u32, &opts)
        })
        .collect()
}

/// An ACK or a READ response.
pub fn is_answer(e: &Event) -> bool {
    e.bth.is_some_and(|b| {
        let op = OpInfo::of(b.opcode).op;
        op == Operation::Acknowledge || op.is_response()
    })
}

/// The finding `code` of the report of `evs`, if it has one.
pub fn finding(evs: &[Event], code: &str) -> Option<Value> {
    let mut a = Analyzer::new(Config::default());
    for e in evs {
        a.event(e);
    }
    let r = serde_json::to_value(a.finish()).expect("report serialises");
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .cloned()
}
