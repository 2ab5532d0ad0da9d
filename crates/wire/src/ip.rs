//! IPv4 (RFC 791, DSCP/ECN per RFC 2474 / RFC 3168) and IPv6 (RFC 8200) fixed headers.

use crate::bytes::{arr, be16, be32, put16, put32, Field};
use crate::{Error, Result};

/// IP protocol numbers rdmascope names.
pub mod protocol {
    pub const ICMP: u8 = 1;
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
    pub const ICMPV6: u8 = 58;
}

/// ECN code point names (RFC 3168 §5).
pub fn ecn_name(ecn: u8) -> &'static str {
    match ecn & 3 {
        0 => "Not-ECT",
        1 => "ECT(1)",
        2 => "ECT(0)",
        _ => "CE",
    }
}

/// The Internet checksum (RFC 1071) of `data`.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum = 0u32;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

mod v4 {
    use super::Field;
    pub const VER_IHL: usize = 0;
    pub const TOS: usize = 1;
    pub const LENGTH: Field = 2..4;
    pub const IDENT: Field = 4..6;
    pub const FLG_OFF: Field = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Field = 10..12;
    pub const SRC: Field = 12..16;
    pub const DST: Field = 16..20;
}

/// Length of an IPv4 header without options.
pub const IPV4_HEADER_LEN: usize = 20;

/// A view of an IPv4 packet.
#[derive(Debug, Clone, Copy)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }
    /// Checks the fixed header and the IHL; the total length may exceed the buffer (snaplen).
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < IPV4_HEADER_LEN {
            return Err(Error::Truncated);
        }
        if self.version() != 4 || self.header_len() < IPV4_HEADER_LEN {
            return Err(Error::Malformed);
        }
        if b.len() < self.header_len() {
            return Err(Error::Truncated);
        }
        if (self.total_len() as usize) < self.header_len() {
            return Err(Error::Malformed);
        }
        Ok(())
    }
    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    #[inline]
    pub fn version(&self) -> u8 {
        self.b()[v4::VER_IHL] >> 4
    }
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.b()[v4::VER_IHL] & 0x0f) * 4
    }
    #[inline]
    pub fn dscp(&self) -> u8 {
        self.b()[v4::TOS] >> 2
    }
    #[inline]
    pub fn ecn(&self) -> u8 {
        self.b()[v4::TOS] & 3
    }
    #[inline]
    pub fn total_len(&self) -> u16 {
        be16(self.b(), v4::LENGTH.start)
    }
    #[inline]
    pub fn ident(&self) -> u16 {
        be16(self.b(), v4::IDENT.start)
    }
    #[inline]
    pub fn dont_frag(&self) -> bool {
        self.b()[v4::FLG_OFF.start] & 0x40 != 0
    }
    #[inline]
    pub fn more_frags(&self) -> bool {
        self.b()[v4::FLG_OFF.start] & 0x20 != 0
    }
    /// Fragment offset in bytes.
    #[inline]
    pub fn frag_offset(&self) -> u16 {
        (be16(self.b(), v4::FLG_OFF.start) & 0x1fff) * 8
    }
    #[inline]
    pub fn ttl(&self) -> u8 {
        self.b()[v4::TTL]
    }
    #[inline]
    pub fn protocol(&self) -> u8 {
        self.b()[v4::PROTOCOL]
    }
    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.b(), v4::CHECKSUM.start)
    }
    #[inline]
    pub fn src_addr(&self) -> [u8; 4] {
        arr(self.b(), v4::SRC.start)
    }
    #[inline]
    pub fn dst_addr(&self) -> [u8; 4] {
        arr(self.b(), v4::DST.start)
    }
    /// True when the header checksum verifies.
    #[inline]
    pub fn verify_checksum(&self) -> bool {
        checksum(&self.b()[..self.header_len()]) == 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    /// Recomputes the header checksum in place.
    pub fn fill_checksum(&mut self) {
        let hl = self.header_len();
        let b = self.buffer.as_mut();
        put16(b, v4::CHECKSUM.start, 0);
        let c = checksum(&b[..hl]);
        put16(b, v4::CHECKSUM.start, c);
    }
}

/// The IPv4 header as plain data (options are not kept; `header_len` records their size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Repr {
    pub header_len: u8,
    pub dscp: u8,
    pub ecn: u8,
    pub total_len: u16,
    pub ident: u16,
    pub dont_frag: bool,
    pub more_frags: bool,
    pub frag_offset: u16,
    pub ttl: u8,
    pub protocol: u8,
    pub checksum: u16,
    pub src: [u8; 4],
    pub dst: [u8; 4],
}

impl Ipv4Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv4Packet<T>) -> Result<Self> {
        p.check_len()?;
        Ok(Self {
            header_len: p.header_len() as u8,
            dscp: p.dscp(),
            ecn: p.ecn(),
            total_len: p.total_len(),
            ident: p.ident(),
            dont_frag: p.dont_frag(),
            more_frags: p.more_frags(),
            frag_offset: p.frag_offset(),
            ttl: p.ttl(),
            protocol: p.protocol(),
            checksum: p.checksum(),
            src: p.src_addr(),
            dst: p.dst_addr(),
        })
    }
    /// True when the packet is a fragment (offset non-zero or MF set).
    pub fn is_fragment(&self) -> bool {
        self.more_frags || self.frag_offset != 0
    }
    /// Emits a 20-byte header (no options) and fills in its checksum; `self.checksum` is ignored.
    pub fn emit(&self, b: &mut [u8]) {
        b[v4::VER_IHL] = 0x45;
        b[v4::TOS] = (self.dscp << 2) | (self.ecn & 3);
        put16(b, v4::LENGTH.start, self.total_len);
        put16(b, v4::IDENT.start, self.ident);
        let flags = (u16::from(self.dont_frag) << 14) | (u16::from(self.more_frags) << 13);
        put16(
            b,
            v4::FLG_OFF.start,
            flags | ((self.frag_offset / 8) & 0x1fff),
        );
        b[v4::TTL] = self.ttl;
        b[v4::PROTOCOL] = self.protocol;
        b[v4::SRC].copy_from_slice(&self.src);
        b[v4::DST].copy_from_slice(&self.dst);
        Ipv4Packet::new_unchecked(&mut b[..IPV4_HEADER_LEN]).fill_checksum();
    }
}

mod v6 {
    use super::Field;
    pub const VER_TC_FL: Field = 0..4;
    pub const LENGTH: Field = 4..6;
    pub const NXT_HDR: usize = 6;
    pub const HOP_LIMIT: usize = 7;
    pub const SRC: Field = 8..24;
    pub const DST: Field = 24..40;
}

/// Length of the IPv6 fixed header.
pub const IPV6_HEADER_LEN: usize = 40;

/// A view of an IPv6 packet.
#[derive(Debug, Clone, Copy)]
pub struct Ipv6Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv6Packet<T> {
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < IPV6_HEADER_LEN {
            return Err(Error::Truncated);
        }
        if b[0] >> 4 != 6 {
            return Err(Error::Malformed);
        }
        Ok(())
    }
    fn word0(&self) -> u32 {
        be32(self.buffer.as_ref(), v6::VER_TC_FL.start)
    }
    #[inline]
    pub fn traffic_class(&self) -> u8 {
        (self.word0() >> 20) as u8
    }
    #[inline]
    pub fn flow_label(&self) -> u32 {
        self.word0() & 0xf_ffff
    }
    #[inline]
    pub fn payload_len(&self) -> u16 {
        be16(self.buffer.as_ref(), v6::LENGTH.start)
    }
    #[inline]
    pub fn next_header(&self) -> u8 {
        self.buffer.as_ref()[v6::NXT_HDR]
    }
    #[inline]
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[v6::HOP_LIMIT]
    }
    #[inline]
    pub fn src_addr(&self) -> [u8; 16] {
        arr(self.buffer.as_ref(), v6::SRC.start)
    }
    #[inline]
    pub fn dst_addr(&self) -> [u8; 16] {
        arr(self.buffer.as_ref(), v6::DST.start)
    }
}

/// The IPv6 fixed header as plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6Repr {
    pub traffic_class: u8,
    pub flow_label: u32,
    pub payload_len: u16,
    pub next_header: u8,
    pub hop_limit: u8,
    pub src: [u8; 16],
    pub dst: [u8; 16],
}

impl Ipv6Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv6Packet<T>) -> Result<Self> {
        p.check_len()?;
        Ok(Self {
            traffic_class: p.traffic_class(),
            flow_label: p.flow_label(),
            payload_len: p.payload_len(),
            next_header: p.next_header(),
            hop_limit: p.hop_limit(),
            src: p.src_addr(),
            dst: p.dst_addr(),
        })
    }
    pub fn dscp(&self) -> u8 {
        self.traffic_class >> 2
    }
    pub fn ecn(&self) -> u8 {
        self.traffic_class & 3
    }
    pub fn emit(&self, b: &mut [u8]) {
        let w = (6u32 << 28) | (u32::from(self.traffic_class) << 20) | (self.flow_label & 0xf_ffff);
        put32(b, v6::VER_TC_FL.start, w);
        put16(b, v6::LENGTH.start, self.payload_len);
        b[v6::NXT_HDR] = self.next_header;
        b[v6::HOP_LIMIT] = self.hop_limit;
        b[v6::SRC].copy_from_slice(&self.src);
        b[v6::DST].copy_from_slice(&self.dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn v4_round_trip(dscp in 0u8..64, ecn in 0u8..4, len in 20u16.., ident: u16, df: bool, mf: bool,
                         off in 0u16..8192, ttl: u8, proto: u8, src: [u8;4], dst: [u8;4]) {
            let mut r = Ipv4Repr { header_len: 20, dscp, ecn, total_len: len, ident, dont_frag: df,
                more_frags: mf, frag_offset: off * 8, ttl, protocol: proto, checksum: 0, src, dst };
            let mut b = [0u8; 20];
            r.emit(&mut b);
            let p = Ipv4Packet::new_checked(&b[..]).unwrap();
            prop_assert!(p.verify_checksum());
            r.checksum = p.checksum();
            prop_assert_eq!(Ipv4Repr::parse(&p).unwrap(), r);
        }
        #[test]
        fn v6_round_trip(tc: u8, fl in 0u32..(1<<20), len: u16, nh: u8, hl: u8, src: [u8;16], dst: [u8;16]) {
            let r = Ipv6Repr { traffic_class: tc, flow_label: fl, payload_len: len, next_header: nh,
                hop_limit: hl, src, dst };
            let mut b = [0u8; 40];
            r.emit(&mut b);
            prop_assert_eq!(Ipv6Repr::parse(&Ipv6Packet::new_checked(&b[..]).unwrap()).unwrap(), r);
        }
        #[test]
        fn v4_never_panics(b in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(p) = Ipv4Packet::new_checked(&b[..]) { let _ = Ipv4Repr::parse(&p); }
        }
    }

    #[test]
    fn rejects_bad_ihl_and_version() {
        let mut b = [0u8; 20];
        b[0] = 0x44;
        assert_eq!(
            Ipv4Packet::new_checked(&b[..]).unwrap_err(),
            Error::Malformed
        );
        b[0] = 0x65;
        assert_eq!(
            Ipv4Packet::new_checked(&b[..]).unwrap_err(),
            Error::Malformed
        );
        b[0] = 0x46;
        b[3] = 24;
        assert_eq!(
            Ipv4Packet::new_checked(&b[..]).unwrap_err(),
            Error::Truncated
        );
    }

    #[test]
    fn ecn_names() {
        assert_eq!(ecn_name(0), "Not-ECT");
        assert_eq!(ecn_name(2), "ECT(0)");
        assert_eq!(ecn_name(3), "CE");
    }
}
