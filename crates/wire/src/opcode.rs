//! The BTH OpCode table (IBTA Vol 1 Table 38 "OpCode field", §9.2; RoCEv2 CNP: Annex A17 §A17.9.3;
//! FLUSH and ATOMIC WRITE: IBA 1.5 Annex A19). Data, not control flow: opcode → transport,
//! operation, extension headers.

/// The transport service named by OpCode bits 7–5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transport {
    Rc,
    Uc,
    Rd,
    Ud,
    Cnp,
    Xrc,
    Reserved,
    Vendor,
}

impl Transport {
    pub fn from_opcode(op: u8) -> Self {
        match op >> 5 {
            0 => Self::Rc,
            1 => Self::Uc,
            2 => Self::Rd,
            3 => Self::Ud,
            4 => Self::Cnp,
            5 => Self::Xrc,
            6 => Self::Reserved,
            _ => Self::Vendor,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Rc => "RC",
            Self::Uc => "UC",
            Self::Rd => "RD",
            Self::Ud => "UD",
            Self::Cnp => "CNP",
            Self::Xrc => "XRC",
            Self::Reserved => "RESERVED",
            Self::Vendor => "VENDOR",
        }
    }
}

/// The operation named by OpCode bits 4–0 (together with the transport).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    SendFirst,
    SendMiddle,
    SendLast,
    SendLastImm,
    SendOnly,
    SendOnlyImm,
    WriteFirst,
    WriteMiddle,
    WriteLast,
    WriteLastImm,
    WriteOnly,
    WriteOnlyImm,
    ReadRequest,
    ReadResponseFirst,
    ReadResponseMiddle,
    ReadResponseLast,
    ReadResponseOnly,
    Acknowledge,
    AtomicAcknowledge,
    CmpSwap,
    FetchAdd,
    Resync,
    SendLastInv,
    SendOnlyInv,
    Flush,
    AtomicWrite,
    /// RoCEv2 (0x81) or IB (0x80) congestion notification packet.
    Cnp,
    /// An opcode the spec reserves, or a manufacturer-specific one.
    Unknown,
}

impl Operation {
    /// True for packets a responder sends (READ responses, ACK, ATOMIC ACK).
    pub fn is_response(self) -> bool {
        matches!(
            self,
            Self::ReadResponseFirst
                | Self::ReadResponseMiddle
                | Self::ReadResponseLast
                | Self::ReadResponseOnly
                | Self::Acknowledge
                | Self::AtomicAcknowledge
        )
    }
    /// Position in a multi-packet message.
    pub fn position(self) -> Position {
        use Operation::*;
        match self {
            SendFirst | WriteFirst | ReadResponseFirst => Position::First,
            SendMiddle | WriteMiddle | ReadResponseMiddle => Position::Middle,
            SendLast | SendLastImm | WriteLast | WriteLastImm | ReadResponseLast | SendLastInv => {
                Position::Last
            }
            _ => Position::Only,
        }
    }
}

/// Where a packet sits in its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    First,
    Middle,
    Last,
    Only,
}

/// Extension headers, one bit each, in wire order (IBTA §9.3 and Annex A19).
pub mod ext {
    pub const RDETH: u16 = 1 << 0;
    pub const DETH: u16 = 1 << 1;
    pub const XRCETH: u16 = 1 << 2;
    pub const FETH: u16 = 1 << 3;
    pub const RETH: u16 = 1 << 4;
    pub const ATOMICETH: u16 = 1 << 5;
    pub const AETH: u16 = 1 << 6;
    pub const ATOMICACKETH: u16 = 1 << 7;
    pub const IMMDT: u16 = 1 << 8;
    pub const IETH: u16 = 1 << 9;
    /// Wire order and sizes of the extension headers.
    pub const ORDER: [(u16, usize); 10] = [
        (RDETH, 4),
        (DETH, 8),
        (XRCETH, 4),
        (FETH, 4),
        (RETH, 16),
        (ATOMICETH, 28),
        (AETH, 4),
        (ATOMICACKETH, 8),
        (IMMDT, 4),
        (IETH, 4),
    ];
    /// Total length in bytes of the headers in `set`.
    pub const fn len(set: u16) -> usize {
        let mut n = 0;
        let mut i = 0;
        while i < ORDER.len() {
            if set & ORDER[i].0 != 0 {
                n += ORDER[i].1;
            }
            i += 1;
        }
        n
    }
    /// Offset of header `bit` among the headers in `set` (the bytes of those before it).
    pub const fn offset(set: u16, bit: u16) -> usize {
        let mut n = 0;
        let mut i = 0;
        while i < ORDER.len() && ORDER[i].0 != bit {
            if set & ORDER[i].0 != 0 {
                n += ORDER[i].1;
            }
            i += 1;
        }
        n
    }
}

/// One row of the opcode table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpInfo {
    pub opcode: u8,
    /// Upper-case name used in JSON and display filters (`RC_SEND_FIRST`, `CNP`, `0x18`).
    pub name: &'static str,
    /// Human-readable name, as in the IBTA table (`RC Send First`).
    pub desc: &'static str,
    pub transport: Transport,
    pub op: Operation,
    /// Extension headers that follow the BTH (`ext::*` bits).
    pub ext: u16,
    /// True when the packet carries a payload after its extension headers.
    pub has_payload: bool,
    /// False for reserved and manufacturer-specific opcodes.
    pub known: bool,
    /// `ext::len(ext)`, summed once when the table is built.
    ext_len: u8,
}

impl OpInfo {
    /// Looks up an opcode; every byte has a row.
    #[inline]
    pub fn of(opcode: u8) -> &'static OpInfo {
        &TABLE[opcode as usize]
    }
    /// Bytes of extension headers after the BTH.
    #[inline]
    pub fn ext_len(&self) -> usize {
        usize::from(self.ext_len)
    }
    /// The place of the opcode's `name` among the table's names in byte order (opcodes of one
    /// name share it): reports key their opcode counts by name, and sorting by this saves
    /// comparing the names.
    pub fn name_rank(opcode: u8) -> u8 {
        static RANKS: std::sync::OnceLock<[u8; 256]> = std::sync::OnceLock::new();
        let ranks = RANKS.get_or_init(|| {
            let mut names: Vec<&str> = TABLE.iter().map(|i| i.name).collect();
            names.sort_unstable();
            names.dedup();
            let mut r = [0u8; 256];
            for (slot, info) in r.iter_mut().zip(&TABLE) {
                // At most 256 names: the index fits.
                *slot = names.partition_point(|&n| n < info.name) as u8;
            }
            r
        });
        ranks[usize::from(opcode)]
    }

    /// Looks up an opcode by its upper-case name (case-insensitive).
    pub fn by_name(name: &str) -> Option<&'static OpInfo> {
        TABLE
            .iter()
            .find(|i| i.known && i.name.eq_ignore_ascii_case(name))
    }
}

use ext::*;
use Operation as O;

/// (low 5 bits, operation, name suffix, description suffix, RC extension headers, payload)
const OPS: [(u8, Operation, &str, &str, u16, bool); 26] = [
    (0x00, O::SendFirst, "SEND_FIRST", "Send First", 0, true),
    (0x01, O::SendMiddle, "SEND_MIDDLE", "Send Middle", 0, true),
    (0x02, O::SendLast, "SEND_LAST", "Send Last", 0, true),
    (
        0x03,
        O::SendLastImm,
        "SEND_LAST_WITH_IMMEDIATE",
        "Send Last with Immediate",
        IMMDT,
        true,
    ),
    (0x04, O::SendOnly, "SEND_ONLY", "Send Only", 0, true),
    (
        0x05,
        O::SendOnlyImm,
        "SEND_ONLY_WITH_IMMEDIATE",
        "Send Only with Immediate",
        IMMDT,
        true,
    ),
    (
        0x06,
        O::WriteFirst,
        "RDMA_WRITE_FIRST",
        "RDMA Write First",
        RETH,
        true,
    ),
    (
        0x07,
        O::WriteMiddle,
        "RDMA_WRITE_MIDDLE",
        "RDMA Write Middle",
        0,
        true,
    ),
    (
        0x08,
        O::WriteLast,
        "RDMA_WRITE_LAST",
        "RDMA Write Last",
        0,
        true,
    ),
    (
        0x09,
        O::WriteLastImm,
        "RDMA_WRITE_LAST_WITH_IMMEDIATE",
        "RDMA Write Last with Immediate",
        IMMDT,
        true,
    ),
    (
        0x0a,
        O::WriteOnly,
        "RDMA_WRITE_ONLY",
        "RDMA Write Only",
        RETH,
        true,
    ),
    (
        0x0b,
        O::WriteOnlyImm,
        "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
        "RDMA Write Only with Immediate",
        RETH | IMMDT,
        true,
    ),
    (
        0x0c,
        O::ReadRequest,
        "RDMA_READ_REQUEST",
        "RDMA Read Request",
        RETH,
        false,
    ),
    (
        0x0d,
        O::ReadResponseFirst,
        "RDMA_READ_RESPONSE_FIRST",
        "RDMA Read Response First",
        AETH,
        true,
    ),
    (
        0x0e,
        O::ReadResponseMiddle,
        "RDMA_READ_RESPONSE_MIDDLE",
        "RDMA Read Response Middle",
        0,
        true,
    ),
    (
        0x0f,
        O::ReadResponseLast,
        "RDMA_READ_RESPONSE_LAST",
        "RDMA Read Response Last",
        AETH,
        true,
    ),
    (
        0x10,
        O::ReadResponseOnly,
        "RDMA_READ_RESPONSE_ONLY",
        "RDMA Read Response Only",
        AETH,
        true,
    ),
    (
        0x11,
        O::Acknowledge,
        "ACKNOWLEDGE",
        "Acknowledge",
        AETH,
        false,
    ),
    (
        0x12,
        O::AtomicAcknowledge,
        "ATOMIC_ACKNOWLEDGE",
        "Atomic Acknowledge",
        AETH | ATOMICACKETH,
        false,
    ),
    (0x13, O::CmpSwap, "CMP_SWAP", "CmpSwap", ATOMICETH, false),
    (0x14, O::FetchAdd, "FETCH_ADD", "FetchAdd", ATOMICETH, false),
    (0x15, O::Resync, "RESYNC", "Resync", 0, false),
    (
        0x16,
        O::SendLastInv,
        "SEND_LAST_WITH_INVALIDATE",
        "Send Last with Invalidate",
        IETH,
        true,
    ),
    (
        0x17,
        O::SendOnlyInv,
        "SEND_ONLY_WITH_INVALIDATE",
        "Send Only with Invalidate",
        IETH,
        true,
    ),
    (0x1c, O::Flush, "FLUSH", "Flush", FETH | RETH, false),
    (
        0x1d,
        O::AtomicWrite,
        "ATOMIC_WRITE",
        "Atomic Write",
        RETH,
        true,
    ),
];

/// Which low-5-bit operations each transport defines.
const fn defined(t: Transport, low: u8) -> bool {
    match t {
        Transport::Rc => low <= 0x14 || low == 0x16 || low == 0x17 || low == 0x1c || low == 0x1d,
        Transport::Uc => low <= 0x0b,
        Transport::Rd => low <= 0x15 || low == 0x1c,
        Transport::Ud => low == 0x04 || low == 0x05,
        Transport::Xrc => low <= 0x14 || low == 0x16 || low == 0x17,
        _ => false,
    }
}

/// The names `0x00`..`0xff`, for opcodes the spec does not name.
const HEX: [[u8; 4]; 256] = {
    let digits = *b"0123456789abcdef";
    let mut t = [[0u8; 4]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [b'0', b'x', digits[i >> 4], digits[i & 15]];
        i += 1;
    }
    t
};

/// `0xNN` for any byte.
pub fn hex_name(op: u8) -> &'static str {
    core::str::from_utf8(&HEX[op as usize]).unwrap_or("0x??")
}

macro_rules! names {
    ($($t:literal),*) => { [$([concat!($t, "_SEND_FIRST"), concat!($t, "_SEND_MIDDLE"), concat!($t, "_SEND_LAST"),
        concat!($t, "_SEND_LAST_WITH_IMMEDIATE"), concat!($t, "_SEND_ONLY"), concat!($t, "_SEND_ONLY_WITH_IMMEDIATE"),
        concat!($t, "_RDMA_WRITE_FIRST"), concat!($t, "_RDMA_WRITE_MIDDLE"), concat!($t, "_RDMA_WRITE_LAST"),
        concat!($t, "_RDMA_WRITE_LAST_WITH_IMMEDIATE"), concat!($t, "_RDMA_WRITE_ONLY"),
        concat!($t, "_RDMA_WRITE_ONLY_WITH_IMMEDIATE"), concat!($t, "_RDMA_READ_REQUEST"),
        concat!($t, "_RDMA_READ_RESPONSE_FIRST"), concat!($t, "_RDMA_READ_RESPONSE_MIDDLE"),
        concat!($t, "_RDMA_READ_RESPONSE_LAST"), concat!($t, "_RDMA_READ_RESPONSE_ONLY"), concat!($t, "_ACKNOWLEDGE"),
        concat!($t, "_ATOMIC_ACKNOWLEDGE"), concat!($t, "_CMP_SWAP"), concat!($t, "_FETCH_ADD"), concat!($t, "_RESYNC"),
        concat!($t, "_SEND_LAST_WITH_INVALIDATE"), concat!($t, "_SEND_ONLY_WITH_INVALIDATE"), concat!($t, "_FLUSH"),
        concat!($t, "_ATOMIC_WRITE")],)* ]
    };
}
macro_rules! descs {
    ($($t:literal),*) => { [$([concat!($t, " Send First"), concat!($t, " Send Middle"), concat!($t, " Send Last"),
        concat!($t, " Send Last with Immediate"), concat!($t, " Send Only"), concat!($t, " Send Only with Immediate"),
        concat!($t, " RDMA Write First"), concat!($t, " RDMA Write Middle"), concat!($t, " RDMA Write Last"),
        concat!($t, " RDMA Write Last with Immediate"), concat!($t, " RDMA Write Only"),
        concat!($t, " RDMA Write Only with Immediate"), concat!($t, " RDMA Read Request"),
        concat!($t, " RDMA Read Response First"), concat!($t, " RDMA Read Response Middle"),
        concat!($t, " RDMA Read Response Last"), concat!($t, " RDMA Read Response Only"), concat!($t, " Acknowledge"),
        concat!($t, " Atomic Acknowledge"), concat!($t, " CmpSwap"), concat!($t, " FetchAdd"), concat!($t, " Resync"),
        concat!($t, " Send Last with Invalidate"), concat!($t, " Send Only with Invalidate"), concat!($t, " Flush"),
        concat!($t, " Atomic Write")],)* ]
    };
}

/// Names per transport (RC, UC, RD, UD, XRC) and per row of `OPS`.
const NAMES: [[&str; 26]; 5] = names!("RC", "UC", "RD", "UD", "XRC");
const DESCS: [[&str; 26]; 5] = descs!("RC", "UC", "RD", "UD", "XRC");

const fn row(opcode: u8) -> OpInfo {
    let mut r = row_fields(opcode);
    r.ext_len = ext::len(r.ext) as u8;
    r
}

/// The row of `opcode` without its cached extension-header length.
const fn row_fields(opcode: u8) -> OpInfo {
    let t = match opcode >> 5 {
        0 => Transport::Rc,
        1 => Transport::Uc,
        2 => Transport::Rd,
        3 => Transport::Ud,
        4 => Transport::Cnp,
        5 => Transport::Xrc,
        6 => Transport::Reserved,
        _ => Transport::Vendor,
    };
    let low = opcode & 0x1f;
    let hex = match core::str::from_utf8(&HEX[opcode as usize]) {
        Ok(s) => s,
        Err(_) => "0x??",
    };
    let unknown = OpInfo {
        opcode,
        name: hex,
        desc: match t {
            Transport::Vendor => "Manufacturer-specific",
            _ => "Reserved",
        },
        transport: t,
        op: Operation::Unknown,
        ext: 0,
        has_payload: true,
        known: false,
        ext_len: 0,
    };
    if matches!(t, Transport::Cnp) {
        return match opcode {
            0x81 => OpInfo {
                opcode,
                name: "CNP",
                desc: "CNP",
                transport: t,
                op: Operation::Cnp,
                ext: 0,
                has_payload: true,
                known: true,
                ext_len: 0,
            },
            0x80 => OpInfo {
                opcode,
                name: "IB_CNP",
                desc: "IB CNP",
                transport: t,
                op: Operation::Cnp,
                ext: 0,
                has_payload: true,
                known: true,
                ext_len: 0,
            },
            _ => unknown,
        };
    }
    if !defined(t, low) {
        return unknown;
    }
    let ti = match t {
        Transport::Rc => 0,
        Transport::Uc => 1,
        Transport::Rd => 2,
        Transport::Ud => 3,
        _ => 4,
    };
    let mut i = 0;
    while i < OPS.len() {
        let (l, op, _, _, base, payload) = OPS[i];
        if l == low {
            let mut ext = base;
            match t {
                Transport::Rd => {
                    // RD requests carry RDETH + DETH; responses RDETH only (§9.3.2).
                    ext |= if op.is_response_const() {
                        RDETH
                    } else {
                        RDETH | DETH
                    };
                }
                Transport::Ud => ext |= DETH,
                Transport::Xrc if !op.is_response_const() => ext |= XRCETH,
                _ => {}
            }
            return OpInfo {
                opcode,
                name: NAMES[ti][i],
                desc: DESCS[ti][i],
                transport: t,
                op,
                ext,
                has_payload: payload,
                known: true,
                ext_len: 0,
            };
        }
        i += 1;
    }
    unknown
}

impl Operation {
    const fn is_response_const(self) -> bool {
        matches!(
            self,
            Self::ReadResponseFirst
                | Self::ReadResponseMiddle
                | Self::ReadResponseLast
                | Self::ReadResponseOnly
                | Self::Acknowledge
                | Self::AtomicAcknowledge
        )
    }
}

/// The whole table, one row per opcode byte.
pub static TABLE: [OpInfo; 256] = {
    let mut t = [row(0); 256];
    let mut i = 0;
    while i < 256 {
        t[i] = row(i as u8);
        i += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Opcodes sort by `name_rank` as their names sort, and share a rank only with their name.
    #[test]
    fn name_ranks_order_as_the_names() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let (na, nb) = (OpInfo::of(a).name, OpInfo::of(b).name);
                let (ra, rb) = (OpInfo::name_rank(a), OpInfo::name_rank(b));
                assert_eq!(ra.cmp(&rb), na.cmp(nb), "{na} against {nb}");
            }
        }
    }

    #[test]
    fn cached_extension_lengths_match_the_sets() {
        for op in 0..=255u8 {
            let r = OpInfo::of(op);
            assert_eq!(r.ext_len(), ext::len(r.ext), "opcode {op:#04x}");
        }
    }

    #[test]
    fn table_rows() {
        let r = OpInfo::of(0x0b);
        assert_eq!(r.name, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
        assert_eq!(r.ext, RETH | IMMDT);
        assert_eq!(r.ext_len(), 20);
        assert_eq!(OpInfo::of(0x65).name, "UD_SEND_ONLY_WITH_IMMEDIATE");
        assert_eq!(OpInfo::of(0x65).ext_len(), 12);
        assert_eq!(OpInfo::of(0x81).name, "CNP");
        assert_eq!(OpInfo::of(0x4a).ext_len(), 28); // RDETH DETH RETH
        assert_eq!(OpInfo::of(0x4e).ext_len(), 4); // RD READ Resp Middle: RDETH
        assert_eq!(OpInfo::of(0x52).ext_len(), 16); // RD ATOMIC ACK: RDETH AETH AtomicAckETH
        assert_eq!(OpInfo::of(0x55).ext_len(), 12); // RD RESYNC
        assert_eq!(OpInfo::of(0xa9).ext_len(), 8); // XRC WRITE Last Imm: XRCETH ImmDt
        assert_eq!(OpInfo::of(0xb1).ext_len(), 4); // XRC ACK: no XRCETH
        assert_eq!(OpInfo::of(0x1c).ext_len(), 20); // FLUSH: FETH RETH
        assert_eq!(OpInfo::of(0x1c).name, "RC_FLUSH");
        assert_eq!(OpInfo::of(0x1d).name, "RC_ATOMIC_WRITE");
        assert!(!OpInfo::of(0x18).known);
        assert_eq!(OpInfo::of(0x18).name, "0x18");
        assert_eq!(OpInfo::of(0x18).desc, "Reserved");
        assert_eq!(OpInfo::of(0xe3).desc, "Manufacturer-specific");
        assert_eq!(OpInfo::of(0x2c).name, "0x2c"); // UC has no READ
        assert_eq!(OpInfo::of(0x64).name, "UD_SEND_ONLY");
        assert_eq!(OpInfo::by_name("rc_acknowledge").unwrap().opcode, 0x11);
        assert_eq!(OpInfo::of(0x11).desc, "RC Acknowledge");
    }

    #[test]
    fn every_known_row_is_consistent() {
        for (i, r) in TABLE.iter().enumerate() {
            assert_eq!(r.opcode as usize, i);
            assert_eq!(r.transport, Transport::from_opcode(r.opcode));
            if r.known {
                assert_eq!(OpInfo::by_name(r.name).unwrap().opcode, r.opcode);
            }
        }
    }
}
