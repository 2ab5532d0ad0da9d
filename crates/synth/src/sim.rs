//! The discrete-event simulation behind `gen`.
//!
//! Requesters packetise messages at the path MTU and pace them at their rate; every frame goes
//! through the egress queue of its destination's switch port, which is where the capture point
//! sits: frames are written when they leave that queue, so timestamps are serialised at the link
//! rate and queueing is real (CE marks follow the queue depth, RED-style). Responders run the
//! IBTA RC receive rules: in-order acceptance, one NAK (PSN sequence error) per gap, duplicate
//! detection with a repeated ACK, RNR NAKs, READ responses on the requester's PSNs. Requesters
//! go back N on a NAK, wait out RNR timers, retransmit on timeouts, and (DCQCN) slow down on CNPs.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use rdmascope_wire::bth::{psn_diff, BthRepr};
use rdmascope_wire::ext::{Aeth, Deth, ExtHeaders, Reth};
use rdmascope_wire::grh::GrhRepr;
use rdmascope_wire::lldp::PfcConfig;
use rdmascope_wire::lrh::LrhRepr;
use rdmascope_wire::macctl::{quanta_to_ns, MacControl};
use rdmascope_wire::mad::{self, CmMessage, MadHeader};
use rdmascope_wire::opcode::{OpInfo, Operation, Position};

use crate::frames::{self, Node, Transport, L3};
use crate::truth::{self, Cause, Counters, PsnClass, PsnSeen, Truth, Where};

/// Where frames go.
pub trait Sink {
    /// One frame; `iface` 0 carries Ethernet, 1 carries ERF records (native IB).
    fn frame(&mut self, iface: u32, ts_ns: u64, orig_len: u32, data: &[u8]) -> std::io::Result<()>;
}

/// SplitMix64: small, fast, and the same on every platform.
#[derive(Debug, Clone)]
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed ^ 0x9e37_79b9_7f4a_7c15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

/// Options common to every scenario.
#[derive(Debug, Clone)]
pub struct SimOpts {
    pub link_bps: u64,
    pub snaplen: usize,
    pub ipv6: bool,
    pub vlan: Option<(u16, u8)>,
    pub corrupt_rate: f64,
    pub max_frames: u64,
    pub max_ns: u64,
    pub seed: u64,
    pub start_ns: u64,
}

/// An operation a requester performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Write,
    WriteImm,
    Send,
    SendImm,
    Read,
}

/// The transport of a simulated connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fabric {
    RoceV2,
    /// Native IB, LRH only (`grh: false`) or routed with a GRH.
    Ib {
        grh: bool,
    },
}

/// How one connection behaves.
#[derive(Debug, Clone)]
pub struct ConnCfg {
    pub a: usize,
    pub b: usize,
    pub qpn_a: u32,
    pub qpn_b: u32,
    pub psn_a: u32,
    pub psn_b: u32,
    pub pmtu: u32,
    /// The MTU B uses for READ responses (differs from `pmtu` in the misconfiguration).
    pub b_pmtu: u32,
    pub fabric: Fabric,
    pub ops: Vec<OpKind>,
    pub sizes: Vec<u32>,
    pub messages: u64,
    /// Start again with new QPs when done.
    pub respawn: bool,
    pub rate: f64,
    pub window: u32,
    pub dscp: u8,
    pub ecn: u8,
    pub pcp: u8,
    pub sport_a: u16,
    pub sport_b: u16,
    pub cm: bool,
    pub reject: Option<u16>,
    pub service_port: Option<u16>,
    /// Drop every n-th new request packet (0: never), alternately before and after the capture.
    pub drop_every: u64,
    /// Drop every n-th READ response MIDDLE or LAST packet of a READ the responder executes
    /// for the first time (0: never), alternately before and after the capture. The requester
    /// finds the gap when the next response comes (a LAST's: the next READ's FIRST), discards
    /// responses until the missing one, and reads again from it, as ConnectX and rxe
    /// requesters do; the responder executes a duplicate READ request again (IBTA §9.7,
    /// duplicate requests).
    pub drop_read_every: u64,
    /// Lose every response for a while after message n (forces a timeout).
    pub ack_blackout_after_msg: Option<u64>,
    pub timeout_ns: u64,
    /// The first n SENDs meet a receiver that is not ready.
    pub rnr_sends: u32,
    pub rnr_timer_code: u8,
    pub ce_marking: bool,
    pub cnp: bool,
    pub start_ns: u64,
    /// Delay every n-th new request packet (0: never) by `reorder_ns` on its way to the
    /// capture point, as a longer path of an adaptively routed fabric would, so the packets
    /// sent after it overtake it; the receiver does not accept packets out of order.
    pub reorder_every: u64,
    pub reorder_ns: u64,
    /// The receiver takes request packets out of order (as NICs on adaptively routed fabrics
    /// do): one that runs ahead of the expected PSN waits for the gap to fill, with no NAK.
    pub ooo: bool,
    /// Message n (counted from 0) meets a fatal responder error: the responder NAKs its first
    /// packet with this NAK code (1 invalid request, 2 remote access error, 3 remote
    /// operational error; IBTA §9.7.5.1.1) and its QP goes to the error state, dropping every
    /// later request; the requester's QP goes to the error state on the NAK and sends no more
    /// (a `respawn` connection then starts again with new QPs, and fails again).
    pub fatal: Option<(u64, u8)>,
    /// Retransmission bursts after ACK timeouts with no response between them before the
    /// requester gives up (IBTA retry_cnt, 0–7): the next timeout puts its QP in the error
    /// state (IBV_WC_RETRY_EXC_ERR), and it sends no more.
    pub retry_cnt: u32,
    /// Once it has completed n messages, the responder answers nothing (its host went down).
    pub silent_after: Option<u64>,
    /// RNR NAKs in a row the requester waits out before it gives up (IBTA rnr_retry, 0–6; 7
    /// retries forever): the next one puts its QP in the error state
    /// (IBV_WC_RNR_RETRY_EXC_ERR). The CM REP carries it.
    pub rnr_retry: u32,
    /// The receiver never has a receive buffer posted: every SEND meets an RNR NAK.
    pub never_ready: bool,
}

impl ConnCfg {
    pub fn new(a: usize, b: usize, qpn_a: u32, qpn_b: u32) -> Self {
        Self {
            a,
            b,
            qpn_a,
            qpn_b,
            psn_a: 0,
            psn_b: 0,
            pmtu: 1024,
            b_pmtu: 1024,
            fabric: Fabric::RoceV2,
            ops: vec![OpKind::Write, OpKind::Send, OpKind::Read],
            sizes: vec![64, 1024, 4096, 8192],
            messages: u64::MAX,
            respawn: false,
            rate: 1.0,
            window: 64,
            dscp: 26,
            ecn: 2,
            pcp: 3,
            sport_a: 0xc000 | (qpn_a as u16 & 0x3fff),
            sport_b: 0xc000 | (qpn_b as u16 & 0x3fff),
            cm: false,
            reject: None,
            service_port: None,
            drop_every: 0,
            drop_read_every: 0,
            ack_blackout_after_msg: None,
            timeout_ns: 1_048_576, // local ACK timeout code 8: 4.096 µs × 2^8
            rnr_sends: 0,
            rnr_timer_code: 14,
            ce_marking: false,
            cnp: true,
            start_ns: 0,
            reorder_every: 0,
            reorder_ns: 0,
            ooo: false,
            fatal: None,
            retry_cnt: 7,
            silent_after: None,
            rnr_retry: 7,
            never_ready: false,
        }
    }
}

/// A request packet, kept until acknowledged.
#[derive(Debug, Clone, Copy)]
struct Pkt {
    psn: u32,
    opcode: u8,
    payload: u32,
    reth: Option<Reth>,
    imm: Option<u32>,
    ackreq: bool,
    /// PSNs consumed (READ: one per response packet).
    n_psn: u32,
    msg_end: bool,
    read_len: u32,
}

#[derive(Debug, Clone, Copy)]
enum Resp {
    Ack {
        psn: u32,
        msn: u32,
    },
    Nak {
        psn: u32,
        msn: u32,
        code: u8,
    },
    Rnr {
        psn: u32,
        msn: u32,
    },
    ReadData {
        psn: u32,
        msn: u32,
        pos: Position,
        len: u32,
    },
    Cnp,
}

#[derive(Debug, Clone, Copy)]
enum Cm {
    Req,
    Rep,
    Rtu,
    Rej(u16),
    Dreq,
    Drep,
}

#[derive(Debug)]
enum Deliver {
    Req(usize, Pkt),
    Resp(usize, Resp),
    Cm(usize, Cm),
}

/// Facts about an emitted frame for the truth tallies.
#[derive(Debug, Clone)]
struct Tally {
    /// (source node, destination node, fabric tag, destination QP); names are made at the end.
    flow: FlowKey,
    opcode: u8,
    psn: u32,
    payload: u32,
    ecn: Option<u8>,
    req: Option<(u32, u32)>,
    ack: Option<(u32, u8)>,
    retx: Option<Cause>,
    /// Offset of the first payload byte in the frame (for `--corrupt-rate`).
    payload_at: usize,
    /// Offset of the first byte after the BTH: a frame cut before it is no RDMA packet to
    /// `analyze`.
    bth_end: usize,
    /// The bytes a capture needs to tell the frame is RoCE or IB: cut shorter, it is none.
    known_at: usize,
    /// The priority of RDMA data (RoCEv2, not a CNP, QP above 1).
    data_prio: Option<u8>,
    /// A requester's UDP source port (RoCEv2 RC/UC/XRC requests).
    sport: Option<u16>,
    /// The network delayed it (see [`ConnCfg::reorder_every`]).
    late: bool,
    /// A response (ACK, NAK, RNR NAK, READ response): the requester's flow it answers.
    answers: Option<FlowKey>,
    /// The first packet of a go-back-N pass (the requester resends from its oldest request).
    pass_start: bool,
}

#[derive(Debug)]
struct Out {
    iface: u32,
    data: Vec<u8>,
    orig_len: u32,
    tally: Option<Tally>,
    pfc: Option<([u8; 6], MacControl)>,
    /// An LLDP frame's sender, counted in the truth once written.
    lldp: Option<Box<truth::DcbTruth>>,
    then: Option<Deliver>,
    drop_after: bool,
}

#[derive(Debug)]
enum Ev {
    Tx(usize),
    Emit(Box<Out>),
    Arrive(Deliver),
    Timeout(usize),
    Aux(usize),
    /// A frame the network delayed, reaching the egress queue now.
    Late(Box<Queued>),
}

/// A frame on its way to the egress port towards node `to` (see [`Sim::send`]).
#[derive(Debug)]
struct Queued {
    to: usize,
    iface: u32,
    data: Vec<u8>,
    orig_len: u32,
    tally: Option<Tally>,
    then: Option<Deliver>,
    drop: Option<Where>,
}

/// An auxiliary traffic source (PFC, UD datagrams).
#[derive(Debug, Clone)]
pub enum Aux {
    /// PFC XOFF/refresh/XON cycles on `priority` from `src`, `episodes` times; the last one
    /// never releases when `stuck`.
    Pfc {
        src: [u8; 6],
        to: usize,
        priority: u8,
        start_ns: u64,
        episodes: u32,
        refreshes: u32,
        gap_ns: u64,
        stuck: bool,
    },
    /// LLDP from `src` named `name` advertising PFC on `pfc_enable` (willing or not) and RoCE
    /// mapped to `roce_priority`, `count` times every `every_ns` from `start_ns`.
    Lldp {
        src: [u8; 6],
        to: usize,
        name: &'static str,
        pfc_enable: u8,
        willing: bool,
        roce_priority: Option<u8>,
        start_ns: u64,
        every_ns: u64,
        count: u64,
    },
    /// UD SEND Only datagrams every `every_ns`.
    Ud {
        a: usize,
        b: usize,
        qpn_a: u32,
        qpn_b: u32,
        qkey: u32,
        every_ns: u64,
        start_ns: u64,
    },
}

#[derive(Debug, Clone, Default)]
struct AuxState {
    step: u64,
    psn: u32,
}

#[derive(Debug)]
struct Conn {
    cfg: ConnCfg,
    next_psn: u32,
    msg_left: u32,
    msg_kind: OpKind,
    msg_len: u32,
    msg_off: u32,
    msg_index: u64,
    outstanding: std::collections::VecDeque<Pkt>,
    resend: Option<(usize, Cause)>,
    /// The next resend starts a go-back-N pass (one that goes on after an ACK retired the
    /// requests it had resent does not).
    pass_begins: bool,
    tx_pending: bool,
    blocked: bool,
    paused_until: u64,
    /// The ACK timer: armed, its deadline, and whether a Timeout event is queued. One queued
    /// event per connection re-queues itself at the current deadline, so progress (every ACK)
    /// moves the deadline without adding events to the heap.
    timer_armed: bool,
    timer_deadline: u64,
    timer_queued: bool,
    rate: f64,
    target: f64,
    alpha: f64,
    last_rate_ns: u64,
    new_pkts: u64,
    drops: u64,
    reorder_pkts: u64,
    finished: bool,
    /// The front READ's first PSN and the next response PSN expected for it.
    read_next: Option<(u32, u32)>,
    /// A READ read again from this PSN: responses are discarded until it comes.
    rereading: Option<u32>,
    // responder
    epsn: u32,
    msn: u32,
    nak_sent: bool,
    rnr_left: u32,
    rnr_discard: bool,
    /// READ response MIDDLE and LAST packets of first executions, and those dropped.
    read_mid_last: u64,
    read_drops: u64,
    /// Packets ahead of `epsn` an out-of-order receiver holds, by PSN.
    ooo_held: BTreeMap<u32, Pkt>,
    /// The responder's QP is in the error state (`ConnCfg::fatal`).
    resp_error: bool,
    /// Timeout retries since the last response (see `ConnCfg::retry_cnt`), and RNR NAKs since
    /// the last other response (see `ConnCfg::rnr_retry`).
    retries: u32,
    rnr_retries: u32,
    blackout_until: u64,
    blackout_done: bool,
    last_cnp: u64,
    ud_psn: u32,
    comm_a: u32,
    comm_b: u32,
}

pub type FlowKey = (u16, u16, u8, u32);

fn fabric_tag(f: Fabric) -> u8 {
    match f {
        Fabric::RoceV2 => 0,
        Fabric::Ib { grh: false } => 1,
        Fabric::Ib { grh: true } => 2,
    }
}

fn fabric_of_tag(t: u8) -> Fabric {
    match t {
        0 => Fabric::RoceV2,
        1 => Fabric::Ib { grh: false },
        _ => Fabric::Ib { grh: true },
    }
}

/// Per-flow truth state.
#[derive(Debug, Default)]
struct FlowState {
    counters: Counters,
    psns: PsnSeen,
    last_ack: Option<u32>,
    transport: String,
    in_retx: bool,
    /// PSNs of reordered packets the requester has not resent (yet).
    late: Vec<u32>,
    /// Timeout retransmission bursts since the last response, and the most of them.
    timeouts_in_row: u64,
    timeouts_in_a_row: u64,
    /// The most `timeouts_in_row` since the flow's last new request: at its end, the retries
    /// its requester may have run out of (it sends nothing new after the last one).
    retries_since_new: u64,
    /// RNR NAKs since the last other response, and the most of them.
    rnr_in_row: u64,
    rnr_naks_in_a_row: u64,
    /// The largest payload of its FIRST and MIDDLE packets: the MTU its sender packetises
    /// with, as the capture shows it (0: none seen).
    max_fm_payload: u32,
    /// An answer to its requests (ACK, NAK, READ response) was captured.
    answered: bool,
    /// READ response PSNs seen (each once), and the payload of first copies.
    response_psns: PsnSeen,
    first_copy_payload: u64,
}

/// The simulation.
pub struct Sim<'s> {
    pub opts: SimOpts,
    pub nodes: Vec<Node>,
    conns: Vec<Conn>,
    aux: Vec<(Aux, AuxState)>,
    heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    events: Vec<Option<Ev>>,
    free: Vec<usize>,
    seq: u64,
    link_free: Vec<u64>,
    rng: Rng,
    sink: &'s mut dyn Sink,
    flows: std::collections::HashMap<FlowKey, FlowState>,
    pool: Vec<Vec<u8>>,
    pfc_state: BTreeMap<(String, u8), (u64, u64, u64, u64)>,
    pub truth: Truth,
    /// Priorities RDMA data used (PCP when tagged, else DSCP / 8), CNPs and MADs excluded.
    pub data_priorities: std::collections::BTreeSet<u8>,
    /// UDP source port → RoCEv2 request flows using it.
    pub sport_flows: BTreeMap<u16, std::collections::BTreeSet<FlowKey>>,
    /// (source, destination, fabric tag) of the RDMA frames captured so far.
    heard: std::collections::HashSet<(u16, u16, u8)>,
    stopped: bool,
    io_error: Option<std::io::Error>,
    /// The delay of the frame [`Sim::send`] queues next (see [`ConnCfg::reorder_every`]).
    late_ns: u64,
    /// The request [`Sim::send_transport`] sends next starts a go-back-N pass.
    pass_start: bool,
}

const HOP_NS: u64 = 600;
const ACK_DELAY_NS: u64 = 1_500;
const READ_DELAY_NS: u64 = 2_000;
const CNP_INTERVAL_NS: u64 = 50_000;

fn ecn_of(fabric: Fabric) -> bool {
    fabric == Fabric::RoceV2
}

impl<'s> Sim<'s> {
    pub fn new(opts: SimOpts, nodes: Vec<Node>, sink: &'s mut dyn Sink) -> Self {
        let n = nodes.len();
        let rng = Rng::new(opts.seed);
        Self {
            opts,
            nodes,
            conns: Vec::new(),
            aux: Vec::new(),
            heap: BinaryHeap::new(),
            events: Vec::new(),
            free: Vec::new(),
            seq: 0,
            link_free: vec![0; n],
            rng,
            sink,
            flows: Default::default(),
            pool: Vec::new(),
            pfc_state: BTreeMap::new(),
            truth: Truth {
                schema: "rdmascope.truth.v1",
                ..Default::default()
            },
            data_priorities: Default::default(),
            sport_flows: Default::default(),
            heard: Default::default(),
            stopped: false,
            io_error: None,
            late_ns: 0,
            pass_start: false,
        }
    }

    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    fn push(&mut self, ts: u64, ev: Ev) {
        let i = match self.free.pop() {
            Some(i) => {
                self.events[i] = Some(ev);
                i
            }
            None => {
                self.events.push(Some(ev));
                self.events.len() - 1
            }
        };
        self.seq += 1;
        self.heap.push(Reverse((ts, self.seq, i)));
    }

    /// Adds a connection; it starts at `cfg.start_ns` (with a CM exchange when `cfg.cm`).
    pub fn add_conn(&mut self, cfg: ConnCfg) {
        let id = self.conns.len();
        let start = self.opts.start_ns + cfg.start_ns;
        let comm_a = self.rng.next_u64() as u32;
        let comm_b = self.rng.next_u64() as u32;
        let ud_psn = self.rng.below(1 << 24) as u32;
        self.conns.push(Conn::new(cfg, comm_a, comm_b, ud_psn));
        let c = &self.conns[id].cfg;
        let name = |n: usize, s: &Self| s.node_name(n, c.fabric);
        // Whether the capture keeps enough of a REQ (`analyze` learns a connection from its
        // REQ, so it reads the REP's fields only then).
        let req_read = c.cm && self.mad_kept(c.fabric, 164);
        self.truth.connections.push(truth::ConnTruth {
            a: truth::End {
                node: name(c.a, self),
                qpn: c.qpn_a,
                start_psn: c.psn_a,
            },
            b: truth::End {
                node: name(c.b, self),
                qpn: c.qpn_b,
                start_psn: c.psn_b,
            },
            path_mtu: c.pmtu,
            b_path_mtu: c.b_pmtu,
            cm_path_mtu: req_read.then_some(c.pmtu),
            observed_mtu_a_to_b: None,
            observed_mtu_b_to_a: None,
            transport: "RC".into(),
            learned: if c.cm { "cm" } else { "inferred" }.into(),
            application: c.service_port.and_then(app_name).map(str::to_string),
            rejected: c.reject,
            in_capture: false,
            retry_count: if req_read && (1..7).contains(&c.retry_cnt) {
                c.retry_cnt
            } else {
                7
            },
            rnr_retry_count: if req_read { c.rnr_retry.min(7) } else { 7 },
        });
        if self.conns[id].cfg.cm {
            self.push(start, Ev::Arrive(Deliver::Cm(id, Cm::Rej(0))));
        } else {
            self.push(start, Ev::Tx(id));
            self.conns[id].tx_pending = true;
        }
    }

    pub fn add_aux(&mut self, a: Aux) {
        let start = self.opts.start_ns
            + match &a {
                Aux::Pfc { start_ns, .. }
                | Aux::Ud { start_ns, .. }
                | Aux::Lldp { start_ns, .. } => *start_ns,
            };
        let st = AuxState {
            step: 0,
            psn: self.rng.below(1 << 24) as u32,
        };
        self.aux.push((a, st));
        self.push(start, Ev::Aux(self.aux.len() - 1));
    }

    /// Where the BTH starts in a frame on `fabric` as the capture holds it: after Ethernet,
    /// the tag, IP and UDP, or after the ERF record's header, the LRH and the GRH.
    fn bth_at(&self, fabric: Fabric) -> usize {
        match fabric {
            Fabric::RoceV2 => {
                14 + 4 * usize::from(self.opts.vlan.is_some())
                    + if self.opts.ipv6 { 40 } else { 20 }
                    + 8
            }
            Fabric::Ib { grh } => rdmascope_wire::link::ErfRepr::LEN + 8 + 40 * usize::from(grh),
        }
    }

    /// Whether the capture keeps the first `len` bytes of a MAD (after the BTH and DETH) on
    /// `fabric` (CM messages are decoded only when the fields they need are all there).
    fn mad_kept(&self, fabric: Fabric, len: usize) -> bool {
        self.opts.snaplen >= self.bth_at(fabric) + 12 + 8 + len
    }

    fn node_name(&self, n: usize, fabric: Fabric) -> String {
        let nd = &self.nodes[n];
        match fabric {
            Fabric::Ib { grh: false } => format!("lid:{}", nd.lid),
            Fabric::Ib { grh: true } => std::net::Ipv6Addr::from(nd.gid(true)).to_string(),
            Fabric::RoceV2 if self.opts.ipv6 => std::net::Ipv6Addr::from(nd.ip6).to_string(),
            Fabric::RoceV2 => std::net::Ipv4Addr::from(nd.ip4).to_string(),
        }
    }

    fn wire_ns(&self, len: u32) -> u64 {
        // Preamble + SFD + IFG (20) and FCS (4) occupy the link too.
        (u64::from(len) + 24) * 8 * 1_000_000_000 / self.opts.link_bps.max(1)
    }

    /// Runs until the frame or time limit, or until nothing is left to do.
    pub fn run(&mut self) -> std::io::Result<()> {
        while let Some(Reverse((ts, _, i))) = self.heap.pop() {
            if self.stopped || ts > self.opts.start_ns + self.opts.max_ns {
                break;
            }
            let Some(ev) = self.events[i].take() else {
                continue;
            };
            self.free.push(i);
            match ev {
                Ev::Tx(c) => self.tx(ts, c),
                Ev::Emit(o) => self.emit(ts, *o),
                Ev::Arrive(Deliver::Req(c, p)) => self.rx_req(ts, c, p),
                Ev::Arrive(Deliver::Resp(c, r)) => self.rx_resp(ts, c, r),
                Ev::Arrive(Deliver::Cm(c, m)) => self.cm(ts, c, m),
                Ev::Timeout(c) => self.timeout(ts, c),
                Ev::Aux(a) => self.aux_step(ts, a),
                Ev::Late(q) => self.send(ts, *q),
            }
            if let Some(e) = self.io_error.take() {
                return Err(e);
            }
        }
        self.finish();
        Ok(())
    }

    /// Queues frame `q` at the egress port towards its node; its `drop` loses it before or
    /// after the capture point.
    fn send(&mut self, at: u64, q: Queued) {
        if q.drop == Some(Where::BeforeCapture) {
            return;
        }
        let late = std::mem::take(&mut self.late_ns);
        if late > 0 {
            self.push(at + late, Ev::Late(Box::new(q)));
            return;
        }
        let Queued {
            to,
            iface,
            data,
            orig_len,
            tally,
            then,
            drop,
        } = q;
        let egress = (at + HOP_NS).max(self.link_free[to]);
        self.link_free[to] = egress + self.wire_ns(orig_len);
        let out = Out {
            iface,
            data,
            orig_len,
            tally,
            pfc: None,
            lldp: None,
            then,
            drop_after: drop == Some(Where::AfterCapture),
        };
        self.push(egress, Ev::Emit(Box::new(out)));
    }

    /// Queue depth (bytes) at the egress towards `to`, at `now`.
    fn backlog(&self, now: u64, to: usize) -> u64 {
        self.link_free[to].saturating_sub(now + HOP_NS) * self.opts.link_bps / 8_000_000_000
    }

    fn emit(&mut self, ts: u64, mut o: Out) {
        if self.truth.frames >= self.opts.max_frames {
            self.stopped = true;
            return;
        }
        let truncated = (o.data.len() as u32) < o.orig_len;
        let mut corrupted = false;
        // CM MADs (QP 1) are left whole: a lost one would stall its exchange until the CM's
        // response timeout (4.3 s as `gen` sets it), longer than any capture it makes.
        if let Some(t) = &o.tally {
            // A READ request has no payload: the low byte of its RETH's virtual address.
            let read_req = t.opcode == 0x0c;
            if !truncated
                && self.opts.corrupt_rate > 0.0
                && (t.payload >= 8 || read_req)
                && t.flow.3 > 1
                && self.rng.chance(self.opts.corrupt_rate)
            {
                let at = if read_req {
                    t.payload_at.wrapping_sub(9)
                } else {
                    t.payload_at
                };
                if let Some(b) = o.data.get_mut(at) {
                    *b ^= 0x10;
                    corrupted = true;
                    self.note_drop(t.flow, t.psn, t.opcode, Where::AfterCapture, ts);
                }
            }
        }
        // An IB frame's ERF header carries the time of its capture record.
        if o.iface == 1 {
            frames::stamp_erf(&mut o.data, ts);
        }
        if let Err(e) = self.sink.frame(o.iface, ts, o.orig_len, &o.data) {
            self.io_error = Some(e);
            self.stopped = true;
            return;
        }
        if self.truth.frames == 0 {
            self.truth.first_ts_ns = ts;
        }
        self.truth.frames += 1;
        self.truth.cut_frames += u64::from(truncated);
        self.truth.last_ts_ns = ts;
        // Native IB frames end in a VCRC, which covers the corrupted byte too.
        if o.iface == 1 {
            let v = &mut self.truth.vcrc;
            if truncated {
                v.truncated += 1;
            } else if corrupted {
                v.bad += 1;
            } else {
                v.ok += 1;
            }
        }
        if let Some(t) = o.tally.take() {
            if o.data.len() >= t.bth_end {
                let aeth_cut = t.ack.is_some() && o.data.len() < t.bth_end + 4;
                self.tally(ts, &t, o.orig_len, truncated, corrupted, aeth_cut);
            } else if o.data.len() >= t.known_at {
                self.truth.cut_before_bth += 1;
            }
        }
        if let Some((src, m)) = o.pfc {
            self.tally_pfc(ts, src, m);
        }
        if let Some(d) = o.lldp.take() {
            let dcbx = &mut self.truth.dcbx;
            match dcbx.iter_mut().find(|x| x.src_mac == d.src_mac) {
                Some(x) => x.frames += 1,
                None => {
                    dcbx.push(truth::DcbTruth { frames: 1, ..*d });
                    dcbx.sort_by(|a, b| a.src_mac.cmp(&b.src_mac));
                }
            }
        }
        if let Some(Deliver::Cm(c, Cm::Rej(reason))) = o.then {
            self.captured_rej(c, reason);
        }
        if let Some(d) = o.then.take() {
            // A frame damaged before the capture point is damaged at its receiver too, whose
            // HCA drops it on the bad ICRC (VCRC on IB): lost after the capture point.
            if !o.drop_after && !corrupted {
                self.push(ts + self.wire_ns(o.orig_len) + HOP_NS, Ev::Arrive(d));
            }
        }
        if self.pool.len() < 4096 {
            self.pool.push(std::mem::take(&mut o.data));
        }
    }

    /// A REJ of connection `c` is in the capture, so `analyze` reads it even when the capture
    /// ends before it arrives: when the snaplen keeps the 36 bytes of its MAD up to the reason.
    fn captured_rej(&mut self, c: usize, reason: u16) {
        let cfg = &self.conns[c].cfg;
        if self.mad_kept(cfg.fabric, 36) {
            let name = self.node_name(cfg.a, cfg.fabric);
            self.truth.events.cm_rejects.push((name, reason));
        }
    }

    /// Counts a captured frame into the truth. `aeth_cut`: an ACK or NAK the snaplen cut
    /// before the end of its AETH, which `analyze` can tell from no other answer.
    fn tally(
        &mut self,
        ts: u64,
        t: &Tally,
        orig_len: u32,
        truncated: bool,
        corrupted: bool,
        aeth_cut: bool,
    ) {
        let info = OpInfo::of(t.opcode);
        // The flow's answers come cut before the end of their AETH (all alike: one snaplen),
        // so what started a retransmission is unknown to `analyze`: no timeouts.
        let blind = self.opts.snaplen < self.bth_at(fabric_of_tag(t.flow.2)) + 12 + 4;
        let (src, dst, tag, _) = t.flow;
        // Before a flow's first answer, `analyze` tells a timeout when the responder's node
        // sends to the requester's in the capture and no answer so far was cut (asked of
        // timeouts' resends only).
        let heard = t.retx == Some(Cause::Timeout)
            && self.truth.cut_before_aeth == 0
            && self.heard.contains(&(dst, src, tag));
        if aeth_cut {
            self.truth.cut_before_aeth += 1;
        }
        // An answer with a bad ICRC on a flow with good ones: dropped by the requester's HCA,
        // left out by `analyze`, so no retry count starts over.
        let dropped = corrupted
            && self
                .flows
                .get(&t.flow)
                .is_some_and(|f| f.counters.icrc.ok > 0);
        if let Some(r) = t
            .answers
            .filter(|_| !dropped)
            .and_then(|k| self.flows.get_mut(&k))
        {
            r.answered = true;
            r.timeouts_in_row = 0;
            if !aeth_cut && t.ack.is_some_and(|(_, syn)| syn >> 5 & 3 == 1) {
                r.rnr_in_row += 1;
                r.rnr_naks_in_a_row = r.rnr_naks_in_a_row.max(r.rnr_in_row);
            } else {
                r.rnr_in_row = 0;
            }
        }
        if let Some(p) = t.data_prio {
            self.data_priorities.insert(p);
        }
        if let Some(s) = t.sport {
            self.sport_flows.entry(s).or_default().insert(t.flow);
        }
        let f = self.flows.entry(t.flow).or_default();
        let shown = if f.answered { !blind } else { heard };
        if f.transport.is_empty() {
            // The flow's first frame: its node pair is heard from now on.
            self.heard.insert((src, dst, tag));
            f.transport = info.transport.name().to_string();
        }
        // `analyze` leaves a READ response with a bad ICRC out (its requester drops it).
        let bad_response = corrupted && info.op.is_response();
        if matches!(info.op.position(), Position::First | Position::Middle) && !bad_response {
            f.max_fm_payload = f.max_fm_payload.max(t.payload);
        }
        let c = &mut f.counters;
        c.packets += 1;
        c.bytes += u64::from(orig_len);
        c.payload_bytes += u64::from(t.payload);
        *c.opcodes.entry(info.name.to_string()).or_default() += 1;
        match t.ecn {
            Some(0) => c.ecn.not_ect += 1,
            Some(1) => c.ecn.ect1 += 1,
            Some(2) => c.ecn.ect0 += 1,
            Some(_) => c.ecn.ce += 1,
            None => {}
        }
        if truncated {
            c.icrc.truncated += 1;
        } else if corrupted {
            c.icrc.bad += 1;
        } else {
            c.icrc.ok += 1;
        }
        if info.op == Operation::Cnp {
            c.cnp += 1;
            self.truth.events.cnps += 1;
        }
        let copy = match t.req {
            Some((psn, _)) => f.psns.seen(psn),
            // A READ response `analyze` leaves out (a bad ICRC on a flow with good ones) is
            // nothing; one sent again whose PSN came before is retransmitted, one that first
            // comes below the highest (lost before the capture point) gap-filled.
            None if bad_response && f.counters.icrc.ok > 0 => true,
            None if info.op.is_response() && info.op != Operation::Acknowledge => {
                match f.response_psns.see_response(t.psn) {
                    PsnClass::New => false,
                    PsnClass::GapFilled => {
                        f.counters.gap_filled_packets += 1;
                        false
                    }
                    PsnClass::Retransmitted => {
                        f.counters.retransmitted_packets += 1;
                        true
                    }
                }
            }
            None => info.op == Operation::Cnp,
        };
        if !copy {
            f.first_copy_payload += u64::from(t.payload);
        }
        if t.ecn == Some(3) {
            self.truth.events.ce_marks += 1;
        }
        if let Some((psn, n)) = t.req {
            let class = f.psns.see(psn, n);
            if class == PsnClass::New {
                f.in_retx = false;
                f.retries_since_new = 0;
            } else if class == PsnClass::GapFilled && t.late {
                // Reordered, not lost, and not a retransmission.
                f.counters.gap_filled_packets += 1;
                f.counters.reordered_packets += 1;
                // The newest 64 are kept: a resend comes within a pass or two of its late
                // packet.
                if f.late.len() == 64 {
                    f.late.remove(0);
                }
                f.late.push(psn);
            } else {
                if class == PsnClass::Retransmitted {
                    f.counters.retransmitted_packets += 1;
                    if let Some(i) = f.late.iter().position(|&p| p == psn) {
                        f.late.remove(i);
                        f.counters.reordered_resent += 1;
                    }
                } else {
                    f.counters.gap_filled_packets += 1;
                }
                if !f.in_retx {
                    f.in_retx = true;
                    if t.retx == Some(Cause::Timeout) && shown {
                        f.counters.timeouts += 1;
                    }
                }
            }
            if t.pass_start {
                if t.retx != Some(Cause::Timeout) {
                    f.timeouts_in_row = 0;
                } else if shown {
                    f.timeouts_in_row += 1;
                    f.timeouts_in_a_row = f.timeouts_in_a_row.max(f.timeouts_in_row);
                    f.retries_since_new = f.retries_since_new.max(f.timeouts_in_row);
                }
            }
            if let Some(cause) = t.retx {
                let flow = self.flow_name(t.flow);
                self.truth.events.retransmissions.push(truth::RetxEv {
                    flow,
                    psn,
                    cause,
                    ts_ns: ts,
                });
            }
        }
        if let Some((psn, syn)) = t.ack.filter(|_| !aeth_cut) {
            let f = self.flows.get_mut(&t.flow).expect("flow exists");
            match syn >> 5 & 3 {
                0 => {
                    if f.last_ack.is_some_and(|l| psn_diff(psn, l) <= 0) {
                        f.counters.duplicate_acks += 1;
                    }
                    if f.last_ack.is_none_or(|l| psn_diff(psn, l) > 0) {
                        f.last_ack = Some(psn);
                    }
                }
                1 => {
                    f.counters.rnr_naks += 1;
                    let flow = format!(
                        "{}>{}/0x{:06x}",
                        self.node_name(t.flow.0 as usize, fabric_of_tag(t.flow.2)),
                        self.node_name(t.flow.1 as usize, fabric_of_tag(t.flow.2)),
                        t.flow.3
                    );
                    let us = rdmascope_wire::ext::rnr_timer_us(syn & 0x1f);
                    self.truth.events.rnr_naks.push(truth::RnrEv {
                        flow,
                        psn,
                        timer_us: us,
                        ts_ns: ts,
                    });
                }
                3 => {
                    let n = &mut f.counters.naks;
                    match syn & 0x1f {
                        0 => n.psn_sequence_error += 1,
                        1 => n.invalid_request += 1,
                        2 => n.remote_access_error += 1,
                        3 => n.remote_operational_error += 1,
                        _ => n.invalid_rd_request += 1,
                    }
                    *self
                        .truth
                        .events
                        .naks
                        .entry(rdmascope_wire::ext::nak_name(syn & 0x1f).to_string())
                        .or_default() += 1;
                }
                _ => {}
            }
        }
    }

    /// Lists packet `psn` (`opcode`) of flow `k`, lost at `ts` on the side `at` of the capture
    /// point, among the truth's drops.
    fn note_drop(&mut self, k: FlowKey, psn: u32, opcode: u8, at: Where, ts: u64) {
        let drop = truth::DropEv {
            flow: self.flow_name(k),
            psn,
            opcode: OpInfo::of(opcode).name.to_string(),
            at,
            ts_ns: ts,
        };
        self.truth.events.drops.push(drop);
    }

    fn flow_name(&self, k: FlowKey) -> String {
        let f = fabric_of_tag(k.2);
        format!(
            "{}>{}/0x{:06x}",
            self.node_name(k.0 as usize, f),
            self.node_name(k.1 as usize, f),
            k.3
        )
    }

    /// PFC episode accounting (the `analyze` rule): an episode starts at a non-zero quanta
    /// frame, each further one extends it to max(end, ts + quanta time), and it ends at a
    /// zero-quanta frame or at its expiry.
    /// Queues a link-level frame (PFC, LLDP) of `len` bytes sent at `now` towards `to`.
    fn link_frame(
        &mut self,
        now: u64,
        to: usize,
        mut buf: Vec<u8>,
        len: usize,
        pfc: Option<([u8; 6], MacControl)>,
        lldp: Option<Box<truth::DcbTruth>>,
    ) {
        let egress = (now + HOP_NS).max(self.link_free[to]);
        self.link_free[to] = egress + self.wire_ns(len as u32);
        buf.truncate(self.opts.snaplen.min(buf.len()));
        let out = Out {
            iface: 0,
            data: buf,
            orig_len: len as u32,
            tally: None,
            pfc,
            lldp,
            then: None,
            drop_after: false,
        };
        self.push(egress, Ev::Emit(Box::new(out)));
    }

    fn tally_pfc(&mut self, ts: u64, src: [u8; 6], m: MacControl) {
        let mac = mac_name(src);
        let prios: Vec<(u8, u16)> = match m {
            MacControl::Pfc { enable, quanta } => (0..8u8)
                .filter(|p| enable >> p & 1 == 1)
                .map(|p| (p, quanta[p as usize]))
                .collect(),
            MacControl::Pause { quanta } => vec![(255, quanta)],
            MacControl::Other { .. } => vec![],
        };
        self.truth.pfc.frames += 1;
        if prios.iter().any(|p| p.1 > 0) {
            self.truth.pfc.xoff_frames += 1;
        } else {
            self.truth.pfc.xon_frames += 1;
        }
        for (p, q) in prios {
            // (frames, episode start or 0, episode end, pause ns total)
            let st = self
                .pfc_state
                .entry((mac.clone(), p))
                .or_insert((0, 0, 0, 0));
            st.0 += 1;
            let active = st.2 > 0 && ts < st.2;
            if st.2 > 0 && !active {
                // The previous episode expired before this frame.
                close_episode(&mut self.truth, &mac, p, st, st.2);
            }
            if q > 0 {
                let end = ts + quanta_to_ns(q, self.opts.link_bps);
                if st.2 == 0 {
                    st.1 = ts;
                    st.2 = end;
                } else {
                    st.2 = st.2.max(end);
                }
            } else if st.2 > 0 {
                close_episode(&mut self.truth, &mac, p, st, ts);
            }
        }
    }

    fn finish(&mut self) {
        let keys: Vec<_> = self.pfc_state.keys().cloned().collect();
        for k in keys {
            let mut st = self.pfc_state[&k];
            if st.2 > 0 {
                let end = st.2;
                close_episode(&mut self.truth, &k.0, k.1, &mut st, end);
            }
            self.truth.pfc.by_port.push(truth::PfcPort {
                src_mac: k.0.clone(),
                priority: k.1,
                frames: st.0,
                pause_ns: st.3,
            });
        }
        let mut totals = Counters::default();
        let mut flows: Vec<_> = std::mem::take(&mut self.flows).into_iter().collect();
        flows.sort_by_key(|(k, _)| *k);
        let mtus: BTreeMap<(String, String, u32), u32> = flows
            .iter()
            .filter(|(_, f)| f.max_fm_payload > 0)
            .map(|&((src, dst, tag, qp), ref f)| {
                let fab = fabric_of_tag(tag);
                let name = |n: u16| self.node_name(n as usize, fab);
                ((name(src), name(dst), qp), f.max_fm_payload)
            })
            .collect();
        for c in &mut self.truth.connections {
            let mtu = |a: &truth::End, b: &truth::End| {
                mtus.get(&(a.node.clone(), b.node.clone(), b.qpn)).copied()
            };
            c.observed_mtu_a_to_b = mtu(&c.a, &c.b);
            c.observed_mtu_b_to_a = mtu(&c.b, &c.a);
        }
        for ((src, dst, tag, qp), mut f) in flows {
            f.counters.missing_packets = f.psns.missing();
            totals.add(&f.counters);
            let fab = fabric_of_tag(tag);
            let (src, dst) = (
                self.node_name(src as usize, fab),
                self.node_name(dst as usize, fab),
            );
            self.truth.flows.push(truth::FlowTruth {
                src,
                dst,
                dest_qp: qp,
                transport: f.transport,
                timeouts_in_a_row: f.timeouts_in_a_row,
                stuck_retries: f.retries_since_new,
                rnr_naks_in_a_row: f.rnr_naks_in_a_row,
                first_copy_payload_bytes: f.first_copy_payload,
                counters: f.counters,
            });
        }
        self.truth.totals = totals;
        self.truth.link_bps = self.opts.link_bps;
        self.truth.snaplen = self.opts.snaplen as u32;
        self.truth.seed = self.opts.seed;
    }

    // ---------------------------------------------------------------- framing

    fn l3(&self, c: &ConnCfg, from_b: bool, ecn: u8, dscp: u8) -> L3 {
        L3 {
            ipv6: self.opts.ipv6,
            vlan: self.opts.vlan.map(|(vid, _)| (vid, c.pcp)),
            dscp,
            ecn,
            udp_sport: if from_b { c.sport_b } else { c.sport_a },
            ip_id: 0,
        }
    }

    /// Builds and queues one transport packet of connection `c` (`from_b`: B to A).
    #[allow(clippy::too_many_arguments)]
    fn send_transport(
        &mut self,
        at: u64,
        c: usize,
        from_b: bool,
        t: &Transport<'_>,
        ecn: u8,
        dscp: u8,
        req: Option<(u32, u32)>,
        retx: Option<Cause>,
        then: Option<Deliver>,
        drop: Option<Where>,
    ) {
        let cfg = &self.conns[c].cfg;
        let (src, dst) = if from_b {
            (cfg.b, cfg.a)
        } else {
            (cfg.a, cfg.b)
        };
        let fabric = cfg.fabric;
        let mut buf = self.pool.pop().unwrap_or_default();
        let ext_len = t.ext.buffer_len();
        let payload_at = self.bth_at(fabric) + 12 + ext_len;
        let (orig, ecn_tally) = match fabric {
            Fabric::RoceV2 => {
                let l3 = self.l3(cfg, from_b, ecn, dscp);
                (
                    frames::roce_v2(
                        &mut buf,
                        &self.nodes[src],
                        &self.nodes[dst],
                        &l3,
                        t,
                        self.opts.snaplen,
                    ),
                    Some(ecn),
                )
            }
            Fabric::Ib { grh } => {
                let (s, d) = (&self.nodes[src], &self.nodes[dst]);
                let lrh = LrhRepr {
                    vl: 0,
                    lver: 0,
                    sl: cfg.pcp,
                    lnh: 2,
                    dlid: d.lid,
                    pktlen: 0,
                    slid: s.lid,
                };
                let g = grh.then_some(GrhRepr {
                    ipver: 6,
                    tclass: 0,
                    flowlabel: 0,
                    paylen: 0,
                    nxthdr: 0x1b,
                    hoplmt: 64,
                    sgid: s.gid(true),
                    dgid: d.gid(true),
                });
                (frames::ib_erf(&mut buf, lrh, g, t, self.opts.snaplen), None)
            }
        };
        let info = OpInfo::of(t.bth.opcode);
        let ecn_tally = if info.op == Operation::Cnp {
            None
        } else {
            ecn_tally
        };
        let ack = (info.op == Operation::Acknowledge)
            .then(|| t.ext.aeth.map(|a| (t.bth.psn, a.syndrome)))
            .flatten();
        let flow = (src as u16, dst as u16, fabric_tag(fabric), t.bth.destqp);
        // RDMA data's priority, and a requester's UDP source port, once the frame is captured.
        let mut data_prio = None;
        let mut sport = None;
        if fabric == Fabric::RoceV2 && info.op != Operation::Cnp && t.bth.destqp > 1 {
            data_prio = Some(match self.opts.vlan {
                Some(_) => cfg.pcp,
                None => dscp >> 3,
            });
            if !from_b && !info.op.is_response() && info.transport != rdmascope_wire::Transport::Ud
            {
                sport = Some(cfg.sport_a);
            }
        }
        let tally = Tally {
            flow,
            opcode: t.bth.opcode,
            psn: t.bth.psn,
            payload: t.payload_len as u32,
            ecn: ecn_tally,
            req,
            ack,
            retx,
            payload_at,
            bth_end: payload_at - ext_len,
            known_at: match fabric {
                // The UDP header's end, where the destination port says RoCEv2.
                Fabric::RoceV2 => self.bth_at(fabric),
                // The ERF header and the LRH.
                Fabric::Ib { .. } => rdmascope_wire::link::ErfRepr::LEN + 8,
            },
            data_prio,
            sport,
            late: self.late_ns > 0,
            answers: (from_b && info.op.is_response()).then_some((
                dst as u16,
                src as u16,
                fabric_tag(fabric),
                cfg.qpn_b,
            )),
            pass_start: std::mem::take(&mut self.pass_start),
        };
        if let Some(w) = drop {
            self.note_drop(flow, t.bth.psn, t.bth.opcode, w, at);
        }
        let iface = u32::from(matches!(fabric, Fabric::Ib { .. }));
        let q = Queued {
            to: dst,
            iface,
            data: buf,
            orig_len: orig as u32,
            tally: Some(tally),
            then,
            drop,
        };
        self.send(at, q);
    }

    fn bth(&self, opcode: u8, destqp: u32, psn: u32, ackreq: bool, padcnt: u8) -> BthRepr {
        BthRepr {
            opcode,
            pkey: 0xffff,
            destqp,
            psn: psn & 0xff_ffff,
            ackreq,
            padcnt,
            ..Default::default()
        }
    }

    // ---------------------------------------------------------------- requester

    fn next_new_packet(&mut self, c: usize) -> Option<Pkt> {
        let conn = &mut self.conns[c];
        if conn.msg_left == 0 {
            if conn.msg_index >= conn.cfg.messages {
                return None;
            }
            let k = conn.msg_index as usize;
            conn.msg_kind = conn.cfg.ops[k % conn.cfg.ops.len()];
            let r = (self.rng.next_u64() % conn.cfg.sizes.len() as u64) as usize;
            conn.msg_len = conn.cfg.sizes[r];
            conn.msg_off = 0;
            conn.msg_index += 1;
            let mtu = if conn.msg_kind == OpKind::Read {
                conn.cfg.b_pmtu
            } else {
                conn.cfg.pmtu
            };
            conn.msg_left = if conn.msg_kind == OpKind::Read {
                1
            } else {
                conn.msg_len.div_ceil(mtu).max(1)
            };
        }
        let mtu = conn.cfg.pmtu;
        let kind = conn.msg_kind;
        let first = conn.msg_off == 0;
        let last = conn.msg_left == 1;
        let len = conn.msg_len;
        let psn = conn.next_psn;
        let va =
            0x7f00_0000_0000 + u64::from(conn.cfg.qpn_a) * 0x1_0000_0000 + conn.msg_index * 0x10000;
        let (opcode, payload, reth, imm, n_psn, read_len) = if kind == OpKind::Read {
            let n = len.div_ceil(conn.cfg.b_pmtu).max(1);
            (
                0x0c,
                0,
                Some(Reth {
                    va,
                    rkey: 0x1000 + conn.cfg.qpn_b,
                    dma_len: len,
                }),
                None,
                n,
                len,
            )
        } else {
            let payload = if last { len - conn.msg_off } else { mtu };
            let (f, m, l, o, l_imm, o_imm) = match kind {
                OpKind::Send | OpKind::SendImm => (0x00, 0x01, 0x02, 0x04, 0x03, 0x05),
                _ => (0x06, 0x07, 0x08, 0x0a, 0x09, 0x0b),
            };
            let with_imm = matches!(kind, OpKind::SendImm | OpKind::WriteImm);
            let op = match (first, last, with_imm) {
                (true, true, false) => o,
                (true, true, true) => o_imm,
                (true, false, _) => f,
                (false, false, _) => m,
                (false, true, false) => l,
                (false, true, true) => l_imm,
            };
            let is_write = matches!(kind, OpKind::Write | OpKind::WriteImm);
            let reth = (is_write && first).then_some(Reth {
                va,
                rkey: 0x1000 + conn.cfg.qpn_b,
                dma_len: len,
            });
            let imm = (with_imm && last).then_some(conn.msg_index as u32);
            (op, payload, reth, imm, 1, 0)
        };
        conn.msg_off += payload;
        conn.msg_left -= 1;
        conn.next_psn = (conn.next_psn + n_psn) & 0xff_ffff;
        Some(Pkt {
            psn,
            opcode,
            payload,
            reth,
            imm,
            ackreq: last,
            n_psn,
            msg_end: last,
            read_len,
        })
    }

    fn outstanding_psns(&self, c: usize) -> u32 {
        self.conns[c].outstanding.iter().map(|p| p.n_psn).sum()
    }

    fn schedule_tx(&mut self, at: u64, c: usize) {
        if !self.conns[c].tx_pending {
            self.conns[c].tx_pending = true;
            self.push(at, Ev::Tx(c));
        }
    }

    fn tx(&mut self, now: u64, c: usize) {
        self.conns[c].tx_pending = false;
        if self.conns[c].finished {
            return;
        }
        if self.conns[c].paused_until > now {
            let t = self.conns[c].paused_until;
            self.schedule_tx(t, c);
            return;
        }
        // DCQCN rate recovery: halve the distance to the target every 55 µs without a CNP.
        {
            let conn = &mut self.conns[c];
            if conn.rate < conn.target && now.saturating_sub(conn.last_rate_ns) > 55_000 {
                conn.rate = (conn.rate + conn.target) / 2.0;
                conn.last_rate_ns = now;
            }
        }
        if !self.conns[c].cfg.cm {
            if let Some(t) = self.truth.connections.get_mut(c) {
                t.in_capture = true;
            }
        }
        let (pkt, cause) = if let Some((i, cause)) = self.conns[c].resend {
            let p = self.conns[c].outstanding[i];
            self.conns[c].resend =
                (i + 1 < self.conns[c].outstanding.len()).then_some((i + 1, cause));
            self.pass_start = std::mem::take(&mut self.conns[c].pass_begins);
            (p, Some(cause))
        } else if self.outstanding_psns(c) < self.conns[c].cfg.window {
            match self.next_new_packet(c) {
                Some(p) => {
                    self.conns[c].outstanding.push_back(p);
                    (p, None)
                }
                None => {
                    if self.conns[c].outstanding.is_empty() {
                        self.teardown(now, c);
                    }
                    return;
                }
            }
        } else {
            self.conns[c].blocked = true;
            return;
        };
        let cfg = &self.conns[c].cfg;
        let (drop_every, ce_marking, cfg_ecn, fabric, dst_node, qpn_b, dscp, timeout_ns) = (
            cfg.drop_every,
            cfg.ce_marking,
            cfg.ecn,
            cfg.fabric,
            cfg.b,
            cfg.qpn_b,
            cfg.dscp,
            cfg.timeout_ns,
        );
        // Loss injection on first transmissions (never on READ requests).
        let mut drop = None;
        if cause.is_none() && pkt.opcode != 0x0c && drop_every > 0 {
            self.conns[c].new_pkts += 1;
            if self.conns[c].new_pkts % drop_every == 0 {
                self.conns[c].drops += 1;
                drop = Some(Where::of_nth(self.conns[c].drops));
            }
        }
        let (reorder_every, reorder_ns) = (
            self.conns[c].cfg.reorder_every,
            self.conns[c].cfg.reorder_ns,
        );
        if cause.is_none() && drop.is_none() && reorder_every > 0 {
            self.conns[c].reorder_pkts += 1;
            if self.conns[c].reorder_pkts % reorder_every == 0 {
                self.late_ns = reorder_ns;
            }
        }
        let mut ecn = cfg_ecn;
        if ce_marking && ecn != 0 && ecn_of(fabric) {
            let q = self.backlog(now, dst_node);
            let p = if q < 10_000 {
                0.0
            } else if q > 100_000 {
                1.0
            } else {
                0.2 * (q - 10_000) as f64 / 90_000.0
            };
            if p > 0.0 && self.rng.chance(p) {
                ecn = 3;
            }
        }
        let padcnt = ((4 - pkt.payload % 4) % 4) as u8;
        let ext = ExtHeaders {
            reth: pkt.reth,
            immdt: pkt.imm,
            ..Default::default()
        };
        let t = Transport {
            bth: self.bth(pkt.opcode, qpn_b, pkt.psn, pkt.ackreq, padcnt),
            ext,
            payload_len: pkt.payload as usize,
            fill: pkt.psn as u8,
            payload: None,
        };
        let mut p2 = pkt;
        p2.read_len = if ecn == 3 {
            p2.read_len | 0x8000_0000
        } else {
            p2.read_len
        };
        self.send_transport(
            now,
            c,
            false,
            &t,
            ecn,
            dscp,
            Some((pkt.psn, pkt.n_psn)),
            cause,
            Some(Deliver::Req(c, p2)),
            drop,
        );
        if !self.conns[c].timer_armed {
            self.arm_timer(c, now + timeout_ns);
        }
        let wire = self.wire_ns(t.payload_len as u32 + 80);
        let rate = self.conns[c].rate.max(0.01);
        self.schedule_tx(now + (wire as f64 / rate) as u64, c);
    }

    fn retire(&mut self, c: usize, upto: u32) -> usize {
        let conn = &mut self.conns[c];
        let mut n = 0;
        while let Some(p) = conn.outstanding.front() {
            let last = (p.psn + p.n_psn - 1) & 0xff_ffff;
            if psn_diff(last, upto) <= 0 {
                conn.outstanding.pop_front();
                n += 1;
            } else {
                break;
            }
        }
        if n > 0 {
            // A pass under way goes on with the first request not acknowledged (go-back-N
            // resends every outstanding request, IBTA §9.7.5.1).
            conn.resend = conn
                .resend
                .filter(|_| !conn.outstanding.is_empty())
                .map(|(i, cause)| (i.saturating_sub(n), cause));
            conn.timer_armed = false;
        }
        n
    }

    fn arm_timer(&mut self, c: usize, deadline: u64) {
        let conn = &mut self.conns[c];
        conn.timer_armed = true;
        conn.timer_deadline = deadline;
        if !conn.timer_queued {
            conn.timer_queued = true;
            self.push(deadline, Ev::Timeout(c));
        }
    }

    fn rearm(&mut self, now: u64, c: usize) {
        let conn = &mut self.conns[c];
        if !conn.outstanding.is_empty() && !conn.timer_armed {
            // The timer runs from when the requester may send again (after an RNR wait).
            let t = conn.cfg.timeout_ns + conn.paused_until.saturating_sub(now);
            self.arm_timer(c, now + t);
        }
    }

    fn go_back(&mut self, now: u64, c: usize, cause: Cause, at: u64) {
        let conn = &mut self.conns[c];
        if !conn.outstanding.is_empty() {
            conn.resend = Some((0, cause));
            conn.pass_begins = true;
        }
        conn.paused_until = at;
        conn.timer_armed = false;
        self.schedule_tx(at.max(now), c);
    }

    fn rx_resp(&mut self, now: u64, c: usize, r: Resp) {
        if let Some(x) = self.conns[c].rereading {
            // After a READ response gap, responses out of sequence are discarded until the
            // missing one comes; a CNP is no response. A PSN sequence NAK beyond the READ sends
            // the requester back to that READ, which it still reads (as Linux rxe retries from
            // a READ not yet answered when a NAK or ACK beyond it comes): the NAK does not
            // complete a READ whose responses are missing.
            match r {
                Resp::ReadData { psn, .. } if psn == x => self.conns[c].rereading = None,
                Resp::Cnp => {}
                Resp::Nak { psn, code: 0, .. } if psn_diff(psn, x) > 0 => {
                    let conn = &mut self.conns[c];
                    (conn.retries, conn.rnr_retries) = (0, 0);
                    self.go_back(now, c, Cause::Nak, now);
                    return;
                }
                _ => return,
            }
        }
        if !matches!(r, Resp::Cnp) {
            self.conns[c].retries = 0;
        }
        if !matches!(r, Resp::Cnp | Resp::Rnr { .. }) {
            self.conns[c].rnr_retries = 0;
        }
        match r {
            Resp::Ack { psn, .. } => {
                self.retire(c, psn);
            }
            Resp::ReadData { psn, pos, .. } => self.read_data(now, c, psn, pos),
            Resp::Nak { psn, code: 0, .. } => {
                self.retire(c, (psn + 0xff_ffff) & 0xff_ffff);
                self.go_back(now, c, Cause::Nak, now);
            }
            Resp::Nak { .. } => {
                // A fatal NAK: the requester's QP goes to the error state and flushes the rest.
                let conn = &mut self.conns[c];
                conn.outstanding.clear();
                conn.resend = None;
                conn.timer_armed = false;
                self.teardown(now, c);
                return;
            }
            Resp::Rnr { psn, .. } => {
                self.retire(c, (psn + 0xff_ffff) & 0xff_ffff);
                let conn = &mut self.conns[c];
                if conn.cfg.rnr_retry < 7 && conn.rnr_retries >= conn.cfg.rnr_retry {
                    // RNR retries exhausted: the requester's QP goes to the error state.
                    conn.outstanding.clear();
                    conn.resend = None;
                    conn.timer_armed = false;
                    self.teardown(now, c);
                    return;
                }
                conn.rnr_retries += 1;
                let wait = u64::from(rdmascope_wire::ext::rnr_timer_us(
                    self.conns[c].cfg.rnr_timer_code,
                )) * 1000;
                self.go_back(now, c, Cause::Rnr, now + wait);
            }
            Resp::Cnp => {
                let conn = &mut self.conns[c];
                conn.target = conn.rate;
                conn.rate *= 1.0 - conn.alpha / 2.0;
                conn.alpha = (1.0 - 1.0 / 16.0) * conn.alpha + 1.0 / 16.0;
                conn.last_rate_ns = now;
                return;
            }
        }
        self.rearm(now, c);
        if self.conns[c].blocked || self.conns[c].resend.is_some() {
            self.conns[c].blocked = false;
            self.schedule_tx(now, c);
        }
        if self.conns[c].outstanding.is_empty()
            && self.conns[c].msg_index >= self.conns[c].cfg.messages
            && self.conns[c].msg_left == 0
        {
            self.teardown(now, c);
        }
    }

    /// READ response `psn` at the requester: the next of the oldest outstanding READ, a copy
    /// of one taken (ignored), or one beyond a missing response: then the READ is asked again
    /// from the missing one ([`Sim::read_again`]).
    fn read_data(&mut self, now: u64, c: usize, psn: u32, pos: Position) {
        let conn = &mut self.conns[c];
        let Some(r) = conn.outstanding.iter().find(|p| p.opcode == 0x0c).copied() else {
            return;
        };
        let expect = match conn.read_next {
            Some((first, next)) if first == r.psn => next,
            _ => r.psn,
        };
        let d = psn_diff(psn, expect);
        if d < 0 {
            return;
        }
        if d == 0 {
            conn.read_next = Some((r.psn, (psn + 1) & 0xff_ffff));
            if matches!(pos, Position::Last | Position::Only) {
                self.retire(c, psn);
            }
            return;
        }
        self.read_again(now, c, expect);
    }

    /// Takes every READ response before `expect` as done and asks the oldest outstanding
    /// READ again from `expect` (its RETH's address and length advanced past the data
    /// taken); go-back-N resends it and what follows.
    fn read_again(&mut self, now: u64, c: usize, expect: u32) {
        self.retire(c, (expect + 0xff_ffff) & 0xff_ffff);
        let conn = &mut self.conns[c];
        let mtu = conn.cfg.b_pmtu;
        if let Some(f) = conn.outstanding.front_mut().filter(|f| f.opcode == 0x0c) {
            let taken = psn_diff(expect, f.psn).max(0) as u32;
            f.psn = expect;
            f.n_psn -= taken;
            f.read_len -= taken * mtu;
            if let Some(reth) = &mut f.reth {
                reth.va += u64::from(taken * mtu);
                reth.dma_len -= taken * mtu;
            }
        }
        conn.read_next = None;
        conn.rereading = Some(expect);
        self.go_back(now, c, Cause::ReadResponseGap, now);
    }

    fn timeout(&mut self, now: u64, c: usize) {
        let conn = &mut self.conns[c];
        conn.timer_queued = false;
        if !conn.timer_armed || conn.outstanding.is_empty() || conn.finished {
            return;
        }
        if now < conn.timer_deadline {
            // Progress moved the deadline since this event was queued.
            let d = conn.timer_deadline;
            conn.timer_queued = true;
            self.push(d, Ev::Timeout(c));
            return;
        }
        conn.timer_armed = false;
        if conn.retries >= conn.cfg.retry_cnt {
            // Retries exhausted: the requester's QP goes to the error state.
            conn.outstanding.clear();
            conn.resend = None;
            self.teardown(now, c);
            return;
        }
        conn.retries += 1;
        self.go_back(now, c, Cause::Timeout, now);
    }

    // ---------------------------------------------------------------- responder

    fn respond(&mut self, now: u64, c: usize, r: Resp) {
        self.answer(now, c, r, None);
    }

    /// Sends response `r`, lost where `lost` says (as in an ACK blackout: before the capture).
    fn answer(&mut self, now: u64, c: usize, r: Resp, lost: Option<Where>) {
        let cfg = &self.conns[c].cfg;
        let (cfg_ecn, cfg_dscp, rnr_code, qpn_a) =
            (cfg.ecn, cfg.dscp, cfg.rnr_timer_code, cfg.qpn_a);
        let (opcode, psn, aeth, payload, ecn, dscp) = match r {
            Resp::Ack { psn, msn } => (
                0x11,
                psn,
                Some(Aeth {
                    syndrome: 0x1f,
                    msn,
                }),
                0,
                cfg_ecn,
                cfg_dscp,
            ),
            Resp::Nak { psn, msn, code } => (
                0x11,
                psn,
                Some(Aeth {
                    syndrome: 0x60 | code,
                    msn,
                }),
                0,
                cfg_ecn,
                cfg_dscp,
            ),
            Resp::Rnr { psn, msn } => (
                0x11,
                psn,
                Some(Aeth {
                    syndrome: 0x20 | rnr_code,
                    msn,
                }),
                0,
                cfg_ecn,
                cfg_dscp,
            ),
            Resp::ReadData { psn, msn, pos, len } => {
                let (op, aeth) = match pos {
                    Position::First => (0x0d, true),
                    Position::Middle => (0x0e, false),
                    Position::Last => (0x0f, true),
                    Position::Only => (0x10, true),
                };
                (
                    op,
                    psn,
                    aeth.then_some(Aeth {
                        syndrome: 0x1f,
                        msn,
                    }),
                    len,
                    cfg_ecn,
                    cfg_dscp,
                )
            }
            Resp::Cnp => (0x81, 0, None, 16, 2, 48),
        };
        let blackout =
            self.conns[c].blackout_until > now && !matches!(r, Resp::Cnp | Resp::ReadData { .. });
        let drop = lost.or(blackout.then_some(Where::BeforeCapture));
        let zeros = [0u8; 16];
        let mut bth = self.bth(opcode, qpn_a, psn, false, ((4 - payload % 4) % 4) as u8);
        if opcode == 0x81 {
            bth.becn = true;
            bth.padcnt = 0;
        }
        let t = Transport {
            bth,
            ext: ExtHeaders {
                aeth,
                ..Default::default()
            },
            payload_len: payload as usize,
            fill: psn as u8,
            payload: (opcode == 0x81).then_some(&zeros[..]),
        };
        let delay = match r {
            Resp::ReadData { .. } => READ_DELAY_NS,
            Resp::Cnp => 0,
            _ => ACK_DELAY_NS,
        };
        self.send_transport(
            now + delay,
            c,
            true,
            &t,
            ecn,
            dscp,
            None,
            None,
            Some(Deliver::Resp(c, r)),
            drop,
        );
    }

    fn rx_req(&mut self, now: u64, c: usize, mut p: Pkt) {
        let ce = p.read_len & 0x8000_0000 != 0;
        p.read_len &= 0x7fff_ffff;
        let conn = &self.conns[c];
        if conn.resp_error
            || conn
                .cfg
                .silent_after
                .is_some_and(|n| u64::from(conn.msn) >= n)
        {
            return;
        }
        if ce
            && self.conns[c].cfg.cnp
            && now.saturating_sub(self.conns[c].last_cnp) >= CNP_INTERVAL_NS
        {
            self.conns[c].last_cnp = now;
            self.respond(now, c, Resp::Cnp);
        }
        let conn = &mut self.conns[c];
        let d = psn_diff(p.psn, conn.epsn);
        if d > 0 && conn.cfg.ooo && d < i32::try_from(conn.cfg.window).unwrap_or(i32::MAX) {
            conn.ooo_held.insert(p.psn, p);
            return;
        }
        if d > 0 {
            if !conn.nak_sent && !conn.rnr_discard {
                conn.nak_sent = true;
                let (psn, msn) = (conn.epsn, conn.msn);
                self.respond(now, c, Resp::Nak { psn, msn, code: 0 });
            }
            return;
        }
        if d < 0 {
            if p.opcode == 0x0c {
                // A duplicate READ request is executed again (IBTA §9.7, duplicate requests).
                let msn = conn.msn;
                self.execute_read(now, c, &p, msn, false);
            } else if p.ackreq {
                let (psn, msn) = ((conn.epsn + 0xff_ffff) & 0xff_ffff, conn.msn);
                self.respond(now, c, Resp::Ack { psn, msn });
            }
            return;
        }
        let is_send_start = matches!(p.opcode, 0x00 | 0x04 | 0x05);
        let starts_message = matches!(p.opcode, 0x00 | 0x04..=0x06 | 0x0a..=0x0c);
        if let Some((_, code)) = conn
            .cfg
            .fatal
            .filter(|&(n, _)| starts_message && u64::from(conn.msn) == n)
        {
            conn.resp_error = true;
            let (psn, msn) = (p.psn, conn.msn);
            self.respond(now, c, Resp::Nak { psn, msn, code });
            return;
        }
        let never_ready = is_send_start && conn.cfg.never_ready;
        if conn.rnr_discard && !never_ready {
            conn.rnr_discard = false;
        } else if is_send_start && (conn.rnr_left > 0 || never_ready) {
            conn.rnr_left = conn.rnr_left.saturating_sub(1);
            conn.rnr_discard = true;
            let (psn, msn) = (p.psn, conn.msn);
            self.respond(now, c, Resp::Rnr { psn, msn });
            return;
        }
        conn.epsn = (conn.epsn + p.n_psn) & 0xff_ffff;
        conn.nak_sent = false;
        if p.msg_end {
            conn.msn = (conn.msn + 1) & 0xff_ffff;
            if conn
                .cfg
                .ack_blackout_after_msg
                .is_some_and(|m| conn.msn as u64 == m)
                && !conn.blackout_done
            {
                conn.blackout_done = true;
                conn.blackout_until = now + conn.cfg.timeout_ns * 2;
            }
        }
        let msn = conn.msn;
        if p.opcode == 0x0c {
            self.execute_read(now, c, &p, msn, true);
        } else if p.ackreq {
            self.respond(now, c, Resp::Ack { psn: p.psn, msn });
        }
        // An out-of-order receiver takes what it held once the gap before it is filled.
        let conn = &mut self.conns[c];
        if let Some(q) = conn.ooo_held.remove(&conn.epsn) {
            self.rx_req(now, c, q);
        }
    }

    /// The responses to READ request `p`; of a `first` execution, every
    /// [`ConnCfg::drop_read_every`]-th MIDDLE or LAST response is lost, alternately before and
    /// after the capture.
    fn execute_read(&mut self, now: u64, c: usize, p: &Pkt, msn: u32, first: bool) {
        let mtu = self.conns[c].cfg.b_pmtu;
        let every = self.conns[c].cfg.drop_read_every;
        let n = p.n_psn;
        for i in 0..n {
            let pos = match (i == 0, i + 1 == n) {
                (true, true) => Position::Only,
                (true, false) => Position::First,
                (false, false) => Position::Middle,
                (false, true) => Position::Last,
            };
            let len = if i + 1 == n {
                p.read_len - mtu * (n - 1)
            } else {
                mtu
            };
            let mut lost = None;
            if first && every > 0 && matches!(pos, Position::Middle | Position::Last) {
                let conn = &mut self.conns[c];
                conn.read_mid_last += 1;
                if conn.read_mid_last % every == 0 {
                    conn.read_drops += 1;
                    lost = Some(Where::of_nth(conn.read_drops));
                }
            }
            let psn = (p.psn + i) & 0xff_ffff;
            self.answer(now, c, Resp::ReadData { psn, msn, pos, len }, lost);
        }
    }

    // ---------------------------------------------------------------- CM

    fn mad_frame(&mut self, at: u64, c: usize, from_b: bool, msg: CmMessage) {
        let cfg = self.conns[c].cfg.clone();
        let mut m = [0u8; mad::MAD_LEN];
        MadHeader {
            base_version: 1,
            mgmt_class: mad::class::CM,
            class_version: 2,
            method: 0x03,
            status: 0,
            class_specific: 0,
            tid: u64::from(self.conns[c].comm_a) << 8 | u64::from(cfg.qpn_a & 0xff),
            attr_id: msg.attr_id(),
            attr_mod: 0,
        }
        .emit(&mut m);
        msg.emit(&mut m);
        let psn = self.conns[c].ud_psn;
        self.conns[c].ud_psn = (psn + 1) & 0xff_ffff;
        let t = Transport {
            bth: self.bth(0x64, 1, psn, false, 0),
            ext: ExtHeaders {
                deth: Some(Deth {
                    qkey: Deth::GSI_QKEY,
                    src_qp: 1,
                }),
                ..Default::default()
            },
            payload_len: mad::MAD_LEN,
            fill: 0,
            payload: Some(&m),
        };
        let step = match msg {
            CmMessage::Req(_) => Cm::Req,
            CmMessage::Rep(_) => Cm::Rep,
            CmMessage::Rtu(_) => Cm::Rtu,
            CmMessage::Rej(r) => Cm::Rej(r.reason),
            CmMessage::Dreq(_) => Cm::Dreq,
            _ => Cm::Drep,
        };
        self.send_transport(
            at,
            c,
            from_b,
            &t,
            cfg.ecn,
            cfg.dscp,
            None,
            None,
            Some(Deliver::Cm(c, step)),
            None,
        );
    }

    /// CM state machine; `Cm::Rej(0)` as an arrival starts the exchange.
    fn cm(&mut self, now: u64, c: usize, m: Cm) {
        let cfg = self.conns[c].cfg.clone();
        let (ca, cb) = (self.conns[c].comm_a, self.conns[c].comm_b);
        let ipv6 = self.opts.ipv6;
        match m {
            Cm::Rej(0) => {
                let sid = 0x0000_0000_0106_0000 | u64::from(cfg.service_port.unwrap_or(7471));
                let (a, b) = (self.nodes[cfg.a], self.nodes[cfg.b]);
                let req = mad::CmReq {
                    local_comm_id: ca,
                    service_id: sid,
                    local_ca_guid: 0x0002_c903_0000_0000 | cfg.a as u64,
                    local_qpn: cfg.qpn_a,
                    responder_resources: 16,
                    initiator_depth: 16,
                    remote_cm_response_timeout: 20,
                    starting_psn: cfg.psn_a,
                    local_cm_response_timeout: 20,
                    retry_count: cfg.retry_cnt.min(7) as u8,
                    pkey: 0xffff,
                    path_mtu: mtu_code(cfg.pmtu),
                    rnr_retry_count: 7,
                    max_cm_retries: 15,
                    primary_local_gid: a.gid(ipv6),
                    primary_remote_gid: b.gid(ipv6),
                    primary_traffic_class: cfg.dscp << 2,
                    primary_hop_limit: 64,
                    primary_sl: cfg.pcp,
                    primary_local_ack_timeout: 8,
                    ip_cm: Some(mad::IpCm {
                        ip_version: if ipv6 { 6 } else { 4 },
                        src_port: cfg.sport_a,
                        src_ip: a.gid(ipv6),
                        dst_ip: b.gid(ipv6),
                    }),
                    ..Default::default()
                };
                self.mad_frame(now, c, false, CmMessage::Req(req));
            }
            Cm::Req => {
                let msg = match cfg.reject {
                    Some(reason) => CmMessage::Rej(mad::CmRej {
                        local_comm_id: cb,
                        remote_comm_id: ca,
                        msg_rejected: 0,
                        reject_info_len: 0,
                        reason,
                    }),
                    None => CmMessage::Rep(mad::CmRep {
                        local_comm_id: cb,
                        remote_comm_id: ca,
                        local_qpn: cfg.qpn_b,
                        starting_psn: cfg.psn_b,
                        responder_resources: 16,
                        initiator_depth: 16,
                        target_ack_delay: 15,
                        rnr_retry_count: cfg.rnr_retry.min(7) as u8,
                        local_ca_guid: 0x0002_c903_0000_0000 | cfg.b as u64,
                        ..Default::default()
                    }),
                };
                self.mad_frame(now + 40_000, c, true, msg);
            }
            Cm::Rep => {
                if let Some(t) = self.truth.connections.get_mut(c) {
                    t.in_capture = true;
                }
                self.mad_frame(
                    now + 10_000,
                    c,
                    false,
                    CmMessage::Rtu(mad::CmIds {
                        local_comm_id: ca,
                        remote_comm_id: cb,
                    }),
                );
            }
            Cm::Rtu => self.schedule_tx(now + 5_000, c),
            // The REJ went into the truth as it was captured (`emit`).
            Cm::Rej(_) => self.conns[c].finished = true,
            Cm::Dreq => self.mad_frame(
                now + 20_000,
                c,
                true,
                CmMessage::Drep(mad::CmIds {
                    local_comm_id: cb,
                    remote_comm_id: ca,
                }),
            ),
            Cm::Drep => self.respawn(now, c),
        }
    }

    fn teardown(&mut self, now: u64, c: usize) {
        if self.conns[c].finished {
            return;
        }
        self.conns[c].finished = true;
        let cfg = self.conns[c].cfg.clone();
        if cfg.cm {
            let (ca, cb) = (self.conns[c].comm_a, self.conns[c].comm_b);
            self.mad_frame(
                now + 10_000,
                c,
                false,
                CmMessage::Dreq(mad::CmDreq {
                    local_comm_id: ca,
                    remote_comm_id: cb,
                    remote_qpn: cfg.qpn_b,
                }),
            );
        } else {
            self.respawn(now, c);
        }
    }

    fn respawn(&mut self, now: u64, c: usize) {
        let cfg = &self.conns[c].cfg;
        if !cfg.respawn {
            return;
        }
        let mut n = cfg.clone();
        n.qpn_a = (n.qpn_a + 0x40) & 0xff_ffff;
        n.qpn_b = (n.qpn_b + 0x40) & 0xff_ffff;
        n.psn_a = self.rng.below(1 << 24) as u32;
        n.psn_b = self.rng.below(1 << 24) as u32;
        n.start_ns = now + 20_000 - self.opts.start_ns;
        if n.sport_a != n.sport_b || n.sport_a != 0xc000 {
            n.sport_a = 0xc000 | (n.qpn_a as u16 & 0x3fff);
            n.sport_b = 0xc000 | (n.qpn_b as u16 & 0x3fff);
        }
        self.add_conn(n);
    }

    // ---------------------------------------------------------------- auxiliary sources

    fn aux_step(&mut self, now: u64, i: usize) {
        let (a, mut st) = self.aux[i].clone();
        match a {
            Aux::Pfc {
                src,
                to,
                priority,
                episodes,
                refreshes,
                gap_ns,
                stuck,
                ..
            } => {
                // An episode: XOFF, `refreshes` more XOFFs, then XON.
                let per = u64::from(refreshes) + 2;
                let episode = st.step / per;
                let k = st.step % per;
                let last_episode = episode + 1 >= u64::from(episodes);
                let xon = k == per - 1 && !(stuck && last_episode);
                let mut quanta = [0u16; 8];
                if !xon {
                    quanta[priority as usize] = 0xffff;
                }
                let m = MacControl::Pfc {
                    enable: 1 << priority,
                    quanta,
                };
                let mut buf = Vec::with_capacity(60);
                let len = frames::mac_control(&mut buf, src, m);
                self.link_frame(now, to, buf, len, Some((src, m)), None);
                st.step += 1;
                // Refresh at half the pause time; pause again after `gap_ns`.
                let half = quanta_to_ns(0xffff, self.opts.link_bps) / 2;
                let next = if xon { now + gap_ns } else { now + half };
                let more = !(last_episode && xon) && (st.step < per * u64::from(episodes) || stuck);
                self.aux[i].1 = st;
                if more {
                    self.push(next, Ev::Aux(i));
                }
            }
            Aux::Lldp {
                src,
                to,
                name,
                pfc_enable,
                willing,
                roce_priority,
                every_ns,
                count,
                ..
            } => {
                let pfc = PfcConfig {
                    willing,
                    mbc: false,
                    cap: 8,
                    enable: pfc_enable,
                };
                let mut buf = Vec::new();
                let len = frames::lldp(&mut buf, src, name, pfc, roce_priority);
                let sender = truth::DcbTruth {
                    src_mac: mac_name(src),
                    name: name.to_string(),
                    pfc_enabled: (0..8).filter(|p| pfc_enable >> p & 1 == 1).collect(),
                    willing,
                    roce_priorities: roce_priority.into_iter().collect(),
                    frames: 0,
                };
                self.link_frame(now, to, buf, len, None, Some(Box::new(sender)));
                st.step += 1;
                let more = st.step < count;
                self.aux[i].1 = st;
                if more {
                    self.push(now + every_ns, Ev::Aux(i));
                }
            }
            Aux::Ud {
                a,
                b,
                qpn_a,
                qpn_b,
                qkey,
                every_ns,
                ..
            } => {
                let mut cfg = ConnCfg::new(a, b, qpn_a, qpn_b);
                cfg.sport_a = 0xc000 | (qpn_a as u16 & 0x3fff);
                let with_imm = st.step % 3 == 0;
                let payload = 256 + (st.step % 4) * 256;
                let t = Transport {
                    bth: self.bth(if with_imm { 0x65 } else { 0x64 }, qpn_b, st.psn, false, 0),
                    ext: ExtHeaders {
                        deth: Some(Deth {
                            qkey,
                            src_qp: qpn_a,
                        }),
                        immdt: with_imm.then_some(st.step as u32),
                        ..Default::default()
                    },
                    payload_len: payload as usize,
                    fill: 0x55,
                    payload: None,
                };
                st.psn = (st.psn + 1) & 0xff_ffff;
                st.step += 1;
                self.aux[i].1 = st;
                // A throw-away connection record carries the addresses for framing.
                let id = self.conns.len();
                self.conns.push(Conn::placeholder(cfg));
                self.send_transport(now, id, false, &t, 2, 26, None, None, None, None);
                self.conns.pop();
                self.push(now + every_ns, Ev::Aux(i));
            }
        }
    }
}

/// `aa:bb:cc:dd:ee:ff`, as `analyze` writes MAC addresses.
fn mac_name(m: [u8; 6]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

fn close_episode(truth: &mut Truth, mac: &str, prio: u8, st: &mut (u64, u64, u64, u64), end: u64) {
    let start = st.1;
    truth.pfc.pause_episodes += 1;
    truth.pfc.pause_ns_total += end - start;
    st.3 += end - start;
    truth.events.pfc_episodes.push(truth::PfcEpisode {
        src_mac: mac.to_string(),
        priority: prio,
        start_ns: start,
        end_ns: end,
    });
    st.1 = 0;
    st.2 = 0;
}

/// The IBTA path MTU code of a byte count.
pub fn mtu_code(mtu: u32) -> u8 {
    match mtu {
        256 => 1,
        512 => 2,
        1024 => 3,
        2048 => 4,
        _ => 5,
    }
}

impl Conn {
    fn new(cfg: ConnCfg, comm_a: u32, comm_b: u32, ud_psn: u32) -> Self {
        Self {
            next_psn: cfg.psn_a,
            msg_left: 0,
            msg_kind: OpKind::Write,
            msg_len: 0,
            msg_off: 0,
            msg_index: 0,
            outstanding: Default::default(),
            resend: None,
            pass_begins: false,
            tx_pending: false,
            blocked: false,
            paused_until: 0,
            timer_armed: false,
            timer_deadline: 0,
            timer_queued: false,
            rate: cfg.rate,
            target: cfg.rate,
            alpha: 1.0,
            last_rate_ns: 0,
            new_pkts: 0,
            drops: 0,
            reorder_pkts: 0,
            finished: false,
            read_next: None,
            rereading: None,
            epsn: cfg.psn_a,
            msn: 0,
            nak_sent: false,
            rnr_left: cfg.rnr_sends,
            rnr_discard: false,
            read_mid_last: 0,
            read_drops: 0,
            ooo_held: BTreeMap::new(),
            resp_error: false,
            retries: 0,
            rnr_retries: 0,
            blackout_until: 0,
            blackout_done: false,
            last_cnp: 0,
            ud_psn,
            comm_a,
            comm_b,
            cfg,
        }
    }

    /// A record that only carries addresses for framing (UD datagrams).
    fn placeholder(cfg: ConnCfg) -> Self {
        let mut c = Self::new(cfg, 0, 0, 0);
        c.finished = true;
        c
    }
}

/// The application an RDMA-CM service port names.
pub fn app_name(port: u16) -> Option<&'static str> {
    match port {
        4420 => Some("NVMe-oF"),
        3260 => Some("iSER"),
        5445 => Some("SMB Direct"),
        20049 => Some("NFS/RDMA"),
        _ => None,
    }
}
