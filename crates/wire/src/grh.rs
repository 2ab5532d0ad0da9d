//! InfiniBand Global Route Header (IBTA Vol 1 §8.3); RoCEv1 carries it after Ethernet.

use crate::bytes::{arr, be16, be32, put16, put32, Field};
use crate::{Error, Result};

mod field {
    use super::Field;
    pub const VER_TC_FL: Field = 0..4;
    pub const PAYLEN: Field = 4..6;
    pub const NXTHDR: usize = 6;
    pub const HOPLMT: usize = 7;
    pub const SGID: Field = 8..24;
    pub const DGID: Field = 24..40;
}

/// Length of the GRH.
pub const HEADER_LEN: usize = 40;
/// GRH NxtHdr value that announces an IBA transport header (BTH).
pub const NXTHDR_IBA: u8 = 0x1b;

/// A view of a GRH.
#[derive(Debug, Clone, Copy)]
pub struct GrhPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> GrhPacket<T> {
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
    fn w0(&self) -> u32 {
        be32(self.buffer.as_ref(), field::VER_TC_FL.start)
    }
    pub fn ipver(&self) -> u8 {
        (self.w0() >> 28) as u8
    }
    pub fn tclass(&self) -> u8 {
        (self.w0() >> 20) as u8
    }
    pub fn flowlabel(&self) -> u32 {
        self.w0() & 0xf_ffff
    }
    /// Bytes after the GRH through the ICRC.
    pub fn paylen(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PAYLEN.start)
    }
    pub fn nxthdr(&self) -> u8 {
        self.buffer.as_ref()[field::NXTHDR]
    }
    pub fn hoplmt(&self) -> u8 {
        self.buffer.as_ref()[field::HOPLMT]
    }
    pub fn sgid(&self) -> [u8; 16] {
        arr(self.buffer.as_ref(), field::SGID.start)
    }
    pub fn dgid(&self) -> [u8; 16] {
        arr(self.buffer.as_ref(), field::DGID.start)
    }
}

/// The GRH as plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrhRepr {
    pub ipver: u8,
    pub tclass: u8,
    pub flowlabel: u32,
    pub paylen: u16,
    pub nxthdr: u8,
    pub hoplmt: u8,
    pub sgid: [u8; 16],
    pub dgid: [u8; 16],
}

impl GrhRepr {
    pub fn parse<T: AsRef<[u8]>>(p: &GrhPacket<T>) -> Result<Self> {
        Ok(Self {
            ipver: p.ipver(),
            tclass: p.tclass(),
            flowlabel: p.flowlabel(),
            paylen: p.paylen(),
            nxthdr: p.nxthdr(),
            hoplmt: p.hoplmt(),
            sgid: p.sgid(),
            dgid: p.dgid(),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        let w = (u32::from(self.ipver & 0xf) << 28)
            | (u32::from(self.tclass) << 20)
            | (self.flowlabel & 0xf_ffff);
        put32(b, field::VER_TC_FL.start, w);
        put16(b, field::PAYLEN.start, self.paylen);
        b[field::NXTHDR] = self.nxthdr;
        b[field::HOPLMT] = self.hoplmt;
        b[field::SGID].copy_from_slice(&self.sgid);
        b[field::DGID].copy_from_slice(&self.dgid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    proptest! {
        #[test]
        fn round_trip(ipver in 0u8..16, tclass: u8, fl in 0u32..(1<<20), paylen: u16, nxthdr: u8, hoplmt: u8,
                      sgid: [u8;16], dgid: [u8;16]) {
            let r = GrhRepr { ipver, tclass, flowlabel: fl, paylen, nxthdr, hoplmt, sgid, dgid };
            let mut b = [0u8; 40];
            r.emit(&mut b);
            prop_assert_eq!(GrhRepr::parse(&GrhPacket::new_checked(&b[..]).unwrap()).unwrap(), r);
        }
    }
}
