//! GRE (RFC 2784, with RFC 2890's key and sequence number) and the ERSPAN headers it carries
//! when a switch mirrors a port to a remote collector (draft-foschiano-erspan-03): Type I
//! (protocol 0x88BE without a sequence number: the mirrored frame follows at once), Type II
//! (0x88BE, an 8-byte header) and Type III (0x22EB, a 12-byte header and an optional 8-byte
//! platform subheader). GRE protocol 0x6558 carries a whole Ethernet frame too (transparent
//! Ethernet bridging).

use crate::bytes::{be16, be32, put16, put32, Field};
use crate::{Error, Result};

/// The IP protocol number of GRE.
pub const IP_PROTOCOL: u8 = 47;

/// GRE protocol types that carry a mirrored or bridged Ethernet frame.
pub mod protocol {
    /// ERSPAN Type I and II.
    pub const ERSPAN_II: u16 = 0x88be;
    /// ERSPAN Type III.
    pub const ERSPAN_III: u16 = 0x22eb;
    /// Transparent Ethernet bridging.
    pub const TEB: u16 = 0x6558;
}

mod field {
    use super::Field;
    pub const FLAGS_VERSION: Field = 0..2;
    pub const PROTOCOL: Field = 2..4;
}

const C: u16 = 0x8000;
const K: u16 = 0x2000;
const S: u16 = 0x1000;

/// Length of the GRE header without its optional fields.
pub const HEADER_LEN: usize = 4;

/// A view of a GRE header.
#[derive(Debug, Clone, Copy)]
pub struct GrePacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> GrePacket<T> {
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
    /// The buffer holds the header with the optional fields its flags announce.
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN || b.len() < self.header_len() {
            return Err(Error::Truncated);
        }
        Ok(())
    }
    #[inline]
    pub fn flags_version(&self) -> u16 {
        be16(self.buffer.as_ref(), field::FLAGS_VERSION.start)
    }
    #[inline]
    pub fn protocol(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PROTOCOL.start)
    }
    /// The header's length: 4 bytes, plus 4 for each of checksum, key and sequence present.
    #[inline]
    pub fn header_len(&self) -> usize {
        let f = self.flags_version();
        HEADER_LEN + [C, K, S].iter().filter(|&&b| f & b != 0).count() * 4
    }
    /// The optional field of `flag`, if set; it follows those of the `earlier` flags set.
    fn optional(&self, flag: u16, earlier: &[u16]) -> Option<u32> {
        let f = self.flags_version();
        (f & flag != 0).then(|| {
            let at = HEADER_LEN + earlier.iter().filter(|&&b| f & b != 0).count() * 4;
            be32(self.buffer.as_ref(), at)
        })
    }
}

/// The GRE header as plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GreRepr {
    /// The flag bits and version as sent (C, R, K, S, s, Recur, Flags, Ver).
    pub flags_version: u16,
    pub protocol: u16,
    /// Checksum and reserved word (when C is set).
    pub checksum: Option<u32>,
    pub key: Option<u32>,
    pub sequence: Option<u32>,
}

impl GreRepr {
    pub fn parse<T: AsRef<[u8]>>(p: &GrePacket<T>) -> Result<Self> {
        p.check_len()?;
        Ok(Self {
            flags_version: p.flags_version(),
            protocol: p.protocol(),
            checksum: p.optional(C, &[]),
            key: p.optional(K, &[C]),
            sequence: p.optional(S, &[C, K]),
        })
    }
    /// The flags of the optional fields present, the other bits as given.
    fn flags(&self) -> u16 {
        let mut f = self.flags_version & !(C | K | S);
        for (v, b) in [(self.checksum, C), (self.key, K), (self.sequence, S)] {
            if v.is_some() {
                f |= b;
            }
        }
        f
    }
    pub fn header_len(&self) -> usize {
        HEADER_LEN
            + [self.checksum, self.key, self.sequence]
                .iter()
                .flatten()
                .count()
                * 4
    }
    /// Writes the header into `b` (at least [`GreRepr::header_len`] bytes).
    pub fn emit(&self, b: &mut [u8]) {
        put16(b, field::FLAGS_VERSION.start, self.flags());
        put16(b, field::PROTOCOL.start, self.protocol);
        let mut at = HEADER_LEN;
        for v in [self.checksum, self.key, self.sequence]
            .into_iter()
            .flatten()
        {
            put32(b, at, v);
            at += 4;
        }
    }
}

/// An ERSPAN header: Type II (`version` 1) or Type III (`version` 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ErspanRepr {
    pub version: u8,
    /// The mirrored frame's VLAN and class of service.
    pub vlan: u16,
    pub cos: u8,
    /// Type II: how the frame was encapsulated (En); Type III: bad/short-frame status (BSO).
    pub encap: u8,
    /// The mirrored frame was cut to fit.
    pub truncated: bool,
    /// The mirror session.
    pub session: u16,
    /// Type II: the port or module index.
    pub index: u32,
    /// Type III: the timestamp, security group tag, P, frame type, hardware ID, direction
    /// (ingress 0, egress 1), timestamp granularity and whether a platform subheader follows.
    pub timestamp: u32,
    pub sgt: u16,
    pub p: bool,
    pub frame_type: u8,
    pub hw_id: u8,
    pub direction: bool,
    pub granularity: u8,
    pub platform: Option<u64>,
}

/// Length of the ERSPAN Type II header.
pub const ERSPAN_II_LEN: usize = 8;
/// Length of the ERSPAN Type III header without its platform subheader.
pub const ERSPAN_III_LEN: usize = 12;

impl ErspanRepr {
    /// Parses the ERSPAN header that GRE `protocol` announces, at the start of `b`.
    pub fn parse(protocol: u16, b: &[u8]) -> Result<Self> {
        let min = if protocol == protocol::ERSPAN_III {
            ERSPAN_III_LEN
        } else {
            ERSPAN_II_LEN
        };
        if b.len() < min {
            return Err(Error::Truncated);
        }
        let w0 = be16(b, 0);
        let w1 = be16(b, 2);
        let mut r = Self {
            version: (w0 >> 12) as u8,
            vlan: w0 & 0x0fff,
            cos: (w1 >> 13) as u8,
            encap: ((w1 >> 11) & 3) as u8,
            truncated: w1 & 0x0400 != 0,
            session: w1 & 0x03ff,
            ..Self::default()
        };
        match (protocol, r.version) {
            (protocol::ERSPAN_II, 1) => r.index = be32(b, 4) & 0x000f_ffff,
            (protocol::ERSPAN_III, 2) => {
                r.timestamp = be32(b, 4);
                r.sgt = be16(b, 8);
                let w = be16(b, 10);
                r.p = w & 0x8000 != 0;
                r.frame_type = ((w >> 10) & 0x1f) as u8;
                r.hw_id = ((w >> 4) & 0x3f) as u8;
                r.direction = w & 0x0008 != 0;
                r.granularity = ((w >> 1) & 3) as u8;
                if w & 1 != 0 {
                    let s = b.get(12..20).ok_or(Error::Truncated)?;
                    r.platform = Some(u64::from_be_bytes(
                        s.try_into().map_err(|_| Error::Truncated)?,
                    ));
                }
            }
            _ => return Err(Error::Malformed),
        }
        Ok(r)
    }

    /// Its length: 8 bytes (Type II), 12 or 20 (Type III, with the platform subheader).
    pub fn header_len(&self) -> usize {
        match self.version {
            2 => ERSPAN_III_LEN + if self.platform.is_some() { 8 } else { 0 },
            _ => ERSPAN_II_LEN,
        }
    }

    /// Writes the header into `b` (at least [`ErspanRepr::header_len`] bytes).
    pub fn emit(&self, b: &mut [u8]) {
        put16(b, 0, u16::from(self.version) << 12 | self.vlan & 0x0fff);
        put16(
            b,
            2,
            u16::from(self.cos & 7) << 13
                | u16::from(self.encap & 3) << 11
                | u16::from(self.truncated) << 10
                | self.session & 0x03ff,
        );
        if self.version == 2 {
            put32(b, 4, self.timestamp);
            put16(b, 8, self.sgt);
            let w = u16::from(self.p) << 15
                | u16::from(self.frame_type & 0x1f) << 10
                | u16::from(self.hw_id & 0x3f) << 4
                | u16::from(self.direction) << 3
                | u16::from(self.granularity & 3) << 1
                | u16::from(self.platform.is_some());
            put16(b, 10, w);
            if let Some(p) = self.platform {
                b[12..20].copy_from_slice(&p.to_be_bytes());
            }
        } else {
            put32(b, 4, self.index & 0x000f_ffff);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn gre_round_trip(fv in 0u16..8, proto: u16, c: Option<u32>, k: Option<u32>, s: Option<u32>) {
            let r = GreRepr { flags_version: fv, protocol: proto, checksum: c, key: k, sequence: s };
            let mut b = [0u8; 16];
            r.emit(&mut b);
            let p = GrePacket::new_checked(&b[..r.header_len()]).unwrap();
            prop_assert_eq!(p.header_len(), r.header_len());
            prop_assert_eq!(GreRepr::parse(&p).unwrap(), GreRepr { flags_version: r.flags(), ..r });
        }

        #[test]
        fn erspan_ii_round_trip(vlan in 0u16..4096, cos in 0u8..8, en in 0u8..4, t: bool,
                                session in 0u16..1024, index in 0u32..(1 << 20)) {
            let r = ErspanRepr { version: 1, vlan, cos, encap: en, truncated: t, session, index,
                                 ..ErspanRepr::default() };
            let mut b = [0u8; 8];
            r.emit(&mut b);
            prop_assert_eq!(ErspanRepr::parse(protocol::ERSPAN_II, &b).unwrap(), r);
        }

        #[test]
        fn erspan_iii_round_trip(vlan in 0u16..4096, cos in 0u8..8, bso in 0u8..4, t: bool,
                                 session in 0u16..1024, ts: u32, sgt: u16, p: bool,
                                 ft in 0u8..32, hw in 0u8..64, d: bool, gra in 0u8..4,
                                 platform: Option<u64>) {
            let r = ErspanRepr { version: 2, vlan, cos, encap: bso, truncated: t, session,
                                 index: 0, timestamp: ts, sgt, p, frame_type: ft, hw_id: hw,
                                 direction: d, granularity: gra, platform };
            let mut b = [0u8; 20];
            r.emit(&mut b);
            prop_assert_eq!(ErspanRepr::parse(protocol::ERSPAN_III, &b[..r.header_len()]).unwrap(), r);
        }

        /// Any bytes: parsing returns, never panics.
        #[test]
        fn never_panics(b in proptest::collection::vec(any::<u8>(), 0..32), proto: u16) {
            if let Ok(p) = GrePacket::new_checked(&b[..]) {
                let _ = GreRepr::parse(&p);
            }
            let _ = ErspanRepr::parse(proto, &b);
        }
    }

    /// A Type II header as a Cisco switch sends it: version 1, VLAN 100, CoS 3, session 5,
    /// index 7; GRE with the S bit and sequence number 9.
    #[test]
    fn known_bytes() {
        let gre = [0x10, 0x00, 0x88, 0xbe, 0, 0, 0, 9];
        let g = GreRepr::parse(&GrePacket::new_checked(&gre[..]).unwrap()).unwrap();
        assert_eq!(
            (g.protocol, g.sequence, g.key, g.header_len()),
            (0x88be, Some(9), None, 8)
        );
        let e = [0x10, 0x64, 0x60, 0x05, 0, 0, 0, 7];
        let r = ErspanRepr::parse(protocol::ERSPAN_II, &e).unwrap();
        assert_eq!(
            (r.version, r.vlan, r.cos, r.session, r.index),
            (1, 100, 3, 5, 7)
        );
        assert_eq!(
            ErspanRepr::parse(protocol::ERSPAN_II, &e[..7]),
            Err(Error::Truncated)
        );
        // A Type III version under the Type II protocol is not ERSPAN II.
        let mut bad = e;
        bad[0] = 0x20;
        assert_eq!(
            ErspanRepr::parse(protocol::ERSPAN_II, &bad),
            Err(Error::Malformed)
        );
    }
}
