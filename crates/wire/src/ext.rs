//! Extension transport headers that follow the BTH (IBTA Vol 1 §9.3; FETH: Annex A19).
//! Each is fixed-size; `parse` takes the bytes at its offset, `emit` writes them back.

use crate::bytes::{be24, be32, be64, put24, put32, put64};
use crate::opcode::ext;
use crate::{Error, Result};

macro_rules! need {
    ($b:expr, $n:expr) => {
        if $b.len() < $n {
            return Err(Error::Truncated);
        }
    };
}

/// Reliable Datagram ETH: EE context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rdeth {
    pub ee_context: u32,
}
impl Rdeth {
    pub const LEN: usize = 4;
    pub fn parse(b: &[u8]) -> Result<Self> {
        need!(b, Self::LEN);
        Ok(Self {
            ee_context: be24(b, 1),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        b[0] = 0;
        put24(b, 1, self.ee_context);
    }
}

/// Datagram ETH: Q_Key and source QP (§9.3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Deth {
    pub qkey: u32,
    pub src_qp: u32,
}
impl Deth {
    pub const LEN: usize = 8;
    /// The well-known Q_Key of the GSI (QP1).
    pub const GSI_QKEY: u32 = 0x8001_0000;
    pub fn parse(b: &[u8]) -> Result<Self> {
        need!(b, Self::LEN);
        Ok(Self {
            qkey: be32(b, 0),
            src_qp: be24(b, 5),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        put32(b, 0, self.qkey);
        b[4] = 0;
        put24(b, 5, self.src_qp);
    }
}

/// XRC ETH: the XRC SRQ number (§9.3.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Xrceth {
    pub xrc_srq: u32,
}
impl Xrceth {
    pub const LEN: usize = 4;
    pub fn parse(b: &[u8]) -> Result<Self> {
        need!(b, Self::LEN);
        Ok(Self {
            xrc_srq: be24(b, 1),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        b[0] = 0;
        put24(b, 1, self.xrc_srq);
    }
}

/// Flush ETH (Annex A19): selectivity level and placement type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Feth {
    pub selectivity: u8,
    pub placement: u8,
}
impl Feth {
    pub const LEN: usize = 4;
    pub fn parse(b: &[u8]) -> Result<Self> {
        need!(b, Self::LEN);
        let w = be32(b, 0);
        Ok(Self {
            selectivity: ((w >> 4) & 3) as u8,
            placement: (w & 0xf) as u8,
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        put32(
            b,
            0,
            (u32::from(self.selectivity & 3) << 4) | u32::from(self.placement & 0xf),
        );
    }
}

/// RDMA ETH: virtual address, R_Key and DMA length (§9.3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reth {
    pub va: u64,
    pub rkey: u32,
    pub dma_len: u32,
}
impl Reth {
    pub const LEN: usize = 16;
    pub fn parse(b: &[u8]) -> Result<Self> {
        need!(b, Self::LEN);
        Ok(Self {
            va: be64(b, 0),
            rkey: be32(b, 8),
            dma_len: be32(b, 12),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        put64(b, 0, self.va);
        put32(b, 8, self.rkey);
        put32(b, 12, self.dma_len);
    }
}

/// Atomic ETH (§9.3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AtomicEth {
    pub va: u64,
    pub rkey: u32,
    pub swap_add: u64,
    pub compare: u64,
}
impl AtomicEth {
    pub const LEN: usize = 28;
    pub fn parse(b: &[u8]) -> Result<Self> {
        need!(b, Self::LEN);
        Ok(Self {
            va: be64(b, 0),
            rkey: be32(b, 8),
            swap_add: be64(b, 12),
            compare: be64(b, 20),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        put64(b, 0, self.va);
        put32(b, 8, self.rkey);
        put64(b, 12, self.swap_add);
        put64(b, 20, self.compare);
    }
}

/// What an AETH syndrome says (§9.7.5.1.1, Table 44).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AethKind {
    /// ACK with an end-to-end credit code (31 = no credit information).
    Ack { credit_code: u8 },
    /// RNR NAK with the timer code (Table 45).
    RnrNak { timer_code: u8 },
    /// NAK with its code (Table 46).
    Nak { code: u8 },
    /// Syndrome type `10`, reserved.
    Reserved { value: u8 },
}

/// NAK codes (Table 46).
pub mod nak {
    pub const PSN_SEQUENCE_ERROR: u8 = 0;
    pub const INVALID_REQUEST: u8 = 1;
    pub const REMOTE_ACCESS_ERROR: u8 = 2;
    pub const REMOTE_OPERATIONAL_ERROR: u8 = 3;
    pub const INVALID_RD_REQUEST: u8 = 4;
}

/// The name of a NAK code, `snake_case` as in the analyze JSON.
pub fn nak_name(code: u8) -> &'static str {
    match code {
        0 => "psn_sequence_error",
        1 => "invalid_request",
        2 => "remote_access_error",
        3 => "remote_operational_error",
        4 => "invalid_rd_request",
        _ => "reserved",
    }
}

/// RNR timer code → minimum delay in microseconds ×100 (0.01 ms units), Table 45.
const RNR_TIMER_10US: [u32; 32] = [
    65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
    2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
];

/// The RNR NAK timer in microseconds.
pub fn rnr_timer_us(code: u8) -> u32 {
    RNR_TIMER_10US[(code & 31) as usize] * 10
}

/// End-to-end credit code → number of credits (§9.7.7.2.4); `None` for code 31 (invalid).
pub fn credits(code: u8) -> Option<u32> {
    const T: [u32; 31] = [
        0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
        2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
    ];
    T.get(code as usize).copied()
}

/// ACK Extended Transport Header: syndrome and MSN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Aeth {
    pub syndrome: u8,
    pub msn: u32,
}
impl Aeth {
    pub const LEN: usize = 4;
    pub fn parse(b: &[u8]) -> Result<Self> {
        need!(b, Self::LEN);
        Ok(Self {
            syndrome: b[0],
            msn: be24(b, 1),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        b[0] = self.syndrome;
        put24(b, 1, self.msn);
    }
    pub fn kind(&self) -> AethKind {
        let v = self.syndrome & 0x1f;
        match (self.syndrome >> 5) & 3 {
            0 => AethKind::Ack { credit_code: v },
            1 => AethKind::RnrNak { timer_code: v },
            3 => AethKind::Nak { code: v },
            _ => AethKind::Reserved { value: v },
        }
    }
}

/// Atomic ACK ETH: the original remote data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AtomicAckEth {
    pub orig_data: u64,
}
impl AtomicAckEth {
    pub const LEN: usize = 8;
    pub fn parse(b: &[u8]) -> Result<Self> {
        need!(b, Self::LEN);
        Ok(Self {
            orig_data: be64(b, 0),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        put64(b, 0, self.orig_data);
    }
}

/// Every extension header a packet can carry, each present or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExtHeaders {
    pub rdeth: Option<Rdeth>,
    pub deth: Option<Deth>,
    pub xrceth: Option<Xrceth>,
    pub feth: Option<Feth>,
    pub reth: Option<Reth>,
    pub atomiceth: Option<AtomicEth>,
    pub aeth: Option<Aeth>,
    pub atomicacketh: Option<AtomicAckEth>,
    /// Immediate data, opaque.
    pub immdt: Option<u32>,
    /// R_Key to invalidate.
    pub ieth: Option<u32>,
}

impl ExtHeaders {
    /// Parses the headers in `set` (`opcode::ext` bits) in wire order from `b`: the headers and
    /// `Ok(length)`, or on a short buffer the headers decoded so far and `Err(offset)` where it
    /// stopped.
    pub fn parse(set: u16, b: &[u8]) -> (Self, core::result::Result<usize, usize>) {
        let mut h = Self::default();
        let r = h.parse_into(set, b);
        (h, r)
    }

    /// [`ExtHeaders::parse`] into `self` (which should be empty), without moving the struct.
    #[inline]
    pub fn parse_into(&mut self, set: u16, b: &[u8]) -> core::result::Result<usize, usize> {
        let h = self;
        let mut off = 0;
        for &(bit, len) in ext::ORDER.iter() {
            if set & bit == 0 {
                continue;
            }
            let Some(s) = b.get(off..off + len) else {
                return Err(off);
            };
            // Lengths were checked above, so the parsers cannot fail here.
            match bit {
                ext::RDETH => h.rdeth = Rdeth::parse(s).ok(),
                ext::DETH => h.deth = Deth::parse(s).ok(),
                ext::XRCETH => h.xrceth = Xrceth::parse(s).ok(),
                ext::FETH => h.feth = Feth::parse(s).ok(),
                ext::RETH => h.reth = Reth::parse(s).ok(),
                ext::ATOMICETH => h.atomiceth = AtomicEth::parse(s).ok(),
                ext::AETH => h.aeth = Aeth::parse(s).ok(),
                ext::ATOMICACKETH => h.atomicacketh = AtomicAckEth::parse(s).ok(),
                ext::IMMDT => h.immdt = Some(be32(s, 0)),
                _ => h.ieth = Some(be32(s, 0)),
            }
            off += len;
        }
        Ok(off)
    }

    /// The `opcode::ext` bits of the headers present.
    pub fn set(&self) -> u16 {
        let mut s = 0;
        let pairs = [
            (self.rdeth.is_some(), ext::RDETH),
            (self.deth.is_some(), ext::DETH),
            (self.xrceth.is_some(), ext::XRCETH),
            (self.feth.is_some(), ext::FETH),
            (self.reth.is_some(), ext::RETH),
            (self.atomiceth.is_some(), ext::ATOMICETH),
            (self.aeth.is_some(), ext::AETH),
            (self.atomicacketh.is_some(), ext::ATOMICACKETH),
            (self.immdt.is_some(), ext::IMMDT),
            (self.ieth.is_some(), ext::IETH),
        ];
        for (p, bit) in pairs {
            if p {
                s |= bit;
            }
        }
        s
    }

    /// Bytes the present headers take.
    pub fn buffer_len(&self) -> usize {
        ext::len(self.set())
    }

    /// Emits the present headers in wire order; `b` must hold `buffer_len()` bytes.
    pub fn emit(&self, b: &mut [u8]) -> usize {
        let mut off = 0;
        macro_rules! put {
            ($o:expr, $t:ty) => {
                if let Some(x) = $o {
                    x.emit(&mut b[off..off + <$t>::LEN]);
                    off += <$t>::LEN;
                }
            };
        }
        put!(self.rdeth, Rdeth);
        put!(self.deth, Deth);
        put!(self.xrceth, Xrceth);
        put!(self.feth, Feth);
        put!(self.reth, Reth);
        put!(self.atomiceth, AtomicEth);
        put!(self.aeth, Aeth);
        put!(self.atomicacketh, AtomicAckEth);
        for v in [self.immdt, self.ieth].into_iter().flatten() {
            put32(b, off, v);
            off += 4;
        }
        off
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opcode::OpInfo;
    use proptest::prelude::*;

    fn any_ext(set: u16) -> impl Strategy<Value = ExtHeaders> {
        (
            any::<u32>(),
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
            any::<u32>(),
            any::<u8>(),
        )
            .prop_map(move |(a, b, c, d, e, f)| {
                let on = |bit| set & bit != 0;
                ExtHeaders {
                    rdeth: on(ext::RDETH).then_some(Rdeth {
                        ee_context: a & 0xff_ffff,
                    }),
                    deth: on(ext::DETH).then_some(Deth {
                        qkey: e,
                        src_qp: a & 0xff_ffff,
                    }),
                    xrceth: on(ext::XRCETH).then_some(Xrceth {
                        xrc_srq: e & 0xff_ffff,
                    }),
                    feth: on(ext::FETH).then_some(Feth {
                        selectivity: f & 3,
                        placement: f >> 4,
                    }),
                    reth: on(ext::RETH).then_some(Reth {
                        va: b,
                        rkey: e,
                        dma_len: a,
                    }),
                    atomiceth: on(ext::ATOMICETH).then_some(AtomicEth {
                        va: b,
                        rkey: a,
                        swap_add: c,
                        compare: d,
                    }),
                    aeth: on(ext::AETH).then_some(Aeth {
                        syndrome: f,
                        msn: e & 0xff_ffff,
                    }),
                    atomicacketh: on(ext::ATOMICACKETH).then_some(AtomicAckEth { orig_data: d }),
                    immdt: on(ext::IMMDT).then_some(a),
                    ieth: on(ext::IETH).then_some(e),
                }
            })
    }

    proptest! {
        #[test]
        fn round_trip_every_opcode((op, h) in any::<u8>().prop_flat_map(|op| (Just(op), any_ext(OpInfo::of(op).ext)))) {
            let info = OpInfo::of(op);
            let mut b = [0u8; 64];
            let n = h.emit(&mut b);
            prop_assert_eq!(n, info.ext_len());
            let (back, m) = ExtHeaders::parse(info.ext, &b[..n]);
            prop_assert_eq!(m, Ok(n));
            prop_assert_eq!(back, h);
        }
        #[test]
        fn short_never_panics(op: u8, b in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = ExtHeaders::parse(OpInfo::of(op).ext, &b);
        }
    }

    #[test]
    fn aeth_kinds() {
        assert_eq!(
            Aeth {
                syndrome: 0x1f,
                msn: 0
            }
            .kind(),
            AethKind::Ack { credit_code: 31 }
        );
        assert_eq!(
            Aeth {
                syndrome: 0x2e,
                msn: 0
            }
            .kind(),
            AethKind::RnrNak { timer_code: 14 }
        );
        assert_eq!(
            Aeth {
                syndrome: 0x60,
                msn: 0
            }
            .kind(),
            AethKind::Nak { code: 0 }
        );
        assert_eq!(
            Aeth {
                syndrome: 0x62,
                msn: 0
            }
            .kind(),
            AethKind::Nak {
                code: nak::REMOTE_ACCESS_ERROR
            }
        );
        assert_eq!(
            Aeth {
                syndrome: 0x41,
                msn: 0
            }
            .kind(),
            AethKind::Reserved { value: 1 }
        );
        assert_eq!(rnr_timer_us(0), 655_360);
        assert_eq!(rnr_timer_us(14), 1_280);
        assert_eq!(rnr_timer_us(31), 491_520);
        assert_eq!(credits(5), Some(6));
        assert_eq!(credits(31), None);
        assert_eq!(nak_name(3), "remote_operational_error");
    }
}
