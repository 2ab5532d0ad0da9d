//! The named scenarios: which nodes talk, over which QPs, and what goes wrong.

use crate::frames::Node;
use crate::sim::{Aux, ConnCfg, Fabric, OpKind, Sim, SimOpts, Sink};
use crate::truth::Truth;

/// A traffic scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    Clean,
    Lossy,
    Rnr,
    Incast,
    PfcStorm,
    Misconfig,
    Ib,
    Mixed,
    Reorder,
    Errors,
}

impl Scenario {
    pub const ALL: [Scenario; 10] = [
        Self::Clean,
        Self::Lossy,
        Self::Rnr,
        Self::Incast,
        Self::PfcStorm,
        Self::Misconfig,
        Self::Ib,
        Self::Mixed,
        Self::Reorder,
        Self::Errors,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Clean => "clean",
            Self::Lossy => "lossy",
            Self::Rnr => "rnr",
            Self::Incast => "incast",
            Self::PfcStorm => "pfc-storm",
            Self::Misconfig => "misconfig",
            Self::Ib => "ib",
            Self::Mixed => "mixed",
            Self::Reorder => "reorder",
            Self::Errors => "errors",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|x| x.name() == s)
    }
}

/// What to generate.
#[derive(Debug, Clone)]
pub struct GenOptions {
    pub scenario: Scenario,
    /// Stop after this many frames.
    pub packets: Option<u64>,
    /// Stop after this much capture time.
    pub duration_ns: Option<u64>,
    pub seed: u64,
    pub link_bps: u64,
    pub snaplen: usize,
    pub ipv6: bool,
    pub vlan: Option<(u16, u8)>,
    pub corrupt_rate: f64,
    /// Include native IB traffic in `mixed` (needs a second interface: pcapng only).
    pub mixed_ib: bool,
}

impl Default for GenOptions {
    fn default() -> Self {
        Self {
            scenario: Scenario::Clean,
            packets: None,
            duration_ns: None,
            seed: 1,
            link_bps: 100_000_000_000,
            snaplen: 65535,
            ipv6: false,
            vlan: None,
            corrupt_rate: 0.0,
            mixed_ib: false,
        }
    }
}

/// The capture starts at this time (2026-01-01T00:00:00Z), so a seed gives identical files.
const EPOCH_NS: u64 = 1_767_225_600_000_000_000;

/// Runs a scenario, writing frames to `sink` (interface 0: Ethernet; interface 1: ERF for native
/// IB) and returning the ground truth.
pub fn generate(o: &GenOptions, sink: &mut dyn Sink) -> std::io::Result<Truth> {
    let max_frames = o.packets.unwrap_or(if o.duration_ns.is_some() {
        u64::MAX
    } else {
        10_000
    });
    let opts = SimOpts {
        link_bps: o.link_bps,
        snaplen: o.snaplen,
        ipv6: o.ipv6,
        vlan: o.vlan,
        corrupt_rate: o.corrupt_rate,
        max_frames,
        max_ns: o.duration_ns.unwrap_or(u64::MAX / 4),
        seed: o.seed,
        start_ns: EPOCH_NS,
    };
    let nodes = (0..72).map(Node::numbered).collect();
    let mut sim = Sim::new(opts, nodes, sink);
    let vlan_pcp = o.vlan.map(|v| v.1);
    match o.scenario {
        Scenario::Clean => clean(&mut sim, 0, 0x100, vlan_pcp),
        Scenario::Lossy => lossy(&mut sim, 8, 0x300, vlan_pcp),
        Scenario::Rnr => rnr(&mut sim, 12, 0x500, vlan_pcp),
        Scenario::Incast => incast(&mut sim, 16, 0x700, vlan_pcp),
        Scenario::PfcStorm => pfc_storm(&mut sim, 28, 0x900, vlan_pcp),
        Scenario::Misconfig => misconfig(&mut sim, 32, 0xb00),
        Scenario::Ib => ib(&mut sim, 48, 0xd00),
        Scenario::Reorder => reorder(&mut sim, 40, 0xf00, vlan_pcp),
        Scenario::Errors => errors(&mut sim, 56, 0x1100, vlan_pcp),
        Scenario::Mixed => {
            clean(&mut sim, 0, 0x100, vlan_pcp);
            lossy(&mut sim, 8, 0x300, vlan_pcp);
            rnr(&mut sim, 12, 0x500, vlan_pcp);
            incast(&mut sim, 16, 0x700, vlan_pcp);
            pfc_storm(&mut sim, 28, 0x900, vlan_pcp);
            misconfig(&mut sim, 32, 0xb00);
            if o.mixed_ib {
                ib(&mut sim, 48, 0xd00);
            }
        }
    }
    sim.run()?;
    let mut t = std::mem::take(&mut sim.truth);
    t.scenario = o.scenario.name().to_string();
    let sports = sim.sport_flows.values().map(|f| f.len()).max().unwrap_or(0);
    t.expected_findings = expected_findings(&t, &sim.data_priorities, sports, o.link_bps);
    Ok(t)
}

/// The finding codes a correct `analyze` reports for a capture with this truth. These are the
/// rules `analyze` implements (docs/findings.md), applied to what the generator knows.
pub fn expected_findings(
    t: &Truth,
    data_prios: &std::collections::BTreeSet<u8>,
    max_flows_one_sport: usize,
    link_bps: u64,
) -> Vec<String> {
    let c = &t.totals;
    let mut f: Vec<&str> = Vec::new();
    // A PSN sequence NAK from a node that receives reordered packets from the NAK's
    // destination is put down to the reordering.
    let reordering: std::collections::BTreeSet<(&str, &str)> = t
        .flows
        .iter()
        .filter(|x| x.counters.reordered_packets > 0)
        .map(|x| (x.src.as_str(), x.dst.as_str()))
        .collect();
    let reorder_naks: u64 = t
        .flows
        .iter()
        .filter(|x| reordering.contains(&(x.dst.as_str(), x.src.as_str())))
        .map(|x| x.counters.naks.psn_sequence_error)
        .sum();
    if c.naks.psn_sequence_error > reorder_naks
        || c.gap_filled_packets > c.reordered_packets
        || c.missing_packets > 0
        || t.events
            .retransmissions
            .iter()
            .any(|r| r.cause == crate::truth::Cause::ReadResponseGap)
    {
        f.push("transport.loss");
    }
    if c.reordered_packets > 0 {
        f.push("transport.reorder");
    }
    if c.timeouts > 0 {
        f.push("transport.timeout");
    }
    // A flow's retry count: its CM connection's, as the capture tells it, else 7.
    let retry_count = |x: &crate::truth::FlowTruth| {
        t.connections
            .iter()
            .find(|c| {
                c.learned == "cm"
                    && ((x.src == c.a.node && x.dst == c.b.node && x.dest_qp == c.b.qpn)
                        || (x.src == c.b.node && x.dst == c.a.node && x.dest_qp == c.a.qpn))
            })
            .map_or(7, |c| u64::from(c.retry_count))
    };
    if t.flows.iter().any(|x| x.stuck_retries >= retry_count(x)) {
        f.push("transport.retry_exceeded");
    }
    // A requester's RNR retry count: its CM connection's REP's, as the capture tells it (7:
    // forever).
    let rnr_exceeded = |x: &crate::truth::FlowTruth| {
        t.connections.iter().any(|c| {
            c.learned == "cm"
                && c.rnr_retry_count < 7
                && x.src == c.a.node
                && x.dst == c.b.node
                && x.dest_qp == c.b.qpn
                && x.rnr_naks_in_a_row > u64::from(c.rnr_retry_count)
        })
    };
    if t.flows.iter().any(rnr_exceeded) {
        f.push("transport.rnr_retry_exceeded");
    }
    if c.rnr_naks > 0 {
        f.push("transport.rnr");
    }
    // An RC connection learned without CM whose responder sent nothing back in the capture (no
    // ACK, NAK or READ response, nor any other packet to the requester's QP) while the requester
    // resent: its requests never got an answer (an out-of-order responder that waits for a hole
    // to fill does not NAK it).
    let flow = |src: &str, dst: &str, qp: u32| {
        t.flows
            .iter()
            .find(|x| x.src == src && x.dst == dst && x.dest_qp == qp && x.counters.packets > 0)
    };
    if t.connections.iter().any(|x| {
        let unanswered = |(s, r): (&crate::truth::End, &crate::truth::End)| {
            flow(&s.node, &r.node, r.qpn).is_some_and(|q| q.counters.retransmitted_packets > 0)
                && flow(&r.node, &s.node, s.qpn).is_none()
        };
        x.transport == "RC"
            && x.learned != "cm"
            && [(&x.a, &x.b), (&x.b, &x.a)].into_iter().any(unanswered)
    }) {
        f.push("transport.no_response");
    }
    if c.naks.invalid_request > 0 {
        f.push("transport.invalid_request");
    }
    if c.naks.invalid_rd_request > 0 {
        f.push("transport.invalid_rd_request");
    }
    if c.naks.remote_access_error > 0 {
        f.push("transport.remote_access_error");
    }
    if c.naks.remote_operational_error > 0 {
        f.push("transport.remote_operational_error");
    }
    // CE marks: answered by CNPs on the reverse path, or not.
    let cnp_pairs: std::collections::BTreeSet<(&str, &str)> = t
        .flows
        .iter()
        .filter(|x| x.counters.cnp > 0)
        .map(|x| (x.src.as_str(), x.dst.as_str()))
        .collect();
    let ce_flows: Vec<_> = t.flows.iter().filter(|x| x.counters.ecn.ce > 0).collect();
    if ce_flows
        .iter()
        .any(|x| cnp_pairs.contains(&(x.dst.as_str(), x.src.as_str())))
    {
        f.push("congestion.ecn");
    }
    if ce_flows
        .iter()
        .any(|x| !cnp_pairs.contains(&(x.dst.as_str(), x.src.as_str())))
    {
        f.push("congestion.ce_without_cnp");
    }
    if t.flows
        .iter()
        .any(|x| x.dest_qp > 1 && x.counters.ecn.not_ect > 0)
    {
        f.push("congestion.not_ect");
    }
    if t.pfc.pause_episodes > 0 {
        f.push("pfc.pause");
    }
    let full = rdmascope_wire::macctl::quanta_to_ns(0xffff, link_bps);
    if t.events
        .pfc_episodes
        .iter()
        .any(|e| e.end_ns - e.start_ns > 2 * full)
    {
        f.push("pfc.storm");
    }
    let paused: std::collections::BTreeSet<u8> =
        t.events.pfc_episodes.iter().map(|e| e.priority).collect();
    if !paused.is_empty() && data_prios.iter().any(|p| !paused.contains(p)) {
        f.push("pfc.priority_mismatch");
    }
    // A mismatch shows when packets of a side differ from what CM agreed or from the other
    // side's (a connection that ends before its data shows none).
    if t.connections.iter().any(|x| {
        let seen = [x.observed_mtu_a_to_b, x.observed_mtu_b_to_a];
        let vs_cm = x
            .cm_path_mtu
            .is_some_and(|m| seen.iter().flatten().any(|&o| o != m));
        vs_cm || matches!(seen, [Some(a), Some(b)] if a != b)
    }) {
        f.push("mtu.mismatch");
    }
    if c.icrc.bad > 0 {
        f.push("icrc.bad");
    }
    // DCB settings from LLDP: a willing sender follows its peer.
    let fixed: std::collections::BTreeSet<&Vec<u8>> = t
        .dcbx
        .iter()
        .filter(|d| !d.willing)
        .map(|d| &d.pfc_enabled)
        .collect();
    if fixed.len() > 1 {
        f.push("dcbx.pfc_mismatch");
    }
    if t.dcbx
        .iter()
        .any(|d| d.roce_priorities.iter().any(|p| !d.pfc_enabled.contains(p)))
    {
        f.push("dcbx.roce_not_lossless");
    }
    let protected: std::collections::BTreeSet<u8> = t
        .dcbx
        .iter()
        .flat_map(|d| d.pfc_enabled.iter().copied())
        .collect();
    if !protected.is_empty() && data_prios.iter().any(|p| !protected.contains(p)) {
        f.push("dcbx.priority_mismatch");
    }
    if t.vcrc.bad > 0 {
        f.push("vcrc.bad");
    }
    if max_flows_one_sport >= 3 {
        f.push("ecmp.single_udp_sport");
    }
    if !t.events.cm_rejects.is_empty() {
        f.push("cm.reject");
    }
    if t.cut_frames > 0 {
        f.push("capture.truncated");
    }
    if c.packets == 0 && t.cut_before_bth == 0 {
        f.push("capture.no_rdma");
    }
    let mut v: Vec<String> = f.into_iter().map(str::to_string).collect();
    v.sort();
    v
}

fn base(a: usize, b: usize, qa: u32, qb: u32, pcp: Option<u8>) -> ConnCfg {
    let mut c = ConnCfg::new(a, b, qa, qb);
    c.pcp = pcp.unwrap_or(3);
    c
}

fn clean(sim: &mut Sim<'_>, n: usize, q: u32, pcp: Option<u8>) {
    let ops = vec![
        OpKind::Write,
        OpKind::Read,
        OpKind::Send,
        OpKind::WriteImm,
        OpKind::SendImm,
    ];
    for (i, (port, mtu)) in [(4420u16, 4096u32), (20049, 1024), (7471, 1024)]
        .into_iter()
        .enumerate()
    {
        let mut c = base(
            n + 2 * i,
            n + 2 * i + 1,
            q + i as u32 * 0x10,
            q + 0x8 + i as u32 * 0x10,
            pcp,
        );
        c.cm = true;
        c.service_port = Some(port);
        c.pmtu = mtu;
        c.b_pmtu = mtu;
        c.ops = ops.clone();
        c.sizes = vec![64, 301, 1024, 4099, 16384, 65536];
        c.messages = 40;
        c.respawn = true;
        c.rate = 0.3;
        c.psn_a = sim.rng().below(1 << 24) as u32;
        c.psn_b = sim.rng().below(1 << 24) as u32;
        c.start_ns = 1_000 * i as u64;
        sim.add_conn(c);
    }
    // A QP whose PSNs wrap past 2^24, set up out of band (no CM).
    let mut w = base(n + 6, n + 7, q + 0x30, q + 0x38, pcp);
    w.psn_a = 0xff_ff00;
    w.ops = vec![OpKind::Write, OpKind::Send];
    w.sizes = vec![1024, 2048];
    w.rate = 0.2;
    sim.add_conn(w);
    sim.add_aux(Aux::Ud {
        a: n + 6,
        b: n,
        qpn_a: q + 0x40,
        qpn_b: q + 0x41,
        qkey: 0x1111_1111,
        every_ns: 20_000,
        start_ns: 3_000,
    });
}

fn lossy(sim: &mut Sim<'_>, n: usize, q: u32, pcp: Option<u8>) {
    let mut c = base(n, n + 1, q, q + 8, pcp);
    c.ops = vec![OpKind::Write, OpKind::Send];
    c.sizes = vec![4096, 16384];
    c.drop_every = 97;
    c.rate = 0.4;
    c.psn_a = sim.rng().below(1 << 24) as u32;
    sim.add_conn(c);
    let mut t = base(n + 2, n + 3, q + 0x10, q + 0x18, pcp);
    t.ops = vec![OpKind::Write];
    t.sizes = vec![8192];
    t.ack_blackout_after_msg = Some(3);
    t.timeout_ns = 4_096 << 6; // local ACK timeout code 6: 262 µs
    t.rate = 0.2;
    t.psn_a = sim.rng().below(1 << 24) as u32;
    sim.add_conn(t);
    // An NVMe-oF target pulling a write's data from its host with READs: one READ response
    // MIDDLE or LAST in 41 is lost, and the target reads again from the missing one.
    let mut r = base(n + 1, n, q + 0x20, q + 0x28, pcp);
    r.ops = vec![OpKind::Read];
    r.sizes = vec![16384, 65536];
    r.pmtu = 4096;
    r.b_pmtu = 4096;
    r.drop_read_every = 41;
    r.cm = true;
    r.service_port = Some(4420);
    r.rate = 0.3;
    r.psn_a = sim.rng().below(1 << 24) as u32;
    r.psn_b = sim.rng().below(1 << 24) as u32;
    r.start_ns = 2_000;
    sim.add_conn(r);
}

/// Three connections across a fabric that routes adaptively: one new packet in 150 takes a
/// longer path (400 ns more) and arrives after the next two or three. The first two receivers
/// do not accept packets out of order, so they NAK and go-back-N resends what had only been
/// late; the third takes them out of order.
fn reorder(sim: &mut Sim<'_>, n: usize, q: u32, pcp: Option<u8>) {
    for i in 0..3u32 {
        let k = n + 2 * i as usize;
        let mut c = base(k, k + 1, q + i * 0x10, q + 0x8 + i * 0x10, pcp);
        c.ops = vec![OpKind::Write, OpKind::Send];
        c.sizes = vec![8192, 32768];
        c.rate = 0.5;
        c.reorder_every = 150;
        c.reorder_ns = 400;
        c.ooo = i == 2;
        c.psn_a = sim.rng().below(1 << 24) as u32;
        sim.add_conn(c);
    }
}

/// Three applications whose responders fail a request fatally, each connection reconnecting
/// with new QPs and failing again: an R_Key the responder invalidated while the requester
/// still used it (remote access error), a SEND longer than the receive buffer posted for it
/// (invalid request: a length error), and a responder that cannot carry out a request for a
/// local reason (remote operational error). Each NAK ends its connection: both QPs go to the
/// error state, and the requests the requester had sent after the failed one go unanswered.
/// A fourth responder's host goes down after three messages: its requester retries seven times
/// after ACK timeouts, then gives up (IBV_WC_RETRY_EXC_ERR); a fifth, on a connection CM set up
/// with a retry count of 3, gives up after three. A sixth receiver never posts receive buffers:
/// its requester gives up at the third RNR NAK, as its REP's RNR retry count of 2 says.
fn errors(sim: &mut Sim<'_>, n: usize, q: u32, pcp: Option<u8>) {
    for (i, (ops, sizes, at, code)) in [
        (vec![OpKind::Write, OpKind::Send], vec![4096, 16384], 40, 2),
        (vec![OpKind::Send], vec![2048, 8192], 25, 1),
        (vec![OpKind::Send, OpKind::Write], vec![1024, 4096], 60, 3),
    ]
    .into_iter()
    .enumerate()
    {
        let k = n + 2 * i;
        let mut c = base(
            k,
            k + 1,
            q + i as u32 * 0x10,
            q + 0x8 + i as u32 * 0x10,
            pcp,
        );
        c.ops = ops;
        c.sizes = sizes;
        c.fatal = Some((at, code));
        c.respawn = true;
        c.rate = 0.3;
        c.psn_a = sim.rng().below(1 << 24) as u32;
        c.start_ns = 500 * i as u64;
        sim.add_conn(c);
    }
    // Responders whose hosts go down: without CM (7 retries), and over a connection CM set up
    // with a retry count of 3 (the REQ says so).
    for (i, cm, retry_cnt) in [(3u32, false, 7), (4, true, 3)] {
        let k = n + 2 * i as usize;
        let mut d = base(k, k + 1, q + i * 0x10, q + 0x8 + i * 0x10, pcp);
        d.cm = cm;
        d.ops = vec![OpKind::Write];
        d.sizes = vec![4096, 8192];
        d.silent_after = Some(3);
        d.retry_cnt = retry_cnt;
        d.timeout_ns = 4_096 << 4; // local ACK timeout code 4: 65.5 µs (a simulation's short time)
        d.rate = 0.2;
        d.psn_a = sim.rng().below(1 << 24) as u32;
        if cm {
            d.psn_b = sim.rng().below(1 << 24) as u32;
        }
        d.start_ns = 500 * u64::from(i);
        sim.add_conn(d);
    }
    // A receiver that never posts receive buffers, on a connection whose REP allows two RNR
    // retries: the third RNR NAK ends it (IBV_WC_RNR_RETRY_EXC_ERR), and it reconnects.
    let mut v = base(n + 10, n + 11, q + 0x50, q + 0x58, pcp);
    v.cm = true;
    v.ops = vec![OpKind::Send];
    v.sizes = vec![2048];
    v.never_ready = true;
    v.rnr_retry = 2;
    v.rnr_timer_code = 1; // 10 µs
    v.respawn = true;
    v.rate = 0.1;
    v.psn_a = sim.rng().below(1 << 24) as u32;
    v.psn_b = sim.rng().below(1 << 24) as u32;
    v.start_ns = 2_500;
    sim.add_conn(v);
}

fn rnr(sim: &mut Sim<'_>, n: usize, q: u32, pcp: Option<u8>) {
    let mut c = base(n, n + 1, q, q + 8, pcp);
    c.ops = vec![OpKind::Send, OpKind::Send, OpKind::Write];
    c.sizes = vec![512, 2048];
    c.rnr_sends = 5;
    c.rnr_timer_code = 14;
    c.rate = 0.3;
    c.psn_a = sim.rng().below(1 << 24) as u32;
    sim.add_conn(c);
}

fn incast(sim: &mut Sim<'_>, n: usize, q: u32, pcp: Option<u8>) {
    for i in 0..8u32 {
        let mut c = base(
            n + 1 + i as usize,
            n,
            q + i * 0x10,
            q + 0x100 + i * 0x10,
            pcp,
        );
        c.ops = vec![OpKind::Write];
        c.sizes = vec![65536];
        c.ce_marking = true;
        c.cnp = true;
        c.rate = 0.2; // 8 × 20 Gb/s into one 100 Gb/s port: 1.6× oversubscribed
        c.window = 128;
        c.psn_a = sim.rng().below(1 << 24) as u32;
        c.start_ns = 200 * u64::from(i);
        sim.add_conn(c);
    }
}

fn pfc_storm(sim: &mut Sim<'_>, n: usize, q: u32, pcp: Option<u8>) {
    let mut c = base(n, n + 1, q, q + 8, pcp);
    c.ops = vec![OpKind::Write];
    c.sizes = vec![4096];
    c.rate = 0.2;
    sim.add_conn(c);
    let switch = [0x02, 0x00, 0x00, 0x00, 0xff, 0x01];
    sim.add_aux(Aux::Pfc {
        src: switch,
        to: n,
        priority: 3,
        start_ns: 20_000,
        episodes: 6,
        refreshes: 4,
        gap_ns: 150_000,
        stuck: true,
    });
    let host = sim.nodes[n + 1].mac;
    sim.add_aux(Aux::Pfc {
        src: host,
        to: n,
        priority: 3,
        start_ns: 60_000,
        episodes: 4,
        refreshes: 1,
        gap_ns: 400_000,
        stuck: false,
    });
}

fn misconfig(sim: &mut Sim<'_>, n: usize, q: u32) {
    let sport = 49152;
    // Data on priority 0 (DSCP 0 / PCP 0), sent Not-ECT, while PFC protects priority 3.
    let mut a = ConnCfg::new(n, n + 1, q, q + 8);
    a.dscp = 0;
    a.pcp = 0;
    a.ecn = 0;
    a.ops = vec![OpKind::Write, OpKind::Send];
    a.sizes = vec![4096];
    a.rate = 0.2;
    a.sport_a = sport;
    a.sport_b = sport;
    sim.add_conn(a);
    sim.add_aux(Aux::Pfc {
        src: [0x02, 0, 0, 0, 0xff, 0x02],
        to: n + 2,
        priority: 3,
        start_ns: 50_000,
        episodes: 2,
        refreshes: 0,
        gap_ns: 2_000_000,
        stuck: false,
    });
    // LLDP: the switch enables PFC on 3 but maps RoCE to 5; the host's DCBX agent is not
    // willing and enables PFC on 4. The data (priority 0) is on neither.
    for (src, to, name, pfc_enable, roce_priority) in [
        ([0x02, 0, 0, 0, 0xff, 0x02], n + 2, "leaf1", 1 << 3, Some(5)),
        (Node::numbered(n as u16).mac, n + 1, "host0", 1 << 4, None),
    ] {
        sim.add_aux(Aux::Lldp {
            src,
            to,
            name,
            pfc_enable,
            willing: false,
            roce_priority,
            start_ns: 20_000,
            every_ns: 100_000,
            count: 3,
        });
    }
    // Two senders into one port: CE marks, but the receiver never answers with a CNP.
    for i in 0..2u32 {
        let mut c = ConnCfg::new(
            n + 3 + i as usize,
            n + 2,
            q + 0x10 + i * 0x10,
            q + 0x18 + i * 0x10,
        );
        c.ops = vec![OpKind::Write];
        c.sizes = vec![65536];
        c.ce_marking = true;
        c.cnp = false;
        c.rate = 0.7;
        c.sport_a = sport;
        c.sport_b = sport;
        sim.add_conn(c);
    }
    // CM says path MTU 4096; the responder's READ responses use 1024.
    let mut m = ConnCfg::new(n + 5, n + 6, q + 0x40, q + 0x48);
    m.cm = true;
    m.pmtu = 4096;
    m.b_pmtu = 1024;
    m.ops = vec![OpKind::Read, OpKind::Write];
    m.sizes = vec![8192, 16384];
    m.rate = 0.2;
    m.sport_a = sport;
    m.sport_b = sport;
    sim.add_conn(m);
    // A connect the server rejects.
    let mut r = ConnCfg::new(n + 7, n + 8, q + 0x50, q + 0x58);
    r.cm = true;
    r.reject = Some(28);
    r.service_port = Some(4420);
    r.sport_a = sport;
    r.sport_b = sport;
    r.start_ns = 30_000;
    sim.add_conn(r);
}

fn ib(sim: &mut Sim<'_>, n: usize, q: u32) {
    for (i, grh) in [false, false, true].into_iter().enumerate() {
        let mut c = ConnCfg::new(
            n + 2 * i,
            n + 2 * i + 1,
            q + i as u32 * 0x10,
            q + 8 + i as u32 * 0x10,
        );
        c.fabric = Fabric::Ib { grh };
        c.cm = i == 0;
        c.pmtu = 2048;
        c.b_pmtu = 2048;
        c.ops = vec![OpKind::Write, OpKind::Read, OpKind::Send];
        c.sizes = vec![256, 2048, 8192];
        c.messages = if c.cm { 50 } else { u64::MAX };
        c.respawn = c.cm;
        c.rate = 0.3;
        c.pcp = 0;
        c.psn_a = sim.rng().below(1 << 24) as u32;
        c.psn_b = sim.rng().below(1 << 24) as u32;
        sim.add_conn(c);
    }
}
