//! Link types (tcpdump.org LINKTYPE_* values) and the pseudo-headers some of them put in front
//! of the packet: Linux cooked SLL/SLL2, ERF, IPoIB.

use crate::bytes::{arr, be16, be24, be32, put16, put24, put32};
use crate::{Error, Result};

/// LINKTYPE_* values rdmascope reads.
pub mod linktype {
    pub const ETHERNET: u32 = 1;
    /// DLT_RAW as some BSDs number it in files.
    pub const RAW_BSD12: u32 = 12;
    pub const RAW_BSD14: u32 = 14;
    pub const RAW: u32 = 101;
    pub const LINUX_SLL: u32 = 113;
    pub const ERF: u32 = 197;
    pub const IPOIB: u32 = 242;
    pub const INFINIBAND: u32 = 247;
    pub const IPV4: u32 = 228;
    pub const IPV6: u32 = 229;
    pub const LINUX_SLL2: u32 = 276;
}

/// True for the link types [`crate::Frame::decode`] understands.
pub fn is_supported(lt: u32) -> bool {
    use linktype::*;
    matches!(
        lt,
        ETHERNET
            | RAW_BSD12
            | RAW_BSD14
            | RAW
            | LINUX_SLL
            | ERF
            | IPOIB
            | INFINIBAND
            | IPV4
            | IPV6
            | LINUX_SLL2
    )
}

/// A short name of a link type.
pub fn linktype_name(lt: u32) -> &'static str {
    use linktype::*;
    match lt {
        ETHERNET => "Ethernet",
        RAW_BSD12 | RAW_BSD14 | RAW => "Raw IP",
        IPV4 => "Raw IPv4",
        IPV6 => "Raw IPv6",
        LINUX_SLL => "Linux cooked (SLL)",
        LINUX_SLL2 => "Linux cooked v2 (SLL2)",
        ERF => "ERF",
        IPOIB => "IP over InfiniBand",
        INFINIBAND => "InfiniBand",
        _ => "unknown",
    }
}

/// Linux cooked capture header v1 (16 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SllRepr {
    pub pkttype: u16,
    pub hatype: u16,
    pub halen: u16,
    pub addr: [u8; 8],
    pub protocol: u16,
}
impl SllRepr {
    pub const LEN: usize = 16;
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < Self::LEN {
            return Err(Error::Truncated);
        }
        Ok(Self {
            pkttype: be16(b, 0),
            hatype: be16(b, 2),
            halen: be16(b, 4),
            addr: arr(b, 6),
            protocol: be16(b, 14),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        put16(b, 0, self.pkttype);
        put16(b, 2, self.hatype);
        put16(b, 4, self.halen);
        b[6..14].copy_from_slice(&self.addr);
        put16(b, 14, self.protocol);
    }
}

/// Linux cooked capture header v2 (20 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sll2Repr {
    pub protocol: u16,
    pub ifindex: u32,
    pub hatype: u16,
    pub pkttype: u8,
    pub halen: u8,
    pub addr: [u8; 8],
}
impl Sll2Repr {
    pub const LEN: usize = 20;
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < Self::LEN {
            return Err(Error::Truncated);
        }
        Ok(Self {
            protocol: be16(b, 0),
            ifindex: be32(b, 4),
            hatype: be16(b, 8),
            pkttype: b[10],
            halen: b[11],
            addr: arr(b, 12),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        put16(b, 0, self.protocol);
        put16(b, 2, 0);
        put32(b, 4, self.ifindex);
        put16(b, 8, self.hatype);
        b[10] = self.pkttype;
        b[11] = self.halen;
        b[12..20].copy_from_slice(&self.addr);
    }
}

/// ERF record types rdmascope decodes.
pub mod erf_type {
    pub const ETH: u8 = 2;
    pub const INFINIBAND: u8 = 21;
}

/// The ERF record header (Endace ERF, 16 bytes) and its extension headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErfRepr {
    /// The ERF timestamp (32.32 fixed point, little-endian). rdmascope uses the pcap record time:
    /// ibdump's ERF time jumps by a second when the microseconds reach 999,993.
    pub ts: u64,
    /// Record type without the extension-header bit.
    pub rtype: u8,
    pub flags: u8,
    pub rlen: u16,
    pub lctr: u16,
    pub wlen: u16,
    /// Number of 8-byte extension headers.
    pub ext_headers: u8,
}
impl ErfRepr {
    pub const LEN: usize = 16;
    /// Parses the header and skips extension headers; returns the offset of the payload
    /// (after the 2-byte pad of Ethernet records).
    pub fn parse(b: &[u8]) -> Result<(Self, usize)> {
        if b.len() < Self::LEN {
            return Err(Error::Truncated);
        }
        let mut ts = [0u8; 8];
        ts.copy_from_slice(&b[..8]);
        let mut r = Self {
            ts: u64::from_le_bytes(ts),
            rtype: b[8] & 0x7f,
            flags: b[9],
            rlen: be16(b, 10),
            lctr: be16(b, 12),
            wlen: be16(b, 14),
            ext_headers: 0,
        };
        let mut off = Self::LEN;
        let mut more = b[8] & 0x80 != 0;
        while more {
            let h = b.get(off).ok_or(Error::Truncated)?;
            more = h & 0x80 != 0;
            off += 8;
            r.ext_headers = r.ext_headers.saturating_add(1);
            if off > b.len() {
                return Err(Error::Truncated);
            }
        }
        if r.rtype == erf_type::ETH {
            off += 2;
        }
        Ok((r, off))
    }
    pub fn emit(&self, b: &mut [u8]) {
        b[..8].copy_from_slice(&self.ts.to_le_bytes());
        b[8] = self.rtype;
        b[9] = self.flags;
        put16(b, 10, self.rlen);
        put16(b, 12, self.lctr);
        put16(b, 14, self.wlen);
    }
}

/// The LINKTYPE_IPOIB pseudo-header (44 bytes): two 20-byte IPoIB hardware addresses (flags +
/// QPN, then GID; source first, destination second) and the RFC 4391 encapsulation header
/// (EtherType + reserved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpoibRepr {
    pub src_qpn: u32,
    pub src_gid: [u8; 16],
    pub dst_qpn: u32,
    pub dst_gid: [u8; 16],
    pub ethertype: u16,
}
impl IpoibRepr {
    pub const LEN: usize = 44;
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < Self::LEN {
            return Err(Error::Truncated);
        }
        Ok(Self {
            src_qpn: be24(b, 1),
            src_gid: arr(b, 4),
            dst_qpn: be24(b, 21),
            dst_gid: arr(b, 24),
            ethertype: be16(b, 40),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        b[0] = 0;
        put24(b, 1, self.src_qpn);
        b[4..20].copy_from_slice(&self.src_gid);
        b[20] = 0;
        put24(b, 21, self.dst_qpn);
        b[24..40].copy_from_slice(&self.dst_gid);
        put16(b, 40, self.ethertype);
        put16(b, 42, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn round_trips() {
        let s = SllRepr {
            pkttype: 4,
            hatype: 1,
            halen: 6,
            addr: [1, 2, 3, 4, 5, 6, 0, 0],
            protocol: 0x0800,
        };
        let mut b = [0u8; 16];
        s.emit(&mut b);
        assert_eq!(SllRepr::parse(&b).unwrap(), s);
        let s2 = Sll2Repr {
            protocol: 0x86dd,
            ifindex: 7,
            hatype: 1,
            pkttype: 0,
            halen: 6,
            addr: [9; 8],
        };
        let mut b = [0u8; 20];
        s2.emit(&mut b);
        assert_eq!(Sll2Repr::parse(&b).unwrap(), s2);
        let i = IpoibRepr {
            src_qpn: 7,
            src_gid: [1; 16],
            dst_qpn: 0x550,
            dst_gid: [0xfe; 16],
            ethertype: 0x0800,
        };
        let mut b = [0u8; 44];
        i.emit(&mut b);
        assert_eq!(IpoibRepr::parse(&b).unwrap(), i);
        let e = ErfRepr {
            ts: 42,
            rtype: 21,
            flags: 5,
            rlen: 312,
            lctr: 0,
            wlen: 290,
            ext_headers: 0,
        };
        let mut b = [0u8; 16];
        e.emit(&mut b);
        assert_eq!(ErfRepr::parse(&b).unwrap(), (e, 16));
    }
}
