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
    scenario_events_cut(scenario, packets, usize::MAX)
}

/// [`scenario_events`] with every frame cut to `snaplen` bytes, as `editcap -s` does.
pub fn scenario_events_cut(scenario: Scenario, packets: u64, snaplen: usize) -> Vec<Event> {
    let o = GenOptions {
        scenario,
        packets: Some(packets),
        ..GenOptions::default()
    };
    generated_events(&o, snaplen)
}

/// The events of the frames on the Ethernet interface of what `o` generates, each cut to
/// `snaplen` bytes.
pub fn generated_events(o: &GenOptions, snaplen: usize) -> Vec<Event> {
    let mut eth = Eth(Vec::new());
    generate(o, &mut eth).expect("scenario");
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
            let cut = &d[..d.len().min(snaplen)];
            Event::decode(meta, linktype::ETHERNET, cut, d.len() as u32, &opts)
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

/// Scenarios with every kind of transport event: without loss, with loss, RNR NAKs,
/// reordering, fatal NAKs, and CNPs.
pub const TRANSPORT_SCENARIOS: [Scenario; 6] = [
    Scenario::Clean,
    Scenario::Lossy,
    Scenario::Rnr,
    Scenario::Reorder,
    Scenario::Errors,
    Scenario::Incast,
];

/// The transport's counters of a report's totals and flows.
pub const TRANSPORT_COUNTERS: [&str; 8] = [
    "retransmitted_packets",
    "gap_filled_packets",
    "reordered_packets",
    "missing_packets",
    "duplicate_acks",
    "naks",
    "rnr_naks",
    "timeouts",
];

/// The report of `evs`, fed one by one, as JSON.
pub fn report(evs: &[Event]) -> Value {
    let mut a = Analyzer::new(Config::default());
    a.feed_events(evs);
    serde_json::to_value(a.finish()).expect("report serialises")
}

/// The flow `(src, dst, dest_qp)` of report `r`.
pub fn flow(r: &Value, src: &str, dst: &str, qp: u32) -> Value {
    r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["src"] == src && f["dst"] == dst && f["dest_qp"] == qp)
        .cloned()
        .unwrap_or_else(|| panic!("no flow {src} > {dst} qp {qp}"))
}

/// The codes of report `r`'s findings but `skip`, sorted.
pub fn codes_but(r: &Value, skip: &str) -> Vec<String> {
    let mut v: Vec<String> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .filter(|c| c != skip)
        .collect();
    v.sort();
    v
}

/// The finding `code` of the report of `evs`, if it has one.
pub fn finding(evs: &[Event], code: &str) -> Option<Value> {
    report_finding(&report(evs), code).cloned()
}

/// The finding `code` of report `r`, if it has one.
pub fn report_finding<'a>(r: &'a Value, code: &str) -> Option<&'a Value> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
}

/// Line `i` of the evidence of report `r`'s finding `code` (`name` says which report).
pub fn evidence<'a>(r: &'a Value, code: &str, i: usize, name: &str) -> &'a Value {
    let f = report_finding(r, code).unwrap_or_else(|| panic!("{name}: no {code}"));
    &f["evidence"][i]
}
