//! Ethernet II (IEEE 802.3) and 802.1Q / 802.1ad VLAN tags.

use crate::bytes::{arr, be16, put16, Field};
use crate::{Error, Result};

/// EtherType values rdmascope dispatches on.
pub mod ethertype {
    pub const IPV4: u16 = 0x0800;
    pub const ARP: u16 = 0x0806;
    pub const VLAN: u16 = 0x8100;
    pub const QINQ: u16 = 0x88a8;
    /// 802.1Q tag with the legacy 0x9100 TPID, seen on older QinQ gear.
    pub const QINQ_LEGACY: u16 = 0x9100;
    pub const IPV6: u16 = 0x86dd;
    pub const MAC_CONTROL: u16 = 0x8808;
    pub const LLDP: u16 = 0x88cc;
    /// RoCEv1 (IBTA Annex A16): a GRH follows.
    pub const ROCE_V1: u16 = 0x8915;
}

/// A MAC address.
pub type Mac = [u8; 6];

mod field {
    use super::Field;
    pub const DST: Field = 0..6;
    pub const SRC: Field = 6..12;
    pub const ETHERTYPE: Field = 12..14;
    pub const PAYLOAD: usize = 14;
}

/// Length of the Ethernet II header.
pub const HEADER_LEN: usize = field::PAYLOAD;

/// A read/write view of an Ethernet II frame.
#[derive(Debug, Clone, Copy)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self> {
        let f = Self::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }
    #[inline]
    pub fn dst_addr(&self) -> Mac {
        arr(self.buffer.as_ref(), field::DST.start)
    }
    #[inline]
    pub fn src_addr(&self) -> Mac {
        arr(self.buffer.as_ref(), field::SRC.start)
    }
    #[inline]
    pub fn ethertype(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ETHERTYPE.start)
    }
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    pub fn set_dst_addr(&mut self, a: Mac) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&a);
    }
    pub fn set_src_addr(&mut self, a: Mac) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&a);
    }
    pub fn set_ethertype(&mut self, t: u16) {
        put16(self.buffer.as_mut(), field::ETHERTYPE.start, t);
    }
}

/// The Ethernet II header as plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthernetRepr {
    pub dst: Mac,
    pub src: Mac,
    pub ethertype: u16,
}

impl EthernetRepr {
    pub fn parse<T: AsRef<[u8]>>(f: &EthernetFrame<T>) -> Result<Self> {
        f.check_len()?;
        Ok(Self {
            dst: f.dst_addr(),
            src: f.src_addr(),
            ethertype: f.ethertype(),
        })
    }
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, f: &mut EthernetFrame<T>) {
        f.set_dst_addr(self.dst);
        f.set_src_addr(self.src);
        f.set_ethertype(self.ethertype);
    }
}

/// Length of a VLAN tag's TCI plus the encapsulated EtherType (the TPID is the outer EtherType).
pub const VLAN_LEN: usize = 4;

/// An 802.1Q tag: the TCI and the EtherType it carries (IEEE 802.1Q §9.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlanRepr {
    /// The TPID that introduced this tag (0x8100, 0x88a8, 0x9100).
    pub tpid: u16,
    /// Priority code point, the priority PFC acts on.
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    pub vid: u16,
    pub ethertype: u16,
}

impl VlanRepr {
    /// Parses the 4 bytes after a TPID.
    pub fn parse(tpid: u16, b: &[u8]) -> Result<Self> {
        if b.len() < VLAN_LEN {
            return Err(Error::Truncated);
        }
        let tci = be16(b, 0);
        Ok(Self {
            tpid,
            pcp: (tci >> 13) as u8,
            dei: tci & 0x1000 != 0,
            vid: tci & 0x0fff,
            ethertype: be16(b, 2),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        let tci =
            (u16::from(self.pcp & 7) << 13) | (u16::from(self.dei) << 12) | (self.vid & 0xfff);
        put16(b, 0, tci);
        put16(b, 2, self.ethertype);
    }
}

/// True for the TPIDs rdmascope unwraps as VLAN tags.
pub fn is_vlan_tpid(t: u16) -> bool {
    matches!(
        t,
        ethertype::VLAN | ethertype::QINQ | ethertype::QINQ_LEGACY
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn eth_round_trip(dst in any::<[u8;6]>(), src in any::<[u8;6]>(), et in any::<u16>()) {
            let r = EthernetRepr { dst, src, ethertype: et };
            let mut buf = [0u8; HEADER_LEN];
            r.emit(&mut EthernetFrame::new_unchecked(&mut buf[..]));
            prop_assert_eq!(EthernetRepr::parse(&EthernetFrame::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }
        #[test]
        fn vlan_round_trip(pcp in 0u8..8, dei: bool, vid in 0u16..4096, et: u16) {
            let r = VlanRepr { tpid: ethertype::VLAN, pcp, dei, vid, ethertype: et };
            let mut buf = [0u8; 4];
            r.emit(&mut buf);
            prop_assert_eq!(VlanRepr::parse(ethertype::VLAN, &buf).unwrap(), r);
        }
    }

    #[test]
    fn short_is_truncated() {
        assert_eq!(
            EthernetFrame::new_checked(&[0u8; 13][..]).unwrap_err(),
            Error::Truncated
        );
        assert_eq!(
            VlanRepr::parse(0x8100, &[0u8; 3]).unwrap_err(),
            Error::Truncated
        );
    }
}
