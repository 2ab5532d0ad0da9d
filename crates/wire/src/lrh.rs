//! InfiniBand Local Route Header (IBTA Vol 1 §7.7).

use crate::bytes::{be16, put16, Field};
use crate::{Error, Result};

mod field {
    use super::Field;
    pub const VL_LVER: usize = 0;
    pub const SL_LNH: usize = 1;
    pub const DLID: Field = 2..4;
    pub const PKTLEN: Field = 4..6;
    pub const SLID: Field = 6..8;
}

/// Length of the LRH.
pub const HEADER_LEN: usize = 8;

/// Link Next Header values (§7.7.3).
pub mod lnh {
    /// Raw: a non-IBA transport follows (RWH with an EtherType); no ICRC.
    pub const RAW: u8 = 0;
    /// Raw IPv6: a non-IBA transport; no ICRC.
    pub const IP_NON_IBA: u8 = 1;
    /// IBA local: a BTH follows.
    pub const IBA_LOCAL: u8 = 2;
    /// IBA global: a GRH follows.
    pub const IBA_GLOBAL: u8 = 3;
}

/// A view of an LRH.
#[derive(Debug, Clone, Copy)]
pub struct LrhPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> LrhPacket<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        if p.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(p)
    }
    pub fn vl(&self) -> u8 {
        self.buffer.as_ref()[field::VL_LVER] >> 4
    }
    pub fn lver(&self) -> u8 {
        self.buffer.as_ref()[field::VL_LVER] & 0xf
    }
    pub fn sl(&self) -> u8 {
        self.buffer.as_ref()[field::SL_LNH] >> 4
    }
    pub fn reserved2(&self) -> u8 {
        (self.buffer.as_ref()[field::SL_LNH] >> 2) & 3
    }
    pub fn lnh(&self) -> u8 {
        self.buffer.as_ref()[field::SL_LNH] & 3
    }
    pub fn dlid(&self) -> u16 {
        be16(self.buffer.as_ref(), field::DLID.start)
    }
    /// Packet length in 4-byte words, LRH through ICRC.
    pub fn pktlen(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PKTLEN.start) & 0x07ff
    }
    pub fn reserved5(&self) -> u8 {
        (be16(self.buffer.as_ref(), field::PKTLEN.start) >> 11) as u8
    }
    pub fn slid(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SLID.start)
    }
}

/// The LRH as plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LrhRepr {
    pub vl: u8,
    pub lver: u8,
    pub sl: u8,
    pub lnh: u8,
    pub dlid: u16,
    pub pktlen: u16,
    pub slid: u16,
}

impl LrhRepr {
    pub fn parse<T: AsRef<[u8]>>(p: &LrhPacket<T>) -> Result<Self> {
        Ok(Self {
            vl: p.vl(),
            lver: p.lver(),
            sl: p.sl(),
            lnh: p.lnh(),
            dlid: p.dlid(),
            pktlen: p.pktlen(),
            slid: p.slid(),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        b[field::VL_LVER] = (self.vl << 4) | (self.lver & 0xf);
        b[field::SL_LNH] = (self.sl << 4) | (self.lnh & 3);
        put16(b, field::DLID.start, self.dlid);
        put16(b, field::PKTLEN.start, self.pktlen & 0x07ff);
        put16(b, field::SLID.start, self.slid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    proptest! {
        #[test]
        fn round_trip(vl in 0u8..16, lver in 0u8..16, sl in 0u8..16, lnh in 0u8..4, dlid: u16,
                      pktlen in 0u16..2048, slid: u16) {
            let r = LrhRepr { vl, lver, sl, lnh, dlid, pktlen, slid };
            let mut b = [0u8; 8];
            r.emit(&mut b);
            prop_assert_eq!(LrhRepr::parse(&LrhPacket::new_checked(&b[..]).unwrap()).unwrap(), r);
        }
    }
}
