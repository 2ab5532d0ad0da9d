//! Decoding a whole captured frame, layer by layer, without allocating.
//!
//! Every layer is optional. A frame cut by the capture's snaplen keeps what was decoded and is
//! marked `truncated`; only bytes that contradict their own headers give a [`DecodeError`].

use crate::bth::{BthPacket, BthRepr};
use crate::ethernet::{self, ethertype, EthernetFrame, EthernetRepr, VlanRepr};
use crate::ext::ExtHeaders;
use crate::gre::{ErspanRepr, GrePacket, GreRepr};
use crate::grh::{GrhPacket, GrhRepr};
use crate::ip::{protocol, Ipv4Packet, Ipv4Repr, Ipv6Packet, Ipv6Repr};
use crate::link::{erf_type, linktype, ErfRepr, IpoibRepr, Sll2Repr, SllRepr};
use crate::lrh::{lnh, LrhPacket, LrhRepr};
use crate::macctl::MacControl;
use crate::mad::Mad;
use crate::opcode::{OpInfo, Operation, Transport};
use crate::udp::{UdpPacket, UdpRepr, ROCE_V2_PORT};
use crate::vxlan::{self, VxlanRepr};
use crate::{bth, grh, icrc, Error};

/// The layer a decode error or a field belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Link,
    Ethernet,
    Vlan,
    MacControl,
    Ipv4,
    Ipv6,
    Udp,
    Tcp,
    /// GRE, ERSPAN or VXLAN.
    Tunnel,
    Lrh,
    Grh,
    Bth,
    Ext,
    Mad,
    Payload,
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Self::Link => "link header",
            Self::Ethernet => "Ethernet",
            Self::Vlan => "VLAN tag",
            Self::MacControl => "MAC control",
            Self::Ipv4 => "IPv4",
            Self::Ipv6 => "IPv6",
            Self::Udp => "UDP",
            Self::Tcp => "TCP",
            Self::Tunnel => "tunnel (GRE, ERSPAN, VXLAN)",
            Self::Lrh => "LRH",
            Self::Grh => "GRH",
            Self::Bth => "BTH",
            Self::Ext => "extension header",
            Self::Mad => "MAD",
            Self::Payload => "payload",
        }
    }
}

/// Why a frame could not be decoded to its end: the layer, the byte offset in the frame, and what
/// was wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeError {
    pub layer: Layer,
    pub offset: usize,
    pub kind: Error,
    pub what: &'static str,
}

impl core::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "malformed {} at byte {}: {}",
            self.layer.name(),
            self.offset,
            self.what
        )
    }
}

/// The outcome of checking an ICRC or VCRC. The discriminants are fixed: counters indexed by
/// status (`status as usize`, as `analyze` keeps them) rely on this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum IcrcStatus {
    Ok = 0,
    Bad = 1,
    /// The capture cut the frame before the CRC.
    Truncated = 2,
    /// The CRC cannot be computed (IP fragment, IPv6 extension headers).
    Unverifiable = 3,
}

impl IcrcStatus {
    pub fn name(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Bad => "bad",
            Self::Truncated => "truncated",
            Self::Unverifiable => "unverifiable",
        }
    }
}

/// How the RDMA packet was carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encap {
    RoceV2,
    RoceV1,
    Ib,
}

impl Encap {
    pub fn name(self) -> &'static str {
        match self {
            Self::RoceV2 => "RoCEv2",
            Self::RoceV1 => "RoCEv1",
            Self::Ib => "IB",
        }
    }
}

/// The pseudo-header in front of the packet, when the link type has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkHeader {
    None,
    Sll(SllRepr),
    Sll2(Sll2Repr),
    Erf(ErfRepr),
    Ipoib(IpoibRepr),
}

/// A short summary of non-RDMA traffic, for the one-line output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Other {
    Tcp {
        src_port: u16,
        dst_port: u16,
        seq: u32,
        ack: u32,
        flags: u8,
        payload_len: u16,
    },
    Icmp {
        ty: u8,
        code: u8,
    },
    Icmpv6 {
        ty: u8,
        code: u8,
    },
    Arp {
        op: u16,
        sender_ip: [u8; 4],
        target_ip: [u8; 4],
    },
    /// LLDP, whose LLDPDU starts at `at` in the frame ([`Frame::lldp`] walks it).
    Lldp {
        at: u32,
    },
    /// An 802.3 length field (LLC follows: STP and friends).
    Llc {
        dsap: u8,
        ssap: u8,
    },
}

/// Options of the decoder.
#[derive(Debug, Clone, Copy)]
pub struct DecodeOptions {
    /// UDP destination ports recognised as RoCEv2 (4791 first).
    pub roce_ports: [u16; 8],
    pub n_roce_ports: usize,
    /// Verify ICRCs and VCRCs (the most expensive step).
    pub verify_crc: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        let mut roce_ports = [0; 8];
        roce_ports[0] = ROCE_V2_PORT;
        Self {
            roce_ports,
            n_roce_ports: 1,
            verify_crc: true,
        }
    }
}

impl DecodeOptions {
    /// Adds a UDP port to recognise as RoCEv2; returns false when the table is full.
    pub fn add_roce_port(&mut self, p: u16) -> bool {
        if self.is_roce_port(p) {
            return true;
        }
        if self.n_roce_ports == self.roce_ports.len() {
            return false;
        }
        self.roce_ports[self.n_roce_ports] = p;
        self.n_roce_ports += 1;
        true
    }
    /// Whether UDP destination port `p` carries RoCEv2; the first port (4791, unless replaced)
    /// is checked on its own, as almost every packet asks for it.
    #[inline(always)]
    pub fn is_roce_port(&self, p: u16) -> bool {
        (self.n_roce_ports > 0 && p == self.roce_ports[0]) || self.is_other_roce_port(p)
    }

    #[inline(never)]
    fn is_other_roce_port(&self, p: u16) -> bool {
        self.roce_ports[..self.n_roce_ports].contains(&p)
    }
}

/// A decoded frame: every layer found, plus CRC checks and what stopped the decode.
#[derive(Debug, Clone)]
pub struct Frame<'a> {
    /// The captured bytes.
    pub data: &'a [u8],
    /// Length on the wire.
    pub orig_len: u32,
    pub linktype: u32,
    pub link: LinkHeader,
    pub eth: Option<EthernetRepr>,
    /// Up to two VLAN tags, outer first.
    pub vlans: [Option<VlanRepr>; 2],
    pub macctl: Option<MacControl>,
    pub ipv4: Option<Ipv4Repr>,
    pub ipv6: Option<Ipv6Repr>,
    pub udp: Option<UdpRepr>,
    pub other: Option<Other>,
    pub encap: Option<Encap>,
    /// The GRE tunnel (an ERSPAN mirror session) the frame came in; the layers above are those
    /// of the frame inside it.
    pub tunnel: Option<Tunnel>,
    pub lrh: Option<LrhRepr>,
    pub grh: Option<GrhRepr>,
    pub bth: Option<BthRepr>,
    pub ext: ExtHeaders,
    /// The payload is a MAD (UD SEND Only to QP0/QP1); decoded on demand by [`Frame::mad`].
    pub is_mad: bool,
    /// Offset of the RDMA payload in `data` and its length on the wire (without pad).
    pub payload_offset: usize,
    pub payload_len: usize,
    /// The ICRC as stored (read little-endian) and what checking it gave.
    pub icrc_value: Option<u32>,
    pub icrc: Option<IcrcStatus>,
    pub vcrc_value: Option<u16>,
    pub vcrc: Option<IcrcStatus>,
    /// The capture holds fewer bytes than the frame had on the wire.
    pub truncated: bool,
    pub error: Option<DecodeError>,
}

/// The outer headers of a frame that came through a tunnel: GRE (a switch's ERSPAN mirror
/// session, or transparent Ethernet bridging) or VXLAN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tunnel {
    pub eth: Option<EthernetRepr>,
    pub ipv4: Option<Ipv4Repr>,
    pub ipv6: Option<Ipv6Repr>,
    pub gre: Option<GreRepr>,
    pub erspan: Option<ErspanRepr>,
    pub udp: Option<UdpRepr>,
    pub vxlan: Option<VxlanRepr>,
    /// Where the frame inside starts: its length on the wire is the outer one less this.
    pub inner_at: usize,
}

/// Sign that a layer ran out of bytes; `Frame::fail` decides between truncated and malformed.
type Step = core::result::Result<(), ()>;

impl<'a> Frame<'a> {
    #[inline(always)]
    fn empty(linktype: u32, data: &'a [u8], orig_len: u32) -> Self {
        Self {
            data,
            orig_len,
            linktype,
            link: LinkHeader::None,
            eth: None,
            vlans: [None; 2],
            macctl: None,
            ipv4: None,
            ipv6: None,
            udp: None,
            other: None,
            encap: None,
            tunnel: None,
            lrh: None,
            grh: None,
            bth: None,
            ext: ExtHeaders::default(),
            is_mad: false,
            payload_offset: 0,
            payload_len: 0,
            icrc_value: None,
            icrc: None,
            vcrc_value: None,
            vcrc: None,
            truncated: (data.len() as u64) < u64::from(orig_len),
            error: None,
        }
    }

    /// Decodes `data` captured with link type `linktype`; `orig_len` is its length on the wire.
    #[inline(always)]
    pub fn decode(linktype: u32, data: &'a [u8], orig_len: u32, opts: &DecodeOptions) -> Self {
        let mut f = Self::empty(linktype, data, orig_len);
        let _ = f.link_layer(opts);
        f
    }

    /// Decodes like [`Frame::decode`] and hands the frame to `k`, without moving it: the frame is
    /// large, and a hot loop that only extracts a few fields saves the copy.
    #[inline(always)]
    pub fn decode_with<R>(
        linktype: u32,
        data: &'a [u8],
        orig_len: u32,
        opts: &DecodeOptions,
        k: impl FnOnce(&Self) -> R,
    ) -> R {
        let mut f = Self::empty(linktype, data, orig_len);
        let _ = f.link_layer(opts);
        k(&f)
    }

    /// The opcode row of the BTH, if there is one.
    pub fn op(&self) -> Option<&'static OpInfo> {
        self.bth.map(|b| OpInfo::of(b.opcode))
    }

    /// True when the frame carries a BTH (RoCEv1, RoCEv2 or IB transport).
    pub fn is_rdma(&self) -> bool {
        self.bth.is_some()
    }

    /// Records that `layer` at `offset` needs more bytes than there are.
    fn short(&mut self, layer: Layer, offset: usize, what: &'static str) -> Step {
        if !self.truncated {
            self.error = Some(DecodeError {
                layer,
                offset,
                kind: Error::Truncated,
                what,
            });
        } else if self.bth.is_some() {
            self.icrc = Some(IcrcStatus::Truncated);
        }
        Err(())
    }

    fn malformed(&mut self, layer: Layer, offset: usize, what: &'static str) -> Step {
        self.error = Some(DecodeError {
            layer,
            offset,
            kind: Error::Malformed,
            what,
        });
        Err(())
    }

    fn link_layer(&mut self, opts: &DecodeOptions) -> Step {
        let d = self.data;
        match self.linktype {
            linktype::ETHERNET => self.ethernet(0, opts),
            linktype::RAW | linktype::RAW_BSD12 | linktype::RAW_BSD14 => {
                match d.first().map(|b| b >> 4) {
                    Some(4) => self.ipv4(0, opts),
                    Some(6) => self.ipv6(0, opts),
                    Some(_) => self.malformed(
                        Layer::Link,
                        0,
                        "raw IP packet with an IP version other than 4 or 6",
                    ),
                    None => self.short(Layer::Link, 0, "empty packet"),
                }
            }
            linktype::IPV4 => self.ipv4(0, opts),
            linktype::IPV6 => self.ipv6(0, opts),
            linktype::LINUX_SLL => match SllRepr::parse(d) {
                Ok(s) => {
                    self.link = LinkHeader::Sll(s);
                    self.network(s.protocol, SllRepr::LEN, opts)
                }
                Err(_) => self.short(Layer::Link, 0, "Linux cooked header needs 16 bytes"),
            },
            linktype::LINUX_SLL2 => match Sll2Repr::parse(d) {
                Ok(s) => {
                    self.link = LinkHeader::Sll2(s);
                    self.network(s.protocol, Sll2Repr::LEN, opts)
                }
                Err(_) => self.short(Layer::Link, 0, "Linux cooked v2 header needs 20 bytes"),
            },
            linktype::IPOIB => match IpoibRepr::parse(d) {
                Ok(s) => {
                    self.link = LinkHeader::Ipoib(s);
                    self.network(s.ethertype, IpoibRepr::LEN, opts)
                }
                Err(_) => self.short(Layer::Link, 0, "IPoIB pseudo-header needs 44 bytes"),
            },
            linktype::INFINIBAND => self.lrh(0, opts),
            linktype::ERF => match ErfRepr::parse(d) {
                Ok((e, off)) => {
                    self.link = LinkHeader::Erf(e);
                    // The ERF wire length is the packet's real length.
                    if (d.len() - off.min(d.len())) < usize::from(e.wlen) {
                        self.truncated = true;
                    }
                    match e.rtype {
                        erf_type::INFINIBAND => self.lrh(off, opts),
                        erf_type::ETH => self.ethernet(off, opts),
                        _ => Ok(()),
                    }
                }
                Err(_) => self.short(Layer::Link, 0, "ERF header needs 16 bytes"),
            },
            _ => Ok(()),
        }
    }

    fn ethernet(&mut self, off: usize, opts: &DecodeOptions) -> Step {
        let d = self.data;
        let Ok(f) = EthernetFrame::new_checked(&d[off.min(d.len())..]) else {
            return self.short(Layer::Ethernet, off, "Ethernet header needs 14 bytes");
        };
        let Ok(e) = EthernetRepr::parse(&f) else {
            return Err(());
        };
        self.eth = Some(e);
        let mut ty = e.ethertype;
        let mut at = off + ethernet::HEADER_LEN;
        let mut n = 0;
        while ethernet::is_vlan_tpid(ty) {
            let Ok(v) = VlanRepr::parse(ty, &d[at.min(d.len())..]) else {
                return self.short(Layer::Vlan, at, "VLAN tag needs 4 bytes");
            };
            if n < self.vlans.len() {
                self.vlans[n] = Some(v);
            }
            n += 1;
            ty = v.ethertype;
            at += ethernet::VLAN_LEN;
        }
        if ty < 0x0600 {
            // An 802.3 length field: LLC (STP and the like).
            if let (Some(&dsap), Some(&ssap)) = (d.get(at), d.get(at + 1)) {
                self.other = Some(Other::Llc { dsap, ssap });
            }
            return Ok(());
        }
        self.network(ty, at, opts)
    }

    fn network(&mut self, ty: u16, at: usize, opts: &DecodeOptions) -> Step {
        let d = self.data;
        match ty {
            ethertype::IPV4 => self.ipv4(at, opts),
            ethertype::IPV6 => self.ipv6(at, opts),
            ethertype::ROCE_V1 => {
                self.encap = Some(Encap::RoceV1);
                self.grh_then_bth(at, opts)
            }
            ethertype::MAC_CONTROL => match MacControl::parse(&d[at.min(d.len())..]) {
                Ok(m) => {
                    self.macctl = Some(m);
                    Ok(())
                }
                Err(_) => self.short(
                    Layer::MacControl,
                    at,
                    "MAC control frame too short for its opcode",
                ),
            },
            ethertype::ARP => {
                // RFC 826: hardware/protocol lengths at 4/5, op at 6, then the addresses.
                if let Some(h) = d.get(at..at + 8) {
                    let (hl, pl) = (usize::from(h[4]), usize::from(h[5]));
                    let spa = at + 8 + hl;
                    let tpa = spa + pl + hl;
                    if pl == 4 && d.len() >= tpa + 4 {
                        let mut s = [0u8; 4];
                        let mut t = [0u8; 4];
                        s.copy_from_slice(&d[spa..spa + 4]);
                        t.copy_from_slice(&d[tpa..tpa + 4]);
                        self.other = Some(Other::Arp {
                            op: u16::from_be_bytes([h[6], h[7]]),
                            sender_ip: s,
                            target_ip: t,
                        });
                    }
                }
                Ok(())
            }
            ethertype::LLDP => {
                self.other = Some(Other::Lldp { at: at as u32 });
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn ipv4(&mut self, at: usize, opts: &DecodeOptions) -> Step {
        let d = self.data;
        let b = &d[at.min(d.len())..];
        let p = Ipv4Packet::new_unchecked(b);
        match p.check_len() {
            Ok(()) => {}
            Err(Error::Truncated) => return self.short(Layer::Ipv4, at, "IPv4 header cut short"),
            Err(Error::Malformed) => {
                return self.malformed(
                    Layer::Ipv4,
                    at,
                    "bad IPv4 version, header length or total length",
                )
            }
        }
        let Ok(ip) = Ipv4Repr::parse(&p) else {
            return Err(());
        };
        self.ipv4 = Some(ip);
        let hl = usize::from(ip.header_len);
        let end = at + usize::from(ip.total_len);
        if end > d.len() && !self.truncated {
            return self.malformed(
                Layer::Ipv4,
                at + 2,
                "IPv4 total length runs past the end of the frame",
            );
        }
        if ip.frag_offset != 0 {
            return Ok(());
        }
        self.transport(ip.protocol, at, hl, end, opts)
    }

    fn ipv6(&mut self, at: usize, opts: &DecodeOptions) -> Step {
        let d = self.data;
        let b = &d[at.min(d.len())..];
        let p = Ipv6Packet::new_unchecked(b);
        match p.check_len() {
            Ok(()) => {}
            Err(Error::Truncated) => return self.short(Layer::Ipv6, at, "IPv6 header cut short"),
            Err(Error::Malformed) => {
                return self.malformed(Layer::Ipv6, at, "IPv6 version field is not 6")
            }
        }
        let Ok(ip) = Ipv6Repr::parse(&p) else {
            return Err(());
        };
        self.ipv6 = Some(ip);
        let end = at + 40 + usize::from(ip.payload_len);
        if end > d.len() && !self.truncated {
            return self.malformed(
                Layer::Ipv6,
                at + 4,
                "IPv6 payload length runs past the end of the frame",
            );
        }
        // Walk extension headers (hop-by-hop, routing, fragment, destination options).
        let mut nh = ip.next_header;
        let mut hl = 40;
        while matches!(nh, 0 | 43 | 44 | 60) {
            let Some(h) = d.get(at + hl..at + hl + 2) else {
                return self.short(Layer::Ipv6, at + hl, "IPv6 extension header cut short");
            };
            if nh == 44 {
                // A fragment: only the first one carries the upper-layer header.
                let Some(fo) = d.get(at + hl + 2..at + hl + 4) else {
                    return self.short(Layer::Ipv6, at + hl, "IPv6 fragment header cut short");
                };
                if u16::from_be_bytes([fo[0], fo[1]]) & 0xfff8 != 0 {
                    return Ok(());
                }
                nh = h[0];
                hl += 8;
            } else {
                nh = h[0];
                hl += (usize::from(h[1]) + 1) * 8;
            }
        }
        self.transport(nh, at, hl, end, opts)
    }

    /// Upper layer of an IP packet that starts at `ip_at` with header length `hl` and ends
    /// (per its own length) at `end`.
    fn transport(
        &mut self,
        proto: u8,
        ip_at: usize,
        hl: usize,
        end: usize,
        opts: &DecodeOptions,
    ) -> Step {
        let d = self.data;
        let at = ip_at + hl;
        match proto {
            protocol::UDP => {
                let p = UdpPacket::new_unchecked(&d[at.min(d.len())..]);
                match p.check_len() {
                    Ok(()) => {}
                    Err(Error::Truncated) => {
                        return self.short(Layer::Udp, at, "UDP header cut short")
                    }
                    Err(Error::Malformed) => {
                        return self.malformed(Layer::Udp, at + 4, "UDP length below 8")
                    }
                }
                let Ok(u) = UdpRepr::parse(&p) else {
                    return Err(());
                };
                self.udp = Some(u);
                let udp_end = at + usize::from(u.length);
                if udp_end > end {
                    return self.malformed(
                        Layer::Udp,
                        at + 4,
                        "UDP length runs past the IP packet",
                    );
                }
                if u.dst_port == vxlan::PORT
                    && self.tunnel.is_none()
                    && !opts.is_roce_port(u.dst_port)
                {
                    return self.vxlan(at + 8, opts);
                }
                if opts.is_roce_port(u.dst_port) {
                    self.encap = Some(Encap::RoceV2);
                    let tstart = at + 8;
                    let tlen = usize::from(u.length) - 8;
                    self.bth_and_rest(tstart, tlen, opts)?;
                    self.check_icrc_v2(ip_at, hl, tstart + tlen, opts);
                }
                Ok(())
            }
            protocol::TCP => {
                if let Some(t) = d.get(at..at + 20) {
                    let doff = usize::from(t[12] >> 4) * 4;
                    self.other = Some(Other::Tcp {
                        src_port: u16::from_be_bytes([t[0], t[1]]),
                        dst_port: u16::from_be_bytes([t[2], t[3]]),
                        seq: u32::from_be_bytes([t[4], t[5], t[6], t[7]]),
                        ack: u32::from_be_bytes([t[8], t[9], t[10], t[11]]),
                        flags: t[13],
                        payload_len: end.saturating_sub(at + doff) as u16,
                    });
                }
                Ok(())
            }
            crate::gre::IP_PROTOCOL => self.gre(at, opts),
            protocol::ICMP | protocol::ICMPV6 => {
                if let Some(t) = d.get(at..at + 2) {
                    self.other = Some(if proto == protocol::ICMP {
                        Other::Icmp {
                            ty: t[0],
                            code: t[1],
                        }
                    } else {
                        Other::Icmpv6 {
                            ty: t[0],
                            code: t[1],
                        }
                    });
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// GRE at `at`: a mirrored (ERSPAN) or bridged Ethernet frame is decoded in place of the
    /// outer one, whose headers move into [`Frame::tunnel`]. One tunnel deep; other GRE payloads
    /// are left undecoded.
    fn gre(&mut self, at: usize, opts: &DecodeOptions) -> Step {
        use crate::gre::protocol as gp;
        if self.tunnel.is_some() {
            return Ok(());
        }
        let d = self.data;
        let Ok(p) = GrePacket::new_checked(&d[at.min(d.len())..]) else {
            return self.short(Layer::Tunnel, at, "GRE header cut short");
        };
        let Ok(gre) = GreRepr::parse(&p) else {
            return Err(());
        };
        let mut inner = at + gre.header_len();
        let mut erspan = None;
        match gre.protocol {
            // Type I: no sequence number, no ERSPAN header.
            gp::ERSPAN_II if gre.sequence.is_none() => {}
            gp::ERSPAN_II | gp::ERSPAN_III => {
                match ErspanRepr::parse(gre.protocol, &d[inner.min(d.len())..]) {
                    Ok(e) => {
                        inner += e.header_len();
                        erspan = Some(e);
                    }
                    Err(Error::Truncated) => {
                        return self.short(Layer::Tunnel, inner, "ERSPAN header cut short")
                    }
                    Err(Error::Malformed) => {
                        return self.malformed(
                            Layer::Tunnel,
                            inner,
                            "ERSPAN version does not match the GRE protocol type",
                        )
                    }
                }
            }
            gp::TEB => {}
            _ => return Ok(()),
        }
        self.tunnel = Some(Tunnel {
            eth: self.eth.take(),
            ipv4: self.ipv4.take(),
            ipv6: self.ipv6.take(),
            gre: Some(gre),
            erspan,
            udp: None,
            vxlan: None,
            inner_at: inner,
        });
        self.vlans = [None; 2];
        if erspan.is_some_and(|e| e.truncated) {
            self.truncated = true;
        }
        // ERSPAN III frame type 0 is an Ethernet frame; others (2: IP) are not decoded.
        if erspan.is_some_and(|e| e.version == 2 && e.frame_type != 0) {
            return Ok(());
        }
        self.ethernet(inner, opts)
    }

    /// VXLAN at `at`: the Ethernet frame inside is decoded in place of the outer one, as for GRE.
    fn vxlan(&mut self, at: usize, opts: &DecodeOptions) -> Step {
        let d = self.data;
        let Ok(v) = VxlanRepr::parse(&d[at.min(d.len())..]) else {
            return self.short(Layer::Tunnel, at, "VXLAN header cut short");
        };
        let inner = at + vxlan::HEADER_LEN;
        self.tunnel = Some(Tunnel {
            eth: self.eth.take(),
            ipv4: self.ipv4.take(),
            ipv6: self.ipv6.take(),
            gre: None,
            erspan: None,
            udp: self.udp.take(),
            vxlan: Some(v),
            inner_at: inner,
        });
        self.vlans = [None; 2];
        self.ethernet(inner, opts)
    }

    fn check_icrc_v2(&mut self, ip_at: usize, hl: usize, icrc_end: usize, opts: &DecodeOptions) {
        if self.bth.is_none() {
            return;
        }
        if self.ipv4.is_some_and(|ip| ip.is_fragment()) || (self.ipv6.is_some() && hl != 40) {
            self.icrc = Some(IcrcStatus::Unverifiable);
            return;
        }
        let icrc_at = icrc_end - 4;
        let Some(stored) = self.data.get(icrc_at..icrc_end).and_then(icrc::read_icrc) else {
            self.icrc = Some(IcrcStatus::Truncated);
            return;
        };
        self.icrc_value = Some(stored);
        if !opts.verify_crc {
            return;
        }
        self.icrc = Some(
            match icrc::rocev2(&self.data[ip_at..icrc_at], hl, self.ipv6.is_some()) {
                Some(c) if c == stored => IcrcStatus::Ok,
                Some(_) => IcrcStatus::Bad,
                None => IcrcStatus::Unverifiable,
            },
        );
    }

    /// GRH at `at`, then BTH (RoCEv1 or IB global). Verifies the ICRC.
    fn grh_then_bth(&mut self, at: usize, opts: &DecodeOptions) -> Step {
        let d = self.data;
        let Ok(p) = GrhPacket::new_checked(&d[at.min(d.len())..]) else {
            return self.short(Layer::Grh, at, "GRH needs 40 bytes");
        };
        let Ok(g) = GrhRepr::parse(&p) else {
            return Err(());
        };
        self.grh = Some(g);
        if g.nxthdr != grh::NXTHDR_IBA {
            return Ok(());
        }
        let tstart = at + grh::HEADER_LEN;
        let tlen = usize::from(g.paylen);
        if tstart + tlen > d.len() && !self.truncated {
            return self.malformed(
                Layer::Grh,
                at + 4,
                "GRH payload length runs past the end of the frame",
            );
        }
        self.bth_and_rest(tstart, tlen, opts)?;
        self.check_icrc_with(tstart + tlen, opts, |f, icrc_at| {
            icrc::grh_based(&f.data[at..icrc_at])
        });
        Ok(())
    }

    fn check_icrc_with(
        &mut self,
        icrc_end: usize,
        opts: &DecodeOptions,
        compute: impl Fn(&Self, usize) -> Option<u32>,
    ) {
        let icrc_at = icrc_end - 4;
        let Some(stored) = self.data.get(icrc_at..icrc_end).and_then(icrc::read_icrc) else {
            self.icrc = Some(IcrcStatus::Truncated);
            return;
        };
        self.icrc_value = Some(stored);
        if !opts.verify_crc {
            return;
        }
        self.icrc = Some(match compute(self, icrc_at) {
            Some(c) if c == stored => IcrcStatus::Ok,
            Some(_) => IcrcStatus::Bad,
            None => IcrcStatus::Unverifiable,
        });
    }

    /// Native IB: LRH at `at`.
    fn lrh(&mut self, at: usize, opts: &DecodeOptions) -> Step {
        let d = self.data;
        let Ok(p) = LrhPacket::new_checked(&d[at.min(d.len())..]) else {
            return self.short(Layer::Lrh, at, "LRH needs 8 bytes");
        };
        let Ok(l) = LrhRepr::parse(&p) else {
            return Err(());
        };
        self.lrh = Some(l);
        self.encap = Some(Encap::Ib);
        let pkt_end = at + usize::from(l.pktlen) * 4;
        if pkt_end < at + 8 {
            return self.malformed(Layer::Lrh, at + 4, "LRH PktLen shorter than the LRH");
        }
        if pkt_end > d.len() && !self.truncated {
            return self.malformed(
                Layer::Lrh,
                at + 4,
                "LRH PktLen runs past the end of the frame",
            );
        }
        // The headers after the LRH; the VCRC is read even when they fail (a frame cut
        // before its BTH still has its VCRC cut).
        let inner = match l.lnh {
            lnh::IBA_LOCAL => self
                .bth_and_rest(at + 8, pkt_end - (at + 8), opts)
                .map(|()| {
                    self.check_icrc_with(pkt_end, opts, |f, icrc_at| {
                        icrc::ib_local(&f.data[at..icrc_at])
                    })
                }),
            lnh::IBA_GLOBAL => self.grh_then_bth(at + 8, opts),
            lnh::IP_NON_IBA => {
                self.encap = None;
                self.ipv6(at + 8, opts)
            }
            _ => {
                // Raw: a 4-byte RWH (reserved, EtherType) follows.
                self.encap = None;
                match d.get(at + 8..at + 12) {
                    Some(r) => self.network(u16::from_be_bytes([r[2], r[3]]), at + 12, opts),
                    None => Ok(()),
                }
            }
        };
        // VCRC: the 2 bytes after PktLen×4, over LRH through ICRC.
        if let Some(v) = d.get(pkt_end..pkt_end + 2) {
            let stored = u16::from_le_bytes([v[0], v[1]]);
            self.vcrc_value = Some(stored);
            if opts.verify_crc {
                let ok = icrc::vcrc(&d[at..pkt_end]) == stored;
                self.vcrc = Some(if ok { IcrcStatus::Ok } else { IcrcStatus::Bad });
            }
        } else {
            self.vcrc = Some(IcrcStatus::Truncated);
        }
        inner
    }

    /// BTH at `tstart`; `tlen` bytes from the BTH through the ICRC per the enclosing headers.
    fn bth_and_rest(&mut self, tstart: usize, tlen: usize, _opts: &DecodeOptions) -> Step {
        let d = self.data;
        let Ok(p) = BthPacket::new_checked(&d[tstart.min(d.len())..]) else {
            return self.short(Layer::Bth, tstart, "BTH needs 12 bytes");
        };
        let Ok(b) = BthRepr::parse(&p) else {
            return Err(());
        };
        self.bth = Some(b);
        let info = OpInfo::of(b.opcode);
        let ext_len = info.ext_len();
        let hdrs = bth::HEADER_LEN + ext_len + 4;
        if tlen < hdrs + usize::from(b.padcnt) {
            return self.malformed(
                Layer::Bth,
                tstart,
                "transport length shorter than BTH, extension headers, pad and ICRC",
            );
        }
        let ext_at = tstart + bth::HEADER_LEN;
        // The opcode fixes the extension headers' length, so the payload's length is known
        // even when the capture cut them.
        self.payload_offset = ext_at + ext_len;
        self.payload_len = tlen - hdrs - usize::from(b.padcnt);
        let avail = &d[ext_at.min(d.len())..];
        if let Err(stop) = self.ext.parse_into(info.ext, avail) {
            return self.short(Layer::Ext, ext_at + stop, "extension header cut short");
        }
        // MADs travel on QP0/QP1 as UD SEND Only.
        self.is_mad =
            info.transport == Transport::Ud && info.op == Operation::SendOnly && b.destqp <= 1;
        Ok(())
    }

    /// The MAD this packet carries (common header and, for the CM class, the message), decoded
    /// from the captured payload; `None` when the packet carries none or it is cut too short.
    pub fn mad(&self) -> Option<Mad> {
        if self.is_mad {
            Mad::parse(self.payload()).ok()
        } else {
            None
        }
    }

    /// The LLDPDU of an LLDP frame (IEEE 802.1AB), for its TLVs.
    pub fn lldp(&self) -> Option<crate::lldp::LldpPacket<&'a [u8]>> {
        match self.other {
            Some(Other::Lldp { at }) => {
                crate::lldp::LldpPacket::new_checked(self.data.get(at as usize..)?).ok()
            }
            _ => None,
        }
    }

    /// The payload bytes present in the capture (may be fewer than `payload_len`).
    pub fn payload(&self) -> &'a [u8] {
        let s = self.payload_offset.min(self.data.len());
        let e = (self.payload_offset + self.payload_len).min(self.data.len());
        &self.data[s..e]
    }

    /// The VLAN priority of the innermost tag, if tagged; for a frame an ERSPAN Type II session
    /// mirrored without its 802.1Q tag (En = 2: the tag was there and is not kept), the priority
    /// ERSPAN carries for it (COS).
    pub fn pcp(&self) -> Option<u8> {
        self.vlans
            .iter()
            .rev()
            .flatten()
            .next()
            .map(|v| v.pcp)
            .or_else(|| {
                let e = self.tunnel?.erspan?;
                (e.version == 1 && e.encap == 2).then_some(e.cos)
            })
    }

    /// ECN bits of the IP header.
    pub fn ecn(&self) -> Option<u8> {
        self.ipv4.map(|i| i.ecn).or(self.ipv6.map(|i| i.ecn()))
    }

    /// DSCP of the IP header.
    pub fn dscp(&self) -> Option<u8> {
        self.ipv4.map(|i| i.dscp).or(self.ipv6.map(|i| i.dscp()))
    }
}
