//! The streaming pass: one call per decoded packet, per-flow state, a [`Report`](crate::Report) at the end.

use std::collections::{BTreeMap, VecDeque};

use crate::fxhash::FxHashMap as HashMap;
use crate::fxhash::FxHashSet as HashSet;
use crate::late::{LagCopies, Lags, LateCopies};

use hdrhistogram::Histogram;
use rdmascope_wire::bth::psn_diff;
use rdmascope_wire::ext::{rnr_timer_us, Aeth, AethKind};
use rdmascope_wire::frame::{Encap, Other};
use rdmascope_wire::lldp::{AppEntry, CnConfig, EtsConfig, LldpPacket, PfcConfig};
use rdmascope_wire::macctl::{quanta_to_ns, MacControl};
use rdmascope_wire::mad::{self, CmMessage};
use rdmascope_wire::opcode::{OpInfo, Operation, Position, Transport};
use rdmascope_wire::{DecodeOptions, Frame, IcrcStatus};

use crate::pack::{Reader, Writer};
use crate::psn::{Class, Tracker};
use crate::report::{self, Counters, Latency, Triggers};

/// A node: an IPv4 address (RoCEv2), a GID (IPv6, RoCEv1, routed IB) or a LID (local IB).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    V4([u8; 4]),
    Gid([u8; 16]),
    Lid(u16),
}

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // What `Ipv4Addr` writes, without `core::fmt`'s machinery: reports name every
            // flow's nodes, and this was a fifth of the report's instructions.
            Self::V4(a) => {
                let mut buf = [0u8; 15];
                let mut n = 0;
                for (i, &o) in a.iter().enumerate() {
                    if i > 0 {
                        buf[n] = b'.';
                        n += 1;
                    }
                    if o >= 100 {
                        buf[n] = b'0' + o / 100;
                        n += 1;
                    }
                    if o >= 10 {
                        buf[n] = b'0' + o / 10 % 10;
                        n += 1;
                    }
                    buf[n] = b'0' + o % 10;
                    n += 1;
                }
                f.pad(std::str::from_utf8(&buf[..n]).map_err(|_| std::fmt::Error)?)
            }
            Self::Gid(g) => write!(f, "{}", std::net::Ipv6Addr::from(*g)),
            Self::Lid(l) => write!(f, "lid:{l}"),
        }
    }
}

/// A string that is not a node as `Display` writes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a node (an IPv4 address, a GID or lid:N): {0:?}")]
pub struct NodeParseError(String);

/// Reads what `Display` writes: `lid:N`, an IPv6 address (a GID) or an IPv4 address.
impl std::str::FromStr for Node {
    type Err = NodeParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let node = if let Some(l) = s.strip_prefix("lid:") {
            l.parse().ok().map(Self::Lid)
        } else if s.contains(':') {
            s.parse::<std::net::Ipv6Addr>()
                .ok()
                .map(|a| Self::Gid(a.octets()))
        } else {
            s.parse::<std::net::Ipv4Addr>()
                .ok()
                .map(|a| Self::V4(a.octets()))
        };
        node.ok_or_else(|| NodeParseError(s.to_string()))
    }
}

type Key = (Node, Node, u32);

/// Options of the analysis.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Link speed for PFC quanta; overrides the capture's `if_speed`.
    pub link_bps: Option<u64>,
    pub files: Vec<String>,
    /// Most flows analysed one by one (`DEFAULT_MAX_FLOWS` unless set). Packets of later
    /// flows go into the totals only, so that a capture of garbage in which every packet
    /// starts a flow cannot take all the memory.
    pub max_flows: Option<usize>,
    /// How the capture's copies at a lag are looked for: the first packets held back while
    /// sampled, unless set ([`LagCopies`]).
    pub lag_copies: LagCopies,
}

/// Flows analysed one by one unless [`Config::max_flows`] says otherwise: 262,144 one-packet
/// request flows peak at about 790 MB of RSS (3.0 KB a flow, most of it the `Req` box).
pub const DEFAULT_MAX_FLOWS: usize = 1 << 18;

/// Candidate flows that requester searches may examine before any packet is fed, and per packet
/// fed (see [`Analyzer::may_search`]): a second or two of searching, then well under a
/// microsecond a packet.
const SEARCH_BASE: u64 = 1 << 28;
const SEARCH_PER_PACKET: u64 = 64;
/// Flows named by `capture.search_limit`.
const SKIPPED_NAMED: usize = 10;
/// CM connections beyond `max_flows` remembered so that each counts once (beyond these, every
/// REQ and REJ counts).
const CM_UNTRACKED_KEPT: usize = 1 << 16;

/// The slowest and fastest `if_speed` believed (1 Mb/s and 100 Tb/s, as `--link-speed`):
/// beyond them, a capture's interface speed is damaged or a placeholder, and the pause times
/// would be absurd.
const IF_SPEEDS: std::ops::RangeInclusive<u64> = 1_000_000..=100_000_000_000_000;

/// Most (source MAC, priority) pairs whose PFC/PAUSE episodes are followed one by one; frames
/// of further pairs are counted only (a real fabric has far fewer, garbage any number).
pub(crate) const MAX_PFC_PORTS: usize = 4096;

/// [`Analyzer::flow`]'s answer for a new flow beyond [`Config::max_flows`].
const UNTRACKED: usize = usize::MAX;

/// A request PSN further than this from its flow's highest (the PSN tracker's whole window)
/// is no continuation of the flow. With a bad ICRC the packet's header is damaged: the
/// receiving HCA drops it, and read as it is it would be a jump over millions of PSNs or a
/// resend after a timeout, so it is counted (packets, bytes, opcode, ICRC), not tracked. After
/// [`RESTART_IDLE_NS`] of silence the QP number carries a new connection (see
/// [`Analyzer::restart`]).
const FAR_PSN: u32 = crate::psn::WINDOW_PSNS;

/// UD packets a flow remembers to tell the capture's copies of them (see `Req::ud_seen`).
const UD_SEEN: usize = 4;

/// PFC/PAUSE frames remembered to tell their copies ([`Analyzer::pfc_copy`]).
const PFC_RECENT: usize = 4;

/// A second copy of a packet sooner than this after the first is the capture's, not the
/// network's: the shortest local ACK timeout is 4.096 µs × 2^1 (IBTA §9.7.6.1.3), so no
/// requester resends sooner unless a NAK asked it to, and a NAK shows in the capture.
pub(crate) const DUP_NS: u64 = 8_192;

/// The shortest time after which a NIC retransmitting adaptively may resend without a NAK:
/// NVIDIA's adaptive retransmission (ConnectX, `roce_adp_retrans_en` in its ROCE_ACCL
/// register) runs a time base that is a power of two of at least 4 µs
/// (`adp_retx_base_timeout_min`), well below the IBTA's [`DUP_NS`]. A second copy later than
/// this after the first may be such a resend, so it is taken for the capture's only where the
/// packet before it (PSN - 1) came twice too (see [`Req::duplicate`]).
const ADP_NS: u64 = 4_096;

/// The longest a requester takes to send what it sends at once, behind the few packets it has
/// queued (a 4 KiB packet takes 33 µs at 1 Gb/s): the next packet of a go-back-N pass, a READ
/// asked again for a response found missing. Its ACK timer is set far longer in practice
/// (rdma-core and perftest default to 4.096 µs × 2^14, 67 ms; NCCL to 2^18 or more).
const ACT_NS: u64 = 65_536;

/// Late new packets a go-back-N pass may have between two of its resends (see
/// [`Analyzer::request`]).
const STRAGGLERS: u8 = 2;

/// How long after a NAK a request's second copy may be the resend it asked for,
/// though the capture shows the NAK before the first copy: the NAK's round trip from the
/// capture point to the requester and back, far below this in a data centre.
const NAK_QUIET_NS: u64 = 1_000_000;

/// The least time from a PSN sequence NAK passing the capture point to a resend it caused:
/// the NAK still travels to the requester, whose HCA takes it in and schedules the resend, and
/// the resend travels back (an HCA's receive and send pipelines alone take about a
/// microsecond). A resend sooner than this was sent before the NAK reached the requester.
const NAK_TURN_NS: u64 = 1_000;

/// How far an input file may begin before the latest packet of the files before it and still
/// continue their capture (timestamps taken on several CPUs, at the boundary of ring files),
/// if that is less than half their span; one that begins earlier was captured at the same
/// time, at another point.
const OVERLAP_NS: u64 = 1_000_000;

/// How long a flow's capture point must carry none of its frames before a frame at another
/// point moves the flow there ([`Analyzer::other_point`]): beyond the skew of two hosts'
/// synchronised clocks (NTP keeps them within a few ms, PTP within µs), whose merged
/// captures hold each packet at both points, and as long as a bond's failover takes.
const MOVE_NS: u64 = 100_000_000;

/// Requests in a row whose copies came (see [`Req::pairs`]) after which a flow's capture is
/// taken to hold every packet twice.
const PAIRED: u8 = 4;

/// ACKs remembered per request flow ([`Req::ack_marks`]): how many may be on their way to the
/// requester when its timer fires.
const ACK_MARKS: usize = 8;

/// New request PSNs that are multiples of this are marked in a flow's [`Req::sent_psns`], the
/// last [`SENT_MARKS`]: 128 PSNs, about 2.6 µs of 1 KB packets at 400 Gb/s.
const SENT_MARK_PSNS: u32 = 16;
const SENT_MARKS: usize = 8;

/// Requests remembered per flow to recognise the capture's copies of them ([`Req::seen`]):
/// copies that come a few packets late (a mirror of two ports) are found too, and those of a
/// fast flow's go-back-N pass microseconds late (a mirror across a switch that queues).
const SEEN: usize = 64;

/// Copies of packets found, at least an eighth of the RDMA packets so far, after which the
/// capture is taken to hold packets twice ([`Analyzer::duplicate`]).
const DOUBLED_MIN: u64 = 64;

/// Go-back-N passes of one flow counted as ACK timeouts that began sooner than any ACK timeout
/// could fire (half or more of its timeouts), after which [`EARLY_COPIES`] copies found show the
/// capture to hold packets twice: copies that trail by more requests than [`Req::seen`] holds
/// are found nowhere, and resend passes of one packet each stand in for them. As many such
/// passes that began with a PSN already acknowledged show it alone.
const EARLY_DOUBLED: u32 = 16;

/// Copies found that, with [`EARLY_DOUBLED`] early passes on a flow, show the capture to hold
/// packets twice (without copies, such passes may be a NIC's adaptive retransmission).
const EARLY_COPIES: u64 = 16;

/// The bit of a PSN in [`Req::seen`] that says its copy came.
const COPIED: u32 = 1 << 31;

/// The bit of a PSN in [`Req::seen`] that says the packet came damaged (a bad ICRC): the
/// capture's copy of it is damaged alike, and the responder drops it, so the same request
/// whole again is a resend, however soon.
const DAMAGED: u32 = 1 << 30;

/// The bit of a PSN in [`Req::seen`] that says the request came again right after it, before
/// its own copy, and was taken for a resend ([`Req::duplicate`]): the two are twins, the
/// capture's copy read as a resend or a resend at once, and neither ends a run of pairs
/// ([`Req::remember`]).
const TWINNED: u32 = 1 << 29;

/// The bit of a PSN in [`Req::seen`] that says the request is the twin of the one before it,
/// set when that one leaves `seen` ([`TWINNED`]).
const TWIN: u32 = 1 << 28;

/// The bits of a PSN in [`Req::seen`] that are the PSN.
const PSN_BITS: u32 = 0xff_ffff;

/// Request `psn` as [`Req::seen`] keeps it: with [`DAMAGED`] when it came `damaged`.
fn seen_key(psn: u32, damaged: bool) -> u32 {
    psn | if damaged { DAMAGED } else { 0 }
}

/// Flows the list of flows first has room for: 480 KB of address space, touched only as flows
/// come. Growing from 64 by eighths, a 935-flow capture's list was moved 14 times (DESIGN §8,
/// session 57).
const FLOWS_RESERVED: usize = 1024;

/// Answers remembered per flow to recognise the capture's copies of them ([`Resp::answers`]).
const ANSWERS: usize = 8;

/// Runs of READ responses whose ends an answering flow remembers besides the last
/// ([`Resp::read_before`]).
const RUNS: usize = 4;

/// Resent requests remembered per flow, to tell a responder's repeated answers from the
/// capture's copies of them ([`Analyzer::response_copy`]).
const RESENDS: usize = 32;

/// [`Req::seen`]'s entries (an array too long for `Default`): PSN, time and length (16 bytes).
#[derive(Debug, Clone, Copy)]
struct SeenRing([(u32, u64, u32); SEEN]);

const _: () = assert!(std::mem::size_of::<SeenRing>() == 16 * SEEN);

impl Default for SeenRing {
    fn default() -> Self {
        Self([(0, 0, 0); SEEN])
    }
}

impl std::ops::Deref for SeenRing {
    type Target = [(u32, u64, u32); SEEN];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for SeenRing {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// How many READ responses found lost a request flow remembers (at 400 Gb/s with 2% of the
/// packets damaged, 4 lost their oldest before its re-read came; with 14%, 8 lost one
/// 1.4 µs old, as a damaged response is found lost again when the next one passes it over).
const LOST: usize = 16;

/// How many response PSNs a READ of `dma_len` bytes takes at the responses' MTU `mtu`
/// (one per MTU of data, at least one); `None` when either is unknown.
fn read_response_psns(dma_len: u32, mtu: u32) -> Option<u32> {
    (dma_len > 0 && mtu > 0).then(|| dma_len.div_ceil(mtu).clamp(1, RESPONSE_PSNS))
}

/// The last [`LOST`] READ responses that came damaged (a bad ICRC: the requester's HCA drops
/// them) or were skipped (lost before the capture point: found when a later one came), and
/// when; the newest at `n - 1` modulo [`LOST`]; the responses' MTU at the last. A READ request
/// sent again after one of them, asking for it again, is a re-read, not the capture's copy of
/// an earlier send, however soon it comes.
#[derive(Debug, Default)]
struct Lost {
    psns: [u32; LOST],
    at: [u64; LOST],
    n: u8,
    mtu: u32,
    /// When the newest came damaged last (0: it did not).
    damaged_at: u64,
}

impl Lost {
    /// The newest loss remembered: its PSN and when it was found.
    fn newest(&self) -> Option<(u32, u64)> {
        let i = usize::from(self.n.wrapping_sub(1)) % LOST;
        (self.n > 0).then(|| (self.psns[i], self.at[i]))
    }

    /// Whether READ request `psn`, asking for `dma_len` bytes (0: unknown), asks again for a
    /// response found lost after `after`: the requester reads again from the READ that
    /// response belongs to, or from the response itself (its address and length advanced
    /// past the data that came).
    fn asked_again(&self, psn: u32, dma_len: u32, after: u64) -> bool {
        let n = read_response_psns(dma_len, self.mtu).unwrap_or(1);
        (0..usize::from(self.n).min(LOST))
            .any(|i| self.at[i] > after && (0..n as i32).contains(&psn_diff(self.psns[i], psn)))
    }
}

/// A run of READ responses among a flow's answers ([`Resp::read_before`]).
#[derive(Debug, Default, Clone, Copy)]
struct ReadRun {
    /// When it ended.
    end: u64,
    /// The PSN the last READ it answered began at, and that of its last response.
    first: u32,
    last: u32,
    /// When the response at `first` came, if within the run, else `end`: the READ it answers
    /// was sent before then (a READ sent again meanwhile is answered after these responses).
    sent_by: u64,
}

impl ReadRun {
    /// The run of READ responses from `start` to `end` whose last READ's answer began with
    /// PSN `first` at `first_at`, its last response `last`.
    fn new((start, end): (u64, u64), (first, first_at): (u32, u64), last: u32) -> Self {
        let sent_by = if first_at >= start { first_at } else { end };
        Self {
            end,
            first,
            last,
            sent_by,
        }
    }
}

/// When the last [`RESENDS`] requests resent came, and their PSNs, the newest at `n - 1`
/// modulo [`RESENDS`].
#[derive(Debug, Default)]
struct Resends {
    at: [u64; RESENDS],
    psns: [u32; RESENDS],
    n: u32,
}

impl Resends {
    fn push(&mut self, ts: u64, psn: u32) {
        self.at[self.n as usize % RESENDS] = ts;
        self.psns[self.n as usize % RESENDS] = psn;
        self.n = self.n.wrapping_add(1);
    }

    /// When the newest remembered resend came that may be the READ request answered from PSN
    /// `psn` by a response at `at` (its PSN at most [`RESPONSE_PSNS`] below, sent before).
    fn read_of(&self, psn: u32, at: u64) -> Option<u64> {
        let n = (self.n as usize).min(RESENDS);
        (0..n)
            .filter(|&i| {
                self.at[i] < at && (0..RESPONSE_PSNS as i32).contains(&psn_diff(psn, self.psns[i]))
            })
            .map(|i| self.at[i])
            .max()
    }

    /// How many of those remembered came at `t` or later.
    fn since(&self, t: u64) -> usize {
        let n = (self.n as usize).min(RESENDS);
        self.at[..n].iter().filter(|&&a| a >= t).count()
    }
}

/// The last two requests of a flow: when they came, and their lengths.
#[derive(Debug, Clone, Copy)]
struct Pace {
    at: [u64; 2],
    lens: [u32; 2],
}

impl Pace {
    /// How long after the last the next may come at the pace of the one before (`u64::MAX`
    /// without one): a requester that sends at a rate (a rate limit, a slow link) waits each
    /// packet's length over that rate. With timestamps in units of `unit` ns the two came up
    /// to a unit less or more apart than they read (two in one microsecond read as at once),
    /// so this is the least and the most it may be.
    fn gaps(&self, unit: u64) -> (u64, u64) {
        let u = unit.max(1) - 1;
        match (self.at[1].checked_sub(self.at[0]), u64::from(self.lens[0])) {
            (Some(d), before) if before > 0 => {
                let at = |d: u64| d.saturating_mul(u64::from(self.lens[1])) / before;
                (at(d.saturating_sub(u)), at(d.saturating_add(u)))
            }
            _ => (u64::MAX, u64::MAX),
        }
    }
}

/// Time `t` as a capture stamped it in units of `unit` ns, before [`Analyzer::spread_ties`]
/// spread the packets of one unit 1 ns apart.
fn stamped(t: u64, unit: u64) -> u64 {
    t - t % unit
}

/// The bit of a time in [`Resp::answers`] that says its copy came.
const ANSWER_COPIED: u64 = 1 << 63;

/// Silence on a request flow after which a PSN beyond [`FAR_PSN`] starts the flow's PSNs
/// afresh: a new connection on the same QP number (QPs destroyed and created again, their
/// numbers exchanged out of band, no CM to say so) starts at a random PSN.
pub(crate) const RESTART_IDLE_NS: u64 = 100_000_000;

/// Per-packet facts from the capture record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PacketMeta {
    pub number: u64,
    pub ts_ns: u64,
    pub orig_len: u32,
    /// The capture point: the interface's ID within its pcapng section (see
    /// [`Analyzer::other_point`]).
    pub if_id: u32,
    /// The interface's `if_speed`, when the capture says it.
    pub if_speed: Option<u64>,
}

/// The BTH fields the analysis uses (IBTA 9.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bth {
    pub opcode: u8,
    pub ackreq: bool,
    pub destqp: u32,
    pub psn: u32,
}

/// What the analysis needs of one decoded packet, owned, so decoding and analysis can run on
/// different threads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    pub meta: PacketMeta,
    pub truncated: bool,
    /// A MAC control or LLDP frame; rare, so boxed, both kinds behind one pointer to keep
    /// events small (every event crosses between the cores).
    pub link: Option<Box<LinkFrame>>,
    /// TCP to or from port 18515 (perftest's out-of-band QP exchange).
    pub perftest: bool,
    /// ICMP "fragmentation needed" / ICMPv6 "packet too big".
    pub frag_needed: bool,
    /// An IP fragment of RoCEv2.
    pub roce_fragment: bool,
    pub bth: Option<Bth>,
    pub nodes: Option<(Node, Node)>,
    /// `flow_slot` of the flow (source, destination, destination QP), when there are nodes.
    pub flow_slot: u16,
    /// `v4_pair` of the nodes.
    pub v4_pair: u64,
    pub encap: Option<Encap>,
    pub payload_len: u32,
    /// `mac_word` of the Ethernet source address, 0 without Ethernet.
    pub eth_src: u64,
    pub icrc: Option<IcrcStatus>,
    /// The IB link's VCRC (IBTA §7.8.2): native IB captures only.
    pub vcrc: Option<IcrcStatus>,
    pub ecn: Option<u8>,
    /// VLAN PCP, else DSCP / 8.
    pub prio: u8,
    pub udp_sport: Option<u16>,
    pub aeth: Option<Aeth>,
    pub ext: ExtWord,
    pub cm: Option<Box<CmMessage>>,
}

/// The extension header field the analysis needs besides the AETH: a RETH's DMA length (IBTA
/// §9.3.2) or a DETH's source QP (§9.3.3), in one word, as no opcode it follows carries both
/// (RD's RDMA requests, with RETH and DETH, keep the DMA length).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ExtWord {
    #[default]
    None,
    DmaLen(u32),
    SrcQp(u32),
}

impl Event {
    /// The RETH's DMA length, if the packet carries one.
    pub fn dma_len(&self) -> Option<u32> {
        match self.ext {
            ExtWord::DmaLen(n) => Some(n),
            _ => None,
        }
    }

    /// Decodes one captured frame into its event: plain RoCEv2 straight from the bytes, anything
    /// else through [`Frame::decode`] (the same event either way).
    pub fn decode(
        meta: PacketMeta,
        linktype: u32,
        data: &[u8],
        orig_len: u32,
        opts: &DecodeOptions,
    ) -> Self {
        let mut e = Self::default();
        e.decode_into(meta, linktype, data, orig_len, opts);
        e
    }

    /// [`Event::decode`] into `self`, in place: reusing a batch's events saves moving each one
    /// (160 bytes) into the batch.
    #[inline]
    pub fn decode_into(
        &mut self,
        meta: PacketMeta,
        linktype: u32,
        data: &[u8],
        orig_len: u32,
        opts: &DecodeOptions,
    ) {
        if crate::quick::event(self, meta, linktype, data, orig_len, opts).is_none() {
            *self = Frame::decode_with(linktype, data, orig_len, opts, |f| Self::new(meta, f));
        }
    }

    /// Extracts what the analysis needs from a decoded frame. A frame that came through a
    /// tunnel (an ERSPAN mirror session, VXLAN) is the frame inside, with its own length on the
    /// wire.
    #[inline]
    pub fn new(mut meta: PacketMeta, f: &Frame<'_>) -> Self {
        if let Some(t) = f.tunnel {
            meta.orig_len = meta
                .orig_len
                .saturating_sub(u32::try_from(t.inner_at).unwrap_or(u32::MAX));
        }
        let other = f.other;
        let nodes = if f.bth.is_some() {
            Analyzer::nodes(f)
        } else {
            None
        };
        Self {
            meta,
            truncated: f.truncated,
            link: {
                let src = f.eth.map(|e| e.src).unwrap_or_default();
                f.macctl
                    .map(|m| LinkFrame::MacControl(src, m))
                    .or_else(|| f.lldp().map(|l| LinkFrame::Lldp(Dcb::new(src, &l))))
                    .map(Box::new)
            },
            perftest: matches!(other, Some(Other::Tcp { src_port, dst_port, .. }) if src_port == 18515 || dst_port == 18515),
            frag_needed: matches!(
                other,
                Some(Other::Icmp { ty: 3, code: 4 }) | Some(Other::Icmpv6 { ty: 2, .. })
            ),
            roce_fragment: f.ipv4.is_some_and(|ip| {
                ip.is_fragment() && ip.protocol == 17 && f.udp.is_none_or(|u| u.dst_port == 4791)
            }),
            bth: f.bth.map(|b| Bth {
                opcode: b.opcode,
                ackreq: b.ackreq,
                destqp: b.destqp,
                psn: b.psn,
            }),
            nodes,
            flow_slot: match (nodes, f.bth) {
                (Some((s, d)), Some(b)) => flow_slot(&s, &d, b.destqp),
                _ => 0,
            },
            v4_pair: nodes.map_or(0, |(s, d)| v4_pair(&s, &d)),
            encap: f.encap,
            payload_len: f.payload_len as u32,
            eth_src: f.eth.map_or(0, |e| mac_word(e.src)),
            icrc: f.icrc,
            vcrc: f.vcrc,
            ecn: f.ecn(),
            prio: f.pcp().unwrap_or(f.dscp().unwrap_or(0) >> 3),
            udp_sport: f.udp.map(|u| u.src_port),
            aeth: f.ext.aeth,
            ext: match (f.ext.reth, f.ext.deth) {
                (Some(r), _) => ExtWord::DmaLen(r.dma_len),
                (None, Some(d)) => ExtWord::SrcQp(d.src_qp),
                (None, None) => ExtWord::None,
            },
            cm: if f.is_mad {
                f.mad().and_then(|m| m.cm).map(Box::new)
            } else {
                None
            },
        }
    }
}

/// An input file whose reading stopped before its end: cut inside a record, a corrupt record,
/// a read error. The packets before the fault are analysed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCut {
    /// Index into [`Config::files`].
    pub file: usize,
    /// Packets read from the file before the fault.
    pub packets: u64,
    /// What the reader said: the record, the byte offset and what was wrong.
    pub what: String,
}

/// A link-level frame the analysis follows, with its Ethernet source address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkFrame {
    /// PFC or 802.3x PAUSE.
    MacControl([u8; 6], MacControl),
    /// LLDP and the DCB settings it advertises.
    Lldp(Dcb),
}

/// What an LLDP frame says of its sender and of the DCB settings it advertises (IEEE 802.1Q
/// Annex D.2), owned so it can cross threads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dcb {
    /// The Ethernet source address.
    pub src: [u8; 6],
    /// System name, else chassis ID.
    pub name: String,
    pub port: String,
    /// From the IEEE PFC TLV, else from a CEE DCBX TLV.
    pub pfc: Option<PfcConfig>,
    pub ets: Option<EtsConfig>,
    pub cn: Option<CnConfig>,
    /// Application Priority entries (the first 64; a CEE DCBX entry gives one per priority).
    pub app: Vec<AppEntry>,
}

impl Dcb {
    fn new(src: [u8; 6], l: &LldpPacket<&[u8]>) -> Self {
        Self {
            src,
            name: l.sender().map(|s| s.to_string()).unwrap_or_default(),
            port: l.port().map(|p| p.to_string()).unwrap_or_default(),
            pfc: l.any_pfc(),
            ets: l.ets(),
            cn: l.cn(),
            app: l.any_app().take(64).collect(),
        }
    }
}

/// What the capture section of the report sums over packets.
#[derive(Debug, Default)]
struct Totals {
    packets: u64,
    bytes: u64,
    first_ts: u64,
    last_ts: u64,
    truncated: u64,
    /// The first truncated frames' numbers (as many as a finding cites).
    truncated_at: [u64; SAMPLES],
    vcrc: Vcrc,
}

/// VCRC outcomes of the IB frames (IBTA §7.8.2; none on Ethernet), summed while decoding.
#[derive(Debug, Default, Clone)]
pub(crate) struct Vcrc {
    pub(crate) ok: u64,
    pub(crate) bad: u64,
    pub(crate) truncated: u64,
    /// Frames whose ICRC is bad under a good VCRC: damaged before the last hop's VCRC.
    pub(crate) ok_with_bad_icrc: u64,
    /// Frames whose ICRC and VCRC are both bad: damaged on the last link.
    pub(crate) bad_with_bad_icrc: u64,
    /// The first bad-VCRC frames' numbers (as many as a finding cites).
    pub(crate) bad_at: Vec<u64>,
}

impl Vcrc {
    fn add(&mut self, s: IcrcStatus, icrc: Option<IcrcStatus>, number: u64) {
        match s {
            IcrcStatus::Ok => {
                self.ok += 1;
                self.ok_with_bad_icrc += u64::from(icrc == Some(IcrcStatus::Bad));
            }
            IcrcStatus::Bad => {
                self.bad += 1;
                self.bad_with_bad_icrc += u64::from(icrc == Some(IcrcStatus::Bad));
                sample(&mut self.bad_at, number);
            }
            IcrcStatus::Truncated | IcrcStatus::Unverifiable => self.truncated += 1,
        }
    }

    fn merge(&mut self, o: &Self) {
        self.ok += o.ok;
        self.bad += o.bad;
        self.truncated += o.truncated;
        self.ok_with_bad_icrc += o.ok_with_bad_icrc;
        self.bad_with_bad_icrc += o.bad_with_bad_icrc;
        for &n in &o.bad_at {
            sample(&mut self.bad_at, n);
        }
    }
}

impl Totals {
    #[inline]
    fn add(&mut self, e: &Event) {
        let m = &e.meta;
        if self.packets == 0 {
            self.first_ts = m.ts_ns;
        }
        self.packets += 1;
        self.bytes += u64::from(m.orig_len);
        self.last_ts = self.last_ts.max(m.ts_ns);
        if e.truncated {
            if let Some(n) = self.truncated_at.get_mut(self.truncated as usize) {
                *n = m.number;
            }
            self.truncated += 1;
        }
        if let Some(v) = e.vcrc {
            self.vcrc.add(v, e.icrc, m.number);
        }
    }
}

/// Consecutive packets' events, decoded on one thread to be fed to the analyser on another,
/// with the capture totals summed while decoding (so the serial analysis adds them once).
/// Reused, it decodes into the events of its last use (see [`Event::decode_into`]).
#[derive(Debug, Default)]
pub struct Batch {
    events: Vec<Event>,
    len: usize,
    totals: Totals,
    /// The index of the input file the packets came from.
    file: u32,
    /// That file's timestamp unit in nanoseconds (0 taken as 1).
    ts_unit: u64,
}

impl Batch {
    /// An empty batch with room for `events` events: filled without growing, so without the
    /// copies and the page faults of a list that doubles (it is reserved, not touched).
    pub fn with_capacity(events: usize) -> Self {
        Self {
            events: Vec::with_capacity(events),
            ..Self::default()
        }
    }

    /// Empties the batch, keeping its memory.
    pub fn clear(&mut self) {
        self.len = 0;
        self.totals = Totals::default();
    }

    /// Marks the packets as coming from input file `i` (of [`Config::files`]), whose
    /// timestamps count in units of `unit_ns` (1,000 in a classic pcap file of microseconds).
    pub fn set_file(&mut self, i: u32, unit_ns: u64) {
        self.file = i;
        self.ts_unit = unit_ns;
    }

    /// Decodes one captured frame (see [`Event::decode`]) onto the end of the batch.
    #[inline]
    pub fn decode(
        &mut self,
        meta: PacketMeta,
        linktype: u32,
        data: &[u8],
        orig_len: u32,
        opts: &DecodeOptions,
    ) {
        if self.len == self.events.len() {
            self.events.push(Event::default());
        }
        if let Some(e) = self.events.get_mut(self.len) {
            e.decode_into(meta, linktype, data, orig_len, opts);
            self.totals.add(e);
            self.len += 1;
        }
    }

    /// Appends an event decoded elsewhere.
    pub fn push(&mut self, e: Event) {
        self.totals.add(&e);
        match self.events.get_mut(self.len) {
            Some(slot) => *slot = e,
            None => self.events.push(e),
        }
        self.len += 1;
    }

    /// The events, in order.
    pub fn events(&self) -> &[Event] {
        &self.events[..self.len]
    }
}

/// Latencies above this (100 s) are recorded as this.
const MAX_LATENCY_NS: u64 = 100_000_000_000;

/// Latency samples kept as they are before a histogram takes over: most flows see few NAKs,
/// CNPs or even ACKs, and a histogram is about 16 KB, eight times this many samples.
const FEW: usize = 256;

/// The first samples of a latency (clamped as a histogram records them), in a list that grows
/// with them.
#[derive(Debug, Clone)]
struct Few {
    v: Vec<u64>,
}

/// A latency: its first [`FEW`] samples, then a histogram (2 significant digits from 1 ns to
/// 100 s, 32-bit counts, about 16 KB), or, once its flow's connection is closed, the summary.
/// Either way the summary is the histogram's: a few samples are summarised by recording them
/// into one.
#[derive(Debug, Clone, Default)]
enum Lat {
    #[default]
    Empty,
    Few(Box<Few>),
    Live(Box<Histogram<u32>>),
    /// Boxed: a flow holds up to six of these, and most never get one.
    Done(Box<Latency>),
}

thread_local! {
    /// A histogram of the latency configuration, for its bucket bounds only.
    static BOUNDS: Histogram<u32> = latency_histogram();
}

/// count / p50 / p99 / max of a few samples, as a histogram fed them gives them: the sample at
/// the quantile's rank (the same rounding as `value_at_quantile`) or the largest, each raised to
/// the top of its bucket (`highest_equivalent`). No 16 KB histogram to clear and scan.
fn summarise_few(v: &[u64]) -> Latency {
    let mut s = v.to_vec();
    s.sort_unstable();
    let Some(&max) = s.last() else {
        return Latency::default();
    };
    let count = s.len() as u64;
    let at = |q: f64| {
        let rank = ((q * count as f64).ceil() as u64).clamp(1, count);
        s[(rank - 1) as usize]
    };
    let (p50, p99) = (at(0.5), at(0.99));
    BOUNDS.with(|h| Latency {
        count,
        p50: h.highest_equivalent(p50),
        p99: h.highest_equivalent(p99),
        max: h.highest_equivalent(max),
    })
}

/// count / p50 / p99 / max of a histogram.
fn summarise(h: &Histogram<u32>) -> Latency {
    if h.is_empty() {
        return Latency::default();
    }
    Latency {
        count: h.len(),
        p50: h.value_at_quantile(0.5),
        p99: h.value_at_quantile(0.99),
        max: h.max(),
    }
}

/// A latency histogram: 2 significant digits from 1 ns to 100 s.
fn latency_histogram() -> Histogram<u32> {
    // Constant, valid bounds (low ≥ 1, high ≥ 2 × low, 2 significant digits): cannot fail.
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 2).expect("valid histogram bounds")
}

impl Lat {
    #[inline(always)]
    fn record(&mut self, v: u64) {
        let v = v.clamp(1, MAX_LATENCY_NS);
        match self {
            Self::Empty => {
                let mut f = Few {
                    v: Vec::with_capacity(4),
                };
                f.v.push(v);
                *self = Self::Few(Box::new(f));
            }
            Self::Few(f) if f.v.len() < FEW => f.v.push(v),
            Self::Few(f) => {
                let mut h = latency_histogram();
                for &x in &f.v {
                    h.saturating_record(x);
                }
                h.saturating_record(v);
                *self = Self::Live(Box::new(h));
            }
            Self::Live(h) => h.saturating_record(v),
            Self::Done(_) => {}
        }
    }
    /// The least value recorded, while the samples or the histogram are kept.
    fn min(&self) -> Option<u64> {
        match self {
            Self::Few(f) => f.v.iter().copied().min(),
            Self::Live(h) => Some(h.min()),
            Self::Done(_) | Self::Empty => None,
        }
    }

    fn summary(&self) -> Latency {
        match self {
            Self::Few(f) => summarise_few(&f.v),
            Self::Live(h) => summarise(h),
            Self::Done(l) => **l,
            Self::Empty => Latency::default(),
        }
    }
    /// Keeps only the summary, freeing the samples or the histogram.
    fn seal(&mut self) {
        if let Self::Few(_) | Self::Live(_) = self {
            *self = Self::Done(Box::new(self.summary()));
        }
    }

    /// Packs the summary: a sealed latency unpacks as it was.
    fn pack(&self, w: &mut Writer) {
        match self {
            Self::Empty => w.u(0),
            _ => {
                let l = self.summary();
                w.u(1);
                for v in [l.count, l.p50, l.p99, l.max] {
                    w.u(v);
                }
            }
        }
    }

    fn unpack(r: &mut Reader<'_>) -> Self {
        if r.bool() {
            Self::Done(Box::new(Latency {
                count: r.u(),
                p50: r.u(),
                p99: r.u(),
                max: r.u(),
            }))
        } else {
            Self::Empty
        }
    }
}

#[inline(always)]
fn record(h: &mut Lat, v: u64) {
    h.record(v);
}

fn latency(h: &Lat) -> Latency {
    h.summary()
}

/// Frame numbers kept per kind of event, for findings to cite.
const SAMPLES: usize = 5;

fn sample(v: &mut Vec<u64>, n: u64) {
    if v.len() < SAMPLES {
        v.push(n);
    }
}

/// What a frame a finding cites shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cite {
    Retx,
    Nak,
    Rnr,
    Ce,
    NotEct,
    Timeout,
    Bad,
    Reorder,
    /// The NAKs that may not be retried, by code (AETH syndrome, IBTA §9.7.5.1.1 Table 44):
    /// invalid request, remote access error, remote operational error, invalid RD request.
    InvalidRequest,
    RemoteAccess,
    RemoteOperational,
    InvalidRd,
    /// The first packet of a go-back-N pass after an ACK timeout (see [`Req::timeouts_in_row`]).
    Retry,
}

impl Cite {
    /// The kind of a NAK with `code` 1–4 (a reserved code above 4 counts as 4, as `naks` does).
    pub(crate) fn fatal_nak(code: u8) -> Self {
        [
            Self::InvalidRequest,
            Self::RemoteAccess,
            Self::RemoteOperational,
            Self::InvalidRd,
        ][usize::from(code.clamp(1, 4) - 1)]
    }
}

/// The first [`SAMPLES`] frame numbers of each [`Cite`] kind of one flow, in one list: most
/// flows cite few kinds or none, and eight lists per flow would mostly hold nothing.
#[derive(Debug, Default)]
pub(crate) struct Cited {
    /// Frame number in the low 56 bits, kind above (a capture never reaches 2^56 frames).
    /// Boxed, a thin pointer: most flows cite nothing, and an empty `Vec` in every flow costs
    /// 16 bytes more.
    #[allow(clippy::box_collection)]
    frames: Option<Box<Vec<u64>>>,
}

impl Cited {
    const KIND_SHIFT: u32 = 56;

    /// Cites frame `n` as `kind`; `full` holds the kinds that have their [`SAMPLES`] frames
    /// (kept in the flow, beside its other bytes).
    #[inline]
    fn add(&mut self, full: &mut u16, kind: Cite, n: u64) {
        let bit = 1u16 << kind as u8;
        if *full & bit != 0 {
            return;
        }
        let tag = (kind as u64) << Self::KIND_SHIFT;
        self.frames
            .get_or_insert_with(Box::default)
            .push(tag | (n & ((1 << Self::KIND_SHIFT) - 1)));
        if self.of(kind).count() == SAMPLES {
            *full |= bit;
        }
    }

    /// The frames cited of `kind`, in the order they came.
    pub(crate) fn of(&self, kind: Cite) -> impl Iterator<Item = u64> + '_ {
        self.frames
            .iter()
            .flat_map(|f| f.iter())
            .filter(move |&&x| x >> Self::KIND_SHIFT == kind as u64)
            .map(|&x| x & ((1 << Self::KIND_SHIFT) - 1))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    Nak,
    Rnr,
}

/// Bytes a flow sent per 10 µs bucket: the bucket being filled, and a ring of the 16 before it
/// by bucket number. The ring keeps the low 32 bits of each bucket number and saturates its byte
/// counts at 4 GB, which changes nothing unless one flow sends over 4 GB in 10 µs (3,400 Tb/s) or
/// a slot's bucket lies an exact multiple of 2^32 buckets (11.9 hours) from the one asked about
/// without having been overwritten since.
#[derive(Debug, Default)]
#[repr(C)]
struct RateRing {
    // The bucket being filled first: every request packet adds to it.
    now: (u64, u64),
    past: [(u32, u32); 16],
}

impl RateRing {
    /// Adds `bytes` sent in 10 µs bucket `bucket`.
    #[inline]
    fn add(&mut self, bucket: u64, bytes: u32) {
        if self.now.0 != bucket {
            let (b, n) = self.now;
            self.past[(b % 16) as usize] = (b as u32, u32::try_from(n).unwrap_or(u32::MAX));
            let (tag, n) = self.past[(bucket % 16) as usize];
            self.now = (
                bucket,
                if tag == bucket as u32 {
                    u64::from(n)
                } else {
                    0
                },
            );
        }
        self.now.1 += u64::from(bytes);
    }

    /// Bytes sent in the ten whole buckets before bucket `now`.
    fn before(&self, now: u64) -> u64 {
        let cur = self.now;
        let cur_slot = (cur.0 % 16) as usize;
        let mut sum = if cur.0 < now && cur.0 + 10 >= now {
            cur.1
        } else {
            0
        };
        for (k, &(tag, n)) in self.past.iter().enumerate() {
            let back = (now as u32).wrapping_sub(tag);
            if k != cur_slot && (1..=10).contains(&back) {
                sum += u64::from(n);
            }
        }
        sum
    }

    /// A data packet of `bytes` sent at `ts`: added to its 10 µs bucket, and to the 100 µs
    /// after the last CNP (`after_cnp`: their end and bytes so far) until they are over, when
    /// their rate goes to `rate_after` (a sum of bit/s and a count).
    #[inline]
    fn sent(
        &mut self,
        after_cnp: &mut Option<(u64, u64)>,
        rate_after: &mut (u64, u64),
        ts: u64,
        bytes: u32,
    ) {
        self.add(ts / 10_000, bytes);
        if let Some((end, acc)) = *after_cnp {
            if ts >= end {
                // Bytes in 100 µs → bit/s (saturating: a damaged capture can claim any frame length).
                rate_after.0 = rate_after.0.saturating_add(acc.saturating_mul(80_000));
                rate_after.1 += 1;
                *after_cnp = None;
            } else {
                *after_cnp = Some((end, acc.saturating_add(u64::from(bytes))));
            }
        }
    }

    /// A CNP at `ts` for the sender: its rate over the ten whole 10 µs buckets before the
    /// CNP's own goes to `rate_before`, and the 100 µs after it start (unless some are under way).
    fn cnp(&self, after_cnp: &mut Option<(u64, u64)>, rate_before: &mut (u64, u64), ts: u64) {
        let bytes = self.before(ts / 10_000);
        rate_before.0 = rate_before.0.saturating_add(bytes.saturating_mul(80_000));
        rate_before.1 += 1;
        if after_cnp.is_none() {
            *after_cnp = Some((ts.saturating_add(100_000), 0));
        }
    }
}

/// A flow's READ responses: their PSNs and first copies' payload (goodput, with the
/// requests'; second copies are not counted as retransmitted packets, as a capture's copy that
/// trails by more answers than a flow remembers looks the same), and the flow as a sender
/// DCQCN slows: the READ's requester is the notification point of CE marks on them, and its
/// CNPs go to the responder's QP.
#[derive(Debug, Default)]
pub(crate) struct ReadSender {
    psns: ResponsePsns,
    /// The PSN of the last response that was no copy: the responder's next follows it.
    last: Option<u32>,
    payload: u64,
    /// Responses sent again whose PSN came before, and first copies below the highest PSN
    /// (lost before the capture point, then sent again): the flow's `retransmitted_packets`
    /// and `gap_filled_packets` beside its requests'.
    resent: u64,
    gap_filled: u64,
    /// The first CE-marked response since the last CNP.
    ce_pending: Option<u64>,
    recent: RateRing,
    after_cnp: Option<(u64, u64)>,
    rate_before: (u64, u64),
    rate_after: (u64, u64),
}

/// What a flow that carries requests keeps for its report: PSNs, messages, retransmissions
/// and their triggers, latencies, and its send rate around CNPs.
#[derive(Debug, Clone, Default)]
#[repr(C)]
pub(crate) struct ReqSum {
    // What every request packet touches first, then what every message touches (`repr(C)`
    // keeps this order, so a packet touches few cache lines).
    pub psn: Option<Tracker>,
    pub first_psn: Option<u32>,
    pub sport: Option<u16>,
    /// Payload bytes of first copies (goodput).
    pub unique_payload: u64,
    pub msgs: MsgStats,
    pub retx: u64,
    pub gap_filled: u64,
    /// Gap-filled packets the network reordered rather than lost, and how many of those the
    /// requester resent all the same (see [`Req::fill`]).
    pub reordered: u64,
    pub reordered_resent: u64,
    /// The most PSNs a reordered packet arrived behind (the highest PSN seen before it, less
    /// its own).
    pub reorder_depth: u64,
    /// The most go-back-N passes after ACK timeouts with no response between them (see
    /// [`Req::timeouts_in_row`]).
    pub timeouts_in_a_row: u64,
    /// The most such passes in a row after which the requester sent no new request before its
    /// connection ended (restarted, or the capture did): a QP out of retries sends nothing more.
    pub stuck_retries: u64,
    /// The most RNR NAKs with no other response between them (see [`Req::rnr_in_row`]).
    pub rnr_naks_in_a_row: u64,
    pub triggers: Triggers,
    ack_lat: Lat,
    read_lat: Lat,
    gap_to_nak: Lat,
    nak_to_retx: Lat,
    /// How long a requester's timer ran before a go-back-N pass it started: from the resent
    /// packet's last sending or the last ACK that acknowledged waiting requests, if later
    /// ([`Req::timed_out`]).
    timeout_wait: Lat,
    rate_before: (u64, u64),
    rate_after: (u64, u64),
}

impl ReqSum {
    /// Counts packet `frame`, `depth` PSNs behind the highest, as reordered (late, not lost).
    fn late(&mut self, depth: u32, frame: u64, (cited, full): (&mut Cited, &mut u16)) {
        self.reordered += 1;
        self.reorder_depth = self.reorder_depth.max(u64::from(depth));
        cited.add(full, Cite::Reorder, frame);
    }

    /// Packs a sealed summary (its PSN tracker first, for [`ReqState::highest`]).
    fn pack(&self) -> Box<[u8]> {
        let mut w = Writer::default();
        match &self.psn {
            None => w.u(0),
            Some(t) => {
                w.u(1);
                t.pack(&mut w);
            }
        }
        w.opt(self.first_psn.map(u64::from));
        w.opt(self.sport.map(u64::from));
        w.u(self.unique_payload);
        self.msgs.pack(&mut w);
        w.u(self.retx);
        w.u(self.gap_filled);
        w.u(self.reordered);
        w.u(self.reordered_resent);
        w.u(self.reorder_depth);
        w.u(self.timeouts_in_a_row);
        w.u(self.stuck_retries);
        w.u(self.rnr_naks_in_a_row);
        let t = &self.triggers;
        for v in [t.nak, t.rnr, t.timeout, t.unknown, t.read_response_gap] {
            w.u(v);
        }
        for l in [
            &self.ack_lat,
            &self.read_lat,
            &self.gap_to_nak,
            &self.nak_to_retx,
            &self.timeout_wait,
        ] {
            l.pack(&mut w);
        }
        for v in [
            self.rate_before.0,
            self.rate_before.1,
            self.rate_after.0,
            self.rate_after.1,
        ] {
            w.u(v);
        }
        w.finish()
    }

    fn unpack(b: &[u8]) -> Self {
        let r = &mut Reader::new(b);
        Self {
            psn: r.bool().then(|| Tracker::unpack(r)),
            first_psn: r.opt_u32(),
            sport: r.opt().map(|v| u16::try_from(v).unwrap_or(u16::MAX)),
            unique_payload: r.u(),
            msgs: MsgStats::unpack(r),
            retx: r.u(),
            gap_filled: r.u(),
            reordered: r.u(),
            reordered_resent: r.u(),
            reorder_depth: r.u(),
            timeouts_in_a_row: r.u(),
            stuck_retries: r.u(),
            rnr_naks_in_a_row: r.u(),
            triggers: Triggers {
                nak: r.u(),
                rnr: r.u(),
                timeout: r.u(),
                unknown: r.u(),
                read_response_gap: r.u(),
            },
            ack_lat: Lat::unpack(r),
            read_lat: Lat::unpack(r),
            gap_to_nak: Lat::unpack(r),
            nak_to_retx: Lat::unpack(r),
            timeout_wait: Lat::unpack(r),
            rate_before: (r.u(), r.u()),
            rate_after: (r.u(), r.u()),
        }
    }

    /// Frees what only live traffic needs (histograms, the PSN window), keeping every summary.
    fn seal(&mut self) {
        for h in [
            &mut self.ack_lat,
            &mut self.read_lat,
            &mut self.gap_to_nak,
            &mut self.nak_to_retx,
            &mut self.timeout_wait,
        ] {
            h.seal();
        }
        if let Some(t) = &mut self.psn {
            t.seal();
        }
    }
}

/// The state of a flow that carries requests while its connection lives: the summary, and
/// the outstanding requests, open message, pending trigger and recent rate behind it.
#[derive(Debug, Default)]
#[repr(C)]
pub(crate) struct Req {
    // Fields every request packet touches first, then the summary (its own hot fields
    // first), then the rest (`repr(C)` keeps this order).
    in_retx: bool,
    prev_read: bool,
    /// The responder's ACKs and NAKs come cut before the end of their AETH (the snaplen):
    /// whether each acknowledged or refused is unknown, so no pass is taken for an ACK
    /// timeout's and no NAK is expected to be seen.
    blind: bool,
    pending: Option<Trigger>,
    /// The last PSN sequence NAK was set aside by a burst that began below its PSN (see
    /// `Class::Retransmitted` in [`Analyzer::request`]) and that burst is under way.
    nak_set_aside: bool,
    /// The last gap-filled PSN, until what follows it tells whether the network lost that
    /// packet or only delayed it (then until the next retransmission, which may resend it):
    /// the PSN, what is known, its frame and how many PSNs it arrived behind.
    fill: Option<(u32, Fill, u64, u32)>,
    after_cnp: Option<(u64, u64)>,
    msg_open: Option<(u64, Operation)>,
    seen_n: u32,
    /// Writes to `seen` until its times run newest to oldest again: set to [`SEEN`] when a
    /// request came earlier than the one before it (files merged out of order), so a search
    /// may stop at the first request too old only while this is 0.
    seen_unsorted: u8,
    /// New request PSNs that are multiples of [`SENT_MARK_PSNS`] and when each came, the last
    /// [`SENT_MARKS`], newest at `sent_marks_n - 1` modulo `SENT_MARKS`: when a PSN older
    /// than `seen` holds was at the latest first sent (see [`Req::sent_since`]).
    sent_psns: [u32; SENT_MARKS],
    sent_at: [u64; SENT_MARKS],
    sent_marks_n: u32,
    /// When the last NAK (or answer cut before its AETH) came: for [`NAK_QUIET_NS`] after it
    /// no copy is taken for the capture's (but in pairs, see `pairs`, or with every NAK served
    /// in a capture known to hold packets twice). An RNR NAK is none: the requester resends
    /// only after the RNR timer, at least 10 µs (IBTA Table 45), so never a packet it sent
    /// less than [`DUP_NS`] before.
    last_nak_at: Option<u64>,
    /// How many requests in a row had their copies (none left `seen` without, twins aside: see
    /// [`TWINNED`]): from [`PAIRED`] on, the capture holds every packet of the flow twice, and a
    /// copy of one whose copy has not come is the capture's whatever NAKs came (see
    /// [`Req::duplicate`]).
    pairs: u8,
    /// The PSN of the last request taken for the capture's copy: the copies come in the order
    /// of their packets.
    last_copy: Option<u32>,
    /// When an ACK last acknowledged requests waiting for one (0: never): a requester's ACK
    /// timer restarts then, so no timeout fires sooner than [`DUP_NS`] after it.
    progress_at: u64,
    /// The highest PSN an ACK or READ response acknowledged: no requester resends it.
    acked: Option<u32>,
    /// When the last requests resent came (see [`Analyzer::response_copy`]); allocated at the
    /// first.
    resends: Option<Box<Resends>>,
    ackreq: VecDeque<(u32, u64)>,
    /// Frame of the newest request in `ackreq` or `reads` (the one a stall leaves unanswered).
    last_wait_frame: u64,
    pub s: ReqSum,
    /// Bytes sent per 10 µs bucket lately, for the rate before a CNP.
    recent: RateRing,
    reads: VecDeque<(u32, u64)>,
    gap_open: Option<u64>,
    nak_ts: Option<u64>,
    /// The time from a NAK to its pass lately (ns, a moving average; see `nak_window`).
    nak_react: u32,
    /// The most `timeouts_in_row` since the last new request.
    retries_since_new: u32,
    /// The last resend or gap fill: when it came, `seen_n` after it, and how many came in a
    /// row up to it (no new request between them).
    pass_at: u64,
    pass_seen_n: u32,
    pass_run: u8,
    ce_pending: Option<u64>,
    /// The highest PSN of the READ responses answering this flow: a READ request resent below
    /// it re-reads responses the requester found missing.
    read_answered: Option<u32>,
    /// When the last READ response answering this flow came.
    read_response_at: u64,
    /// The READ response PSNs asked for again (from the lowest a READ request resent or
    /// re-read, up to the highest answered then) whose responses sent again have not all come,
    /// and whether one of them came since: a response among them is no copy however late it
    /// comes behind its request (a responder sends them after the responses it had queued).
    reasked: Option<(u32, u32, bool)>,
    /// The PSN and DMA length of the last READ request resent (`reasked` reaches to its end).
    reask_psn: u32,
    reask_len: u32,
    /// The last [`UD_SEEN`] packets of a UD flow (source QP, PSN and payload length as one
    /// key, and when), newest at `ud_seen_n - 1` modulo `UD_SEEN` (which stays at least
    /// `UD_SEEN` once reached): a packet that matches one less than [`DUP_NS`] before is the
    /// capture's copy of it, as UD is never resent.
    ud_seen: [(u64, u64); UD_SEEN],
    ud_seen_n: u8,
    /// PSN sequence NAKs for other PSNs that came while one was pending: each starts a
    /// go-back-N burst of its own (a strict receiver NAKs again once a late packet let it
    /// move on) unless a burst under way resends its PSN; the PSN of the last, and the lowest
    /// since none was pending (a pass that served some leaves it).
    naks_queued: u8,
    nak_psn: u32,
    nak_low: u32,
    /// Go-back-N passes since the last response (ACK, NAK, READ response) that no NAK or RNR
    /// NAK started, so ACK timeouts did: the requester's retries of its oldest request. A
    /// pass starts with the first resend after new data, with a resend that goes back, or
    /// with a jump forward to the PSN a NAK or RNR NAK named (the requester starts over there
    /// before the pass it was making reached it).
    timeouts_in_row: u32,
    /// NAKs and RNR NAKs that came since the last pass started, each the trigger of a pass to
    /// come, the PSN the last of them named, and whether that was an RNR NAK's.
    naks_since_pass: u8,
    nak_psn_since: Option<u32>,
    nak_since_rnr: bool,
    /// The PSN of the last resent packet.
    retx_psn: u32,
    /// The PSN and time of the first packet of the last go-back-N pass.
    last_pass: Option<(u32, u64)>,
    /// RNR NAKs since the last other response: the requester's RNR retries.
    rnr_in_row: u32,
    /// The last [`ACK_MARKS`] values `acked` took, newest at `ack_marks_n - 1` modulo
    /// `ACK_MARKS`: a requester whose timer fires while an ACK is on its way starts its pass
    /// one past an ACK it did get, a PSN the capture saw acknowledged.
    ack_marks: [u32; ACK_MARKS],
    ack_marks_n: u8,
    /// The last READ responses found lost (see [`Lost`]); allocated at the first.
    read_lost: Option<Box<Lost>>,
    /// The last [`SEEN`] request packets that were no copies, (PSN, time), newest at
    /// `seen_n - 1` modulo `SEEN`, the top bit of the PSN set once the capture's copy of the
    /// packet came ([`Req::duplicate`]), [`DAMAGED`] for a damaged packet; how many were
    /// written is `seen_n`. Last: it is the
    /// largest field, and a packet touches one of its lines.
    seen: SeenRing,
}

/// What is known of a gap-filling first copy, a packet that arrived after a higher PSN. After
/// a loss it is the resent packet itself: a NAK came before it, or the rest of a go-back-N
/// burst (higher PSNs) follows it. It was only delayed (reordered) when the requester's next
/// retransmission resends that very PSN (a strict receiver NAKed the gap and go-back-N resent
/// what had arrived), or when it came with no NAK, RNR NAK or retransmission pending on a flow
/// whose ACKs are seen and new data follows it (a receiver that accepts packets out of order,
/// as adaptive routing and packet spraying need).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fill {
    /// Nothing was pending: its retransmission trigger is left uncounted until a
    /// retransmission shows it was one.
    Deferred,
    /// A trigger was pending (counted): reordered only if its PSN is resent next.
    Waiting,
    /// Reordered: whether the next retransmission resends it is still to be seen.
    Reordered,
}

/// A flow's request state: none yet, live, or the summary alone, packed, once CM closed its
/// connection (so a closed connection costs about 80 bytes, not its live state). At most one
/// is set.
#[derive(Debug, Default)]
pub(crate) struct ReqState {
    live: Option<Box<Req>>,
    sealed: Option<Box<[u8]>>,
}

impl ReqState {
    /// The live state, created on first use or again for traffic after the close (its
    /// summary carries on; what was in flight is gone).
    #[inline]
    fn get(&mut self) -> &mut Req {
        let sealed = &mut self.sealed;
        self.live.get_or_insert_with(|| Self::revive(sealed))
    }

    /// A new live state around the summary (out of line: once per flow, not per packet).
    #[cold]
    #[inline(never)]
    fn revive(sealed: &mut Option<Box<[u8]>>) -> Box<Req> {
        Box::new(Req {
            s: sealed
                .take()
                .map(|b| ReqSum::unpack(&b))
                .unwrap_or_default(),
            ..Req::default()
        })
    }

    /// The live state, created on first use, but not for a closed connection.
    #[inline]
    fn open(&mut self) -> Option<&mut Req> {
        if self.sealed.is_some() {
            None
        } else {
            Some(self.get())
        }
    }

    /// The live state, if there is one.
    #[inline]
    fn live(&mut self) -> Option<&mut Req> {
        self.live.as_deref_mut()
    }

    /// The live state, if there is one.
    #[inline]
    fn live_ref(&self) -> Option<&Req> {
        self.live.as_deref()
    }

    /// Requests still waiting for their ACK or READ response: how many, the oldest one's
    /// (PSN, timestamp) and the newest one's frame. None for a closed connection.
    pub(crate) fn waiting(&self) -> Option<(usize, (u32, u64), u64)> {
        let r = self.live_ref()?;
        let oldest = [r.ackreq.front(), r.reads.front()]
            .into_iter()
            .flatten()
            .min_by_key(|&&(_, ts)| ts)?;
        Some((r.ackreq.len() + r.reads.len(), *oldest, r.last_wait_frame))
    }

    /// The summary, if the flow carried requests (unpacked when sealed).
    pub fn sum(&self) -> Option<std::borrow::Cow<'_, ReqSum>> {
        match (&self.live, &self.sealed) {
            (Some(r), _) => Some(std::borrow::Cow::Borrowed(&r.s)),
            (None, Some(b)) => Some(std::borrow::Cow::Owned(ReqSum::unpack(b))),
            (None, None) => None,
        }
    }

    /// The highest request PSN, without unpacking a sealed summary.
    fn highest(&self) -> Option<u32> {
        match (&self.live, &self.sealed) {
            (Some(r), _) => r.s.psn.as_ref().and_then(Tracker::highest),
            (None, Some(b)) => {
                let r = &mut Reader::new(b);
                if r.bool() {
                    Tracker::packed_highest(r)
                } else {
                    None
                }
            }
            (None, None) => None,
        }
    }

    /// Keeps only the summary, packed. Returns the frame of a reorder that the end of the
    /// flow's traffic confirmed ([`Req::settle`]).
    fn seal(&mut self) -> Option<u64> {
        let mut r = self.live.take()?;
        let late = r.settle();
        let mut s = r.s;
        s.seal();
        self.sealed = Some(s.pack());
        late
    }

    /// Summarises the live state's latencies in place (the end of the capture: nothing is
    /// packed, as every report is built next). Returns what [`ReqState::seal`] returns.
    fn summarise(&mut self) -> Option<u64> {
        let r = self.live.as_mut()?;
        let late = r.settle();
        r.s.seal();
        late
    }
}

impl Req {
    /// The connection ends: the retries after its last new request are the ones it may have
    /// run out of (`stuck_retries`).
    fn end_retries(&mut self) {
        let n = u64::from(std::mem::take(&mut self.retries_since_new));
        self.s.stuck_retries = self.s.stuck_retries.max(n);
    }

    /// At the end of the flow's traffic: a gap fill without a pending trigger that nothing
    /// resent was reordered, unless the responder's answers were cut before their AETH
    /// (`blind`: the NAK that resends it may be among them, its go-back-N pass beyond the
    /// capture's end).
    /// Returns the late packet's frame, for the flow to cite.
    fn settle(&mut self) -> Option<u64> {
        self.end_retries();
        let (_, Fill::Deferred, frame, depth) = self.fill.take()? else {
            return None;
        };
        if self.blind {
            return None;
        }
        self.s.reordered += 1;
        self.s.reorder_depth = self.s.reorder_depth.max(u64::from(depth));
        Some(frame)
    }

    /// An acknowledgement at `ts` of every request up to PSN `last` (ACKs coalesce, IBTA
    /// §9.7.5.1.2): the requests with AckReq it answers leave the queue, their latency recorded
    /// for the flow and in `by_class` under the flow's connection class.
    #[inline(always)]
    fn acknowledged(
        &mut self,
        last: u32,
        ts: u64,
        by_class: &mut BTreeMap<u8, Histogram<u32>>,
        class: u8,
    ) {
        self.acked_up_to(last);
        if self
            .ackreq
            .front()
            .is_none_or(|&(p, _)| psn_diff(p, last) > 0)
        {
            return;
        }
        self.progress_at = ts;
        let h = by_class.entry(class).or_insert_with(latency_histogram);
        while let Some(&(p, t)) = self.ackreq.front() {
            if psn_diff(p, last) > 0 {
                break;
            }
            self.ackreq.pop_front();
            let lat = ts.saturating_sub(t);
            record(&mut self.s.ack_lat, lat);
            h.saturating_record(lat.clamp(1, MAX_LATENCY_NS));
        }
    }

    /// Moves `acked` on to `last` if that is newer, marking it in `ack_marks`.
    fn acked_up_to(&mut self, last: u32) {
        if self.acked.is_none_or(|a| psn_diff(last, a) > 0) {
            self.acked = Some(last);
            self.ack_marks[usize::from(self.ack_marks_n) % ACK_MARKS] = last;
            // Past 255 on to 8, the same slot modulo `ACK_MARKS`, with every mark kept.
            self.ack_marks_n = self.ack_marks_n.checked_add(1).unwrap_or(ACK_MARKS as u8);
        }
    }

    /// An ACK or NAK at `ts` for PSN `psn` whose AETH the capture cut, so its kind is unknown:
    /// either way every request before `psn` arrived (IBTA §9.7.5.1.2), and an ACK's PSN is
    /// the last it acknowledges, so the requests with AckReq up to `psn` leave the queue,
    /// their latency unrecorded (a NAK's may come one answer late). Only the requests before
    /// `psn` count as acknowledged: a NAK's PSN is resent next.
    fn answered_blind(&mut self, psn: u32, ts: u64) {
        self.blind = true;
        self.timeouts_in_row = 0;
        self.rnr_in_row = 0;
        // It may be a NAK: a resend soon after it is no capture's copy (see `Req::duplicate`).
        self.last_nak_at = Some(ts);
        self.acked_up_to(psn.wrapping_sub(1) & 0xff_ffff);
        while self
            .ackreq
            .front()
            .is_some_and(|&(p, _)| psn_diff(p, psn) <= 0)
        {
            self.ackreq.pop_front();
            self.progress_at = ts;
        }
    }

    /// A go-back-N pass an ACK timeout started at `ts` with PSN `psn` (the newest request in
    /// `seen`): records how long the requester's timer ran (`timeout_wait`), from when `psn`
    /// was last sent before (still in `seen`, or the first of the last pass) or from the last
    /// ACK that acknowledged waiting requests, if later.
    fn timed_out(&mut self, psn: u32, ts: u64) {
        let seen = self.sent_before_newest(psn);
        let pass = self.last_pass.filter(|&(p, _)| p == psn).map(|(_, t)| t);
        if let Some(sent) = seen.max(pass) {
            let wait = ts.saturating_sub(sent.max(self.progress_at));
            record(&mut self.s.timeout_wait, wait);
        }
    }

    /// When `psn` was last sent before the newest request in `seen` (the one being read), if
    /// still there.
    fn sent_before_newest(&self, psn: u32) -> Option<u64> {
        let n = (self.seen_n as usize).min(SEEN);
        let newest = self.seen_n.wrapping_sub(1) as usize;
        (1..n)
            .map(|k| self.seen[newest.wrapping_sub(k) % SEEN])
            .find(|&(p, ..)| p & PSN_BITS == psn)
            .map(|(_, t, _)| t)
    }

    fn open_message(&mut self, payload: u64, op: Operation) {
        self.msg_open = Some((payload, op));
    }

    /// How many requests back in `seen` (0: the newest) one that `is` accepts (its PSN, with
    /// [`COPIED`]) was sent less than `within` ns before `ts`, the newest such.
    fn sent_back(&self, ts: u64, within: u64, is: impl Fn(u32) -> bool) -> Option<usize> {
        let n = (self.seen_n as usize).min(SEEN);
        let newest = self.seen_n.wrapping_sub(1) as usize;
        for k in 0..n {
            let (p, t, _) = self.seen[newest.wrapping_sub(k) % SEEN];
            if t > ts {
                continue;
            }
            if ts - t < within {
                if is(p) {
                    return Some(k);
                }
            } else if self.seen_unsorted == 0 {
                // Every older one came earlier still.
                return None;
            }
        }
        None
    }

    /// Whether a go-back at `ts` to `psn` within a burst, no NAK pending, is the pass a READ
    /// response gap began: a response found lost (damaged or skipped) since the last pass
    /// began, less than [`ACT_NS`] before, below `psn`. The requester goes back to the READ
    /// to ask again for what it lacks, or past it when the responses it lacked came meanwhile
    /// (answers to that READ asked twice): no timer's retry.
    fn read_gap_pass(&self, psn: u32, ts: u64) -> bool {
        self.in_retx
            && self.pending.is_none()
            && self
                .read_lost
                .as_deref()
                .and_then(Lost::newest)
                .is_some_and(|(p, at)| {
                    psn_diff(psn, p) > 0
                        && self.last_pass.is_none_or(|(_, t)| at >= t)
                        && ts.saturating_sub(at) < ACT_NS
                })
    }

    /// Whether a resend at `ts` can be the last NAK's doing: at least [`NAK_TURN_NS`] after
    /// it, or no NAK's time is known. With timestamps of `unit` ns, as far as they tell: the
    /// two came up to a unit more apart than the units they were stamped in (two in one
    /// microsecond, less than one apart, however [`Analyzer::spread_ties`] spread them).
    fn nak_turned(&self, ts: u64, unit: u64) -> bool {
        self.last_nak_at.is_none_or(|n| {
            stamped(ts, unit)
                .saturating_sub(stamped(n, unit))
                .saturating_add(unit - 1)
                >= NAK_TURN_NS
        })
    }

    /// Whether a burst that begins at `psn` at `ts`, with no NAK pending, is the pass of the
    /// last PSN sequence NAK, which reached the requester late (behind a queue from the
    /// capture point to it; a burst under way resent `psn` meanwhile, taken to serve it): that
    /// NAK named `psn` within [`Req::nak_window`], and `psn` was last sent less than a quarter
    /// of the flow's shortest wait before a timeout's resend ago, too soon for its ACK timer.
    #[cold]
    fn late_nak_pass(&self, psn: u32, ts: u64) -> bool {
        let Some(shortest) = self.s.timeout_wait.min() else {
            return false;
        };
        let named = self.nak_named() == Some(psn)
            && self
                .last_nak_at
                .is_some_and(|n| ts.saturating_sub(n) < self.nak_window());
        // `seen`'s newest is this resend.
        named
            && self
                .sent_before_newest(psn)
                .is_some_and(|t| ts.saturating_sub(t).saturating_mul(4) < shortest)
    }

    /// The PSN the last PSN sequence NAK named, once a NAK came (before any, `nak_psn` is no
    /// NAK's).
    fn nak_named(&self) -> Option<u32> {
        self.last_nak_at.map(|_| self.nak_psn)
    }

    /// How long after a PSN sequence NAK its pass may come: [`NAK_QUIET_NS`], or three times
    /// the time from a NAK to its pass lately (a requester behind a queue to the capture
    /// point whose depth grows and shrinks: its NAKs' passes come late together).
    fn nak_window(&self) -> u64 {
        NAK_QUIET_NS.max(3 * u64::from(self.nak_react))
    }

    /// When request `psn` was sent before `by` so that an answer beginning at `by` answers that
    /// send, if among those in `seen`: the first that came whole (the responder answers in
    /// order, and drops a damaged one), else the last. A READ answered before and sent whole
    /// again has its first send found: what came after it may be taken for answered later
    /// than it was, an alike answer then read as a duplicate ACK rather than the capture's
    /// copy.
    fn sent_before(&self, psn: u32, by: u64) -> Option<u64> {
        let n = (self.seen_n as usize).min(SEEN);
        let sends = self.seen[..n]
            .iter()
            .filter(|&&(p, t, _)| p & PSN_BITS == psn && t < by);
        sends
            .clone()
            .filter(|&&(p, ..)| p & DAMAGED == 0)
            .map(|&(_, t, _)| t)
            .min()
            .or_else(|| sends.map(|&(_, t, _)| t).max())
    }

    /// Whether request `psn` was first sent less than `within` before `ts` by `sent_psns`:
    /// the newest mark at or before it in PSN order came then, and new PSNs come in order.
    fn sent_since(&self, psn: u32, ts: u64, within: u64) -> bool {
        let n = (self.sent_marks_n as usize).min(SENT_MARKS);
        let newest = self.sent_marks_n.wrapping_sub(1) as usize;
        (0..n)
            .map(|k| newest.wrapping_sub(k) % SENT_MARKS)
            .find(|&i| (0..FAR_PSN as i32).contains(&psn_diff(psn, self.sent_psns[i])))
            .is_some_and(|i| self.sent_at[i] <= ts && ts - self.sent_at[i] < within)
    }

    /// What the two requests before the newest in `seen` tell of the requester's pace: when
    /// they came (0 before any) and their lengths.
    fn pace(&self) -> Pace {
        let at = |k: u32| self.seen[self.seen_n.wrapping_sub(k) as usize % SEEN];
        let (before, last) = (at(3), at(2));
        Pace {
            at: [if self.seen_n >= 3 { before.1 } else { u64::MAX }, last.1],
            lens: [before.2, last.2],
        }
    }

    /// Remembers request `psn` (with [`DAMAGED`] for a damaged one) at `ts` in `seen` (it is
    /// no copy); one whose copy never came leaving it ends a run of pairs, unless it and the
    /// request after it were twins ([`TWINNED`]: in a capture that holds packets twice, a copy
    /// read as a resend must not hide that it does).
    #[inline]
    fn remember(&mut self, psn: u32, ts: u64, len: u32) {
        let before = self.seen[self.seen_n.wrapping_sub(1) as usize % SEEN].1;
        self.seen_unsorted = if ts < before && self.seen_n > 0 {
            SEEN as u8
        } else {
            self.seen_unsorted.saturating_sub(1)
        };
        let i = self.seen_n as usize % SEEN;
        if self.seen_n as usize >= SEEN {
            let old = self.seen[i].0;
            if old & TWINNED != 0 {
                self.seen[(i + 1) % SEEN].0 |= TWIN;
            } else if self.pairs > 0 && old & (COPIED | TWIN) == 0 {
                self.pairs = 0;
            }
        }
        self.seen[i] = (psn, ts, len);
        self.seen_n = self.seen_n.wrapping_add(1);
    }

    /// Whether a READ request for `psn` reads again what this flow's READs were answered:
    /// `Some(true)` when the responder answered beyond it (the requester found a response
    /// missing after later ones came and reads again from the first one missing, with no ACK
    /// timeout), `Some(false)` when it is the PSN after the last one answered while an earlier
    /// READ waits for its last response (one that went missing at the end, read again after the
    /// ACK timeout), `None` otherwise.
    #[cold]
    fn reread(&self, psn: u32) -> Option<bool> {
        match self.read_answered.map(|h| psn_diff(h, psn)) {
            Some(1..) => Some(true),
            Some(-1)
                if self
                    .reads
                    .front()
                    .is_some_and(|&(q, _)| psn_diff(psn, q) > 0) =>
            {
                Some(false)
            }
            _ => None,
        }
    }

    /// `reasked`, reaching to the end of the last READ asked again at the responses' MTU
    /// `mtu` (the largest first or middle READ response payload).
    fn reasked_to_end(&self, mtu: u32) -> Option<(u32, u32, bool)> {
        let (from, upto, began) = self.reasked?;
        let Some(n) = read_response_psns(self.reask_len, mtu) else {
            return Some((from, upto, began));
        };
        let end = self.reask_psn.wrapping_add(n - 1) & 0xff_ffff;
        Some((
            from,
            if psn_diff(end, upto) > 0 { end } else { upto },
            began,
        ))
    }

    /// Remembers READ response `psn` as lost at `ts`, its flow's MTU `mtu` (see [`Lost`]).
    #[cold]
    fn lost(&mut self, psn: u32, mtu: u32, ts: u64) {
        let l = self.read_lost.get_or_insert_with(Box::default);
        l.mtu = mtu;
        // Found lost again at once (damaged, then passed over by the next response): one loss.
        if l.newest().is_some_and(|(p, _)| p == psn) {
            l.at[usize::from(l.n.wrapping_sub(1)) % LOST] = ts;
            return;
        }
        let i = l.n as usize % LOST;
        (l.psns[i], l.at[i], l.damaged_at) = (psn, ts, 0);
        // Past 255 it stays at least `LOST` (every slot holds one), the next slot still next.
        l.n = l.n.checked_add(1).unwrap_or(LOST as u8);
    }

    /// READ responses from `from` up to `to` (not included) never came, found at `ts`: the
    /// first of them that a READ's responses use is lost (see [`Req::lost`]). The others are
    /// requests answered by ACKs, which READ responses pass over as they go on.
    #[cold]
    fn passed_over(&mut self, from: u32, to: u32, mtu: u32, ts: u64) {
        let n = psn_diff(to, from).clamp(0, 64) as u32;
        let t = self.s.psn.as_ref();
        if let Some(p) = (0..n)
            .map(|k| from.wrapping_add(k) & 0xff_ffff)
            .find(|&p| !t.is_some_and(|t| t.other_request(p)))
        {
            self.lost(p, mtu, ts);
        }
    }

    /// READ request `psn` was resent (or reads again), asking for `dma_len` bytes: the
    /// responder sends the responses from `psn` on again, up to the highest answered so far
    /// and beyond, to the READ's end.
    fn reask(&mut self, psn: u32, dma_len: Option<u32>) {
        (self.reask_psn, self.reask_len) = (psn, dma_len.unwrap_or(0));
        let upto = self.read_answered.unwrap_or(psn);
        self.reasked = Some(match self.reasked {
            Some((from, u, _)) => (
                if psn_diff(psn, from) < 0 { psn } else { from },
                if psn_diff(upto, u) > 0 { upto } else { u },
                false,
            ),
            None => (psn, upto, false),
        });
    }

    /// Marks new request `psn` at `ts` in `sent_psns` when it is a multiple of
    /// [`SENT_MARK_PSNS`] (a READ request that consumes several PSNs may skip one), or the
    /// flow's first: the PSNs before the first multiple were sent no sooner.
    #[inline]
    fn mark_sent(&mut self, psn: u32, ts: u64) {
        if psn % SENT_MARK_PSNS == 0 || self.sent_marks_n == 0 {
            let m = self.sent_marks_n as usize % SENT_MARKS;
            self.sent_psns[m] = psn;
            self.sent_at[m] = ts;
            self.sent_marks_n = self.sent_marks_n.wrapping_add(1);
        }
    }

    /// Whether request PSN `psn`, seen before on the flow whose highest PSN was `highest`, is
    /// the capture's second copy of a packet at `ts` (then marked as come in `seen`, and no
    /// resend). It must be less than [`DUP_NS`] after a first copy whose own copy has not
    /// come: sooner than that a requester resends only when a NAK asks (or an RNR NAK, whose
    /// trigger stays pending until the resend), and the NAK is in the capture when the
    /// responder's packets are.
    /// - Once the flow's last [`PAIRED`] requests had their copies, the capture holds each
    ///   packet twice: a copy is the capture's whatever NAKs came (a resend they asked for is
    ///   the first of its own pair, after the copy of the packet it resends).
    /// - Else no NAK may be pending or have come in the last [`NAK_QUIET_NS`] (a NAK that came
    ///   before the first copy may still be what resends it, go-back-N restarting at a PSN it
    ///   has just sent; an RNR NAK's resend waits for its timer, longer than `DUP_NS`). A copy
    ///   right after its first (the flow's last request) is then the capture's unless the
    ///   first was a late packet (see `Req::fill`); a burst after a timeout starts at the
    ///   oldest request, which waited longer than `DUP_NS`. In a capture known to hold
    ///   packets twice (`doubled`, see [`Analyzer::duplicate`]), such a copy is the capture's
    ///   also when a NAK came lately but no NAK is pending or left unserved by a pass
    ///   (`naks_since_pass`): none is left to ask for the packet again.
    /// - One that comes a few packets late (a mirror whose copies trail) is the capture's
    ///   when moreover no resend is under way (a burst may come back over a PSN sent just
    ///   before its timeout, or after a late packet) and either the responder's packets are
    ///   in the capture (`answered`), so a NAK would be, or it is the highest PSN, which no
    ///   NAK asks for.
    /// - In both cases a copy [`ADP_NS`] or more after its first may be a NIC's adaptive
    ///   resend: it is the capture's only if the packet before it (PSN - 1) was copied or
    ///   came again since its first, or is not remembered.
    /// - One that trails by more requests than `seen` holds, which spans less than
    ///   [`DUP_NS`] then, is the capture's when the capture is known to hold packets twice
    ///   (`doubled`, see [`Analyzer::duplicate`]), no NAK is pending, no resend is under way
    ///   (a go-back-N pass resends PSNs older than `seen` too), and its PSN is beyond the last
    ///   copy's. Found in `seen` in such a capture, it is the capture's when no NAK is pending
    ///   or recent.
    /// - A READ request (`is_read`, for `dma_len` bytes) that asks again for a response found
    ///   lost after its first copy ([`Lost`]) is a re-read, never a copy.
    /// - A first copy is one that came as damaged as this one (`damaged`: a bad ICRC): the
    ///   capture's copy has the same bytes, and a whole request after a damaged one is its
    ///   resend ([`DAMAGED`]).
    #[cold]
    fn duplicate(
        &mut self,
        psn: u32,
        ts: u64,
        highest: Option<u32>,
        answered: bool,
        doubled: bool,
        (is_read, dma_len, damaged): (bool, Option<u32>, bool),
    ) -> bool {
        let n = (self.seen_n as usize).min(SEEN);
        let newest = self.seen_n.wrapping_sub(1) as usize;
        // A first copy whose own copy has not come (not marked `COPIED`), as damaged as this.
        let key = seen_key(psn, damaged);
        let found = self.sent_back(ts, DUP_NS, |p| p & !(TWINNED | TWIN) == key);
        let quiet = || {
            self.pending != Some(Trigger::Nak)
                && self
                    .last_nak_at
                    .is_none_or(|t| ts.saturating_sub(t) >= NAK_QUIET_NS)
        };
        let Some(back) = found else {
            // `seen_n % SEEN` is the oldest entry once `seen` is full.
            let oldest = self.seen[self.seen_n as usize % SEEN].1;
            let copy = doubled
                && n == SEEN
                && !self.in_retx
                && self.pending.is_none()
                && ts.saturating_sub(oldest) < DUP_NS
                && self.last_copy.is_none_or(|c| psn_diff(psn, c) > 0);
            if copy {
                self.last_copy = Some(psn);
            }
            return copy;
        };
        // The packet before (PSN - 1) was copied too, or came again since this one's first
        // (its copy, read as a resend: copies come in the order of their packets), as in a
        // capture that holds packets twice; or it is not remembered.
        let before_copied = || {
            let prev = psn.wrapping_sub(1) & 0xff_ffff;
            let mut known = false;
            for k in 0..n {
                let p = self.seen[newest.wrapping_sub(k) % SEEN].0;
                if p & PSN_BITS == prev {
                    if p & COPIED != 0 || k < back {
                        return true;
                    }
                    known = true;
                }
            }
            !known
        };
        let first_at = self.seen[newest.wrapping_sub(back) % SEEN].1;
        // A READ asking again for a response found lost since its first copy: the requester
        // reads again, however soon.
        if let (true, Some(l)) = (is_read, &self.read_lost) {
            if l.asked_again(psn, dma_len.unwrap_or(0), first_at) {
                return false;
            }
        }
        // A NAK's go-back-N pass begins at the PSN it names (IBTA §9.7.5.1.2): a packet beyond
        // it, sent again right after its first copy with no pass under way, is no resend that
        // NAK asked for, unless the NAK is still to be served and every PSN before the packet
        // is acknowledged: its pass then begins at the first PSN not acknowledged.
        let beyond_nak = back == 0
            && !self.in_retx
            && self.nak_named().is_some_and(|n| psn_diff(psn, n) > 0)
            && !(self.pending == Some(Trigger::Nak)
                && self.acked.is_some_and(|a| psn_diff(psn, a) == 1));
        let served = back == 0 && self.pending.is_none() && self.naks_since_pass == 0;
        let copy = self.pairs >= PAIRED
            || (doubled && (quiet() || served))
            || ((quiet() || beyond_nak)
                && (ts - first_at < ADP_NS || before_copied())
                && if back == 0 {
                    self.fill.is_none_or(|f| f.0 != psn)
                } else {
                    (answered || highest == Some(psn)) && !self.in_retx && self.fill.is_none()
                });
        if copy {
            self.seen[newest.wrapping_sub(back) % SEEN].0 |= COPIED;
            self.pairs = self.pairs.saturating_add(1);
            self.last_copy = Some(psn);
        } else if back == 0 {
            self.seen[newest % SEEN].0 |= TWINNED;
        }
        copy
    }

    /// A new connection on the flow's QP number ([`Analyzer::restart`]): its PSNs start
    /// afresh, and nothing the old one left outstanding (requests waiting for an answer, an
    /// open message, a NAK, a gap, a CE mark) is carried over. The summary's counters stay.
    fn restart(&mut self) {
        self.end_retries();
        if let Some(t) = &mut self.s.psn {
            t.restart();
        }
        let s = std::mem::take(&mut self.s);
        let recent = std::mem::take(&mut self.recent);
        *self = Self {
            s,
            recent,
            ..Self::default()
        };
    }

    #[inline(always)]
    fn close_message(&mut self, size: u64, op: Operation) {
        let m = &mut self.s.msgs;
        m.bytes += size;
        match op {
            Operation::SendFirst
            | Operation::SendMiddle
            | Operation::SendLast
            | Operation::SendLastImm
            | Operation::SendOnly
            | Operation::SendOnlyImm
            | Operation::SendLastInv
            | Operation::SendOnlyInv => m.send += 1,
            Operation::ReadRequest => m.read += 1,
            Operation::CmpSwap | Operation::FetchAdd | Operation::AtomicWrite => m.atomic += 1,
            _ => m.write += 1,
        }
        if m.count() == 1 || size < m.min_size {
            m.min_size = size;
        }
        m.max_size = m.max_size.max(size);
        m.add_size(size);
    }
}

/// Messages reassembled on a flow ([`report::Messages`] while counting): the sizes by power of
/// two are words sorted by size, the exponent in the top byte and the count below it.
#[derive(Debug, Clone, Default)]
pub(crate) struct MsgStats {
    send: u64,
    write: u64,
    read: u64,
    atomic: u64,
    bytes: u64,
    min_size: u64,
    max_size: u64,
    read_bytes_requested: u64,
    read_bytes_returned: u64,
    sizes: Vec<u64>,
}

impl MsgStats {
    const SHIFT: u32 = 56;

    fn pack(&self, w: &mut Writer) {
        for v in [
            self.send,
            self.write,
            self.read,
            self.atomic,
            self.bytes,
            self.min_size,
            self.max_size,
            self.read_bytes_requested,
            self.read_bytes_returned,
        ] {
            w.u(v);
        }
        w.u(self.sizes.len() as u64);
        for &s in &self.sizes {
            w.u(s);
        }
    }

    fn unpack(r: &mut Reader<'_>) -> Self {
        let mut m = Self {
            send: r.u(),
            write: r.u(),
            read: r.u(),
            atomic: r.u(),
            bytes: r.u(),
            min_size: r.u(),
            max_size: r.u(),
            read_bytes_requested: r.u(),
            read_bytes_returned: r.u(),
            sizes: Vec::new(),
        };
        let n = r.u();
        // Never more entries than bytes left (each takes at least one).
        m.sizes = (0..n.min(r.left() as u64)).map(|_| r.u()).collect();
        m
    }

    /// Messages of every kind.
    fn count(&self) -> u64 {
        self.send + self.write + self.read + self.atomic
    }

    /// Counts a message of `size` bytes under the power of two at or above it.
    #[inline(always)]
    fn add_size(&mut self, size: u64) {
        // Sizes past 2^63 (never reached: they sum packet payloads) count under 2^63.
        let exp = u64::from(
            size.max(1)
                .checked_next_power_of_two()
                .map_or(63, u64::trailing_zeros),
        );
        match self.sizes.binary_search_by_key(&exp, |w| w >> Self::SHIFT) {
            Ok(i) => self.sizes[i] += 1,
            Err(i) => self.sizes.insert(i, exp << Self::SHIFT | 1),
        }
    }

    fn report(&self) -> report::Messages {
        let mut size_histogram = report::SmallMap::default();
        for &w in &self.sizes {
            size_histogram.add(1u64 << (w >> Self::SHIFT), w & ((1 << Self::SHIFT) - 1));
        }
        report::Messages {
            count: self.count(),
            send: self.send,
            write: self.write,
            read: self.read,
            atomic: self.atomic,
            bytes: self.bytes,
            min_size: self.min_size,
            max_size: self.max_size,
            size_histogram,
            read_bytes_requested: self.read_bytes_requested,
            read_bytes_returned: self.read_bytes_returned,
        }
    }
}

/// The state of a flow that carries ACKs, NAKs or CNPs: what ACKs need, and the rest in a box
/// that most flows, which carry ACKs alone, never get.
#[derive(Debug, Default)]
pub(crate) struct Resp {
    last_ack: Option<u32>,
    pub dup_acks: u64,
    /// The last [`ANSWERS`] ACKs, NAKs or READ responses that were no copies
    /// ([`Analyzer::response_copy`]): the time, its top bit set once the packet's copy came,
    /// and the opcode, AETH and PSN in one word; and how many were written.
    answers: [(u64, u64); ANSWERS],
    answers_n: u32,
    /// When the last run of READ responses among the answers began and ended.
    read_run: (u64, u64),
    /// The PSN of the last READ the responses answered (its first response's PSN: a READ
    /// asked again is answered from the PSN it asks for), and when that first response came.
    read_first: (u32, u64),
    /// The [`RUNS`] runs before it, the newest at `read_runs_n - 1` modulo [`RUNS`].
    read_before: [ReadRun; RUNS],
    read_runs_n: u8,
    /// Whether the last answer was a READ response that came damaged (left out of `answers`):
    /// a run of READ responses is under way.
    damaged_last: bool,
    /// The READ responses' PSNs, payload and DCQCN figures, once one came.
    read_sender: Option<Box<ReadSender>>,
    more: Option<Box<RespMore>>,
}

/// READ response PSNs remembered below a flow's highest.
const RESPONSE_PSNS: u32 = 1024;

/// The READ response PSNs a flow carried: the highest, and which of the [`RESPONSE_PSNS`] up to
/// it came (bit `psn % RESPONSE_PSNS`). A responder executes a retried READ request again and
/// sends its responses again, PSN by PSN from the one asked for. Not a [`Tracker`]: that one
/// counts missing PSNs (holes between READs are none here) and grows to 16 KB a flow.
#[derive(Debug, Default, Clone)]
struct ResponsePsns {
    highest: Option<u32>,
    seen: [u64; RESPONSE_PSNS as usize / 64],
}

impl ResponsePsns {
    /// Records READ response PSN `psn`: new (beyond the highest), a first copy among the
    /// [`RESPONSE_PSNS`] up to the highest that had not come (a response lost before the
    /// capture point and sent again, or late: gap-filled), or one that came before (a second
    /// copy: retransmitted); one further below is taken for a second copy. With it, the first
    /// PSN that a new one passed over (lost before the capture point, or late).
    fn see(&mut self, psn: u32) -> (Class, Option<u32>) {
        let d = self.highest.map_or(1, |h| psn_diff(psn, h));
        let mut passed = None;
        let class = if d > 0 {
            if d as u32 >= RESPONSE_PSNS {
                self.seen = Default::default();
            } else {
                // The PSNs passed over, a word at a time.
                let from = psn.wrapping_sub(d as u32 - 1);
                let (mut at, mut left) = (from % RESPONSE_PSNS, d as u32 - 1);
                if left > 0 {
                    passed = Some(from & 0xff_ffff);
                }
                while left > 0 {
                    let (bit, n) = (at % 64, left.min(64 - at % 64));
                    let mask = (u64::MAX >> (64 - n)) << bit;
                    self.seen[at as usize / 64] &= !mask;
                    at = (at + n) % RESPONSE_PSNS;
                    left -= n;
                }
            }
            self.highest = Some(psn);
            Class::New
        } else if d.unsigned_abs() >= RESPONSE_PSNS {
            // Its bit is a PSN's within the window: left as it is.
            return (Class::Retransmitted, None);
        } else if self.came(psn) {
            Class::Retransmitted
        } else {
            Class::GapFilled
        };
        let i = psn % RESPONSE_PSNS;
        self.seen[i as usize / 64] |= 1 << (i % 64);
        (class, passed)
    }

    /// Whether READ response PSN `psn` came: one of the [`RESPONSE_PSNS`] up to the highest,
    /// recorded (what [`ResponsePsns::see`] reads, without recording it).
    fn came(&self, psn: u32) -> bool {
        let d = self.highest.map_or(1, |h| psn_diff(psn, h));
        let i = psn % RESPONSE_PSNS;
        d <= 0
            && d.unsigned_abs() < RESPONSE_PSNS
            && self.seen[i as usize / 64] >> (i % 64) & 1 == 1
    }
}

/// NAKs, RNR NAKs and CNPs of a flow.
#[derive(Debug, Default)]
pub(crate) struct RespMore {
    pub naks: [u64; 5],
    pub rnr: u64,
    pub rnr_timers: Vec<u32>,
    pub cnp: u64,
    ce_to_cnp: Lat,
    cnp_interval: Lat,
    /// The last CNP that was no copy ([`Analyzer::cnp_copy`]): its time, whether its copy
    /// came, and the requester flow it went to.
    last_cnp: Option<u64>,
    last_cnp_copied: bool,
    last_cnp_req: Option<usize>,
}

impl Resp {
    /// Whether the last answer remembered was a READ response (`kinds` by opcode): a run of
    /// them is under way.
    fn in_read_run(&self, kinds: &[Kind; 256]) -> bool {
        let prev = self.answers[self.answers_n.wrapping_sub(1) as usize % ANSWERS].1;
        self.damaged_last
            || self.answers_n > 0 && kinds[(prev >> 56) as usize] == Kind::ReadResponse
    }

    /// Puts a READ response at `ts` on the run of them under way (`run`), or begins a run
    /// with it, the one before going to `read_before`.
    fn read_run_at(&mut self, ts: u64, run: bool) {
        if !run {
            let last = self
                .read_sender
                .as_deref()
                .and_then(|r| r.last)
                .unwrap_or(0);
            self.read_before[usize::from(self.read_runs_n) % RUNS] =
                ReadRun::new(self.read_run, self.read_first, last);
            self.read_runs_n = self.read_runs_n.wrapping_add(1);
        }
        self.read_run = (if run { self.read_run.0 } else { ts }, ts);
    }

    /// NAK, RNR and CNP state, created on first use.
    fn more(&mut self) -> &mut RespMore {
        self.more.get_or_insert_with(Box::default)
    }

    /// Keeps only the latencies' summaries.
    fn seal(&mut self) {
        if let Some(m) = &mut self.more {
            m.ce_to_cnp.seal();
            m.cnp_interval.seal();
        }
    }
}

/// Everything kept per flow.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct FlowState {
    // Fields touched by every packet first (`repr(C)` keeps this order), so a packet's
    // updates share a few cache lines; the rest follows.
    pub key: Key,
    /// [`v4_pair`] of the key's nodes.
    pair: u64,
    pub packets: u64,
    pub bytes: u64,
    pub payload_bytes: u64,
    pub last_ts: u64,
    /// What only a flow that carries requests needs (most of a flow's size; a response or
    /// ACK flow has none).
    pub req: ReqState,
    /// What only a flow that carries ACKs, NAKs or CNPs needs.
    pub resp: Option<Box<Resp>>,
    /// Wire bytes per timeline bucket.
    pub tput: Series,
    /// Packets per ECN code point and per [`IcrcStatus`], the low 32 bits (see `wide`).
    ecn: [u32; 4],
    icrc: [u32; 4],
    pub max_fm_payload: u32,
    pub max_payload: u32,
    /// [`mac_word`] of the last source MAC (0 before the first).
    last_mac: u64,
    pub transport: Option<Transport>,
    pub encap: Option<Encap>,
    pub prio_mask: u8,
    pub is_request_flow: bool,
    /// Connection class (index into `CLASSES`).
    pub class: u8,
    /// The kinds cited in full ([`Cited::add`]).
    cited_full: u16,
    /// The other flow of its connection, + 1 (0: none known).
    peer: u32,
    /// Frames that were the capture's second copies of packets ([`Analyzer::duplicate`],
    /// [`Analyzer::other_point`]).
    copies: u32,
    /// The capture point the flow is read at ([`PacketMeta::if_id`]).
    pub point: u32,
    // Rarely touched.
    pub first_ts: u64,
    pub mac_changes: u64,
    /// The source MAC of the flow's first frame (`mac_word`, 0 without Ethernet), and how many
    /// new requests and resent ones came with another: frames of a second capture point merged into one
    /// interface (a routed hop rewrites the MAC) resend with it while new requests do not.
    first_mac: u64,
    pub new_other_mac: u32,
    pub retx_other_mac: u32,
    /// Go-back-N passes counted as ACK timeouts that began less than [`DUP_NS`] after an ACK
    /// acknowledged waiting requests ([`Req::progress_at`]): sooner than any ACK timeout.
    pub early_timeouts: u32,
    /// Such passes that began with a PSN an ACK had acknowledged already, not one past one of
    /// the flow's last ACKs (where a timer that fires while the next ACK is on its way starts
    /// its pass, see `Req::ack_marks`): the capture's copies (a requester never resends what
    /// it got acknowledged), unless that ACK was lost after the capture point.
    pub early_acked: u32,
    /// Passes with no known trigger that began with a PSN sent more recently than any ACK
    /// timer could run out (`soon` in [`Analyzer::request`]): the capture's late copies, which
    /// show it holds packets twice, as early timeouts do.
    soon_passes: u32,
    pub cited: Cited,
    /// [`Analyzer::requester_of`] found no requester for this flow at its node pair's
    /// [`PairFlows::gen`] `missed_gen - 1` (0: never missed), and skipped `missed` calls since.
    missed_gen: u32,
    missed: u32,
    /// What `ecn` and `icrc` carried past 32 bits (ECN first, then ICRC): a flow reaches
    /// 2^32 packets only in the longest captures, so the eight words are boxed.
    wide: Option<Box<[u64; 8]>>,
    /// The flow's requests as another capture point saw them ([`Analyzer::other_point`]).
    pub other: Option<Box<OtherPoint>>,
    /// Packets per opcode.
    pub opcodes: OpCounts,
}

/// A request flow's PSNs at a capture point other than the one it is read at: what that point
/// saw late (gap-filled) or never (missing) against the flow's own point tells where packets
/// were lost, before one point or between the two.
#[derive(Debug, Default)]
pub(crate) struct OtherPoint {
    pub point: u32,
    pub psn: Tracker,
    pub gap_filled: u64,
    /// The highest READ response PSN seen there.
    pub read_answered: Option<u32>,
}

impl FlowState {
    fn new(key: Key, ts: u64) -> Self {
        Self {
            key,
            pair: v4_pair(&key.0, &key.1),
            transport: None,
            encap: None,
            packets: 0,
            bytes: 0,
            payload_bytes: 0,
            opcodes: OpCounts::default(),
            ecn: [0; 4],
            icrc: [0; 4],
            cited_full: 0,
            wide: None,
            other: None,
            first_ts: ts,
            req: ReqState::default(),
            resp: None,
            last_ts: ts,
            max_fm_payload: 0,
            max_payload: 0,
            prio_mask: 0,
            is_request_flow: false,
            last_mac: 0,
            mac_changes: 0,
            first_mac: 0,
            new_other_mac: 0,
            retx_other_mac: 0,
            early_timeouts: 0,
            soon_passes: 0,
            early_acked: 0,
            peer: 0,
            copies: 0,
            point: 0,
            tput: Series::default(),
            class: 0,
            cited: Cited::default(),
            missed_gen: 0,
            missed: 0,
        }
    }

    /// Cites frame `n` as `kind` (the first [`SAMPLES`] of each kind).
    #[inline]
    fn cite(&mut self, kind: Cite, n: u64) {
        self.cited.add(&mut self.cited_full, kind, n);
    }

    /// Counts a packet in `ecn` (`wide` at 0) or `icrc` (`wide` at 4) slot `i`.
    #[inline]
    fn count4(low: &mut [u32; 4], wide: &mut Option<Box<[u64; 8]>>, at: usize, i: usize) {
        match low[i].checked_add(1) {
            Some(v) => low[i] = v,
            None => {
                low[i] = 0;
                wide.get_or_insert_with(Box::default)[at + i] += 1 << 32;
            }
        }
    }

    /// Packets with ECN code point `i` (Not-ECT, ECT(1), ECT(0), CE).
    pub(crate) fn ecn(&self, i: usize) -> u64 {
        u64::from(self.ecn[i]) + self.wide.as_ref().map_or(0, |w| w[i])
    }

    /// Packets with ICRC status `i` (`IcrcStatus as usize`).
    pub(crate) fn icrc(&self, i: usize) -> u64 {
        u64::from(self.icrc[i]) + self.wide.as_ref().map_or(0, |w| w[4 + i])
    }

    /// Frees what only live traffic needs (histograms, queues), keeping every summary.
    fn seal(&mut self) {
        if let Some(r) = &mut self.resp {
            r.seal();
        }
        if let Some(n) = self.req.seal() {
            self.cite(Cite::Reorder, n);
        }
    }

    /// Turns every latency into its summary, which leaves the flow's report unchanged and
    /// makes building it cheap (the end of the capture).
    pub(crate) fn summarise(&mut self) {
        if let Some(r) = &mut self.resp {
            r.seal();
        }
        if let Some(n) = self.req.summarise() {
            self.cite(Cite::Reorder, n);
        }
    }

    /// The response state, created on first use.
    #[inline]
    fn resp(&mut self) -> &mut Resp {
        self.resp.get_or_insert_with(Box::default)
    }

    /// The first CE-marked packet since the last CNP, of the flow's requests or READ responses
    /// (whichever came first).
    fn ce_pending(&self) -> Option<u64> {
        let request = self.req.live_ref().and_then(|q| q.ce_pending);
        let read = self.resp.as_deref().and_then(|r| r.read_sender.as_deref());
        request
            .into_iter()
            .chain(read.and_then(|s| s.ce_pending))
            .min()
    }

    /// Whether request PSN `psn` lies beyond [`FAR_PSN`] of the highest this flow sent.
    #[cold]
    fn psn_far(&self, psn: u32) -> bool {
        let highest = self
            .req
            .live_ref()
            .and_then(|r| r.s.psn.as_ref()?.highest());
        highest.is_some_and(|h| psn_diff(psn, h).unsigned_abs() > FAR_PSN)
    }

    /// The PSN of the last ACK this flow carried that moved forward.
    pub(crate) fn last_ack(&self) -> Option<u32> {
        self.resp.as_deref()?.last_ack
    }

    /// PSN sequence error NAKs this flow carried.
    fn sequence_naks(&self) -> u64 {
        self.resp
            .as_deref()
            .and_then(|r| r.more.as_deref())
            .map_or(0, |m| m.naks[0])
    }

    /// NAKs this flow carried that end the connection (every code but the PSN sequence error).
    pub(crate) fn fatal_naks(&self) -> u64 {
        self.resp
            .as_deref()
            .and_then(|r| r.more.as_deref())
            .map_or(0, |m| m.naks[1..].iter().sum())
    }

    /// The first PSN of the flow's requests.
    pub fn first_psn(&self) -> Option<u32> {
        self.req.sum().and_then(|q| q.first_psn)
    }

    /// The other flow of its connection.
    pub fn peer(&self) -> Option<usize> {
        (self.peer as usize).checked_sub(1)
    }

    /// Pairs this flow with flow `p` (flows past 2^32 - 1 stay unpaired: memory runs out long
    /// before).
    fn set_peer(&mut self, p: usize) {
        self.peer = p
            .checked_add(1)
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(0);
    }

    /// The request state, created on first use.
    #[inline]
    fn req(&mut self) -> &mut Req {
        self.req.get()
    }

    /// True when the frames carry the offloaded-sniffer artefact (source MAC changing on
    /// nearly every frame): their ICRCs are unverifiable, not bad. The capture's copies of
    /// packets are left out: a copy has its first's MAC.
    pub fn sniffer(&self) -> bool {
        let n = self.packets.saturating_sub(u64::from(self.copies));
        n >= 3 && self.mac_changes * 10 >= (n - 1) * 9
    }
}

/// A CM exchange.
#[derive(Debug, Clone)]
pub(crate) struct CmConn {
    pub a: Node,
    pub b: Node,
    pub qpn_a: u32,
    pub psn_a: u32,
    pub qpn_b: Option<u32>,
    pub psn_b: Option<u32>,
    pub mtu: Option<u32>,
    pub transport: u8,
    pub service_id: u64,
    pub state: &'static str,
    pub reject: Option<u16>,
    pub req_ts: u64,
    pub req_frame: u64,
    pub reply_frame: Option<u64>,
    /// The REQ's retry count, which both QPs take (0–7).
    pub retry_count: u8,
    /// RNR retry counts (7: forever) of A's QP, from the REP, and of B's, from the REQ.
    pub rnr_retry_a: u8,
    pub rnr_retry_b: u8,
}

/// One LLDP sender's DCB settings.
#[derive(Debug, Default)]
pub(crate) struct DcbState {
    pub(crate) frames: u64,
    pub(crate) first_frame: u64,
    /// Frames whose PFC enable bits or willing bit differed from the sender's frame before.
    pub(crate) pfc_changes: u64,
    pub(crate) last: Dcb,
}

/// PFC episode state per (source MAC, priority).
#[derive(Debug, Clone, Default)]
pub(crate) struct PfcState {
    pub frames: u64,
    pub start: u64,
    pub end: u64,
    pub pause_ns: u64,
    pub episodes: u64,
    pub longest: u64,
    pub first_frame: u64,
    /// One 65535-quanta pause at the speed of the link of the port's last frame.
    pub full_ns: u64,
}

/// The flows from one node to another.
#[derive(Debug, Default)]
struct PairFlows {
    flows: Vec<usize>,
    /// Changes when a flow joins `flows` or one of them carries its first request: only then
    /// can a requester that was not found among them be found (see [`Analyzer::requester_of`]).
    gen: u32,
}

/// The analyzer: feed it packets, then call [`Analyzer::finish`].
pub struct Analyzer {
    pub(crate) flows: Vec<FlowState>,
    index: FlowIndex,
    /// Direct-mapped cache in front of `index` (flow index + 1, 0 for none; the key is checked
    /// in the flow): most packets belong to a few busy flows.
    cache: Vec<u32>,
    by_pair: HashMap<(Node, Node), PairFlows>,
    /// The coarsest timestamp unit of the input files, in ns (see [`Batch::set_file`]).
    pub(crate) ts_unit: u64,
    /// The last timestamp read in such a file, and the time it was spread to
    /// ([`Analyzer::spread_ties`]).
    tie: (u64, u64),
    pub(crate) cm: Vec<CmConn>,
    cm_index: HashMap<(Node, u32), usize>,
    /// Scans of a node pair's flows for a requester (tests hold them to a few a flow).
    #[cfg(test)]
    scans: u64,
    cm_peer: HashMap<(Node, u32), (Node, u32)>,
    cm_class: HashMap<(Node, u32), u8>,
    /// [`Kind`] by opcode.
    kinds: [Kind; 256],
    pub(crate) pfc: BTreeMap<([u8; 6], u8), PfcState>,
    pub(crate) pfc_frames: (u64, u64, u64),
    /// PFC/PAUSE frames with a (source, priority) beyond [`MAX_PFC_PORTS`].
    pub(crate) pfc_untracked: u64,
    /// The last [`PFC_RECENT`] PFC/PAUSE frames counted, with their source and time, to tell
    /// the capture's copies of them in a capture that holds packets twice.
    pfc_recent: [Option<([u8; 6], MacControl, u64)>; PFC_RECENT],
    /// What each LLDP sender (by source MAC) advertised last, and LLDP frames of senders beyond
    /// [`MAX_PFC_PORTS`].
    pub(crate) dcb: BTreeMap<[u8; 6], DcbState>,
    pub(crate) dcb_untracked: u64,
    pub(crate) capture: report::Capture,
    /// [`Config::max_flows`], and the counters of the packets of flows beyond it.
    pub(crate) max_flows: usize,
    pub(crate) untracked: report::Counters,
    /// CM REQs (and REJs without one) of connections beyond `max_flows`, not recorded, each
    /// counted once: their (requester, local Comm ID), up to [`CM_UNTRACKED_KEPT`] of them.
    pub(crate) cm_untracked: u64,
    cm_untracked_ids: HashSet<(Node, u32)>,
    /// Candidate flows examined by requester searches so far (see [`Analyzer::may_search`]),
    /// and the searches not made because they did not fit.
    searched: u64,
    pub(crate) searches_skipped: u64,
    /// The first flows whose answers were not searched for, to name in the finding.
    pub(crate) skipped_flows: Vec<usize>,
    /// Per input file: its first packet's timestamp and its latest.
    pub(crate) file_spans: Vec<Option<(u64, u64)>>,
    /// Input files taken for captures at different points ([`Analyzer::file_point`]): per
    /// group of files that follow one another in time, its first file, its first packet's
    /// timestamp and its latest; the group of the file being read, and the file it was
    /// chosen for.
    pub(crate) file_groups: Vec<(u32, u64, u64)>,
    group: usize,
    group_file: Option<u32>,
    /// Input files whose reading stopped before their end.
    pub(crate) cuts: Vec<FileCut>,
    /// [`SEARCH_BASE`], smaller in tests.
    search_base: u64,
    /// `--link-speed`, else the first `if_speed` in [`IF_SPEEDS`] in the capture.
    pub(crate) link_bps: Option<u64>,
    /// `link_bps` came from the configuration: it overrides every interface's `if_speed`.
    pub(crate) link_forced: bool,
    pub(crate) fragments: (u64, Vec<u64>),
    pub(crate) frag_needed: (u64, Vec<u64>),
    /// RoCE or IB frames the capture cut before the end of their BTH, and the first of them.
    pub(crate) cut_before_bth: (u64, Vec<u64>),
    /// ACKs and NAKs cut before the end of their AETH, and frames of some.
    pub(crate) cut_before_aeth: (u64, Vec<u64>),
    /// Request flows that started their PSNs afresh ([`Analyzer::restart`]): how often, the
    /// first frames, and the first flows.
    pub(crate) psn_restarts: (u64, Vec<u64>),
    pub(crate) restart_flows: Vec<usize>,
    /// Frames that are the capture's second copies of packets ([`DUP_NS`]): how many, the
    /// first ones, and the first flows they came on.
    pub(crate) duplicates: (u64, Vec<u64>),
    pub(crate) duplicate_flows: Vec<usize>,
    /// Whether the capture is known to hold packets twice (see [`DOUBLED_MIN`] and
    /// [`EARLY_DOUBLED`]), and whether a flow had [`EARLY_DOUBLED`] early passes.
    doubled: bool,
    early_passes: bool,
    /// Copies at a lag ([`LateCopies`]), and how many frames were such copies
    /// (also counted in `duplicates`).
    late: LateCopies,
    pub(crate) late_copies: u64,
    /// Frames of flows read at another capture point ([`Analyzer::other_point`]), their
    /// flows, and the capture points seen (interface IDs, the first [`SKIPPED_NAMED`]).
    pub(crate) other_points: (u64, Vec<u64>),
    pub(crate) other_point_flows: Vec<usize>,
    pub(crate) points: Vec<u32>,
    pub(crate) perftest: bool,
    pub(crate) truncated_frames: (u64, Vec<u64>),
    pub(crate) vcrc: Vcrc,
    pub(crate) tl: Timeline,
    /// Pause time per timeline bucket for each (source MAC, priority), spread as episodes close.
    pub(crate) pauses: BTreeMap<([u8; 6], u8), Vec<u64>>,
    /// Closed episodes reaching too far past the timeline's end to spread at its current
    /// buckets (only while they are fine); retried as the buckets widen, spread at the end.
    pause_pending: Vec<([u8; 6], u8, u64, u64)>,
    /// Every closed episode, for the test that spreads them the simple way at the end.
    #[cfg(test)]
    episodes_log: Vec<([u8; 6], u8, u64, u64)>,
    /// ACK latency per connection class.
    pub(crate) ack_class: BTreeMap<u8, Histogram<u32>>,
}

/// The largest number of timeline buckets; past it, buckets merge pairwise.
pub(crate) const MAX_BUCKETS: usize = 512;

/// Connection classes for the ACK latency distribution.
pub(crate) const CLASSES: [&str; 6] = [
    "no CM",
    "NVMe-oF",
    "iSER",
    "SMB Direct",
    "NFS/RDMA",
    "other CM",
];

/// Event series of the timeline.
pub(crate) const EV_RETX: usize = 0;
pub(crate) const EV_NAK: usize = 1;
pub(crate) const EV_RNR: usize = 2;
pub(crate) const EV_CNP: usize = 3;
pub(crate) const EV_CE: usize = 4;

/// Bucketing state.
#[derive(Debug, Default)]
pub(crate) struct Timeline {
    pub start: Option<u64>,
    pub width: u64,
    pub cur: usize,
    pub len: usize,
    pub events: [Vec<u64>; 5],
    /// Timestamps of the current bucket, `lo..hi` (empty before the first packet).
    lo: u64,
    hi: u64,
}

fn merge(v: &mut Vec<u64>) {
    let n = v.len().div_ceil(2);
    for i in 0..n {
        v[i] = v[2 * i] + v.get(2 * i + 1).copied().unwrap_or(0);
    }
    v.truncate(n);
}

/// Packets per opcode of one flow. A flow's opcodes share their transport's top three bits
/// (IBTA §9.2, Table 38), so each is counted at its low five bits, directly. An opcode of
/// another transport (a damaged one) is counted in `more`, which also holds what a count
/// carried past 32 bits. `seq` keeps the opcodes in order of first appearance.
#[derive(Debug, Default, Clone)]
pub(crate) struct OpCounts {
    low: [u32; 32],
    /// The top three bits of the flow's first opcode.
    base: u8,
    seq: Vec<u8>,
    /// Boxed, a thin pointer: few flows need it.
    #[allow(clippy::box_collection)]
    more: Option<Box<Vec<(u8, u64)>>>,
}

impl OpCounts {
    /// Counts a packet of opcode `op`. A flow's first packet finds every count at 0, so
    /// [`OpCounts::count_rare`] takes it and sets `base`.
    #[inline]
    fn count(&mut self, op: u8) {
        match self.low.get_mut(usize::from(op ^ self.base)) {
            Some(n) if *n != 0 && *n != u32::MAX => *n += 1,
            _ => self.count_rare(op),
        }
    }

    /// [`OpCounts::count`] for an opcode's first packet, one of another transport, or a count
    /// at 2^32 - 1 (which carries to `more`).
    #[cold]
    #[inline(never)]
    fn count_rare(&mut self, op: u8) {
        if self.seq.is_empty() {
            self.base = op & 0xe0;
        }
        match self.low.get_mut(usize::from(op ^ self.base)) {
            Some(n) if *n == 0 => {
                *n = 1;
                self.seq.push(op);
            }
            Some(n) => {
                *n = 1;
                self.add_more(op, u64::from(u32::MAX));
            }
            None => {
                if self.add_more(op, 1) {
                    self.seq.push(op);
                }
            }
        }
    }

    /// Adds `by` to `op`'s count in `more`; whether `op` is new there.
    fn add_more(&mut self, op: u8, by: u64) -> bool {
        let more = self.more.get_or_insert_with(Box::default);
        match more.iter_mut().find(|(o, _)| *o == op) {
            Some((_, n)) => {
                *n += by;
                false
            }
            None => {
                more.push((op, by));
                true
            }
        }
    }

    /// (opcode, packets) in order of first appearance.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u8, u64)> + '_ {
        self.seq.iter().map(move |&op| {
            let low = self.low.get(usize::from(op ^ self.base));
            let more = self.more.iter().flat_map(|m| m.iter());
            let more = more.filter(|(o, _)| *o == op).map(|&(_, n)| n).sum::<u64>();
            (op, low.map_or(0, |&n| u64::from(n)) + more)
        })
    }
}

/// A flow's wire bytes per timeline bucket. The bucket being filled is a field of the flow, so a
/// packet adds to memory its flow's other counters already brought into the cache, and only the
/// buckets from the flow's first to its last are stored (short connections keep a few).
#[derive(Debug, Default, Clone)]
pub(crate) struct Series {
    /// Bucket of `values[0]` (timeline buckets stay below `MAX_BUCKETS`, so 32 bits hold them).
    start: u32,
    values: Vec<u64>,
    /// The bucket being filled and its bytes so far.
    at: u32,
    pending: u64,
}

impl Series {
    #[inline]
    fn add(&mut self, bucket: usize, by: u64) {
        let bucket = u32::try_from(bucket).unwrap_or(u32::MAX);
        if bucket != self.at {
            self.flush();
            self.at = bucket;
        }
        self.pending += by;
    }

    fn flush(&mut self) {
        if self.pending == 0 {
            return;
        }
        if self.values.is_empty() {
            self.start = self.at;
        } else if self.at < self.start {
            // Time went backwards in the capture: make room in front.
            let grow = (self.start - self.at) as usize;
            self.values.splice(0..0, std::iter::repeat_n(0, grow));
            self.start = self.at;
        }
        let i = (self.at - self.start) as usize;
        if self.values.len() <= i {
            self.values.resize(i + 1, 0);
        }
        self.values[i] += self.pending;
        self.pending = 0;
    }

    /// Merges pairs of buckets, as the timeline does when it doubles its bucket width.
    fn halve(&mut self) {
        self.flush();
        self.at /= 2;
        if self.values.is_empty() {
            return;
        }
        let (old, start) = (self.start as usize, self.start as usize / 2);
        let mut merged = vec![0; (old + self.values.len() - 1) / 2 - start + 1];
        for (k, v) in self.values.iter().enumerate() {
            merged[(old + k) / 2 - start] += v;
        }
        self.start /= 2;
        self.values = merged;
    }

    /// (bucket, bytes) of every bucket with bytes.
    pub(crate) fn buckets(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let stored = self
            .values
            .iter()
            .enumerate()
            .map(|(k, &v)| (self.start as usize + k, v));
        let pending = (self.pending > 0).then_some((self.at as usize, self.pending));
        stored.chain(pending).filter(|&(_, v)| v > 0)
    }

    /// The first `len` buckets.
    pub(crate) fn dense(&self, len: usize) -> Vec<u64> {
        let mut out = vec![0; len];
        for (i, v) in self.buckets() {
            if let Some(o) = out.get_mut(i) {
                *o += v;
            }
        }
        out
    }
}

/// Flow key → index into the flows. The table holds only the index (the key is in the flow):
/// 8 bytes a flow instead of 48 for a map that also stores the key.
#[derive(Debug, Default)]
/// Positions as `u32` (half the table of `usize`; 2^32 flows would need a terabyte first).
struct FlowIndex(hashbrown::HashTable<u32>);

impl FlowIndex {
    fn hash(key: &Key) -> u64 {
        std::hash::BuildHasher::hash_one(&crate::fxhash::FxBuildHasher::default(), key)
    }

    fn get(&self, flows: &[FlowState], key: &Key) -> Option<usize> {
        self.0
            .find(Self::hash(key), |&i| {
                flows.get(i as usize).is_some_and(|f| f.key == *key)
            })
            .map(|&i| i as usize)
    }

    /// Adds flow `i` (its key must not be in the table yet).
    fn insert(&mut self, flows: &[FlowState], i: usize) {
        let (Some(f), Ok(i)) = (flows.get(i), u32::try_from(i)) else {
            return;
        };
        self.0.insert_unique(Self::hash(&f.key), i, |&j| {
            flows.get(j as usize).map_or(0, |g| Self::hash(&g.key))
        });
    }
}

/// The slot of a flow in the direct-mapped cache in front of the flow index (any value is
/// correct, the key is checked; a spread one is fast). Computed while decoding, in parallel.
pub(crate) fn flow_slot(src: &Node, dst: &Node, destqp: u32) -> u16 {
    let low = |n: &Node| match n {
        Node::V4(a) => u32::from_le_bytes(*a),
        Node::Gid(g) => u32::from_le_bytes([g[12], g[13], g[14], g[15]]),
        Node::Lid(l) => u32::from(*l),
    };
    let h = low(src).wrapping_mul(0x9e37_79b9)
        ^ low(dst).rotate_left(13)
        ^ destqp.wrapping_mul(0x85eb_ca6b);
    (h ^ (h >> 10)) as u16
}

/// A MAC address as a word with bit 48 set (so never 0), compared in one instruction.
pub(crate) fn mac_word(m: [u8; 6]) -> u64 {
    let [a, b, c, d, e, f] = m;
    u64::from_be_bytes([0, 1, a, b, c, d, e, f])
}

/// Both nodes as one word when they are IPv4 addresses, else 0 (as is 0.0.0.0 to 0.0.0.0), so
/// finding a RoCEv2 packet's flow compares a word instead of two nodes.
pub(crate) fn v4_pair(src: &Node, dst: &Node) -> u64 {
    match (src, dst) {
        (Node::V4(s), Node::V4(d)) => {
            u64::from(u32::from_be_bytes(*s)) << 32 | u64::from(u32::from_be_bytes(*d))
        }
        _ => 0,
    }
}

/// What the analysis does with a packet, by opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Cnp,
    /// ACK or atomic ACK.
    Ack,
    ReadResponse,
    /// UD (sends, CM on QP 1).
    Ud,
    /// A known RC/UC/RD/XRC request.
    Request,
    /// Reserved and manufacturer-specific opcodes.
    Other,
}

impl Kind {
    fn of(info: &OpInfo) -> Self {
        match info.op {
            Operation::Cnp => Self::Cnp,
            Operation::Acknowledge | Operation::AtomicAcknowledge => Self::Ack,
            op if op.is_response() => Self::ReadResponse,
            _ if info.transport == Transport::Ud => Self::Ud,
            _ if info.known => Self::Request,
            _ => Self::Other,
        }
    }
}

/// Slots of the direct-mapped cache in front of the flow index (a power of two).
const FLOW_CACHE: usize = 1024;

fn bump(v: &mut Vec<u64>, i: usize, by: u64) {
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    v[i] += by;
}

impl Analyzer {
    /// Whether any flow goes from node `from` to node `to`.
    pub(crate) fn carries(&self, from: Node, to: Node) -> bool {
        self.by_pair.contains_key(&(from, to))
    }

    pub fn new(cfg: Config) -> Self {
        let capture = report::Capture {
            files: cfg.files.clone(),
            ..Default::default()
        };
        Self {
            link_bps: cfg.link_bps,
            link_forced: cfg.link_bps.is_some(),
            ts_unit: 1,
            tie: (0, 0),
            flows: Vec::new(),
            index: FlowIndex::default(),
            cache: vec![0; FLOW_CACHE],
            by_pair: HashMap::default(),
            cm: Vec::new(),
            cm_index: HashMap::default(),
            #[cfg(test)]
            scans: 0,
            cm_peer: HashMap::default(),
            cm_class: HashMap::default(),
            kinds: std::array::from_fn(|op| Kind::of(OpInfo::of(op as u8))),
            pfc: BTreeMap::new(),
            pfc_frames: (0, 0, 0),
            pfc_untracked: 0,
            pfc_recent: [None; PFC_RECENT],
            dcb: BTreeMap::new(),
            dcb_untracked: 0,
            capture,
            max_flows: cfg.max_flows.unwrap_or(DEFAULT_MAX_FLOWS),
            untracked: report::Counters::default(),
            cm_untracked: 0,
            cm_untracked_ids: HashSet::default(),
            searched: 0,
            searches_skipped: 0,
            skipped_flows: Vec::new(),
            file_spans: Vec::new(),
            file_groups: Vec::new(),
            group: 0,
            group_file: None,
            cuts: Vec::new(),
            search_base: SEARCH_BASE,
            fragments: (0, Vec::new()),
            frag_needed: (0, Vec::new()),
            cut_before_bth: (0, Vec::new()),
            cut_before_aeth: (0, Vec::new()),
            psn_restarts: (0, Vec::new()),
            restart_flows: Vec::new(),
            duplicates: (0, Vec::new()),
            duplicate_flows: Vec::new(),
            doubled: false,
            early_passes: false,
            late: LateCopies::new(cfg.lag_copies),
            late_copies: 0,
            other_points: (0, Vec::new()),
            other_point_flows: Vec::new(),
            points: Vec::new(),
            perftest: false,
            truncated_frames: (0, Vec::new()),
            vcrc: Vcrc::default(),
            tl: Timeline::default(),
            pauses: BTreeMap::new(),
            pause_pending: Vec::new(),
            #[cfg(test)]
            episodes_log: Vec::new(),
            ack_class: BTreeMap::new(),
        }
    }

    /// Sets the current timeline bucket for `ts`, merging buckets pairwise when the capture
    /// outgrows `MAX_BUCKETS`.
    #[inline]
    fn slot(&mut self, ts: u64) {
        // Most packets fall in the bucket of the one before: no division.
        if (self.tl.lo..self.tl.hi).contains(&ts) {
            return;
        }
        let start = *self.tl.start.get_or_insert(ts);
        if self.tl.width == 0 {
            self.tl.width = 1_000;
        }
        let mut i = (ts.saturating_sub(start) / self.tl.width) as usize;
        let mut halved = false;
        while i >= MAX_BUCKETS {
            self.tl.width *= 2;
            self.tl.len = self.tl.len.div_ceil(2);
            for v in self.tl.events.iter_mut() {
                merge(v);
            }
            for f in self.flows.iter_mut() {
                f.tput.halve();
            }
            for v in self.pauses.values_mut() {
                merge(v);
            }
            halved = true;
            i = (ts.saturating_sub(start) / self.tl.width) as usize;
        }
        self.tl.cur = i;
        self.tl.len = self.tl.len.max(i + 1);
        if halved {
            for (src, p, s, e) in std::mem::take(&mut self.pause_pending) {
                self.episode(src, p, s, e);
            }
        }
        (self.tl.lo, self.tl.hi) = if ts >= start {
            let lo = start + i as u64 * self.tl.width;
            (lo, lo.saturating_add(self.tl.width))
        } else {
            // Before the first packet: bucket 0, but not its range.
            (0, 0)
        };
    }

    fn count(&mut self, series: usize, by: u64) {
        let i = self.tl.cur;
        bump(&mut self.tl.events[series], i, by);
    }

    /// The flow of (`nodes`, `qp`), created at `ts` if new ([`UNTRACKED`] if that would pass
    /// `max_flows`); `slot` is its [`flow_slot`] and `pair` the nodes' [`v4_pair`].
    #[inline]
    fn flow(&mut self, nodes: &(Node, Node), qp: u32, pair: u64, slot: u16, ts: u64) -> usize {
        let slot = usize::from(slot) & (FLOW_CACHE - 1);
        if let Some(i) = (self.cache[slot] as usize).checked_sub(1) {
            if let Some(f) = self.flows.get(i) {
                let same = if pair != 0 {
                    f.pair == pair
                } else {
                    f.key.0 == nodes.0 && f.key.1 == nodes.1
                };
                if same && f.key.2 == qp {
                    return i;
                }
            }
        }
        let key = (nodes.0, nodes.1, qp);
        let i = match self.index.get(&self.flows, &key) {
            Some(i) => i,
            None => {
                let i = self.flows.len();
                if i >= self.max_flows {
                    return UNTRACKED;
                }
                if i == self.flows.capacity() {
                    // Room for `FLOWS_RESERVED` at first (reserved, so only the flows' own
                    // pages are touched), then an eighth more each time, not double: memory
                    // follows the flows closely.
                    self.flows.reserve_exact((i / 8).max(FLOWS_RESERVED));
                }
                self.flows.push(FlowState::new(key, ts));
                self.index.insert(&self.flows, i);
                let p = self.by_pair.entry((key.0, key.1)).or_default();
                p.flows.push(i);
                p.gen = p.gen.wrapping_add(1);
                i
            }
        };
        // Beyond 2^32 - 1 flows the cache is bypassed (the index still answers).
        self.cache[slot] = u32::try_from(i + 1).unwrap_or(0);
        i
    }

    pub(crate) fn nodes(f: &Frame<'_>) -> Option<(Node, Node)> {
        if let Some(ip) = f.ipv4 {
            return Some((Node::V4(ip.src), Node::V4(ip.dst)));
        }
        if let Some(ip) = f.ipv6 {
            return Some((Node::Gid(ip.src), Node::Gid(ip.dst)));
        }
        if let Some(g) = f.grh {
            return Some((Node::Gid(g.sgid), Node::Gid(g.dgid)));
        }
        f.lrh.map(|l| (Node::Lid(l.slid), Node::Lid(l.dlid)))
    }

    /// The link speed PFC quanta are converted with.
    pub fn link_bps(&self) -> u64 {
        self.link_bps.unwrap_or(100_000_000_000)
    }

    /// Feeds one decoded packet.
    pub fn packet(&mut self, m: &PacketMeta, f: &Frame<'_>) {
        self.event(&Event::new(*m, f));
    }

    /// Feeds a [`Batch`] of packets, in order. In a file whose timestamps count in coarser
    /// units than ns, packets of one timestamp are first spread 1 ns apart in file order
    /// ([`Analyzer::spread_ties`]).
    pub fn feed(&mut self, batch: &mut Batch) {
        self.ts_unit = self.ts_unit.max(batch.ts_unit);
        if batch.ts_unit > 1 {
            self.spread_ties(&mut batch.events[..batch.len], batch.ts_unit);
        }
        self.feed_from(batch.file, &batch.totals, batch.events());
    }

    /// Spreads packets that share a timestamp of `unit` ns (two in one microsecond of classic
    /// pcap) 1 ns apart, in file order, within that unit: the capture took them in that order,
    /// and the analysis tells what came first, what came after a resend and what before an
    /// answer by time. A timestamp that goes back (files or interfaces merged out of order) is
    /// left as it is.
    fn spread_ties(&mut self, events: &mut [Event], unit: u64) {
        let (mut raw, mut at) = self.tie;
        for e in events {
            let t = e.meta.ts_ns;
            if t == raw {
                at = at.saturating_add(1).min(raw.saturating_add(unit - 1));
                e.meta.ts_ns = at;
            } else {
                (raw, at) = (t, t);
            }
        }
        self.tie = (raw, at);
    }

    /// Feeds packets' events decoded one by one (not into a [`Batch`]), in order, as
    /// [`Analyzer::feed`] does (unlike [`Analyzer::event`], it looks for the capture's copies
    /// at a lag ([`LateCopies`]), which holds the first events back until a sample decides).
    pub fn feed_events(&mut self, events: &[Event]) {
        let mut t = Totals::default();
        for e in events {
            t.add(e);
        }
        self.feed_from(0, &t, events);
    }

    /// Feeds `events` of input file `file`, whose capture totals are `totals`: the events
    /// held back from another file are analysed first, and the totals added.
    fn feed_from(&mut self, file: u32, totals: &Totals, events: &[Event]) {
        if self.late.holding().is_some_and(|f| f != file) {
            self.late_flush();
        }
        if self.run_again().is_some() {
            return;
        }
        self.add_totals(totals);
        self.file_point(file, totals);
        self.file_span(file, totals);
        if self.late.learning() || self.late.on() {
            return self.feed_late(events, file);
        }
        self.analyse(events, &[]);
    }

    /// Analyses `events` in order, event `i` the capture's copy of an earlier packet at a lag
    /// when `copies[i]` ([`LateCopies`]). Each event first loads the state of
    /// the flow a few events ahead into the cache, so the memory of their flows arrives in
    /// parallel. This loop holds the one copy of the per-packet analysis: with a second, the
    /// compiler inlined less of it here (4% more instructions a packet). The helpers marked
    /// `#[inline(always)]` (`response_copy`, `requester_of`, `Req::acknowledged`,
    /// `Req::close_message`, the latency record, `MsgStats::add_size`) are the ones a
    /// profile-guided build inlines here: 608 → 573 instructions a packet (DESIGN §8).
    #[inline(never)]
    fn analyse(&mut self, events: &[Event], copies: &[bool]) {
        /// Events between the one analysed and the one whose flow state is touched ahead.
        const TOUCH_AHEAD: usize = 4;
        for (i, e) in events.iter().enumerate() {
            if let Some(ahead) = events.get(i + TOUCH_AHEAD) {
                self.touch(ahead);
            }
            self.event_body(e, copies.get(i).is_some_and(|&c| c));
        }
    }

    /// [`Analyzer::feed`] while the capture's first packets are sampled for copies at a lag
    /// (the events are held back until the sample decides), and in a capture found to hold
    /// such copies ([`LateCopies`]): each copy is counted as a packet and as the
    /// capture's copy, and as nothing else.
    #[cold]
    #[inline(never)]
    fn feed_late(&mut self, mut events: &[Event], file: u32) {
        if self.late.learning() {
            let kinds = self.kinds;
            let answer = |op: u8| matches!(kinds[usize::from(op)], Kind::Ack | Kind::ReadResponse);
            let taken = self.late.learn(events, file, answer);
            if self.late.speculating() {
                // Analysed at once, unless the sample found copies: the pass then stops.
                if !self.late.on() {
                    self.analyse(events, &[]);
                }
                return;
            }
            let Some(taken) = taken else {
                return;
            };
            self.feed_held();
            events = &events[taken..];
        }
        if !self.late.on() {
            return self.analyse(events, &[]);
        }
        for e in events {
            // Known from a pass that speculated: the first release where the held events'
            // came.
            if self.late.delay(e.clone(), file) {
                self.late_release(false);
            }
        }
        self.late_release(false);
    }

    /// Analyses the events [`LateCopies`] held back while it sampled them, once it decided:
    /// through its delay when the capture holds copies at a lag.
    #[cold]
    #[inline(never)]
    fn feed_held(&mut self) {
        let (held, file) = self.late.take_held();
        if !self.late.on() {
            return self.analyse(&held, &[]);
        }
        for e in held {
            self.late.delay(e, file);
        }
        self.late_release(false);
    }

    /// Analyses the events [`LateCopies`] delayed whose copies have all come (`all`: every
    /// one, at the end of an input file).
    fn late_release(&mut self, all: bool) {
        if !all && !self.late.releasing() {
            return;
        }
        let (mut events, mut copies) = (Vec::new(), Vec::new());
        while let Some((e, copy)) = self.late.release(all) {
            events.push(e);
            copies.push(copy);
        }
        self.analyse(&events, &copies);
    }

    /// Analyses every event [`LateCopies`] holds: the input ends, or another file begins.
    fn late_flush(&mut self) {
        self.late.stop();
        if self.run_again().is_some() {
            return;
        }
        self.feed_held();
        self.late_release(true);
    }

    /// The input ended (before [`Analyzer::finish`]): the sample for copies at a lag decides
    /// if it has not yet. Speculating ([`LagCopies::Speculate`]), ask [`Analyzer::run_again`]
    /// then.
    pub fn end_of_input(&mut self) {
        self.late_flush();
    }

    /// Speculating ([`LagCopies::Speculate`]): the lags of the capture's copies at a lag, once
    /// its first packets showed them. The analysis stopped there, and gives a wrong report: run
    /// it again from the start of the input with `Config::lag_copies` set to
    /// `LagCopies::Known` of these.
    pub fn run_again(&self) -> Option<Lags> {
        self.late.speculating().then(|| self.late.found()).flatten()
    }

    /// Loads the state of `e`'s flow into the cache ahead of [`Analyzer::event`].
    #[inline]
    fn touch(&self, e: &Event) {
        let slot = usize::from(e.flow_slot) & (FLOW_CACHE - 1);
        if let Some(i) = (self.cache[slot] as usize).checked_sub(1) {
            if let Some(f) = self.flows.get(i) {
                std::hint::black_box(f.packets);
            }
        }
    }

    /// Feeds one packet's [`Event`]. Copies at a lag ([`LateCopies`]) are not looked for (see
    /// [`Analyzer::feed_events`]).
    pub fn event(&mut self, e: &Event) {
        let mut t = Totals::default();
        t.add(e);
        self.add_totals(&t);
        self.analyse(std::slice::from_ref(e), &[]);
    }

    /// Records that reading an input file stopped before its end: the packets before the fault
    /// were fed, none after it (the `capture.cut_short` finding says so).
    pub fn file_cut(&mut self, cut: FileCut) {
        self.cuts.push(cut);
    }

    /// Chooses the capture point of input file `i`, whose packets' totals are `t`: the group
    /// of files it continues in time (whose latest packet came before this file's first, or
    /// after it by less than [`OVERLAP_NS`] and half the group's span; the one that ends
    /// closest to it), else a group of its own. Ring files of one capture follow one another; captures taken at
    /// the same time at different points (on both hosts) overlap, and each group is a capture
    /// point of its own: its packets' `if_id` get the group's number in their high 16 bits.
    fn file_point(&mut self, i: u32, t: &Totals) {
        if t.packets == 0 || self.group_file == Some(i) {
            return;
        }
        self.group_file = Some(i);
        let continued = self
            .file_groups
            .iter()
            .enumerate()
            .map(|(g, &(_, first, end))| (g, end.saturating_sub(t.first_ts), end - first, end))
            .filter(|&(_, by, span, _)| by == 0 || (by <= OVERLAP_NS && by * 2 < span))
            .min_by_key(|&(_, by, _, end)| (by, std::cmp::Reverse(end)));
        self.group = match continued {
            Some((g, ..)) => g,
            None => {
                self.file_groups.push((i, t.first_ts, t.last_ts));
                self.file_groups.len() - 1
            }
        };
        let g = &mut self.file_groups[self.group];
        g.2 = g.2.max(t.last_ts);
    }

    /// Widens input file `i`'s span of timestamps by packets' totals.
    fn file_span(&mut self, i: u32, t: &Totals) {
        if t.packets == 0 {
            return;
        }
        let i = i as usize;
        if self.file_spans.len() <= i {
            self.file_spans.resize(i + 1, None);
        }
        let s = self.file_spans[i].get_or_insert((t.first_ts, t.last_ts));
        s.1 = s.1.max(t.last_ts);
        if let Some(g) = self.file_groups.get_mut(self.group) {
            g.2 = g.2.max(t.last_ts);
        }
    }

    /// Adds packets' capture totals (`first_ts` is the first one's timestamp).
    fn add_totals(&mut self, t: &Totals) {
        let c = &mut self.capture;
        if t.packets == 0 {
            return;
        }
        if c.packets == 0 {
            c.first_ts_ns = t.first_ts;
        }
        c.packets += t.packets;
        c.bytes += t.bytes;
        c.last_ts_ns = c.last_ts_ns.max(t.last_ts);
        self.truncated_frames.0 += t.truncated;
        self.vcrc.merge(&t.vcrc);
        let kept = t.truncated_at.len().min(t.truncated as usize);
        for &n in &t.truncated_at[..kept] {
            sample(&mut self.truncated_frames.1, n);
        }
    }

    /// [`Analyzer::event`] but for the capture totals, inlined into [`Analyzer::analyse`]'s
    /// loop; with `copy`, `e` is the capture's copy of an earlier packet at a lag
    /// ([`LateCopies`]).
    #[inline(always)]
    fn event_body(&mut self, e: &Event, copy: bool) {
        self.slot(e.meta.ts_ns);
        let m = &e.meta;
        if self.link_bps.is_none() && m.if_speed.is_some_and(|s| IF_SPEEDS.contains(&s)) {
            self.link_bps = m.if_speed;
        }
        // The rare kinds, tested at once (`|`, not `||`): most events are none of them.
        if e.link.is_some() | e.perftest | e.frag_needed | e.roce_fragment {
            match e.link.as_deref() {
                Some(&LinkFrame::MacControl(src, mc)) => {
                    return if copy {
                        self.late_copy_found(m.number)
                    } else {
                        self.pfc_frame(m, src, mc)
                    };
                }
                Some(LinkFrame::Lldp(d)) => return self.dcb_frame(m, d),
                None => {}
            }
            self.perftest |= e.perftest;
            if e.frag_needed {
                self.frag_needed.0 += 1;
                sample(&mut self.frag_needed.1, m.number);
            }
            if e.roce_fragment {
                self.fragments.0 += 1;
                sample(&mut self.fragments.1, m.number);
            }
        }
        let Some(bth) = e.bth else {
            if e.truncated && e.encap.is_some() {
                self.cut_before_bth.0 += 1;
                sample(&mut self.cut_before_bth.1, m.number);
            }
            return;
        };
        let Some(nodes) = &e.nodes else { return };
        self.capture.rdma_packets += 1;
        let info = OpInfo::of(bth.opcode);
        let fi = self.flow(nodes, bth.destqp, e.v4_pair, e.flow_slot, m.ts_ns);
        let v2 = e.encap == Some(Encap::RoceV2);
        if fi == UNTRACKED {
            self.untracked(e, bth, info, v2);
            // A CM message needs no flow state: its connection is recorded all the same.
            if let Some(cm) = e.cm.as_deref() {
                self.cm_message(m, nodes.0, nodes.1, *cm);
            }
            return;
        }
        let fl = &mut self.flows[fi];
        // A frame of the flow at another capture point than the one it is read at: a copy of
        // one of its packets, unless that point has carried none for `MOVE_NS` (the flow
        // moved, or that point stopped capturing). A flow from a node to itself holds both
        // directions (directed-route SMPs, from and to the permissive LID, IBTA §14.2.2): at a
        // tap they come on two interfaces.
        let point = m.if_id & 0xffff | (self.group as u32) << 16;
        let mut other = false;
        if !copy && point != fl.point && fl.key.0 != fl.key.1 {
            if fl.packets == 0 || m.ts_ns.saturating_sub(fl.last_ts) >= MOVE_NS {
                fl.point = point;
            } else {
                other = true;
            }
        }
        let idle = m.ts_ns.saturating_sub(fl.last_ts);
        {
            fl.last_ts = if other || copy { fl.last_ts } else { m.ts_ns };
            fl.encap = e.encap;
            if fl.transport.is_none() {
                fl.transport = Some(info.transport);
            }
            fl.packets += 1;
            fl.bytes += u64::from(m.orig_len);
            fl.tput.add(self.tl.cur, u64::from(m.orig_len));
            fl.payload_bytes += u64::from(e.payload_len);
            fl.max_payload = fl.max_payload.max(e.payload_len);
            fl.opcodes.count(bth.opcode);
            if e.eth_src != fl.last_mac && e.eth_src != 0 {
                // A change back to the first MAC is two capture points' frames interleaved
                // (see `first_mac`), not the sniffer's artefact, whose MACs never come back.
                if fl.last_mac == 0 {
                    fl.first_mac = e.eth_src;
                } else if e.eth_src != fl.first_mac {
                    fl.mac_changes += 1;
                }
                fl.last_mac = e.eth_src;
            }
            if let Some(s) = e.icrc {
                // `icrc` is indexed by `IcrcStatus`: ok, bad, truncated, unverifiable.
                FlowState::count4(&mut fl.icrc, &mut fl.wide, 4, s as usize);
                if s == IcrcStatus::Bad {
                    fl.cite(Cite::Bad, m.number);
                }
            }
            if v2 && info.op != Operation::Cnp {
                let ecn = e.ecn.unwrap_or(0) & 3;
                FlowState::count4(&mut fl.ecn, &mut fl.wide, 0, usize::from(ecn));
                if ecn == 3 {
                    bump(&mut self.tl.events[EV_CE], self.tl.cur, 1);
                }
                // Only data on QPs above 1 is cited (management traffic may be Not-ECT).
                if ecn == 0 && bth.destqp > 1 {
                    fl.cite(Cite::NotEct, m.number);
                }
                if bth.destqp > 1 {
                    fl.prio_mask |= 1 << (e.prio & 7);
                }
            }
        }
        if copy {
            let cnp = self.kinds[usize::from(bth.opcode)] == Kind::Cnp;
            return self.late_copy(fi, m.number, cnp);
        }
        if other && !Self::new_at_other_point(fl, self.kinds[usize::from(bth.opcode)], bth.psn) {
            let (kind, is_read) = (
                self.kinds[usize::from(bth.opcode)],
                info.op == Operation::ReadRequest,
            );
            return self.other_point(fi, m.number, point, kind, bth.psn, is_read);
        }
        match self.kinds[usize::from(bth.opcode)] {
            Kind::Request => {
                if e.icrc == Some(IcrcStatus::Bad) && fl.psn_far(bth.psn) {
                    return;
                }
                if idle >= RESTART_IDLE_NS && fl.psn_far(bth.psn) {
                    self.restart(fi, m.number);
                }
                let fl = &mut self.flows[fi];
                let first = !fl.is_request_flow;
                let held_twice = (&mut self.doubled, &mut self.early_passes);
                let (pairs, cut) = (&self.by_pair, self.cut_before_aeth.0);
                // Before the connection's first answer: whether the responder's node sends to
                // the requester's in the capture, answers not cut (a NAK would show).
                let heard = || cut == 0 && pairs.contains_key(&(nodes.1, nodes.0));
                let tl = (&mut self.tl, self.ts_unit);
                if Self::request(fl, tl, e, bth, info, held_twice, heard) {
                    self.duplicate(fi, m.number);
                }
                if first {
                    if let Some(p) = self.by_pair.get_mut(&(nodes.0, nodes.1)) {
                        p.gen = p.gen.wrapping_add(1);
                    }
                }
            }
            Kind::Cnp => self.cnp(m, fi),
            // An answer with a bad ICRC never reaches the requester (its HCA drops it), so it
            // acknowledges, NAKs or returns nothing: counted, not followed, on a flow whose
            // ICRCs are not all bad (a capture whose every ICRC fails is read as it is). A
            // READ response is remembered as lost: the requester will read it again.
            Kind::Ack
                if e.icrc == Some(IcrcStatus::Bad) && fl.icrc(IcrcStatus::Ok as usize) > 0 => {}
            Kind::ReadResponse
                if e.icrc == Some(IcrcStatus::Bad) && fl.icrc(IcrcStatus::Ok as usize) > 0 =>
            {
                self.read_response_lost(fi, bth.psn, m.ts_ns);
            }
            Kind::Ack => self.ack(m, fi, e, bth),
            Kind::ReadResponse => self.read_response(m, fi, e, bth, info.op),
            Kind::Ud => {
                let rq = fl.req();
                // UD is never resent (IBTA §9.1: the unreliable services use no
                // acknowledgements, so nothing asks for a resend), so a packet from the source
                // QP, with the PSN and length, of one less than `DUP_NS` before is the capture's
                // copy of it (held twice): not a second message.
                if let ExtWord::SrcQp(q) = e.ext {
                    let key = u64::from(q)
                        | u64::from(bth.psn) << 24
                        | u64::from(e.payload_len & 0xffff) << 48;
                    let seen = &rq.ud_seen[..UD_SEEN.min(usize::from(rq.ud_seen_n))];
                    if seen
                        .iter()
                        .any(|&(k, t)| k == key && m.ts_ns.saturating_sub(t) < DUP_NS)
                    {
                        return self.duplicate(fi, m.number);
                    }
                    rq.ud_seen[usize::from(rq.ud_seen_n) % UD_SEEN] = (key, m.ts_ns);
                    rq.ud_seen_n = rq.ud_seen_n.checked_add(1).unwrap_or(UD_SEEN as u8);
                }
                rq.close_message(u64::from(e.payload_len), info.op);
                rq.s.unique_payload += u64::from(e.payload_len);
                if let Some(cm) = e.cm.as_deref() {
                    self.cm_message(m, nodes.0, nodes.1, *cm);
                }
            }
            Kind::Other => {}
        }
    }

    /// Frame `number` of flow `fi` is the capture's second copy of a packet (see [`DUP_NS`]):
    /// counted for `capture.duplicates`, and as nothing else.
    #[cold]
    #[inline(never)]
    fn duplicate(&mut self, fi: usize, number: u64) {
        self.copy_found(number);
        self.copy_on_flow(fi);
    }

    /// Flow `fi` carried a copy: counted, and the flow named in `capture.duplicates`.
    fn copy_on_flow(&mut self, fi: usize) {
        let fl = &mut self.flows[fi];
        fl.copies = fl.copies.saturating_add(1);
        if self.duplicate_flows.len() < SKIPPED_NAMED && !self.duplicate_flows.contains(&fi) {
            self.duplicate_flows.push(fi);
        }
    }

    /// Frame `number` of flow `fi` is the capture's copy of a packet at a lag
    /// ([`LateCopies`]): counted for `capture.duplicates` (and a CNP's, `cnp`, in the CNP
    /// count, as [`Analyzer::cnp`] counts the copies its rules find), and as nothing else.
    /// Such copies do not tell those rules the capture holds packets twice (`doubled`).
    #[cold]
    #[inline(never)]
    fn late_copy(&mut self, fi: usize, number: u64, cnp: bool) {
        if cnp {
            self.count(EV_CNP, 1);
            self.flows[fi].resp().more().cnp += 1;
        }
        self.late_copy_found(number);
        self.copy_on_flow(fi);
    }

    /// Frame `number` is the capture's copy of a packet at a lag (of a PFC or
    /// PAUSE frame: counted in no `pfc` figure, as a copy sooner is not).
    #[cold]
    #[inline(never)]
    fn late_copy_found(&mut self, number: u64) {
        self.late_copies += 1;
        self.duplicates.0 += 1;
        sample(&mut self.duplicates.1, number);
    }

    /// The lags of the capture's copies at a lag ([`LateCopies`]), when it holds them.
    pub(crate) fn late_lags(&self) -> Option<(u64, u64)> {
        self.late.lags()
    }

    /// Frame `number` is the capture's second copy of a packet: counted for
    /// `capture.duplicates`, and enough of them show the capture holds packets twice.
    fn copy_found(&mut self, number: u64) {
        self.duplicates.0 += 1;
        let near = self.duplicates.0 - self.late_copies;
        self.doubled |= near >= DOUBLED_MIN && near * 8 >= self.capture.rdma_packets
            || self.early_passes && near >= EARLY_COPIES;
        sample(&mut self.duplicates.1, number);
    }

    /// Frame `number` of flow `fi` came at capture point `point`, not the one the flow is read
    /// at (an interface of a merged file, a file of captures on both hosts, a tap and a
    /// mirror): the same packets there, shifted by the path and the two clocks, would read as
    /// resends and duplicate ACKs, so it is counted for `capture.multiple_points` and as a
    /// packet only. A request's PSN `psn` (`kind`, `is_read` for a READ) goes to the flow's
    /// [`OtherPoint`] (the first other point only), and a READ response's to its requester's:
    /// a READ request inside what that point saw answered (there, or read there as its own
    /// flow's) is a re-read, no gap fill (as in [`Req::reread`]).
    #[cold]
    #[inline(never)]
    fn other_point(
        &mut self,
        fi: usize,
        number: u64,
        point: u32,
        kind: Kind,
        psn: u32,
        is_read: bool,
    ) {
        self.other_points.0 += 1;
        sample(&mut self.other_points.1, number);
        let fl = &mut self.flows[fi];
        fl.copies = fl.copies.saturating_add(1);
        let peer = (fl.peer as usize).checked_sub(1);
        let of = match kind {
            Kind::Request => Some(fi),
            Kind::ReadResponse => peer,
            _ => None,
        };
        // READ responses read at this point (their flow's own) are answers there too.
        let fl = &self.flows[fi];
        let answered_here = match peer.and_then(|p| self.flows.get(p)) {
            Some(p) if kind == Kind::Request && p.point == point => {
                fl.req.live_ref().and_then(|q| q.read_answered)
            }
            _ => None,
        };
        if let Some(o) = of.and_then(|r| self.flows.get_mut(r)) {
            let o = o.other.get_or_insert_with(|| {
                Box::new(OtherPoint {
                    point,
                    ..OtherPoint::default()
                })
            });
            if o.point == point && kind == Kind::ReadResponse {
                if o.read_answered.is_none_or(|h| psn_diff(psn, h) > 0) {
                    o.read_answered = Some(psn);
                }
            } else if o.point == point && o.psn.see(psn, is_read) == Class::GapFilled {
                let answered = o.read_answered.or(answered_here);
                if !(is_read && answered.is_some_and(|h| psn_diff(h, psn) > 0)) {
                    o.gap_filled += 1;
                }
            }
        }
        let fl = &mut self.flows[fi];
        if self.other_point_flows.len() < SKIPPED_NAMED && !self.other_point_flows.contains(&fi) {
            self.other_point_flows.push(fi);
        }
        for p in [fl.point, point] {
            if self.points.len() < SKIPPED_NAMED && !self.points.contains(&p) {
                self.points.push(p);
            }
        }
    }

    /// Whether a frame of flow `fl` at another capture point is new to it, not a copy: a
    /// request (`kind`) whose PSN the flow has not seen (a NIC that spreads a QP's packets
    /// over its ports, each captured on its own interface; a packet lost before the flow's
    /// point).
    #[cold]
    fn new_at_other_point(fl: &FlowState, kind: Kind, psn: u32) -> bool {
        kind == Kind::Request
            && fl
                .req
                .live_ref()
                .and_then(|q| q.s.psn.as_ref())
                .is_some_and(|t| !t.seen(psn))
    }

    /// Request flow `fi` starts its PSNs afresh at frame `number`, which came after
    /// [`RESTART_IDLE_NS`] of silence with a PSN beyond [`FAR_PSN`] of the flow's highest: a
    /// new connection on the same QP number. Read as a continuation, a jump forward would be
    /// millions of missing PSNs and one backward every packet resent until the old highest.
    /// What the old connection left unanswered or unseen stays as it was counted; its
    /// responder's last ACK is forgotten, so the new ACKs are not duplicates.
    #[cold]
    #[inline(never)]
    fn restart(&mut self, fi: usize, number: u64) {
        let fl = &mut self.flows[fi];
        if let Some(rq) = fl.req.live() {
            rq.restart();
        }
        if let Some(rs) = fl.peer().and_then(|p| self.flows[p].resp.as_deref_mut()) {
            rs.last_ack = None;
            if let Some(s) = rs.read_sender.as_deref_mut() {
                s.psns = ResponsePsns::default();
            }
        }
        self.psn_restarts.0 += 1;
        sample(&mut self.psn_restarts.1, number);
        if self.restart_flows.len() < SKIPPED_NAMED && !self.restart_flows.contains(&fi) {
            self.restart_flows.push(fi);
        }
    }

    /// A packet of a flow beyond `max_flows`: what needs no flow state, counted as a flow
    /// counts it (opcode, ECN, ICRC, CNPs, NAKs by code, RNR NAKs), for the totals.
    #[cold]
    fn untracked(&mut self, e: &Event, bth: Bth, info: &OpInfo, v2: bool) {
        let c = &mut self.untracked;
        c.packets += 1;
        c.bytes += u64::from(e.meta.orig_len);
        c.payload_bytes += u64::from(e.payload_len);
        c.opcodes.add(info.name, 1);
        if v2 && info.op != Operation::Cnp {
            let ecn = &mut c.ecn;
            match e.ecn.unwrap_or(0) & 3 {
                0 => ecn.not_ect += 1,
                1 => ecn.ect1 += 1,
                2 => ecn.ect0 += 1,
                _ => ecn.ce += 1,
            }
        }
        match e.icrc {
            Some(IcrcStatus::Ok) => c.icrc.ok += 1,
            Some(IcrcStatus::Bad) => c.icrc.bad += 1,
            Some(IcrcStatus::Truncated) => c.icrc.truncated += 1,
            Some(IcrcStatus::Unverifiable) => c.icrc.unverifiable += 1,
            None => {}
        }
        match self.kinds[usize::from(bth.opcode)] {
            Kind::Cnp => c.cnp += 1,
            Kind::Ack => match e.aeth.map(|a| a.kind()) {
                Some(AethKind::RnrNak { .. }) => c.rnr_naks += 1,
                Some(AethKind::Nak { code }) => {
                    let n = &mut c.naks;
                    *[
                        &mut n.psn_sequence_error,
                        &mut n.invalid_request,
                        &mut n.remote_access_error,
                        &mut n.remote_operational_error,
                        &mut n.invalid_rd_request,
                    ][usize::from(code.min(4))] += 1;
                }
                _ => {}
            },
            _ => {}
        }
    }

    /// A request packet of flow `fl` (`tl`: the timeline, for retransmissions, and `unit`: the
    /// capture's timestamp unit in ns; `doubled`: whether
    /// the capture is known to hold packets twice, set here too once the flow had
    /// [`EARLY_DOUBLED`] early passes that began with an acknowledged PSN, and whether it had
    /// as many early passes, set here). True when it is the capture's second copy of a packet
    /// ([`Req::duplicate`]), which counts no further. `heard`: whether a NAK would be in the
    /// capture on a connection not yet answered (asked of retransmissions only).
    #[inline(always)]
    fn request(
        fl: &mut FlowState,
        (tl, unit): (&mut Timeline, u64),
        e: &Event,
        bth: Bth,
        info: &OpInfo,
        (known, early): (&mut bool, &mut bool),
        heard: impl FnOnce() -> bool,
    ) -> bool {
        let m = &e.meta;
        let v2 = e.encap == Some(Encap::RoceV2);
        let ts = m.ts_ns;
        let is_read = info.op == Operation::ReadRequest;
        let ce = e.ecn == Some(3) && v2;
        fl.is_request_flow = true;
        let other_mac = e.eth_src != fl.first_mac;
        let rq = fl.req.get();
        // Whether the responder's answers are in the capture and readable, so a NAK would be.
        let answers = fl.peer != 0 && !rq.blind;
        if v2 && bth.destqp > 1 && rq.s.sport.is_none() {
            rq.s.sport = e.udp_sport;
        }
        rq.s.first_psn.get_or_insert(bth.psn);
        let tracker = rq.s.psn.get_or_insert_with(Tracker::default);
        let before = tracker.highest();
        let class = tracker.see(bth.psn, is_read);
        // A READ request inside an earlier READ's PSNs (no request had it): a re-read. So is one
        // beyond every request seen when no request came since that READ (its PSNs are not the
        // tracker's): responses to it came already.
        let reread = match class {
            Class::Retransmitted | Class::GapFilled | Class::New if is_read => rq.reread(bth.psn),
            _ => None,
        };
        let class = match class {
            Class::GapFilled | Class::New if reread.is_some() => Class::Retransmitted,
            c => c,
        };
        let damaged = e.icrc == Some(IcrcStatus::Bad);
        if class == Class::Retransmitted
            && rq.duplicate(
                bth.psn,
                ts,
                before,
                answers,
                *known,
                (is_read, e.dma_len(), damaged),
            )
        {
            return true;
        }
        // A resend sooner than any ACK timer runs out (IBTA §9.7.6.1.3; a ConnectX resending
        // adaptively: from `ADP_NS`) is no timeout's: the capture's late copy, not found so
        // (before the connection's first answer nothing shows its packets come twice), or a
        // damaged packet's resend.
        let within = if fl.peer == 0 { DUP_NS } else { ADP_NS };
        let soon = class == Class::Retransmitted
            && (rq
                .sent_back(ts, within, |p| p & PSN_BITS == bth.psn)
                .is_some()
                || rq.sent_since(bth.psn, ts, within));
        rq.remember(seen_key(bth.psn, damaged), ts, m.orig_len);
        // The time since the flow's request before this one (read when a rare case needs it).
        let quiet = |rq: &Req| ts.saturating_sub(rq.pace().at[1]);
        // What this packet tells of the last gap fill (see `Fill`).
        if let Some((p, fill, frame, depth)) = rq.fill {
            // A go-back-N pass from a lower PSN resends a packet known late when it gets there.
            let on_its_way = fill == Fill::Reordered && psn_diff(bth.psn, p) < 0;
            if class == Class::Retransmitted
                && !on_its_way
                && fill == Fill::Deferred
                && bth.psn != p
                && (rq.pending == Some(Trigger::Nak) && psn_diff(p, rq.nak_psn) > 0
                    || quiet(rq) >= ACT_NS)
            {
                // A resend after the flow went quiet behind the gap fill (the requester's ACK
                // timer ran out), or for a NAK of a PSN below it that came since: a pass of its
                // own, as one that the gap fill began would have gone on at once. The gap fill
                // was late, and this pass resends it on its way.
                rq.s.late(depth, frame, (&mut fl.cited, &mut fl.cited_full));
                rq.fill = Some((p, Fill::Reordered, frame, depth));
            } else if class == Class::Retransmitted && !on_its_way {
                rq.fill = None;
                if bth.psn == p {
                    if fill != Fill::Reordered {
                        rq.s.late(depth, frame, (&mut fl.cited, &mut fl.cited_full));
                    }
                    rq.s.reordered_resent += 1;
                    // The late packet took the NAK that resends it, counted as this burst's
                    // trigger then: the burst starts here with none left.
                    if fill == Fill::Waiting && rq.pending.is_none() {
                        rq.in_retx = true;
                    }
                }
            } else if fill == Fill::Deferred {
                rq.s.late(depth, frame, (&mut fl.cited, &mut fl.cited_full));
                rq.fill = Some((p, Fill::Reordered, frame, depth));
            }
        }
        match class {
            Class::New => {
                rq.mark_sent(bth.psn, ts);
                if let Some(h) = before {
                    if psn_diff(bth.psn, h) > 1 && !rq.prev_read && rq.gap_open.is_none() {
                        rq.gap_open = Some(ts);
                    }
                }
                rq.in_retx = false;
                rq.retries_since_new = 0;
                rq.nak_set_aside = false;
                rq.prev_read = is_read;
                rq.s.unique_payload += u64::from(e.payload_len);
                fl.new_other_mac = fl.new_other_mac.saturating_add(u32::from(other_mac));
            }
            Class::Retransmitted | Class::GapFilled => {
                // A burst later than any NAK's round trip after the last NAK (`nak_window`),
                // or one that starts below the NAKs' PSNs (a NAK's pass starts at the PSN it
                // names, IBTA §9.7.5.1.2, at once), each after the flow went quiet for
                // `ACT_NS`: the requester did not act on those NAKs (it resends after its ACK
                // timer), so none of them starts it; nor a pass that goes back within a burst.
                // A requester that kept sending up to the pass was not waiting for its timer:
                // one behind a queue to the capture point deeper than a NAK's round trip acts
                // on the NAK that late. New packets that came after the NAK, with no pass begun
                // since, were in that queue before the requester had the NAK: its pass comes
                // after them, so the window runs from the last of them.
                let below_low = psn_diff(bth.psn, rq.nak_low) < 0;
                if (!rq.in_retx || psn_diff(bth.psn, rq.retx_psn) <= 0)
                    && rq.pending == Some(Trigger::Nak)
                    && quiet(rq) >= ACT_NS
                    && rq.last_nak_at.is_some_and(|n| {
                        let since = ts.saturating_sub(n);
                        // At a burst's start the request before it was the last new one.
                        let queued = !rq.in_retx && rq.last_pass.is_none_or(|(_, t)| t < n);
                        let from = if queued { n.max(ts - quiet(rq)) } else { n };
                        ts.saturating_sub(from) > rq.nak_window() || since >= ACT_NS && below_low
                    })
                {
                    rq.nak_set_aside = below_low;
                    rq.pending = None;
                    rq.naks_queued = 0;
                    rq.naks_since_pass = 0;
                    rq.nak_psn_since = None;
                    rq.nak_ts = None;
                }
                // A late new packet (reordered behind the ones a go-back-N pass resends) that
                // came while the pass was under way did not end it: the pass goes on with a
                // resend of the PSN after the last it sent, within `ADP_NS` of it. (A first
                // copy there is one more late packet.) The pass had resent two in a row, or
                // one, the PSN the last NAK named: a capture's copy trailing its packet makes
                // a pass of one that no NAK asked for.
                let news = rq.seen_n.wrapping_sub(rq.pass_seen_n).wrapping_sub(1);
                if class == Class::Retransmitted
                    && !rq.in_retx
                    && news <= u32::from(STRAGGLERS)
                    && (rq.pass_run >= 2 || rq.pass_run == 1 && rq.nak_named() == Some(rq.retx_psn))
                    && rq.pending.is_none()
                    && bth.psn == rq.retx_psn.wrapping_add(1) & 0xff_ffff
                    && ts.saturating_sub(rq.pass_at) < ADP_NS
                {
                    rq.in_retx = true;
                }
                rq.pass_run = if news == 0 {
                    rq.pass_run.saturating_add(1)
                } else {
                    1
                };
                (rq.pass_seen_n, rq.pass_at) = (rq.seen_n, ts);
                // Whether a NAK that started this would be in the capture: the answers are,
                // or the connection has none yet while the responder's node is heard (and it
                // is no resend sooner than any ACK timeout).
                let shown = !soon && (answers || (fl.peer == 0 && !rq.blind && heard()));
                // Responses came beyond it, the last less than `DUP_NS` before, or the requester
                // sends at a slower pace (a rate limit, a slow link) and this comes at that pace
                // after its previous request, which came after the responses: the requester
                // reads again with no ACK timeout (one that waited longer resends after its
                // timer ran out, the READ partly answered).
                let reread = reread == Some(true)
                    && (ts.saturating_sub(rq.read_response_at) < DUP_NS || {
                        // Timestamps of `unit` ns: the quiet may be up to a unit shorter.
                        let pace = rq.pace();
                        let (lo, hi) = pace.gaps(unit);
                        lo <= ACT_NS
                            && quiet(rq).saturating_sub(unit - 1) <= hi.saturating_add(hi / 4)
                            && pace.at[1].saturating_add(hi) >= rq.read_response_at
                    });
                // A re-read from below every pending NAK's PSN is the re-read's pass: it serves
                // no NAK and leaves them pending (a NAK's pass starts at the PSN it names).
                let below_nak = reread && rq.pending == Some(Trigger::Nak) && below_low;
                let late_nak = class == Class::Retransmitted
                    && !rq.in_retx
                    && rq.pending.is_none()
                    && shown
                    && !reread
                    && rq.late_nak_pass(bth.psn, ts);
                if class == Class::Retransmitted {
                    rq.s.retx += 1;
                    rq.resends
                        .get_or_insert_with(Box::default)
                        .push(ts, bth.psn);
                    if is_read {
                        rq.reask(bth.psn, e.dma_len());
                    }
                    fl.retx_other_mac = fl.retx_other_mac.saturating_add(u32::from(other_mac));
                    // A jump forward to the PSN a NAK named: the requester starts over there
                    // before its pass reached it. The next request seen after the last resend
                    // is the pass going on (after a READ request, past the PSNs its responses
                    // consume).
                    // A PSN sequence NAK from longer ago than its round trip names no PSN a
                    // pass jumps to now (an RNR NAK's pass waits for its timer), nor does one
                    // too recent to have reached the requester (`NAK_TURN_NS`): a pass that
                    // goes on past PSNs acknowledged meanwhile lands on the NAK's PSN then.
                    let stale = !rq.nak_since_rnr
                        && rq
                            .last_nak_at
                            .is_some_and(|n| ts.saturating_sub(n) > NAK_QUIET_NS);
                    let named =
                        rq.nak_psn_since == Some(bth.psn) && !stale && rq.nak_turned(ts, unit) && {
                            let next = rq.s.psn.as_ref().and_then(|t| t.next_seen(rq.retx_psn));
                            let next = next.unwrap_or(rq.retx_psn.wrapping_add(1) & 0xff_ffff);
                            psn_diff(bth.psn, next) > 0
                        };
                    let pass = !rq.in_retx || named || psn_diff(bth.psn, rq.retx_psn) <= 0;
                    if pass {
                        if named {
                            rq.nak_psn_since = None;
                        }
                        // A go-back within the burst to a READ read again, below a pending NAK's
                        // PSN, that comes after the NAK could turn round: the requester went back
                        // to the READ still waiting for responses on the NAK (as Linux rxe does,
                        // `check_psn`: `COMPST_ERROR_RETRY`). That pass serves the NAK, though it
                        // need not resend the PSN the NAK named (the responder may have it by
                        // then).
                        let nak_back = below_nak && rq.in_retx && rq.nak_turned(ts, unit);
                        if rq.naks_since_pass > 0 && (!below_nak || nak_back) {
                            rq.naks_since_pass -= 1;
                            rq.timeouts_in_row = 0;
                            if nak_back {
                                if rq.naks_queued > 0 {
                                    rq.naks_queued -= 1;
                                } else {
                                    rq.pending = None;
                                }
                            }
                            // A pass that goes back within a burst, after the RNR NAK's timer
                            // (not the capture's late copy of a packet), serves that RNR NAK as
                            // the burst's next pass: none is left to be a later burst's trigger.
                            if rq.in_retx && rq.pending == Some(Trigger::Rnr) && !soon {
                                rq.pending = None;
                            }
                        } else if rq.nak_set_aside
                            && rq.in_retx
                            && bth.psn == rq.nak_psn
                            && quiet(rq) < ADP_NS
                        {
                            // The NAK the burst was set aside from reached the requester late
                            // (behind a queue after the capture point): a go-back within the
                            // burst, at once, to the PSN it named is its pass, no timer's. The
                            // requester has an answer: its retries begin again.
                            rq.nak_set_aside = false;
                            rq.timeouts_in_row = 0;
                        } else if late_nak {
                            // The late NAK's pass (see `Req::late_nak_pass`): the requester has
                            // an answer, its retries begin again.
                            rq.timeouts_in_row = 0;
                        } else if rq.read_gap_pass(bth.psn, ts) {
                            // A READ response gap's pass: the requester found responses
                            // missing, no timer ran out.
                        } else if shown && !reread && !(named && rq.in_retx) {
                            // A retry after an ACK timeout; with nothing from the responder's
                            // node in the capture yet it may be the capture's copy that came
                            // too late to tell, and no timeout is known either. A jump forward
                            // within a burst to the PSN a NAK named is none: the pass goes on
                            // past PSNs acknowledged meanwhile (its NAK already counted, as
                            // when it began at a READ below that PSN), while a timeout's retry
                            // goes back to the oldest PSN not acknowledged.
                            rq.timeouts_in_row = rq.timeouts_in_row.saturating_add(1);
                            rq.s.timeouts_in_a_row =
                                rq.s.timeouts_in_a_row.max(u64::from(rq.timeouts_in_row));
                            rq.retries_since_new = rq.retries_since_new.max(rq.timeouts_in_row);
                            fl.cited.add(&mut fl.cited_full, Cite::Retry, m.number);
                            rq.timed_out(bth.psn, ts);
                        }
                        rq.last_pass = Some((bth.psn, ts));
                    }
                    rq.retx_psn = bth.psn;
                    // A burst under way resends the PSN a NAK still pending asked for: that
                    // NAK is served, and starts no burst or pass of its own (nor do those queued
                    // behind it): a strict receiver that took a late packet NAKs the next PSN
                    // too, which the pass resending the late one goes on to. A resend sooner
                    // than `NAK_TURN_NS` after the NAK left the requester before the NAK came:
                    // it serves none, and the NAK's own pass is still to come.
                    if rq.in_retx
                        && rq.pending == Some(Trigger::Nak)
                        && bth.psn == rq.nak_psn
                        && rq.nak_turned(ts, unit)
                    {
                        let served = rq.naks_queued + u8::from(!pass);
                        rq.naks_since_pass = rq.naks_since_pass.saturating_sub(served);
                        rq.pending = None;
                        rq.naks_queued = 0;
                    }
                } else {
                    rq.s.gap_filled += 1;
                    rq.s.unique_payload += u64::from(e.payload_len);
                }
                fl.cited.add(&mut fl.cited_full, Cite::Retx, m.number);
                bump(&mut tl.events[EV_RETX], tl.cur, 1);
                // A gap fill with nothing pending waits for what follows it (`Req::fill`),
                // once the responder is seen: with its answers cut before their AETH too, as
                // what follows tells a loss (a resend of another PSN) without the NAK.
                // So does one beyond the PSN a pending NAK named: go-back-N resends from that
                // PSN first, so it is no resend but a late packet, and the NAK is still to be
                // served (a packet lost and another late at once).
                let beyond_nak =
                    rq.pending == Some(Trigger::Nak) && psn_diff(bth.psn, rq.nak_psn) > 0;
                let deferred = class == Class::GapFilled
                    && (rq.pending.is_none() || beyond_nak)
                    && !rq.in_retx
                    && fl.peer != 0;
                if class == Class::GapFilled {
                    let depth = before.map_or(0, |h| psn_diff(h, bth.psn).max(0) as u32);
                    // One beyond where a go-back-N pass under way has got to (not the PSN a NAK
                    // named, which a pass may jump to) is late too: a pass skips nothing.
                    let ahead_of_pass =
                        rq.in_retx && psn_diff(bth.psn, rq.retx_psn) > 1 && bth.psn != rq.nak_psn;
                    let fill = if deferred && beyond_nak || ahead_of_pass {
                        // Late, not resent: what follows is the NAK's pass, no evidence.
                        rq.s.late(depth, m.number, (&mut fl.cited, &mut fl.cited_full));
                        Fill::Reordered
                    } else if deferred {
                        Fill::Deferred
                    } else {
                        Fill::Waiting
                    };
                    // A late packet the pass is on its way to resend is kept rather than the
                    // pass's own gap fill (one the pass resends below it).
                    let keep = fill != Fill::Reordered
                        && matches!(rq.fill, Some((p, Fill::Reordered, ..)) if psn_diff(bth.psn, p) < 0);
                    if !keep {
                        rq.fill = Some((bth.psn, fill, m.number, depth));
                    }
                }
                if deferred {
                    rq.gap_open = None;
                } else if !rq.in_retx {
                    rq.in_retx = true;
                    let trigger = if below_nak { None } else { rq.pending.take() };
                    // A pass that begins with a gap fill (the passes above begin with a resend):
                    // the NAK's or RNR NAK's as well, and the resends after it go on with it.
                    if class == Class::GapFilled {
                        rq.retx_psn = bth.psn;
                        if trigger.is_some() {
                            rq.naks_since_pass = rq.naks_since_pass.saturating_sub(1);
                        }
                    }
                    match trigger {
                        Some(Trigger::Nak) => {
                            rq.s.triggers.nak += 1;
                            if rq.naks_queued > 0 {
                                rq.naks_queued -= 1;
                                rq.pending = Some(Trigger::Nak);
                            }
                        }
                        Some(Trigger::Rnr) => rq.s.triggers.rnr += 1,
                        None if reread => rq.s.triggers.read_response_gap += 1,
                        None if late_nak => rq.s.triggers.nak += 1,
                        None if shown => {
                            rq.s.triggers.timeout += 1;
                            // A pass that begins with a gap fill (the retry count above
                            // took those that begin with a resend).
                            if class == Class::GapFilled {
                                rq.timed_out(bth.psn, ts);
                            }
                            fl.cited.add(&mut fl.cited_full, Cite::Timeout, m.number);
                            if rq.progress_at != 0 && ts.saturating_sub(rq.progress_at) < DUP_NS {
                                fl.early_timeouts = fl.early_timeouts.saturating_add(1);
                                *early |= fl.early_timeouts >= EARLY_DOUBLED
                                    && u64::from(fl.early_timeouts) * 2 >= rq.s.triggers.timeout;
                                // A pass that begins one past an ACK may be a timer that
                                // fired while the next ACK was on its way: no evidence.
                                let after_ack = rq.ack_marks
                                    [..ACK_MARKS.min(usize::from(rq.ack_marks_n))]
                                    .contains(&(bth.psn.wrapping_sub(1) & 0xff_ffff));
                                if rq.acked.is_some_and(|a| psn_diff(bth.psn, a) <= 0) && !after_ack
                                {
                                    fl.early_acked = fl.early_acked.saturating_add(1);
                                    *known |= fl.early_acked >= EARLY_DOUBLED;
                                }
                            }
                        }
                        None => {
                            rq.s.triggers.unknown += 1;
                            if soon {
                                fl.soon_passes = fl.soon_passes.saturating_add(1);
                                *early |= fl.soon_passes >= EARLY_DOUBLED;
                            }
                        }
                    }
                    if let Some(n) = rq.nak_ts.take() {
                        let d = ts.saturating_sub(n);
                        record(&mut rq.s.nak_to_retx, d);
                        let d = u32::try_from(d).unwrap_or(u32::MAX);
                        rq.nak_react = match rq.nak_react {
                            0 => d,
                            r => r - r / 4 + d / 4,
                        };
                    }
                    if class == Class::GapFilled {
                        rq.last_pass = Some((bth.psn, ts));
                    }
                    rq.gap_open = None;
                }
            }
        }
        // Messages: FIRST/MIDDLE/LAST reassembly (first copies only).
        if class != Class::Retransmitted {
            let p = u64::from(e.payload_len);
            match info.op.position() {
                Position::First => {
                    fl.max_fm_payload = fl.max_fm_payload.max(e.payload_len);
                    rq.open_message(p, info.op);
                }
                Position::Middle => {
                    fl.max_fm_payload = fl.max_fm_payload.max(e.payload_len);
                    if let Some((b, op)) = rq.msg_open {
                        rq.msg_open = Some((b + p, op));
                    }
                }
                Position::Last => {
                    if let Some((b, op)) = rq.msg_open.take() {
                        rq.close_message(b + p, op);
                    }
                }
                Position::Only => {
                    let size = if is_read {
                        u64::from(e.dma_len().unwrap_or(0))
                    } else {
                        p
                    };
                    rq.close_message(size, info.op);
                    if is_read {
                        rq.s.msgs.read_bytes_requested += size;
                    }
                }
            }
        }
        if bth.ackreq
            && !is_read
            && rq
                .ackreq
                .back()
                .is_none_or(|&(p, _)| psn_diff(bth.psn, p) > 0)
        {
            if rq.ackreq.len() == 512 {
                rq.ackreq.pop_front();
            }
            rq.ackreq.push_back((bth.psn, ts));
            rq.last_wait_frame = m.number;
        }
        if is_read && class == Class::New {
            if rq.reads.len() == 1024 {
                rq.reads.pop_front();
            }
            rq.reads.push_back((bth.psn, ts));
            rq.last_wait_frame = m.number;
        }
        if ce {
            fl.cited.add(&mut fl.cited_full, Cite::Ce, m.number);
            if rq.ce_pending.is_none() {
                rq.ce_pending = Some(ts);
            }
        }
        // Rate around CNPs.
        rq.recent
            .sent(&mut rq.after_cnp, &mut rq.s.rate_after, ts, m.orig_len);
        false
    }

    /// The requester flow a response flow answers: its peer, from CM or inferred from PSNs.
    #[inline(always)]
    fn requester_of(&mut self, fi: usize, psn: Option<u32>) -> Option<usize> {
        if let Some(p) = self.flows[fi].peer() {
            return Some(p);
        }
        let (src, dst, qp) = self.flows[fi].key;
        // CM: the responder's QP is the peer of the requester QP `qp` at `dst`, if CM paired
        // that QP with this flow's source (a QPN reused towards another node, without a CM
        // exchange captured, is inferred instead).
        let cm = self
            .cm_peer
            .get(&(dst, qp))
            .filter(|(node, _)| *node == src);
        let cand = if let Some(&(node, peer_qp)) = cm {
            let class = self.cm_class.get(&(dst, qp)).copied().unwrap_or(0);
            self.flows[fi].class = class;
            let c = self.index.get(&self.flows, &(dst, node, peer_qp));
            if let Some(c) = c {
                self.flows[c].class = class;
            }
            c
        } else {
            let pair = self.by_pair.get(&(dst, src))?;
            let f = &mut self.flows[fi];
            // A scan that found nothing is repeated only when the candidates changed, or after
            // 1, 2, 4, … and then every 4,096 skipped calls (a candidate's PSNs may come into
            // range): ACKs whose requests the capture lacks (a mirror that sees one direction of
            // some QPs, ECMP) would otherwise scan every flow of the pair, each of them.
            if psn.is_some() && f.missed_gen == pair.gen.wrapping_add(1) {
                f.missed = f.missed.wrapping_add(1);
                if !(f.missed.is_power_of_two() || f.missed % 4096 == 0) {
                    return None;
                }
            }
            if !self.may_search(fi, pair.flows.len()) {
                return None;
            }
            let pair = self.by_pair.get(&(dst, src))?;
            #[cfg(test)]
            {
                self.scans += 1;
            }
            let list = &pair.flows;
            let mut best: Option<(i64, usize)> = None;
            for &c in list {
                let Some(h) = self.flows[c].req.highest() else {
                    continue;
                };
                if self.flows[c].peer().is_some_and(|p| p != fi) {
                    continue;
                }
                let d = match psn {
                    Some(p) => i64::from(psn_diff(p, h)).abs(),
                    None => (u64::MAX - self.flows[c].last_ts).min(i64::MAX as u64) as i64,
                };
                if (d < (1 << 20) || psn.is_none()) && best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, c));
                }
            }
            if best.is_none() && psn.is_some() {
                let f = &mut self.flows[fi];
                let gen = pair.gen.wrapping_add(1);
                if f.missed_gen != gen {
                    f.missed_gen = gen;
                    f.missed = 0;
                }
            }
            best.map(|b| b.1)
        };
        let c = cand?;
        if psn.is_some() {
            self.flows[fi].set_peer(c);
            self.flows[c].set_peer(fi);
        }
        Some(c)
    }

    /// Whether a search of `n` candidate flows for a requester may be made, charging it if so.
    /// Searches may examine [`SEARCH_BASE`] flows and [`SEARCH_PER_PACKET`] more a packet fed:
    /// a node pair with tens of thousands of flows that never pair (one direction of very many
    /// QPs, or damaged or forged packets), each ACK or CNP on a new one, would otherwise make
    /// the pass quadratic. Real captures stay far inside it; one that does not gets the
    /// finding `capture.search_limit`.
    fn may_search(&mut self, fi: usize, n: usize) -> bool {
        let allowed = SEARCH_PER_PACKET
            .saturating_mul(self.capture.packets)
            .saturating_add(self.search_base);
        let n = n as u64;
        if self.searched.saturating_add(n) > allowed {
            self.searches_skipped += 1;
            if self.skipped_flows.len() < SKIPPED_NAMED && !self.skipped_flows.contains(&fi) {
                self.skipped_flows.push(fi);
            }
            return false;
        }
        self.searched += n;
        true
    }

    /// Whether packet `e` of flow `fi`, an ACK, NAK or READ response, is the capture's second
    /// copy of one of the last [`ANSWERS`] on the flow (same opcode, PSN and AETH) whose copy
    /// has not come, less than [`DUP_NS`] after it, with no request resent since it and no
    /// more resent in the [`DUP_NS`] before it than the alike answers so far; if so it is
    /// counted as such (and must count as nothing else). A responder answers a request once,
    /// and again only when the request comes again: a resend, which the capture shows before
    /// the answer, and in a go-back-N pass resends of requests the responder has come
    /// before their answers, each answered alike. UD packets are not checked: a flow's key has
    /// no source QP, and UD QPs of one node sending to one QP may well be at the same PSN at
    /// once.
    #[inline(always)]
    fn response_copy(&mut self, fi: usize, e: &Event, bth: Bth) -> bool {
        let aeth = e.aeth.map_or(0, |a| {
            u64::from(a.syndrome) << 24 | u64::from(a.msn & 0xff_ffff)
        });
        let key = u64::from(bth.opcode) << 56 | aeth << 24 | u64::from(bth.psn & 0xff_ffff);
        let ts = e.meta.ts_ns & !ANSWER_COPIED;
        let rs = self.flows[fi].resp();
        let n = (rs.answers_n as usize).min(ANSWERS);
        let found = rs.answers[..n]
            .iter()
            .position(|&(t, k)| k == key && t <= ts && ts - t < DUP_NS);
        if let Some(i) = found {
            let first = rs.answers[i].0;
            let (alike, earliest) = rs.answers[..n]
                .iter()
                .filter(|&&(t, k)| k == key && t <= ts && ts - t < DUP_NS)
                .fold((0, u64::MAX), |(c, e), &(t, _)| (c + 1, e.min(t)));
            if self.unasked(fi, (first, ts), (alike, earliest)) && !self.sent_again(fi, bth) {
                self.flows[fi].resp().answers[i].0 |= ANSWER_COPIED;
                self.duplicate(fi, e.meta.number);
                return true;
            }
        } else if self.doubled && n == ANSWERS && self.trailing_copy(fi, bth, ts) {
            self.duplicate(fi, e.meta.number);
            return true;
        }
        let kinds = &self.kinds;
        let rs = self.flows[fi].resp();
        if kinds[usize::from(bth.opcode)] == Kind::ReadResponse {
            let run = rs.in_read_run(kinds);
            rs.read_run_at(ts, run);
            // READ RESPONSE First or Only (IBTA Table 38): a READ's answer begins.
            if matches!(bth.opcode & 0x1f, 0x0d | 0x10) {
                rs.read_first = (bth.psn, ts);
            }
        }
        rs.answers[rs.answers_n as usize % ANSWERS] = (ts, key);
        rs.answers_n = rs.answers_n.wrapping_add(1);
        rs.damaged_last = false;
        false
    }

    /// Whether answer `bth` at `ts` on response flow `fi`, in a capture known to hold packets
    /// twice, is the copy of one that left `answers` already: the copies trail by more answers
    /// than it holds, and it spans less than [`DUP_NS`]. So it is when the responder cannot
    /// have sent it again for a request that came again, and the requester resent nothing in
    /// the [`DUP_NS`] before it:
    /// - an ACK that acknowledges no PSN beyond the last ACK (a responder acknowledges again
    ///   only a request that came again);
    /// - a READ response whose PSN came before but not right after the last response (a
    ///   responder sending again goes on in order), none the requester asked for again
    ///   ([`Req::reasked`]: the responder may send those long after the request, behind the
    ///   responses it was sending).
    #[cold]
    fn trailing_copy(&mut self, fi: usize, bth: Bth, ts: u64) -> bool {
        let kind = self.kinds[usize::from(bth.opcode)];
        let rs = self.flows[fi].resp();
        let oldest = rs.answers[rs.answers_n as usize % ANSWERS].0 & !ANSWER_COPIED;
        let again = match kind {
            Kind::Ack => rs.last_ack.is_some_and(|l| psn_diff(bth.psn, l) <= 0),
            Kind::ReadResponse => rs.read_sender.as_deref().is_some_and(|r| {
                r.psns.came(bth.psn) && r.last.is_none_or(|l| psn_diff(bth.psn, l) != 1)
            }),
            _ => false,
        };
        if !again || ts.saturating_sub(oldest) >= DUP_NS {
            return false;
        }
        let Some(q) = self.flows[fi]
            .peer()
            .and_then(|p| self.flows[p].req.live_ref())
        else {
            return true;
        };
        // No request resent in the window an answer at `ts` may answer (at least `DUP_NS`).
        !self.reasked(fi, bth)
            && q.resends.as_deref().is_none_or(|r| {
                let rs = self.flows[fi].resp.as_deref();
                let from = rs.map_or(ts.saturating_sub(DUP_NS), |rs| {
                    self.answers_from(rs, q, r, (ts, ts), ts)
                });
                r.since(from) == 0
            })
    }

    /// Whether `bth` is a READ response on flow `fi` that its requester asked for again
    /// ([`Req::reasked`]): the responder may send it long after the request, behind the
    /// responses it was sending, so no copy.
    fn reasked(&self, fi: usize, bth: Bth) -> bool {
        let mtu = self.flows[fi].max_fm_payload;
        self.kinds[usize::from(bth.opcode)] == Kind::ReadResponse
            && self.flows[fi]
                .peer()
                .and_then(|p| self.flows[p].req.live_ref())
                .and_then(|q| q.reasked_to_end(mtu))
                .is_some_and(|(from, upto, _)| {
                    psn_diff(bth.psn, from) >= 0 && psn_diff(upto, bth.psn) >= 0
                })
    }

    /// Whether READ response `bth` on flow `fi` is one its requester asked for again that goes
    /// on from the response before it (past any that came damaged or not at all between): the
    /// responder sending them again in order, not the capture's copy (which follows its
    /// first).
    #[cold]
    #[inline(never)]
    fn sent_again(&self, fi: usize, bth: Bth) -> bool {
        let sender = self.flows[fi]
            .resp
            .as_deref()
            .and_then(|r| r.read_sender.as_ref());
        sender
            .and_then(|r| r.last)
            .is_some_and(|l| psn_diff(bth.psn, l) > 0)
            && self.reasked(fi, bth)
    }

    /// Whether response flow `fi`'s requester resent no request since its answer at `t`, and
    /// no more than `alike` (the answers like it so far, the earliest at `earliest`) in the
    /// [`DUP_NS`] before the earliest (none known: none), for an answer like it at `ts`. The
    /// second only while the capture does not hold the requests twice as well ([`PAIRED`]):
    /// then the answers' copies come right after the resends too. A requester whose state CM's
    /// DREQ sealed kept no record of its resends, while the responder still answers those that
    /// came before the DREQ: its answers count as the responder's unless the capture is known
    /// to hold packets twice.
    #[cold]
    fn unasked(&self, fi: usize, (t, ts): (u64, u64), (alike, earliest): (usize, u64)) -> bool {
        let peer = self.flows[fi].peer().map(|p| &self.flows[p].req);
        if peer.is_some_and(|q| q.sealed.is_some()) {
            return self.doubled;
        }
        let Some(rq) = peer.and_then(ReqState::live_ref) else {
            return true;
        };
        let Some(r) = rq.resends.as_deref() else {
            return true;
        };
        let Some(rs) = self.flows[fi].resp.as_deref() else {
            return true;
        };
        let from = self.answers_from(rs, rq, r, (t, ts), earliest);
        r.since(t) == 0 && (rq.pairs >= PAIRED || r.since(from) <= alike)
    }

    /// Since when requester `rq`'s resends (`r`) may be answered by an answer at `ts` on the
    /// response flow `rs` like one at `t`, the earliest such at `earliest`. Answers to requests
    /// resent come behind the READ responses the responder was sending (in order, IBTA
    /// §9.7.5). The window starts `DUP_NS` before the earliest alike answer (which may answer
    /// no resend: it can be the first answer), grows by the run of READ responses that ended
    /// just before, and reaches back to the resent READs that the last responses before the
    /// earliest alike answer and before this one answer: what was resent after such a READ is
    /// answered after its responses, however long they took.
    fn answers_from(
        &self,
        rs: &Resp,
        rq: &Req,
        r: &Resends,
        (t, ts): (u64, u64),
        earliest: u64,
    ) -> u64 {
        let (start, end) = rs.read_run;
        let mut from = t.min(earliest).saturating_sub(DUP_NS);
        if end <= t && t - end < DUP_NS {
            from = from.saturating_sub(end.saturating_sub(start).min(DUP_NS));
        }
        // The READ responses remembered, with a PSN of the READ each answered, a time it was
        // sent by, and a time from which what came is answered after them: among the last
        // answers (sent before the response), and the last of each of the last runs of READ
        // responses (with the PSN its READ's answer began at, unless that first response came
        // damaged; sent before that first response, and what came after the READ's first whole
        // send before it, or after it if no send is remembered, is answered after the run).
        // The last before the alike answers tells the resent READ, the earliest such READ
        // those PSNs name.
        let n = (rs.answers_n as usize).min(ANSWERS);
        let last = rs.read_sender.as_deref().and_then(|r| r.last).unwrap_or(0);
        let current = [ReadRun::new(rs.read_run, rs.read_first, last)];
        let runs = rs.read_before.iter().chain(&current);
        let reads = rs.answers[..n]
            .iter()
            .filter(|&&(_, k)| self.kinds[(k >> 56) as usize] == Kind::ReadResponse)
            .map(|&(a, k)| {
                let a = a & !ANSWER_COPIED;
                (a, k as u32 & 0xff_ffff, a, u64::MAX)
            })
            .chain(runs.flat_map(|r| {
                let after = rq
                    .sent_before(r.first, r.sent_by)
                    .map_or(r.sent_by, |t| (t + 1).min(r.sent_by));
                [r.first, r.last].map(|p| (r.end, p, r.sent_by, after))
            }));
        // A re-read's responses between the earliest alike answer and this one put this one
        // behind them.
        for bound in [earliest, ts] {
            let before = reads
                .clone()
                .filter(|&(a, ..)| a > 0 && a < bound && bound - a < DUP_NS);
            let newest = before.clone().map(|(a, ..)| a).max();
            if let Some(s) = before
                .filter(|&(a, ..)| Some(a) == newest)
                .map(|(_, p, by, after)| r.read_of(p, by).map_or(after, |s| (s + 1).min(after)))
                .min()
            {
                from = from.min(s);
            }
        }
        from
    }

    /// An ACK, NAK or RNR NAK the snaplen cut before the end of its AETH: counted for
    /// `capture.truncated`; it pairs the flows and tells its requester how far the responder
    /// got ([`Req::answered_blind`]), nothing more.
    #[cold]
    #[inline(never)]
    fn ack_cut(&mut self, m: &PacketMeta, fi: usize, bth: Bth) {
        self.cut_before_aeth.0 += 1;
        sample(&mut self.cut_before_aeth.1, m.number);
        let Some(r) = self.requester_of(fi, Some(bth.psn)) else {
            return;
        };
        if let Some(rq) = self.flows[r].req.live() {
            rq.answered_blind(bth.psn, m.ts_ns);
        }
    }

    fn ack(&mut self, m: &PacketMeta, fi: usize, e: &Event, bth: Bth) {
        let Some(aeth) = e.aeth else {
            return self.ack_cut(m, fi, bth);
        };
        if self.response_copy(fi, e, bth) {
            return;
        }
        let ts = m.ts_ns;
        let req = self.requester_of(fi, Some(bth.psn));
        match aeth.kind() {
            AethKind::Ack { .. } => {
                let rs = self.flows[fi].resp();
                if rs.last_ack.is_some_and(|l| psn_diff(bth.psn, l) <= 0) {
                    rs.dup_acks += 1;
                }
                if rs.last_ack.is_none_or(|l| psn_diff(bth.psn, l) > 0) {
                    rs.last_ack = Some(bth.psn);
                }
                let rf = req.map(|r| &mut self.flows[r]);
                if let Some((class, rq)) = rf.and_then(|f| Some((f.class, f.req.live()?))) {
                    rq.timeouts_in_row = 0;
                    rq.rnr_in_row = 0;
                    rq.acknowledged(bth.psn, ts, &mut self.ack_class, class);
                }
            }
            AethKind::RnrNak { timer_code } => {
                self.count(EV_RNR, 1);
                let fl = &mut self.flows[fi];
                fl.cite(Cite::Rnr, m.number);
                let rs = fl.resp().more();
                rs.rnr += 1;
                let us = rnr_timer_us(timer_code);
                if !rs.rnr_timers.contains(&us) && rs.rnr_timers.len() < 8 {
                    rs.rnr_timers.push(us);
                }
                if let Some(r) = req {
                    let class = self.flows[r].class;
                    if let Some(rq) = self.flows[r].req.open() {
                        let before = bth.psn.wrapping_sub(1) & 0xff_ffff;
                        rq.acknowledged(before, ts, &mut self.ack_class, class);
                        rq.pending = Some(Trigger::Rnr);
                        rq.naks_queued = 0;
                        rq.timeouts_in_row = 0;
                        rq.rnr_in_row = rq.rnr_in_row.saturating_add(1);
                        rq.s.rnr_naks_in_a_row =
                            rq.s.rnr_naks_in_a_row.max(u64::from(rq.rnr_in_row));
                        rq.naks_since_pass = rq.naks_since_pass.saturating_add(1);
                        (rq.nak_psn_since, rq.nak_since_rnr) = (Some(bth.psn), true);
                    }
                }
            }
            AethKind::Nak { code } => {
                self.count(EV_NAK, 1);
                let fl = &mut self.flows[fi];
                fl.resp().more().naks[usize::from(code.min(4))] += 1;
                fl.cite(Cite::Nak, m.number);
                if code != 0 {
                    fl.cite(Cite::fatal_nak(code), m.number);
                }
                let rf = req.map(|r| &mut self.flows[r]);
                if let Some((class, rq)) = rf.and_then(|f| Some((f.class, f.req.live()?))) {
                    // The NAK's PSN is the request it refuses: every one before it arrived
                    // (IBTA §9.7.5.1.2), an acknowledgement for their latency (as an RNR
                    // NAK's is).
                    let before = bth.psn.wrapping_sub(1) & 0xff_ffff;
                    rq.acknowledged(before, ts, &mut self.ack_class, class);
                    rq.timeouts_in_row = 0;
                    rq.rnr_in_row = 0;
                    rq.naks_since_pass = rq.naks_since_pass.saturating_add(1);
                    (rq.nak_psn_since, rq.nak_since_rnr) = (Some(bth.psn), false);
                    rq.last_nak_at = Some(ts);
                    if code != 0 {
                        // Any other NAK may not be retried: the requester's QP goes to the
                        // error state, the requests before the NAKed one are done and the rest
                        // flushed, so none is waiting for an answer any more.
                        rq.ackreq.clear();
                        rq.reads.clear();
                        rq.pending = None;
                        rq.naks_queued = 0;
                    }
                }
                // Only a PSN sequence error NAK leads to a retransmission.
                if let (0, Some(r)) = (code, req) {
                    if let Some(rq) = self.flows[r].req.open() {
                        if rq.pending != Some(Trigger::Nak) {
                            rq.nak_low = bth.psn;
                        } else if rq.nak_psn != bth.psn {
                            rq.naks_queued = rq.naks_queued.saturating_add(1);
                            if psn_diff(bth.psn, rq.nak_low) < 0 {
                                rq.nak_low = bth.psn;
                            }
                        }
                        rq.nak_psn = bth.psn;
                        rq.pending = Some(Trigger::Nak);
                        if let Some(g) = rq.gap_open.take() {
                            record(&mut rq.s.gap_to_nak, ts.saturating_sub(g));
                        }
                        rq.nak_ts.get_or_insert(ts);
                    }
                }
            }
            AethKind::Reserved { .. } => {}
        }
    }

    fn read_response(&mut self, m: &PacketMeta, fi: usize, e: &Event, bth: Bth, op: Operation) {
        if self.response_copy(fi, e, bth) {
            return;
        }
        let req = self.requester_of(fi, Some(bth.psn));
        let fl = &mut self.flows[fi];
        if matches!(op.position(), Position::First | Position::Middle) {
            fl.max_fm_payload = fl.max_fm_payload.max(e.payload_len);
        }
        let sender = fl.resp().read_sender.get_or_insert_with(Box::default);
        // Responses skipped (lost before the capture point): the requester reads them again.
        // Responses sent again go on in order too: one below the highest that passes over PSNs
        // after the last skipped them (lost, or their READ's request was).
        let last = sender.last;
        let (class, skipped) = sender.psns.see(bth.psn);
        let skipped = skipped.or_else(|| {
            let l = last?;
            let d = psn_diff(bth.psn, l);
            (class != Class::New && (2..RESPONSE_PSNS as i32).contains(&d))
                .then(|| l.wrapping_add(1) & 0xff_ffff)
        });
        let first = class != Class::Retransmitted;
        sender.last = Some(bth.psn);
        if first {
            sender.payload += u64::from(e.payload_len);
        }
        match class {
            Class::New => {}
            Class::GapFilled => sender.gap_filled += 1,
            Class::Retransmitted => sender.resent += 1,
        }
        if e.ecn == Some(3) && e.encap == Some(Encap::RoceV2) && sender.ce_pending.is_none() {
            sender.ce_pending = Some(m.ts_ns);
        }
        let ReadSender {
            recent,
            after_cnp,
            rate_after,
            ..
        } = &mut **sender;
        recent.sent(after_cnp, rate_after, m.ts_ns, m.orig_len);
        if class != Class::New {
            fl.cited.add(&mut fl.cited_full, Cite::Retx, m.number);
            bump(&mut self.tl.events[EV_RETX], self.tl.cur, 1);
        }
        let Some(r) = req else { return };
        // Bytes a READ returned: first copies (a re-read's responses sent again return none).
        let returned = if first { u64::from(e.payload_len) } else { 0 };
        let class = self.flows[r].class;
        let mtu = self.flows[fi].max_fm_payload;
        let st = &mut self.flows[r].req;
        if let Some(b) = &mut st.sealed {
            // Responses after the close (rare): the packed summary counts them too.
            let mut s = ReqSum::unpack(b);
            s.msgs.read_bytes_returned += returned;
            *b = s.pack();
            return;
        }
        let rq = st.get();
        rq.timeouts_in_row = 0;
        rq.rnr_in_row = 0;
        rq.s.msgs.read_bytes_returned += returned;
        if rq.read_answered.is_none_or(|h| psn_diff(bth.psn, h) > 0) {
            rq.read_answered = Some(bth.psn);
        }
        rq.read_response_at = m.ts_ns;
        if let Some(p) = skipped {
            rq.passed_over(p, bth.psn, mtu, m.ts_ns);
        }
        // A damaged response, followed as it came only because its flow had no good ICRC yet:
        // lost to the requester all the same.
        if e.icrc == Some(IcrcStatus::Bad) {
            rq.lost(bth.psn, mtu, m.ts_ns);
        }
        // The responses sent again began, and then went past what was asked again: they all
        // came (a responder sends in order).
        if rq.reask_len > 0 {
            rq.reasked = rq.reasked_to_end(mtu);
            rq.reask_len = 0;
        }
        if let Some((from, upto, began)) = &mut rq.reasked {
            if psn_diff(bth.psn, *upto) > 0 {
                if *began {
                    rq.reasked = None;
                }
            } else if psn_diff(bth.psn, *from) >= 0 {
                *began = true;
            }
        }
        if matches!(op.position(), Position::Last | Position::Only) {
            let mut read = None;
            while let Some(&(p, t)) = rq.reads.front() {
                if psn_diff(p, bth.psn) <= 0 {
                    rq.reads.pop_front();
                    record(&mut rq.s.read_lat, m.ts_ns.saturating_sub(t));
                    read = Some(p);
                } else {
                    break;
                }
            }
            // The READ's PSNs end here: unseen PSNs after them are missing, not its shadow.
            if let (Some(p), Some(t)) = (read, rq.s.psn.as_mut()) {
                t.consumed(p.wrapping_add(1) & 0xff_ffff, bth.psn);
            }
            // A READ response also acknowledges the requests before it.
            rq.acknowledged(bth.psn, m.ts_ns, &mut self.ack_class, class);
        }
    }

    /// READ response `psn` of flow `fi` came damaged at `ts`: its requester (if paired; a
    /// damaged header pairs nothing) remembers it as lost (see [`Lost`]). The run of READ
    /// responses it follows goes on to it: the responder answers what came meanwhile after it.
    #[cold]
    #[inline(never)]
    fn read_response_lost(&mut self, fi: usize, psn: u32, ts: u64) {
        // It goes on the run of READ responses under way, or begins one: the answers to
        // requests resent meanwhile come behind it.
        let rs = self.flows[fi].resp();
        if rs.in_read_run(&self.kinds) {
            rs.read_run.1 = rs.read_run.1.max(ts);
        } else {
            rs.read_run_at(ts, false);
        }
        rs.damaged_last = true;
        let Some(r) = self.flows[fi].peer() else {
            return;
        };
        let mtu = self.flows[fi].max_fm_payload;
        if let Some(rq) = self.flows[r].req.live() {
            // The same response damaged again less than `DUP_NS` after it was found lost, or
            // after it last came damaged, is the capture's copy of it (a responder sends it
            // again only for a re-read): the loss keeps its time, or a READ's copy since would
            // read as asking for it again. Copies of copies (a capture held twice microseconds
            // apart, and a re-read's answer taken for a copy) go on from the last.
            let again = rq.read_lost.as_deref().is_some_and(|l| {
                l.newest().is_some_and(|(p, at)| {
                    p == psn && ts.saturating_sub(at.max(l.damaged_at)) < DUP_NS
                })
            });
            if !again {
                rq.lost(psn, mtu, ts);
            }
            if let Some(l) = rq.read_lost.as_deref_mut() {
                l.damaged_at = l.damaged_at.max(ts);
            }
        }
    }

    fn cnp(&mut self, m: &PacketMeta, fi: usize) {
        self.count(EV_CNP, 1);
        let ts = m.ts_ns;
        self.flows[fi].resp().more().cnp += 1;
        if self.cnp_copy(fi, ts) {
            self.duplicate(fi, m.number);
            return;
        }
        // The CNP goes to the reaction point: the sender of the marked traffic.
        let skipped = self.searches_skipped;
        let req = self.requester_of(fi, None).or_else(|| {
            let (src, dst, _) = self.flows[fi].key;
            let n = self.by_pair.get(&(dst, src))?.flows.len();
            if !self.may_search(fi, n) {
                return None;
            }
            let list = &self.by_pair.get(&(dst, src))?.flows;
            list.iter()
                .copied()
                .filter_map(|c| Some((self.flows[c].ce_pending()?, c)))
                .min_by_key(|&(t, _)| t)
                .map(|(_, c)| c)
        });
        // One CNP counts once, whether one or both of its searches were skipped.
        self.searches_skipped = self.searches_skipped.min(skipped + 1);
        {
            let rs = self.flows[fi].resp().more();
            if let Some(l) = rs.last_cnp {
                record(&mut rs.cnp_interval, ts.saturating_sub(l));
            }
            rs.last_cnp = Some(ts);
            rs.last_cnp_copied = false;
            rs.last_cnp_req = req;
        }
        let Some(r) = req else { return };
        let rf = &mut self.flows[r];
        let request_ce = rf.req.live().and_then(|q| q.ce_pending.take());
        let read = rf
            .resp
            .as_deref_mut()
            .and_then(|r| r.read_sender.as_deref_mut());
        let read_ce = read.and_then(|s| s.ce_pending.take());
        if let Some(t) = request_ce.into_iter().chain(read_ce).min() {
            record(
                &mut self.flows[fi].resp().more().ce_to_cnp,
                ts.saturating_sub(t),
            );
        }
        // The rate of the data the CNP slows: the READ responses when CE marks on them asked for
        // it, or when they are all the flow sent in the 100 µs before; else the requests (a
        // closed connection's sender has no rate around this CNP).
        let rf = &mut self.flows[r];
        if let Some(s) = rf
            .resp
            .as_deref_mut()
            .and_then(|r| r.read_sender.as_deref_mut())
            .filter(|s| {
                read_ce.is_some() && request_ce.is_none()
                    || rf.req.live_ref().is_none_or(|q| {
                        q.recent.before(ts / 10_000) == 0 && s.recent.before(ts / 10_000) > 0
                    })
            })
        {
            s.recent.cnp(&mut s.after_cnp, &mut s.rate_before, ts);
        } else if let Some(q) = rf.req.open() {
            q.recent.cnp(&mut q.after_cnp, &mut q.s.rate_before, ts);
        }
    }

    /// Whether a CNP of flow `fi` at `ts` is the capture's second copy of the flow's last CNP:
    /// less than [`DUP_NS`] after it, that copy not yet come, while the capture holds every
    /// packet of the requester flow that CNP went to twice (its last [`PAIRED`] requests had
    /// their copies). A notification point may send CNPs to one QP as close together (mlx5's
    /// `np_min_time_between_cnps` may be 0), so without copies of the data around them two
    /// CNPs are two. A copy counts as a packet, an opcode and a CNP, and in no interval or rate.
    #[cold]
    fn cnp_copy(&mut self, fi: usize, ts: u64) -> bool {
        let rs = self.flows[fi].resp().more();
        let (Some(l), false) = (rs.last_cnp, rs.last_cnp_copied) else {
            return false;
        };
        if ts < l || ts - l >= DUP_NS {
            return false;
        }
        let Some(r) = rs.last_cnp_req else {
            return false;
        };
        let copied = self.flows[r]
            .req
            .live_ref()
            .is_some_and(|q| q.pairs >= PAIRED);
        self.flows[fi].resp().more().last_cnp_copied = copied;
        copied
    }

    /// A CM connection beyond `max_flows`, its REQ sent by `requester` with Comm ID `comm`:
    /// counted once, whether its REQ is retried or rejected.
    #[cold]
    fn cm_beyond_limit(&mut self, requester: Node, comm: u32) {
        let full = self.cm_untracked_ids.len() >= CM_UNTRACKED_KEPT;
        if full || self.cm_untracked_ids.insert((requester, comm)) {
            self.cm_untracked += 1;
        }
    }

    fn cm_message(&mut self, m: &PacketMeta, src: Node, dst: Node, cm: CmMessage) {
        match cm {
            CmMessage::Req(r) => {
                if self.cm_index.contains_key(&(src, r.local_comm_id)) {
                    return; // a retried REQ
                }
                if self.cm.len() >= self.max_flows {
                    self.cm_beyond_limit(src, r.local_comm_id);
                    return;
                }
                self.cm.push(CmConn {
                    a: src,
                    b: dst,
                    qpn_a: r.local_qpn,
                    psn_a: r.starting_psn,
                    qpn_b: None,
                    psn_b: None,
                    mtu: mad::mtu_bytes(r.path_mtu),
                    transport: r.transport_type,
                    service_id: r.service_id,
                    state: "requested",
                    reject: None,
                    req_ts: m.ts_ns,
                    req_frame: m.number,
                    reply_frame: None,
                    retry_count: r.retry_count,
                    rnr_retry_a: 7,
                    rnr_retry_b: r.rnr_retry_count,
                });
                self.cm_index
                    .insert((src, r.local_comm_id), self.cm.len() - 1);
            }
            CmMessage::Rep(r) => {
                if let Some(&i) = self.cm_index.get(&(dst, r.remote_comm_id)) {
                    let c = &mut self.cm[i];
                    c.qpn_b = Some(r.local_qpn);
                    c.psn_b = Some(r.starting_psn);
                    c.rnr_retry_a = r.rnr_retry_count;
                    c.state = "replied";
                    c.reply_frame.get_or_insert(m.number);
                    self.cm_peer.insert((c.a, c.qpn_a), (c.b, r.local_qpn));
                    self.cm_peer.insert((c.b, r.local_qpn), (c.a, c.qpn_a));
                    let class = match crate::findings::application(c.service_id) {
                        Some(app) => CLASSES.iter().position(|x| *x == app).unwrap_or(5) as u8,
                        None => 5,
                    };
                    self.cm_class.insert((c.a, c.qpn_a), class);
                    self.cm_class.insert((c.b, r.local_qpn), class);
                }
            }
            CmMessage::Rtu(r) => self.cm_state(src, r.local_comm_id, "established", m.number),
            CmMessage::Rej(r) => {
                // REJ comes from the passive side: remote Comm ID = the requester's.
                if let Some(&i) = self.cm_index.get(&(dst, r.remote_comm_id)) {
                    let c = &mut self.cm[i];
                    c.state = "rejected";
                    c.reject = Some(r.reason);
                    c.reply_frame.get_or_insert(m.number);
                } else if self.cm.len() >= self.max_flows {
                    self.cm_beyond_limit(dst, r.remote_comm_id);
                } else {
                    // The REQ is not in the capture (or was cut by the snaplen): keep the REJ.
                    self.cm.push(CmConn {
                        a: dst,
                        b: src,
                        qpn_a: 0,
                        psn_a: 0,
                        qpn_b: None,
                        psn_b: None,
                        mtu: None,
                        transport: 0,
                        service_id: 0,
                        state: "rejected",
                        reject: Some(r.reason),
                        req_ts: m.ts_ns,
                        req_frame: m.number,
                        reply_frame: Some(m.number),
                        retry_count: 7,
                        rnr_retry_a: 7,
                        rnr_retry_b: 7,
                    });
                    self.cm_index
                        .insert((dst, r.remote_comm_id), self.cm.len() - 1);
                }
            }
            CmMessage::Mra(r) => {
                if let Some(&i) = self.cm_index.get(&(dst, r.remote_comm_id)) {
                    self.cm[i].reply_frame.get_or_insert(m.number);
                }
            }
            CmMessage::Dreq(r) => {
                self.cm_state(src, r.local_comm_id, "disconnecting", m.number);
                self.cm_state(dst, r.remote_comm_id, "disconnecting", m.number);
                // DREQ names the QP being closed: its flows send no more (this works even
                // when a short snaplen cut the REQ).
                if let Some(fi) = self.index.get(&self.flows, &(src, dst, r.remote_qpn)) {
                    if let Some(p) = self.flows[fi].peer() {
                        self.flows[p].seal();
                    }
                    self.flows[fi].seal();
                }
            }
            CmMessage::Drep(r) => {
                self.cm_state(src, r.local_comm_id, "closed", m.number);
                self.cm_state(dst, r.remote_comm_id, "closed", m.number);
            }
            _ => {}
        }
    }

    fn cm_state(&mut self, node: Node, comm: u32, state: &'static str, _frame: u64) {
        if let Some(&i) = self.cm_index.get(&(node, comm)) {
            self.cm[i].state = state;
            if state == "closed" {
                self.seal_connection(i);
            }
        }
    }

    /// A connection CM closed sends no more: keep only the summaries of its flows' state, so
    /// memory follows the live connections, not the length of the capture.
    fn seal_connection(&mut self, i: usize) {
        let c = &self.cm[i];
        let Some(qb) = c.qpn_b else { return };
        for key in [(c.a, c.b, qb), (c.b, c.a, c.qpn_a)] {
            if let Some(fi) = self.index.get(&self.flows, &key) {
                self.flows[fi].seal();
            }
        }
    }

    /// PFC/PAUSE episodes: an episode starts at a non-zero quanta frame, each further one
    /// extends it to max(end, ts + quanta time), and it ends at a zero-quanta frame or expiry.
    /// A quantum is 512 bit times (IEEE 802.3 Annex 31B, 802.1Qbb) of the link the frame was
    /// captured on: its interface's `if_speed` unless the configuration forces one.
    /// An LLDP frame: its sender's DCB settings replace those it sent before.
    #[cold]
    fn dcb_frame(&mut self, m: &PacketMeta, d: &Dcb) {
        if !self.dcb.contains_key(&d.src) && self.dcb.len() >= MAX_PFC_PORTS {
            self.dcb_untracked += 1;
            return;
        }
        let s = self.dcb.entry(d.src).or_insert_with(|| DcbState {
            first_frame: m.number,
            ..DcbState::default()
        });
        s.frames += 1;
        if let (Some(old), Some(new)) = (s.last.pfc, d.pfc) {
            s.pfc_changes += u64::from(old.enable != new.enable || old.willing != new.willing);
        }
        s.last = d.clone();
    }

    fn pfc_frame(&mut self, m: &PacketMeta, src: [u8; 6], mc: MacControl) {
        let link = match m.if_speed {
            Some(s) if IF_SPEEDS.contains(&s) && !self.link_forced => s,
            _ => self.link_bps(),
        };
        let prios: Vec<(u8, u16)> = match mc {
            MacControl::Pfc { enable, quanta } => (0..8u8)
                .filter(|p| enable >> p & 1 == 1)
                .map(|p| (p, quanta[p as usize]))
                .collect(),
            MacControl::Pause { quanta } => vec![(255, quanta)],
            MacControl::Other { .. } => return,
        };
        let ts = m.ts_ns;
        if self.doubled && self.pfc_copy(src, mc, ts) {
            return self.copy_found(m.number);
        }
        self.pfc_recent.rotate_right(1);
        self.pfc_recent[0] = Some((src, mc, ts));
        self.pfc_frames.0 += 1;
        if prios.iter().any(|p| p.1 > 0) {
            self.pfc_frames.1 += 1;
        } else {
            self.pfc_frames.2 += 1;
        }
        let mut untracked = false;
        for (p, q) in prios {
            if self.pfc.len() >= MAX_PFC_PORTS && !self.pfc.contains_key(&(src, p)) {
                untracked = true;
                continue;
            }
            let st = self.pfc.entry((src, p)).or_default();
            if st.frames == 0 {
                st.first_frame = m.number;
            }
            st.frames += 1;
            st.full_ns = quanta_to_ns(0xffff, link);
            if st.end > 0 && ts >= st.end {
                let (s, e) = (st.start, st.end);
                close(st, e);
                self.episode(src, p, s, e);
            }
            let st = self.pfc.entry((src, p)).or_default();
            if q > 0 {
                let end = ts.saturating_add(quanta_to_ns(q, link));
                if st.end == 0 {
                    st.start = ts;
                    st.end = end;
                } else {
                    st.end = st.end.max(end);
                }
            } else if st.end > 0 {
                let s = st.start;
                close(st, ts);
                self.episode(src, p, s, ts);
            }
        }
        self.pfc_untracked += u64::from(untracked);
    }

    /// Whether a PFC/PAUSE frame `mc` from `src` at `ts` is the capture's second copy of one of
    /// the last frames counted: the same frame from the same source less than [`DUP_NS`]
    /// before. Asked only of a capture known to hold packets twice: a device refreshes its
    /// pause well before it runs out (at half of it: 42 µs for the longest pause at 400 Gb/s),
    /// but one that floods pause frames sends the same one again at once.
    fn pfc_copy(&self, src: [u8; 6], mc: MacControl, ts: u64) -> bool {
        self.pfc_recent
            .iter()
            .flatten()
            .any(|&(s, c, t)| s == src && c == mc && ts.saturating_sub(t) < DUP_NS)
    }

    /// Missing PSNs of flow `i` shown dropped by the capture, not the network: at or before
    /// its responder's last ACK (its answers cut before their AETH: before the PSN of the last,
    /// ACK or NAK, IBTA §9.7.5.1.2), on a flow nothing was resent or gap-filled on and whose
    /// responder sent no PSN sequence NAK (RC delivers in order or retries, so an ACK past a
    /// PSN means it arrived). Before the flows are sealed, which frees the PSN windows.
    pub(crate) fn capture_dropped(&self, i: usize) -> u64 {
        let f = &self.flows[i];
        let (Some(r), Some(p)) = (f.req.live_ref(), f.peer()) else {
            return 0;
        };
        let p = &self.flows[p];
        let ack = if r.blind { r.acked } else { p.last_ack() };
        let (Some(t), Some(ack)) = (&r.s.psn, ack) else {
            return 0;
        };
        if r.s.retx > 0 || r.s.gap_filled > 0 || p.sequence_naks() > 0 {
            return 0;
        }
        t.missing_through(ack)
    }

    /// Ends the pass and builds the report.
    pub fn finish(mut self) -> report::Report {
        self.late_flush();
        self.end_pauses();
        // The flows' times as the capture wrote them, not as `spread_ties` spread them.
        let unit = self.ts_unit;
        if unit > 1 {
            for f in &mut self.flows {
                f.first_ts = stamped(f.first_ts, unit);
                f.last_ts = stamped(f.last_ts, unit);
            }
        }
        crate::findings::build(self)
    }

    /// Closes the PFC/PAUSE episodes still open and spreads every pending one.
    fn end_pauses(&mut self) {
        let mut open = Vec::new();
        for (&(src, p), st) in self.pfc.iter_mut() {
            if st.end > 0 {
                let (s, e) = (st.start, st.end);
                open.push((src, p, s, e));
                close(st, e);
            }
        }
        for (src, p, s, e) in open {
            self.episode(src, p, s, e);
        }
        for (src, p, s, e) in std::mem::take(&mut self.pause_pending) {
            self.spread_pause(src, p, s, e, true);
        }
    }

    /// A closed PFC/PAUSE episode `[s, e)`: its pause time goes into the timeline now, or later.
    fn episode(&mut self, src: [u8; 6], p: u8, s: u64, e: u64) {
        #[cfg(test)]
        self.episodes_log.push((src, p, s, e));
        if !self.spread_pause(src, p, s, e, false) {
            self.pause_pending.push((src, p, s, e));
        }
    }

    /// Adds the episode `[s, e)` to its series at the timeline's current buckets; buckets merge
    /// in pairs as the timeline widens, which keeps the sums exact. Unless `last`, refuses
    /// (false) an episode reaching more than `MAX_BUCKETS` past the timeline's end; `last` cuts
    /// at the timeline's end, as the report's buckets end there.
    fn spread_pause(&mut self, src: [u8; 6], p: u8, s: u64, e: u64, last: bool) -> bool {
        let start = self.tl.start.unwrap_or(0);
        let width = self.tl.width.max(1);
        let limit = if last {
            self.tl.len.min(MAX_BUCKETS)
        } else {
            self.tl.len + MAX_BUCKETS
        };
        if !last && e > s && (e - 1).saturating_sub(start) / width >= limit as u64 {
            return false;
        }
        let v = self.pauses.entry((src, p)).or_default();
        let mut t = s;
        while t < e {
            let b = (t.saturating_sub(start) / width) as usize;
            if b >= limit {
                break;
            }
            if v.len() <= b {
                v.resize(b + 1, 0);
            }
            // Saturating: near the end of `u64` a wrapped bucket end would never let `t` pass.
            let until = e.min(start.saturating_add((b as u64 + 1).saturating_mul(width)));
            v[b] += until - t;
            t = until;
        }
        true
    }

    /// A flow's counters; `q` and `r` are its request and response state (or empty ones).
    fn counters(f: &FlowState, q: &ReqSum, r: &Resp) -> Counters {
        let no_more = RespMore::default();
        let rm = r.more.as_deref().unwrap_or(&no_more);
        let opcodes = opcode_names(f.opcodes.iter());
        let sniffer = f.sniffer();
        let read = r.read_sender.as_deref();
        Counters {
            packets: f.packets,
            bytes: f.bytes,
            payload_bytes: f.payload_bytes,
            opcodes,
            retransmitted_packets: q.retx + read.map_or(0, |s| s.resent),
            gap_filled_packets: q.gap_filled + read.map_or(0, |s| s.gap_filled),
            reordered_packets: q.reordered,
            missing_packets: q.psn.as_ref().map_or(0, Tracker::missing),
            duplicate_acks: r.dup_acks,
            naks: report::Naks {
                psn_sequence_error: rm.naks[0],
                invalid_request: rm.naks[1],
                remote_access_error: rm.naks[2],
                remote_operational_error: rm.naks[3],
                invalid_rd_request: rm.naks[4],
            },
            rnr_naks: rm.rnr,
            timeouts: q.triggers.timeout,
            cnp: rm.cnp,
            ecn: report::Ecn {
                not_ect: f.ecn(0),
                ect1: f.ecn(1),
                ect0: f.ecn(2),
                ce: f.ecn(3),
            },
            icrc: report::Icrc {
                ok: f.icrc(0),
                bad: if sniffer { 0 } else { f.icrc(1) },
                truncated: f.icrc(2),
                unverifiable: f.icrc(3) + if sniffer { f.icrc(1) } else { 0 },
            },
        }
    }

    pub(crate) fn flow_report(f: &FlowState) -> report::Flow {
        let (no_req, no_resp) = (ReqSum::default(), Resp::default());
        let q = f.req.sum();
        let q = q.as_deref().unwrap_or(&no_req);
        let r = f.resp.as_deref().unwrap_or(&no_resp);
        let no_more = RespMore::default();
        let rm = r.more.as_deref().unwrap_or(&no_more);
        let span = f.last_ts.saturating_sub(f.first_ts);
        let goodput = if span > 0 {
            let read = r.read_sender.as_deref().map_or(0, |s| s.payload);
            let unique = q.unique_payload + read;
            (unique as u128 * 8 * 1_000_000_000 / span as u128) as u64
        } else {
            0
        };
        let avg = |(s, n): (u64, u64)| s.checked_div(n).unwrap_or(0);
        // Rates around CNPs: of the requests and of the READ responses, one mean.
        let read = r.read_sender.as_deref();
        let sum = |(s, n): (u64, u64), o: Option<(u64, u64)>| {
            o.map_or((s, n), |(t, m)| (s.saturating_add(t), n + m))
        };
        report::Flow {
            src: f.key.0.to_string(),
            dst: f.key.1.to_string(),
            dest_qp: f.key.2,
            transport: f.transport.map_or("?", |t| t.name()).to_string(),
            counters: Self::counters(f, q, r),
            first_ts_ns: f.first_ts,
            last_ts_ns: f.last_ts,
            goodput_bps: goodput,
            retransmission_triggers: q.triggers.clone(),
            reordered_resent: q.reordered_resent,
            reorder_depth: q.reorder_depth,
            timeouts_in_a_row: q.timeouts_in_a_row,
            stuck_retries: q.stuck_retries,
            rnr_naks_in_a_row: q.rnr_naks_in_a_row,
            ack_latency_ns: latency(&q.ack_lat),
            read_latency_ns: latency(&q.read_lat),
            gap_to_nak_ns: latency(&q.gap_to_nak),
            nak_to_retransmission_ns: latency(&q.nak_to_retx),
            timeout_wait_ns: latency(&q.timeout_wait),
            ce_to_cnp_ns: latency(&rm.ce_to_cnp),
            cnp_interval_ns: latency(&rm.cnp_interval),
            rate_before_cnp_bps: avg(sum(q.rate_before, read.map(|s| s.rate_before))),
            rate_after_cnp_bps: avg(sum(q.rate_after, read.map(|s| s.rate_after))),
            messages: q.msgs.report(),
            inferred_mtu: (f.max_fm_payload > 0).then_some(f.max_fm_payload),
            max_payload: f.max_payload,
            priorities: (0..8).filter(|p| f.prio_mask >> p & 1 == 1).collect(),
            udp_sport: q.sport,
            rnr_timer_us: rm.rnr_timers.clone(),
            sniffer_artefacts: f.sniffer(),
        }
    }
}

/// Packets per opcode (each opcode once) as the report counts them, by name.
pub(crate) fn opcode_names(
    counts: impl Iterator<Item = (u8, u64)>,
) -> report::SmallMap<&'static str, u64> {
    let mut ranked: Vec<(u8, u8, u64)> = counts
        .map(|(op, n)| (OpInfo::name_rank(op), op, n))
        .collect();
    ranked.sort_unstable();
    let mut named: Vec<(&'static str, u64)> = Vec::with_capacity(ranked.len());
    let mut last = None;
    for (rank, op, n) in ranked {
        match named.last_mut() {
            Some((_, sum)) if last == Some(rank) => *sum += n,
            _ => named.push((OpInfo::of(op).name, n)),
        }
        last = Some(rank);
    }
    report::SmallMap::from_sorted(named)
}

fn close(st: &mut PfcState, end: u64) {
    let d = end.saturating_sub(st.start);
    st.pause_ns += d;
    st.episodes += 1;
    st.longest = st.longest.max(d);
    st.start = 0;
    st.end = 0;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A READ response is a first copy once: beyond the highest, or a hole up to it that fills;
    /// the responses of a retried READ, sent again, are second copies, as is one beyond the
    /// PSNs remembered. A jump leaves no stale bits behind.
    #[test]
    fn read_response_psns_tell_second_copies() {
        let mut r = ResponsePsns::default();
        let far = 2 + RESPONSE_PSNS;
        let psns = [
            0xff_fffe,
            0xff_ffff,
            2,
            1,
            0,
            1,
            0xff_ffff,
            2,
            3,
            far,
            10,
            11,
            10,
            3,
            far - 1,
        ];
        let again: Vec<bool> = psns
            .iter()
            .map(|&p| r.see(p).0 == Class::Retransmitted)
            .collect();
        // 0 and 1 were skipped at the wrap and came late; 10 and 11 are within the PSNs up to
        // `far` (and the 3 of before the jump is forgotten), 3 is not; `far - 1` never came.
        let want = [
            false, false, false, false, false, true, true, true, false, false, false, false, true,
            true, false,
        ];
        assert_eq!(again, want);
        // PSN 10 + RESPONSE_PSNS shares PSN 10's bit, cleared when the highest passed it.
        let mut r = ResponsePsns::default();
        // A new PSN tells the first it passed over.
        for (p, want) in [
            (10, (Class::New, None)),
            (11, (Class::New, None)),
            (20, (Class::New, Some(12))),
            (15 + RESPONSE_PSNS, (Class::New, Some(21))),
        ] {
            assert_eq!(r.see(p), want);
        }
        assert_eq!(r.see(10 + RESPONSE_PSNS), (Class::GapFilled, None));
        assert_eq!(r.see(10 + RESPONSE_PSNS), (Class::Retransmitted, None));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// `ResponsePsns` answers what a set of every PSN seen does, within its window, with
        /// PSNs that go on by small and large steps (across the wrap), back, and repeat.
        #[test]
        fn response_psns_match_a_set(
            start in 0u32..(1 << 24),
            steps in proptest::collection::vec((0u8..6, 0u32..3000), 1..300),
        ) {
            let mut r = ResponsePsns::default();
            let mut seen = std::collections::HashSet::new();
            let (mut psn, mut highest) = (start, None::<u32>);
            for &(kind, by) in &steps {
                psn = match kind {
                    0..=2 => psn.wrapping_add(1 + by % 4),
                    3 => psn.wrapping_add(by),
                    _ => psn.wrapping_sub(by % 1100),
                } & 0xff_ffff;
                let behind = highest.map_or(-1, |h| psn_diff(h, psn));
                let want = if behind < 0 {
                    Class::New
                } else if behind >= RESPONSE_PSNS as i32 || seen.contains(&psn) {
                    Class::Retransmitted
                } else {
                    Class::GapFilled
                };
                // The first PSN passed over, by a step beyond the next within the window.
                let passed = highest
                    .filter(|_| behind < -1 && -behind < RESPONSE_PSNS as i32)
                    .map(|h| (h + 1) & 0xff_ffff);
                proptest::prop_assert_eq!(r.see(psn), (want, passed), "psn {}", psn);
                seen.insert(psn);
                if behind < 0 {
                    highest = Some(psn);
                }
            }
        }

        /// The compact ring answers what a ring of full bucket numbers and byte counts does,
        /// with time going back and forth and queries before, inside and after the buckets.
        #[test]
        fn rate_ring_matches_full_ring(
            start in 0u64..(1 << 50),
            steps in proptest::collection::vec((0u8..8, 0u64..40, 1u32..10_000), 1..400),
        ) {
            let mut ring = RateRing::default();
            let (mut now, mut past) = ((0u64, 0u64), [(0u64, 0u64); 16]);
            let mut bucket = start;
            for &(kind, by, bytes) in &steps {
                match kind {
                    0..=3 => {}                                      // same bucket
                    4 | 5 => bucket += 1 + by % 3,                   // onwards
                    6 => bucket += by * 7,                           // a silence
                    _ => bucket = bucket.saturating_sub(by % 20),    // time goes back
                }
                ring.add(bucket, bytes);
                if now.0 != bucket {
                    past[(now.0 % 16) as usize] = now;
                    let s = past[(bucket % 16) as usize];
                    now = if s.0 == bucket { s } else { (bucket, 0) };
                }
                now.1 += u64::from(bytes);
                for q in [bucket.saturating_sub(by % 25), bucket, bucket + 1, bucket + by % 12] {
                    let want: u64 = past
                        .iter()
                        .enumerate()
                        .map(|(k, &e)| if k as u64 == now.0 % 16 { now } else { e })
                        .filter(|(b, _)| *b < q && *b + 10 >= q)
                        .map(|(_, n)| n)
                        .sum();
                    proptest::prop_assert_eq!(ring.before(q), want, "query {}", q);
                }
            }
        }
    }

    /// Sealing a request flow (CM closed its connection) keeps its report as it was; traffic
    /// after the close carries the summary on, without what was in flight before.
    #[test]
    fn sealed_request_flow_keeps_its_report() {
        let key = (Node::V4([10, 0, 0, 1]), Node::V4([10, 0, 0, 2]), 0x11);
        let mut f = FlowState::new(key, 5);
        let rq = f.req();
        rq.s.retx = 3;
        rq.s.first_psn = Some(10);
        rq.close_message(4096, Operation::SendOnly);
        rq.s.ack_lat.record(1500);
        rq.s.read_lat.record(90_000);
        rq.ackreq.push_back((12, 7));
        let t = rq.s.psn.get_or_insert_with(Tracker::default);
        for psn in [10, 11, 14] {
            t.see(psn, false);
        }
        let json = |f: &FlowState| serde_json::to_string(&Analyzer::flow_report(f)).unwrap();
        let before = json(&f);
        f.seal();
        assert!(f.req.live.is_none() && f.req.sealed.is_some());
        assert_eq!(json(&f), before);
        assert_eq!(f.first_psn(), Some(10));
        let rq = f.req();
        assert!(rq.ackreq.is_empty());
        assert_eq!((rq.s.retx, rq.s.msgs.count()), (3, 1));
        rq.close_message(64, Operation::SendOnly);
        assert_eq!(Analyzer::flow_report(&f).messages.count, 2);
    }

    /// A sealed summary packs and unpacks to what it was, every field set (latencies from a
    /// few samples and from a histogram, the PSN tracker with losses and READs).
    #[test]
    fn packed_summary_unpacks_as_it_was() {
        let mut q = ReqSum::default();
        let t = q.psn.get_or_insert_with(Tracker::default);
        for psn in [0xff_fff0, 0xff_fff1, 0xff_fff5, 3, 70, 200] {
            t.see(psn, psn == 70);
        }
        q.first_psn = Some(0xff_fff0);
        q.sport = Some(49152);
        q.unique_payload = 1 << 40;
        q.retx = 7;
        q.gap_filled = 2;
        q.triggers = Triggers {
            nak: 1,
            rnr: 2,
            timeout: 3,
            unknown: u64::MAX,
            read_response_gap: 4,
        };
        for op in [
            Operation::SendOnly,
            Operation::ReadRequest,
            Operation::FetchAdd,
        ] {
            let mut r = Req {
                s: std::mem::take(&mut q),
                ..Req::default()
            };
            r.close_message(300, op);
            r.close_message(1 << 20, Operation::WriteOnly);
            q = r.s;
        }
        q.msgs.read_bytes_requested = 12_345;
        q.msgs.read_bytes_returned = 12_000;
        for v in 1..100 {
            q.ack_lat.record(v * 1000);
        }
        q.read_lat.record(90_000);
        q.gap_to_nak.record(u64::MAX);
        q.timeout_wait.record(65_536);
        q.rate_before = (u64::MAX, 3);
        q.rate_after = (5, 1);
        q.seal();
        let packed = q.pack();
        assert!(packed.len() < 160, "{} bytes", packed.len());
        assert_eq!(format!("{:?}", ReqSum::unpack(&packed)), format!("{q:?}"));
        let t = q.psn.as_ref().map(Tracker::highest);
        let st = ReqState {
            live: None,
            sealed: Some(packed),
        };
        assert_eq!(Some(st.highest()), t);
        let empty = ReqSum::default();
        assert_eq!(
            format!("{:?}", ReqSum::unpack(&empty.pack())),
            format!("{empty:?}")
        );
    }

    /// READ 100's first response comes damaged; five WRITE and READ pairs follow, each READ's
    /// only response passing over the WRITE's PSN (answered by an ACK). Those PSNs are no
    /// lost READ responses: the requester's reading 100 again 4 µs after it first asked is a
    /// re-read, not the capture's copy of the READ.
    #[test]
    fn responses_passing_over_acked_requests_lose_nothing() {
        let req = |op, psn, ts| rc(1, 2, 0x50, op, psn, ts);
        let mut events = vec![
            read_req(100, 4096, 0),
            damaged(read_resp(0x0d, 100, 1_500)),
            read_resp(0x0e, 101, 1_600),
            read_resp(0x0e, 102, 1_700),
            read_resp(0x0f, 103, 1_800),
            read_req(100, 4096, 4_000),
        ];
        for k in 0..5u32 {
            let (psn, at) = (104 + 2 * k, u64::from(k) * 200);
            events.extend([
                req(0x0a, psn, 100 + at),
                read_req(psn + 1, 1024, 200 + at),
                ack(psn, 1_900 + at),
                read_resp(0x10, psn + 1, 2_000 + at),
            ]);
        }
        events.extend(read_resps(100, 4, 4_500, 100));
        events.sort_by_key(|e| e.meta.ts_ns);
        let r = run_timed(&events);
        assert_no_copies(&r, "READ 100 read again");
        let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        assert_eq!(f.counters.retransmitted_packets, 1);
    }

    /// READs 100, 104 and 108 (four responses each) are answered, then sent again and executed
    /// again but for 104, whose request came damaged: the responses sent again go from 103 to
    /// 108, below the highest (111), and pass over 104, lost, so READ 104 asked for again is a
    /// re-read, however soon.
    #[test]
    fn responses_sent_again_that_pass_over_a_read_lose_it() {
        let mut events = vec![
            read_req(100, 4096, 0),
            read_req(104, 4096, 100),
            read_req(108, 4096, 200),
        ];
        events.extend(read_resps(100, 4, 1_000, 100));
        events.extend(read_resps(104, 4, 1_400, 100));
        events.extend(read_resps(108, 4, 1_800, 100));
        events.extend([
            read_req(100, 4096, 10_000),
            damaged(read_req(104, 4096, 10_100)),
            read_req(108, 4096, 10_200),
        ]);
        events.extend(read_resps(100, 4, 11_000, 100));
        events.extend(read_resps(108, 4, 11_400, 100));
        let mut an = Analyzer::new(Config::default());
        for e in &events {
            an.event(e);
        }
        let fi = an.flows.iter().position(|f| f.key.2 == 0x50).unwrap();
        let l = an.flows[fi]
            .req
            .live_ref()
            .and_then(|q| q.read_lost.as_deref());
        assert!(l.is_some_and(|l| l.asked_again(104, 4096, 10_000)));
        assert!(!l.is_some_and(|l| l.asked_again(100, 4096, 10_000)));
    }

    /// The ring of READ responses found lost keeps its last [`LOST`] past the 255th (its count
    /// wrapped to none, and a re-read asking for one of them then read as the capture's copy);
    /// a response found lost twice in a row takes one slot, at its last time, and one lost
    /// again later is the newest.
    #[test]
    fn lost_responses_are_remembered_past_the_255th() {
        let mut rq = Req::default();
        for k in 0..300u32 {
            let (last, at) = (1_000 + k * 16, u64::from(k + 1) * 1_000);
            rq.lost(last, 4096, at);
            let l = rq.read_lost.as_deref().unwrap();
            assert!(l.asked_again(last, 65_536, at - 1), "loss {k}");
            let kept = LOST as u32 - 1;
            if k >= kept {
                assert!(l.asked_again(last - 16 * kept, 16_384, 0), "loss {k}");
            }
            if k > kept {
                assert!(
                    !l.asked_again(last - 16 * (kept + 1), 16_384, 0),
                    "loss {k}"
                );
            }
        }
        let (newest, oldest) = (1_000 + 299 * 16, 1_000 + (300 - LOST as u32) * 16);
        for k in 0..LOST as u64 {
            rq.lost(newest, 4096, 1_000_000 + k);
        }
        let l = rq.read_lost.as_deref().unwrap();
        assert!(
            l.asked_again(oldest, 4096, 0),
            "one slot for a PSN lost again"
        );
        assert!(l.asked_again(newest, 4096, 1_000_000 + LOST as u64 - 2));
        // The oldest lost again after others: it outlives them.
        rq.lost(oldest + 16, 4096, 2_000_000);
        rq.lost(oldest, 4096, 2_000_001);
        for k in 0..LOST as u32 - 1 {
            rq.lost(100_000 + k * 16, 4096, 3_000_000);
        }
        let l = rq.read_lost.as_deref().unwrap();
        assert!(
            l.asked_again(oldest, 4096, 2_000_000),
            "lost again, the newest"
        );
    }

    /// An event with opcode `opcode` from `src` to `dst`'s QP `qp` at `ts` (an ACK for 0x11).
    /// A READ request of QP 0x50 (node 1 to node 2) for `dma` bytes.
    fn read_req(psn: u32, dma: u32, ts: u64) -> Event {
        Event {
            ext: ExtWord::DmaLen(dma),
            ..rc(1, 2, 0x50, 0x0c, psn, ts)
        }
    }

    /// A READ response of 1 KiB to QP 0x50's READs (node 2 to QP 0x51), its ICRC good.
    fn read_resp(op: u8, psn: u32, ts: u64) -> Event {
        Event {
            payload_len: 1024,
            icrc: Some(IcrcStatus::Ok),
            ..rc(2, 1, 0x51, op, psn, ts)
        }
    }

    /// A READ's `n` responses ([`read_resp`]) from PSN `first`, the first at `at` and `gap` ns
    /// apart: First, Middle… and Last, or Only.
    fn read_resps(first: u32, n: u32, at: u64, gap: u64) -> impl Iterator<Item = Event> {
        (0..n).map(move |k| {
            let op = match k {
                _ if n == 1 => 0x10,
                0 => 0x0d,
                _ if k == n - 1 => 0x0f,
                _ => 0x0e,
            };
            read_resp(op, first + k, at + u64::from(k) * gap)
        })
    }

    /// An RDMA WRITE Only with AckReq to QP 0x50 (node 1 to node 2).
    fn write(psn: u32, ts: u64) -> Event {
        rc(1, 2, 0x50, 0x0a, psn, ts)
    }

    /// An ACK of QP 0x50's requests (node 2 to QP 0x51).
    fn ack(psn: u32, ts: u64) -> Event {
        rc(2, 1, 0x51, 0x11, psn, ts)
    }

    /// A PSN sequence error NAK of QP 0x50's requests (node 2 to QP 0x51).
    fn nak(psn: u32, ts: u64) -> Event {
        Event {
            aeth: Some(Aeth::parse(&[0x60, 0, 0, 1]).unwrap()),
            ..ack(psn, ts)
        }
    }

    /// [`read_resps`], the response at PSN `bad` damaged.
    fn read_resps_damaged(
        first: u32,
        n: u32,
        at: u64,
        gap: u64,
        bad: u32,
    ) -> impl Iterator<Item = Event> {
        read_resps(first, n, at, gap).map(move |e| {
            if e.bth.is_some_and(|b| b.psn == bad) {
                damaged(e)
            } else {
                e
            }
        })
    }

    /// `events` (in time order) with each followed by its copy `lag` later, in time order: a
    /// capture that holds every frame twice.
    pub(crate) fn held_twice(events: &[Event], lag: u64) -> Vec<Event> {
        let mut twice: Vec<Event> = events
            .iter()
            .flat_map(|e| {
                let mut copy = e.clone();
                copy.meta.ts_ns += lag;
                [e.clone(), copy]
            })
            .collect();
        twice.sort_by_key(|e| e.meta.ts_ns);
        twice
    }

    /// `e` with a bad ICRC.
    fn damaged(e: Event) -> Event {
        Event {
            icrc: Some(IcrcStatus::Bad),
            ..e
        }
    }

    /// ACKs of writes `100 - pad` to 99 on QP 0x50, 10 µs apart: `pad` answers that fill the
    /// first slots of the responder flow's ring of answers before a test's own.
    fn ring_padding(pad: u32) -> Vec<Event> {
        (0..pad)
            .flat_map(|k| {
                let (psn, ts) = (100 - pad + k, u64::from(k) * 10_000);
                [
                    rc(1, 2, 0x50, 0x0a, psn, ts),
                    rc(2, 1, 0x51, 0x11, psn, ts + 2_000),
                ]
            })
            .collect()
    }

    /// Asserts that `events` give the responder flow of QP 0x50 (to QP 0x51) `n` duplicate
    /// ACKs and the capture no copies (`what` names the case).
    fn assert_duplicate_acks(events: &[Event], n: u64, what: &str) {
        let r = run_timed(events);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x51).unwrap();
        assert_eq!(f.counters.duplicate_acks, n, "{what}");
        assert_no_copies(&r, what);
    }

    /// Asserts that report `r` finds no capture's copies (`what` names the case).
    fn assert_no_copies(r: &report::Report, what: &str) {
        let codes: Vec<_> = r.findings.iter().map(|f| f.code.as_str()).collect();
        assert!(!codes.contains(&"capture.duplicates"), "{what}: {codes:?}");
    }

    pub(crate) fn rc(src: u8, dst: u8, qp: u32, opcode: u8, psn: u32, ts: u64) -> Event {
        let (s, d) = (Node::V4([10, 0, 0, src]), Node::V4([10, 0, 0, dst]));
        Event {
            meta: PacketMeta {
                number: ts,
                ts_ns: ts,
                orig_len: 100,
                if_id: 0,
                if_speed: None,
            },
            bth: Some(Bth {
                opcode,
                ackreq: true,
                destqp: qp,
                psn,
            }),
            nodes: Some((s, d)),
            flow_slot: flow_slot(&s, &d, qp),
            v4_pair: v4_pair(&s, &d),
            encap: Some(Encap::RoceV2),
            aeth: (opcode == 0x11).then(|| Aeth::parse(&[0, 0, 0, 1]).unwrap()),
            ..Event::default()
        }
    }

    /// UD is never resent: a UD packet with the source QP, PSN and length of one 300 ns before
    /// is the capture's copy of it (one message, one copy found), while one from another source
    /// QP with that PSN, or the same again 18 µs later, is a message of its own.
    #[test]
    fn a_ud_packet_held_twice_is_one_message() {
        let ud = |src_qp: u32, psn: u32, ts: u64| Event {
            ext: ExtWord::SrcQp(src_qp),
            payload_len: 256,
            ..rc(1, 2, 0x20, 0x64, psn, ts)
        };
        let events = [
            ud(7, 5, 1_000),
            ud(7, 5, 1_300),
            ud(8, 5, 1_400),
            ud(7, 6, 2_000),
            ud(7, 6, 20_000),
        ];
        let r = run_timed(&events);
        let copies = r.findings.iter().find(|f| f.code == "capture.duplicates");
        assert_eq!(copies.unwrap().frames, [2]);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x20).unwrap();
        assert_eq!((f.counters.packets, f.messages.count), (5, 4));
    }

    /// A request with a bad ICRC and a PSN beyond the flow's window (a damaged header) is
    /// counted but not tracked; one with a PSN the flow could carry is tracked as before.
    #[test]
    fn a_bad_icrc_request_far_from_its_flow_is_not_tracked() {
        let bad = |psn| Event {
            icrc: Some(IcrcStatus::Bad),
            ..rc(1, 2, 0x20, 0x0a, psn, 0)
        };
        let mut events: Vec<Event> = (100..=105).map(|p| rc(1, 2, 0x20, 0x0a, p, 0)).collect();
        events.push(bad(103 ^ 0x80_0000));
        events.push(bad(103));
        events.extend((106..=110).map(|p| rc(1, 2, 0x20, 0x0a, p, 0)));
        let r = run_numbered(&events);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x20).unwrap();
        let c = &f.counters;
        assert_eq!((c.packets, c.icrc.bad), (13, 2));
        assert_eq!(
            (c.retransmitted_packets, c.missing_packets, c.timeouts),
            (1, 0, 0)
        );
    }

    /// A QP number that carries a new connection after a silence starts its PSNs afresh,
    /// forward or backward: nothing missing, resent or acknowledged twice, every request's
    /// ACK latency measured, and an info finding. A jump as far with no silence before it is
    /// read as before (missing PSNs).
    #[test]
    fn a_new_connection_on_a_qp_number_restarts_its_psns() {
        let mut an = Analyzer::new(Config::default());
        let mut n = 0;
        let mut feed = |e: Event| {
            n += 1;
            an.event(&Event {
                meta: PacketMeta {
                    number: n,
                    ..e.meta
                },
                ..e
            });
        };
        let second = 1_000_000_000;
        for (start, at) in [(100, 0), (5_000_100, second), (50, 2 * second)] {
            for i in 0..10 {
                let ts = at + 2_000 * i;
                feed(rc(1, 2, 0x20, 0x0a, start + i as u32, ts));
                feed(rc(2, 1, 0x10, 0x11, start + i as u32, ts + 1_000));
            }
        }
        // No silence before the jump: PSNs 13 through 199,999 never seen.
        for (psn, ts) in [(10, 0), (11, 1_000), (12, 2_000), (200_000, 3_000)] {
            feed(rc(3, 4, 0x40, 0x0a, psn, ts));
        }
        let r = an.finish();
        let f = r.flows.iter().find(|f| f.dest_qp == 0x20).unwrap();
        assert_eq!(
            (f.counters.retransmitted_packets, f.counters.missing_packets),
            (0, 0)
        );
        assert_eq!(f.ack_latency_ns.count, 30);
        assert_eq!(r.totals.counters.duplicate_acks, 0);
        let g = r.flows.iter().find(|f| f.dest_qp == 0x40).unwrap();
        assert_eq!(g.counters.missing_packets, 199_987);
        let restart = r
            .findings
            .iter()
            .find(|f| f.code == "transport.psn_restart")
            .unwrap();
        assert_eq!(restart.evidence, ["psn_restarts = 2"]);
        assert_eq!(restart.frames, [21, 41]);
        assert_eq!(restart.flows, ["10.0.0.1 > 10.0.0.2 qp 0x000020"]);
    }

    /// An ACK or NAK with a bad ICRC, on a flow whose other answers pass, never reached the
    /// requester: it is counted (packets, ICRC) but acknowledges and NAKs nothing. On a flow
    /// whose every ICRC fails it is read as it is.
    #[test]
    fn a_bad_icrc_answer_answers_nothing() {
        let bad = damaged;
        let good = |e: Event| Event {
            icrc: Some(IcrcStatus::Ok),
            ..e
        };
        let nak = |psn| Event {
            aeth: Some(Aeth::parse(&[0x60, 0, 0, 1]).unwrap()),
            ..rc(2, 1, 0x10, 0x11, psn, 0)
        };
        let events: Vec<Event> = vec![
            rc(1, 2, 0x20, 0x0a, 100, 0),
            good(rc(2, 1, 0x10, 0x11, 100, 0)),
            rc(1, 2, 0x20, 0x0a, 101, 0),
            bad(rc(2, 1, 0x10, 0x11, 100, 0)),
            bad(nak(101)),
            good(rc(2, 1, 0x10, 0x11, 101, 0)),
            // Every ICRC of this connection's answers fails.
            rc(3, 4, 0x40, 0x0a, 7, 0),
            bad(rc(4, 3, 0x30, 0x11, 7, 0)),
            bad(rc(4, 3, 0x30, 0x11, 7, 0)),
        ];
        let r = run_numbered(&events);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x10).unwrap();
        let c = &f.counters;
        assert_eq!((c.packets, c.icrc.bad, c.duplicate_acks), (4, 2, 0));
        assert_eq!(c.naks.psn_sequence_error, 0);
        let g = r.flows.iter().find(|f| f.dest_qp == 0x30).unwrap();
        assert_eq!(g.counters.duplicate_acks, 1);
    }

    /// Feeds `events` numbered from 1, 10 µs apart (longer than the shortest ACK timeout, so
    /// a PSN sent again is a resend, not the capture's copy), and reports.
    /// A NIC retransmitting adaptively (ConnectX, `ADP_NS`) resends a lost last packet, or the
    /// last few, 4–8 µs after it with nothing sent between: resends, though a capture's copies
    /// could trail as late. Copies are told by the packets before them being copied too.
    #[test]
    fn adaptive_resends_of_a_tail_are_no_copies() {
        let report = |v: &[(bool, u32, u64)]| {
            let mut an = Analyzer::new(Config::default());
            for (i, &(request, psn, ts)) in v.iter().enumerate() {
                let mut e = if request {
                    rc(1, 2, 0x20, 0x0a, psn, ts)
                } else {
                    rc(2, 1, 0x10, 0x11, psn, ts)
                };
                e.meta.number = i as u64 + 1;
                an.event(&e);
            }
            an.finish()
        };
        let run = |v: &[(bool, u32, u64)]| {
            let r = report(v);
            let f = r.flows.iter().find(|f| f.dest_qp == 0x20).unwrap();
            let dup = r.findings.iter().any(|f| f.code == "capture.duplicates");
            (f.counters.retransmitted_packets, f.counters.timeouts, dup)
        };
        // Five requests every 10 µs, each acknowledged 3 µs later.
        let acked: Vec<_> = (0..5u32)
            .flat_map(|k| {
                let t = 10_000 * u64::from(k);
                [(true, 100 + k, t), (false, 100 + k, t + 3_000)]
            })
            .collect();
        // The last request lost after the capture point and resent 5 µs later: the timer ran
        // 5 µs (`timeout_wait_ns`, to 2 significant digits), which `transport.timeout` tells.
        let mut tail = acked.clone();
        tail.extend([
            (true, 105, 50_000),
            (true, 105, 55_000),
            (false, 105, 58_000),
        ]);
        assert_eq!(run(&tail), (1, 1, false));
        let r = report(&tail);
        let wait = r
            .flows
            .iter()
            .find(|f| f.dest_qp == 0x20)
            .unwrap()
            .timeout_wait_ns;
        assert_eq!(wait.count, 1);
        assert!((5_000..5_050).contains(&wait.p50), "{wait:?}");
        let timeout = r.findings.iter().find(|f| f.code == "transport.timeout");
        assert!(timeout.unwrap().advice.contains("adaptively"));
        // Resent after 4.096 µs × 2^18 (NCCL_IB_TIMEOUT=18): a timeout worth lowering.
        let mut slow = tail.clone();
        slow[11].2 = 50_000 + (4_096 << 18);
        slow[12].2 = slow[11].2 + 3_000;
        let r = report(&slow);
        let timeout = r.findings.iter().find(|f| f.code == "transport.timeout");
        let advice = &timeout.unwrap().advice;
        assert!(
            advice.contains("a local ACK timeout of 18 or close"),
            "{advice}"
        );
        // The last three lost, go-back-N from the first of them 5 µs after the last.
        let mut burst = acked.clone();
        burst.extend((0..3u32).map(|k| (true, 105 + k, 50_000 + 500 * u64::from(k))));
        burst.extend((0..3u32).map(|k| (true, 105 + k, 56_000 + 500 * u64::from(k))));
        burst.push((false, 107, 60_000));
        assert_eq!(run(&burst), (3, 1, false));
        // As late, but every packet of the flow is copied: the capture's copies.
        let copied: Vec<_> = (0..8u32)
            .flat_map(|k| {
                let t = 10_000 * u64::from(k);
                let (p, a) = ((true, 100 + k, t), (false, 100 + k, t + 6_000));
                [
                    p,
                    (true, 100 + k, t + 5_000),
                    a,
                    (false, 100 + k, t + 6_100),
                ]
            })
            .collect();
        assert_eq!(run(&copied), (0, 0, true));
        // Within 4.096 µs no requester resends without a NAK: a copy, even of a tail.
        let mut soon = acked;
        soon.extend([
            (true, 105, 50_000),
            (true, 105, 53_000),
            (false, 105, 54_000),
        ]);
        assert_eq!(run(&soon), (0, 0, true));
    }

    /// A short (adaptive) ACK timer that fires while the ACK covering the pass's first PSN is
    /// on its way resends a PSN the capture saw acknowledged, soon after that ACK: the pass
    /// begins one past the ACK before, which the requester did get. No sign of a capture that
    /// holds packets twice, however often it happens.
    #[test]
    fn timers_that_fire_while_an_ack_is_on_its_way_are_no_copies() {
        let mut events = Vec::new();
        for k in 0..24u32 {
            let (t, base) = (20_000 * u64::from(k), 100 + 4 * k);
            let request = |psn, at| rc(1, 2, 0x20, 0x0a, psn, t + at);
            let ack = |psn, at| rc(2, 1, 0x10, 0x11, psn, t + at);
            events.extend((0..4).map(|i| request(base + i, 200 * u64::from(i))));
            events.push(ack(base + 1, 3_000));
            // Seen here, at the requester 0.6 µs later: its timer (armed when the first ACK
            // came) fires first.
            events.push(ack(base + 3, 7_000));
            events.extend([request(base + 2, 7_400), request(base + 3, 7_600)]);
        }
        for (i, e) in events.iter_mut().enumerate() {
            e.meta.number = i as u64 + 1;
        }
        let mut an = Analyzer::new(Config::default());
        for e in &events {
            an.event(e);
        }
        let r = an.finish();
        let f = r.flows.iter().find(|f| f.dest_qp == 0x20).unwrap();
        assert_eq!(
            (f.counters.retransmitted_packets, f.counters.timeouts),
            (48, 24)
        );
        assert!(!r.findings.iter().any(|f| f.code == "capture.duplicates"));
    }

    fn run_numbered(events: &[Event]) -> report::Report {
        let mut an = Analyzer::new(Config::default());
        for (i, e) in events.iter().enumerate() {
            an.event(&Event {
                meta: PacketMeta {
                    number: i as u64 + 1,
                    ts_ns: 10_000 * i as u64,
                    ..e.meta
                },
                ..e.clone()
            });
        }
        an.finish()
    }

    /// A packet the network delayed behind the next is reordered, not lost: taken without a
    /// NAK (a receiver that accepts it out of order) or NAKed and resent (one that does not);
    /// after a loss, the gap-filling copy is the resend and the rest of go-back-N follows it.
    #[test]
    fn reordered_packets_are_told_from_lost_ones() {
        let nak = |src, dst, qp, psn, ts| Event {
            aeth: Some(Aeth::parse(&[0x60, 0, 0, 1]).unwrap()),
            ..rc(src, dst, qp, 0x11, psn, ts)
        };
        // Out of order, taken as it is (QP 0x20), and lost, then resent (QP 0x30).
        let events = [
            rc(1, 2, 0x20, 0x0a, 100, 0),
            rc(2, 1, 0x10, 0x11, 100, 0),
            rc(1, 2, 0x20, 0x0a, 101, 0),
            rc(1, 2, 0x20, 0x0a, 103, 0),
            rc(1, 2, 0x20, 0x0a, 102, 0),
            rc(1, 2, 0x20, 0x0a, 104, 0),
            rc(2, 1, 0x10, 0x11, 104, 0),
            rc(3, 4, 0x30, 0x0a, 200, 0),
            rc(4, 3, 0x31, 0x11, 200, 0),
            rc(3, 4, 0x30, 0x0a, 202, 0),
            nak(4, 3, 0x31, 201, 0),
            rc(3, 4, 0x30, 0x0a, 201, 0),
            rc(3, 4, 0x30, 0x0a, 202, 0),
            // Out of order, NAKed twice (the receiver moved on with the late packet, then
            // missed the one it had dropped) and resent by go-back-N (QP 0x40).
            rc(5, 6, 0x40, 0x0a, 300, 0),
            rc(6, 5, 0x41, 0x11, 300, 0),
            rc(5, 6, 0x40, 0x0a, 302, 0),
            rc(5, 6, 0x40, 0x0a, 301, 0),
            rc(5, 6, 0x40, 0x0a, 303, 0),
            nak(6, 5, 0x41, 301, 0),
            nak(6, 5, 0x41, 302, 0),
            rc(5, 6, 0x40, 0x0a, 301, 0),
            rc(5, 6, 0x40, 0x0a, 304, 0),
            rc(5, 6, 0x40, 0x0a, 302, 0),
            rc(5, 6, 0x40, 0x0a, 303, 0),
        ];
        let run = |n: usize| run_numbered(&events[..n]);
        // Out of order and taken as it is, alone: nothing to fix.
        let r = run(7);
        let sev: Vec<_> = r
            .findings
            .iter()
            .filter(|f| f.code.starts_with("transport."))
            .map(|f| (f.code.as_str(), f.severity))
            .collect();
        assert_eq!(sev, [("transport.reorder", crate::report::Severity::Info)]);
        // The late packet last of its flow: confirmed at the end, and cited all the same.
        let r = run(5);
        let reorder = r.findings.iter().find(|f| f.code == "transport.reorder");
        assert_eq!(reorder.map(|f| f.frames.as_slice()), Some(&[5][..]));
        let r = run(events.len());
        let flow = |qp| r.flows.iter().find(|f| f.dest_qp == qp).unwrap();
        let got = |qp| {
            let f = flow(qp);
            let c = &f.counters;
            let t = &f.retransmission_triggers;
            (
                c.gap_filled_packets,
                c.reordered_packets,
                f.reordered_resent,
                c.retransmitted_packets,
                (t.nak, t.timeout, t.unknown),
            )
        };
        assert_eq!(got(0x20), (1, 1, 0, 0, (0, 0, 0)));
        assert_eq!(flow(0x20).reorder_depth, 1);
        assert_eq!(got(0x30), (1, 0, 0, 1, (1, 0, 0)));
        assert_eq!(got(0x40), (1, 1, 1, 3, (2, 0, 0)));
        let codes: Vec<_> = r.findings.iter().map(|f| f.code.as_str()).collect();
        assert!(codes.contains(&"transport.reorder"), "{codes:?}");
        assert!(codes.contains(&"transport.loss"), "{codes:?}");
        assert!(!codes.contains(&"transport.timeout"), "{codes:?}");
    }

    /// A packet lost (501, damaged or dropped before the capture point) while another is late
    /// (504, delayed behind 505): the strict receiver NAKs 501, the late packet comes after that
    /// NAK, and go-back-N resends from 501 on, 504 among them. 504 is reordered (and resent),
    /// not the NAK's resend: the NAK is the trigger of the pass that starts at 501, and a late
    /// packet that comes while that pass is under way, beyond where it has got, or before the
    /// NAK, is late too.
    #[test]
    fn a_late_packet_behind_a_lost_one_s_nak_is_reordered() {
        let nak = |psn| Event {
            aeth: Some(Aeth::parse(&[0x60, 0, 0, 1]).unwrap()),
            ..rc(2, 1, 0x51, 0x11, psn, 0)
        };
        let req = |psn| rc(1, 2, 0x50, 0x0a, psn, 0);
        let events = [
            req(500),
            rc(2, 1, 0x51, 0x11, 500, 0),
            req(502),
            req(503),
            req(505),
            nak(501),
            req(504),
            req(501),
            req(502),
            req(503),
            req(504),
            req(505),
            req(506),
            // The same, with the late packet (604) coming once the pass is under way.
            req(600),
            rc(2, 1, 0x51, 0x11, 600, 0),
            req(602),
            req(603),
            req(605),
            nak(601),
            req(601),
            req(604),
            req(602),
            req(603),
            req(604),
            req(605),
            req(606),
            // The same, with 701 damaged (captured, dropped by the receiver) and the late packet
            // (704) coming before the NAK.
            req(700),
            rc(2, 1, 0x51, 0x11, 700, 0),
            Event {
                icrc: Some(IcrcStatus::Bad),
                ..req(701)
            },
            req(702),
            req(703),
            req(705),
            req(704),
            nak(701),
            req(701),
            req(702),
            req(703),
            req(704),
            req(705),
            req(706),
        ];
        let r = run_numbered(&events);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        let (c, t) = (&f.counters, &f.retransmission_triggers);
        // Gap fills 501, 504, 601, 604 and 704; 504, 604 and 704 late, and resent.
        assert_eq!(
            (
                c.gap_filled_packets,
                c.reordered_packets,
                f.reordered_resent
            ),
            (5, 3, 3)
        );
        assert_eq!(c.retransmitted_packets, 2 * 4 + 5);
        assert_eq!((t.nak, t.timeout, t.unknown), (3, 0, 0));
        assert_eq!(c.timeouts, 0);
    }

    /// Events in order, numbered from 1, at their own timestamps.
    fn run_timed(events: &[Event]) -> report::Report {
        let mut an = Analyzer::new(Config::default());
        for (i, e) in events.iter().enumerate() {
            an.event(&Event {
                meta: PacketMeta {
                    number: i as u64 + 1,
                    ..e.meta
                },
                ..e.clone()
            });
        }
        an.finish()
    }

    /// The requester of QP 0x50 sends 101–105, 102 lost; the responder NAKs 102 and the
    /// requester, busy with something else, does not act on it: its ACK timer runs out
    /// 1.2 ms later and it resends from 102. That pass is a timeout's, not the NAK's: no
    /// requester takes longer than a NAK's round trip to act on one. Nor does a NAK's pass
    /// start below the PSN it names (with several pending, below the lowest).
    #[test]
    fn a_pass_long_after_a_nak_is_the_ack_timer_s() {
        let req = write;
        let late = 1_200_000;
        let events = [
            req(100, 0),
            rc(2, 1, 0x51, 0x11, 100, 2_000),
            req(101, 3_000),
            req(103, 4_000),
            req(104, 5_000),
            req(105, 6_000),
            nak(102, 9_000),
            req(102, late),
            req(103, late + 200),
            req(104, late + 400),
            req(105, late + 600),
        ];
        let r = run_timed(&events);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        let t = &f.retransmission_triggers;
        assert_eq!((t.nak, t.timeout, t.unknown), (0, 1, 0));
        assert_eq!(f.counters.timeouts, 1);
        // Acted on at once, the same NAK starts the pass.
        let mut soon = events.clone();
        for (e, ts) in soon[7..].iter_mut().zip([12_000, 12_200, 12_400, 12_600]) {
            e.meta.ts_ns = ts;
        }
        let r = run_timed(&soon);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        let t = &f.retransmission_triggers;
        assert_eq!((t.nak, t.timeout, t.unknown), (1, 0, 0));
        // 300 µs after the NAK, a pass from 101, below the PSN the NAK names, is the ACK
        // timer's; one from 102 may be the NAK's, held back (by a PFC pause, say).
        for (from, want) in [(101, (0, 1)), (102, (1, 0))] {
            let mut later = events[..7].to_vec();
            later.extend((from..=105).map(|p| req(p, 300_000 + u64::from(p) * 200)));
            let r = run_timed(&later);
            let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
            let t = &f.retransmission_triggers;
            assert_eq!((t.nak, t.timeout), want, "from {from}");
        }
        // So with two NAKs pending (107 lost too, NAKed after 108): below both, the timer's.
        for (from, want) in [(101, (0, 1)), (102, (1, 0))] {
            let mut two = events[..7].to_vec();
            two.extend([req(106, 10_000), req(108, 11_000), nak(107, 12_000)]);
            two.extend((from..=108).map(|p| req(p, 300_000 + u64::from(p) * 200)));
            let r = run_timed(&two);
            let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
            let t = &f.retransmission_triggers;
            assert_eq!((t.nak, t.timeout), want, "two NAKs, from {from}");
        }
    }

    /// READ 100 asks for 16 responses, and the send after it loses 120 (damaged). Response
    /// 110 comes damaged, so the requester reads again from 110 and resends 116–119; the
    /// responder NAKs 120 meanwhile. 113 and 114 come damaged again, so the requester reads
    /// again from 113, resends 116–118 and goes on at 120, the PSN the NAK named. The re-reads
    /// start below that PSN, so they leave the NAK pending; the pass that began with the first
    /// one serves it at 120. One pass, a re-read's, and no timeout.
    #[test]
    fn a_re_read_below_a_pending_nak_s_psn_leaves_the_nak_to_its_pass() {
        let req = |op, psn, ts| rc(1, 2, 0x50, op, psn, ts);
        let mut events = vec![
            read_req(100, 16_384, 467),
            req(0x04, 116, 743),
            req(0x0b, 117, 3_749),
            req(0x00, 118, 4_829),
            req(0x01, 119, 7_835),
            damaged(req(0x01, 120, 10_841)),
            req(0x01, 121, 13_847),
            read_req(110, 6_144, 16_853),
            req(0x04, 116, 17_129),
            req(0x0b, 117, 20_135),
            req(0x00, 118, 21_215),
            req(0x01, 119, 24_221),
            read_req(113, 3_072, 27_227),
            req(0x04, 116, 27_503),
            req(0x0b, 117, 30_509),
            req(0x00, 118, 31_589),
            req(0x01, 120, 34_595),
            req(0x01, 121, 37_601),
            req(0x01, 122, 40_607),
            req(0x02, 123, 43_613),
            ack(116, 17_897),
            ack(117, 17_965),
            nak(120, 18_033),
            ack(119, 25_443),
            ack(119, 25_511),
            ack(119, 33_165),
            ack(119, 33_533),
            ack(123, 46_000),
        ];
        // The READ's responses, and those of the two re-reads; the damaged ones marked.
        for (first, at, gap, bad) in [
            (100, 3_745, 884, &[110][..]),
            (110, 20_131, 884, &[113, 114]),
            (113, 30_505, 886, &[]),
        ] {
            events.extend(read_resps(first, 116 - first, at, gap).map(|e| {
                if bad.contains(&e.bth.unwrap().psn) {
                    damaged(e)
                } else {
                    e
                }
            }));
        }
        assert_eq!(retries_of_0x50(events), ((0, 0), (0, 0, 0, 1)));
    }

    /// QP 0x50's retries when `events` are analysed in the order of their times: its
    /// timeouts and most retries in a row, and its bursts' triggers (NAK, timeout, unknown,
    /// READ response gap).
    fn retries_of_0x50(mut events: Vec<Event>) -> ((u64, u64), (u64, u64, u64, u64)) {
        events.sort_by_key(|e| e.meta.ts_ns);
        let r = run_timed(&events);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        let t = &f.retransmission_triggers;
        (
            (f.counters.timeouts, f.timeouts_in_a_row),
            (t.nak, t.timeout, t.unknown, t.read_response_gap),
        )
    }

    /// READ 100 for four responses (100–103) and writes 104–106 after it, 105 damaged.
    fn read_and_105_lost() -> Vec<Event> {
        vec![
            read_req(100, 4_096, 0),
            write(104, 300),
            damaged(write(105, 600)),
            write(106, 900),
        ]
    }

    /// READ 100 asks for four responses and the writes after it lose 105 (damaged). Response
    /// 102 comes damaged, so the requester reads again from 102 and resends 104 and 105. The
    /// responder's NAK of 105, held behind its READ responses, passes the capture point 100 ns
    /// (or 900 ns) before that resend of 105, which the requester sent before the NAK reached
    /// it; the NAK then sends it back to 105 once more. That pass is the NAK's, no timer's
    /// (sweeps of damaged captures read it as a retry after a timeout).
    #[test]
    fn a_resend_sooner_than_a_nak_can_turn_round_leaves_the_nak_pending() {
        for gap in [100, 900] {
            let mut events = read_and_105_lost();
            events.extend([
                read_req(102, 2_048, 6_000),
                write(104, 6_300),
                nak(105, 7_300 - gap),
                write(105, 7_300),
                write(106, 7_600),
                write(105, 12_000),
                write(106, 12_300),
                ack(106, 13_500),
            ]);
            events.extend(read_resps_damaged(100, 4, 2_000, 884, 102));
            events.extend(read_resps(102, 2, 7_500, 884));
            assert_eq!(retries_of_0x50(events), ((0, 0), (0, 0, 0, 1)), "{gap} ns");
        }
    }

    /// A requester behind a queue 290 µs deep from the capture point, whose ACK timer runs
    /// out after about 250–300 µs (2 is resent after 300 µs). Write 4 is lost and the
    /// responder NAKs it; 249 µs later the requester's timer resends 3–8 (a timeout: the NAK
    /// has not reached it), which serves the NAK as the capture sees it; 40 µs after that
    /// resend of 4 the NAK reaches the requester, which goes back to 4. No ACK timer runs out
    /// that soon: that pass is the late NAK's, no third timeout (a sweep at 10 Gb/s read it
    /// as one).
    #[test]
    fn a_pass_back_to_a_late_nak_s_psn_too_soon_for_a_timer_is_the_nak_s() {
        let mut events = vec![
            write(1, 0),
            damaged(write(2, 300)),
            ack(1, 1_000),
            write(2, 300_300),
            ack(2, 301_000),
        ];
        events.extend((3..=8).map(|p| {
            let w = write(p, 400_000 + u64::from(p - 3) * 300);
            if p == 4 {
                damaged(w)
            } else {
                w
            }
        }));
        events.push(nak(4, 401_000));
        events.extend((3..=9).map(|p| write(p, 650_000 + u64::from(p - 3) * 300)));
        events.push(ack(9, 652_500));
        events.extend((4..=9).map(|p| write(p, 690_600 + u64::from(p - 4) * 300)));
        events.push(ack(9, 692_500));
        assert_eq!(retries_of_0x50(events), ((2, 1), (1, 2, 0, 0)));
    }

    /// READ 100 asks for four responses and the writes after it lose 105 (damaged). Response
    /// 101 comes damaged, so the requester reads again from 101 and resends 104–106. The
    /// responder's NAK of 105, held behind its READ responses, comes after that pass resent
    /// 105; it sends the requester back to the READ it still reads, which it asks again 3 µs
    /// later, then resends 104 until the ACK of 106 (the responder had 105 from the first
    /// pass) stops it. That pass serves the NAK, though it never resends 105. 108 is lost
    /// later and the requester's ACK timer (32 µs) resends it: a timeout's pass, not the
    /// NAK's (a sweep read it as the NAK's, which stayed pending).
    #[test]
    fn a_go_back_to_a_read_read_again_serves_the_nak_beyond_it() {
        let mut events = read_and_105_lost();
        events.extend([
            read_req(101, 3_072, 5_000),
            write(104, 5_300),
            write(105, 5_600),
            write(106, 5_900),
            nak(105, 6_000),
            read_req(101, 3_072, 9_000),
            write(104, 9_300),
            ack(106, 10_000),
            write(107, 20_000),
            damaged(write(108, 20_300)),
            ack(107, 22_000),
            write(108, 60_300),
            ack(108, 62_000),
        ]);
        events.extend(read_resps_damaged(100, 4, 2_000, 884, 101));
        events.extend(read_resps(101, 3, 7_000, 884));
        events.extend(read_resps(101, 3, 11_000, 884));
        assert_eq!(retries_of_0x50(events), ((1, 1), (0, 1, 0, 1)));
    }

    /// 105 is lost; the NAK's pass resends 105–110, and 105 comes damaged again, so the
    /// responder NAKs it again. The requester does not act on that NAK: its ACK timer runs
    /// out 1.05 ms later and it goes back to 105 within the same burst. That pass is the
    /// timer's (a retry after a timeout, `timeouts_in_a_row`), not the second NAK's.
    #[test]
    fn a_pass_back_long_after_a_nak_within_a_burst_is_the_timer_s() {
        let req = |psn, ts| rc(1, 2, 0x50, 0x0a, psn, ts);
        let nak = |ts| Event {
            aeth: Some(Aeth::parse(&[0x60, 0, 0, 1]).unwrap()),
            ..rc(2, 1, 0x51, 0x11, 105, ts)
        };
        let mut events: Vec<_> = (100..=110)
            .filter(|&p| p != 105)
            .map(|p| req(p, u64::from(p - 100) * 1_000))
            .collect();
        events.push(rc(2, 1, 0x51, 0x11, 104, 6_000));
        events.push(nak(12_000));
        events.push(damaged(req(105, 13_000)));
        events.extend((106..=110).map(|p| req(p, 13_000 + u64::from(p - 105) * 200)));
        events.push(nak(15_000));
        let late = 15_000 + 1_050_000;
        events.extend((105..=110).map(|p| req(p, late + u64::from(p - 105) * 200)));
        events.push(rc(2, 1, 0x51, 0x11, 110, late + 3_000));
        let r = run_timed(&events);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        assert_eq!(f.timeouts_in_a_row, 1);
        let t = &f.retransmission_triggers;
        assert_eq!((t.nak, t.timeout, t.unknown), (1, 0, 0));
    }

    /// 110 comes damaged and its NAK is lost after the capture point; the requester's timer
    /// resends 100–102 (the NAK's pass, as far as the capture tells), then stalls for 1.2 ms.
    /// An ACK of 109 comes and the pass goes on at 110, then stalls again until the timer
    /// resends 110. The jump to 110, 1.2 ms after the NAK that named it, is the pass going on,
    /// not a new pass: one retry after a timeout in a row, not two.
    #[test]
    fn a_nak_long_ago_names_no_jump() {
        let req = |psn, ts| rc(1, 2, 0x50, 0x0a, psn, ts);
        let mut events: Vec<_> = (100..=112)
            .map(|p| req(p, u64::from(p - 100) * 1_000))
            .collect();
        events[10] = damaged(events[10].clone());
        events.push(nak(110, 14_000));
        events.extend((100..=102).map(|p| req(p, 20_000 + u64::from(p - 100) * 200)));
        let on = 1_230_000;
        events.push(rc(2, 1, 0x51, 0x11, 109, on - 10_000));
        events.extend((110..=112).map(|p| req(p, on + u64::from(p - 110) * 200)));
        let again = on + 1_200_000;
        events.extend((110..=112).map(|p| req(p, again + u64::from(p - 110) * 200)));
        let r = run_timed(&events);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        assert_eq!(f.timeouts_in_a_row, 1);
    }

    /// A NAK's go-back-N pass resends 103 and 104, then a new packet (111) that the network
    /// held back comes, then the pass goes on with 105: one pass, the NAK's, and no timeout.
    /// So it is when the late packet comes right after 103, the PSN the NAK named (a sweep at
    /// 5% damage read the pass going on as a timeout's). Copies that trail by microseconds
    /// (resends of one packet between new ones, no NAK's) do not make such a pass.
    #[test]
    fn a_late_new_packet_inside_a_pass_does_not_end_it() {
        for before_late in [104, 103] {
            let mut events = vec![write(100, 0), ack(100, 1_000)];
            events.extend([101, 102, 104, 105, 106, 107, 108, 109, 110].map(|p| write(p, 2_000)));
            events.push(nak(103, 4_000));
            let resend = |p: u32| write(p, 5_000 + u64::from(p - 103) * 200);
            events.extend((103..=before_late).map(resend));
            events.push(write(111, 5_050 + u64::from(before_late - 103) * 200));
            events.extend((before_late + 1..=110).map(resend));
            events.push(write(112, 7_000));
            let r = run_timed(&events);
            let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
            let t = &f.retransmission_triggers;
            let what = format!("late after {before_late}");
            assert_eq!((t.nak, t.timeout, t.unknown), (1, 0, 0), "{what}");
            assert_eq!((f.counters.timeouts, f.timeouts_in_a_row), (0, 0), "{what}");
        }
    }

    /// A READ's responses come damaged twice (the requester reads it again from 102, and again
    /// finds 102 missing); it sends on, and a PSN sequence NAK of 108 comes. The requester goes
    /// back to the READ it still reads (as Linux rxe does on a NAK beyond a READ not yet
    /// answered): the READ from 102 and 104, and once an ACK of 107 comes, on to 108, the PSN
    /// the NAK named. That jump forward within the pass is the pass going on past PSNs just
    /// acknowledged, not a retry after an ACK timeout (one goes back, to the oldest PSN not
    /// acknowledged).
    #[test]
    fn a_nak_s_pass_from_a_read_jumps_on_to_the_psn_it_named() {
        let mut events = vec![write(100, 0), ack(100, 1_000), read_req(101, 3072, 2_000)];
        events.push(write(104, 2_100));
        events.extend(read_resps_damaged(101, 3, 3_000, 100, 102));
        events.extend([read_req(102, 2048, 5_000), write(104, 5_100)]);
        events.extend(read_resps_damaged(102, 2, 6_000, 100, 102));
        events.push(ack(104, 6_500));
        let new = |p: u32| write(p, 20_000 + u64::from(p) * 100);
        events.extend([new(105), new(106), new(107), damaged(new(108)), new(109)]);
        events.push(nak(108, 40_000));
        events.extend([read_req(102, 2048, 41_000), write(104, 41_100)]);
        events.extend(read_resps(102, 2, 42_000, 100));
        events.push(ack(107, 42_500));
        events.extend([write(108, 43_000), write(109, 43_200), write(110, 44_000)]);
        let r = run_timed(&events);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        let t = &f.retransmission_triggers;
        assert_eq!((t.timeout, t.unknown), (0, 0), "{t:?}");
        assert_eq!((f.counters.timeouts, f.timeouts_in_a_row), (0, 0), "{t:?}");
    }

    /// A requester behind a queue more than 1 ms deep to the capture point: 105 comes damaged
    /// and is NAKed, and the requester's new packets keep coming for 1.3 ms after the NAK
    /// passed the capture point. It goes back to 105 right after them: the pass is the NAK's.
    /// So it is 200 µs after them (the NAK reached it late, or the pass waited behind another
    /// QP's packets), but 1.1 ms after them it is a timeout's.
    #[test]
    fn a_nak_s_pass_behind_a_deep_queue_is_the_nak_s() {
        for quiet in [0, 200_000, 1_100_000] {
            let at = |p: u32| 2_000 + u64::from(p - 101) * 20_000;
            let mut events = vec![write(100, 0), ack(100, 1_000)];
            events.extend((101..=170).map(|p| write(p, at(p))));
            events[6] = damaged(events[6].clone());
            events.push(nak(105, at(105) + 5_000));
            let back = at(170) + 10_000 + quiet;
            events.extend((105..=110).map(|p| write(p, back + u64::from(p - 105) * 1_000)));
            let r = run_timed(&events);
            let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
            let t = &f.retransmission_triggers;
            let want = if quiet < 1_000_000 { (1, 0) } else { (0, 1) };
            assert_eq!((t.nak, t.timeout), want, "quiet {quiet}: {t:?}");
        }
    }

    /// 105 comes damaged and is NAKed, but the NAK reaches the requester late (behind a queue
    /// after the capture point): its ACK timer runs out first, and it resends from 101, below
    /// the NAK's PSN. Then the NAK arrives, and the requester goes back to 105 at once within
    /// that burst: the NAK's pass, not a second retry after a timeout.
    #[test]
    fn a_late_nak_s_pass_within_a_timeout_s_burst_is_no_retry() {
        let mut events = vec![write(100, 0), ack(100, 1_000)];
        events.extend((101..=120).map(|p| write(p, 2_000 + u64::from(p - 101) * 1_000)));
        events[6] = damaged(events[6].clone());
        events.push(nak(105, 22_000));
        let back = 500_000;
        events.extend((101..=116).map(|p| write(p, back + u64::from(p - 101) * 1_000)));
        events.extend((105..=120).map(|p| write(p, back + 16_000 + u64::from(p - 105) * 1_000)));
        events.push(ack(120, back + 40_000));
        let r = run_timed(&events);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        let t = &f.retransmission_triggers;
        assert_eq!((t.nak, t.timeout), (0, 1), "{t:?}");
        assert_eq!(f.timeouts_in_a_row, 1, "{t:?}");
    }

    /// A requester whose NAKs' passes come 400 µs after them (a queue to the capture point
    /// that deep), its window full and the flow quiet before each: a pass 1.1 ms after the
    /// fourth NAK is still that NAK's. Where the passes came 5 µs after their NAKs, it is a
    /// timeout's.
    #[test]
    fn nak_s_passes_that_come_late_widen_the_nak_s_window() {
        for lately in [400_000, 5_000] {
            let mut events = vec![write(100, 0), ack(100, 1_000)];
            let mut t = 10_000;
            for round in 0..4u32 {
                let base = 101 + round * 10;
                events.extend((0..5u32).map(|i| write(base + i, t + u64::from(i) * 20_000)));
                let second = events.len() - 4;
                events[second] = damaged(events[second].clone());
                let nak_at = t + 25_000;
                events.push(nak(base + 1, nak_at));
                let back = nak_at + if round < 3 { lately } else { 1_100_000 };
                events.extend((1..5u32).map(|i| write(base + i, back + u64::from(i) * 1_000)));
                events.push(ack(base + 4, back + 20_000));
                t = back + 50_000;
            }
            let r = run_timed(&events);
            let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
            let t = &f.retransmission_triggers;
            let want = if lately > 100_000 { (4, 0) } else { (3, 1) };
            assert_eq!(
                (t.nak, t.timeout),
                want,
                "NAKs' passes {lately} ns after: {t:?}"
            );
        }
    }

    /// 103 comes late, behind 104 and 105, and the flow goes quiet after it (a receiver that
    /// takes packets out of order, so no NAK): the requester's ACK timer runs out and it
    /// resends from 101. That pass is no go-back-N pass that 103 began (one goes on at once):
    /// 103 was late, and the timeout's pass resent it.
    #[test]
    fn a_timeout_s_pass_after_a_late_packet_leaves_it_late() {
        let req = |psn, ts| rc(1, 2, 0x50, 0x0a, psn, ts);
        let late = 1_000_000;
        let events = [
            req(100, 0),
            rc(2, 1, 0x51, 0x11, 100, 1_000),
            req(101, 2_000),
            req(102, 2_200),
            req(104, 2_400),
            req(105, 2_600),
            req(103, 2_800),
            req(101, late),
            req(102, late + 200),
            req(103, late + 400),
            req(104, late + 600),
            req(105, late + 800),
        ];
        let r = run_timed(&events);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        let c = &f.counters;
        assert_eq!(
            (
                c.gap_filled_packets,
                c.reordered_packets,
                f.reordered_resent
            ),
            (1, 1, 1)
        );
        assert_eq!(f.retransmission_triggers.timeout, 1);
        // Lost before the capture point instead, 103 begins the timeout's pass (101 and 102
        // acknowledged), which goes on at once: lost, not late.
        let lost = [
            req(100, 0),
            rc(2, 1, 0x51, 0x11, 100, 1_000),
            req(101, 2_000),
            req(102, 2_200),
            req(104, 2_400),
            req(105, 2_800),
            rc(2, 1, 0x51, 0x11, 102, 3_000),
            req(103, late),
            req(104, late + 200),
            req(105, late + 400),
        ];
        let r = run_timed(&lost);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        let c = &f.counters;
        assert_eq!((c.gap_filled_packets, c.reordered_packets), (1, 0));
        assert_eq!(f.retransmission_triggers.timeout, 1);
    }

    /// A requester paced to a packet every 16 µs (a rate limit, a slow link) finds READ response
    /// 103 missing behind 104 and 105, sends the request it had queued (106), and asks for 103
    /// again at its pace, 30 µs after the last response: a re-read, not a timeout's resend. So
    /// it is when the pace follows the packets' lengths: a small READ request 400 ns before a
    /// 4 KiB write, and the re-read 16.8 µs after the write.
    #[test]
    fn a_re_read_at_the_requester_s_pace_is_no_timeout() {
        let us = 1_000;
        let events = [
            rc(1, 2, 0x50, 0x0a, 100, 0),
            rc(1, 2, 0x50, 0x0a, 101, 16 * us),
            rc(2, 1, 0x51, 0x11, 101, 17 * us),
            rc(1, 2, 0x50, 0x0c, 102, 32 * us),
            rc(2, 1, 0x51, 0x0d, 102, 34 * us),
            rc(2, 1, 0x51, 0x0e, 104, 34 * us + 200),
            rc(2, 1, 0x51, 0x0f, 105, 34 * us + 400),
            rc(1, 2, 0x50, 0x0a, 106, 48 * us),
            rc(1, 2, 0x50, 0x0c, 103, 64 * us),
            rc(2, 1, 0x51, 0x0d, 103, 66 * us),
            rc(2, 1, 0x51, 0x0e, 104, 66 * us + 200),
            rc(2, 1, 0x51, 0x0f, 105, 66 * us + 400),
        ];
        let r = run_timed(&events);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        let t = &f.retransmission_triggers;
        assert_eq!((t.read_response_gap, t.timeout), (1, 0));
        assert_eq!(f.counters.timeouts, 0);
        let sized = |mut e: Event, len| {
            e.meta.orig_len = len;
            e
        };
        let by_length = [
            rc(1, 2, 0x50, 0x0a, 100, 0),
            rc(2, 1, 0x51, 0x11, 100, 2 * us),
            sized(rc(1, 2, 0x50, 0x0c, 101, 16 * us), 80),
            sized(rc(1, 2, 0x50, 0x0a, 105, 16 * us + 400), 4_200),
            rc(2, 1, 0x51, 0x0d, 101, 18 * us),
            rc(2, 1, 0x51, 0x0e, 103, 18 * us + 200),
            rc(2, 1, 0x51, 0x0f, 104, 18 * us + 400),
            rc(1, 2, 0x50, 0x0c, 102, 16 * us + 400 + 16_800),
        ];
        let r = run_timed(&by_length);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        let t = &f.retransmission_triggers;
        assert_eq!((t.read_response_gap, t.timeout), (1, 0));
    }

    /// A pass after a timeout resends READ 106 and writes 110–113; the responder sends the
    /// READ's responses again, 2 µs apart, and only then ACKs each write again (in order,
    /// back to back): four duplicate ACKs, though the first came 9.4 µs after the last write
    /// resent, none the capture's copy.
    #[test]
    fn duplicate_acks_behind_read_responses_are_no_copies() {
        let us = 1_000;
        let req = |op, psn, ts| rc(1, 2, 0x50, op, psn, ts);
        let mut events = vec![req(0x0a, 105, 0), ack(105, us)];
        events.push(req(0x0c, 106, 2 * us));
        events.extend(
            [(0x0d, 106), (0x0e, 107), (0x0e, 108), (0x0f, 109)]
                .iter()
                .enumerate()
                .map(|(k, &(op, psn))| rc(2, 1, 0x51, op, psn, 3 * us + 100 * k as u64)),
        );
        events.extend((110..=113).map(|p| req(0x0a, p, 4 * us + u64::from(p - 110) * 100)));
        events.push(ack(113, 5 * us));
        events.push(req(0x0c, 106, 1_000 * us));
        events.extend((110..=113).map(|p| req(0x0a, p, 1_000 * us + u64::from(p - 109) * 200)));
        let responses = [(0x0d, 106), (0x0e, 107), (0x0e, 108), (0x0f, 109)];
        events.extend(
            responses
                .iter()
                .enumerate()
                .map(|(k, &(op, psn))| rc(2, 1, 0x51, op, psn, 1_002 * us + 2 * us * k as u64)),
        );
        events.extend((0..4).map(|k| ack(113, 1_010 * us + 7 * k)));
        assert_duplicate_acks(&events, 4, "ACKs behind READ responses");
    }

    /// As above on a slow link: the READ's responses come 10 µs apart, so the responder ACKs
    /// the writes again 33 µs after they were resent. The responses answer the READ resent
    /// first, so what was resent after it is answered after them: four duplicate ACKs.
    #[test]
    fn duplicate_acks_behind_a_long_read_are_no_copies() {
        let us = 1_000;
        let req = |op, psn, ts| rc(1, 2, 0x50, op, psn, ts);
        let responses = [(0x0d, 106), (0x0e, 107), (0x0e, 108), (0x0f, 109)];
        let answers = |at: u64| {
            responses
                .iter()
                .enumerate()
                .map(move |(k, &(op, psn))| rc(2, 1, 0x51, op, psn, at + 10 * us * k as u64))
        };
        let mut events = vec![req(0x0a, 105, 0), ack(105, us), req(0x0c, 106, 2 * us)];
        events.extend(answers(3 * us).take(1));
        events.extend((110..=113).map(|p| req(0x0a, p, 4 * us + u64::from(p - 110) * 100)));
        events.extend(answers(3 * us).skip(1));
        events.push(ack(113, 34 * us));
        events.push(req(0x0c, 106, 1_000 * us));
        events.extend((110..=113).map(|p| req(0x0a, p, 1_000 * us + u64::from(p - 109) * 200)));
        events.extend(answers(1_002 * us));
        events.extend((0..4).map(|k| ack(113, 1_033 * us + 7 * k)));
        assert_duplicate_acks(&events, 4, "ACKs behind a long READ");
    }

    /// A pass resends READ 100, writes 103 and 104, READ 105 and a send and a write after it;
    /// the responder answers in order, on a slow link: the READ's responses 4 µs apart, two
    /// duplicate ACKs, READ 105's responses, two more ACKs 4 µs apart. The last comes 14 µs
    /// after the last resend, but the window of resends reaches back to the READ that the
    /// responses before the first of these ACKs answer: four duplicate ACKs, none the
    /// capture's copy, wherever they fall in the ring of answers (its first slots filled by
    /// `pad` earlier ACKs).
    #[test]
    fn duplicate_acks_around_a_read_s_response_are_no_copies() {
        let us = 1_000;
        // READ 105 asks for one response, or for five (the ring of 8 answers then no longer
        // holds READ 100's last response when the last ACK comes).
        for (pad, n) in (0..8u32).flat_map(|p| [(p, 1u32), (p, 5)]) {
            let req = |op, psn, ts| rc(1, 2, 0x50, op, psn, ts);
            let read = |psn, dma, ts| Event {
                ext: ExtWord::DmaLen(dma),
                ..req(0x0c, psn, ts)
            };
            let ans = |op, psn, ts| rc(2, 1, 0x51, op, psn, ts);
            let mut events = ring_padding(pad);
            let t0 = 100 * us;
            let (send, write) = (105 + n, 106 + n);
            let pass = |at: u64| {
                vec![
                    read(100, 3072, at),
                    req(0x04, 103, at + 300),
                    req(0x0a, 104, at + 600),
                    read(105, n * 1024, at + 900),
                    req(0x04, send, at + 1_200),
                    req(0x0a, write, at + 1_500),
                ]
            };
            events.extend(pass(t0));
            let answers = |at: u64, first: bool| {
                let acks = if first {
                    [103, 104, send, write]
                } else {
                    [write; 4]
                };
                let mut v = vec![
                    ans(0x0d, 100, at),
                    ans(0x0e, 101, at + 4 * us),
                    ans(0x0f, 102, at + 8 * us),
                ];
                v.push(ans(0x11, acks[0], at + 8_100));
                v.push(ans(0x11, acks[1], at + 8_160));
                for k in 0..n {
                    let op = match (k, n) {
                        (_, 1) => 0x10,
                        (0, _) => 0x0d,
                        (k, n) if k == n - 1 => 0x0f,
                        _ => 0x0e,
                    };
                    v.push(ans(op, 105 + k, at + 8_220 + u64::from(k) * 60));
                }
                v.push(ans(0x11, acks[2], at + 12 * us));
                v.push(ans(0x11, acks[3], at + 16 * us));
                v
            };
            events.extend(answers(t0 + 2 * us, true));
            events.extend(pass(t0 + 1_000 * us));
            events.extend(answers(t0 + 1_002 * us, false));
            let case = format!("pad {pad}, {n} responses");
            assert_duplicate_acks(&events, 4, &case);
        }
    }

    /// As above with two more READs among the writes, each answered by three responses
    /// between the duplicate ACKs: READ 100's last response has left the ring of 8 answers
    /// and two runs of READ responses came after it when the last ACK comes. Four duplicate
    /// ACKs, none the capture's copy.
    #[test]
    fn duplicate_acks_between_several_reads_are_no_copies() {
        let us = 1_000;
        for pad in 0..8u32 {
            let req = |op, psn, ts| rc(1, 2, 0x50, op, psn, ts);
            let read = |psn, ts| Event {
                ext: ExtWord::DmaLen(3072),
                ..req(0x0c, psn, ts)
            };
            let ans = |op, psn, ts| rc(2, 1, 0x51, op, psn, ts);
            let mut events = ring_padding(pad);
            let pass = |at: u64| {
                vec![
                    read(100, at),
                    req(0x04, 103, at + 300),
                    req(0x0a, 104, at + 600),
                    read(105, at + 900),
                    req(0x04, 108, at + 1_200),
                    read(109, at + 1_500),
                    req(0x0a, 112, at + 1_800),
                ]
            };
            let responses = |from: u32, at: u64| {
                (0..3).map(move |k| ans(0x0d + k as u8, from + k, at + u64::from(k) * 60))
            };
            let answers = |at: u64, acks: [u32; 4]| {
                let mut v = vec![
                    ans(0x0d, 100, at),
                    ans(0x0e, 101, at + 4 * us),
                    ans(0x0f, 102, at + 8 * us),
                    ans(0x11, acks[0], at + 8_100),
                    ans(0x11, acks[1], at + 8_160),
                ];
                v.extend(responses(105, at + 8_220));
                v.push(ans(0x11, acks[2], at + 12 * us));
                v.extend(responses(109, at + 12_100));
                v.push(ans(0x11, acks[3], at + 16 * us));
                v
            };
            let t0 = 100 * us;
            events.extend(pass(t0));
            events.extend(answers(t0 + 2 * us, [103, 104, 108, 112]));
            events.extend(pass(t0 + 1_000 * us));
            events.extend(answers(t0 + 1_002 * us, [112; 4]));
            assert_duplicate_acks(&events, 4, &format!("pad {pad}"));
        }
    }

    /// A pass resends READ 100 (eight responses) and writes 108–111; 8 µs later another
    /// re-reads from 104, within READ 100's PSNs, and resends 108. The responder, slow, sends
    /// the first pass's responses 100–107 and then ACKs its four writes again. Those responses
    /// answer READ 100 asked again, not the re-read from 104 sent after it: four duplicate
    /// ACKs, none the capture's copy.
    #[test]
    fn duplicate_acks_follow_the_read_their_responses_began_with() {
        let us = 1_000;
        let req = |op, psn, ts| rc(1, 2, 0x50, op, psn, ts);
        let ans = |op, psn, ts| rc(2, 1, 0x51, op, psn, ts);
        let responses = |at: u64| {
            (100..108u32).map(move |p| {
                let op = match p {
                    100 => 0x0d,
                    107 => 0x0f,
                    _ => 0x0e,
                };
                read_resp(op, p, at + u64::from(p - 100) * 2 * us)
            })
        };
        let writes =
            |at: u64| (108..112u32).map(move |p| req(0x0a, p, at + u64::from(p - 107) * 300));
        let mut events = vec![read_req(100, 8192, 0)];
        events.extend(writes(0));
        events.extend(responses(2 * us));
        events.extend((108..112).map(|p| ans(0x11, p, 17 * us + u64::from(p - 108) * 70)));
        let t1 = 1_000 * us;
        events.push(read_req(100, 8192, t1));
        events.extend(writes(t1));
        events.push(read_req(104, 4096, t1 + 8 * us));
        events.push(req(0x0a, 108, t1 + 8_300));
        events.extend(responses(t1 + 10 * us));
        events.extend((0..4).map(|k| ans(0x11, 111, t1 + 24_100 + k * 70)));
        events.sort_by_key(|e| e.meta.ts_ns);
        assert_duplicate_acks(&events, 4, "ACKs after READ 100's responses");
    }

    /// READ 100's first response comes damaged; the requester reads again from 100 and
    /// resends 104, 105, READ 106 and 110 before READ 106's responses and ACK 110 come. The
    /// responder answers the re-read after those: its responses, then ACK 110 again for 104
    /// and 105 (88 ns apart, 8 µs after the first ACK 110), and after READ 106's responses once
    /// more, for 110. Three duplicate ACKs, none the capture's copy: the first ACK 110 answered
    /// no resend, and those resent after the re-read are answered after its responses.
    #[test]
    fn duplicate_acks_behind_a_re_read_s_responses_are_no_copies() {
        for pad in 0..8u32 {
            let req = |op, psn, ts| rc(1, 2, 0x50, op, psn, ts);
            let ack = |ts| rc(2, 1, 0x51, 0x11, 110, ts);
            let responses = |first, at| read_resps(first, 4, at, 1_700);
            let mut events = ring_padding(pad);
            let t = 200_000;
            events.extend([
                read_req(100, 4096, t),
                req(0x04, 104, t + 276),
                req(0x0a, 105, t + 1_236),
                read_req(106, 4096, t + 2_000),
                req(0x04, 110, t + 2_276),
                read_req(100, 4096, t + 7_000),
                req(0x04, 104, t + 7_276),
                req(0x0a, 105, t + 8_236),
                read_req(106, 4096, t + 12_000),
                req(0x04, 110, t + 12_276),
                rc(2, 1, 0x51, 0x11, 104, t + 8_200),
                rc(2, 1, 0x51, 0x11, 105, t + 8_300),
                ack(t + 13_600),
                ack(t + 21_600),
                ack(t + 21_688),
                ack(t + 25_300),
            ]);
            let mut first = responses(100, t + 3_000).collect::<Vec<_>>();
            first[0] = damaged(first[0].clone());
            events.extend(first);
            events.extend(responses(106, t + 8_400));
            events.extend(responses(100, t + 16_400));
            events.extend(responses(106, t + 21_800).take(3));
            events.sort_by_key(|e| e.meta.ts_ns);
            assert_duplicate_acks(&events, 3, &format!("pad {pad}"));
        }
    }

    /// READ 100's first response comes damaged; the requester reads again from 100 and
    /// resends 104, READ 105 (16 responses) and 121. The responder sends READ 105's responses
    /// first, for 20 µs, then ACK 121, then the re-read's responses and ACK 121 again for 104,
    /// 5.5 µs after the first. That answers a request resent before the re-read's responses,
    /// however long before the first ACK 121: two duplicate ACKs, no copy.
    #[test]
    fn duplicate_acks_behind_a_re_read_reach_back_to_it() {
        let req = |op, psn, ts| rc(1, 2, 0x50, op, psn, ts);
        let responses = |first, n, at| read_resps(first, n, at, 1_343);
        let mut events = vec![
            read_req(100, 4096, 0),
            req(0x04, 104, 300),
            read_req(105, 16_384, 600),
            req(0x04, 121, 900),
            ack(104, 5_100),
            read_req(100, 4096, 5_500),
            req(0x04, 104, 5_800),
            read_req(105, 16_384, 9_000),
            req(0x04, 121, 9_300),
            ack(121, 26_300),
            ack(121, 31_800),
            ack(121, 36_000),
        ];
        let mut first = responses(100, 4, 2_000).collect::<Vec<_>>();
        first[0] = damaged(first[0].clone());
        events.extend(first);
        events.extend(responses(105, 16, 6_000));
        events.extend(responses(100, 4, 26_400));
        events.extend(responses(105, 16, 31_900).take(3));
        events.sort_by_key(|e| e.meta.ts_ns);
        assert_duplicate_acks(&events, 2, "ACK 121 after the re-read's responses");
    }

    /// READ 101's third response comes damaged; the requester reads again from 103 and
    /// resends 105–109, the READ 107 among them. The responder answers 107–109 first (ACK
    /// 109), then the re-read, then ACK 109 again for 105 and 106, READ 107's response again
    /// and ACK 109 for 108 and 109. Four duplicate ACKs, wherever they fall in the ring of
    /// answers: the resends they answer came up to 8 µs before the first ACK 109, not before
    /// the copy found, and the READ response just before that ACK answers a READ not resent
    /// then.
    #[test]
    fn duplicate_acks_reach_back_from_the_first_alike() {
        for pad in 0..8u32 {
            let req = |op, psn, ts| rc(1, 2, 0x50, op, psn, ts);
            let t = 200_000;
            let mut events = ring_padding(pad);
            events.extend([
                read_req(101, 4096, t + 2_840),
                req(0x04, 105, t + 2_950),
                req(0x0a, 106, t + 5_243),
                read_req(107, 1024, t + 7_536),
                req(0x04, 108, t + 7_646),
                req(0x0a, 109, t + 8_029),
                read_req(103, 2048, t + 10_322),
                req(0x04, 105, t + 10_432),
                req(0x0a, 106, t + 12_725),
                read_req(107, 1024, t + 15_018),
                req(0x04, 108, t + 15_128),
                req(0x0a, 109, t + 15_511),
                read_resp(0x0d, 101, t + 6_066),
                read_resp(0x0e, 102, t + 6_743),
                damaged(read_resp(0x0e, 103, t + 7_419)),
                read_resp(0x0f, 104, t + 8_095),
                ack(105, t + 8_772),
                ack(106, t + 8_794),
                read_resp(0x10, 107, t + 10_762),
                ack(108, t + 11_439),
                ack(109, t + 11_461),
                read_resp(0x0d, 103, t + 13_548),
                read_resp(0x0f, 104, t + 14_225),
                ack(109, t + 14_902),
                ack(109, t + 16_106),
                read_resp(0x10, 107, t + 18_244),
                ack(109, t + 18_921),
                ack(109, t + 18_943),
            ]);
            events.sort_by_key(|e| e.meta.ts_ns);
            assert_duplicate_acks(&events, 4, &format!("pad {pad}"));
        }
    }

    /// Two passes 9 µs apart resend READ 100 and 102–104; the responder answers each with
    /// the READ's responses and three duplicate ACKs, the second three 4.5 µs after the
    /// first. The resent READ whose responses came before the first of them is the first
    /// pass's, not the second's (which came after those responses): six duplicate ACKs,
    /// none the capture's copy, wherever they fall in the ring of answers.
    #[test]
    fn duplicate_acks_of_two_passes_are_no_copies() {
        let us = 1_000;
        for pad in 0..8u32 {
            let req = |op, psn, ts| rc(1, 2, 0x50, op, psn, ts);
            let read = |ts| Event {
                ext: ExtWord::DmaLen(2048),
                ..req(0x0c, 100, ts)
            };
            let ans = |op, psn, ts| rc(2, 1, 0x51, op, psn, ts);
            let mut events = ring_padding(pad);
            let pass = |at: u64| {
                let mut v = vec![read(at)];
                v.extend((102..=104).map(|p| req(0x0a, p, at + u64::from(p - 101) * 300)));
                v
            };
            let answers = |at: u64, acks: [u32; 3]| {
                let mut v = vec![ans(0x0d, 100, at), ans(0x0f, 101, at + 400)];
                v.extend(
                    acks.iter()
                        .zip(0..)
                        .map(|(&p, k)| ans(0x11, p, at + 500 + k * 8)),
                );
                v
            };
            let t0 = 100 * us;
            events.extend(pass(t0));
            events.extend(answers(t0 + 2 * us, [102, 103, 104]));
            let t1 = t0 + 1_000 * us;
            events.extend(pass(t1));
            events.extend(answers(t1 + 8 * us, [104; 3]));
            events.extend(pass(t1 + 9 * us));
            events.extend(answers(t1 + 12_500, [104; 3]));
            events.sort_by_key(|e| e.meta.ts_ns);
            assert_duplicate_acks(&events, 6, &format!("pad {pad}"));
        }
    }

    /// READ 100 asks for six 1 KiB responses; 102 is damaged (dropped by the requester), the
    /// requester reads again from 102 after 103, and the originals of 104 and 105 come after
    /// that. The responder then sends 102–105 again, each 4 µs or so after its original: the
    /// READ asked for them again, so they are resent responses, not the capture's copies,
    /// also when one of them comes damaged again.
    #[test]
    fn responses_a_re_read_asks_for_again_are_no_copies() {
        let read = read_req;
        let resp = read_resp;
        let events = [
            read(100, 6144, 0),
            resp(0x0d, 100, 2_000),
            resp(0x0e, 101, 2_900),
            Event {
                icrc: Some(IcrcStatus::Bad),
                ..resp(0x0e, 102, 3_800)
            },
            resp(0x0e, 103, 4_700),
            read(102, 4096, 5_000),
            resp(0x0e, 104, 5_600),
            resp(0x0f, 105, 6_500),
            resp(0x0d, 102, 8_000),
            resp(0x0e, 103, 8_900),
            resp(0x0e, 104, 9_800),
            resp(0x0f, 105, 10_700),
        ];
        let r = run_timed(&events);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x51).unwrap();
        assert_eq!(
            (
                f.counters.retransmitted_packets,
                f.counters.gap_filled_packets
            ),
            (3, 1)
        );
        assert_no_copies(&r, "responses sent again");
        // 103 sent again comes damaged as well: 104 and 105 still go on in order.
        let mut damaged = events.to_vec();
        damaged[9].icrc = Some(IcrcStatus::Bad);
        let r = run_timed(&damaged);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x51).unwrap();
        assert_eq!(f.counters.retransmitted_packets, 2);
        assert_no_copies(&r, "one damaged again");
    }

    /// WRITE 101 comes damaged (its responder drops it) and whole again 1.7 µs later, after
    /// the ACK of 100, with 102 behind it: resends, not the capture's copies, which would come
    /// as damaged as their packets. A damaged copy right after its damaged packet is the
    /// capture's.
    #[test]
    fn a_whole_request_after_a_damaged_one_is_no_copy() {
        let write = |psn, ts| Event {
            icrc: Some(IcrcStatus::Ok),
            ..rc(1, 2, 0x50, 0x0a, psn, ts)
        };
        let events = vec![
            write(100, 0),
            damaged(write(101, 300)),
            write(102, 600),
            rc(2, 1, 0x51, 0x11, 100, 1_000),
            write(101, 2_000),
            write(102, 2_300),
        ];
        let retx = |r: &report::Report| {
            let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
            f.counters.retransmitted_packets
        };
        let r = run_timed(&events);
        assert_eq!(retx(&r), 2);
        assert_no_copies(&r, "whole after damaged");
        let mut copied = events.clone();
        copied.insert(2, damaged(write(101, 310)));
        let r = run_timed(&copied);
        assert_eq!(retx(&r), 2, "the copy is none");
        let dup = r.findings.iter().find(|f| f.code == "capture.duplicates");
        assert_eq!(dup.map(|f| f.frames.clone()), Some(vec![3]));
    }

    /// WRITEs 100 and 101 and READ 102 (16 responses, 2 µs apart) are resent 9 µs after they
    /// were first sent, while the responder sends READ 102's responses. It answers the resent
    /// WRITEs only behind them, with two ACKs of 117 23 µs after the resends: answers to
    /// requests that came after the READ's first response (one duplicate ACK), not the
    /// capture's copy, however long before them the resent READ came.
    #[test]
    fn alike_acks_behind_a_long_read_answer_what_came_after_its_first_response() {
        let mut events = vec![
            write(100, 0),
            write(101, 300),
            read_req(102, 16_384, 600),
            ack(100, 1_000),
            ack(101, 1_300),
            write(100, 9_000),
            write(101, 9_300),
            read_req(102, 16_384, 9_600),
            ack(117, 32_500),
            ack(117, 32_800),
        ];
        let mut slow = events.clone();
        events.extend(read_resps(102, 16, 2_000, 2_000));
        events.extend(read_resps(102, 3, 33_500, 2_000));
        events.sort_by_key(|e| e.meta.ts_ns);
        assert_duplicate_acks(&events, 1, "behind a long READ");
        // The last response comes damaged (its requester drops it) 9 µs after the one before:
        // the READ's responses went on until it all the same.
        let mut responses: Vec<_> = read_resps(102, 16, 2_000, 1_400).collect();
        responses[15] = damaged(read_resp(0x0f, 117, 32_000));
        slow.extend(responses);
        slow.extend(read_resps(102, 3, 33_500, 2_000));
        slow.sort_by_key(|e| e.meta.ts_ns);
        assert_duplicate_acks(&slow, 1, "behind a READ whose last response came damaged");
    }

    /// WRITEs 98 and 99 resent before READ 100's first response, as in
    /// [`alike_acks_behind_a_read_answered_late_reach_back_to_its_send`], with responses 1 µs
    /// apart, in a capture that holds every frame twice, each copy 100 ns after its frame,
    /// behind 78 WRITEs and their ACKs that show it so. The second ACK of 115 is past the ring
    /// of answers, but the resends it answers came after the READ its responses answer: no
    /// copy, one duplicate ACK as without the copies.
    #[test]
    fn alike_acks_behind_a_read_in_a_capture_held_twice() {
        let t = 100_000;
        let mut events: Vec<Event> = (0..78u32)
            .flat_map(|k| {
                let at = u64::from(k) * 1_000;
                [write(20 + k, at), ack(20 + k, at + 500)]
            })
            .collect();
        events.extend([
            write(98, t),
            write(99, t + 100),
            read_req(100, 16_384, t + 300),
            ack(98, t + 1_000),
            ack(99, t + 1_300),
            write(98, t + 9_000),
            write(99, t + 9_300),
            ack(115, t + 33_500),
            ack(115, t + 33_800),
        ]);
        events.extend(read_resps(100, 16, t + 18_000, 1_000));
        events.sort_by_key(|e| e.meta.ts_ns);
        let r = run_timed(&held_twice(&events, 100));
        let f = r.flows.iter().find(|f| f.dest_qp == 0x51).unwrap();
        assert_eq!(f.counters.duplicate_acks, 1);
        let q = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        assert_eq!(q.counters.retransmitted_packets, 2);
    }

    /// WRITE `p` damaged at `t` and `p + 1` `gap` later, the NAK of `p` at `t` + 2 µs, the pass
    /// that resends both from `t` + 3 µs (`gap` apart) and the ACK of `p + 1` at `t` + 5 µs.
    fn pass_after_nak(p: u32, t: u64, gap: u64) -> [Event; 6] {
        [
            damaged(write(p, t)),
            write(p + 1, t + gap),
            nak(p, t + 2_000),
            write(p, t + 3_000),
            write(p + 1, t + 3_000 + gap),
            ack(p + 1, t + 5_000),
        ]
    }

    /// A capture held twice 300 ns apart, known so from another connection's 80 copies: WRITE 1
    /// comes damaged and WRITE 2 after it, the NAK of 1 makes a pass that resends both, and
    /// each resend's copy comes right after it. The NAK was served by the pass's first packet,
    /// so no NAK is left to resend a packet again: two resends, not four (a sweep at 4.7%
    /// damage read such copies as resends while the flow had too few pairs to tell).
    #[test]
    fn a_pass_s_copies_right_after_its_nak_are_the_capture_s() {
        let mut events: Vec<Event> = (0..40u32)
            .flat_map(|k| {
                let at = u64::from(k) * 2_000;
                [
                    rc(3, 4, 0x60, 0x0a, 500 + k, at),
                    rc(4, 3, 0x61, 0x11, 500 + k, at + 1_000),
                ]
            })
            .collect();
        events.extend(pass_after_nak(1, 100_000, 1_000));
        let r = run_timed(&held_twice(&events, 300));
        let q = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        assert_eq!(q.counters.retransmitted_packets, 2);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x51).unwrap();
        assert_eq!(f.counters.naks.psn_sequence_error, 1);
    }

    /// A flow held twice 300 ns apart whose first pass came before anything showed it: the
    /// copy of the resend of WRITE 1 reads as a resend. 62 WRITEs later, 20 µs apart, those two
    /// leave the flow's memory of requests without copies of their own; they were twins, so
    /// the run of pairs goes on: the copies of a later pass (WRITEs 64 and 65 after a NAK),
    /// which trail by one packet, are the capture's. Before, the twins ended the run, and the
    /// pass's copies read as two resends more.
    #[test]
    fn twins_leaving_a_flow_s_memory_end_no_run_of_pairs() {
        let mut events = vec![damaged(write(1, 0)), nak(1, 2_000), write(1, 3_000)];
        for psn in 2..64u32 {
            let at = 10_000 + u64::from(psn) * 20_000;
            events.extend([write(psn, at), ack(psn, at + 2_000)]);
        }
        events.extend(pass_after_nak(64, 1_400_000, 100));
        let r = run_timed(&held_twice(&events, 300));
        let q = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        // The resends of 1, 64 and 65, and the copy of 1's resend.
        assert_eq!(q.counters.retransmitted_packets, 4);
    }

    /// WRITEs 98 and 99 are resent 9 µs after they were first sent, after READ 100, whose
    /// first response comes only later (the responder was busy): they are answered after its
    /// 16 responses, by two ACKs of 115 23 µs after the resends. The READ was sent before
    /// them, so they are answered after its responses: one duplicate ACK, no copy.
    #[test]
    fn alike_acks_behind_a_read_answered_late_reach_back_to_its_send() {
        let mut events = vec![
            write(98, 0),
            write(99, 100),
            read_req(100, 16_384, 300),
            ack(98, 1_000),
            ack(99, 1_300),
            write(98, 9_000),
            write(99, 9_300),
            ack(115, 33_000),
            ack(115, 33_300),
        ];
        events.extend(read_resps(100, 16, 10_000, 1_500));
        events.sort_by_key(|e| e.meta.ts_ns);
        assert_duplicate_acks(&events, 1, "behind a READ answered late");
    }

    /// READ 118 is sent at 300 ns, after READ 100 (16 responses), and again at 5.3 µs with
    /// WRITEs 116, 117 and 119 (response 101 came damaged, and so did the re-read asking for
    /// it): the responder, busy with READ 100 until 23.5 µs, answers the first sends (ACKs of
    /// 116 and 117, READ 118's response, an ACK of 119) and then the resends, in order: two
    /// alike ACKs of 119, the response again and a third. Those ACKs answer what was resent
    /// after READ 118's first send, 18 µs before, not after its resend: three duplicate ACKs,
    /// no copy (a sweep at 8% damage found one such ACK read as the capture's copy).
    #[test]
    fn alike_acks_behind_a_read_sent_twice_reach_back_to_its_first_send() {
        let mut events = vec![
            read_req(100, 16_384, 0),
            write(116, 100),
            write(117, 200),
            read_req(118, 1024, 300),
            write(119, 400),
            damaged(read_req(101, 15_360, 5_000)),
            write(116, 5_100),
            write(117, 5_200),
            read_req(118, 1024, 5_300),
            write(119, 5_400),
            ack(116, 24_000),
            ack(117, 24_100),
            read_resp(0x10, 118, 24_200),
            ack(119, 24_300),
            ack(119, 24_400),
            ack(119, 24_500),
            read_resp(0x10, 118, 24_600),
            ack(119, 24_700),
        ];
        events.extend(read_resps_damaged(100, 16, 1_000, 1_500, 101));
        events.sort_by_key(|e| e.meta.ts_ns);
        assert_duplicate_acks(&events, 3, "behind a READ sent twice");
    }

    /// READ 100's response 101 comes damaged. The requester sends 70 requests (104 to 173,
    /// acknowledged at once), resends 172 and 173 9 µs later and reads again from 101. The
    /// responder's answers to the re-read all come damaged, from 6 µs on, 2 µs in all; two
    /// alike ACKs of 173 answer the resends behind them. The damaged responses make one run of
    /// READ responses, which the ACKs come behind: two duplicate ACKs, no copy. (A sweep at up
    /// to 8% damage found the second ACK read as the capture's copy. Were each damaged
    /// response a run of its own, the window would reach back only to the re-read, after the
    /// resends.)
    #[test]
    fn alike_acks_behind_responses_that_all_come_damaged_answer_resends() {
        let send = |psn, ts| rc(1, 2, 0x50, 0x04, psn, ts);
        let mut events = vec![read_req(100, 4096, 0)];
        events.extend(read_resps_damaged(100, 4, 1_000, 400, 101));
        events.extend((0..70).map(|k| send(104 + k, 2_500 + u64::from(k) * 10)));
        events.extend([
            ack(173, 3_500),
            send(172, 12_000),
            send(173, 12_100),
            read_req(101, 3072, 12_300),
            damaged(read_resp(0x0d, 101, 18_000)),
            damaged(read_resp(0x0e, 102, 19_000)),
            damaged(read_resp(0x0f, 103, 20_000)),
            ack(173, 21_000),
            ack(173, 21_200),
        ]);
        assert_duplicate_acks(&events, 2, "behind damaged responses");
    }

    /// Writes 100 to 102 are acknowledged at once; 101 and 102 are resent 20 µs later, and 400 ns
    /// after that CM's DREQ closes the connection (its requester's state sealed) while the
    /// answers are on their way: two alike ACKs of 102, 100 ns apart, answer the resends. Both
    /// are duplicate ACKs, no copy (a sweep at 2–3% damage found the second read as the
    /// capture's copy, the resends forgotten with the requester's state).
    #[test]
    fn alike_acks_after_a_dreq_answer_resends() {
        use rdmascope_wire::mad::CmDreq;
        let dreq = CmDreq {
            remote_qpn: 0x50,
            ..CmDreq::default()
        };
        let events = vec![
            write(100, 0),
            write(101, 100),
            write(102, 200),
            ack(102, 2_000),
            write(101, 20_000),
            write(102, 20_100),
            cm(1, 2, 20_500, CmMessage::Dreq(dreq)),
            ack(102, 30_000),
            ack(102, 30_100),
        ];
        assert_duplicate_acks(&events, 2, "after a DREQ");
    }

    /// READ 100's last response (103) comes damaged, and the requester reads it again 200 ns
    /// later, in a capture that holds every frame twice, 300 ns apart: the damaged response's
    /// copy comes after the re-read and before the re-read's copy. It is no new loss, so the
    /// re-read's copy is the capture's (one resend, as without the copies).
    #[test]
    fn a_damaged_response_s_copy_loses_nothing_more() {
        let events = vec![
            read_req(100, 4096, 0),
            read_resp(0x0d, 100, 1_000),
            read_resp(0x0e, 101, 1_400),
            read_resp(0x0e, 102, 1_800),
            damaged(read_resp(0x0f, 103, 2_200)),
            read_req(103, 1024, 2_400),
            read_resp(0x10, 103, 3_000),
        ];
        let retx = |events: &[Event]| {
            let r = run_timed(events);
            let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
            f.counters.retransmitted_packets
        };
        assert_eq!(retx(&events), 1);
        assert_eq!(retx(&held_twice(&events, 300)), 1);
    }

    /// Write 100 comes damaged; 101 and 102 follow 1 µs apart, the responder NAKs 100, and 103
    /// comes before the requester's pass, in a capture that holds every frame twice, each copy
    /// 300 ns after its frame. 103's copy comes right after it while the NAK is pending, but a
    /// NAK's pass begins at the PSN it names, so it is the capture's copy, not a resend (a
    /// sweep of such captures with 5% damage read it as one, and the flow's later copies went
    /// wrong from there).
    #[test]
    fn a_copy_beyond_a_pending_nak_s_psn_is_the_capture_s() {
        let events = vec![
            damaged(write(100, 0)),
            write(101, 1_000),
            write(102, 2_000),
            nak(100, 3_500),
            write(103, 4_000),
        ];
        let r = run_timed(&held_twice(&events, 300));
        let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
        assert_eq!(f.counters.retransmitted_packets, 0);
    }

    /// READ 100 asks for four 1 KiB responses and READ 104 for two; response 100 comes
    /// damaged (dropped by the requester), or not at all, and in a third case 104 comes
    /// damaged as well; in a fourth, damaged 100 is the first response of its flow. The
    /// requester reads both again 5 µs after it first asked, sooner than `DUP_NS`: re-reads
    /// that ask for lost responses, not the capture's copies. Copies of the re-read requests
    /// themselves are still the capture's.
    #[test]
    fn a_re_read_soon_after_the_first_ask_is_no_copy() {
        let read = read_req;
        let resp = read_resp;
        let bad = damaged;
        let events = vec![
            read(96, 4096, 0),
            resp(0x0d, 96, 300),
            resp(0x0e, 97, 400),
            resp(0x0e, 98, 500),
            resp(0x0f, 99, 600),
            read(100, 4096, 1_000),
            read(104, 2048, 1_100),
            bad(resp(0x0d, 100, 2_000)),
            resp(0x0e, 101, 2_900),
            resp(0x0e, 102, 3_800),
            resp(0x0f, 103, 4_700),
            resp(0x0d, 104, 5_300),
            resp(0x0f, 105, 5_700),
            read(100, 4096, 6_000),
            read(104, 2048, 6_100),
        ];
        for case in ["damaged", "missing", "both damaged", "damaged first"] {
            for copies in [false, true] {
                let mut events = events.clone();
                if copies {
                    events.insert(14, read(100, 4096, 6_010));
                    events.push(read(104, 2048, 6_110));
                }
                match case {
                    "missing" => drop(events.remove(7)),
                    "both damaged" => events[11] = bad(events[11].clone()),
                    // No READ before: the damaged response is its flow's first.
                    "damaged first" => drop(events.drain(..5)),
                    _ => {}
                }
                let r = run_timed(&events);
                let f = r.flows.iter().find(|f| f.dest_qp == 0x50).unwrap();
                let case = format!("{case}, copies: {copies}");
                assert_eq!(f.counters.retransmitted_packets, 2, "{case}");
                let dup = r.findings.iter().find(|f| f.code == "capture.duplicates");
                let frames = match case.as_str() {
                    c if c.starts_with("missing") => vec![14, 16],
                    c if c.starts_with("damaged first") => vec![10, 12],
                    _ => vec![15, 17],
                };
                assert_eq!(
                    dup.map(|d| d.frames.clone()),
                    copies.then_some(frames),
                    "{case}"
                );
            }
        }
    }

    /// READ 100's first response comes damaged and the requester reads it again; READ 102's
    /// response 103 comes damaged too, and the requester reads again from 103 before 105, the
    /// READ's last, came. The responder sends 100–101 and 103–105 again: 105 is within what
    /// the second re-read asked for (to its READ's end), so a resend, not the capture's copy
    /// of the 105 that came 4.6 µs before.
    #[test]
    fn a_second_re_read_reaches_to_its_own_read_s_end() {
        let read = read_req;
        let resp = read_resp;
        let bad = damaged;
        let events = [
            read(96, 4096, 0),
            resp(0x0d, 96, 100),
            resp(0x0e, 97, 200),
            resp(0x0e, 98, 300),
            resp(0x0f, 99, 400),
            read(100, 2048, 500),
            read(102, 4096, 600),
            bad(resp(0x0d, 100, 1_000)),
            resp(0x0f, 101, 1_900),
            read(100, 2048, 2_000),
            resp(0x0d, 102, 2_800),
            bad(resp(0x0e, 103, 11_000)),
            resp(0x0e, 104, 11_900),
            read(103, 3072, 12_000),
            resp(0x0f, 105, 12_800),
            resp(0x0d, 100, 13_800),
            resp(0x0f, 101, 14_700),
            resp(0x0d, 103, 15_600),
            resp(0x0e, 104, 16_500),
            resp(0x0f, 105, 17_400),
        ];
        let r = run_timed(&events);
        let f = r.flows.iter().find(|f| f.dest_qp == 0x51).unwrap();
        assert_eq!(
            (
                f.counters.retransmitted_packets,
                f.counters.gap_filled_packets
            ),
            (3, 2)
        );
        assert_no_copies(&r, "a second re-read");
    }

    /// A NAK that may not be retried ends the connection: it is cited under its own code, the
    /// connection is in the error state, and what the requester sent after the failed request
    /// (flushed, never answered) is no stall, however long the capture goes on.
    #[test]
    fn fatal_naks_end_the_connection() {
        let nak = |code: u8, psn, ts| Event {
            aeth: Some(Aeth::parse(&[0x60 | code, 0, 0, 1]).unwrap()),
            ..rc(2, 1, 0x10, 0x11, psn, ts)
        };
        let second = 2_000_000_000;
        let events = [
            rc(1, 2, 0x20, 0x0a, 100, 0),
            rc(2, 1, 0x10, 0x11, 100, 1_000),
            rc(1, 2, 0x20, 0x0a, 101, 2_000),
            rc(1, 2, 0x20, 0x0a, 102, 2_100),
            nak(2, 101, 3_000),
            rc(1, 2, 0x20, 0x0a, 103, 3_100),
            rc(3, 4, 0x30, 0x0a, 7, second),
            rc(4, 3, 0x31, 0x11, 7, second + 1_000),
        ];
        let r = run_timed(&events);
        let transport = |r: &report::Report| -> Vec<String> {
            let codes = r.findings.iter().map(|f| f.code.clone());
            codes.filter(|c| c.starts_with("transport.")).collect()
        };
        assert_eq!(transport(&r), ["transport.remote_access_error"]);
        assert_eq!(r.findings[0].frames, [5]);
        assert_eq!(r.totals.counters.naks.remote_access_error, 1);
        let states: Vec<_> = r.connections.iter().map(|c| c.state.as_str()).collect();
        assert_eq!(states, ["error", "active"]);
        for (code, name) in [
            (1, "transport.invalid_request"),
            (3, "transport.remote_operational_error"),
            (4, "transport.invalid_rd_request"),
            (9, "transport.invalid_rd_request"),
        ] {
            let mut an = Analyzer::new(Config::default());
            for e in [&events[0], &events[1], &nak(code, 101, 3_000)] {
                an.event(e);
            }
            assert_eq!(transport(&an.finish()), [name]);
        }
    }

    /// Go-back-N passes after ACK timeouts with nothing from the responder between them are
    /// the requester's retries: seven are the most a QP makes, and then it sends nothing new.
    /// A NAK between passes starts the count again, and a NAK that arrives while a pass goes
    /// on triggers the next pass.
    #[test]
    fn retries_in_a_row_are_counted() {
        let nak = |psn, ts| Event {
            aeth: Some(Aeth::parse(&[0x60, 0, 0, 1]).unwrap()),
            ..rc(2, 1, 0x10, 0x11, psn, ts)
        };
        let mut events = vec![rc(1, 2, 0x20, 0x0a, 100, 0), rc(2, 1, 0x10, 0x11, 100, 0)];
        events.extend([101, 102].map(|p| rc(1, 2, 0x20, 0x0a, p, 0)));
        // Seven passes over 101..=102, then a NAK and one pass more.
        for _ in 0..7 {
            events.extend([101, 102].map(|p| rc(1, 2, 0x20, 0x0a, p, 0)));
        }
        let seven = events.len();
        events.push(nak(101, 0));
        events.extend([101, 102].map(|p| rc(1, 2, 0x20, 0x0a, p, 0)));
        let row = |r: &report::Report| {
            let f = r.flows.iter().find(|f| f.dest_qp == 0x20).unwrap();
            (f.timeouts_in_a_row, f.counters.timeouts)
        };
        let has = |r: &report::Report| {
            r.findings
                .iter()
                .any(|f| f.code == "transport.retry_exceeded")
        };
        let r = run_numbered(&events[..seven - 2]);
        assert_eq!(row(&r), (6, 1));
        assert!(!has(&r));
        let r = run_numbered(&events);
        assert_eq!(row(&r), (7, 1));
        assert!(has(&r));
        // Seven passes, then a new request: the QP did not run out of retries (passes that a
        // capture's copies make look alike), whatever the count in a row.
        let mut on = events[..seven].to_vec();
        on.push(rc(1, 2, 0x20, 0x0a, 103, 0));
        let went_on = run_numbered(&on);
        assert_eq!(row(&went_on).0, 7);
        assert!(!has(&went_on));
        // The requester's QP failed: the inferred connection is in the error state.
        let states: Vec<&str> = r.connections.iter().map(|c| c.state.as_str()).collect();
        assert_eq!(states, ["error"]);
        assert_eq!(
            run_numbered(&events[..seven - 2]).connections[0].state,
            "active"
        );
        // The capture running on for seconds: a QP that gave up is no stall.
        let mut long = events[..seven].to_vec();
        long.push(Event {
            meta: PacketMeta {
                ts_ns: 5_000_000_000,
                ..long[0].meta
            },
            ..rc(3, 4, 0x30, 0x0a, 7, 0)
        });
        let mut an = Analyzer::new(Config::default());
        for (i, e) in long.iter().enumerate() {
            let ts_ns = e.meta.ts_ns.max(10_000 * i as u64);
            an.event(&Event {
                meta: PacketMeta { ts_ns, ..e.meta },
                ..e.clone()
            });
        }
        let codes: Vec<String> = an.finish().findings.into_iter().map(|f| f.code).collect();
        assert!(
            codes.contains(&"transport.retry_exceeded".to_string()),
            "{codes:?}"
        );
        assert!(!codes.contains(&"transport.stall".to_string()), "{codes:?}");
        let f = r
            .findings
            .iter()
            .find(|f| f.code == "transport.retry_exceeded")
            .unwrap();
        assert_eq!(f.frames, [5, 7, 9, 11, 13]);
        // A NAK that names a PSN ahead of a pass going on: the requester jumps there, a pass
        // of the NAK's; the pass after it, with nothing between, is a retry.
        let mut events = vec![rc(1, 2, 0x20, 0x0a, 100, 0), rc(2, 1, 0x10, 0x11, 100, 0)];
        events.extend([101, 102, 103, 104, 105].map(|p| rc(1, 2, 0x20, 0x0a, p, 0)));
        events.push(nak(101, 0));
        events.extend([101, 102].map(|p| rc(1, 2, 0x20, 0x0a, p, 0)));
        events.push(nak(104, 0));
        events.extend([104, 105, 104, 105].map(|p| rc(1, 2, 0x20, 0x0a, p, 0)));
        assert_eq!(row(&run_numbered(&events)).0, 1);
        // A READ of three PSNs (101..=103) resent in a pass: the next request, 104, is the
        // pass going on, not a jump to the PSN a NAK named.
        let read = |p| Event {
            ext: ExtWord::DmaLen(3000),
            ..rc(1, 2, 0x20, 0x0c, p, 0)
        };
        let mut events = vec![rc(1, 2, 0x20, 0x0a, 100, 0), rc(2, 1, 0x10, 0x11, 100, 0)];
        events.extend([read(101), rc(1, 2, 0x20, 0x0a, 104, 0)]);
        events.extend([rc(1, 2, 0x20, 0x0a, 105, 0), nak(104, 0)]);
        events.extend([read(101), rc(1, 2, 0x20, 0x0a, 104, 0)]);
        events.push(rc(1, 2, 0x20, 0x0a, 105, 0));
        assert_eq!(row(&run_numbered(&events)).0, 0);
    }

    /// A CM message from `src` to `dst` (UD SEND only to QP 1).
    fn cm(src: u8, dst: u8, ts: u64, m: CmMessage) -> Event {
        Event {
            cm: Some(Box::new(m)),
            ..rc(src, dst, 1, 0x64, 0, ts)
        }
    }

    /// An IPv4 node prints as `Ipv4Addr` does, padding and precision included.
    #[test]
    fn ipv4_nodes_print_as_ipv4addr_does() {
        for a in [
            [0, 0, 0, 0],
            [10, 0, 0, 1],
            [192, 168, 100, 255],
            [1, 22, 250, 9],
        ] {
            let ip = std::net::Ipv4Addr::from(a);
            assert_eq!(Node::V4(a).to_string(), ip.to_string());
            assert_eq!(format!("{:>16}|", Node::V4(a)), format!("{ip:>16}|"));
            assert_eq!(format!("{:.3}", Node::V4(a)), format!("{ip:.3}"));
        }
        for x in 0..=255u8 {
            let a = [x, x.wrapping_mul(7), 255 - x, x / 3];
            assert_eq!(
                Node::V4(a).to_string(),
                std::net::Ipv4Addr::from(a).to_string()
            );
        }
    }

    /// CM connects node 1's QP `qpns.0` and node 2's QP `qpns.1` (REQ at 1 ns, REP at 2 ns) with
    /// `retry_count` in the REQ and `rnr_retry` in the REP (node 1's RNR retry count).
    fn connect(an: &mut Analyzer, qpns: (u32, u32), retry_count: u8, rnr_retry: u8) {
        use rdmascope_wire::mad::{CmRep, CmReq};
        let req = CmReq {
            local_comm_id: 7,
            local_qpn: qpns.0,
            retry_count,
            rnr_retry_count: 7,
            ..CmReq::default()
        };
        let rep = CmRep {
            local_comm_id: 8,
            remote_comm_id: 7,
            local_qpn: qpns.1,
            rnr_retry_count: rnr_retry,
            ..CmRep::default()
        };
        an.event(&cm(1, 2, 1, CmMessage::Req(req)));
        an.event(&cm(2, 1, 2, CmMessage::Rep(rep)));
    }

    /// Feeds `events` after [`connect`]'s two frames: numbered from 3, 1 µs apart from 10 ns.
    fn feed_after_connect(an: &mut Analyzer, events: &[Event]) {
        for (i, e) in events.iter().enumerate() {
            an.event(&Event {
                meta: PacketMeta {
                    number: i as u64 + 3,
                    ts_ns: 10_000 * i as u64 + 10,
                    ..e.meta
                },
                ..e.clone()
            });
        }
    }

    /// RNR NAKs in a row beyond the RNR retry count CM gave the requester end its QP; 7 (or no
    /// CM) retries forever, and an ACK between them starts the count again.
    #[test]
    fn rnr_retries_beyond_the_cm_count_are_found() {
        let rnr = |psn, ts| Event {
            aeth: Some(Aeth::parse(&[0x20 | 14, 0, 0, 1]).unwrap()),
            ..rc(2, 1, 0x10, 0x11, psn, ts)
        };
        let run = |rnr_retry: Option<u8>, naks: usize, ack_between: bool| {
            let mut an = Analyzer::new(Config::default());
            if let Some(r) = rnr_retry {
                connect(&mut an, (0x10, 0x20), 7, r);
            }
            let mut events = vec![rc(1, 2, 0x20, 0x04, 100, 0), rc(2, 1, 0x10, 0x11, 100, 0)];
            for i in 0..naks {
                events.push(rc(1, 2, 0x20, 0x04, 101, 0));
                events.push(rnr(101, 0));
                if ack_between && i == 1 {
                    events.push(rc(2, 1, 0x10, 0x11, 100, 0));
                }
            }
            feed_after_connect(&mut an, &events);
            let r = an.finish();
            let n = r
                .flows
                .iter()
                .find(|f| f.dest_qp == 0x20)
                .map(|f| f.rnr_naks_in_a_row);
            let found = r
                .findings
                .iter()
                .any(|f| f.code == "transport.rnr_retry_exceeded");
            (n, found)
        };
        assert_eq!(run(Some(2), 3, false), (Some(3), true));
        assert_eq!(run(Some(2), 2, false), (Some(2), false));
        assert_eq!(run(Some(2), 4, true), (Some(2), false));
        assert_eq!(run(Some(7), 9, false), (Some(9), false));
        assert_eq!(run(None, 9, false), (Some(9), false));
    }

    /// A connection that CM set up retries as often as its REQ says: three passes in a row
    /// exhaust a retry count of 3, which seven take without CM.
    #[test]
    fn the_cm_retry_count_is_the_limit() {
        let run = |retry_count: Option<u8>| {
            let mut an = Analyzer::new(Config::default());
            if let Some(retry_count) = retry_count {
                connect(&mut an, (0x10, 0x20), retry_count, 7);
            }
            let mut events = vec![rc(1, 2, 0x20, 0x0a, 100, 0), rc(2, 1, 0x10, 0x11, 100, 0)];
            for _ in 0..4 {
                events.extend([101, 102].map(|p| rc(1, 2, 0x20, 0x0a, p, 0)));
            }
            feed_after_connect(&mut an, &events);
            let r = an.finish();
            let state = r.connections[0].state.clone();
            let f = r
                .findings
                .into_iter()
                .find(|f| f.code == "transport.retry_exceeded");
            (f.map(|f| f.evidence), state)
        };
        let (got, state) = run(Some(3));
        let got = got.expect("retry count 3, 3 passes");
        assert!(got[0].ends_with("retry count 3 (the CM REQ's)"), "{got:?}");
        // The QP failed: the connection CM set up is in the error state.
        assert_eq!(state, "error");
        assert_eq!(run(None), (None, "active".to_string()));
        assert_eq!(run(Some(7)), (None, "replied".to_string()));
        assert_eq!(run(Some(0)), (None, "replied".to_string()));
    }

    /// CM paired node 1's QP 0x20 with node 2's QP 0x30. The QP then talks to node 3 (its QPN
    /// reused, no CM captured): node 3's ACKs answer node 1's requests to node 3, not the
    /// requests CM's pair sent to node 2.
    #[test]
    fn cm_pairs_only_the_nodes_it_saw() {
        let mut an = Analyzer::new(Config::default());
        connect(&mut an, (0x20, 0x30), 0, 7);
        an.event(&rc(1, 2, 0x30, 0x04, 100, 10)); // RC SEND only, to node 2
        an.event(&rc(2, 1, 0x20, 0x11, 100, 20)); // its ACK
        an.event(&rc(1, 3, 0x40, 0x04, 500, 30)); // RC SEND only, to node 3
        an.event(&rc(3, 1, 0x20, 0x11, 500, 45)); // node 3's ACK, to QP 0x20 again
        let r = an.finish();
        let lat = |dst: &str, qp: u32| {
            let f = r.flows.iter().find(|f| f.dst == dst && f.dest_qp == qp);
            f.map(|f| (f.ack_latency_ns.count, f.ack_latency_ns.max))
        };
        assert_eq!(lat("10.0.0.2", 0x30), Some((1, 10)));
        assert_eq!(lat("10.0.0.3", 0x40), Some((1, 15)));
    }

    /// A NAK acknowledges the requests before the PSN it names (a PSN sequence error NAK names
    /// the one expected, any other, RNR NAKs too, the one refused): their ACK latency ends at
    /// the NAK, not at the ACK after the retransmission. So does a READ response, in the
    /// class's CDF as well.
    #[test]
    fn naks_and_read_responses_acknowledge_the_requests_before() {
        let nak = |syndrome: u8, psn, ts| Event {
            aeth: Some(Aeth::parse(&[syndrome, 0, 0, 1]).unwrap()),
            ..rc(2, 1, 0x10, 0x11, psn, ts)
        };
        let run = |events: &[Event]| {
            let mut an = Analyzer::new(Config::default());
            for e in events {
                an.event(e);
            }
            let r = an.finish();
            let f = r.flows.iter().find(|f| f.dst == "10.0.0.2").unwrap();
            let cdf: u64 = r.timeline.ack_latency_cdf.iter().map(|c| c.count).sum();
            (f.ack_latency_ns.count, f.ack_latency_ns.max, cdf)
        };
        let sent = [100, 101, 102].map(|p| rc(1, 2, 0x20, 0x0a, p, u64::from(p - 99) * 10));
        // PSN sequence error at 102 (ts 45): 100 and 101 answered in 35 and 25 ns.
        let mut events = sent.to_vec();
        events.push(nak(0x60, 102, 45));
        assert_eq!(run(&events), (2, 35, 2));
        // The resend of 102 and its ACK (ts 100): 102 waited 70 ns, not 100 and 101 90 and 80.
        events.extend([
            rc(1, 2, 0x20, 0x0a, 102, 60),
            rc(2, 1, 0x10, 0x11, 102, 100),
        ]);
        assert_eq!(run(&events), (3, 70, 3));
        // A remote access error at 102: 100 and 101 were done, 102 is never answered.
        let mut events = sent.to_vec();
        events.push(nak(0x62, 102, 45));
        assert_eq!(run(&events), (2, 35, 2));
        // An RNR NAK for 102: the receiver took 100 and 101.
        let mut events = sent.to_vec();
        events.push(nak(0x20, 102, 45));
        assert_eq!(run(&events), (2, 35, 2));
        // A READ of PSN 103 answered at ts 80: the writes before it are acknowledged too.
        let mut events = sent.to_vec();
        events.extend([rc(1, 2, 0x20, 0x0c, 103, 50), rc(2, 1, 0x10, 0x10, 103, 80)]);
        assert_eq!(run(&events), (3, 70, 3));
    }

    /// An offloaded sniffer's capture (the source MAC changes on every frame, every ICRC
    /// fails) held twice is still the sniffer's: a copy has its first's MAC, so the copies are
    /// left out of the count of frames whose MAC changed.
    #[test]
    fn a_sniffer_capture_held_twice_is_still_unverifiable() {
        let run = |copied: bool| {
            let mut an = Analyzer::new(Config::default());
            for psn in 0..10u32 {
                let e = Event {
                    eth_src: u64::from(psn) + 1,
                    icrc: Some(IcrcStatus::Bad),
                    ..rc(1, 2, 0x20, 0x0a, 100 + psn, 10_000 * u64::from(psn + 1))
                };
                an.event(&e);
                if copied {
                    let mut c = e.clone();
                    c.meta.ts_ns += 300;
                    an.event(&c);
                }
            }
            let r = an.finish();
            let f = r.flows.iter().find(|f| f.dest_qp == 0x20).unwrap();
            (f.counters.icrc.bad, f.counters.icrc.unverifiable)
        };
        assert_eq!(run(false), (0, 10));
        assert_eq!(run(true), (0, 20));
    }

    /// Two CNPs to one QP 300 ns apart are two CNPs, unless the capture holds each packet of
    /// the data flow they throttle twice: then the second is the first's copy, counted as a
    /// packet and a CNP but in no interval.
    #[test]
    fn a_cnp_is_a_copy_only_where_the_data_is_copied() {
        let run = |copied: bool| {
            let mut an = Analyzer::new(Config::default());
            let mut ts = 1_000;
            for psn in 100..110 {
                an.event(&rc(1, 2, 0x20, 0x0a, psn, ts));
                if copied {
                    an.event(&rc(1, 2, 0x20, 0x0a, psn, ts + 300));
                }
                an.event(&rc(2, 1, 0x10, 0x11, psn, ts + 2_000));
                if copied {
                    an.event(&rc(2, 1, 0x10, 0x11, psn, ts + 2_300));
                }
                ts += 10_000;
            }
            an.event(&rc(2, 1, 0x10, 0x81, 0, ts));
            an.event(&rc(2, 1, 0x10, 0x81, 0, ts + 300));
            an.event(&rc(2, 1, 0x10, 0x81, 0, ts + 50_000));
            let dups = an.duplicates.0;
            let r = an.finish();
            let f = r.flows.iter().find(|f| f.dest_qp == 0x10).unwrap();
            (f.counters.cnp, f.cnp_interval_ns.count, dups)
        };
        assert_eq!(run(false), (3, 2, 0));
        assert_eq!(run(true), (3, 1, 21));
    }

    /// ACKs that answer no request in the capture look for their requester rarely: again when a
    /// flow joins the node pair or carries its first request, else after 1, 2, 4, … skipped
    /// ACKs; so ACKs that come before their requests still pair with them at once.
    #[test]
    fn acks_without_requests_look_for_them_rarely() {
        let mut an = Analyzer::new(Config::default());
        an.event(&rc(1, 2, 0x50, 0x04, 9_000_000, 1)); // far from every ACK's PSN
        for ts in 2..1002 {
            // Answers nothing captured (10 µs apart: no copies of one another).
            an.event(&rc(2, 1, 0x20, 0x11, 100, 10_000 * ts));
        }
        // The first, then after 1, 2, 4, … 512 skipped ACKs.
        assert_eq!(an.scans, 11);
        // A flow from node 1 to node 2 that carries no request yet (a CNP), then its request.
        let t0 = 20_000_000;
        an.event(&rc(1, 2, 0x30, 0x81, 0, t0 + 1010));
        an.event(&rc(2, 1, 0x20, 0x11, 100, t0 + 1011));
        an.event(&rc(1, 2, 0x30, 0x04, 101, t0 + 1020));
        an.event(&rc(2, 1, 0x20, 0x11, 101, t0 + 1024)); // its ACK pairs the two flows
        for ts in 1030..1100 {
            an.event(&rc(2, 1, 0x20, 0x11, 101, t0 + 10_000 * ts));
        }
        // The CNP's (it looks for the flow it throttles), one at the new flow, one at the request.
        assert_eq!(an.scans, 14);
        let r = an.finish();
        let f = r
            .flows
            .iter()
            .find(|f| f.dst == "10.0.0.2" && f.dest_qp == 0x30);
        let lat = f.map(|f| (f.ack_latency_ns.count, f.ack_latency_ns.max));
        assert_eq!(lat, Some((1, 4)));
    }

    /// Requester searches are budgeted: requests on ever new QPs from node 1 to node 2, each
    /// answered by an ACK (then a CNP) on a new QP that matches none of them, would make every
    /// answer search all the flows before it. The budget (made 64 times smaller here) stops
    /// that, says so, and is not felt by a few thousand such answers.
    #[test]
    fn requester_searches_stay_within_their_budget() {
        let run = |n: u32, opcode: u8| {
            let mut an = Analyzer::new(Config::default());
            an.search_base = 1 << 22;
            for i in 0..n {
                let ts = u64::from(i) * 2;
                an.event(&rc(1, 2, 0x1000 + i, 0x04, i * 8, ts));
                an.event(&rc(2, 1, 0x80_0000 + i, opcode, 0x80_0000 + i * 8, ts + 1));
            }
            assert!(an.searched <= an.search_base + SEARCH_PER_PACKET * an.capture.packets);
            let skipped = an.searches_skipped;
            let r = an.finish();
            let found = r.findings.iter().find(|f| f.code == "capture.search_limit");
            assert_eq!(found.is_some(), skipped > 0);
            if let Some(f) = found {
                // The answers' flows, from node 2 to node 1.
                assert_eq!(f.flows.len(), SKIPPED_NAMED);
                assert!(f
                    .flows
                    .iter()
                    .all(|n| n.starts_with("10.0.0.2 > 10.0.0.1 qp 0x8")));
            }
            assert_eq!(r.capture.skipped_searches, skipped);
            skipped
        };
        for opcode in [0x11, 0x81] {
            assert_eq!(run(2_000, opcode), 0);
            // Searching all would examine 200 million flows; about 3,000 answers search them
            // before the budget is spent, then one in a few dozen.
            let skipped = run(20_000, opcode);
            assert!((15_000..18_000).contains(&skipped), "{skipped}");
        }
    }

    /// A connection stalls when a request waits for its ACK at least a second while the
    /// capture goes on, after the responder had answered before; not when the capture ends
    /// sooner, nor when nothing was ever answered (the other direction may not be captured).
    #[test]
    fn unanswered_requests_stall_their_connection() {
        const S: u64 = 1_000_000_000;
        let stalls = |events: &[Event]| {
            let mut an = Analyzer::new(Config::default());
            events.iter().for_each(|e| an.event(e));
            let r = an.finish();
            let f: Vec<_> = r
                .findings
                .iter()
                .filter(|f| f.code == "transport.stall")
                .collect();
            f.first().map(|f| (f.frames.clone(), f.flows.clone()))
        };
        let answered = [rc(1, 2, 0x30, 0x04, 100, 10), rc(2, 1, 0x30, 0x11, 100, 20)];
        let send = rc(1, 2, 0x30, 0x04, 101, 30);
        let later = |ts| rc(5, 6, 0x50, 0x04, 7, ts);
        let mut events = answered.to_vec();
        events.extend([send.clone(), later(30 + S)]);
        assert_eq!(
            stalls(&events),
            Some((
                vec![30],
                vec!["10.0.0.1 > 10.0.0.2 qp 0x000030".to_string()]
            ))
        );
        // The capture ends too soon after the SEND to call it a stall.
        events.pop();
        events.push(later(30 + S / 2));
        assert_eq!(stalls(&events), None);
        // Acknowledged after all.
        events.pop();
        events.extend([rc(2, 1, 0x30, 0x11, 101, 40), later(30 + S)]);
        assert_eq!(stalls(&events), None);
        // Nothing on this connection was ever answered: no stall is claimed, but no response.
        assert_eq!(stalls(&[send.clone(), later(30 + S)]), None);
        let mut an = Analyzer::new(Config::default());
        [send, later(30 + S)].iter().for_each(|e| an.event(e));
        let codes: Vec<String> = an.finish().findings.into_iter().map(|f| f.code).collect();
        assert!(
            codes.contains(&"transport.no_response".to_string()),
            "{codes:?}"
        );
    }

    /// A stall on a connection where the capture itself dropped packets (an ACK moved past a
    /// PSN it never showed) says the missing answers may be the capture's.
    #[test]
    fn a_stall_where_the_capture_dropped_packets_says_so() {
        const S: u64 = 1_000_000_000;
        let mut an = Analyzer::new(Config::default());
        let events = [
            rc(1, 2, 0x30, 0x04, 100, 10),
            rc(1, 2, 0x30, 0x04, 101, 11),
            rc(1, 2, 0x30, 0x04, 103, 13),
            rc(2, 1, 0x30, 0x11, 103, 20),
            rc(1, 2, 0x30, 0x04, 104, 30),
            rc(5, 6, 0x50, 0x04, 7, 30 + S),
        ];
        events.iter().for_each(|e| an.event(e));
        let r = an.finish();
        let f = r
            .findings
            .iter()
            .find(|f| f.code == "transport.stall")
            .expect("a stall");
        assert!(
            f.evidence
                .iter()
                .any(|e| e.ends_with("the capture itself dropped 1 packet on this connection")),
            "{:?}",
            f.evidence
        );
        assert!(f.advice.contains("the capture's own drops"), "{}", f.advice);
    }

    /// A PSN missing from the capture but acknowledged, with nothing NAKed or resent, was
    /// dropped by the capture, not the network; one never acknowledged is loss.
    #[test]
    fn acknowledged_missing_psns_are_capture_drops() {
        let codes = |events: &[Event]| {
            let mut an = Analyzer::new(Config::default());
            events.iter().for_each(|e| an.event(e));
            let r = an.finish();
            let c: Vec<String> = r.findings.iter().map(|f| f.code.clone()).collect();
            (r.totals.counters.missing_packets, c)
        };
        let sent: Vec<Event> = [100, 101, 103, 104]
            .iter()
            .map(|&p| rc(1, 2, 0x30, 0x04, p, u64::from(p)))
            .collect();
        let ack = |psn, ts| rc(2, 1, 0x30, 0x11, psn, ts);
        let mut events = sent.clone();
        events.push(ack(103, 200));
        let (missing, c) = codes(&events);
        assert_eq!(missing, 1);
        assert!(c.contains(&"capture.drops".to_string()), "{c:?}");
        assert!(!c.contains(&"transport.loss".to_string()), "{c:?}");
        // Acknowledged only up to 101: nothing shows that 102 arrived.
        let mut events = sent.clone();
        events.push(ack(101, 200));
        let (_, c) = codes(&events);
        assert!(c.contains(&"transport.loss".to_string()), "{c:?}");
        assert!(!c.contains(&"capture.drops".to_string()), "{c:?}");
        // Resent after all: loss, whatever the ACKs say.
        let mut events = sent;
        events.extend([rc(1, 2, 0x30, 0x04, 101, 150), ack(104, 200)]);
        let (_, c) = codes(&events);
        assert!(c.contains(&"transport.loss".to_string()), "{c:?}");
        assert!(!c.contains(&"capture.drops".to_string()), "{c:?}");
    }

    /// Feeding packets in reused batches of uneven sizes gives the report feeding them one at
    /// a time gives (the capture totals are summed per batch, the rest per event).
    #[test]
    fn batches_report_as_single_events_do() {
        use rdmascope_synth::{generate, GenOptions, Scenario, Sink};
        struct Frames(Vec<(u64, u32, Vec<u8>)>);
        impl Sink for Frames {
            fn frame(&mut self, _: u32, ts: u64, orig_len: u32, d: &[u8]) -> std::io::Result<()> {
                self.0.push((ts, orig_len, d.to_vec()));
                Ok(())
            }
        }
        let opts = DecodeOptions::default();
        for scenario in [Scenario::Mixed, Scenario::Lossy, Scenario::PfcStorm] {
            let mut f = Frames(Vec::new());
            let o = GenOptions {
                scenario,
                packets: Some(4000),
                snaplen: 128,
                ..GenOptions::default()
            };
            generate(&o, &mut f).unwrap();
            let meta = |i: usize, &(ts, orig_len, _): &(u64, u32, Vec<u8>)| PacketMeta {
                number: i as u64 + 1,
                ts_ns: ts,
                orig_len,
                if_id: 0,
                if_speed: None,
            };
            let mut one = Analyzer::new(Config::default());
            for (i, fr) in f.0.iter().enumerate() {
                one.event(&Event::decode(meta(i, fr), 1, &fr.2, fr.1, &opts));
            }
            let mut fed = Analyzer::new(Config::default());
            let mut batch = Batch::default();
            let mut i = 0;
            for size in [7, 1, 300, 2, 1000].into_iter().cycle() {
                if i == f.0.len() {
                    break;
                }
                batch.clear();
                for fr in f.0.iter().skip(i).take(size) {
                    batch.decode(meta(i, fr), 1, &fr.2, fr.1, &opts);
                    i += 1;
                }
                fed.feed(&mut batch);
            }
            let json = |a: Analyzer| serde_json::to_string(&a.finish()).unwrap();
            assert_eq!(json(fed), json(one), "{scenario:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// A few samples summarise exactly as a histogram fed them does, small and large values
        /// and repeats alike.
        #[test]
        fn few_samples_summarise_as_a_histogram(
            v in proptest::collection::vec(
                proptest::prop_oneof![1u64..50, 1u64..100_000, 1u64..=MAX_LATENCY_NS],
                1..=FEW,
            ),
        ) {
            let mut h = latency_histogram();
            for &x in &v {
                h.saturating_record(x);
            }
            proptest::prop_assert_eq!(summarise_few(&v), summarise(&h));
        }
    }

    /// A latency summarises as a histogram fed the same samples would, below, at and above
    /// the number kept as samples, and keeps its summary when sealed.
    #[test]
    fn latency_few_then_histogram() {
        let mut x = 9u64;
        for n in [0, 1, 2, 5, FEW - 1, FEW, FEW + 1, 3 * FEW, 1000] {
            let mut lat = Lat::Empty;
            let mut h = latency_histogram();
            for _ in 0..n {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let v = match x >> 62 {
                    0 => 0,
                    1 => u64::MAX,
                    _ => (x >> 20) % 5_000_000,
                };
                lat.record(v);
                h.saturating_record(v.clamp(1, MAX_LATENCY_NS));
            }
            let want = summarise(&h);
            assert_eq!(lat.summary(), want, "{n} samples");
            lat.seal();
            assert!(matches!(lat, Lat::Done(_) | Lat::Empty), "{n} samples");
            assert_eq!(lat.summary(), want, "{n} samples, sealed");
            // A sealed summary takes no more samples (an empty latency has none to seal).
            if n > 0 {
                lat.record(7);
                assert_eq!(lat.summary(), want, "{n} samples, sealed, then one more");
            }
        }
    }

    /// Message sizes by power of two, as a sorted map of the rounded-up sizes would count them.
    #[test]
    fn message_sizes() {
        let mut m = MsgStats::default();
        let mut model = std::collections::BTreeMap::new();
        let mut x = 5u64;
        for _ in 0..3000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let size = match x >> 61 {
                0 => 0,
                1 => 1 << (x % 40),
                _ => (x >> 20) % (1 << (x % 34)),
            };
            m.add_size(size);
            *model.entry(size.max(1).next_power_of_two()).or_insert(0u64) += 1;
        }
        m.add_size(u64::MAX);
        *model.entry(1 << 63).or_insert(0) += 1;
        let got: Vec<(u64, u64)> = m.report().size_histogram.iter().collect();
        assert_eq!(got, model.into_iter().collect::<Vec<_>>());
    }

    /// Opcode counts equal a plain map's, in order of first appearance, with opcode 0 and
    /// opcodes of other transports than the first one's.
    #[test]
    fn opcode_counts() {
        let mut c = OpCounts::default();
        let mut model: Vec<(u8, u64)> = Vec::new();
        let mut x = 3u64;
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let op = [0u8, 1, 2, 4, 6, 10, 0x11, 0x81, 0xff, 0x64, 0x0d][(x >> 40) as usize % 11];
            c.count(op);
            match model.iter_mut().find(|(o, _)| *o == op) {
                Some((_, n)) => *n += 1,
                None => model.push((op, 1)),
            }
        }
        assert_eq!(c.iter().collect::<Vec<_>>(), model);
        assert_eq!(OpCounts::default().iter().count(), 0);
    }

    /// Each kind keeps its first `SAMPLES` frames, in order, whatever the other kinds hold.
    #[test]
    fn cited_frames_per_kind() {
        let kinds = [
            Cite::Retx,
            Cite::Nak,
            Cite::Rnr,
            Cite::Ce,
            Cite::NotEct,
            Cite::Timeout,
            Cite::Bad,
            Cite::Reorder,
            Cite::InvalidRequest,
            Cite::RemoteAccess,
            Cite::RemoteOperational,
            Cite::InvalidRd,
            Cite::Retry,
        ];
        let (mut c, mut full) = (Cited::default(), 0);
        let mut model: Vec<Vec<u64>> = vec![Vec::new(); kinds.len()];
        let mut n = 1u64;
        for round in 0..9 {
            for (k, &kind) in kinds.iter().enumerate() {
                if (round + k) % 3 == 0 {
                    continue;
                }
                // Large frame numbers too: the kind tag must not eat into them.
                let frame = n + (1 << 50) * (k as u64 % 2);
                c.add(&mut full, kind, frame);
                if model[k].len() < SAMPLES {
                    model[k].push(frame);
                }
                n += 1;
            }
        }
        for (k, &kind) in kinds.iter().enumerate() {
            assert_eq!(c.of(kind).collect::<Vec<_>>(), model[k], "{kind:?}");
        }
        assert_eq!(c.frames.map_or(0, |f| f.len()), kinds.len() * SAMPLES);
    }

    /// The dense reference: one array, every bucket stored.
    fn dense_model(ops: &[(usize, u64)], halve_at: &[usize]) -> Vec<u64> {
        let mut v = Vec::new();
        for (k, &(i, by)) in ops.iter().enumerate() {
            if halve_at.contains(&k) {
                merge(&mut v);
            }
            let shift = halve_at.iter().filter(|&&h| h <= k).count();
            bump(&mut v, i >> shift, by);
        }
        v
    }

    /// Pause time spread as episodes close (through timeline widenings, long episodes, time
    /// going back) equals spreading every episode at the end over the final buckets.
    #[test]
    fn pause_timeline_equals_spreading_every_episode_at_the_end() {
        // At 1 Mb/s a pause quantum is 512 µs: episodes reach far past the capture's end.
        for link in [1_000_000_000, 1_000_000] {
            pause_timeline_at(link);
        }
    }

    fn pause_timeline_at(link: u64) {
        let mut a = Analyzer::new(Config {
            link_bps: Some(link),
            ..Config::default()
        });
        let mut x = 99u64;
        let mut rnd = move |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let mut ts = 1_000_000u64;
        for k in 0..60_000u64 {
            ts += rnd(40_000);
            if k % 997 == 0 {
                ts -= rnd(30_000).min(ts);
            }
            let mut e = Event::default();
            e.meta.number = k + 1;
            e.meta.ts_ns = ts;
            if rnd(3) == 0 {
                let mut quanta = [0u16; 8];
                for q in quanta.iter_mut() {
                    *q = match rnd(4) {
                        0 => 0,
                        1 => 0xffff,
                        _ => rnd(3000) as u16,
                    };
                }
                let src = [2, 0, 0, 0, 0, rnd(3) as u8];
                let mc = if rnd(5) == 0 {
                    MacControl::Pause { quanta: quanta[0] }
                } else {
                    MacControl::Pfc {
                        enable: rnd(256) as u8,
                        quanta,
                    }
                };
                e.link = Some(Box::new(LinkFrame::MacControl(src, mc)));
            }
            a.event(&e);
        }
        a.end_pauses();
        let start = a.tl.start.unwrap_or(0);
        let width = a.tl.width.max(1);
        let len = a.tl.len.min(MAX_BUCKETS);
        let mut want: BTreeMap<([u8; 6], u8), Vec<u64>> = BTreeMap::new();
        for &(m, p, s, e) in &a.episodes_log {
            let v = want.entry((m, p)).or_insert_with(|| vec![0; len]);
            let mut t = s;
            while t < e && len > 0 {
                let b = (t.saturating_sub(start) / width) as usize;
                if b >= len {
                    break;
                }
                let until = e.min(start + (b as u64 + 1) * width);
                v[b] += until - t;
                t = until;
            }
        }
        assert!(
            a.episodes_log.len() > 1000 && width > 1000,
            "{}",
            a.episodes_log.len()
        );
        let got: BTreeMap<([u8; 6], u8), Vec<u64>> = a
            .pauses
            .iter()
            .map(|(k, v)| {
                let mut v = v.clone();
                v.resize(len, 0);
                (*k, v)
            })
            .collect();
        assert_eq!(got, want);
    }

    /// ECN and ICRC counts carry past 32 bits into the wide words, each into its own.
    #[test]
    fn packet_counts_carry_past_32_bits() {
        let key = (Node::V4([10, 0, 0, 1]), Node::V4([10, 0, 0, 2]), 0x11);
        let mut f = FlowState::new(key, 5);
        f.ecn[3] = u32::MAX - 1;
        f.icrc[1] = u32::MAX;
        for _ in 0..3 {
            FlowState::count4(&mut f.ecn, &mut f.wide, 0, 3);
            FlowState::count4(&mut f.icrc, &mut f.wide, 4, 1);
        }
        FlowState::count4(&mut f.ecn, &mut f.wide, 0, 0);
        assert_eq!(f.ecn(3), u64::from(u32::MAX) + 2);
        assert_eq!(f.icrc(1), u64::from(u32::MAX) + 3);
        assert_eq!((f.ecn(0), f.ecn(1), f.icrc(0), f.icrc(3)), (1, 0, 0, 0));
    }

    /// A count carries past 32 bits, for the flow's transport and for another.
    #[test]
    fn op_counts_carry_past_32_bits() {
        let mut c = OpCounts::default();
        for op in [0x06, 0x81, 0x07] {
            c.count(op);
        }
        c.low[6] = u32::MAX - 1;
        for _ in 0..3 {
            c.count(0x06);
            c.count(0x81);
        }
        let four_g = u64::from(u32::MAX) + 1;
        assert_eq!(
            c.iter().collect::<Vec<_>>(),
            [(0x06, four_g + 1), (0x81, 4), (0x07, 1)]
        );
    }

    #[test]
    fn op_counts_keep_every_opcode_in_order() {
        let mut c = OpCounts::default();
        let ops = [4u8, 4, 6, 7, 8, 9, 10, 11, 12, 4, 12, 13, 6];
        for &o in &ops {
            c.count(o);
        }
        let got: Vec<(u8, u64)> = c.iter().collect();
        assert_eq!(
            got,
            [
                (4, 3),
                (6, 2),
                (7, 1),
                (8, 1),
                (9, 1),
                (10, 1),
                (11, 1),
                (12, 2),
                (13, 1)
            ]
        );
    }

    #[test]
    fn series_matches_a_dense_array_through_halvings_and_time_going_back() {
        // Pseudo-random buckets and sizes, some going backwards in time.
        let mut x = 12345u64;
        let mut ops = Vec::new();
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let bucket = ((x >> 33) % 700) as usize;
            ops.push((bucket, (x >> 20) % 1500 + 1));
        }
        ops.sort_by_key(|&(b, _)| b);
        ops.swap(100, 900);
        ops.swap(1500, 10);
        for halve_at in [vec![], vec![5], vec![300, 1200, 1900], vec![0, 1, 2]] {
            let want = dense_model(&ops, &halve_at);
            let mut s = Series::default();
            for (k, &(i, by)) in ops.iter().enumerate() {
                if halve_at.contains(&k) {
                    s.halve();
                }
                let shift = halve_at.iter().filter(|&&h| h <= k).count();
                s.add(i >> shift, by);
            }
            assert_eq!(s.dense(want.len()), want, "halvings at {halve_at:?}");
            s.flush();
            assert_eq!(s.dense(want.len()), want);
        }
    }
}
