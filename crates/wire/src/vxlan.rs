//! VXLAN (RFC 7348): an Ethernet frame in UDP to port 4789, as overlays carry tenant traffic and
//! cloud traffic mirroring delivers copies (AWS VPC Traffic Mirroring, for one).

use crate::bytes::{be16, be24, put16, put24};
use crate::{Error, Result};

/// The IANA-assigned VXLAN destination port.
pub const PORT: u16 = 4789;

/// Length of the VXLAN header.
pub const HEADER_LEN: usize = 8;

/// The I flag: the VNI is valid.
pub const FLAG_I: u16 = 0x0800;

/// The VXLAN header as plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VxlanRepr {
    /// The first 16 bits: the flags byte (I = 0x08) and, with GBP, its extension bits.
    pub flags: u16,
    /// The VXLAN network identifier.
    pub vni: u32,
}

impl VxlanRepr {
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(Self {
            flags: be16(b, 0),
            vni: be24(b, 4),
        })
    }
    /// Writes the header into `b` (at least [`HEADER_LEN`] bytes; the reserved bytes zero).
    pub fn emit(&self, b: &mut [u8]) {
        put16(b, 0, self.flags);
        b[2..4].fill(0);
        put24(b, 4, self.vni & 0x00ff_ffff);
        b[7] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trip(flags: u16, vni in 0u32..(1 << 24)) {
            let r = VxlanRepr { flags, vni };
            let mut b = [0xffu8; 8];
            r.emit(&mut b);
            prop_assert_eq!(VxlanRepr::parse(&b).unwrap(), r);
        }
    }

    #[test]
    fn known_bytes() {
        let b = [0x08, 0, 0, 0, 0x00, 0x12, 0x34, 0];
        assert_eq!(
            VxlanRepr::parse(&b),
            Ok(VxlanRepr {
                flags: FLAG_I,
                vni: 0x1234
            })
        );
        assert_eq!(VxlanRepr::parse(&b[..7]), Err(Error::Truncated));
    }
}
