//! Frame builders on top of `wire`'s `emit`: RoCEv2 over IPv4/IPv6 with optional 802.1Q tag,
//! native IB (LRH, optional GRH, ICRC, VCRC) wrapped in ERF type 21, PFC and PAUSE.
//! Lengths, the IPv4 checksum, the ICRC and the VCRC are always right; a frame cut by the
//! snaplen is only built up to the cut (its CRCs would not be in the capture anyway).

use rdmascope_wire::bth::BthRepr;
use rdmascope_wire::ethernet::{ethertype, EthernetFrame, EthernetRepr, VlanRepr};
use rdmascope_wire::ext::ExtHeaders;
use rdmascope_wire::grh::GrhRepr;
use rdmascope_wire::icrc;
use rdmascope_wire::ip::{Ipv4Repr, Ipv6Repr};
use rdmascope_wire::link::ErfRepr;
use rdmascope_wire::lldp::{
    app_sel, subtype, tlv, AppEntry, PfcConfig, Tlv, ORG_HEADER_LEN, TLV_HEADER_LEN,
};
use rdmascope_wire::lrh::LrhRepr;
use rdmascope_wire::macctl::{MacControl, PAUSE_DST};
use rdmascope_wire::udp::{UdpRepr, ROCE_V2_PORT};

/// A node's addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    pub mac: [u8; 6],
    pub ip4: [u8; 4],
    pub ip6: [u8; 16],
    pub lid: u16,
}

impl Node {
    /// Node `i` of a scenario: MAC 02:00:00:00:hi:lo, 10.0.hi.lo, fd00::hi:lo, LID i+1.
    pub fn numbered(i: u16) -> Self {
        let [hi, lo] = (i + 1).to_be_bytes();
        let mut ip6 = [0u8; 16];
        ip6[0] = 0xfd;
        ip6[14] = hi;
        ip6[15] = lo;
        Self {
            mac: [2, 0, 0, 0, hi, lo],
            ip4: [10, 0, hi, lo],
            ip6,
            lid: i + 1,
        }
    }
    /// The GID: the IPv6 address, or the IPv4-mapped one.
    pub fn gid(&self, ipv6: bool) -> [u8; 16] {
        if ipv6 {
            self.ip6
        } else {
            let mut g = [0u8; 16];
            g[10] = 0xff;
            g[11] = 0xff;
            g[12..].copy_from_slice(&self.ip4);
            g
        }
    }
}

/// Ethernet/IP framing of one RoCEv2 packet.
#[derive(Debug, Clone, Copy)]
pub struct L3 {
    pub ipv6: bool,
    /// VLAN ID and PCP when tagged.
    pub vlan: Option<(u16, u8)>,
    pub dscp: u8,
    pub ecn: u8,
    pub udp_sport: u16,
    pub ip_id: u16,
}

/// The transport part of a packet: BTH, extension headers, payload length and an optional MAD.
pub struct Transport<'a> {
    pub bth: BthRepr,
    pub ext: ExtHeaders,
    pub payload_len: usize,
    /// Byte the payload is filled with.
    pub fill: u8,
    /// Payload bytes given explicitly (MADs, CNP reserved bytes); overrides `fill`.
    pub payload: Option<&'a [u8]>,
}

/// Transport bytes from the BTH through the ICRC.
pub fn transport_len(t: &Transport<'_>) -> usize {
    12 + t.ext.buffer_len() + t.payload_len + usize::from(t.bth.padcnt) + 4
}

fn put_transport(buf: &mut Vec<u8>, t: &Transport<'_>, room: usize) {
    let at = buf.len();
    buf.resize(at + 12 + t.ext.buffer_len(), 0);
    t.bth.emit(&mut buf[at..at + 12]);
    t.ext.emit(&mut buf[at + 12..]);
    let n = (t.payload_len + usize::from(t.bth.padcnt)).min(room.saturating_sub(buf.len()));
    match t.payload {
        Some(p) => {
            let k = n.min(p.len());
            buf.extend_from_slice(&p[..k]);
            buf.resize(buf.len() + (n - k), 0);
        }
        None => buf.resize(buf.len() + n, t.fill),
    }
}

/// Builds a RoCEv2 frame into `buf` (cleared first), cut to `snaplen`. Returns the wire length.
pub fn roce_v2(
    buf: &mut Vec<u8>,
    src: &Node,
    dst: &Node,
    l3: &L3,
    t: &Transport<'_>,
    snaplen: usize,
) -> usize {
    buf.clear();
    let tlen = transport_len(t);
    let ip_hdr = if l3.ipv6 { 40 } else { 20 };
    let l2 = 14 + if l3.vlan.is_some() { 4 } else { 0 };
    let wire_len = (l2 + ip_hdr + 8 + tlen).max(60);
    // IPv6 needs a real UDP checksum (RFC 8200), which covers the whole datagram: build it all.
    let room = if l3.ipv6 {
        wire_len
    } else {
        snaplen.min(wire_len)
    };
    buf.resize(l2, 0);
    let ip_type = if l3.ipv6 {
        ethertype::IPV6
    } else {
        ethertype::IPV4
    };
    let (outer, vlan) = match l3.vlan {
        Some((vid, pcp)) => (
            ethertype::VLAN,
            Some(VlanRepr {
                tpid: ethertype::VLAN,
                pcp,
                dei: false,
                vid,
                ethertype: ip_type,
            }),
        ),
        None => (ip_type, None),
    };
    EthernetRepr {
        dst: dst.mac,
        src: src.mac,
        ethertype: outer,
    }
    .emit(&mut EthernetFrame::new_unchecked(&mut buf[..14]));
    if let Some(v) = vlan {
        v.emit(&mut buf[14..18]);
    }
    let ip_at = buf.len();
    buf.resize(ip_at + ip_hdr + 8, 0);
    if l3.ipv6 {
        Ipv6Repr {
            traffic_class: (l3.dscp << 2) | l3.ecn,
            flow_label: u32::from(l3.udp_sport) & 0x3fff,
            payload_len: (8 + tlen) as u16,
            next_header: 17,
            hop_limit: 64,
            src: src.ip6,
            dst: dst.ip6,
        }
        .emit(&mut buf[ip_at..ip_at + 40]);
    } else {
        Ipv4Repr {
            header_len: 20,
            dscp: l3.dscp,
            ecn: l3.ecn,
            total_len: (20 + 8 + tlen) as u16,
            ident: l3.ip_id,
            dont_frag: true,
            more_frags: false,
            frag_offset: 0,
            ttl: 64,
            protocol: 17,
            checksum: 0,
            src: src.ip4,
            dst: dst.ip4,
        }
        .emit(&mut buf[ip_at..ip_at + 20]);
    }
    UdpRepr {
        src_port: l3.udp_sport,
        dst_port: ROCE_V2_PORT,
        length: (8 + tlen) as u16,
        checksum: 0,
    }
    .emit(&mut buf[ip_at + ip_hdr..ip_at + ip_hdr + 8]);
    put_transport(buf, t, room);
    let icrc_end = ip_at + ip_hdr + 8 + tlen;
    if room >= icrc_end {
        let c = icrc::rocev2(&buf[ip_at..icrc_end - 4], ip_hdr, l3.ipv6).unwrap_or(0);
        buf.extend_from_slice(&c.to_le_bytes());
        if l3.ipv6 {
            let sum = udp6_checksum(&src.ip6, &dst.ip6, &buf[ip_at + 40..icrc_end]);
            let at = ip_at + 40 + 6;
            buf[at..at + 2].copy_from_slice(&sum.to_be_bytes());
        }
        if room > buf.len() {
            buf.resize(room, 0); // Ethernet padding of short frames
        }
    }
    buf.truncate(snaplen.min(wire_len));
    wire_len
}

/// The UDP checksum over IPv6 (RFC 8200 §8.1); 0 is sent as 0xFFFF.
fn udp6_checksum(src: &[u8; 16], dst: &[u8; 16], udp: &[u8]) -> u16 {
    let mut sum = 0u32;
    let mut add = |b: &[u8]| {
        let mut it = b.chunks_exact(2);
        for c in &mut it {
            sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
        }
        if let [x] = it.remainder() {
            sum += u32::from(*x) << 8;
        }
    };
    add(src);
    add(dst);
    add(&(udp.len() as u32).to_be_bytes());
    add(&[0, 0, 0, 17]);
    add(udp);
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    match !(sum as u16) {
        0 => 0xffff,
        c => c,
    }
}

/// Builds a native IB packet (LRH, GRH when `grh` is given, ICRC, VCRC) inside an ERF type-21
/// record, cut to `snaplen`. Returns the record's wire length (ERF header included). The ERF
/// timestamp is left at zero: [`stamp_erf`] sets it when the record is written.
pub fn ib_erf(
    buf: &mut Vec<u8>,
    lrh: LrhRepr,
    grh: Option<GrhRepr>,
    t: &Transport<'_>,
    snaplen: usize,
) -> usize {
    buf.clear();
    let tlen = transport_len(t);
    let pkt_len = 8 + if grh.is_some() { 40 } else { 0 } + tlen;
    let wire_len = ErfRepr::LEN + pkt_len + 2;
    let room = snaplen.min(wire_len);
    buf.resize(ErfRepr::LEN + 8, 0);
    ErfRepr {
        ts: 0,
        rtype: 21,
        flags: 0,
        rlen: wire_len.next_multiple_of(8) as u16,
        lctr: 0,
        wlen: (pkt_len + 2) as u16,
        ext_headers: 0,
    }
    .emit(&mut buf[..ErfRepr::LEN]);
    let mut l = lrh;
    l.pktlen = (pkt_len / 4) as u16;
    l.lnh = if grh.is_some() { 3 } else { 2 };
    l.emit(&mut buf[ErfRepr::LEN..]);
    if let Some(mut g) = grh {
        g.paylen = tlen as u16;
        let at = buf.len();
        buf.resize(at + 40, 0);
        g.emit(&mut buf[at..]);
    }
    put_transport(buf, t, room);
    let start = ErfRepr::LEN;
    let end = start + pkt_len;
    if room >= end + 2 {
        let c = if grh.is_some() {
            icrc::grh_based(&buf[start + 8..end - 4])
        } else {
            icrc::ib_local(&buf[start..end - 4])
        };
        buf.extend_from_slice(&c.unwrap_or(0).to_le_bytes());
        let v = icrc::vcrc(&buf[start..end]);
        buf.extend_from_slice(&v.to_le_bytes());
    } else {
        buf.truncate(room);
    }
    wire_len
}

/// Sets the timestamp of the ERF record at the start of `record` to `ts_ns` (32.32 fixed point,
/// little-endian), the time its capture record carries too, as ibdump writes both.
pub fn stamp_erf(record: &mut [u8], ts_ns: u64) {
    let frac = ((ts_ns % 1_000_000_000) << 32) / 1_000_000_000;
    let ts = ((ts_ns / 1_000_000_000) << 32) | frac;
    if let Some(b) = record.get_mut(..8) {
        b.copy_from_slice(&ts.to_le_bytes());
    }
}

/// Builds a PFC frame (or an 802.3x PAUSE when `enable` is `None`), padded to 60 bytes.
/// An LLDP frame (IEEE 802.1AB) from `src` named `name` with its DCB settings: PFC on the
/// priorities of `pfc_enable` (willing or not) and, when given, RoCEv2 (UDP 4791) mapped to
/// `roce_priority` (IEEE 802.1Q D.2.9–D.2.10). Returns the frame's length.
pub fn lldp(
    buf: &mut Vec<u8>,
    src: [u8; 6],
    name: &str,
    pfc: PfcConfig,
    roce_priority: Option<u8>,
) -> usize {
    let name = &name.as_bytes()[..name.len().min(255)];
    buf.clear();
    buf.resize(128 + name.len(), 0);
    EthernetRepr {
        dst: LLDP_DST,
        src,
        ethertype: ethertype::LLDP,
    }
    .emit(&mut EthernetFrame::new_unchecked(&mut buf[..14]));
    let mut at = 14;
    // Chassis ID: a MAC address (subtype 4); port ID: an interface name (subtype 5).
    Tlv::emit_header(tlv::CHASSIS_ID, 7, &mut buf[at..]);
    buf[at + 2] = 4;
    buf[at + 3..at + 9].copy_from_slice(&src);
    at += 9;
    Tlv::emit_header(tlv::PORT_ID, 5, &mut buf[at..]);
    buf[at + 2] = 5;
    buf[at + 3..at + 7].copy_from_slice(b"eth0");
    at += 7;
    Tlv::emit_header(tlv::TTL, 2, &mut buf[at..]);
    buf[at + 2..at + 4].copy_from_slice(&120u16.to_be_bytes());
    at += 4;
    Tlv::emit_header(tlv::SYSTEM_NAME, name.len(), &mut buf[at..]);
    buf[at + 2..at + 2 + name.len()].copy_from_slice(name);
    at += 2 + name.len();
    let body = TLV_HEADER_LEN + ORG_HEADER_LEN;
    Tlv::emit_ieee_header(subtype::PFC, PfcConfig::LEN, &mut buf[at..]);
    pfc.emit(&mut buf[at + body..]);
    at += body + PfcConfig::LEN;
    if let Some(priority) = roce_priority {
        Tlv::emit_ieee_header(subtype::APP, 1 + AppEntry::LEN, &mut buf[at..]);
        AppEntry {
            priority,
            selector: app_sel::UDP_DCCP,
            protocol: 4791,
        }
        .emit(&mut buf[at + body + 1..]);
        at += body + 1 + AppEntry::LEN;
    }
    Tlv::emit_header(tlv::END, 0, &mut buf[at..]);
    at += TLV_HEADER_LEN;
    buf.truncate(at.max(60));
    buf.len()
}

/// The nearest-bridge multicast address LLDP goes to.
const LLDP_DST: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e];

pub fn mac_control(buf: &mut Vec<u8>, src: [u8; 6], m: MacControl) -> usize {
    buf.clear();
    buf.resize(60, 0);
    EthernetRepr {
        dst: PAUSE_DST,
        src,
        ethertype: ethertype::MAC_CONTROL,
    }
    .emit(&mut EthernetFrame::new_unchecked(&mut buf[..14]));
    m.emit(&mut buf[14..14 + m.buffer_len()]);
    60
}
