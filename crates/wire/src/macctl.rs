//! MAC Control frames: 802.3x PAUSE (opcode 0x0001) and 802.1Qbb PFC (opcode 0x0101,
//! IEEE 802.1Qbb §36.1.3), carried in EtherType 0x8808.

use crate::bytes::{be16, put16};
use crate::{Error, Result};

/// The MAC Control opcode of 802.3x PAUSE.
pub const OPCODE_PAUSE: u16 = 0x0001;
/// The MAC Control opcode of PFC (class-based flow control).
pub const OPCODE_PFC: u16 = 0x0101;
/// The reserved multicast address PAUSE and PFC frames go to.
pub const PAUSE_DST: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];
/// Bytes a MAC Control payload occupies before the pad (opcode + PFC fields).
pub const PFC_LEN: usize = 20;

/// A decoded MAC Control frame payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacControl {
    /// 802.3x PAUSE: pause time in quanta of 512 bit times.
    Pause { quanta: u16 },
    /// PFC: class-enable vector (bit n = priority n) and per-priority pause time.
    Pfc { enable: u8, quanta: [u16; 8] },
    /// Another MAC Control opcode (EPON MPCP and the like).
    Other { opcode: u16 },
}

impl MacControl {
    /// Parses the bytes after the EtherType.
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < 2 {
            return Err(Error::Truncated);
        }
        match be16(b, 0) {
            OPCODE_PAUSE => {
                if b.len() < 4 {
                    return Err(Error::Truncated);
                }
                Ok(Self::Pause { quanta: be16(b, 2) })
            }
            OPCODE_PFC => {
                if b.len() < PFC_LEN {
                    return Err(Error::Truncated);
                }
                let mut quanta = [0u16; 8];
                for (i, q) in quanta.iter_mut().enumerate() {
                    *q = be16(b, 4 + 2 * i);
                }
                Ok(Self::Pfc {
                    enable: b[3],
                    quanta,
                })
            }
            opcode => Ok(Self::Other { opcode }),
        }
    }
    /// Bytes `emit` writes (before the pad to the 60-byte minimum frame).
    pub fn buffer_len(&self) -> usize {
        match self {
            Self::Pause { .. } => 4,
            Self::Pfc { .. } => PFC_LEN,
            Self::Other { .. } => 2,
        }
    }
    pub fn emit(&self, b: &mut [u8]) {
        match *self {
            Self::Pause { quanta } => {
                put16(b, 0, OPCODE_PAUSE);
                put16(b, 2, quanta);
            }
            Self::Pfc { enable, quanta } => {
                put16(b, 0, OPCODE_PFC);
                b[2] = 0;
                b[3] = enable;
                for (i, q) in quanta.iter().enumerate() {
                    put16(b, 4 + 2 * i, *q);
                }
            }
            Self::Other { opcode } => put16(b, 0, opcode),
        }
    }
    pub fn opcode(&self) -> u16 {
        match *self {
            Self::Pause { .. } => OPCODE_PAUSE,
            Self::Pfc { .. } => OPCODE_PFC,
            Self::Other { opcode } => opcode,
        }
    }
}

/// Duration of `quanta` pause quanta (512 bit times each) at `link_bps`, in nanoseconds.
pub fn quanta_to_ns(quanta: u16, link_bps: u64) -> u64 {
    if link_bps == 0 {
        return 0;
    }
    (u64::from(quanta) * 512 * 1_000_000_000).div_ceil(link_bps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    proptest! {
        #[test]
        fn pfc_round_trip(enable: u8, quanta: [u16; 8]) {
            let m = MacControl::Pfc { enable, quanta };
            let mut b = [0u8; 20];
            m.emit(&mut b);
            prop_assert_eq!(MacControl::parse(&b).unwrap(), m);
        }
        #[test]
        fn pause_round_trip(q: u16) {
            let m = MacControl::Pause { quanta: q };
            let mut b = [0u8; 4];
            m.emit(&mut b);
            prop_assert_eq!(MacControl::parse(&b).unwrap(), m);
        }
    }
    #[test]
    fn quanta_times() {
        assert_eq!(quanta_to_ns(0xffff, 100_000_000_000), 335_540); // 65535 × 5.12 ns, rounded up
        assert_eq!(quanta_to_ns(1, 10_000_000_000), 52); // 51.2 ns rounded up
    }
}
