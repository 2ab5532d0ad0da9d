//! Ground truth: every injected event, and the counters `rdmascope analyze --json` reports, keyed
//! the same way (`totals`, `flows`, `connections`, `pfc`), so a test can compare them directly.

use std::collections::BTreeMap;

use rdmascope_wire::bth::psn_diff;
use serde::Serialize;

/// For `skip_serializing_if`: a counter left out of the file while it is 0.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// NAKs by code.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Naks {
    pub psn_sequence_error: u64,
    pub invalid_request: u64,
    pub remote_access_error: u64,
    pub remote_operational_error: u64,
    pub invalid_rd_request: u64,
}

/// ECN code points of RoCEv2 packets (CNPs excluded).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Ecn {
    pub not_ect: u64,
    pub ect0: u64,
    pub ect1: u64,
    pub ce: u64,
}

/// ICRC check outcomes.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Icrc {
    pub ok: u64,
    pub bad: u64,
    pub truncated: u64,
    pub unverifiable: u64,
}

/// VCRC outcomes of the native IB frames (`analyze`'s `totals.vcrc`; none on Ethernet).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Vcrc {
    pub ok: u64,
    pub bad: u64,
    pub truncated: u64,
}

/// The counters of `totals` and of each flow.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Counters {
    pub packets: u64,
    pub bytes: u64,
    pub payload_bytes: u64,
    pub opcodes: BTreeMap<String, u64>,
    pub retransmitted_packets: u64,
    pub gap_filled_packets: u64,
    /// Gap-filled packets the network delayed (reordered), not lost.
    pub reordered_packets: u64,
    /// Reordered packets the requester resent after the receiver NAKed the gap they left
    /// (not a counter `analyze` reports per flow: it names them in `transport.reorder`).
    pub reordered_resent: u64,
    pub missing_packets: u64,
    pub duplicate_acks: u64,
    pub naks: Naks,
    pub rnr_naks: u64,
    pub timeouts: u64,
    pub cnp: u64,
    pub ecn: Ecn,
    pub icrc: Icrc,
}

impl Counters {
    pub fn add(&mut self, o: &Counters) {
        self.packets += o.packets;
        self.bytes += o.bytes;
        self.payload_bytes += o.payload_bytes;
        for (k, v) in &o.opcodes {
            *self.opcodes.entry(k.clone()).or_default() += v;
        }
        self.retransmitted_packets += o.retransmitted_packets;
        self.gap_filled_packets += o.gap_filled_packets;
        self.reordered_packets += o.reordered_packets;
        self.reordered_resent += o.reordered_resent;
        self.missing_packets += o.missing_packets;
        self.duplicate_acks += o.duplicate_acks;
        self.naks.psn_sequence_error += o.naks.psn_sequence_error;
        self.naks.invalid_request += o.naks.invalid_request;
        self.naks.remote_access_error += o.naks.remote_access_error;
        self.naks.remote_operational_error += o.naks.remote_operational_error;
        self.naks.invalid_rd_request += o.naks.invalid_rd_request;
        self.rnr_naks += o.rnr_naks;
        self.timeouts += o.timeouts;
        self.cnp += o.cnp;
        self.ecn.not_ect += o.ecn.not_ect;
        self.ecn.ect0 += o.ecn.ect0;
        self.ecn.ect1 += o.ecn.ect1;
        self.ecn.ce += o.ecn.ce;
        self.icrc.ok += o.icrc.ok;
        self.icrc.bad += o.icrc.bad;
        self.icrc.truncated += o.icrc.truncated;
        self.icrc.unverifiable += o.icrc.unverifiable;
    }
}

/// One flow: (source node, destination node, destination QP).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FlowTruth {
    pub src: String,
    pub dst: String,
    pub dest_qp: u32,
    pub transport: String,
    /// The most retransmission bursts after ACK timeouts with no response between them.
    pub timeouts_in_a_row: u64,
    /// The most of those bursts in a row after which the requester sent no new request before
    /// the capture ended: the retries it ran out of (a QP out of retries sends nothing more),
    /// which `transport.retry_exceeded` needs. Not in the file when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub stuck_retries: u64,
    /// The most RNR NAKs this (requester) flow got with no other response between them.
    pub rnr_naks_in_a_row: u64,
    /// The payload of first copies: every packet's but a CNP's and a request's or READ
    /// response's whose PSN the flow had carried before (what goodput counts).
    pub first_copy_payload_bytes: u64,
    #[serde(flatten)]
    pub counters: Counters,
}

/// One side of a connection.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct End {
    pub node: String,
    pub qpn: u32,
    pub start_psn: u32,
}

/// A connection (RC/UC QP pair).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ConnTruth {
    pub a: End,
    pub b: End,
    pub path_mtu: u32,
    /// Path MTU the B side uses for its packets when it differs (a misconfiguration).
    pub b_path_mtu: u32,
    /// The path MTU of the CM REQ, when the capture keeps enough of the REQ to read it.
    pub cm_path_mtu: Option<u32>,
    /// The largest FIRST or MIDDLE payload each side sent in the capture: the MTU it
    /// packetises with, as the capture shows it (`None`: no such packet).
    pub observed_mtu_a_to_b: Option<u32>,
    pub observed_mtu_b_to_a: Option<u32>,
    pub transport: String,
    pub learned: String,
    pub application: Option<String>,
    pub rejected: Option<u16>,
    /// The connection's REQ and REP (or, without CM, its first packet) are in the capture.
    pub in_capture: bool,
    /// The retry count of both QPs as the capture tells it: the CM REQ's when it is 1–6 and
    /// the capture keeps enough of the REQ to read it (164 bytes of its MAD), else 7 (the
    /// most a QP retries).
    pub retry_count: u32,
    /// The RNR retry count of A's QP (the requester's) as the capture tells it: the CM REP's
    /// when the capture keeps enough of the REQ to learn the connection from it (see
    /// `retry_count`), else 7 (retry forever).
    pub rnr_retry_count: u32,
}

/// A PFC / PAUSE source and priority.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct PfcPort {
    pub src_mac: String,
    pub priority: u8,
    pub frames: u64,
    pub pause_ns: u64,
}

/// One LLDP sender's DCB settings (`analyze`'s `dcbx.senders`).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct DcbTruth {
    pub src_mac: String,
    pub name: String,
    pub frames: u64,
    pub pfc_enabled: Vec<u8>,
    pub willing: bool,
    pub roce_priorities: Vec<u8>,
}

/// PFC accounting.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct PfcTruth {
    pub frames: u64,
    pub xoff_frames: u64,
    pub xon_frames: u64,
    pub pause_episodes: u64,
    pub pause_ns_total: u64,
    pub by_port: Vec<PfcPort>,
}

/// Where an injected drop happened relative to the capture point.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Where {
    BeforeCapture,
    AfterCapture,
}

impl Where {
    /// Where the `n`-th loss of a kind (from 1) happens: odd ones before the capture point,
    /// even ones after it, so both kinds of loss show in every scenario that loses packets.
    pub fn of_nth(n: u64) -> Self {
        if n % 2 == 1 {
            Self::BeforeCapture
        } else {
            Self::AfterCapture
        }
    }
}

/// Why a packet was sent again.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    Nak,
    Timeout,
    Rnr,
    /// A READ asked again from a response that did not come, when a later one came.
    ReadResponseGap,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct DropEv {
    pub flow: String,
    pub psn: u32,
    pub opcode: String,
    pub at: Where,
    pub ts_ns: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RetxEv {
    pub flow: String,
    pub psn: u32,
    pub cause: Cause,
    pub ts_ns: u64,
}

/// An RNR NAK: the flow it travelled on (responder to requester), the PSN, the timer.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RnrEv {
    pub flow: String,
    pub psn: u32,
    pub timer_us: u32,
    pub ts_ns: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PfcEpisode {
    pub src_mac: String,
    pub priority: u8,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// Every injected event.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Events {
    pub drops: Vec<DropEv>,
    pub retransmissions: Vec<RetxEv>,
    pub naks: BTreeMap<String, u64>,
    pub rnr_naks: Vec<RnrEv>,
    pub cnps: u64,
    pub ce_marks: u64,
    pub pfc_episodes: Vec<PfcEpisode>,
    pub cm_rejects: Vec<(String, u16)>,
}

/// The whole truth file.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Truth {
    pub schema: &'static str,
    pub scenario: String,
    pub seed: u64,
    pub link_bps: u64,
    pub snaplen: u32,
    pub frames: u64,
    /// Frames the snaplen cut, of every kind.
    pub cut_frames: u64,
    /// RoCE or IB frames the snaplen cut before the end of their BTH but after what shows
    /// them to be RoCE or IB (the UDP header, the LRH): counted in `frames`, in no flow and in
    /// none of the `totals`.
    pub cut_before_bth: u64,
    /// ACKs and NAKs the snaplen cut before the end of their AETH: in their flows' packets,
    /// but in none of the NAK, RNR NAK or duplicate ACK counters, and their requesters'
    /// timeouts are not counted either (what started a retransmission is unknown).
    pub cut_before_aeth: u64,
    pub first_ts_ns: u64,
    pub last_ts_ns: u64,
    pub totals: Counters,
    pub vcrc: Vcrc,
    pub flows: Vec<FlowTruth>,
    pub connections: Vec<ConnTruth>,
    pub pfc: PfcTruth,
    /// LLDP senders, in source MAC order.
    pub dcbx: Vec<DcbTruth>,
    /// Finding codes `analyze` must report for this capture (and no other warning/critical).
    pub expected_findings: Vec<String>,
    pub events: Events,
}

/// READ response PSNs below the highest that `analyze` tells first copies from second ones
/// by (its `RESPONSE_PSNS`): a responder sends no response again from further back.
const RESPONSE_PSNS: i32 = 1024;

/// PSNs seen on a flow, for the retransmitted / gap-filled / missing counts.
#[derive(Debug, Clone, Default)]
pub struct PsnSeen {
    first: Option<u32>,
    highest: u32,
    bits: Vec<u64>,
}

/// What one request PSN was, relative to the PSNs seen before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PsnClass {
    New,
    Retransmitted,
    GapFilled,
}

impl PsnSeen {
    fn idx(&self, psn: u32) -> Option<usize> {
        let d = psn_diff(psn, self.first?);
        (d >= 0).then_some(d as usize)
    }
    fn get(&self, i: usize) -> bool {
        self.bits
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
    fn set(&mut self, i: usize) {
        if self.bits.len() <= i / 64 {
            self.bits.resize(i / 64 + 1, 0);
        }
        self.bits[i / 64] |= 1 << (i % 64);
    }
    /// Records request PSNs `psn .. psn+n` (a READ request consumes n); classifies the first.
    pub fn see(&mut self, psn: u32, n: u32) -> PsnClass {
        if self.first.is_none() {
            self.first = Some(psn);
            self.highest = psn;
        }
        let Some(i) = self.idx(psn) else {
            return PsnClass::Retransmitted;
        };
        let class = if self.get(i) {
            PsnClass::Retransmitted
        } else if psn_diff(psn, self.highest) < 0 {
            PsnClass::GapFilled
        } else {
            PsnClass::New
        };
        for k in 0..n.max(1) {
            self.set(i + k as usize);
        }
        let last = psn.wrapping_add(n.max(1) - 1) & 0xff_ffff;
        if psn_diff(last, self.highest) > 0 {
            self.highest = last;
        }
        class
    }
    /// Records READ response PSN `psn` as [`PsnSeen::see`] does, but one less than
    /// [`RESPONSE_PSNS`] before the first seen is a first copy too, gap-filled (as `analyze`
    /// reads the responses: the flow's first response lost and sent again), not one taken as
    /// seen.
    pub fn see_response(&mut self, psn: u32) -> PsnClass {
        let below = self.first.map_or(0, |f| psn_diff(f, psn));
        if (1..RESPONSE_PSNS).contains(&below) {
            let old = std::mem::take(&mut self.bits);
            self.first = Some(psn);
            for i in (0..old.len() * 64).filter(|i| old[i / 64] >> (i % 64) & 1 == 1) {
                self.set(i + below as usize);
            }
        }
        self.see(psn, 1)
    }
    /// Whether `psn` was seen (a PSN before the first counts as seen, as in [`PsnSeen::see`]).
    pub fn seen(&self, psn: u32) -> bool {
        self.first.is_some() && self.idx(psn).is_none_or(|i| self.get(i))
    }
    /// PSNs between the first and the highest never seen.
    pub fn missing(&self) -> u64 {
        let Some(end) = self.idx(self.highest) else {
            return 0;
        };
        (0..=end).filter(|&i| !self.get(i)).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn psn_classes_across_the_wrap() {
        let mut s = PsnSeen::default();
        assert_eq!(s.see(0xff_fffe, 1), PsnClass::New);
        assert_eq!(s.see(0, 1), PsnClass::New); // 0xffffff lost for now
        assert_eq!(s.missing(), 1);
        assert_eq!(s.see(0xff_ffff, 1), PsnClass::GapFilled);
        assert_eq!(s.see(0, 1), PsnClass::Retransmitted);
        assert_eq!(s.see(1, 3), PsnClass::New); // READ of 3 PSNs
        assert_eq!(s.see(3, 1), PsnClass::Retransmitted);
        assert_eq!(s.see(4, 1), PsnClass::New);
        assert_eq!(s.missing(), 0);
    }

    #[test]
    fn a_response_below_the_first_is_a_first_copy() {
        let mut s = PsnSeen::default();
        assert_eq!(s.see_response(1), PsnClass::New); // 0xffffff and 0 lost
        assert_eq!(s.see_response(2), PsnClass::New);
        assert_eq!(s.see_response(0xff_ffff), PsnClass::GapFilled);
        assert_eq!(s.see_response(0), PsnClass::GapFilled);
        assert_eq!(s.see_response(1), PsnClass::Retransmitted);
        assert_eq!(s.see_response(0xff_ffff), PsnClass::Retransmitted);
        assert_eq!(s.see_response(3), PsnClass::New);
        // Further below than a responder resends: taken as seen.
        assert_eq!(s.see_response(0xff_fb00), PsnClass::Retransmitted);
    }
}
