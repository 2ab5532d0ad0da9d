//! UDP (RFC 768). RoCEv2 rides on destination port 4791 (IBTA Annex A17 §A17.4.2).

use crate::bytes::{be16, put16, Field};
use crate::{Error, Result};

/// The IANA-assigned RoCEv2 destination port.
pub const ROCE_V2_PORT: u16 = 4791;

mod field {
    use super::Field;
    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const LENGTH: Field = 4..6;
    pub const CHECKSUM: Field = 6..8;
}

/// Length of the UDP header.
pub const HEADER_LEN: usize = 8;

/// A view of a UDP datagram.
#[derive(Debug, Clone, Copy)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
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
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        if (self.len() as usize) < HEADER_LEN {
            return Err(Error::Malformed);
        }
        Ok(())
    }
    #[inline]
    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SRC_PORT.start)
    }
    #[inline]
    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::DST_PORT.start)
    }
    #[inline]
    pub fn len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH.start)
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() as usize <= HEADER_LEN
    }
    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }
}

/// The UDP header as plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub length: u16,
    pub checksum: u16,
}

impl UdpRepr {
    pub fn parse<T: AsRef<[u8]>>(p: &UdpPacket<T>) -> Result<Self> {
        p.check_len()?;
        Ok(Self {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            length: p.len(),
            checksum: p.checksum(),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        put16(b, field::SRC_PORT.start, self.src_port);
        put16(b, field::DST_PORT.start, self.dst_port);
        put16(b, field::LENGTH.start, self.length);
        put16(b, field::CHECKSUM.start, self.checksum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    proptest! {
        #[test]
        fn round_trip(s: u16, d: u16, l in 8u16.., c: u16) {
            let r = UdpRepr { src_port: s, dst_port: d, length: l, checksum: c };
            let mut b = [0u8; 8];
            r.emit(&mut b);
            prop_assert_eq!(UdpRepr::parse(&UdpPacket::new_checked(&b[..]).unwrap()).unwrap(), r);
        }
    }
    #[test]
    fn bad_length() {
        let b = [0, 1, 0x12, 0xb7, 0, 7, 0, 0];
        assert_eq!(
            UdpPacket::new_checked(&b[..]).unwrap_err(),
            Error::Malformed
        );
    }
}
