//! Base Transport Header (IBTA Vol 1 §9.2).

use crate::bytes::{be16, be24, put16, put24, Field};
use crate::{Error, Result};

mod field {
    use super::Field;
    pub const OPCODE: usize = 0;
    pub const SE_M_PAD_TVER: usize = 1;
    pub const PKEY: Field = 2..4;
    pub const RESV8A: usize = 4;
    pub const DESTQP: Field = 5..8;
    pub const A_RESV7: usize = 8;
    pub const PSN: Field = 9..12;
}

/// Length of the BTH.
pub const HEADER_LEN: usize = 12;
/// Byte offset of the Resv8a byte (FECN, BECN), masked by the ICRC.
pub const RESV8A_OFFSET: usize = field::RESV8A;

/// A view of a BTH.
#[derive(Debug, Clone, Copy)]
pub struct BthPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> BthPacket<T> {
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        if p.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(p)
    }
    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    #[inline]
    pub fn opcode(&self) -> u8 {
        self.b()[field::OPCODE]
    }
    /// Solicited Event.
    #[inline]
    pub fn se(&self) -> bool {
        self.b()[field::SE_M_PAD_TVER] & 0x80 != 0
    }
    /// MigReq.
    #[inline]
    pub fn m(&self) -> bool {
        self.b()[field::SE_M_PAD_TVER] & 0x40 != 0
    }
    #[inline]
    pub fn padcnt(&self) -> u8 {
        (self.b()[field::SE_M_PAD_TVER] >> 4) & 3
    }
    #[inline]
    pub fn tver(&self) -> u8 {
        self.b()[field::SE_M_PAD_TVER] & 0xf
    }
    #[inline]
    pub fn pkey(&self) -> u16 {
        be16(self.b(), field::PKEY.start)
    }
    /// Forward ECN (IB congestion control, Annex A10).
    #[inline]
    pub fn fecn(&self) -> bool {
        self.b()[field::RESV8A] & 0x80 != 0
    }
    /// Backward ECN; ConnectX sets it on RoCEv2 CNPs.
    #[inline]
    pub fn becn(&self) -> bool {
        self.b()[field::RESV8A] & 0x40 != 0
    }
    #[inline]
    pub fn resv6(&self) -> u8 {
        self.b()[field::RESV8A] & 0x3f
    }
    #[inline]
    pub fn destqp(&self) -> u32 {
        be24(self.b(), field::DESTQP.start)
    }
    #[inline]
    pub fn ackreq(&self) -> bool {
        self.b()[field::A_RESV7] & 0x80 != 0
    }
    #[inline]
    pub fn resv7(&self) -> u8 {
        self.b()[field::A_RESV7] & 0x7f
    }
    #[inline]
    pub fn psn(&self) -> u32 {
        be24(self.b(), field::PSN.start)
    }
}

/// The BTH as plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BthRepr {
    pub opcode: u8,
    pub se: bool,
    pub m: bool,
    pub padcnt: u8,
    pub tver: u8,
    pub pkey: u16,
    pub fecn: bool,
    pub becn: bool,
    pub resv6: u8,
    pub destqp: u32,
    pub ackreq: bool,
    pub resv7: u8,
    pub psn: u32,
}

impl BthRepr {
    pub fn parse<T: AsRef<[u8]>>(p: &BthPacket<T>) -> Result<Self> {
        Ok(Self {
            opcode: p.opcode(),
            se: p.se(),
            m: p.m(),
            padcnt: p.padcnt(),
            tver: p.tver(),
            pkey: p.pkey(),
            fecn: p.fecn(),
            becn: p.becn(),
            resv6: p.resv6(),
            destqp: p.destqp(),
            ackreq: p.ackreq(),
            resv7: p.resv7(),
            psn: p.psn(),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        b[field::OPCODE] = self.opcode;
        b[field::SE_M_PAD_TVER] = (u8::from(self.se) << 7)
            | (u8::from(self.m) << 6)
            | ((self.padcnt & 3) << 4)
            | (self.tver & 0xf);
        put16(b, field::PKEY.start, self.pkey);
        b[field::RESV8A] =
            (u8::from(self.fecn) << 7) | (u8::from(self.becn) << 6) | (self.resv6 & 0x3f);
        put24(b, field::DESTQP.start, self.destqp);
        b[field::A_RESV7] = (u8::from(self.ackreq) << 7) | (self.resv7 & 0x7f);
        put24(b, field::PSN.start, self.psn);
    }
}

/// Signed distance `a - b` in 24-bit PSN serial arithmetic (IBTA §9.7.1.1).
pub fn psn_diff(a: u32, b: u32) -> i32 {
    let d = a.wrapping_sub(b) & 0xff_ffff;
    ((d << 8) as i32) >> 8
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    proptest! {
        #[test]
        fn round_trip(opcode: u8, se: bool, m: bool, padcnt in 0u8..4, tver in 0u8..16, pkey: u16,
                      fecn: bool, becn: bool, resv6 in 0u8..64, destqp in 0u32..(1<<24), ackreq: bool,
                      resv7 in 0u8..128, psn in 0u32..(1<<24)) {
            let r = BthRepr { opcode, se, m, padcnt, tver, pkey, fecn, becn, resv6, destqp, ackreq, resv7, psn };
            let mut b = [0u8; 12];
            r.emit(&mut b);
            prop_assert_eq!(BthRepr::parse(&BthPacket::new_checked(&b[..]).unwrap()).unwrap(), r);
        }
    }
    #[test]
    fn psn_wrap() {
        assert_eq!(psn_diff(0, 0xff_ffff), 1);
        assert_eq!(psn_diff(0xff_ffff, 0), -1);
        assert_eq!(psn_diff(5, 3), 2);
        assert_eq!(psn_diff(0x7f_ffff, 0), 0x7f_ffff);
        assert_eq!(psn_diff(0x80_0000, 0), -0x80_0000);
    }
}
