//! From the finished per-flow state to the report and its findings. Each rule is documented in
//! docs/findings.md; `synth` derives the expected codes of its scenarios with the same rules.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use rdmascope_wire::frame::Encap;
use rdmascope_wire::mad;
use rdmascope_wire::Transport;

use crate::analyzer::{Analyzer, Cite, Node, PfcState};
use crate::psn::Tracker;
use crate::report::{self, Connection, Counters, End, Finding, Report, Severity, Totals};

fn add(t: &mut Counters, o: &Counters) {
    for (k, v) in o.opcodes.iter() {
        t.opcodes.add(k, v);
    }
    add_but_opcodes(t, o);
}

/// [`add`] but for the packets per opcode.
fn add_but_opcodes(t: &mut Counters, o: &Counters) {
    t.packets += o.packets;
    t.bytes += o.bytes;
    t.payload_bytes += o.payload_bytes;
    t.retransmitted_packets += o.retransmitted_packets;
    t.gap_filled_packets += o.gap_filled_packets;
    t.reordered_packets += o.reordered_packets;
    t.missing_packets += o.missing_packets;
    t.duplicate_acks += o.duplicate_acks;
    t.naks.psn_sequence_error += o.naks.psn_sequence_error;
    t.naks.invalid_request += o.naks.invalid_request;
    t.naks.remote_access_error += o.naks.remote_access_error;
    t.naks.remote_operational_error += o.naks.remote_operational_error;
    t.naks.invalid_rd_request += o.naks.invalid_rd_request;
    t.rnr_naks += o.rnr_naks;
    t.timeouts += o.timeouts;
    t.cnp += o.cnp;
    t.ecn.not_ect += o.ecn.not_ect;
    t.ecn.ect0 += o.ecn.ect0;
    t.ecn.ect1 += o.ecn.ect1;
    t.ecn.ce += o.ecn.ce;
    t.icrc.ok += o.icrc.ok;
    t.icrc.bad += o.icrc.bad;
    t.icrc.truncated += o.icrc.truncated;
    t.icrc.unverifiable += o.icrc.unverifiable;
}

/// The application an RDMA-CM service ID names.
pub fn application(sid: u64) -> Option<&'static str> {
    if !mad::is_rdma_cm_service(sid) {
        return None;
    }
    match mad::service_port(sid) {
        4420 => Some("NVMe-oF"),
        3260 => Some("iSER"),
        5445 => Some("SMB Direct"),
        20049 => Some("NFS/RDMA"),
        _ => None,
    }
}

fn mac(m: [u8; 6]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

/// `n` with its noun: "1 packet", "2 packets".
fn count<N: TryInto<u64> + Copy + std::fmt::Display>(n: N, one: &str, many: &str) -> String {
    format!("{n} {}", agree(n, one, many))
}

/// The first word if `n` is 1, else the second ("was"/"were"): the word that agrees with `n`.
fn agree<'a, N: TryInto<u64>>(n: N, one: &'a str, many: &'a str) -> &'a str {
    if n.try_into().ok() == Some(1) {
        one
    } else {
        many
    }
}

fn fmt_ns(ns: u64) -> String {
    if ns >= 1_000_000 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else if ns >= 1_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{ns} ns")
    }
}

/// Input files whose first packet comes before the latest packet of an earlier file, by more
/// than 1 ms or by more than half the file's own span (less is the jitter of timestamps taken
/// on several CPUs, at the boundary of ring files): (file, the earlier file that ends latest,
/// by how much), in file order.
fn file_overlaps(spans: &[Option<(u64, u64)>]) -> Vec<(usize, usize, u64)> {
    let mut out = Vec::new();
    let mut latest: Option<(u64, usize)> = None;
    for (k, s) in spans.iter().enumerate() {
        let Some((first, last)) = *s else { continue };
        if let Some((end, j)) = latest {
            let by = end.saturating_sub(first);
            if by > 1_000_000 || (by > 0 && by >= (last - first) / 2) {
                out.push((k, j, by));
            }
        }
        if latest.is_none_or(|(end, _)| last > end) {
            latest = Some((last, k));
        }
    }
    out
}

/// At most this many flows are named in a finding.
const NAMED: usize = 10;

/// Flows (not a sniffer's) for which `of` gives a count of suspect events of at least 10 and
/// at least half of all such events: the suspect and all events summed, and the first
/// [`NAMED`] flows' indices.
fn suspect_flows(
    a: &Analyzer,
    of: impl Fn(&crate::analyzer::FlowState) -> Option<(u64, u64)>,
) -> (u64, u64, Vec<usize>) {
    let mut out = (0, 0, Vec::new());
    for (i, f) in a.flows.iter().enumerate() {
        let Some((suspect, all)) = of(f) else {
            continue;
        };
        if suspect >= 10 && suspect * 2 >= all && !f.sniffer() {
            out.0 += suspect;
            out.1 += all;
            if out.2.len() < NAMED {
                out.2.push(i);
            }
        }
    }
    out
}

/// How long a request may go unanswered, with the capture still running, before its
/// connection counts as stalled: longer than an RC requester's whole retry budget at common
/// settings (7 retries of a 67 ms ACK timeout), far longer than any healthy ACK.
const STALL_NS: u64 = 1_000_000_000;

/// The name a finding gives a flow.
fn flow_name(f: &report::Flow) -> String {
    format!("{} > {} qp 0x{:06x}", f.src, f.dst, f.dest_qp)
}

/// [`flow_name`] from a flow's key.
fn key_name(k: &(Node, Node, u32)) -> String {
    format!("{} > {} qp 0x{:06x}", k.0, k.1, k.2)
}

/// The first [`NAMED`] flows that match a rule's test.
#[derive(Default)]
struct Named(Vec<String>);

impl Named {
    fn add_if(&mut self, yes: bool, f: &report::Flow) {
        if yes && self.0.len() < NAMED {
            self.0.push(flow_name(f));
        }
    }
}

/// Retries after ACK timeouts that no QP outlives: the retry count is a 3-bit field (the CM
/// REQ carries it so), 7 at most, and the next timeout puts the requester's QP in the error
/// state. A connection set up by CM takes its REQ's retry count instead (both QPs use it).
const RETRY_LIMIT: u64 = 7;

/// The retry counts of the flows of connections whose CM REQ gave one of 1–6 (0 allows no
/// retry to count), by flow key; every other flow's is [`RETRY_LIMIT`].
fn retry_limits(a: &Analyzer) -> HashMap<(Node, Node, u32), u64> {
    let mut m = HashMap::new();
    for c in &a.cm {
        let Some(qpn_b) = c.qpn_b else { continue };
        if (1..7).contains(&c.retry_count) {
            let n = u64::from(c.retry_count);
            m.insert((c.a, c.b, qpn_b), n);
            m.insert((c.b, c.a, c.qpn_a), n);
        }
    }
    m
}

/// The RNR retry counts (0–6; 7 retries forever) that CM gave the requesters of its
/// connections: A's from the REP, B's from the REQ, by the requester's flow key.
fn rnr_retry_limits(a: &Analyzer) -> HashMap<(Node, Node, u32), u64> {
    let mut m = HashMap::new();
    for c in &a.cm {
        let Some(qpn_b) = c.qpn_b else { continue };
        if c.rnr_retry_a < 7 {
            m.insert((c.a, c.b, qpn_b), u64::from(c.rnr_retry_a));
        }
        if c.rnr_retry_b < 7 {
            m.insert((c.b, c.a, c.qpn_a), u64::from(c.rnr_retry_b));
        }
    }
    m
}

/// What the rules need to know about the flows, gathered in one pass over their reports (a
/// report is built per flow and dropped, never held for all of them).
#[derive(Default)]
struct Facts {
    loss: Named,
    /// Reordered packets, those of them resent, the flows, and the (source, destination) of
    /// each flow with any; PSN sequence NAKs by (source, destination).
    reorder: (u64, u64, Named, u64),
    reorder_pairs: BTreeSet<(Node, Node)>,
    seq_naks: Vec<((Node, Node), u64)>,
    /// Flows whose responder acknowledged missing PSNs, nothing NAKed or resent: the capture
    /// dropped packets there, not the network. Their missing PSNs, those acknowledged, names.
    dropped: (u64, u64, Named),
    timeout: Named,
    /// Flows whose requester ran out of retries (its retry count of timeouts in a row): names
    /// with their counts and retry counts.
    retry: Vec<(String, u64, u64)>,
    /// Retry counts other than [`RETRY_LIMIT`], from CM ([`retry_limits`]).
    retry_limits: HashMap<(Node, Node, u32), u64>,
    /// Requesters that got more RNR NAKs in a row than their RNR retry count from CM
    /// ([`rnr_retry_limits`]): names, RNR NAKs in a row and counts.
    rnr_retry: Vec<(String, u64, u64)>,
    rnr_retry_limits: HashMap<(Node, Node, u32), u64>,
    /// The request flows of both kinds (`retry`, `rnr_retry`): their QPs are in the error state.
    out_of_retries: HashSet<(Node, Node, u32)>,
    /// The most `timeouts_in_a_row` of any flow.
    retries_max: u64,
    /// The least and most of the flows' median waits before a timeout's pass
    /// (`timeout_wait_ns`), the longest wait, and how many flows.
    timeout_wait: Option<(u64, u64, u64, usize)>,
    rnr: Named,
    invalid_request: Named,
    remote_access: Named,
    remote_operational: Named,
    invalid_rd: Named,
    not_ect: Named,
    icrc_bad: Named,
    rnr_timers: BTreeSet<u32>,
    /// (source, destination) of the flows that carry CNPs.
    cnp_pairs: BTreeSet<(Node, Node)>,
    /// Flows with CE marks: name, source, destination, CE marks.
    ce: Vec<(String, Node, Node, u64)>,
    /// Sum and count of the flows' CE → CNP medians and of their rates before and after CNPs.
    ce_to_cnp: (u64, u64),
    rate_before: (u64, u64),
    rate_after: (u64, u64),
    data_not_ect: u64,
    /// Priorities PFC paused; flows on others: count, names, priorities.
    paused: BTreeSet<u8>,
    unprotected: (usize, Named, BTreeSet<u8>),
    /// Priorities of RDMA data (RoCEv2, QPs above 1), and the flows on each.
    data_prios: BTreeMap<u8, (u64, Named)>,
    /// Each flow's PSNs the capture dropped (see [`Analyzer::capture_dropped`]), by index.
    flow_drops: Vec<u64>,
    /// Request flows per UDP source port: count and names.
    by_sport: BTreeMap<u16, (usize, Named)>,
    /// RoCEv1 flows: count, packets, names.
    v1: (usize, u64, Named),
    /// (source host, destination host) of the RoCEv1 and of the RoCEv2 flows ([`host`]).
    v1_pairs: BTreeSet<(Node, Node)>,
    v2_pairs: BTreeSet<(Node, Node)>,
}

/// A node as a host: an IPv4-mapped GID (RoCEv1's GRH, IPv6 RoCEv2) as its IPv4 address, so a
/// host's RoCEv1 and RoCEv2 traffic meet.
fn host(n: Node) -> Node {
    match n {
        Node::Gid(g) if g[..12] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] => {
            Node::V4([g[12], g[13], g[14], g[15]])
        }
        n => n,
    }
}

impl Facts {
    /// The retry count of flow `key`'s QP.
    fn retry_limit(&self, key: &(Node, Node, u32)) -> u64 {
        self.retry_limits.get(key).copied().unwrap_or(RETRY_LIMIT)
    }

    /// Notes the encapsulation of the flow whose key is `key` (its last packet's).
    fn add_encap(&mut self, key: &(Node, Node, u32), encap: Option<Encap>, f: &report::Flow) {
        let pair = (host(key.0), host(key.1));
        match encap {
            Some(Encap::RoceV1) => {
                self.v1.0 += 1;
                self.v1.1 += f.counters.packets;
                self.v1.2.add_if(true, f);
                self.v1_pairs.insert(pair);
            }
            Some(Encap::RoceV2) => {
                self.v2_pairs.insert(pair);
            }
            _ => {}
        }
    }

    /// Adds the flow whose key is `key` and whose report is `f`; `acked` of its missing PSNs
    /// were acknowledged (see [`Analyzer::capture_dropped`]): then the capture dropped packets
    /// of this flow, and its missing PSNs after the last ACK seen are taken for the same.
    fn add(&mut self, key: &(Node, Node, u32), f: &report::Flow, acked: u64) {
        let c = &f.counters;
        let missing = if acked > 0 { 0 } else { c.missing_packets };
        let lost = c.gap_filled_packets - c.reordered_packets + missing;
        let reordering = c.reordered_packets > 0;
        self.loss.add_if(
            lost > 0 || (!reordering && c.retransmitted_packets + c.naks.psn_sequence_error > 0),
            f,
        );
        if reordering {
            self.reorder.0 += c.reordered_packets;
            self.reorder.1 += f.reordered_resent;
            self.reorder.2.add_if(true, f);
            self.reorder.3 = self.reorder.3.max(f.reorder_depth);
            self.reorder_pairs.insert((key.0, key.1));
        }
        if c.naks.psn_sequence_error > 0 {
            self.seq_naks
                .push(((key.0, key.1), c.naks.psn_sequence_error));
        }
        if acked > 0 {
            self.dropped.0 += c.missing_packets;
            self.dropped.1 += acked;
            self.dropped.2.add_if(true, f);
        }
        self.timeout.add_if(c.timeouts > 0, f);
        self.retries_max = self.retries_max.max(f.timeouts_in_a_row);
        let w = &f.timeout_wait_ns;
        if w.count > 0 {
            let (lo, hi, max, n) = self.timeout_wait.get_or_insert((w.p50, w.p50, w.max, 0));
            (*lo, *hi, *max, *n) = (
                (*lo).min(w.p50),
                (*hi).max(w.p50),
                (*max).max(w.max),
                *n + 1,
            );
        }
        let limit = self.retry_limit(key);
        // A QP out of retries sends nothing more: one that went on with new requests after
        // its passes did not run out (copies of a capture held twice may read as passes).
        if f.stuck_retries >= limit {
            self.retry.push((flow_name(f), f.stuck_retries, limit));
            self.out_of_retries.insert(*key);
        }
        if let Some(&limit) = self.rnr_retry_limits.get(key) {
            if f.rnr_naks_in_a_row > limit {
                self.rnr_retry
                    .push((flow_name(f), f.rnr_naks_in_a_row, limit));
                self.out_of_retries.insert(*key);
            }
        }
        self.rnr.add_if(c.rnr_naks > 0, f);
        self.invalid_request.add_if(c.naks.invalid_request > 0, f);
        self.remote_access.add_if(c.naks.remote_access_error > 0, f);
        self.remote_operational
            .add_if(c.naks.remote_operational_error > 0, f);
        self.invalid_rd.add_if(c.naks.invalid_rd_request > 0, f);
        self.not_ect.add_if(c.ecn.not_ect > 0 && f.dest_qp > 1, f);
        self.icrc_bad.add_if(c.icrc.bad > 0, f);
        self.rnr_timers.extend(f.rnr_timer_us.iter().copied());
        if c.cnp > 0 {
            self.cnp_pairs.insert((key.0, key.1));
        }
        if c.ecn.ce > 0 {
            self.ce.push((flow_name(f), key.0, key.1, c.ecn.ce));
        }
        let mean_of = |m: &mut (u64, u64), yes: bool, v: u64| {
            if yes {
                m.0 += v;
                m.1 += 1;
            }
        };
        mean_of(
            &mut self.ce_to_cnp,
            f.ce_to_cnp_ns.count > 0,
            f.ce_to_cnp_ns.p50,
        );
        mean_of(
            &mut self.rate_before,
            f.rate_before_cnp_bps > 0,
            f.rate_before_cnp_bps,
        );
        mean_of(
            &mut self.rate_after,
            f.rate_after_cnp_bps > 0,
            f.rate_after_cnp_bps,
        );
        if f.dest_qp > 1 {
            self.data_not_ect += c.ecn.not_ect;
        }
        for &p in &f.priorities {
            let e = self.data_prios.entry(p).or_default();
            e.0 += 1;
            e.1.add_if(true, f);
        }
        if f.priorities.iter().any(|p| !self.paused.contains(p)) {
            let u = &mut self.unprotected;
            u.0 += 1;
            u.1.add_if(true, f);
            u.2.extend(f.priorities.iter().filter(|p| !self.paused.contains(p)));
        }
        if let Some(sp) = f.udp_sport {
            if matches!(f.transport.as_str(), "RC" | "UC" | "XRC" | "RD") {
                let e = self.by_sport.entry(sp).or_default();
                e.0 += 1;
                e.1.add_if(true, f);
            }
        }
    }
}

/// Seals every flow (latency histograms to their summaries, PSN windows dropped), which leaves
/// its report unchanged and makes building it cheap. Summarising a live histogram takes a few
/// microseconds, so with many flows the second core seals half of them.
fn seal_all(flows: &mut [crate::analyzer::FlowState]) {
    if flows.len() < 256 {
        flows.iter_mut().for_each(|f| f.summarise());
        return;
    }
    let (first, second) = flows.split_at_mut(flows.len() / 2);
    std::thread::scope(|s| {
        let other = s.spawn(|| second.iter_mut().for_each(|f| f.summarise()));
        first.iter_mut().for_each(|f| f.summarise());
        if let Err(panic) = other.join() {
            std::panic::resume_unwind(panic);
        }
    });
}

pub(crate) fn build(mut a: Analyzer) -> Report {
    let link = a.link_bps();
    let dropped: Vec<u64> = (0..a.flows.len()).map(|i| a.capture_dropped(i)).collect();
    seal_all(&mut a.flows);
    let mut order: Vec<usize> = (0..a.flows.len()).collect();
    order.sort_by_key(|&i| a.flows[i].key);
    let mut totals = Totals::default();
    let mut facts = Facts {
        paused: a
            .pfc
            .iter()
            .filter(|(_, s)| s.episodes > 0)
            .map(|(k, _)| k.1)
            .collect(),
        retry_limits: retry_limits(&a),
        rnr_retry_limits: rnr_retry_limits(&a),
        ..Facts::default()
    };
    let mut sizes: BTreeMap<u64, u64> = BTreeMap::new();
    // The flows' packets per opcode summed by opcode, named once at the end.
    let mut by_op = [None::<u64>; 256];
    for &i in &order {
        let f = Analyzer::flow_report(&a.flows[i]);
        add_but_opcodes(&mut totals.counters, &f.counters);
        for (op, n) in a.flows[i].opcodes.iter() {
            *by_op[usize::from(op)].get_or_insert(0) += n;
        }
        let t = &mut totals.retransmission_triggers;
        t.nak += f.retransmission_triggers.nak;
        t.rnr += f.retransmission_triggers.rnr;
        t.timeout += f.retransmission_triggers.timeout;
        t.unknown += f.retransmission_triggers.unknown;
        t.read_response_gap += f.retransmission_triggers.read_response_gap;
        for (k, v) in f.messages.size_histogram.iter() {
            *sizes.entry(k).or_default() += v;
        }
        facts.add(&a.flows[i].key, &f, dropped[i]);
        facts.add_encap(&a.flows[i].key, a.flows[i].encap, &f);
    }
    totals.counters.opcodes = crate::analyzer::opcode_names(
        (0..=255u8).filter_map(|op| by_op[usize::from(op)].map(|n| (op, n))),
    );
    add(&mut totals.counters, &a.untracked);
    facts.flow_drops = dropped;
    totals.vcrc = crate::report::Vcrc {
        ok: a.vcrc.ok,
        bad: a.vcrc.bad,
        truncated: a.vcrc.truncated,
        ok_with_bad_icrc: a.vcrc.ok_with_bad_icrc,
        bad_with_bad_icrc: a.vcrc.bad_with_bad_icrc,
    };

    // Connections: CM first, then pairs inferred from responses.
    // The flow of a key: `order` is sorted by the keys.
    let index_of = |k: &(Node, Node, u32)| {
        order
            .binary_search_by(|&i| a.flows[i].key.cmp(k))
            .ok()
            .map(|p| order[p])
    };
    let mtu_of = |k: (Node, Node, u32)| {
        index_of(&k)
            .and_then(|i| (a.flows[i].max_fm_payload > 0).then_some(a.flows[i].max_fm_payload))
    };
    // A NAK that may not be retried ended the connection of flows `ks`, or a requester of it
    // ran out of retries: both QPs are in the error state.
    let failed = |ks: [(Node, Node, u32); 2]| {
        ks.iter().any(|k| {
            facts.out_of_retries.contains(k)
                || index_of(k).is_some_and(|i| a.flows[i].fatal_naks() > 0)
        })
    };
    let mut connections = Vec::new();
    let mut in_cm = BTreeSet::new();
    for c in &a.cm {
        let qb = c.qpn_b.unwrap_or(0);
        if c.qpn_b.is_some() {
            in_cm.insert((c.a, c.b, qb));
            in_cm.insert((c.b, c.a, c.qpn_a));
        }
        connections.push(Connection {
            a: End {
                node: c.a.to_string(),
                qpn: c.qpn_a,
                start_psn: Some(c.psn_a),
            },
            b: End {
                node: c.b.to_string(),
                qpn: qb,
                start_psn: c.psn_b,
            },
            path_mtu: c.mtu,
            transport: ["RC", "UC", "RD", "XRC"][usize::from(c.transport & 3)].to_string(),
            learned: "cm".into(),
            application: application(c.service_id)
                .map(str::to_string)
                .or(a.perftest.then(|| "perftest".to_string())),
            service_id: Some(c.service_id),
            // CM set the QPs up; their failure is news until CM tears them down.
            state: if matches!(c.state, "replied" | "established")
                && c.qpn_b.is_some()
                && failed([(c.a, c.b, qb), (c.b, c.a, c.qpn_a)])
            {
                "error"
            } else {
                c.state
            }
            .to_string(),
            reject_reason: c.reject,
            observed_mtu_a_to_b: c.qpn_b.and_then(|q| mtu_of((c.a, c.b, q))),
            observed_mtu_b_to_a: mtu_of((c.b, c.a, c.qpn_a)),
        });
    }
    for &i in &order {
        let f = &a.flows[i];
        let Some(p) = f.peer() else { continue };
        let g = &a.flows[p];
        if !f.is_request_flow
            || in_cm.contains(&f.key)
            || in_cm.contains(&g.key)
            || (g.is_request_flow && g.key < f.key)
        {
            continue;
        }
        connections.push(Connection {
            a: End {
                node: f.key.0.to_string(),
                qpn: g.key.2,
                start_psn: f.first_psn(),
            },
            b: End {
                node: f.key.1.to_string(),
                qpn: f.key.2,
                start_psn: g.first_psn(),
            },
            path_mtu: None,
            transport: f.transport.map_or("?", |t| t.name()).to_string(),
            learned: "inferred".into(),
            application: a.perftest.then(|| "perftest".to_string()),
            service_id: None,
            state: if failed([f.key, g.key]) {
                "error"
            } else {
                "active"
            }
            .into(),
            reject_reason: None,
            observed_mtu_a_to_b: (f.max_fm_payload > 0).then_some(f.max_fm_payload),
            observed_mtu_b_to_a: (g.max_fm_payload > 0).then_some(g.max_fm_payload),
        });
    }

    let mut pfc = report::Pfc {
        frames: a.pfc_frames.0,
        xoff_frames: a.pfc_frames.1,
        xon_frames: a.pfc_frames.2,
        link_bps: link,
        untracked_frames: a.pfc_untracked,
        ..Default::default()
    };
    for ((m, p), st) in &a.pfc {
        pfc.pause_episodes += st.episodes;
        pfc.pause_ns_total += st.pause_ns;
        pfc.by_port.push(report::PfcPort {
            src_mac: mac(*m),
            priority: *p,
            frames: st.frames,
            pause_ns: st.pause_ns,
            episodes: st.episodes,
            longest_episode_ns: st.longest,
        });
    }

    let bits = |b: u8| (0..8).filter(|p| b >> p & 1 == 1).collect::<Vec<u8>>();
    let dcbx = report::Dcbx {
        senders: a
            .dcb
            .values()
            .map(|s| {
                let d = &s.last;
                report::DcbSender {
                    src_mac: mac(d.src),
                    name: d.name.clone(),
                    port: d.port.clone(),
                    frames: s.frames,
                    first_frame: s.first_frame,
                    pfc: d.pfc.map(|p| report::DcbPfc {
                        willing: p.willing,
                        enabled: bits(p.enable),
                        cap: p.cap,
                        mbc: p.mbc,
                    }),
                    pfc_changes: s.pfc_changes,
                    ets: d.ets.map(|e| report::DcbEts {
                        willing: e.willing,
                        prio_tc: e.prio_tc,
                        tc_bw: e.tc_bw,
                        tsa: e.tsa,
                    }),
                    cnpv: d.cn.map(|c| bits(c.cnpv)),
                    app: d
                        .app
                        .iter()
                        .map(|e| report::DcbApp {
                            priority: e.priority,
                            selector: e.selector,
                            protocol: e.protocol,
                        })
                        .collect(),
                    roce_priorities: d
                        .app
                        .iter()
                        .filter(|e| e.is_roce())
                        .map(|e| e.priority)
                        .collect::<BTreeSet<u8>>()
                        .into_iter()
                        .collect(),
                }
            })
            .collect(),
        untracked_frames: a.dcb_untracked,
    };

    let mut capture = a.capture.clone();
    capture.link_bps = link;
    capture.link_bps_from = match (a.link_forced, a.link_bps) {
        (true, _) => "option",
        (false, Some(_)) => "if_speed",
        (false, None) => "default",
    };
    capture.untracked_packets = a.untracked.packets;
    capture.untracked_cm = a.cm_untracked;
    capture.cut_before_bth = a.cut_before_bth.0;
    capture.cut_before_aeth = a.cut_before_aeth.0;
    capture.skipped_searches = a.searches_skipped;
    let findings = findings(&a, facts, &totals, &connections, &pfc, &dcbx, &capture);
    let timeline = timeline(&a, sizes);
    Report {
        schema: "rdmascope.analyze.v1",
        capture,
        totals,
        flows: report::Flows::new(std::mem::take(&mut a.flows), order),
        connections,
        pfc,
        dcbx,
        findings,
        timeline,
    }
}

/// The busiest flows drawn one by one in the throughput chart.
const TOP_SERIES: usize = 8;

fn timeline(a: &Analyzer, sizes: BTreeMap<u64, u64>) -> report::Timeline {
    use crate::analyzer::{CLASSES, MAX_BUCKETS};
    let len = a.tl.len.min(MAX_BUCKETS);
    let width = a.tl.width.max(1);
    let start = a.tl.start.unwrap_or(0);
    let pad = |v: &[u64]| {
        let mut v = v.to_vec();
        v.resize(len, 0);
        v
    };
    let mut by_bytes: Vec<&crate::analyzer::FlowState> = a.flows.iter().collect();
    by_bytes.sort_by_key(|f| std::cmp::Reverse(f.bytes));
    let mut throughput: Vec<report::Series> = by_bytes
        .iter()
        .take(TOP_SERIES)
        .filter(|f| f.bytes > 0)
        .map(|f| report::Series {
            name: key_name(&f.key),
            values: f.tput.dense(len),
        })
        .collect();
    if by_bytes.len() > TOP_SERIES {
        let mut rest = vec![0u64; len];
        for f in &by_bytes[TOP_SERIES..] {
            for (i, v) in f.tput.buckets() {
                if let Some(r) = rest.get_mut(i) {
                    *r += v;
                }
            }
        }
        throughput.push(report::Series {
            name: format!("{} other flows", by_bytes.len() - TOP_SERIES),
            values: rest,
        });
    }
    let names = ["retransmitted", "NAKs", "RNR NAKs", "CNPs", "CE marks"];
    let events = names
        .iter()
        .zip(&a.tl.events)
        .map(|(n, v)| report::Series {
            name: n.to_string(),
            values: pad(v),
        })
        .collect();
    let pfc_pause_ns = a
        .pauses
        .iter()
        .map(|(&(m, p), v)| report::Series {
            name: if p == 255 {
                format!("{} PAUSE (all)", mac(m))
            } else {
                format!("{} priority {p}", mac(m))
            },
            values: pad(v),
        })
        .collect();
    let ack_latency_cdf = a
        .ack_class
        .iter()
        .filter(|(_, h)| !h.is_empty())
        .map(|(c, h)| report::Cdf {
            name: CLASSES[usize::from(*c).min(CLASSES.len() - 1)].to_string(),
            count: h.len(),
            points: (0..=100)
                .map(|q| (h.value_at_quantile(q as f64 / 100.0), q as f64 / 100.0))
                .collect(),
        })
        .collect();
    report::Timeline {
        start_ns: start,
        bucket_ns: width,
        buckets: len,
        throughput_bytes: throughput,
        events,
        pfc_pause_ns,
        ack_latency_cdf,
        message_sizes: sizes.into_iter().collect(),
    }
}

fn findings(
    a: &Analyzer,
    facts: Facts,
    totals: &Totals,
    conns: &[Connection],
    pfc: &report::Pfc,
    dcbx: &report::Dcbx,
    cap: &report::Capture,
) -> Vec<Finding> {
    let t = &totals.counters;
    let mut out = Vec::new();
    let span = cap.last_ts_ns.saturating_sub(cap.first_ts_ns).max(1);
    let frames_of = |kind: Cite| -> Vec<u64> {
        let mut v: Vec<u64> = a.flows.iter().flat_map(|f| f.cited.of(kind)).collect();
        v.sort_unstable();
        v.truncate(10);
        v
    };
    let mut push = |severity,
                    code: &str,
                    summary: String,
                    evidence: Vec<String>,
                    flows: Vec<String>,
                    frames: Vec<u64>,
                    advice: &str| {
        out.push(Finding {
            severity,
            code: code.into(),
            summary,
            evidence,
            flows,
            frames,
            advice: advice.into(),
        });
    };

    // Missing PSNs the responders acknowledged were dropped by the capture, not the network.
    let (dropped, acked) = (facts.dropped.0, facts.dropped.1);
    let missing = t.missing_packets - dropped;
    if dropped > 0 {
        push(
            Severity::Warning,
            "capture.drops",
            format!(
                "{} never appear in the capture on flows whose responders acknowledged missing PSNs while nothing was NAKed or resent: the capture dropped them, not the network",
                count(dropped, "packet", "packets")
            ),
            vec![
                format!("missing_packets = {} on those flows, {acked} of them before the last ACK seen", dropped),
                "retransmitted_packets = 0, gap_filled_packets = 0 and PSN sequence NAKs = 0 on those flows".to_string(),
            ],
            facts.dropped.2 .0.clone(),
            vec![],
            "These packets reached the responder; only the capture missed them, so it cannot show whether the fabric lost any. Capture again with a larger buffer (rdmascope capture -B 256M, tcpdump -B), a snaplen of 128, on a quieter core, or from the RDMA device (rdmascope capture -i mlx5_0) before judging loss.",
        );
    }
    // A PSN sequence NAK from a node that receives reordered packets from the NAK's
    // destination is put down to the reordering.
    let reorder_naks: u64 = facts
        .seq_naks
        .iter()
        .filter(|((s, d), _)| facts.reorder_pairs.contains(&(*d, *s)))
        .map(|(_, n)| n)
        .sum();
    let rereads = totals.retransmission_triggers.read_response_gap;
    if t.naks.psn_sequence_error > reorder_naks
        || t.gap_filled_packets > t.reordered_packets
        || missing > 0
        || rereads > 0
    {
        let lost = t.gap_filled_packets - t.reordered_packets + missing;
        let tr = &totals.retransmission_triggers;
        let mut triggers = format!(
            "retransmission triggers: NAK {}, RNR {}, timeout {}, unknown {}",
            tr.nak, tr.rnr, tr.timeout, tr.unknown
        );
        let mut summary = format!(
            "Packets are lost: {}, {} retransmitted, {lost} lost before this capture point",
            count(
                t.naks.psn_sequence_error,
                "PSN sequence NAK",
                "PSN sequence NAKs"
            ),
            count(t.retransmitted_packets, "packet", "packets"),
        );
        if rereads > 0 {
            triggers.push_str(&format!(", READ response gap {rereads}"));
            summary.push_str(&format!(
                "; {} re-read after {} responses went missing",
                count(rereads, "READ", "READs"),
                agree(rereads, "its", "their")
            ));
        }
        push(
            Severity::Critical,
            "transport.loss",
            summary,
            vec![
                format!("naks.psn_sequence_error = {}", t.naks.psn_sequence_error),
                format!("retransmitted_packets = {}", t.retransmitted_packets),
                if t.reordered_packets > 0 {
                    format!("gap_filled_packets = {} ({} of them reordered, not lost)", t.gap_filled_packets, t.reordered_packets)
                } else {
                    format!("gap_filled_packets = {}", t.gap_filled_packets)
                },
                format!("missing_packets = {}", t.missing_packets),
                triggers,
            ],
            facts.loss.0,
            frames_of(Cite::Retx),
            "The \"lossless\" network drops packets, and RC recovers with go-back-N, so every loss resends everything after it. Check that PFC is enabled for the RDMA priority on every NIC and switch port on the path and that buffers/headroom are sized for the cable length; look for link errors (symbol/FCS errors) and for drops in the NIC counters (out_of_sequence, packet_seq_err, rx_discards_phy).",
        );
    }
    if t.reordered_packets > 0 {
        let (n, resent, flows) = (facts.reorder.0, facts.reorder.1, facts.reorder.2 .0.clone());
        let strict = resent > 0 || reorder_naks > 0;
        let mut evidence = vec![
            format!(
                "reordered_packets = {n}, arriving up to {} behind the highest PSN seen",
                count(facts.reorder.3, "PSN", "PSNs")
            ),
            format!("gap_filled_packets = {}", t.gap_filled_packets),
        ];
        if strict {
            evidence.push(format!("reordered packets resent = {resent}"));
            evidence.push(format!(
                "PSN sequence NAKs from their receivers = {reorder_naks}"
            ));
        }
        push(
            if strict {
                Severity::Warning
            } else {
                Severity::Info
            },
            "transport.reorder",
            if strict {
                format!(
                    "{} arrived out of order, after higher PSNs, and the receivers NAKed the gaps they left: go-back-N resent {resent} of them, and what followed each, although nothing was lost",
                    count(n, "packet", "packets")
                )
            } else {
                format!(
                    "{} arrived out of order, after higher PSNs, and the receivers took them without a NAK or retransmission",
                    count(n, "packet", "packets")
                )
            },
            evidence,
            flows,
            frames_of(Cite::Reorder),
            if strict {
                "The fabric delivers the packets of one QP out of order (adaptive routing, packet spraying, or a path change such as an ECMP rehash or a link flap), and these receivers do not accept out-of-order packets: each late packet costs a NAK and a go-back-N resend of everything after it. Either let the NICs take out-of-order data (NICs with adaptive-routing support, enabled on these QPs), or keep each RoCE flow on one path: turn off adaptive routing or packet spraying for the RoCE priority on the switches and hash flows per 5-tuple."
            } else {
                "The fabric reorders packets (adaptive routing or packet spraying) and the receivers accept them out of order, as they must on such a fabric: nothing to fix. If out-of-order delivery is not intended, look for a switch that sprays this traffic or paths that changed."
            },
        );
    }
    if t.timeouts > 0 {
        let mut evidence = vec![format!("timeouts = {}", t.timeouts), format!("duplicate_acks = {}", t.duplicate_acks), format!("most retries in a row with no answer (timeouts_in_a_row) = {} of the {RETRY_LIMIT} a QP makes at most", facts.retries_max)];
        let mut advice = "The requester waited out its local ACK timeout: the tail of a message or its ACKs were lost, so no NAK could say what was missing. Fix the loss (see PFC and link health); a timeout stalls the QP for 4.096 µs × 2^timeout, so keep the QP timeout (NCCL_IB_TIMEOUT, rdma_set_option) reasonable rather than huge.".to_string();
        if let Some((lo, hi, max, n)) = facts.timeout_wait {
            let who = agree(n, "the requester", "the requesters");
            // The smallest local ACK timeout, 4.096 µs × 2^code, as long as the shortest median
            // wait, less 5% (the clocks; a NIC may round its timer up).
            let code = (0..32u32)
                .find(|&c| (4_096u64 << c) * 20 >= lo * 19)
                .unwrap_or(31);
            let medians = if lo == hi {
                fmt_ns(lo)
            } else {
                format!("{} to {} (medians of the flows)", fmt_ns(lo), fmt_ns(hi))
            };
            evidence.push(format!(
                "wait before a timeout's resend (timeout_wait_ns) = {medians}, at most {}",
                fmt_ns(max)
            ));
            if lo < crate::analyzer::DUP_NS {
                advice.push_str(&format!(" Here {who} resent after {}, sooner than any IBTA ACK timeout (8.192 µs at least): a NIC retransmitting adaptively (ConnectX adaptive retransmission, `roce_adp_retrans_en`, which starts at 4.096 µs) — each resend is then cheap, but the loss behind it is real.", fmt_ns(lo)));
            } else if lo >= 100_000_000 {
                advice.push_str(&format!(" Here each timeout stalled its QP for {} or more (a local ACK timeout of {code} or close, 4.096 µs × 2^{code} = {}): a smaller one (14 to 18: 67 ms to 1.07 s) recovers a lost tail sooner.", fmt_ns(lo), fmt_ns(4_096u64 << code)));
            } else {
                advice.push_str(&format!(" Here {who} resent {} after last sending the packet (or after the last ACK that made progress): a local ACK timeout of {code} (4.096 µs × 2^{code} = {}) or close.", fmt_ns(lo), fmt_ns(4_096u64 << code)));
            }
        }
        push(
            Severity::Critical,
            "transport.timeout",
            format!(
                "{} started after the ACK timeout, with no NAK seen",
                count(t.timeouts, "retransmission burst", "retransmission bursts")
            ),
            evidence,
            facts.timeout.0,
            frames_of(Cite::Timeout),
            &advice,
        );
    }
    let limit = |k: &(Node, Node, u32)| {
        let limits = &facts.retry_limits;
        limits.get(k).copied().unwrap_or(RETRY_LIMIT)
    };
    if !facts.retry.is_empty() {
        let gave_up = &facts.retry;
        let mut frames: Vec<u64> = a
            .flows
            .iter()
            .filter(|f| {
                f.req
                    .sum()
                    .is_some_and(|s| s.stuck_retries >= limit(&f.key))
            })
            .flat_map(|f| f.cited.of(Cite::Retry))
            .collect();
        frames.sort_unstable();
        frames.truncate(10);
        push(
            Severity::Critical,
            "transport.retry_exceeded",
            format!("{} resent after ACK timeouts with no answer as often as {} QP retries, so {} failed with a transport retry error", count(gave_up.len(), "requester", "requesters"), if gave_up.len() == 1 { "its" } else { "their" }, if gave_up.len() == 1 { "it" } else { "they" }),
            gave_up.iter().take(5).map(|(name, n, limit)| format!("{name}: {n} go-back-N passes after ACK timeouts in a row, no ACK, NAK or READ response between them; retry count {limit}{}", if *limit == RETRY_LIMIT { " (the most)" } else { " (the CM REQ's)" })).collect(),
            gave_up.iter().take(NAMED).map(|(name, _, _)| name.clone()).collect(),
            frames,
            "The retry count is 7 at most (a CM REQ says what a connection uses): after that many retries the requester's QP goes to the error state and the application sees IBV_WC_RETRY_EXC_ERR (\"transport retry counter exceeded\"). Nothing came back from the responder: its host, NIC or port went down, its QP left RTR/RTS (the process died or reset it), or the path broke in between (a link down, a route or ACL change, UDP 4791 filtered). Check the responder's dmesg, `ibv_devinfo` port state and counters, and whether any of its packets still reach this capture point.",
        );
    }
    if !facts.rnr_retry.is_empty() {
        let gave_up = &facts.rnr_retry;
        push(
            Severity::Critical,
            "transport.rnr_retry_exceeded",
            format!("{} got more RNR NAKs in a row than the RNR retry count CM gave {}, so {} failed with an RNR retry error", count(gave_up.len(), "requester", "requesters"), if gave_up.len() == 1 { "its QP" } else { "their QPs" }, if gave_up.len() == 1 { "it" } else { "they" }),
            gave_up.iter().take(5).map(|(name, n, limit)| format!("{name}: {n} RNR NAKs in a row, no other response between them; RNR retry count {limit}")).collect(),
            gave_up.iter().take(NAMED).map(|(name, _, _)| name.clone()).collect(),
            frames_of(Cite::Rnr),
            "After its RNR retry count of RNR NAKs in a row (7 would retry forever) the requester's QP goes to the error state and the application sees IBV_WC_RNR_RETRY_EXC_ERR. The responder had no receive buffer posted for the SENDs: post receives before the peer sends (and keep enough posted, or use an SRQ), or let the requester wait longer with rnr_retry 7 and a larger min_rnr_timer.",
        );
    }
    // Stalls: requests of a connection whose other side answered before, still unanswered
    // long after (the capture goes on for at least `STALL_NS` past them).
    let mut stalled = (0usize, 0u64, Vec::new(), Vec::new(), Vec::new());
    let mut sniffer_drops = 0;
    for (fi, f) in a.flows.iter().enumerate() {
        let Some((n, (psn, oldest), frame)) = f.req.waiting() else {
            continue;
        };
        let age = cap.last_ts_ns.saturating_sub(oldest);
        let Some(p) = f.peer() else { continue };
        // A NAK that may not be retried ended the connection, or the requester ran out of
        // retries (`transport.retry_exceeded`, `transport.rnr_retry_exceeded`): what it had sent
        // was flushed, not left waiting.
        if a.flows[p].fatal_naks() > 0 || facts.out_of_retries.contains(&f.key) {
            continue;
        }
        if age >= STALL_NS {
            stalled.0 += n;
            stalled.1 = stalled.1.max(age);
            let drops = [fi, p]
                .iter()
                .filter_map(|&i| facts.flow_drops.get(i))
                .sum::<u64>();
            sniffer_drops += drops;
            if stalled.2.len() < NAMED {
                let name = key_name(&f.key);
                let mut line = match a.flows[p].last_ack() {
                    Some(ack) => format!("{name}: oldest unanswered PSN {psn}, last ACK PSN {ack}"),
                    None => format!("{name}: oldest unanswered PSN {psn}, no ACK"),
                };
                if drops > 0 {
                    line.push_str(&format!(
                        "; the capture itself dropped {} on this connection",
                        count(drops, "packet", "packets")
                    ));
                }
                stalled.4.push(line);
                stalled.2.push(name);
            }
            stalled.3.push(frame);
        }
    }
    if !stalled.3.is_empty() {
        let (n, age, flows, mut frames, psns) = stalled;
        frames.sort_unstable();
        frames.truncate(10);
        let secs = |ns: u64| format!("{:.1} s", ns as f64 / 1e9);
        push(
            Severity::Warning,
            "transport.stall",
            format!(
                "{} never got {} although the capture went on for {} after {}: the {} stalled",
                count(n, "request", "requests"),
                agree(n, "its ACK or READ response", "their ACKs or READ responses"),
                secs(age),
                agree(n, "it", "the oldest"),
                agree(frames.len(), "connection", "connections")
            ),
            [format!("unanswered requests = {n}, the oldest {} before the end of the capture", secs(age))]
                .into_iter()
                .chain(psns)
                .collect(),
            flows,
            frames,
            &format!(
                "The responder had answered on this connection before, then stopped. An RC requester retries and then moves the QP to the error state (IBV_WC_RETRY_EXC_ERR), so the application hangs or reconnects. Check the responder: its QP state, its out_of_sequence / packet_seq_err counters, a software responder's ACK generation (an ACK must carry the PSN of the request it acknowledges), and whether its packets reach this side (a firewall or ACL on UDP 4791 in one direction).{}",
                if sniffer_drops > 0 {
                    " This capture also dropped packets on the connection, so the missing answers may be the capture's own drops: confirm with the responder's counters or a capture without drops."
                } else {
                    ""
                }
            ),
        );
    }
    // Requests never answered at all: no ACK, NAK or READ response ever came back on the
    // connection, while the requester retried or the capture ran on for `STALL_NS`.
    let mut silent = (0usize, Vec::new(), Vec::new(), Vec::new());
    let mut one_way = false;
    for f in &a.flows {
        if f.peer().is_some() || !matches!(f.transport, Some(Transport::Rc | Transport::Xrc)) {
            continue;
        }
        let Some((n, (psn, oldest), frame)) = f.req.waiting() else {
            continue;
        };
        let retx = f.req.sum().map_or(0, |s| s.retx);
        if retx == 0 && cap.last_ts_ns.saturating_sub(oldest) < STALL_NS {
            continue;
        }
        let (src, dst, _) = f.key;
        let back = a.carries(dst, src);
        one_way |= !back;
        silent.0 += n;
        if silent.1.len() < NAMED {
            let name = key_name(&f.key);
            silent.3.push(format!(
                "{name}: {}, {} retransmitted, oldest unanswered PSN {psn}; {}",
                count(n, "request waits", "requests wait"),
                retx,
                if back {
                    "other packets from the responder's node are in the capture"
                } else {
                    "no packet at all from the responder's node"
                }
            ));
            silent.1.push(name);
        }
        silent.2.push(frame);
    }
    if !silent.2.is_empty() {
        let (n, flows, mut frames, evidence) = silent;
        let connections = frames.len();
        frames.sort_unstable();
        frames.truncate(10);
        let mut advice = "The responder never answered: its packets do not come back (UDP 4791 filtered by a firewall or ACL in one direction, a route or GID that leads elsewhere, a wrong GID index or VLAN on one side), or the requests never reach its HCA (wrong destination QPN or a QP not yet in RTR). Check `ibv_devinfo`/`show_gids` on both hosts, the QP numbers the two sides exchanged out of band, and any firewall on UDP 4791 (Soft-RoCE: iptables on the host).".to_string();
        if one_way {
            advice.push_str(" Where the capture holds no packet at all from the responder's node, it may also see one direction only (a one-way port mirror): capture both directions before concluding.");
        }
        push(
            Severity::Warning,
            "transport.no_response",
            format!(
                "{} on {} never got any ACK, NAK or READ response",
                count(n, "request", "requests"),
                count(connections, "connection", "connections")
            ),
            evidence,
            flows,
            frames,
            &advice,
        );
    }
    if t.rnr_naks > 0 {
        let timers = &facts.rnr_timers;
        push(
            Severity::Warning,
            "transport.rnr",
            format!("The receiver was not ready {} (RNR NAK): a SEND arrived with no receive buffer posted", if t.rnr_naks == 1 { "once".to_string() } else { count(t.rnr_naks, "time", "times") }),
            vec![format!("rnr_naks = {}", t.rnr_naks), format!("RNR timers (µs): {}", timers.iter().map(u32::to_string).collect::<Vec<_>>().join(", "))],
            facts.rnr.0,
            frames_of(Cite::Rnr),
            "The responder application does not keep enough receive WQEs posted. Post receives earlier and deeper (or use an SRQ), and make the sender wait less per retry with a smaller min_rnr_timer; rnr_retry 7 retries forever.",
        );
    }
    // The NAKs that may not be retried: the requester's work request completes in error and
    // both QPs go to the error state.
    for (code, n, name, named, cite, advice) in [
        (
            "transport.invalid_request",
            t.naks.invalid_request,
            "invalid request",
            facts.invalid_request.0,
            Cite::InvalidRequest,
            "The responder rejected the request itself: an operation its QP was not enabled for (RDMA READ, WRITE or atomics without IBV_ACCESS_REMOTE_READ/WRITE/ATOMIC in the QP's access flags), more RDMA READs or atomics in flight than it accepts (the requester's max_rd_atomic above the responder's max_dest_rd_atomic), a SEND longer than the receive buffer posted for it, or a message whose FIRST/MIDDLE/LAST packets break the sequence. The requester sees IBV_WC_REM_INV_REQ_ERR and its QP goes to the error state. Check the QP attributes both sides set (ibv_modify_qp) and the receive buffer sizes.",
        ),
        (
            "transport.remote_access_error",
            t.naks.remote_access_error,
            "remote access error",
            facts.remote_access.0,
            Cite::RemoteAccess,
            "The responder refused an RDMA access: wrong R_Key, an address outside the registered memory region, or missing access rights (IBV_ACCESS_REMOTE_WRITE/READ). The QP goes to the error state; check the memory registration and the keys exchanged.",
        ),
        (
            "transport.remote_operational_error",
            t.naks.remote_operational_error,
            "remote operational error",
            facts.remote_operational.0,
            Cite::RemoteOperational,
            "The responder could not complete the request for a local reason (its QP or memory in error). Check the responder's logs and its QP state.",
        ),
        (
            "transport.invalid_rd_request",
            t.naks.invalid_rd_request,
            "invalid RD request (or a reserved NAK code)",
            facts.invalid_rd.0,
            Cite::InvalidRd,
            "This NAK belongs to the Reliable Datagram service, which RDMA NICs do not implement, and codes above it are reserved: from an RC responder it means a damaged packet that passed the ICRC, or a responder bug. The requester's QP goes to the error state; capture the responder's side and check its firmware.",
        ),
    ] {
        if n > 0 {
            push(
                Severity::Critical,
                code,
                format!("{} with {name}", count(n, "NAK", "NAKs")),
                vec![format!("NAK {name}: {n}")],
                named,
                frames_of(cite),
                advice,
            );
        }
    }
    // Packets the capture holds twice.
    if a.duplicates.0 > 0 {
        let mut evidence = vec![format!("capture.duplicate_frames = {}", a.duplicates.0)];
        let when = match a.late_lags() {
            // Copies at a lag ([`crate::late`]).
            Some((lo, hi)) => {
                evidence.push(format!("capture.late_copy_frames = {}", a.late_copies));
                evidence.push(format!("capture.copy_lag_ns = {lo}..{hi}"));
                format!(
                    "{} of them {lo}–{hi} ns after the first, as nearly every packet of the capture's first ones, in both directions (a lag no resend keeps: a mirror of two ports, two capture points merged into one interface, or a bond and its member)",
                    a.late_copies
                )
            }
            None => format!(
                "less than {} ns after the first with nothing between that could have asked for them again",
                crate::analyzer::DUP_NS
            ),
        };
        push(
            Severity::Warning,
            "capture.duplicates",
            format!(
                "{} the capture's second copies of packets, {when}: they are not counted as retransmissions, duplicate ACKs, NAKs or messages",
                count(a.duplicates.0, "frame is", "frames are"),
            ),
            evidence,
            a.duplicate_flows.iter().map(|&i| key_name(&a.flows[i].key)).collect(),
            a.duplicates.1.clone(),
            "The capture point sees these packets twice: `tcpdump -i any` on a host whose bond, VLAN or bridge interface and its member both show the packet, or a mirror session of both the ingress and the egress port of a path. No requester resends that soon (the shortest ACK timeout is 8.192 µs) unless a NAK asks, and none did. Copies that come right after their packets are all recognised; copies that trail behind the next packets of their flow (a mirror of two ports) mostly, so treat the retransmissions of such a capture with some suspicion. Capture on one interface (the bond or one member) or mirror one port in one direction; `editcap -D 10` removes such copies from a file. Packet, byte, throughput, CNP and UD figures still count both copies.",
        );
    }
    // Flows captured at more than one point (interfaces of a merged file).
    if a.other_points.0 > 0 {
        let mut points = a.points.clone();
        points.sort_unstable();
        // A point is an interface ID, with the group of input files (`file_point`) above it.
        let point_name = |p: u32| {
            let (g, i) = ((p >> 16) as usize, p & 0xffff);
            match a.file_groups.get(g) {
                Some(&(f, ..)) if a.file_groups.len() > 1 => format!(
                    "interface {i} of file {} ({})",
                    f + 1,
                    cap.files.get(f as usize).map_or("?", String::as_str)
                ),
                _ => format!("interface {i}"),
            }
        };
        let names = points
            .into_iter()
            .map(point_name)
            .collect::<Vec<_>>()
            .join(", ");
        // Per request flow seen at two points: the PSNs each point saw late (gap-filled) or
        // never (missing). Where they differ, packets were lost between the points.
        let mut lost: Vec<(u64, usize, u64, u64)> = a
            .flows
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let o = f.other.as_deref()?;
                let q = f.req.sum()?;
                let here = q.gap_filled + q.psn.as_ref().map_or(0, Tracker::missing);
                let there = o.gap_filled + o.psn.missing();
                Some((here.abs_diff(there), i, here, there))
            })
            .collect();
        let compared = lost.len();
        lost.retain(|l| l.0 > 0);
        lost.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        let mut evidence = vec![
            format!("capture.other_point_frames = {}", a.other_points.0),
            format!("capture points = {names}"),
            format!(
                "request flows seen at two points = {compared}, whose points saw different losses = {}",
                lost.len()
            ),
        ];
        for &(_, i, here, there) in lost.iter().take(NAMED) {
            let f = &a.flows[i];
            let other = f.other.as_deref().map_or(0, |o| o.point);
            evidence.push(format!(
                "{}: PSNs lost before {} (gap-filled or never seen) {here}, before {} {there}",
                key_name(&f.key),
                point_name(f.point),
                point_name(other)
            ));
        }
        let points = names;
        push(
            Severity::Warning,
            "capture.multiple_points",
            format!(
                "{} seen again at another capture point ({points}): each flow is read at one point, its frames at the others count as packets only",
                count(a.other_points.0, "frame is a packet", "frames are packets"),
            ),
            evidence,
            a.other_point_flows.iter().map(|&i| key_name(&a.flows[i].key)).collect(),
            a.other_points.1.clone(),
            "The capture holds the same packets from two or more points: captures taken on both hosts at the same time, given as two files or merged into one with its interfaces kept apart (mergecap -I none), or a tap and a mirror. Shifted by the path and by the two clocks, the second sighting of each packet would read as a retransmission or a duplicate ACK, so each flow is read at the point (interface, or group of files) that carried it first (another takes it over only after 100 ms without a frame of it there, as after a bond failover; a request whose PSN the flow has not seen is read wherever it comes), and its frames at the other points count in the packet, byte and throughput figures only. The two flows of a connection may be read at different points, so their timings (ACK latency, NAK to resend) mix two clocks. To find where packets were lost, analyse each point alone and compare (`rdmascope analyze --interface N FILE` for an interface, or each file by itself): a packet one point saw and the next did not was dropped between them. The evidence compares, per request flow, the PSNs each point saw late or never: equal counts put the loss before both points, a difference between them.",
        );
    }
    // Two capture points merged into one interface: each packet's second sighting, its source
    // MAC rewritten by a routed hop, reads as a resend, while new packets keep the first MAC.
    // At least half a flow's resends (real ones at the first point are resends too, and
    // seen again at the second) came with another MAC, and under 1% of its packets were new
    // ones with another (a path that changed after a reroute changes both).
    let mut merged = (0, 0, Vec::new());
    if a.other_points.0 == 0 {
        merged = suspect_flows(a, |f| {
            let retx = f.req.sum().map_or(0, |q| q.retx);
            let new_ok = u64::from(f.new_other_mac) * 100 < f.packets;
            new_ok.then_some((u64::from(f.retx_other_mac), retx))
        });
        if merged.0 > 0 {
            push(
                Severity::Warning,
                "capture.multiple_points",
                format!(
                    "{} came with another source MAC than their flows' first packets, while the flows' new packets did not: the capture seems to hold each packet from two points, merged into one interface",
                    count(merged.0, "retransmission", "retransmissions"),
                ),
                vec![format!(
                    "retransmissions with another source MAC = {} of {}",
                    merged.0, merged.1
                )],
                merged.2.iter().map(|&i| key_name(&a.flows[i].key)).collect(),
                vec![],
                "Captures taken at two points at the same time (both hosts, both sides of a router) and merged into one file whose interfaces were merged too (mergecap does so when they look alike), or a mirror of two routed ports, hold each packet twice; the second sighting, whose source MAC a routed hop rewrote, reads as a retransmission, so the retransmission, timeout and loss figures of these flows are not the network's. Merge with `mergecap -I none` (rdmascope then reads each flow at one interface), give the captures as separate files, or analyse one point at a time.",
            );
        }
    }
    // Go-back-N passes taken for ACK timeouts that began sooner than any ACK timeout after
    // the responder acknowledged waiting requests: not what a requester does, so the capture
    // (or the NIC) is not what the transport figures assume. Half or more of at least 10.
    if a.other_points.0 == 0 && merged.0 == 0 {
        let early = suspect_flows(a, |f| {
            let timeouts = f.req.sum().map_or(0, |q| q.triggers.timeout);
            Some((u64::from(f.early_timeouts), timeouts))
        });
        if early.0 > 0 {
            push(
                Severity::Warning,
                "capture.early_resends",
                format!(
                    "{} counted as ACK timeouts began less than {} ns after the responder acknowledged waiting requests, sooner than any ACK timeout: the capture may hold each packet twice, or have missed the NAKs that asked for them",
                    count(early.0, "go-back-N pass", "go-back-N passes"),
                    crate::analyzer::DUP_NS
                ),
                vec![format!(
                    "early timeouts = {} of {} on these flows",
                    early.0, early.1
                )],
                early.2.iter().map(|&i| key_name(&a.flows[i].key)).collect(),
                vec![],
                "A requester resends without a NAK only when its ACK timer expires, at least 8.192 µs (IBTA §9.7.6.1.3) after the last ACK that acknowledged waiting requests, so these passes are not the timeouts they are counted as, and the timeout, retransmission and loss figures of these flows are doubtful. Usual causes: captures from two points merged into one file whose interfaces were merged too (plain mergecap; keep them apart with mergecap -I none, or give the captures as separate files), copies that trail their packets by more than 8.192 µs (a mirror of two ports), or NAKs the capture dropped (see capture.drops and the capture tool's drop count). A NIC that retransmits adaptively, sooner than its configured timeout, would do it too.",
            );
        }
    }
    // A QP number carrying a new connection: its PSNs started afresh.
    if a.psn_restarts.0 > 0 {
        push(
            Severity::Info,
            "transport.psn_restart",
            format!(
                "{} started again at an unrelated PSN after at least {} ms of silence: a new connection on the same QP number",
                count(a.psn_restarts.0, "request flow", "request flows"),
                crate::analyzer::RESTART_IDLE_NS / 1_000_000
            ),
            vec![format!("psn_restarts = {}", a.psn_restarts.0)],
            a.restart_flows.iter().map(|&i| key_name(&a.flows[i].key)).collect(),
            a.psn_restarts.1.clone(),
            "Nothing is wrong in itself: QPs were destroyed and created again with the same numbers, their numbers exchanged out of band (no CM in the capture), and a new connection starts at a random PSN. The PSNs are counted afresh from each restart, so the jump counts neither as missing nor as resent packets. If the QPs were not restarted, the capture missed a long stretch of traffic on these flows.",
        );
    }
    // ECN and CNPs: CE marks answered by CNPs from the receiver, or not.
    let answers = |f: &&(String, Node, Node, u64)| facts.cnp_pairs.contains(&(f.2, f.1));
    let answered: Vec<&(String, Node, Node, u64)> = facts.ce.iter().filter(answers).collect();
    let unanswered: Vec<&(String, Node, Node, u64)> =
        facts.ce.iter().filter(|f| !answers(f)).collect();
    if !answered.is_empty() {
        // Flows whose figure is 0 measured none (no CNP followed a CE mark in the capture, or
        // no 100 µs around a CNP held the sender's data).
        let mean = |(sum, n): (u64, u64)| sum.checked_div(n);
        let not_measured = || "not measured".to_string();
        let (lat, before, after) = (facts.ce_to_cnp, facts.rate_before, facts.rate_after);
        let gb = |v: u64| v as f64 / 1e9;
        let rates = match (mean(before), mean(after)) {
            (Some(b), Some(a)) => format!("{:.1} / {:.1} Gb/s", gb(b), gb(a)),
            (b, a) => {
                let one =
                    |r: Option<u64>| r.map_or_else(not_measured, |v| format!("{:.1} Gb/s", gb(v)));
                format!("{} / {}", one(b), one(a))
            }
        };
        push(
            Severity::Info,
            "congestion.ecn",
            format!("Congestion: {} CE-marked, {} sent back; DCQCN is reacting", count(t.ecn.ce, "packet", "packets"), count(t.cnp, "CNP", "CNPs")),
            vec![
                format!("ecn.ce = {} of {} RoCEv2 packets", t.ecn.ce, t.ecn.ce + t.ecn.ect0 + t.ecn.ect1 + t.ecn.not_ect),
                format!("cnp = {}", t.cnp),
                format!("CE → CNP (median of flows): {}", mean(lat).map_or_else(not_measured, fmt_ns)),
                format!("sender rate before / after CNPs: {rates}"),
            ],
            answered.iter().take(NAMED).map(|f| f.0.clone()).collect(),
            frames_of(Cite::Ce),
            "Switches mark packets because queues build up (incast or oversubscription), and the senders slow down on CNPs as DCQCN intends. If throughput suffers, look for many-to-one traffic patterns, and check that the ECN thresholds (Kmin/Kmax) sit well below the PFC XOFF threshold.",
        );
    }
    if !unanswered.is_empty() {
        push(
            Severity::Warning,
            "congestion.ce_without_cnp",
            format!("{} CE-marked packets but {} no CNP", count(unanswered.len(), "flow receives", "flows receive"), agree(unanswered.len(), "its receiver sends", "their receivers send")),
            unanswered.iter().take(5).map(|f| format!("{}: {}, 0 CNPs back", f.0, count(f.3, "CE mark", "CE marks"))).collect(),
            unanswered.iter().take(NAMED).map(|f| f.0.clone()).collect(),
            frames_of(Cite::Ce),
            "The receiving NIC does not act as a DCQCN notification point, so senders never slow down and congestion turns into PFC pauses or drops. Enable ECN/CNP generation on the receivers for the RDMA priority (mlx5: /sys/class/net/<if>/ecn/roce_np/enable/<prio> = 1) and check the CNP DSCP/priority.",
        );
    }
    // Data only: CM MADs on QP1 are commonly sent Not-ECT.
    let data_not_ect = facts.data_not_ect;
    if data_not_ect > 0 {
        let ecn_in_use = t.ecn.ect0 + t.ecn.ect1 + t.ecn.ce > 0 || t.cnp > 0;
        push(
            if ecn_in_use { Severity::Warning } else { Severity::Info },
            "congestion.not_ect",
            if ecn_in_use {
                format!("{} sent Not-ECT while others use ECN: {} congestion control off", count(data_not_ect, "RoCEv2 data packet is", "RoCEv2 data packets are"), agree(data_not_ect, "its sender has", "those senders have"))
            } else {
                format!("No RoCEv2 packet is ECN-capable ({}): DCQCN congestion control is not in use", count(data_not_ect, "Not-ECT data packet", "Not-ECT data packets"))
            },
            vec![format!("ecn: not_ect {}, ect0 {}, ect1 {}, ce {}", t.ecn.not_ect, t.ecn.ect0, t.ecn.ect1, t.ecn.ce)],
            facts.not_ect.0,
            frames_of(Cite::NotEct),
            "Switches cannot mark Not-ECT packets, so these senders never get CNPs and only PFC (or loss) stops them. Enable RoCE congestion control on the senders (mlx5: ecn/roce_rp/enable/<prio> = 1; Soft-RoCE has none) and make sure the traffic class sets an ECT code point.",
        );
    }
    // PFC.
    if pfc.pause_episodes > 0 {
        let worst = pfc.by_port.iter().max_by_key(|p| p.pause_ns);
        let frac = worst.map_or(0.0, |p| p.pause_ns as f64 / span as f64);
        push(
            if frac > 0.01 { Severity::Warning } else { Severity::Info },
            "pfc.pause",
            format!("{} paused traffic for {} in total", count(pfc.pause_episodes, "PFC/PAUSE episode", "PFC/PAUSE episodes"), fmt_ns(pfc.pause_ns_total)),
            pfc.by_port
                .iter()
                .map(|p| {
                    let prio = if p.priority == 255 { "all".into() } else { p.priority.to_string() };
                    let pct = 100.0 * p.pause_ns as f64 / span as f64;
                    let share = if pct > 100.0 { "longer than the capture".to_string() } else { format!("{pct:.1}% of the capture") };
                    format!("{} prio {prio}: {}, {}, paused {} ({share})", p.src_mac, count(p.frames, "frame", "frames"), count(p.episodes, "episode", "episodes"), fmt_ns(p.pause_ns))
                })
                .collect(),
            vec![],
            a.pfc.values().map(|s| s.first_frame).take(10).collect(),
            "Pauses are how a lossless fabric absorbs bursts, but long or frequent ones mean a receiver or a congested switch port cannot keep up, and they spread congestion upstream (head-of-line blocking). Find the port that sends them and why its queue fills: incast, a slow receiver, or ECN thresholds above the PFC threshold.",
        );
    }
    // `by_port` is in the order of `a.pfc`; a port's full pause is at its own link's speed.
    // Timestamps in coarser units than ns may lengthen an episode by almost a unit.
    let storms: Vec<(&report::PfcPort, &PfcState)> = pfc
        .by_port
        .iter()
        .zip(a.pfc.values())
        .filter(|(_, s)| s.longest > (2 * s.full_ns).saturating_add(a.ts_unit - 1))
        .collect();
    if !storms.is_empty() {
        push(
            Severity::Critical,
            "pfc.storm",
            format!("PFC storm: {} a priority paused for more than twice the longest single pause", count(storms.len(), "source keeps", "sources keep")),
            storms.iter().map(|(p, s)| format!("{} prio {}: longest episode {} (one 65535-quanta pause = {})", p.src_mac, p.priority, fmt_ns(p.longest_episode_ns), fmt_ns(s.full_ns))).collect(),
            vec![],
            storms.iter().map(|(_, s)| s.first_frame).collect(),
            "A device keeps refreshing XOFF without releasing: a stuck receiver (host not draining its RX ring) or a deadlock of paused queues, which can freeze the whole fabric. Enable the PFC storm / watchdog protection on switches and NICs (e.g. mlx5 pfc_stall_prevention), find the source MAC, and fix the host or port behind it.",
        );
    }
    let paused = &facts.paused;
    if !paused.is_empty() && !paused.contains(&255) {
        let (unprotected, named, prios) = facts.unprotected;
        if unprotected > 0 {
            push(
                Severity::Critical,
                "pfc.priority_mismatch",
                format!(
                    "RDMA data uses priority {}, which PFC never pauses, while PFC acts on priority {}",
                    prios.iter().map(u8::to_string).collect::<Vec<_>>().join(", "),
                    paused.iter().map(u8::to_string).collect::<Vec<_>>().join(", ")
                ),
                vec![count(unprotected, "flow on an unprotected priority", "flows on unprotected priorities")],
                named.0,
                vec![],
                "That traffic is not lossless: switches drop it under congestion. Make the RDMA traffic class map to the PFC-enabled priority: set the DSCP (or VLAN PCP) the application uses (rdma_set_option ToS, NCCL_IB_TC, cma_roce_tos) and the NIC trust mode (mlnx_qos --trust dscp) to match the switch's PFC priority.",
            );
        }
    }
    dcb_findings(dcbx, &facts.data_prios, &mut push);
    // MTU.
    let mismatched: Vec<&Connection> = conns
        .iter()
        .filter(|c| {
            let obs = [c.observed_mtu_a_to_b, c.observed_mtu_b_to_a];
            let vs_cm = c
                .path_mtu
                .is_some_and(|m| obs.iter().flatten().any(|o| *o != m));
            let between = matches!(obs, [Some(x), Some(y)] if x != y);
            vs_cm || between
        })
        .collect();
    if !mismatched.is_empty() {
        push(
            Severity::Warning,
            "mtu.mismatch",
            format!("{} a path MTU that differs between the two ends (or from what CM agreed)", count(mismatched.len(), "connection uses", "connections use")),
            mismatched
                .iter()
                .take(5)
                .map(|c| {
                    let m = |v: Option<u32>| v.map_or("-".to_string(), |x| x.to_string());
                    format!("{} qp 0x{:06x} <-> {} qp 0x{:06x}: CM {}, A→B {}, B→A {}", c.a.node, c.a.qpn, c.b.node, c.b.qpn, m(c.path_mtu), m(c.observed_mtu_a_to_b), m(c.observed_mtu_b_to_a))
                })
                .collect(),
            mismatched.iter().take(10).map(|c| format!("{} <-> {}", c.a.node, c.b.node)).collect(),
            vec![],
            "Each side packetises with its own active MTU, which follows the netdev MTU (RoCE MTU = largest IB MTU ≤ netdev MTU − headers: 1500 → 1024, 4200 → 4096). Set the same MTU on both hosts' netdevs and on every switch port, then reconnect.",
        );
    }
    if a.fragments.0 > 0 || a.frag_needed.0 > 0 {
        push(
            Severity::Warning,
            "mtu.fragmentation",
            format!("{} and {}", count(a.fragments.0, "fragmented RoCE packet", "fragmented RoCE packets"), count(a.frag_needed.0, "ICMP 'fragmentation needed' message", "ICMP 'fragmentation needed' messages")),
            vec![format!("IP fragments of UDP/4791: {}", a.fragments.0), format!("ICMP fragmentation needed / packet too big: {}", a.frag_needed.0)],
            vec![],
            [a.fragments.1.clone(), a.frag_needed.1.clone()].concat(),
            "RoCEv2 must never be fragmented (it sets DF) and the NIC drops fragments: some hop has a smaller MTU than the RoCE MTU. Raise the MTU on that hop or lower the RoCE MTU on the hosts.",
        );
    }
    if t.icrc.bad > 0 {
        let mut evidence = vec![format!(
            "icrc: ok {}, bad {}, truncated {}, unverifiable {}",
            t.icrc.ok, t.icrc.bad, t.icrc.truncated, t.icrc.unverifiable
        )];
        let v = &totals.vcrc;
        let mut advice = "The invariant CRC covers everything a switch or router may not change, so a mismatch means corruption on a link or in a device, or a covered field rewritten.".to_string();
        if t.icrc.bad > v.ok_with_bad_icrc + v.bad_with_bad_icrc {
            advice.push_str(" For RoCE, check link error counters along the path and anything that rewrites RoCE packets (an ECMP/NAT device changing the UDP source port or IP addresses).");
        }
        if v.bad_with_bad_icrc > 0 {
            evidence.push(format!(
                "{} a bad VCRC too",
                count(v.bad_with_bad_icrc, "of them has", "of them have")
            ));
            advice.push_str(" Those with a bad VCRC too were damaged on the last link before the capture point (see vcrc.bad).");
        }
        if v.ok_with_bad_icrc > 0 {
            evidence.push(format!(
                "{} a good VCRC",
                count(v.ok_with_bad_icrc, "of them has", "of them have")
            ));
            advice.push_str(" InfiniBand recomputes the VCRC at every hop, so a bad ICRC under a good VCRC was damaged before the last hop: inside a switch (its buffer memory or a faulty ASIC) or by the sender, not on the last cable. Compare the error counters of the switches on the path (ibqueryerrors) and suspect the one all these flows cross.");
        }
        push(
            Severity::Critical,
            "icrc.bad",
            format!(
                "{} a bad ICRC: the receiving HCA drops {} silently",
                count(t.icrc.bad, "packet carries", "packets carry"),
                agree(t.icrc.bad, "it", "them")
            ),
            evidence,
            facts.icrc_bad.0,
            frames_of(Cite::Bad),
            &advice,
        );
    }
    let v = &totals.vcrc;
    if v.bad > 0 {
        push(
            Severity::Critical,
            "vcrc.bad",
            format!("{} a bad VCRC: the link into the capture point corrupts bits", count(v.bad, "InfiniBand packet carries", "InfiniBand packets carry")),
            vec![format!("vcrc: ok {}, bad {}, truncated {}", v.ok, v.bad, v.truncated)],
            vec![],
            a.vcrc.bad_at.clone(),
            "The VCRC covers the whole packet and is recomputed at every hop, so a bad one means bits flipped on the last link before the capture point: its cable, transceiver or one of its two ports. The receiving port drops such packets and the sender retransmits them. Read that link's SymbolErrorCounter, PortRcvErrors and LinkErrorRecoveryCounter on both ends (perfquery, ibqueryerrors), then reseat or replace the cable.",
        );
    }
    if let Some((sp, (n, named))) = facts
        .by_sport
        .iter()
        .max_by_key(|(_, v)| v.0)
        .filter(|(_, v)| v.0 >= 3)
    {
        push(
            Severity::Warning,
            "ecmp.single_udp_sport",
            format!("{n} RDMA flows all use UDP source port {sp}: ECMP hashes them onto one path"),
            vec![format!("UDP source port {sp}: {n} request flows")],
            named.0.clone(),
            vec![],
            "RoCEv2 takes its entropy from the UDP source port. With one port for every QP, all flows between two racks share one ECMP path and the others idle. Let the NIC derive the source port per QP (the Linux default, from the flow label) and check nothing rewrites it.",
        );
    }
    if facts.v1.0 > 0 {
        let (flows, packets, named) = &facts.v1;
        // Hosts that send RoCEv1 one way and receive RoCEv2 the other.
        let mixed: Vec<String> = facts
            .v1_pairs
            .iter()
            .filter(|(s, d)| facts.v2_pairs.contains(&(*d, *s)))
            .map(|(s, d)| format!("{s} sends RoCEv1 to {d}, which sends RoCEv2 back"))
            .collect();
        let mut evidence = vec![format!(
            "{} of RoCEv1 (EtherType 0x8915, GRH) in {}",
            count(*packets, "packet", "packets"),
            count(*flows, "flow", "flows")
        )];
        evidence.extend(mixed.iter().take(5).cloned());
        push(
            if mixed.is_empty() { Severity::Info } else { Severity::Warning },
            "roce.v1",
            if mixed.is_empty() {
                format!("{} RoCEv1, which routers cannot forward", count(*flows, "flow is", "flows are"))
            } else {
                format!("The two ends of {} send different RoCE versions", count(mixed.len(), "node pair", "node pairs"))
            },
            evidence,
            named.0.clone(),
            vec![],
            "RoCEv1 carries the InfiniBand GRH straight over Ethernet: no IP header, so it stays within one L2 domain and no switch can ECN-mark it for congestion control. The GID index a QP is given selects the version (its type is in /sys/class/infiniband/<dev>/ports/<port>/gid_attrs/types/<index>, or show_gids): give both ends the index of the RoCE v2 entry for the same address (perftest -x, NCCL_IB_GID_INDEX, RDMA-CM's default_roce_mode in configfs).",
        );
    }
    let rejects: Vec<&crate::analyzer::CmConn> =
        a.cm.iter().filter(|c| c.reject.is_some()).collect();
    if !rejects.is_empty() {
        push(
            Severity::Warning,
            "cm.reject",
            count(rejects.len(), "connection request was rejected", "connection requests were rejected"),
            rejects.iter().take(5).map(|c| {
                let r = c.reject.unwrap_or(0);
                let service = if c.service_id == 0 { "(REQ not in the capture)".to_string() } else { format!("service 0x{:016x}", c.service_id) };
                format!("{} → {} {service}: REJ reason {r} ({})", c.a, c.b, mad::rej_reason_name(r))
            }).collect(),
            rejects.iter().take(10).map(|c| format!("{} > {}", c.a, c.b)).collect(),
            rejects.iter().flat_map(|c| c.reply_frame).take(10).collect(),
            "The passive side refused the connection. Reason 28 (consumer defined) comes from the application (rdma_reject): check the server's log; 8 (invalid Service ID) means nothing listens on that port; 26 (invalid path MTU) means the MTUs differ.",
        );
    }
    let no_reply: Vec<&crate::analyzer::CmConn> = a
        .cm
        .iter()
        .filter(|c| c.reply_frame.is_none() && cap.last_ts_ns.saturating_sub(c.req_ts) > 10_000_000)
        .collect();
    if !no_reply.is_empty() {
        push(
            Severity::Warning,
            "cm.no_reply",
            format!("{} no reply (no REP, REJ or MRA)", count(no_reply.len(), "connection request got", "connection requests got")),
            no_reply.iter().take(5).map(|c| format!("{} → {} service 0x{:016x}", c.a, c.b, c.service_id)).collect(),
            no_reply.iter().take(10).map(|c| format!("{} > {}", c.a, c.b)).collect(),
            no_reply.iter().map(|c| c.req_frame).take(10).collect(),
            "The REQ never reached the passive side's CM or its answer was lost: check that UDP 4791 is not filtered (firewalls matter for Soft-RoCE), that the GID index used maps to the right interface and IP, and that the server listens.",
        );
    }
    if a.cut_before_bth.0 > 0 {
        push(
            Severity::Warning,
            "capture.truncated",
            format!(
                "{} cut before the end of the BTH: queue pair, PSN and opcode unknown, left out of the analysis",
                count(a.cut_before_bth.0, "RoCE or InfiniBand frame was", "RoCE or InfiniBand frames were"),
            ),
            vec![format!(
                "capture.cut_before_bth = {}, frames cut by the snaplen = {}, rdma_packets = {}",
                a.cut_before_bth.0, a.truncated_frames.0, cap.rdma_packets
            )],
            vec![],
            a.cut_before_bth.1.clone(),
            "The snaplen is shorter than the headers. Capture at least 128 bytes a frame (tcpdump -s 128, rdmascope capture --snaplen 128): enough for RoCEv2 over IPv4 or IPv6 with a VLAN tag, and for InfiniBand with a GRH, with their extension headers.",
        );
    } else if a.cut_before_aeth.0 > 0 {
        push(
            Severity::Warning,
            "capture.truncated",
            format!(
                "{} cut before the end of the AETH: whether each acknowledged or refused is unknown, so NAKs, RNR NAKs, duplicate ACKs, ACK timeouts and ACK latency are not measured",
                count(a.cut_before_aeth.0, "ACK or NAK was", "ACKs or NAKs were"),
            ),
            vec![format!(
                "capture.cut_before_aeth = {}, frames cut by the snaplen = {}",
                a.cut_before_aeth.0, a.truncated_frames.0
            )],
            vec![],
            a.cut_before_aeth.1.clone(),
            "The snaplen ends inside the headers of the responders' answers: their PSNs still pair the connections and show how far each responder got, and the requests' retransmissions are still counted, but not what started them. Capture at least 128 bytes a frame (tcpdump -s 128, rdmascope capture --snaplen 128): enough for RoCEv2 over IPv4 or IPv6 with a VLAN tag, and for InfiniBand with a GRH, with their extension headers.",
        );
    } else if a.truncated_frames.0 > 0 {
        push(
            Severity::Info,
            "capture.truncated",
            format!("{} by the capture's snaplen; headers are decoded, ICRCs cannot be checked", count(a.truncated_frames.0, "frame was cut", "frames were cut")),
            vec![format!("icrc.truncated = {}", t.icrc.truncated)],
            vec![],
            a.truncated_frames.1.clone(),
            "That is normal with tcpdump -s 128 and enough for this analysis. Capture whole frames if you need ICRC checks or payload.",
        );
    }
    if cap.untracked_packets > 0 || cap.untracked_cm > 0 {
        let summary = if cap.untracked_packets > 0 {
            format!(
                "{} of flows beyond the first {} are in the totals but were not analysed per flow",
                count(cap.untracked_packets, "packet", "packets"),
                a.max_flows
            )
        } else {
            format!(
                "{} beyond the first {} were not recorded",
                count(cap.untracked_cm, "CM connection", "CM connections"),
                a.max_flows
            )
        };
        push(
            Severity::Warning,
            "capture.flow_limit",
            summary,
            vec![format!(
                "capture.untracked_packets = {}, capture.untracked_cm = {}, flows = {}, CM connections = {}",
                cap.untracked_packets,
                cap.untracked_cm,
                a.flows.len(),
                a.cm.len()
            )],
            vec![],
            vec![],
            "Their opcodes, ECN, ICRC, CNPs and NAKs are counted; PSNs, retransmissions, ACK latency, messages and the connections of the CM requests are not. A capture where nearly every packet starts a new flow or connection is usually not RDMA (another protocol on UDP 4791, or damaged bytes). Otherwise raise --max-flows (about 3 KB of memory a flow) or cut the capture to the hosts of interest.",
        );
    }
    if cap.skipped_searches > 0 {
        push(
            Severity::Warning,
            "capture.search_limit",
            format!(
                "{} not matched to a requester: node pairs hold too many flows that never pair to search them all",
                count(cap.skipped_searches, "ACK, NAK, READ response or CNP was", "ACKs, NAKs, READ responses or CNPs were"),
            ),
            vec![format!("capture.skipped_searches = {}, flows = {}", cap.skipped_searches, a.flows.len())],
            a.skipped_flows.iter().map(|&i| key_name(&a.flows[i].key)).collect(),
            vec![],
            "Without CM, an answer finds its requester by searching the flows of its node pair, and the searches may examine about 270 million flows in all plus 64 a packet: thousands of flows that never pair, with answers on ever new flows or many CNPs, would make the pass quadratic. Their ACK and READ latency, CE-to-CNP times, rates around CNPs and retransmission triggers are incomplete. Such a capture usually holds one direction of very many QPs, or damaged or forged packets: capture both directions, or cut it to the QPs of interest.",
        );
    }
    let name = |i: usize| {
        format!(
            "file {} ({})",
            i + 1,
            cap.files.get(i).map_or("?", String::as_str)
        )
    };
    if let Some(c) = a.cuts.first() {
        let summary = if a.cuts.len() == 1 {
            format!(
                "{} was read only up to a fault, after {}; the rest of it is not analysed",
                name(c.file),
                count(c.packets, "packet", "packets")
            )
        } else {
            format!(
                "{} files were read only up to a fault; the rest of each is not analysed",
                a.cuts.len()
            )
        };
        push(
            Severity::Warning,
            "capture.cut_short",
            summary,
            a.cuts
                .iter()
                .take(NAMED)
                .map(|c| format!("{}: {} read, then: {}", name(c.file), count(c.packets, "packet", "packets"), c.what))
                .collect(),
            vec![],
            vec![],
            "The file ends inside a packet or is damaged from that point on: a capture stopped without flushing (killed, or out of disk space), a copy taken while the capture was still writing, or a damaged transfer. Everything before the fault is analysed and nothing after it, so the counters and findings describe only that part, and requests at the very end may look unanswered. Stop captures cleanly (Ctrl-C or SIGTERM, not SIGKILL), copy files once they are closed, and `rdmascope show` the file to see where it breaks.",
        );
    }
    let overlaps = file_overlaps(&a.file_spans);
    if let Some(&(k, j, _)) = overlaps.first() {
        let (first, last) = a.file_spans[k].unwrap_or_default();
        let (jf, jl) = a.file_spans[j].unwrap_or_default();
        let summary = if last <= jf {
            format!("{} lies before {} in time, but was analysed after it: the files are read in the order given", name(k), name(j))
        } else {
            format!("{} begins {} before {} ends: the files overlap in time, and are read one after the other", name(k), fmt_ns(jl - first), name(j))
        };
        push(
            Severity::Warning,
            "capture.files_overlap",
            summary,
            overlaps
                .iter()
                .take(NAMED)
                .map(|&(k, j, by)| format!("{} overlaps {} by {} ({} files read)", name(k), name(j), fmt_ns(by), cap.files.len()))
                .collect(),
            vec![],
            vec![],
            "analyze reads its files one after another, as parts of one capture in time order. A file that begins more than 1 ms before the files before it end is taken for a capture made at the same time at another point (both ends of a link, two hosts): each flow is read from the files that carried it first, and its packets in the others count as packets only (capture.multiple_points). A file out of order (wholly before one given earlier) is taken so too, and most of its packets are left out of the analysis; a file given twice adds only to the packet counts. Give the parts of one capture in time order (ring files sort by name), and analyze captures from different points one at a time to compare what each saw.",
        );
    }
    if pfc.untracked_frames > 0 {
        push(
            Severity::Warning,
            "capture.pfc_limit",
            format!(
                "{} came from (source MAC, priority) pairs beyond the first {}: counted, but their pause episodes were not followed",
                count(pfc.untracked_frames, "PFC/PAUSE frame", "PFC/PAUSE frames"),
                a.pfc.len()
            ),
            vec![format!("pfc.untracked_frames = {}, pfc.by_port = {}", pfc.untracked_frames, a.pfc.len())],
            vec![],
            vec![],
            "No fabric has that many pausing ports: the frames are most likely damaged or forged (random source MACs). Find where they come from with `rdmascope show -Y macc` before trusting any PFC figure of this capture.",
        );
    }
    if cap.rdma_packets == 0 && cap.cut_before_bth == 0 {
        let advice = "Hardware RoCE bypasses the kernel, so tcpdump on the netdev sees nothing of it. Capture from the RDMA device instead: `rdmascope capture -i mlx5_0`, `tcpdump -i mlx5_0` (libpcap with RDMA sniffing), or `ibdump -d mlx5_0`; or mirror the switch port.";
        let cut = a.truncated_frames.0;
        let advice = if cut > 0 {
            format!("{} by the capture's snaplen: one shorter than the headers can hide RoCE (the UDP port 4791 cut off), so capture at least 128 bytes a frame first. {advice}", count(cut, "frame was cut", "frames were cut"))
        } else {
            advice.to_string()
        };
        push(
            Severity::Warning,
            "capture.no_rdma",
            format!(
                "No RoCE or InfiniBand packet in {}",
                count(cap.packets, "packet", "packets")
            ),
            vec![if cut > 0 {
                format!(
                    "packets = {}, rdma_packets = 0, frames cut by the snaplen = {cut}",
                    cap.packets
                )
            } else {
                format!("packets = {}, rdma_packets = 0", cap.packets)
            }],
            vec![],
            vec![],
            &advice,
        );
    }
    out.sort_by(|x, y| x.severity.cmp(&y.severity).then(x.code.cmp(&y.code)));
    out
}

/// Findings from the DCB settings LLDP advertised (IEEE 802.1Q Annex D): the two ends of a link
/// must enable PFC on the same priorities, and RoCE must travel on one of them.
fn dcb_findings(
    dcbx: &report::Dcbx,
    data_prios: &BTreeMap<u8, (u64, Named)>,
    push: &mut impl FnMut(Severity, &str, String, Vec<String>, Vec<String>, Vec<u64>, &str),
) {
    let list = |v: &[u8]| -> String {
        if v.is_empty() {
            "no priority".to_string()
        } else {
            v.iter().map(u8::to_string).collect::<Vec<_>>().join(", ")
        }
    };
    let who = |s: &report::DcbSender| {
        let port = if s.port.is_empty() || s.port == s.name {
            String::new()
        } else {
            format!(" port {}", s.port)
        };
        format!("{}{port} ({})", s.name, s.src_mac)
    };
    // A willing sender adopts its peer's settings (D.2.10), so only the others must agree.
    let fixed: Vec<(&report::DcbSender, &report::DcbPfc)> = dcbx
        .senders
        .iter()
        .filter_map(|s| Some((s, s.pfc.as_ref()?)))
        .filter(|(_, p)| !p.willing)
        .collect();
    let settings: BTreeSet<&[u8]> = fixed.iter().map(|(_, p)| p.enabled.as_slice()).collect();
    if settings.len() > 1 {
        push(
            Severity::Warning,
            "dcbx.pfc_mismatch",
            if fixed.len() == 2 {
                "2 LLDP senders advertise different PFC priorities and neither is willing to take the other's: the two ends of a link pause different priorities".to_string()
            } else {
                format!(
                    "{} LLDP senders that are not willing to take their peers' settings advertise {} different sets of PFC priorities: ends of one link pause different priorities, or the fabric is configured unevenly",
                    fixed.len(),
                    settings.len()
                )
            },
            fixed.iter().map(|(s, p)| format!("{}: PFC on {}, not willing", who(s), list(&p.enabled))).collect(),
            fixed.iter().map(|(s, _)| who(s)).collect(),
            fixed.iter().map(|(s, _)| s.first_frame).collect(),
            "A pause for a priority the peer does not honour is ignored, and traffic on a priority only one end protects is dropped under congestion. Configure the same PFC priorities on the switch port and the host (mlnx_qos -i IF --pfc 0,0,0,1,0,0,0,0), or let the host follow the switch: set it willing (lldptool -T -i IF -V PFC willing=yes) with its DCBX agent in IEEE mode.",
        );
    }
    for s in &dcbx.senders {
        let enabled = match &s.pfc {
            Some(p) => &p.enabled,
            None => continue,
        };
        let lossy: Vec<u8> = s
            .roce_priorities
            .iter()
            .copied()
            .filter(|p| !enabled.contains(p))
            .collect();
        if !lossy.is_empty() {
            push(
                Severity::Warning,
                "dcbx.roce_not_lossless",
                format!(
                    "{} maps RoCE to priority {} but enables PFC on {}",
                    who(s),
                    list(&lossy),
                    list(enabled)
                ),
                vec![format!(
                    "Application Priority: RoCE (UDP 4791 / EtherType 0x8915) -> {}; PFC on {}",
                    list(&s.roce_priorities),
                    list(enabled)
                )],
                vec![who(s)],
                vec![s.first_frame],
                "Hosts that follow this advertisement send RoCE on a priority that is never paused, so the fabric drops it under congestion and RC falls back on retransmission. Map RoCE to the PFC-enabled priority in the switch's application table, or enable PFC on the priority RoCE uses.",
            );
        }
    }
    // RDMA data on priorities no advertised PFC setting protects.
    let protected: BTreeSet<u8> = dcbx
        .senders
        .iter()
        .filter_map(|s| s.pfc.as_ref())
        .flat_map(|p| p.enabled.iter().copied())
        .collect();
    let unprotected: Vec<(&u8, &(u64, Named))> = data_prios
        .iter()
        .filter(|(p, _)| !protected.contains(p))
        .collect();
    if !protected.is_empty() && !unprotected.is_empty() {
        let prios: Vec<u8> = unprotected.iter().map(|(p, _)| **p).collect();
        let enabled: Vec<u8> = protected.iter().copied().collect();
        push(
            Severity::Warning,
            "dcbx.priority_mismatch",
            format!(
                "RDMA data uses priority {}, on which no LLDP sender enables PFC (they enable {})",
                list(&prios),
                list(&enabled)
            ),
            unprotected.iter().map(|(p, n)| format!("priority {p}: {}", count(n.0, "flow", "flows"))).collect(),
            unprotected.iter().flat_map(|(_, n)| n.1 .0.iter().cloned()).take(10).collect(),
            vec![],
            "That traffic is lossy: the switch drops it under congestion instead of pausing. Set the DSCP or VLAN PCP the RDMA traffic uses (rdma_set_option ToS, NCCL_IB_TC, cma_roce_tos) and the NIC trust mode (mlnx_qos --trust dscp) so it maps to the PFC priority.",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::{Bth, Config, Event};
    use rdmascope_wire::ext::Aeth;

    /// A report's flows are found by key and ranked by bytes as a list of all of them would
    /// be (ties in flow order), and nodes read back as they print.
    #[test]
    fn flows_found_by_key_and_ranked_by_bytes() {
        let mut a = Analyzer::new(Config::default());
        for n in 0..300u32 {
            let mut e = Event::default();
            e.meta.number = u64::from(n) + 1;
            e.meta.ts_ns = u64::from(n) * 1000;
            e.meta.orig_len = 100 + (n % 4) * 10;
            e.bth = Some(Bth {
                opcode: 0x04,
                ackreq: false,
                destqp: 0x100 + n % 37,
                psn: n,
            });
            let src = match n % 3 {
                0 => Node::V4([10, 0, 0, 1]),
                1 => Node::Gid([
                    0xfe,
                    0x80,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    2,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    (n % 5) as u8,
                ]),
                _ => Node::Lid(7),
            };
            e.nodes = Some((src, Node::V4([10, 0, 0, (n % 4) as u8])));
            a.event(&e);
        }
        let r = a.finish();
        let all: Vec<report::Flow> = r.flows.iter().collect();
        assert!(all.len() > 100);
        for f in &all {
            let (src, dst) = (f.src.parse().unwrap(), f.dst.parse().unwrap());
            let got = r.flows.find(src, dst, f.dest_qp).expect("found");
            assert_eq!(format!("{got:?}"), format!("{f:?}"));
            assert_eq!(src.to_string(), f.src);
        }
        assert!(r.flows.find(Node::Lid(9), Node::Lid(9), 1).is_none());
        let mut ranked: Vec<&report::Flow> = all.iter().collect();
        ranked.sort_by_key(|f| std::cmp::Reverse(f.counters.bytes));
        let top = r.flows.top_by_bytes(25);
        assert_eq!(format!("{top:?}"), format!("{:?}", &ranked[..25]));
        for bad in ["", "lid:", "lid:70000", "10.0.0", "::g", "x"] {
            assert!(bad.parse::<Node>().is_err(), "{bad}");
        }
        assert_eq!(
            "::ffff:10.0.0.1".parse::<Node>().unwrap().to_string(),
            "::ffff:10.0.0.1"
        );
    }

    /// Sealing every flow, half of them on another thread, changes no flow's report: the
    /// latencies (few samples and histograms alike) keep their summaries.
    #[test]
    fn sealing_on_two_threads_keeps_every_report() {
        let mut a = Analyzer::new(Config::default());
        let mut n = 0u64;
        // Requests with AckReq from 10.0.0.1, each ACKed; 100 flows get more than 32 samples.
        for psn in 0..40u32 {
            for qp in 0..1000u32 {
                if qp >= 100 && psn >= 10 {
                    continue;
                }
                let (x, y) = (
                    Node::V4([10, 0, 0, 1]),
                    Node::V4([10, 0, 0, (qp % 5) as u8 + 2]),
                );
                for ack in [false, true] {
                    n += 1;
                    let mut e = Event::default();
                    e.meta.number = n;
                    e.meta.ts_ns = n * 1000 + u64::from(qp % 7) * 100;
                    e.meta.orig_len = 100;
                    e.bth = Some(Bth {
                        opcode: if ack { 0x11 } else { 0x04 },
                        ackreq: !ack,
                        destqp: if ack { 0x8000 + qp } else { 0x100 + qp },
                        psn,
                    });
                    e.aeth = ack.then(|| Aeth::parse(&[0, 0, 0, 1]).unwrap());
                    e.nodes = Some(if ack { (y, x) } else { (x, y) });
                    a.event(&e);
                }
            }
        }
        let live: Vec<report::Flow> = a.flows.iter().map(Analyzer::flow_report).collect();
        assert_eq!(live.len(), 2000);
        assert!(live.iter().any(|f| f.ack_latency_ns.count > 32));
        seal_all(&mut a.flows);
        let sealed: Vec<report::Flow> = a.flows.iter().map(Analyzer::flow_report).collect();
        assert_eq!(format!("{sealed:?}"), format!("{live:?}"));
    }

    /// Files overlap when one begins before an earlier one ends, by more than 1 ms or half its
    /// own span; the earlier file named is the one that ends latest.
    #[test]
    fn file_overlaps_beyond_timestamp_jitter() {
        const MS: u64 = 1_000_000;
        let f = |v: &[(u64, u64)]| file_overlaps(&v.iter().map(|&s| Some(s)).collect::<Vec<_>>());
        // Ring files in time order, the second starting 50 µs early (jitter): none.
        assert_eq!(f(&[(0, 100 * MS), (100 * MS - 50_000, 200 * MS)]), []);
        // The same file twice, however short.
        assert_eq!(f(&[(10, 110), (10, 110)]), [(1, 0, 100)]);
        // In reverse order; and a third file overlapping the first, which ends latest.
        assert_eq!(
            f(&[(100 * MS, 200 * MS), (0, 100 * MS), (150 * MS, 300 * MS)]),
            [(1, 0, 200 * MS), (2, 0, 50 * MS)]
        );
        // Files without packets are skipped.
        assert_eq!(
            file_overlaps(&[None, Some((0, 10)), None, Some((20, 30))]),
            []
        );
    }
}
