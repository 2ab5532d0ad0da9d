//! The dominant packet of a capture — RoCEv2 (Ethernet with at most one VLAN tag, or a Linux
//! cooked header; IPv4 without options or fragmentation, or IPv6 without extension headers; UDP
//! to a RoCEv2 port) or native IB (an LRH, maybe a GRH), with the BTH and its extension headers
//! all captured — turned into an [`Event`] straight from the bytes, without building a whole
//! [`Frame`].
//!
//! This is the analysis hot path: a general frame holds every layer's fields for `show`, and
//! filling then copying it costs more than the analysis of the packet. Anything else (other
//! encapsulations, IPv6 extension headers, fragments, MADs, cut headers, malformed lengths)
//! returns `None` and goes through [`Frame::decode`]; where this path answers, its event equals
//! the general one — the tests check that on every scenario and on damaged bytes.
//!
//! A switch's mirror of such a frame takes this path too: GRE over IPv4 carrying ERSPAN Type I,
//! II or III or a bridged Ethernet frame, or VXLAN; the event is the frame inside, as
//! [`Frame::decode`] makes it.
//!
//! [`Frame`]: rdmascope_wire::Frame
//! [`Frame::decode`]: rdmascope_wire::Frame::decode

use rdmascope_wire::bth::{self, BthPacket};
use rdmascope_wire::ethernet::{self, ethertype, EthernetFrame, VlanRepr};
use rdmascope_wire::ext::{Aeth, Deth, Reth};
use rdmascope_wire::frame::Encap;
use rdmascope_wire::gre::{self, ErspanRepr, GrePacket, GreRepr};
use rdmascope_wire::grh::{self, GrhPacket};
use rdmascope_wire::icrc;
use rdmascope_wire::ip::{protocol, Ipv4Packet, Ipv6Packet};
use rdmascope_wire::link::{erf_type, linktype, ErfRepr, Sll2Repr, SllRepr};
use rdmascope_wire::lrh::{self, LrhPacket};
use rdmascope_wire::opcode::{ext, OpInfo, Operation, Transport};
use rdmascope_wire::udp::UdpPacket;
use rdmascope_wire::vxlan::{self, VxlanRepr};
use rdmascope_wire::{DecodeOptions, IcrcStatus};

use crate::analyzer::{flow_slot, mac_word, v4_pair, Bth, Event, ExtWord, Node, PacketMeta};

const IPV4_HEADER_LEN: usize = 20;
const IPV6_HEADER_LEN: usize = 40;
const UDP_HEADER_LEN: usize = 8;

/// Writes the event of a plain RoCEv2 or native IB frame (see the module) into `e`, field by
/// field (an event is large: building it apart and moving it in cost more than the rest of this
/// function). `None`, with `e` unchanged, for anything else.
#[inline(always)]
pub(crate) fn event(
    e: &mut Event,
    meta: PacketMeta,
    link: u32,
    d: &[u8],
    orig_len: u32,
    opts: &DecodeOptions,
) -> Option<()> {
    let truncated = (d.len() as u64) < u64::from(orig_len);
    // The commonest frame first. `transport` is inlined here as well, so this call site gets
    // its own compiled copy, in which the nodes, the encapsulation and the ICRC's coverage are
    // known constants (no second copy of the source).
    if link == linktype::ETHERNET {
        if let Some(h) = ethernet_ipv4(d, truncated, opts) {
            return transport(e, meta, d, &h, opts);
        }
    }
    let h = match link {
        linktype::ETHERNET | linktype::LINUX_SLL | linktype::LINUX_SLL2 => {
            match rocev2(d, link, truncated, opts) {
                Some(h) => h,
                // Not RoCEv2 itself: maybe a mirror or overlay of it (tried last, so direct
                // frames pay nothing for it).
                None if link == linktype::ETHERNET => {
                    let t = tunnel(d, truncated, opts)?;
                    return tunnelled(e, meta, &d[t.inner_at..], t, truncated, opts);
                }
                None => return None,
            }
        }
        linktype::INFINIBAND => ib(d, 0, truncated)?,
        linktype::ERF => {
            let (erf, off) = ErfRepr::parse(d).ok()?;
            if erf.rtype != erf_type::INFINIBAND {
                return None;
            }
            // The ERF wire length is the packet's real length.
            let cut = d.len() - off.min(d.len()) < usize::from(erf.wlen);
            ib(d, off, truncated || cut)?
        }
        _ => return None,
    };
    transport(e, meta, d, &h, opts)
}

/// Where the transport headers are and what the layers below them said.
struct Below {
    truncated: bool,
    /// BTH offset, and bytes from the BTH through the ICRC per the enclosing headers.
    tstart: usize,
    tlen: usize,
    src: Node,
    dst: Node,
    encap: Encap,
    ecn: Option<u8>,
    prio: u8,
    udp_sport: Option<u16>,
    eth_src: u64,
    icrc: IcrcOver,
    /// Native IB: the LRH's offset and the end of the packet (PktLen), where the VCRC is.
    vcrc: Option<(usize, usize)>,
}

/// What the ICRC covers (IBTA §7.8.1, Annex A17.3.3): from the IP header, the LRH or the GRH.
enum IcrcOver {
    RoceV2 { ip_at: usize, hl: usize },
    IbLocal { lrh_at: usize },
    Grh { grh_at: usize },
}

impl IcrcOver {
    /// The ICRC of the packet in `d` whose ICRC field starts at `icrc_at`.
    #[inline(always)]
    fn compute(&self, d: &[u8], icrc_at: usize) -> Option<u32> {
        match *self {
            Self::RoceV2 { ip_at, hl } => {
                icrc::rocev2(&d[ip_at..icrc_at], hl, hl == IPV6_HEADER_LEN)
            }
            Self::IbLocal { lrh_at } => icrc::ib_local(&d[lrh_at..icrc_at]),
            Self::Grh { grh_at } => icrc::grh_based(&d[grh_at..icrc_at]),
        }
    }
}

/// Ethernet with at most one VLAN tag, or a Linux cooked header (v1 or v2, as `tcpdump -i any`
/// writes), then IPv4 or IPv6, UDP to a RoCEv2 port.
#[inline(always)]
fn rocev2(d: &[u8], link: u32, truncated: bool, opts: &DecodeOptions) -> Option<Below> {
    let (ty, at, pcp, eth_src) = match link {
        linktype::ETHERNET => {
            let eth = EthernetFrame::new_checked(d).ok()?;
            let mut ty = eth.ethertype();
            let mut at = ethernet::HEADER_LEN;
            let mut pcp = None;
            if ethernet::is_vlan_tpid(ty) {
                let v = VlanRepr::parse(ty, d.get(at..)?).ok()?;
                pcp = Some(v.pcp);
                ty = v.ethertype;
                at += ethernet::VLAN_LEN;
            }
            // The source MAC is bytes 6..12 (IEEE 802.3 §3.1.1): read with the two before it
            // in one word, then masked (`mac_word` of it).
            let src = d.get(4..12).and_then(|w| w.try_into().ok()).map_or_else(
                || mac_word(eth.src_addr()),
                |w| u64::from_be_bytes(w) & 0xffff_ffff_ffff | 1 << 48,
            );
            (ty, at, pcp, src)
        }
        linktype::LINUX_SLL => (SllRepr::parse(d).ok()?.protocol, SllRepr::LEN, None, 0),
        linktype::LINUX_SLL2 => (Sll2Repr::parse(d).ok()?.protocol, Sll2Repr::LEN, None, 0),
        _ => return None,
    };
    let (hl, end, ecn, dscp, src, dst) = match ty {
        // IPv4 (RFC 791): a 20-byte header, not a fragment, a length the frame can hold.
        ethertype::IPV4 => {
            let ip = Ipv4Packet::new_checked(&d[at..]).ok()?;
            let total = usize::from(ip.total_len());
            if ip.header_len() != IPV4_HEADER_LEN
                || ip.more_frags()
                || ip.frag_offset() != 0
                || ip.protocol() != protocol::UDP
                || (at + total > d.len() && !truncated)
            {
                return None;
            }
            let (s, t) = (Node::V4(ip.src_addr()), Node::V4(ip.dst_addr()));
            (IPV4_HEADER_LEN, at + total, ip.ecn(), ip.dscp(), s, t)
        }
        // IPv6 (RFC 8200): UDP right after the fixed header (no extension header), a payload
        // length the frame can hold.
        ethertype::IPV6 => {
            let ip = Ipv6Packet::new_checked(&d[at..]).ok()?;
            let end = at + IPV6_HEADER_LEN + usize::from(ip.payload_len());
            if ip.next_header() != protocol::UDP || (end > d.len() && !truncated) {
                return None;
            }
            let tc = ip.traffic_class();
            let (s, t) = (Node::Gid(ip.src_addr()), Node::Gid(ip.dst_addr()));
            (IPV6_HEADER_LEN, end, tc & 3, tc >> 2, s, t)
        }
        _ => return None,
    };

    // UDP (RFC 768) to a RoCEv2 port.
    let u_at = at + hl;
    let udp = UdpPacket::new_checked(d.get(u_at..)?).ok()?;
    let udp_len = usize::from(udp.len());
    if u_at + udp_len > end || !opts.is_roce_port(udp.dst_port()) {
        return None;
    }

    let tstart = u_at + UDP_HEADER_LEN;
    Some(Below {
        truncated,
        tstart,
        tlen: udp_len - UDP_HEADER_LEN,
        src,
        dst,
        encap: Encap::RoceV2,
        ecn: Some(ecn),
        prio: pcp.unwrap_or(dscp >> 3),
        udp_sport: Some(udp.src_port()),
        eth_src,
        icrc: IcrcOver::RoceV2 { ip_at: at, hl },
        vcrc: None,
    })
}

/// The commonest frame of all, Ethernet (at most one VLAN tag) with IPv4 and UDP to a RoCEv2
/// port, read at fixed offsets after one length check: the same checks and fields as
/// [`rocev2`]'s general reading, which takes every frame this does not.
#[inline(always)]
fn ethernet_ipv4(d: &[u8], truncated: bool, opts: &DecodeOptions) -> Option<Below> {
    const ETH: usize = ethernet::HEADER_LEN;
    /// Ethernet, a VLAN tag, IPv4 and UDP: what a tagged frame needs, at most.
    const HEADERS: usize = ETH + ethernet::VLAN_LEN + IPV4_HEADER_LEN + UDP_HEADER_LEN;
    let h: &[u8; HEADERS] = d.get(..HEADERS)?.try_into().ok()?;
    let (at, pcp) = match EthernetFrame::new_unchecked(h).ethertype() {
        ethertype::IPV4 => (ETH, None),
        t if ethernet::is_vlan_tpid(t) => {
            let v = VlanRepr::parse(t, &h[ETH..ETH + ethernet::VLAN_LEN]).ok()?;
            if v.ethertype != ethertype::IPV4 {
                return None;
            }
            (ETH + ethernet::VLAN_LEN, Some(v.pcp))
        }
        _ => return None,
    };
    // IPv4 (RFC 791): version 4, a 20-byte header, not a fragment, UDP, a length the frame
    // can hold (one shorter than its headers fails the UDP length test below).
    let ip_b: &[u8; IPV4_HEADER_LEN] = h[at..at + IPV4_HEADER_LEN].try_into().ok()?;
    let ip = Ipv4Packet::new_unchecked(ip_b);
    let total = usize::from(ip.total_len());
    if ip.version() != 4
        || ip.header_len() != IPV4_HEADER_LEN
        || ip.more_frags()
        || ip.frag_offset() != 0
        || ip.protocol() != protocol::UDP
        || (at + total > d.len() && !truncated)
    {
        return None;
    }
    // UDP (RFC 768) to a RoCEv2 port.
    let u_at = at + IPV4_HEADER_LEN;
    let udp_b: &[u8; UDP_HEADER_LEN] = h[u_at..u_at + UDP_HEADER_LEN].try_into().ok()?;
    let udp = UdpPacket::new_unchecked(udp_b);
    let udp_len = usize::from(udp.len());
    if udp_len < UDP_HEADER_LEN || u_at + udp_len > at + total || !opts.is_roce_port(udp.dst_port())
    {
        return None;
    }
    // The source MAC is bytes 6..12 (IEEE 802.3 §3.1.1): read with the two before it in one
    // word, then masked (`mac_word` of it).
    let w = [h[4], h[5], h[6], h[7], h[8], h[9], h[10], h[11]];
    Some(Below {
        truncated,
        tstart: u_at + UDP_HEADER_LEN,
        tlen: udp_len - UDP_HEADER_LEN,
        src: Node::V4(ip.src_addr()),
        dst: Node::V4(ip.dst_addr()),
        encap: Encap::RoceV2,
        ecn: Some(ip.ecn()),
        prio: pcp.unwrap_or(ip.dscp() >> 3),
        udp_sport: Some(udp.src_port()),
        eth_src: u64::from_be_bytes(w) & 0xffff_ffff_ffff | 1 << 48,
        icrc: IcrcOver::RoceV2 {
            ip_at: at,
            hl: IPV4_HEADER_LEN,
        },
        vcrc: None,
    })
}

/// Where a tunnel's inner Ethernet frame starts, and what the tunnel says of it.
struct Outer {
    inner_at: usize,
    /// ERSPAN's T bit: the mirror session cut the frame.
    cut: bool,
    /// ERSPAN Type II's COS of a frame mirrored without its 802.1Q tag (En = 2).
    cos: Option<u8>,
}

/// The tunnel of a mirrored or overlay frame: Ethernet (at most one VLAN tag), IPv4 (not a
/// fragment) and GRE carrying ERSPAN Type I, II or III (frame type Ethernet) or bridged
/// Ethernet (RFC 1701, RFC 7637), or UDP to port 4789 and VXLAN (RFC 7348) when 4789 is not
/// read as RoCEv2. The checks are the general decoder's; anything else is left to it.
#[cold]
#[inline(never)]
fn tunnel(d: &[u8], truncated: bool, opts: &DecodeOptions) -> Option<Outer> {
    let eth = EthernetFrame::new_checked(d).ok()?;
    let mut at = ethernet::HEADER_LEN;
    let mut ty = eth.ethertype();
    if ethernet::is_vlan_tpid(ty) {
        ty = VlanRepr::parse(ty, d.get(at..)?).ok()?.ethertype;
        at += ethernet::VLAN_LEN;
    }
    if ty != ethertype::IPV4 {
        return None;
    }
    let ip = Ipv4Packet::new_checked(&d[at..]).ok()?;
    let end = at + usize::from(ip.total_len());
    if ip.more_frags() || ip.frag_offset() != 0 || (end > d.len() && !truncated) {
        return None;
    }
    let p_at = at + ip.header_len();
    match ip.protocol() {
        gre::IP_PROTOCOL => {
            let g = GreRepr::parse(&GrePacket::new_checked(d.get(p_at..)?).ok()?).ok()?;
            let mut inner_at = p_at + g.header_len();
            let mut t = Outer {
                inner_at,
                cut: false,
                cos: None,
            };
            match g.protocol {
                // Type I: no sequence number, no ERSPAN header.
                gre::protocol::ERSPAN_II if g.sequence.is_none() => {}
                gre::protocol::ERSPAN_II | gre::protocol::ERSPAN_III => {
                    let e = ErspanRepr::parse(g.protocol, &d[inner_at..]).ok()?;
                    if e.version == 2 && e.frame_type != 0 {
                        return None;
                    }
                    inner_at += e.header_len();
                    t = Outer {
                        inner_at,
                        cut: e.truncated,
                        cos: (e.version == 1 && e.encap == 2).then_some(e.cos),
                    };
                }
                gre::protocol::TEB => {}
                _ => return None,
            }
            Some(t)
        }
        protocol::UDP => {
            let udp = UdpPacket::new_checked(d.get(p_at..)?).ok()?;
            if p_at + usize::from(udp.len()) > end
                || udp.dst_port() != vxlan::PORT
                || opts.is_roce_port(vxlan::PORT)
            {
                return None;
            }
            let inner_at = p_at + UDP_HEADER_LEN;
            VxlanRepr::parse(&d[inner_at..]).ok()?;
            Some(Outer {
                inner_at: inner_at + vxlan::HEADER_LEN,
                cut: false,
                cos: None,
            })
        }
        _ => None,
    }
}

/// The event of the RoCEv2 frame `d` that came through tunnel `t` (`truncated`: the whole
/// frame was cut): its own length on the wire, its own headers, and the priority ERSPAN carries
/// for it when its tag was removed.
#[inline(never)]
fn tunnelled(
    e: &mut Event,
    mut meta: PacketMeta,
    d: &[u8],
    t: Outer,
    truncated: bool,
    opts: &DecodeOptions,
) -> Option<()> {
    let truncated = truncated || t.cut;
    let mut h = ethernet_ipv4(d, truncated, opts)
        .or_else(|| rocev2(d, linktype::ETHERNET, truncated, opts))?;
    if let Some(cos) = t.cos {
        // Both readings took at most one tag, so an untagged frame has its ethertype at 12.
        if !ethernet::is_vlan_tpid(u16::from_be_bytes([d[12], d[13]])) {
            h.prio = cos;
        }
    }
    meta.orig_len = meta
        .orig_len
        .saturating_sub(u32::try_from(t.inner_at).unwrap_or(u32::MAX));
    transport(e, meta, d, &h, opts)
}

/// Native IB at `at`: an LRH (IBTA §7.7), then the BTH (LNH "IBA local") or a GRH (§8.3, LNH
/// "IBA global", next header IBA) and the BTH.
#[inline(always)]
fn ib(d: &[u8], at: usize, truncated: bool) -> Option<Below> {
    let l = LrhPacket::new_checked(d.get(at..)?).ok()?;
    let pkt_end = at + usize::from(l.pktlen()) * 4;
    if pkt_end < at + lrh::HEADER_LEN || (pkt_end > d.len() && !truncated) {
        return None;
    }
    let (src, dst) = (Node::Lid(l.slid()), Node::Lid(l.dlid()));
    let below = |tstart, tlen, src, dst, icrc| Below {
        truncated,
        tstart,
        tlen,
        src,
        dst,
        encap: Encap::Ib,
        ecn: None,
        prio: 0,
        udp_sport: None,
        eth_src: 0,
        icrc,
        vcrc: Some((at, pkt_end)),
    };
    let g_at = at + lrh::HEADER_LEN;
    match l.lnh() {
        lrh::lnh::IBA_LOCAL => Some(below(
            g_at,
            pkt_end - g_at,
            src,
            dst,
            IcrcOver::IbLocal { lrh_at: at },
        )),
        lrh::lnh::IBA_GLOBAL => {
            let g = GrhPacket::new_checked(d.get(g_at..)?).ok()?;
            let tstart = g_at + grh::HEADER_LEN;
            let tlen = usize::from(g.paylen());
            if g.nxthdr() != grh::NXTHDR_IBA || (tstart + tlen > d.len() && !truncated) {
                return None;
            }
            let (s, t) = (Node::Gid(g.sgid()), Node::Gid(g.dgid()));
            Some(below(tstart, tlen, s, t, IcrcOver::Grh { grh_at: g_at }))
        }
        _ => None,
    }
}

/// The BTH, its extension headers and the ICRC, then the event.
#[inline(always)]
fn transport(
    e: &mut Event,
    meta: PacketMeta,
    d: &[u8],
    h: &Below,
    opts: &DecodeOptions,
) -> Option<()> {
    let (tstart, tlen) = (h.tstart, h.tlen);
    let (src, dst) = (h.src, h.dst);
    // The VCRC (IBTA §7.8.2), over the LRH through the ICRC, in the 2 bytes after PktLen.
    let vcrc = h.vcrc.and_then(|(at, end)| match d.get(end..end + 2) {
        None => Some(IcrcStatus::Truncated),
        Some(v) => opts.verify_crc.then(|| {
            if icrc::vcrc(&d[at..end]) == u16::from_le_bytes([v[0], v[1]]) {
                IcrcStatus::Ok
            } else {
                IcrcStatus::Bad
            }
        }),
    });
    // BTH (IBTA 9.2) and the extension headers its opcode implies (Table 38), all captured.
    let b = BthPacket::new_checked(d.get(tstart..)?).ok()?;
    let info = OpInfo::of(b.opcode());
    let ext_len = info.ext_len();
    let padcnt = usize::from(b.padcnt());
    let hdrs = bth::HEADER_LEN + ext_len + 4;
    let ext_at = tstart + bth::HEADER_LEN;
    let mad = info.transport == Transport::Ud && info.op == Operation::SendOnly && b.destqp() <= 1;
    if tlen < hdrs + padcnt || d.len() < ext_at + ext_len || mad {
        return None;
    }
    let exts = &d[ext_at..ext_at + ext_len];
    let aeth = (info.ext & ext::AETH != 0)
        .then(|| Aeth::parse(&exts[ext::offset(info.ext, ext::AETH)..]).ok())
        .flatten();
    let word = if info.ext & ext::RETH != 0 {
        Reth::parse(&exts[ext::offset(info.ext, ext::RETH)..])
            .map_or(ExtWord::None, |r| ExtWord::DmaLen(r.dma_len))
    } else if info.ext & ext::DETH != 0 {
        Deth::parse(&exts[ext::offset(info.ext, ext::DETH)..])
            .map_or(ExtWord::None, |d| ExtWord::SrcQp(d.src_qp))
    } else {
        ExtWord::None
    };

    // ICRC (IBTA Annex A17.3.3), when the capture holds it.
    let icrc_end = tstart + tlen;
    let icrc = match d.get(icrc_end - 4..icrc_end).and_then(icrc::read_icrc) {
        None => Some(IcrcStatus::Truncated),
        Some(_) if !opts.verify_crc => None,
        Some(stored) => Some(match h.icrc.compute(d, icrc_end - 4) {
            Some(c) if c == stored => IcrcStatus::Ok,
            Some(_) => IcrcStatus::Bad,
            None => IcrcStatus::Unverifiable,
        }),
    };

    // Every field by name (no `..`), so a field added to `Event` cannot keep a stale value.
    let Event {
        meta: e_meta,
        truncated: e_truncated,
        link: e_link,
        perftest: e_perftest,
        frag_needed: e_frag_needed,
        roce_fragment: e_roce_fragment,
        bth: e_bth,
        nodes: e_nodes,
        flow_slot: e_flow_slot,
        v4_pair: e_v4_pair,
        encap: e_encap,
        payload_len: e_payload_len,
        eth_src: e_eth_src,
        icrc: e_icrc,
        vcrc: e_vcrc,
        ecn: e_ecn,
        prio: e_prio,
        udp_sport: e_udp_sport,
        aeth: e_aeth,
        ext: e_ext,
        cm: e_cm,
    } = e;
    *e_meta = meta;
    *e_truncated = h.truncated;
    if e_link.is_some() {
        *e_link = None;
    }
    *e_perftest = false;
    *e_frag_needed = false;
    *e_roce_fragment = false;
    *e_bth = Some(Bth {
        opcode: b.opcode(),
        ackreq: b.ackreq(),
        destqp: b.destqp(),
        psn: b.psn(),
    });
    *e_nodes = Some((src, dst));
    *e_flow_slot = flow_slot(&src, &dst, b.destqp());
    *e_v4_pair = v4_pair(&src, &dst);
    *e_encap = Some(h.encap);
    *e_payload_len = (tlen - hdrs - padcnt) as u32;
    *e_eth_src = h.eth_src;
    *e_icrc = icrc;
    *e_vcrc = vcrc;
    *e_ecn = h.ecn;
    *e_prio = h.prio;
    *e_udp_sport = h.udp_sport;
    *e_aeth = aeth;
    *e_ext = word;
    if e_cm.is_some() {
        *e_cm = None;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rdmascope_synth::{generate, GenOptions, Scenario, Sink};
    use rdmascope_wire::Frame;

    /// Every frame of a scenario with its link type and wire length.
    struct Frames(Vec<(u32, u32, Vec<u8>)>);
    impl Sink for Frames {
        fn frame(
            &mut self,
            iface: u32,
            _ts: u64,
            orig_len: u32,
            data: &[u8],
        ) -> std::io::Result<()> {
            let link = if iface == 0 {
                linktype::ETHERNET
            } else {
                linktype::ERF
            };
            self.0.push((link, orig_len, data.to_vec()));
            Ok(())
        }
    }

    fn meta(orig_len: u32) -> PacketMeta {
        PacketMeta {
            number: 7,
            ts_ns: 9,
            orig_len,
            if_id: 0,
            if_speed: None,
        }
    }

    fn general(link: u32, d: &[u8], orig_len: u32, opts: &DecodeOptions) -> Event {
        Frame::decode_with(link, d, orig_len, opts, |f| Event::new(meta(orig_len), f))
    }

    /// Where the quick path answers, it answers what the general decoder does.
    fn agrees(link: u32, d: &[u8], orig_len: u32, opts: &DecodeOptions) -> bool {
        let mut e = Event::default();
        if event(&mut e, meta(orig_len), link, d, orig_len, opts).is_some() {
            assert_eq!(e, general(link, d, orig_len, opts), "frame {d:02x?}");
            true
        } else {
            assert_eq!(e, Event::default(), "frame {d:02x?}");
            false
        }
    }

    /// The untagged Ethernet frames of `frames` as Linux cooked v1 and v2 captures (as
    /// `tcpdump -i any` writes them) would hold them.
    fn cooked(frames: &[(u32, u32, Vec<u8>)]) -> Vec<(u32, u32, Vec<u8>)> {
        let mut out = Vec::new();
        for (link, orig, d) in frames {
            if *link != linktype::ETHERNET || d.len() < 14 || d[12..14] == [0x81, 0x00] {
                continue;
            }
            let (ty, rest) = ([d[12], d[13]], &d[14..]);
            let mut v1 = vec![0, 4, 0, 1, 0, 6];
            v1.extend_from_slice(&d[6..12]);
            v1.extend([0, 0]);
            v1.extend(ty);
            v1.extend_from_slice(rest);
            out.push((linktype::LINUX_SLL, orig + 2, v1));
            let mut v2 = ty.to_vec();
            v2.extend([0, 0, 0, 0, 0, 3, 0, 1, 4, 6]);
            v2.extend_from_slice(&d[6..12]);
            v2.extend([0, 0]);
            v2.extend_from_slice(rest);
            out.push((linktype::LINUX_SLL2, orig + 6, v2));
        }
        out
    }

    /// The Ethernet frames of `frames` as a switch mirrors them (GRE with ERSPAN Type I, II or
    /// III, or bridged Ethernet, some with an outer VLAN tag) or VXLAN carries them, one kind
    /// after the other; a tagged frame's Type II mirror also without its tag (En = 2).
    fn mirrored(frames: &[(u32, u32, Vec<u8>)]) -> Vec<(u32, u32, Vec<u8>)> {
        use rdmascope_wire::ip::Ipv4Repr;
        use rdmascope_wire::udp::UdpRepr;
        let mut out = Vec::new();
        for (n, (link, orig, d)) in frames.iter().enumerate() {
            if *link != linktype::ETHERNET || d.len() < 14 {
                continue;
            }
            let n32 = n as u32;
            let (mut inner, mut inner_orig, mut tci) = (d.clone(), *orig, None);
            let kind = n % 7;
            if kind == 6 && d[12..14] == [0x81, 0x00] && d.len() >= 18 {
                tci = Some(u16::from_be_bytes([d[14], d[15]]));
                inner.drain(12..16);
                inner_orig -= 4;
            }
            let sequence = (kind != 0).then_some(n32);
            let g = |proto, key| GreRepr {
                flags_version: 0,
                protocol: proto,
                checksum: (n % 5 == 1).then_some(0),
                key,
                sequence,
            };
            let mut tail = Vec::new();
            let ip_proto = match kind {
                0 | 1 | 6 => {
                    let gr = g(gre::protocol::ERSPAN_II, None);
                    tail.resize(gr.header_len(), 0);
                    gr.emit(&mut tail);
                    if kind != 0 {
                        let e = ErspanRepr {
                            version: 1,
                            vlan: tci.map_or(100, |t| t & 0xfff),
                            cos: tci.map_or(3, |t| (t >> 13) as u8),
                            encap: if tci.is_some() { 2 } else { (n % 4) as u8 },
                            truncated: n % 11 == 0,
                            session: 5,
                            index: n32 & 0xfffff,
                            ..ErspanRepr::default()
                        };
                        let at = tail.len();
                        tail.resize(at + e.header_len(), 0);
                        e.emit(&mut tail[at..]);
                    }
                    gre::IP_PROTOCOL
                }
                2 | 3 => {
                    let gr = g(gre::protocol::ERSPAN_III, Some(0x77));
                    tail.resize(gr.header_len(), 0);
                    gr.emit(&mut tail);
                    let e = ErspanRepr {
                        version: 2,
                        vlan: 7,
                        cos: 5,
                        truncated: n % 13 == 0,
                        session: 1023,
                        timestamp: n32.wrapping_mul(1000),
                        frame_type: if n % 17 == 0 { 2 } else { 0 },
                        platform: (kind == 3).then_some(0x0800_0000_0000_1234),
                        ..ErspanRepr::default()
                    };
                    let at = tail.len();
                    tail.resize(at + e.header_len(), 0);
                    e.emit(&mut tail[at..]);
                    gre::IP_PROTOCOL
                }
                4 => {
                    let gr = g(gre::protocol::TEB, None);
                    tail.resize(gr.header_len(), 0);
                    gr.emit(&mut tail);
                    gre::IP_PROTOCOL
                }
                _ => {
                    tail.resize(16, 0);
                    VxlanRepr {
                        flags: vxlan::FLAG_I,
                        vni: 0x12345,
                    }
                    .emit(&mut tail[8..]);
                    protocol::UDP
                }
            };
            let tag = n % 3 == 0;
            let eth_len = 14 + if tag { 4 } else { 0 };
            let wire = eth_len as u32 + 20 + tail.len() as u32 + inner_orig;
            if ip_proto == protocol::UDP {
                UdpRepr {
                    src_port: 50000 + (n % 1000) as u16,
                    dst_port: vxlan::PORT,
                    length: (wire - eth_len as u32 - 20) as u16,
                    checksum: 0,
                }
                .emit(&mut tail[..8]);
            }
            let mut b = vec![2, 0xaa, 0, 0, 0, 1, 2, 0xbb, 0, 0, 0, 2];
            if tag {
                b.extend([0x81, 0x00, 0xa0, 0x09]);
            }
            b.extend([8, 0]);
            b.resize(eth_len + 20, 0);
            Ipv4Repr {
                header_len: 20,
                dscp: 0,
                ecn: 0,
                total_len: (wire - eth_len as u32) as u16,
                ident: n as u16,
                dont_frag: true,
                more_frags: false,
                frag_offset: 0,
                ttl: 64,
                protocol: ip_proto,
                checksum: 0,
                src: [192, 168, 9, 1],
                dst: [192, 168, 9, 2],
            }
            .emit(&mut b[eth_len..]);
            b.extend_from_slice(&tail);
            b.extend_from_slice(&inner);
            out.push((linktype::ETHERNET, wire, b));
        }
        out
    }

    fn scenario_frames(o: &GenOptions) -> Vec<(u32, u32, Vec<u8>)> {
        let mut f = Frames(Vec::new());
        generate(o, &mut f).unwrap();
        f.0
    }

    #[test]
    fn every_scenario_decodes_as_the_general_decoder_does() {
        let no_crc = DecodeOptions {
            verify_crc: false,
            ..DecodeOptions::default()
        };
        for scenario in Scenario::ALL {
            for (snaplen, ipv6, vlan) in [
                (65535, false, None),
                (128, false, None),
                (65535, false, Some((7, 3))),
                (100, false, Some((7, 5))),
                (65535, true, None),
            ] {
                let o = GenOptions {
                    scenario,
                    packets: Some(3000),
                    snaplen,
                    ipv6,
                    vlan,
                    corrupt_rate: 0.01,
                    ..GenOptions::default()
                };
                let mut quick = 0;
                let mut frames = scenario_frames(&o);
                let cooked = cooked(&frames);
                let mirrored = mirrored(&frames);
                // Most mirrored frames (all but ERSPAN III frames of type IP) take it too; with
                // port 4789 read as RoCEv2, VXLAN is not a tunnel.
                let mut vxlan_is_roce = DecodeOptions::default();
                vxlan_is_roce.add_roce_port(vxlan::PORT);
                let mirrored_quick = mirrored
                    .iter()
                    .filter(|(link, orig, d)| {
                        agrees(*link, d, *orig, &vxlan_is_roce);
                        agrees(*link, d, *orig, &DecodeOptions::default())
                    })
                    .count();
                assert!(
                    mirrored_quick * 10 >= mirrored.len() * 8,
                    "{} {snaplen} {vlan:?}: {mirrored_quick} of {}",
                    scenario.name(),
                    mirrored.len()
                );
                frames.extend(cooked);
                frames.extend(mirrored);
                for (link, orig, d) in &frames {
                    for opts in [DecodeOptions::default(), no_crc] {
                        quick += usize::from(agrees(*link, d, *orig, &opts));
                    }
                }
                // The quick path carries the data of every scenario (RoCEv2, also cooked and
                // mirrored, and native IB).
                assert!(
                    quick > frames.len(),
                    "{} {snaplen} {vlan:?}",
                    scenario.name()
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// Damaged RoCEv2 (Ethernet and cooked, IPv4 and IPv6) and native IB frames: flipped
        /// bytes (lengths, versions, next headers, LNHs, opcodes, ports) and cuts.
        #[test]
        fn damaged_frames_decode_as_the_general_decoder_does(
            pick in any::<prop::sample::Index>(),
            flips in prop::collection::vec((0usize..96, any::<u8>()), 0..4),
            cut in any::<prop::sample::Index>(),
            short_snap in any::<bool>(),
        ) {
            let (link, orig, mut d) = FRAMES.with(|f| f[pick.index(f.len())].clone());
            for (i, x) in flips {
                if let Some(b) = d.get_mut(i) {
                    *b ^= x;
                }
            }
            if short_snap {
                d.truncate(cut.index(d.len() + 1));
            }
            let _ = agrees(link, &d, orig, &DecodeOptions::default());
        }
    }

    /// Every single-bit flip in the headers of one frame of each kind (untagged and tagged
    /// Ethernet, IPv4 and IPv6, cooked, native IB; each opcode), whole and cut to 64 bytes, and
    /// every 16-bit field set to lengths around the headers' sizes: each flag and length the
    /// quick path tests, one at a time (random damage seldom hits one bit or a small length).
    #[test]
    fn every_header_bit_flip_decodes_as_the_general_decoder_does() {
        let mut picked: Vec<(u32, u32, Vec<u8>)> = Vec::new();
        FRAMES.with(|frames| {
            let mut seen = std::collections::BTreeSet::new();
            for (link, orig, d) in frames {
                let mut e = Event::default();
                if event(
                    &mut e,
                    meta(*orig),
                    *link,
                    d,
                    *orig,
                    &DecodeOptions::default(),
                )
                .is_none()
                {
                    continue;
                }
                // A mirrored frame by the layout of its tunnel's headers.
                let outer = (*link == linktype::ETHERNET)
                    .then(|| tunnel(d, false, &DecodeOptions::default()))
                    .flatten()
                    .map(|t| (t.inner_at, t.cos.is_some(), t.cut));
                let kind = (
                    *link,
                    d.get(12..14).map(<[u8]>::to_vec),
                    outer,
                    e.bth.map(|b| b.opcode),
                );
                if seen.insert(kind) {
                    picked.push((*link, *orig, d.clone()));
                }
            }
        });
        assert!(picked.len() >= 8, "{} kinds of frame", picked.len());
        let mut checked = 0;
        for (link, orig, d) in &picked {
            // The headers: a mirrored frame's tunnel headers come first.
            let span = 96 + tunnel(d, false, &DecodeOptions::default()).map_or(0, |t| t.inner_at);
            for cut in [d.len(), d.len().min(64), d.len().min(span - 32)] {
                for bit in 0..cut.min(span) * 8 {
                    let mut f = d[..cut].to_vec();
                    f[bit / 8] ^= 1 << (bit % 8);
                    agrees(*link, &f, *orig, &DecodeOptions::default());
                    checked += 1;
                }
            }
            // Lengths at and around each header's bounds, in every 16-bit field.
            for at in (0..d.len().min(span)).step_by(2) {
                for v in [0u16, 1, 7, 8, 11, 12, 19, 20, 27, 28, 40, 0xfffe] {
                    let mut f = d.clone();
                    for (k, b) in v.to_be_bytes().into_iter().enumerate() {
                        if let Some(x) = f.get_mut(at + k) {
                            *x = b;
                        }
                    }
                    agrees(*link, &f, *orig, &DecodeOptions::default());
                    checked += 1;
                }
            }
        }
        assert!(checked > 10_000, "{checked} frames");
    }

    thread_local! {
        static FRAMES: Vec<(u32, u32, Vec<u8>)> = scenario_frames(&GenOptions {
            scenario: Scenario::Mixed,
            packets: Some(2000),
            vlan: Some((3, 3)),
            ..GenOptions::default()
        })
        .into_iter()
        .chain(scenario_frames(&GenOptions {
            scenario: Scenario::Lossy,
            packets: Some(2000),
            ..GenOptions::default()
        }))
        .chain(scenario_frames(&GenOptions {
            scenario: Scenario::Mixed,
            packets: Some(2000),
            ipv6: true,
            ..GenOptions::default()
        }))
        .chain(scenario_frames(&GenOptions {
            scenario: Scenario::Ib,
            packets: Some(2000),
            ..GenOptions::default()
        }))
        .chain(cooked(&scenario_frames(&GenOptions {
            scenario: Scenario::Lossy,
            packets: Some(1000),
            ipv6: true,
            ..GenOptions::default()
        })))
        .chain(mirrored(&scenario_frames(&GenOptions {
            scenario: Scenario::Mixed,
            packets: Some(2000),
            vlan: Some((3, 5)),
            ..GenOptions::default()
        })))
        .chain(mirrored(&scenario_frames(&GenOptions {
            scenario: Scenario::Lossy,
            packets: Some(1000),
            ipv6: true,
            ..GenOptions::default()
        })))
        .collect();
    }
}
