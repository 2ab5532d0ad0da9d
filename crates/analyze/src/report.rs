//! The report model: plain data (the flows' reports built one at a time, see [`Flows`]),
//! serialised as `rdmascope analyze --json` (schema `rdmascope.analyze.v1`, documented in
//! docs/json.md). Renderers consume it; nothing here prints.

use std::ops::AddAssign;

use serde::{Serialize, Serializer};

use crate::analyzer::{Analyzer, FlowState, Node};

/// A map with few keys kept as a list sorted by key, serialised as a JSON object. A flow
/// counts a handful of opcodes and message sizes; a `BTreeMap` node for each would cost several
/// times the entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmallMap<K, V>(Vec<(K, V)>);

impl<K, V> Default for SmallMap<K, V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<K: Ord + Copy, V: Copy + AddAssign> SmallMap<K, V> {
    /// Adds `v` to the value of `k` (inserting it).
    pub fn add(&mut self, k: K, v: V) {
        match self.0.binary_search_by(|(x, _)| x.cmp(&k)) {
            Ok(i) => self.0[i].1 += v,
            Err(i) => self.0.insert(i, (k, v)),
        }
    }

    /// The map of `entries`, already sorted by key, each key once.
    pub(crate) fn from_sorted(entries: Vec<(K, V)>) -> Self {
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
        Self(entries)
    }

    pub fn get(&self, k: K) -> Option<V> {
        self.0
            .binary_search_by(|(x, _)| x.cmp(&k))
            .ok()
            .map(|i| self.0[i].1)
    }

    /// (key, value) in key order.
    pub fn iter(&self) -> impl Iterator<Item = (K, V)> + '_ {
        self.0.iter().copied()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<K: Serialize, V: Serialize> Serialize for SmallMap<K, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Naks {
    pub psn_sequence_error: u64,
    pub invalid_request: u64,
    pub remote_access_error: u64,
    pub remote_operational_error: u64,
    pub invalid_rd_request: u64,
}

impl Naks {
    /// NAKs of every code.
    pub fn total(&self) -> u64 {
        self.psn_sequence_error
            + self.invalid_request
            + self.remote_access_error
            + self.remote_operational_error
            + self.invalid_rd_request
    }
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Ecn {
    pub not_ect: u64,
    pub ect0: u64,
    pub ect1: u64,
    pub ce: u64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Icrc {
    pub ok: u64,
    pub bad: u64,
    pub truncated: u64,
    pub unverifiable: u64,
}

/// Counters kept for the whole capture and for each flow.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Counters {
    pub packets: u64,
    pub bytes: u64,
    pub payload_bytes: u64,
    /// Packets per opcode name (`RC_SEND_FIRST`, `CNP`, `0x18` for an unknown one).
    pub opcodes: SmallMap<&'static str, u64>,
    pub retransmitted_packets: u64,
    pub gap_filled_packets: u64,
    /// Gap-filled packets that the network delivered out of order rather than lost.
    pub reordered_packets: u64,
    pub missing_packets: u64,
    pub duplicate_acks: u64,
    pub naks: Naks,
    pub rnr_naks: u64,
    pub timeouts: u64,
    pub cnp: u64,
    pub ecn: Ecn,
    pub icrc: Icrc,
}

/// count / p50 / p99 / max of a latency, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Latency {
    pub count: u64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

/// Retransmissions by what triggered them.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Triggers {
    pub nak: u64,
    pub rnr: u64,
    pub timeout: u64,
    pub unknown: u64,
    /// Passes that re-read a READ from a PSN the responder had answered beyond: the requester
    /// found READ responses missing (lost, or dropped with a bad ICRC).
    pub read_response_gap: u64,
}

/// Messages reassembled from first/middle/last packets.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Messages {
    pub count: u64,
    pub send: u64,
    pub write: u64,
    pub read: u64,
    pub atomic: u64,
    pub bytes: u64,
    pub min_size: u64,
    pub max_size: u64,
    /// Message sizes by power of two (key: upper bound in bytes).
    pub size_histogram: SmallMap<u64, u64>,
    pub read_bytes_requested: u64,
    pub read_bytes_returned: u64,
}

/// One flow: (source node, destination node, destination QP).
#[derive(Debug, Clone, Serialize)]
pub struct Flow {
    pub src: String,
    pub dst: String,
    pub dest_qp: u32,
    pub transport: String,
    #[serde(flatten)]
    pub counters: Counters,
    pub first_ts_ns: u64,
    pub last_ts_ns: u64,
    pub goodput_bps: u64,
    pub retransmission_triggers: Triggers,
    /// Reordered packets the requester resent all the same (go-back-N after a NAK).
    pub reordered_resent: u64,
    /// The most PSNs a reordered packet arrived behind.
    pub reorder_depth: u64,
    /// The most go-back-N passes after ACK timeouts with no response between them: the
    /// requester's retries of one request (a QP gives up after retry_cnt of them, 7 at most).
    pub timeouts_in_a_row: u64,
    /// The most of those after which the requester sent no new request before its
    /// connection ended: the retries it may have run out of (findings only).
    #[serde(skip)]
    pub stuck_retries: u64,
    /// The most RNR NAKs this (requester) flow got with no other response between them: its
    /// RNR retries (a QP gives up after its RNR retry count of them, unless that is 7).
    pub rnr_naks_in_a_row: u64,
    pub ack_latency_ns: Latency,
    pub read_latency_ns: Latency,
    pub gap_to_nak_ns: Latency,
    pub nak_to_retransmission_ns: Latency,
    /// ACK timeout → retransmission: for each go-back-N pass an ACK timeout started, how long
    /// the requester's timer ran, from the resent packet's last sending or the last ACK that
    /// acknowledged waiting requests, if later (see `transport.timeout`).
    pub timeout_wait_ns: Latency,
    pub ce_to_cnp_ns: Latency,
    pub cnp_interval_ns: Latency,
    /// Mean send rate of this (requester) flow in the 100 µs before and after the CNPs it got.
    pub rate_before_cnp_bps: u64,
    pub rate_after_cnp_bps: u64,
    pub messages: Messages,
    /// Largest FIRST/MIDDLE payload: the path MTU this direction uses.
    pub inferred_mtu: Option<u32>,
    pub max_payload: u32,
    pub priorities: Vec<u8>,
    pub udp_sport: Option<u16>,
    pub rnr_timer_us: Vec<u32>,
    /// The frames come from an offloaded-traffic sniffer (source MAC changes every frame).
    pub sniffer_artefacts: bool,
}

/// One end of a connection.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct End {
    pub node: String,
    pub qpn: u32,
    pub start_psn: Option<u32>,
}

/// A connection: the two flows of an RC/UC QP pair.
#[derive(Debug, Clone, Serialize)]
pub struct Connection {
    pub a: End,
    pub b: End,
    pub path_mtu: Option<u32>,
    pub transport: String,
    /// "cm" (from REQ/REP) or "inferred" (from responses and ACKs).
    pub learned: String,
    pub application: Option<String>,
    pub service_id: Option<u64>,
    pub state: String,
    pub reject_reason: Option<u16>,
    pub observed_mtu_a_to_b: Option<u32>,
    pub observed_mtu_b_to_a: Option<u32>,
}

/// PFC / PAUSE per source MAC and priority (255 = 802.3x PAUSE, all priorities).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct PfcPort {
    pub src_mac: String,
    pub priority: u8,
    pub frames: u64,
    pub pause_ns: u64,
    pub episodes: u64,
    pub longest_episode_ns: u64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Pfc {
    pub frames: u64,
    pub xoff_frames: u64,
    pub xon_frames: u64,
    pub pause_episodes: u64,
    pub pause_ns_total: u64,
    pub link_bps: u64,
    pub by_port: Vec<PfcPort>,
    /// Frames whose (source, priority) came after the most followed one by one: counted in
    /// `frames`, in no port.
    pub untracked_frames: u64,
}

/// The DCB settings LLDP senders advertised (IEEE 802.1Q Annex D.2): the last each sent.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Dcbx {
    pub senders: Vec<DcbSender>,
    /// LLDP frames of senders beyond the first 4,096: in no sender.
    pub untracked_frames: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct DcbSender {
    pub src_mac: String,
    /// System name, else chassis ID.
    pub name: String,
    pub port: String,
    pub frames: u64,
    pub first_frame: u64,
    pub pfc: Option<DcbPfc>,
    /// Frames whose PFC settings differed from the sender's frame before.
    pub pfc_changes: u64,
    pub ets: Option<DcbEts>,
    /// Congestion notification priority values (802.1Qau), when advertised.
    pub cnpv: Option<Vec<u8>>,
    pub app: Vec<DcbApp>,
    /// The priorities Application Priority entries give RoCE (UDP 4791, EtherType 0x8915).
    pub roce_priorities: Vec<u8>,
}

/// PFC Configuration (D.2.10).
#[derive(Debug, Clone, Serialize)]
pub struct DcbPfc {
    pub willing: bool,
    /// Priorities with PFC enabled.
    pub enabled: Vec<u8>,
    /// Traffic classes that may have PFC at once.
    pub cap: u8,
    pub mbc: bool,
}

/// ETS Configuration (D.2.8).
#[derive(Debug, Clone, Serialize)]
pub struct DcbEts {
    pub willing: bool,
    /// Traffic class of each priority.
    pub prio_tc: [u8; 8],
    /// Bandwidth percent of each traffic class.
    pub tc_bw: [u8; 8],
    /// Transmission selection algorithm of each traffic class (0 strict, 2 ETS).
    pub tsa: [u8; 8],
}

/// One Application Priority entry (D.2.9).
#[derive(Debug, Clone, Serialize)]
pub struct DcbApp {
    pub priority: u8,
    /// 1 EtherType, 2 TCP/SCTP, 3 UDP/DCCP, 4 any of those ports, 5 DSCP.
    pub selector: u8,
    pub protocol: u16,
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Critical,
    Warning,
    Info,
}

/// A diagnosis, with what proves it and what to do.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub code: String,
    pub summary: String,
    pub evidence: Vec<String>,
    pub flows: Vec<String>,
    pub frames: Vec<u64>,
    pub advice: String,
}

/// Facts about the capture as a whole.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Capture {
    pub files: Vec<String>,
    pub packets: u64,
    pub rdma_packets: u64,
    pub bytes: u64,
    pub first_ts_ns: u64,
    pub last_ts_ns: u64,
    pub link_bps: u64,
    /// Where `link_bps` came from: `"option"` (`--link-speed`), `"if_speed"` (the capture's
    /// interface), or `"default"` (neither: 100 Gb/s assumed).
    pub link_bps_from: &'static str,
    /// Packets of flows beyond the most analysed one by one: in the totals only.
    pub untracked_packets: u64,
    /// CM connections beyond as many as flows are analysed: requested, not recorded.
    pub untracked_cm: u64,
    /// RoCE or InfiniBand frames the snaplen cut before the end of their BTH: in no flow
    /// and not in `rdma_packets` (finding `capture.truncated`).
    pub cut_before_bth: u64,
    /// ACKs and NAKs the snaplen cut before the end of their AETH: in their flows, but
    /// whether each acknowledged or refused is unknown (finding `capture.truncated`).
    pub cut_before_aeth: u64,
    /// ACKs, NAKs, READ responses and CNPs whose requester was not searched for: the searches'
    /// budget was spent (finding `capture.search_limit`).
    pub skipped_searches: u64,
}

/// Totals over every flow.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    #[serde(flatten)]
    pub counters: Counters,
    pub retransmission_triggers: Triggers,
    pub vcrc: Vcrc,
}

/// VCRC outcomes of native IB frames (IBTA §7.8.2); all zero on Ethernet.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Vcrc {
    pub ok: u64,
    pub bad: u64,
    pub truncated: u64,
    /// Frames with a bad ICRC under a good VCRC: damaged before the last hop computed its
    /// VCRC (in a switch or the sender), not on the last link.
    pub ok_with_bad_icrc: u64,
    /// Frames with both a bad ICRC and a bad VCRC: damaged on the last link.
    pub bad_with_bad_icrc: u64,
}

/// One named series of values per time bucket.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Series {
    pub name: String,
    pub values: Vec<u64>,
}

/// A cumulative distribution: (value, fraction of samples at or below it).
#[derive(Debug, Clone, Serialize)]
pub struct Cdf {
    pub name: String,
    pub count: u64,
    pub points: Vec<(u64, f64)>,
}

/// What happened over time, in buckets of `bucket_ns` from `start_ns` (at most 512 buckets).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timeline {
    pub start_ns: u64,
    pub bucket_ns: u64,
    pub buckets: usize,
    /// Wire bytes per bucket of the busiest flows; the rest summed as "other flows".
    pub throughput_bytes: Vec<Series>,
    /// Retransmitted (and gap-filled) packets, NAKs, RNR NAKs, CNPs and CE marks per bucket.
    pub events: Vec<Series>,
    /// Pause time (ns) per bucket, per PFC priority ("PAUSE" for 802.3x).
    pub pfc_pause_ns: Vec<Series>,
    /// ACK latency distribution per connection class (application from CM, else "no CM").
    pub ack_latency_cdf: Vec<Cdf>,
    /// Messages by size: (upper bound in bytes, count).
    pub message_sizes: Vec<(u64, u64)>,
}

/// The flows, in (source, destination, destination QP) order. Each flow's [`Flow`] is built
/// when asked for, from its analysis state (sealed at the end of the pass), so a report never
/// holds every flow's report at once: the JSON output streams them. A flow's report with its
/// strings and lists is about 1 KB, more than its sealed state.
pub struct Flows {
    states: Vec<FlowState>,
    order: Vec<usize>,
}

impl Flows {
    /// `states` reported in the order of the indexes in `order`.
    pub(crate) fn new(states: Vec<FlowState>, order: Vec<usize>) -> Self {
        Self { states, order }
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Each flow's report, built as the iterator reaches it.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Flow> + '_ {
        self.order
            .iter()
            .map(|&i| Analyzer::flow_report(&self.states[i]))
    }

    /// The report of the `i`-th flow.
    pub fn get(&self, i: usize) -> Option<Flow> {
        self.order
            .get(i)
            .map(|&k| Analyzer::flow_report(&self.states[k]))
    }

    /// The report of the flow (`src`, `dst`, `dest_qp`), found by its key.
    pub fn find(&self, src: Node, dst: Node, dest_qp: u32) -> Option<Flow> {
        let key = (src, dst, dest_qp);
        self.order
            .binary_search_by(|&i| self.states[i].key.cmp(&key))
            .ok()
            .map(|p| Analyzer::flow_report(&self.states[self.order[p]]))
    }

    /// The reports of the `n` flows with the most wire bytes, most first (ties in flow order).
    pub fn top_by_bytes(&self, n: usize) -> Vec<Flow> {
        let mut by: Vec<usize> = self.order.clone();
        by.sort_by_key(|&i| std::cmp::Reverse(self.states[i].bytes));
        by.iter()
            .take(n)
            .map(|&i| Analyzer::flow_report(&self.states[i]))
            .collect()
    }
}

impl std::fmt::Debug for Flows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Flows {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// The whole report.
#[derive(Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub capture: Capture,
    pub totals: Totals,
    pub flows: Flows,
    pub connections: Vec<Connection>,
    pub pfc: Pfc,
    pub dcbx: Dcbx,
    pub findings: Vec<Finding>,
    pub timeline: Timeline,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Packets per opcode named by the names' rank make the map that adding them by name
    /// makes, for none, a few and all 256 opcodes in random order.
    #[test]
    fn opcode_names_are_the_map_of_the_names() {
        let mut x = 11u64;
        for len in [0usize, 1, 2, 5, 40, 256] {
            let mut ops: Vec<u8> = (0..=255).collect();
            for i in (1..ops.len()).rev() {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ops.swap(i, (x >> 33) as usize % (i + 1));
            }
            let counts: Vec<(u8, u64)> = ops[..len]
                .iter()
                .map(|&op| (op, x >> 60 ^ u64::from(op)))
                .collect();
            let mut model = SmallMap::default();
            for &(op, n) in &counts {
                model.add(rdmascope_wire::OpInfo::of(op).name, n);
            }
            assert_eq!(crate::analyzer::opcode_names(counts.into_iter()), model);
        }
    }

    /// A `SmallMap` holds and serialises what a `BTreeMap` fed the same additions does.
    #[test]
    fn small_map_is_a_sorted_map() {
        let mut small = SmallMap::default();
        let mut model = BTreeMap::new();
        let mut x = 7u64;
        for _ in 0..500 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (k, v) = ((x >> 33) % 37, x >> 60);
            small.add(k, v);
            *model.entry(k).or_insert(0) += v;
        }
        assert_eq!(small.len(), model.len());
        assert!(small.iter().eq(model.iter().map(|(&k, &v)| (k, v))));
        assert_eq!(small.get(36), model.get(&36).copied());
        assert_eq!(small.get(99), None);
        assert_eq!(
            serde_json::to_string(&small).unwrap(),
            serde_json::to_string(&model).unwrap()
        );
        let names: SmallMap<&str, u64> = SmallMap::default();
        assert!(names.is_empty());
        assert_eq!(serde_json::to_string(&names).unwrap(), "{}");
    }
}
