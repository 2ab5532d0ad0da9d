//! Management Datagrams (IBTA Vol 1 §13.4) and Communication Manager messages (§12.6,
//! Tables 106–120). Offsets below are from the start of the 256-byte MAD.

use crate::bytes::{arr, be16, be24, be32, be64, put16, put24, put32, put64};
use crate::{Error, Result};

/// Length of the common MAD header.
pub const HEADER_LEN: usize = 24;
/// Length of a whole MAD.
pub const MAD_LEN: usize = 256;

/// Management classes (§13.4.4).
pub mod class {
    pub const SUBN_LID_ROUTED: u8 = 0x01;
    pub const SUBN_DIRECTED_ROUTE: u8 = 0x81;
    pub const SUBN_ADM: u8 = 0x03;
    pub const PERF: u8 = 0x04;
    pub const BM: u8 = 0x05;
    pub const DEV_MGT: u8 = 0x06;
    pub const CM: u8 = 0x07;
    pub const SNMP: u8 = 0x08;
    pub const CONG_MGT: u8 = 0x21;
}

/// The name of a management class.
pub fn class_name(c: u8) -> &'static str {
    match c {
        0x01 => "SubnMgmt",
        0x81 => "SubnMgmt(DR)",
        0x03 => "SubnAdm",
        0x04 => "PerfMgt",
        0x05 => "BM",
        0x06 => "DevMgt",
        0x07 => "CM",
        0x08 => "SNMP",
        0x09..=0x0f | 0x30..=0x4f => "Vendor",
        0x10 => "DevAdm",
        0x11 => "Boot",
        0x12 => "BIS",
        0x21 => "CongestionMgmt",
        _ => "Unknown",
    }
}

/// The name of a MAD method (with its response bit).
pub fn method_name(m: u8) -> &'static str {
    match m {
        0x01 => "Get",
        0x02 => "Set",
        0x03 => "Send",
        0x05 => "Trap",
        0x06 => "Report",
        0x07 => "TrapRepress",
        0x12 => "GetTable",
        0x14 => "GetMulti",
        0x15 => "Delete",
        0x81 => "GetResp",
        0x86 => "ReportResp",
        0x92 => "GetTableResp",
        0x94 => "GetMultiResp",
        0x95 => "DeleteResp",
        _ => "Unknown",
    }
}

/// The common MAD header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MadHeader {
    pub base_version: u8,
    pub mgmt_class: u8,
    pub class_version: u8,
    /// Method including the response bit (b7).
    pub method: u8,
    pub status: u16,
    pub class_specific: u16,
    pub tid: u64,
    pub attr_id: u16,
    pub attr_mod: u32,
}

impl MadHeader {
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(Self {
            base_version: b[0],
            mgmt_class: b[1],
            class_version: b[2],
            method: b[3],
            status: be16(b, 4),
            class_specific: be16(b, 6),
            tid: be64(b, 8),
            attr_id: be16(b, 16),
            attr_mod: be32(b, 20),
        })
    }
    pub fn emit(&self, b: &mut [u8]) {
        b[0] = self.base_version;
        b[1] = self.mgmt_class;
        b[2] = self.class_version;
        b[3] = self.method;
        put16(b, 4, self.status);
        put16(b, 6, self.class_specific);
        put64(b, 8, self.tid);
        put16(b, 16, self.attr_id);
        put16(b, 18, 0);
        put32(b, 20, self.attr_mod);
    }
}

/// CM attribute IDs (§12.6, Table 99).
pub mod attr {
    pub const CLASS_PORT_INFO: u16 = 0x0001;
    pub const REQ: u16 = 0x0010;
    pub const MRA: u16 = 0x0011;
    pub const REJ: u16 = 0x0012;
    pub const REP: u16 = 0x0013;
    pub const RTU: u16 = 0x0014;
    pub const DREQ: u16 = 0x0015;
    pub const DREP: u16 = 0x0016;
    pub const SIDR_REQ: u16 = 0x0017;
    pub const SIDR_REP: u16 = 0x0018;
    pub const LAP: u16 = 0x0019;
    pub const APR: u16 = 0x001a;
}

/// RDMA-CM's IP addressing header at the start of REQ private data (IBTA Annex A11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IpCm {
    pub ip_version: u8,
    pub src_port: u16,
    pub src_ip: [u8; 16],
    pub dst_ip: [u8; 16],
}

/// True when a Service ID is in the RDMA-CM IP port space (prefix 0x0000000001).
pub fn is_rdma_cm_service(sid: u64) -> bool {
    sid & 0xffff_ffff_ff00_0000 == 0x0000_0000_0100_0000
}

/// The RDMA-CM port space of a Service ID (0x06 TCP, 0x11 UDP, 0x3f IB, 0x02 IPoIB).
pub fn service_port_space(sid: u64) -> u8 {
    (sid >> 16) as u8
}
/// The RDMA-CM port of a Service ID.
pub fn service_port(sid: u64) -> u16 {
    sid as u16
}

/// Connection Request (Table 106).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CmReq {
    pub local_comm_id: u32,
    pub service_id: u64,
    pub local_ca_guid: u64,
    pub local_qkey: u32,
    pub local_qpn: u32,
    pub responder_resources: u8,
    pub local_eecn: u32,
    pub initiator_depth: u8,
    pub remote_eecn: u32,
    pub remote_cm_response_timeout: u8,
    /// 0 RC, 1 UC, 2 RD, 3 extended (see `ext_transport`).
    pub transport_type: u8,
    pub e2e_flow_control: bool,
    pub starting_psn: u32,
    pub local_cm_response_timeout: u8,
    pub retry_count: u8,
    pub pkey: u16,
    /// Path MTU code: 1 = 256 … 5 = 4096.
    pub path_mtu: u8,
    pub rdc_exists: bool,
    pub rnr_retry_count: u8,
    pub max_cm_retries: u8,
    pub srq: bool,
    pub ext_transport: u8,
    pub primary_local_lid: u16,
    pub primary_remote_lid: u16,
    pub primary_local_gid: [u8; 16],
    pub primary_remote_gid: [u8; 16],
    pub primary_flow_label: u32,
    pub primary_packet_rate: u8,
    pub primary_traffic_class: u8,
    pub primary_hop_limit: u8,
    pub primary_sl: u8,
    pub primary_subnet_local: bool,
    pub primary_local_ack_timeout: u8,
    /// Present when the Service ID is an RDMA-CM one.
    pub ip_cm: Option<IpCm>,
}

/// Connection Reply (Table 108).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CmRep {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    pub local_qkey: u32,
    pub local_qpn: u32,
    pub local_eecn: u32,
    pub starting_psn: u32,
    pub responder_resources: u8,
    pub initiator_depth: u8,
    pub target_ack_delay: u8,
    pub failover_accepted: u8,
    pub e2e_flow_control: bool,
    pub rnr_retry_count: u8,
    pub srq: bool,
    pub local_ca_guid: u64,
}

/// Reject (Table 107).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CmRej {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    /// 0 REQ, 1 REP, 2 other.
    pub msg_rejected: u8,
    pub reject_info_len: u8,
    pub reason: u16,
}

/// Message Receipt Acknowledgement (Table 105).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CmMra {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    /// 0 REQ, 1 REP, 2 LAP.
    pub msg_mraed: u8,
    pub service_timeout: u8,
}

/// Comm IDs only: RTU (Table 109), DREP (Table 111).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CmIds {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
}

/// Disconnection Request (Table 110).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CmDreq {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    pub remote_qpn: u32,
}

/// Load Alternate Path (Table 112); the alternate-path fields are kept as the QPN only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CmLap {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    pub remote_qpn: u32,
    pub remote_cm_response_timeout: u8,
}

/// Alternate Path Response (Table 113).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CmApr {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    pub additional_info_len: u8,
    pub ap_status: u8,
}

/// Service ID Resolution Request (Table 114).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CmSidrReq {
    pub request_id: u32,
    pub pkey: u16,
    pub service_id: u64,
}

/// Service ID Resolution Response (Table 115).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CmSidrRep {
    pub request_id: u32,
    pub status: u8,
    pub additional_info_len: u8,
    pub qpn: u32,
    pub service_id: u64,
    pub qkey: u32,
}

/// A decoded CM message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmMessage {
    Req(CmReq),
    Mra(CmMra),
    Rej(CmRej),
    Rep(CmRep),
    Rtu(CmIds),
    Dreq(CmDreq),
    Drep(CmIds),
    SidrReq(CmSidrReq),
    SidrRep(CmSidrRep),
    Lap(CmLap),
    Apr(CmApr),
}

impl CmMessage {
    /// The attribute ID of this message.
    pub fn attr_id(&self) -> u16 {
        match self {
            Self::Req(_) => attr::REQ,
            Self::Mra(_) => attr::MRA,
            Self::Rej(_) => attr::REJ,
            Self::Rep(_) => attr::REP,
            Self::Rtu(_) => attr::RTU,
            Self::Dreq(_) => attr::DREQ,
            Self::Drep(_) => attr::DREP,
            Self::SidrReq(_) => attr::SIDR_REQ,
            Self::SidrRep(_) => attr::SIDR_REP,
            Self::Lap(_) => attr::LAP,
            Self::Apr(_) => attr::APR,
        }
    }

    /// Short name (`REQ`, `REP`, …) as in the IBTA tables.
    pub fn name(&self) -> &'static str {
        attr_name(self.attr_id())
    }

    /// Decodes the CM message in a whole MAD (`b` starts at the MAD header).
    pub fn parse(attr_id: u16, b: &[u8]) -> Result<Self> {
        let need = match attr_id {
            attr::REQ => 164,
            attr::REP => 60,
            attr::REJ => 36,
            attr::MRA => 34,
            attr::RTU | attr::DREP => 32,
            attr::DREQ => 35,
            attr::LAP => 40,
            attr::APR => 34,
            attr::SIDR_REQ => 40,
            attr::SIDR_REP => 48,
            _ => return Err(Error::Malformed),
        };
        if b.len() < need {
            return Err(Error::Truncated);
        }
        let ids = || (be32(b, 24), be32(b, 28));
        Ok(match attr_id {
            attr::REQ => {
                let service_id = be64(b, 32);
                let ip_cm = if is_rdma_cm_service(service_id) && b.len() >= 164 + 36 {
                    Some(IpCm {
                        ip_version: b[165] >> 4,
                        src_port: be16(b, 166),
                        src_ip: arr(b, 168),
                        dst_ip: arr(b, 184),
                    })
                } else {
                    None
                };
                Self::Req(CmReq {
                    local_comm_id: be32(b, 24),
                    service_id,
                    local_ca_guid: be64(b, 40),
                    local_qkey: be32(b, 52),
                    local_qpn: be24(b, 56),
                    responder_resources: b[59],
                    local_eecn: be24(b, 60),
                    initiator_depth: b[63],
                    remote_eecn: be24(b, 64),
                    remote_cm_response_timeout: b[67] >> 3,
                    transport_type: (b[67] >> 1) & 3,
                    e2e_flow_control: b[67] & 1 != 0,
                    starting_psn: be24(b, 68),
                    local_cm_response_timeout: b[71] >> 3,
                    retry_count: b[71] & 7,
                    pkey: be16(b, 72),
                    path_mtu: b[74] >> 4,
                    rdc_exists: b[74] & 8 != 0,
                    rnr_retry_count: b[74] & 7,
                    max_cm_retries: b[75] >> 4,
                    srq: b[75] & 8 != 0,
                    ext_transport: b[75] & 7,
                    primary_local_lid: be16(b, 76),
                    primary_remote_lid: be16(b, 78),
                    primary_local_gid: arr(b, 80),
                    primary_remote_gid: arr(b, 96),
                    primary_flow_label: be32(b, 112) >> 12,
                    primary_packet_rate: b[115] & 0x3f,
                    primary_traffic_class: b[116],
                    primary_hop_limit: b[117],
                    primary_sl: b[118] >> 4,
                    primary_subnet_local: b[118] & 8 != 0,
                    primary_local_ack_timeout: b[119] >> 3,
                    ip_cm,
                })
            }
            attr::REP => Self::Rep(CmRep {
                local_comm_id: be32(b, 24),
                remote_comm_id: be32(b, 28),
                local_qkey: be32(b, 32),
                local_qpn: be24(b, 36),
                local_eecn: be24(b, 40),
                starting_psn: be24(b, 44),
                responder_resources: b[48],
                initiator_depth: b[49],
                target_ack_delay: b[50] >> 3,
                failover_accepted: (b[50] >> 1) & 3,
                e2e_flow_control: b[50] & 1 != 0,
                rnr_retry_count: b[51] >> 5,
                srq: b[51] & 0x10 != 0,
                local_ca_guid: be64(b, 52),
            }),
            attr::REJ => {
                let (l, r) = ids();
                Self::Rej(CmRej {
                    local_comm_id: l,
                    remote_comm_id: r,
                    msg_rejected: b[32] >> 6,
                    reject_info_len: b[33] >> 1,
                    reason: be16(b, 34),
                })
            }
            attr::MRA => {
                let (l, r) = ids();
                Self::Mra(CmMra {
                    local_comm_id: l,
                    remote_comm_id: r,
                    msg_mraed: b[32] >> 6,
                    service_timeout: b[33] >> 3,
                })
            }
            attr::RTU => {
                let (l, r) = ids();
                Self::Rtu(CmIds {
                    local_comm_id: l,
                    remote_comm_id: r,
                })
            }
            attr::DREP => {
                let (l, r) = ids();
                Self::Drep(CmIds {
                    local_comm_id: l,
                    remote_comm_id: r,
                })
            }
            attr::DREQ => {
                let (l, r) = ids();
                Self::Dreq(CmDreq {
                    local_comm_id: l,
                    remote_comm_id: r,
                    remote_qpn: be24(b, 32),
                })
            }
            attr::LAP => {
                let (l, r) = ids();
                Self::Lap(CmLap {
                    local_comm_id: l,
                    remote_comm_id: r,
                    remote_qpn: be24(b, 36),
                    remote_cm_response_timeout: b[39] >> 3,
                })
            }
            attr::APR => {
                let (l, r) = ids();
                Self::Apr(CmApr {
                    local_comm_id: l,
                    remote_comm_id: r,
                    additional_info_len: b[32],
                    ap_status: b[33],
                })
            }
            attr::SIDR_REQ => Self::SidrReq(CmSidrReq {
                request_id: be32(b, 24),
                pkey: be16(b, 28),
                service_id: be64(b, 32),
            }),
            _ => Self::SidrRep(CmSidrRep {
                request_id: be32(b, 24),
                status: b[28],
                additional_info_len: b[29],
                qpn: be24(b, 32),
                service_id: be64(b, 36),
                qkey: be32(b, 44),
            }),
        })
    }

    /// Writes the message's fields into a whole MAD buffer (`b.len() >= 256`); the MAD header
    /// and any bytes this message does not define are left as they are.
    pub fn emit(&self, b: &mut [u8]) {
        let ids = |b: &mut [u8], l: u32, r: u32| {
            put32(b, 24, l);
            put32(b, 28, r);
        };
        match *self {
            Self::Req(r) => {
                put32(b, 24, r.local_comm_id);
                put64(b, 32, r.service_id);
                put64(b, 40, r.local_ca_guid);
                put32(b, 52, r.local_qkey);
                put24(b, 56, r.local_qpn);
                b[59] = r.responder_resources;
                put24(b, 60, r.local_eecn);
                b[63] = r.initiator_depth;
                put24(b, 64, r.remote_eecn);
                b[67] = (r.remote_cm_response_timeout << 3)
                    | ((r.transport_type & 3) << 1)
                    | u8::from(r.e2e_flow_control);
                put24(b, 68, r.starting_psn);
                b[71] = (r.local_cm_response_timeout << 3) | (r.retry_count & 7);
                put16(b, 72, r.pkey);
                b[74] = (r.path_mtu << 4) | (u8::from(r.rdc_exists) << 3) | (r.rnr_retry_count & 7);
                b[75] = (r.max_cm_retries << 4) | (u8::from(r.srq) << 3) | (r.ext_transport & 7);
                put16(b, 76, r.primary_local_lid);
                put16(b, 78, r.primary_remote_lid);
                b[80..96].copy_from_slice(&r.primary_local_gid);
                b[96..112].copy_from_slice(&r.primary_remote_gid);
                put32(
                    b,
                    112,
                    (r.primary_flow_label << 12) | u32::from(r.primary_packet_rate & 0x3f),
                );
                b[116] = r.primary_traffic_class;
                b[117] = r.primary_hop_limit;
                b[118] = (r.primary_sl << 4) | (u8::from(r.primary_subnet_local) << 3);
                b[119] = r.primary_local_ack_timeout << 3;
                if let Some(ip) = r.ip_cm {
                    b[164] = 0;
                    b[165] = ip.ip_version << 4;
                    put16(b, 166, ip.src_port);
                    b[168..184].copy_from_slice(&ip.src_ip);
                    b[184..200].copy_from_slice(&ip.dst_ip);
                }
            }
            Self::Rep(r) => {
                ids(b, r.local_comm_id, r.remote_comm_id);
                put32(b, 32, r.local_qkey);
                put24(b, 36, r.local_qpn);
                put24(b, 40, r.local_eecn);
                put24(b, 44, r.starting_psn);
                b[48] = r.responder_resources;
                b[49] = r.initiator_depth;
                b[50] = (r.target_ack_delay << 3)
                    | ((r.failover_accepted & 3) << 1)
                    | u8::from(r.e2e_flow_control);
                b[51] = (r.rnr_retry_count << 5) | (u8::from(r.srq) << 4);
                put64(b, 52, r.local_ca_guid);
            }
            Self::Rej(r) => {
                ids(b, r.local_comm_id, r.remote_comm_id);
                b[32] = r.msg_rejected << 6;
                b[33] = r.reject_info_len << 1;
                put16(b, 34, r.reason);
            }
            Self::Mra(r) => {
                ids(b, r.local_comm_id, r.remote_comm_id);
                b[32] = r.msg_mraed << 6;
                b[33] = r.service_timeout << 3;
            }
            Self::Rtu(r) | Self::Drep(r) => ids(b, r.local_comm_id, r.remote_comm_id),
            Self::Dreq(r) => {
                ids(b, r.local_comm_id, r.remote_comm_id);
                put24(b, 32, r.remote_qpn);
            }
            Self::Lap(r) => {
                ids(b, r.local_comm_id, r.remote_comm_id);
                put24(b, 36, r.remote_qpn);
                b[39] = r.remote_cm_response_timeout << 3;
            }
            Self::Apr(r) => {
                ids(b, r.local_comm_id, r.remote_comm_id);
                b[32] = r.additional_info_len;
                b[33] = r.ap_status;
            }
            Self::SidrReq(r) => {
                put32(b, 24, r.request_id);
                put16(b, 28, r.pkey);
                put64(b, 32, r.service_id);
            }
            Self::SidrRep(r) => {
                put32(b, 24, r.request_id);
                b[28] = r.status;
                b[29] = r.additional_info_len;
                put24(b, 32, r.qpn);
                put64(b, 36, r.service_id);
                put32(b, 44, r.qkey);
            }
        }
    }
}

/// The name of a CM attribute.
pub fn attr_name(id: u16) -> &'static str {
    match id {
        attr::CLASS_PORT_INFO => "ClassPortInfo",
        attr::REQ => "REQ",
        attr::MRA => "MRA",
        attr::REJ => "REJ",
        attr::REP => "REP",
        attr::RTU => "RTU",
        attr::DREQ => "DREQ",
        attr::DREP => "DREP",
        attr::SIDR_REQ => "SIDR_REQ",
        attr::SIDR_REP => "SIDR_REP",
        attr::LAP => "LAP",
        attr::APR => "APR",
        _ => "Unknown",
    }
}

/// CM REJ reason names (§12.6.7.2, Table 107).
pub fn rej_reason_name(code: u16) -> &'static str {
    match code {
        1 => "no QP",
        2 => "no EEC",
        3 => "no resources",
        4 => "timeout",
        5 => "unsupported request",
        6 => "invalid Comm ID",
        7 => "invalid Comm instance",
        8 => "invalid Service ID",
        9 => "invalid transport type",
        10 => "stale connection",
        11 => "RDC does not exist",
        12 => "primary remote GID rejected",
        13 => "primary remote LID rejected",
        14 => "invalid primary SL",
        15 => "invalid primary traffic class",
        16 => "invalid primary hop limit",
        17 => "invalid primary packet rate",
        18 => "alternate remote GID rejected",
        19 => "alternate remote LID rejected",
        20 => "invalid alternate SL",
        21 => "invalid alternate traffic class",
        22 => "invalid alternate hop limit",
        23 => "invalid alternate packet rate",
        24 => "port CM redirect",
        25 => "port redirect",
        26 => "invalid path MTU",
        27 => "insufficient responder resources",
        28 => "consumer defined",
        29 => "invalid RNR retry count",
        30 => "duplicate local Comm ID",
        31 => "invalid class version",
        32 => "invalid primary flow label",
        33 => "invalid alternate flow label",
        35 => "vendor option not supported",
        _ => "unknown",
    }
}

/// Path MTU code → bytes (§9.7.5 / CM REQ path MTU).
pub fn mtu_bytes(code: u8) -> Option<u32> {
    match code {
        1 => Some(256),
        2 => Some(512),
        3 => Some(1024),
        4 => Some(2048),
        5 => Some(4096),
        _ => None,
    }
}

/// A decoded MAD: the common header and, for the CM class, the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mad {
    pub header: MadHeader,
    pub cm: Option<CmMessage>,
}

impl Mad {
    /// Decodes a MAD; a CM message that does not fit is left undecoded (`cm: None`).
    pub fn parse(b: &[u8]) -> Result<Self> {
        let header = MadHeader::parse(b)?;
        let cm = if header.mgmt_class == class::CM {
            CmMessage::parse(header.attr_id, b).ok()
        } else {
            None
        };
        Ok(Self { header, cm })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn req(qpn: u32, psn: u32, sid: u64) -> CmReq {
        CmReq {
            local_comm_id: 0x11223344,
            service_id: sid,
            local_ca_guid: 0x0002c90300a1b2c3,
            local_qpn: qpn,
            starting_psn: psn,
            path_mtu: 5,
            transport_type: 0,
            pkey: 0xffff,
            primary_flow_label: 0xabcde,
            primary_sl: 3,
            primary_local_ack_timeout: 18,
            rnr_retry_count: 7,
            max_cm_retries: 15,
            ip_cm: is_rdma_cm_service(sid).then_some(IpCm {
                ip_version: 4,
                src_port: 0xc001,
                src_ip: [0; 16],
                dst_ip: [1; 16],
            }),
            ..Default::default()
        }
    }

    proptest! {
        #[test]
        fn req_round_trip(qpn in 0u32..(1<<24), psn in 0u32..(1<<24), port: u16, rdma_cm: bool) {
            let sid = if rdma_cm { 0x0000_0000_0106_0000 | u64::from(port) } else { u64::from(port) << 20 };
            let m = CmMessage::Req(req(qpn, psn, sid));
            let mut b = [0u8; MAD_LEN];
            m.emit(&mut b);
            prop_assert_eq!(CmMessage::parse(attr::REQ, &b).unwrap(), m);
        }
        #[test]
        fn rep_round_trip(qpn in 0u32..(1<<24), psn in 0u32..(1<<24), l: u32, r: u32) {
            let m = CmMessage::Rep(CmRep { local_comm_id: l, remote_comm_id: r, local_qpn: qpn, starting_psn: psn,
                target_ack_delay: 15, rnr_retry_count: 7, srq: true, e2e_flow_control: true, ..Default::default() });
            let mut b = [0u8; MAD_LEN];
            m.emit(&mut b);
            prop_assert_eq!(CmMessage::parse(attr::REP, &b).unwrap(), m);
        }
        #[test]
        fn small_messages_round_trip(l: u32, r: u32, q in 0u32..(1<<24), reason: u16, which in 0usize..9) {
            let m = [
                CmMessage::Rej(CmRej { local_comm_id: l, remote_comm_id: r, msg_rejected: 1, reject_info_len: 3, reason }),
                CmMessage::Mra(CmMra { local_comm_id: l, remote_comm_id: r, msg_mraed: 2, service_timeout: 17 }),
                CmMessage::Rtu(CmIds { local_comm_id: l, remote_comm_id: r }),
                CmMessage::Drep(CmIds { local_comm_id: l, remote_comm_id: r }),
                CmMessage::Dreq(CmDreq { local_comm_id: l, remote_comm_id: r, remote_qpn: q }),
                CmMessage::Lap(CmLap { local_comm_id: l, remote_comm_id: r, remote_qpn: q, remote_cm_response_timeout: 9 }),
                CmMessage::Apr(CmApr { local_comm_id: l, remote_comm_id: r, additional_info_len: 4, ap_status: 3 }),
                CmMessage::SidrReq(CmSidrReq { request_id: l, pkey: reason, service_id: u64::from(r) }),
                CmMessage::SidrRep(CmSidrRep { request_id: l, status: 1, additional_info_len: 0, qpn: q, service_id: 9, qkey: r }),
            ][which];
            let mut b = [0u8; MAD_LEN];
            m.emit(&mut b);
            prop_assert_eq!(CmMessage::parse(m.attr_id(), &b).unwrap(), m);
        }
        #[test]
        fn never_panics(b in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = Mad::parse(&b);
            for a in 0x10..0x1b { let _ = CmMessage::parse(a, &b); }
        }
    }

    #[test]
    fn header_round_trip() {
        let h = MadHeader {
            base_version: 1,
            mgmt_class: 7,
            class_version: 2,
            method: 3,
            status: 0,
            class_specific: 0,
            tid: 0x1122334455667788,
            attr_id: 0x10,
            attr_mod: 0,
        };
        let mut b = [0u8; 24];
        h.emit(&mut b);
        assert_eq!(MadHeader::parse(&b).unwrap(), h);
        assert_eq!(rej_reason_name(28), "consumer defined");
        assert_eq!(service_port(0x0000000001061234), 0x1234);
        assert_eq!(service_port_space(0x0000000001061234), 6);
    }
}
