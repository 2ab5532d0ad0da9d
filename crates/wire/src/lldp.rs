//! LLDP (IEEE 802.1AB-2016 §8.4–8.5) and the DCB TLVs a lossless RoCE fabric advertises with
//! it (DCBX): ETS Configuration and Recommendation, PFC Configuration and Application Priority
//! (IEEE 802.1Q-2018 Annex D.2.8–D.2.10), and Congestion Notification (Annex D.2.7, 802.1Qau).
//!
//! An LLDPDU is a list of TLVs, each a 7-bit type and a 9-bit length followed by the value,
//! ending with an End of LLDPDU TLV (type 0). [`LldpPacket`] walks them without allocating; the
//! DCB TLVs are organizationally specific (type 127) with the IEEE 802.1 OUI 00-80-C2.

use crate::bytes::{be16, put16};
use crate::{Error, Result};

/// TLV types (IEEE 802.1AB §8.4.1, Table 8-1).
pub mod tlv {
    pub const END: u8 = 0;
    pub const CHASSIS_ID: u8 = 1;
    pub const PORT_ID: u8 = 2;
    pub const TTL: u8 = 3;
    pub const PORT_DESCRIPTION: u8 = 4;
    pub const SYSTEM_NAME: u8 = 5;
    pub const SYSTEM_DESCRIPTION: u8 = 6;
    pub const ORG: u8 = 127;
}

/// The IEEE 802.1 OUI of the DCB TLVs.
pub const OUI_8021: [u8; 3] = [0x00, 0x80, 0xc2];

/// IEEE 802.1 organizationally specific subtypes (IEEE 802.1Q-2018 Table D-1).
pub mod subtype {
    pub const CN: u8 = 0x08;
    pub const ETS_CONFIG: u8 = 0x09;
    pub const ETS_RECOMMENDATION: u8 = 0x0a;
    pub const PFC: u8 = 0x0b;
    pub const APP: u8 = 0x0c;
}

/// Application Priority selectors (IEEE 802.1Q-2018 Table D-9).
pub mod app_sel {
    /// The protocol is an EtherType (RoCEv1: 0x8915).
    pub const ETHERTYPE: u8 = 1;
    pub const TCP_SCTP: u8 = 2;
    /// A UDP or DCCP port (RoCEv2: 4791).
    pub const UDP_DCCP: u8 = 3;
    pub const TCP_SCTP_UDP_DCCP: u8 = 4;
    /// The protocol is a DSCP value.
    pub const DSCP: u8 = 5;
}

/// The pre-standard CEE DCBX TLV (DCB Capability Exchange Protocol Base Specification 1.01):
/// OUI 00-1B-21, subtype 2, holding sub-TLVs with the same 7-bit type / 9-bit length header.
pub const OUI_CEE: [u8; 3] = [0x00, 0x1b, 0x21];
pub const CEE_SUBTYPE: u8 = 2;

/// CEE DCBX sub-TLV types.
pub mod cee {
    pub const CONTROL: u8 = 1;
    pub const PRIORITY_GROUPS: u8 = 2;
    pub const PFC: u8 = 3;
    pub const APP: u8 = 4;
    /// A feature sub-TLV's header after the type/length: operating and maximum version,
    /// flags (enable, willing, error), subtype.
    pub const FEATURE_HEADER_LEN: usize = 4;
    pub const FLAG_ENABLE: u8 = 0x80;
    pub const FLAG_WILLING: u8 = 0x40;
    pub const FLAG_ERROR: u8 = 0x20;
}

/// TLV header length (type and length in 16 bits).
pub const TLV_HEADER_LEN: usize = 2;
/// OUI and subtype before an organizationally specific TLV's body.
pub const ORG_HEADER_LEN: usize = 4;

/// One TLV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tlv<'a> {
    pub ty: u8,
    pub value: &'a [u8],
}

impl<'a> Tlv<'a> {
    /// An organizationally specific TLV as (OUI, subtype, body).
    pub fn org(&self) -> Option<([u8; 3], u8, &'a [u8])> {
        if self.ty != tlv::ORG || self.value.len() < ORG_HEADER_LEN {
            return None;
        }
        let v = self.value;
        Some(([v[0], v[1], v[2]], v[3], &v[ORG_HEADER_LEN..]))
    }

    /// Writes a TLV header for a value of `len` bytes (at most 511) at the start of `buf`.
    pub fn emit_header(ty: u8, len: usize, buf: &mut [u8]) {
        put16(buf, 0, u16::from(ty & 0x7f) << 9 | (len as u16 & 0x1ff));
    }

    /// Writes an IEEE 802.1 organizationally specific TLV's header, OUI and subtype for a body
    /// of `body_len` bytes; the body goes at `buf[ORG_HEADER_LEN + TLV_HEADER_LEN..]`.
    pub fn emit_ieee_header(subtype: u8, body_len: usize, buf: &mut [u8]) {
        Self::emit_header(tlv::ORG, ORG_HEADER_LEN + body_len, buf);
        buf[2..5].copy_from_slice(&OUI_8021);
        buf[5] = subtype;
    }
}

/// The TLVs of an LLDPDU in order, up to End of LLDPDU. A TLV whose length runs past the bytes
/// ends the walk and sets `cut`.
#[derive(Debug, Clone)]
pub struct Tlvs<'a> {
    rest: &'a [u8],
    /// The last TLV walked ran past the end of the bytes (a snaplen, or damage).
    pub cut: bool,
}

impl<'a> Iterator for Tlvs<'a> {
    type Item = Tlv<'a>;

    fn next(&mut self) -> Option<Tlv<'a>> {
        if self.rest.len() < TLV_HEADER_LEN {
            self.cut |= !self.rest.is_empty();
            self.rest = &[];
            return None;
        }
        let h = be16(self.rest, 0);
        let (ty, len) = ((h >> 9) as u8, usize::from(h & 0x1ff));
        if ty == tlv::END {
            self.rest = &[];
            return None;
        }
        let Some(value) = self.rest.get(TLV_HEADER_LEN..TLV_HEADER_LEN + len) else {
            self.cut = true;
            self.rest = &[];
            return None;
        };
        self.rest = &self.rest[TLV_HEADER_LEN + len..];
        Some(Tlv { ty, value })
    }
}

/// A view of an LLDPDU (the bytes after EtherType 0x88CC).
#[derive(Debug, Clone, Copy)]
pub struct LldpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> LldpPacket<T> {
    pub fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// At least one TLV header.
    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < TLV_HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(Self { buffer })
    }

    pub fn tlvs(&self) -> Tlvs<'_> {
        Tlvs {
            rest: self.buffer.as_ref(),
            cut: false,
        }
    }
}

/// The fields, borrowed from the captured bytes (not from the view).
impl<'a> LldpPacket<&'a [u8]> {
    fn all(&self) -> Tlvs<'a> {
        Tlvs {
            rest: self.buffer,
            cut: false,
        }
    }

    fn first(&self, ty: u8) -> Option<&'a [u8]> {
        self.all().find(|t| t.ty == ty).map(|t| t.value)
    }

    /// Chassis ID subtype and ID (§8.5.2).
    pub fn chassis_id(&self) -> Option<(u8, &'a [u8])> {
        self.first(tlv::CHASSIS_ID)
            .and_then(|v| Some((*v.first()?, &v[1..])))
    }

    /// Port ID subtype and ID (§8.5.3).
    pub fn port_id(&self) -> Option<(u8, &'a [u8])> {
        self.first(tlv::PORT_ID)
            .and_then(|v| Some((*v.first()?, &v[1..])))
    }

    /// Who sent it, for people: its system name when printable, else its chassis ID.
    pub fn sender(&self) -> Option<IdDisplay<'a>> {
        match self.system_name().filter(|n| text(n).is_some()) {
            // A name is shown as text whatever the subtype says: 0 is no MAC subtype.
            Some(id) => Some(IdDisplay {
                subtype: 0,
                id,
                port: false,
            }),
            None => self.chassis_id().map(|(subtype, id)| IdDisplay {
                subtype,
                id,
                port: false,
            }),
        }
    }

    /// The port ID, for people.
    pub fn port(&self) -> Option<IdDisplay<'a>> {
        self.port_id().map(|(subtype, id)| IdDisplay {
            subtype,
            id,
            port: true,
        })
    }

    /// Time to live in seconds (§8.5.4).
    pub fn ttl(&self) -> Option<u16> {
        self.first(tlv::TTL)
            .filter(|v| v.len() >= 2)
            .map(|v| be16(v, 0))
    }

    pub fn system_name(&self) -> Option<&'a [u8]> {
        self.first(tlv::SYSTEM_NAME)
    }

    /// The body of the first organizationally specific TLV of `oui` and `subtype`.
    pub fn org(&self, oui: [u8; 3], subtype: u8) -> Option<&'a [u8]> {
        self.all()
            .filter_map(|t| t.org())
            .find(|&(o, s, _)| o == oui && s == subtype)
            .map(|(_, _, body)| body)
    }

    /// The body of the first IEEE 802.1 TLV of `subtype`.
    pub fn ieee(&self, subtype: u8) -> Option<&'a [u8]> {
        self.org(OUI_8021, subtype)
    }

    pub fn pfc(&self) -> Option<PfcConfig> {
        PfcConfig::parse(self.ieee(subtype::PFC)?).ok()
    }

    /// ETS Configuration (not the Recommendation).
    pub fn ets(&self) -> Option<EtsConfig> {
        EtsConfig::parse(self.ieee(subtype::ETS_CONFIG)?).ok()
    }

    pub fn cn(&self) -> Option<CnConfig> {
        CnConfig::parse(self.ieee(subtype::CN)?).ok()
    }

    /// The CEE DCBX feature sub-TLV of type `ty` ([`cee`]): its flags and its configuration.
    pub fn cee(&self, ty: u8) -> Option<(u8, &'a [u8])> {
        let body = self.org(OUI_CEE, CEE_SUBTYPE)?;
        let sub = Tlvs {
            rest: body,
            cut: false,
        }
        .find(|t| t.ty == ty)?;
        let v = sub.value;
        (v.len() >= cee::FEATURE_HEADER_LEN).then(|| (v[2], &v[cee::FEATURE_HEADER_LEN..]))
    }

    /// PFC from a CEE DCBX TLV, in IEEE terms: willing from the feature's flags, the capability
    /// from its traffic classes, the enable bits as they are (bit n: priority n).
    pub fn cee_pfc(&self) -> Option<PfcConfig> {
        let (flags, c) = self.cee(cee::PFC)?;
        Some(PfcConfig {
            willing: flags & cee::FLAG_WILLING != 0,
            mbc: false,
            cap: *c.get(1)? & 0x0f,
            enable: *c.first()?,
        })
    }

    /// The entries of a CEE DCBX application sub-TLV.
    pub fn cee_app(&self) -> impl Iterator<Item = CeeApp> + 'a {
        self.cee(cee::APP)
            .map(|(_, c)| c)
            .unwrap_or_default()
            .chunks_exact(CeeApp::LEN)
            .filter_map(|c| CeeApp::parse(c).ok())
    }

    /// PFC from the IEEE TLV, else from a CEE DCBX one.
    pub fn any_pfc(&self) -> Option<PfcConfig> {
        self.pfc().or_else(|| self.cee_pfc())
    }

    /// The IEEE Application Priority entries, then the CEE ones in IEEE terms (one entry per
    /// priority of a CEE entry's map).
    pub fn any_app(&self) -> impl Iterator<Item = AppEntry> + 'a {
        self.app().chain(self.cee_app().flat_map(|c| c.entries()))
    }

    /// The entries of the first Application Priority TLV (a reserved octet, then 3 bytes each).
    pub fn app(&self) -> impl Iterator<Item = AppEntry> + 'a {
        self.ieee(subtype::APP)
            .map(|b| b.get(1..).unwrap_or_default())
            .unwrap_or_default()
            .chunks_exact(AppEntry::LEN)
            .filter_map(|c| AppEntry::parse(c).ok())
    }
}

/// A chassis or port ID (subtype, bytes) for people: a MAC address (chassis subtype 4, port
/// subtype 3) as one, printable text as text, anything else in hex.
#[derive(Debug, Clone, Copy)]
pub struct IdDisplay<'a> {
    pub subtype: u8,
    pub id: &'a [u8],
    /// The ID is a port's (else a chassis's): the subtypes number MAC addresses differently.
    pub port: bool,
}

impl core::fmt::Display for IdDisplay<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mac_subtype = if self.port { 3 } else { 4 };
        match <[u8; 6]>::try_from(self.id) {
            Ok(m) if self.subtype == mac_subtype => {
                return write!(
                    f,
                    "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
                    m[0], m[1], m[2], m[3], m[4], m[5]
                )
            }
            _ => {}
        }
        match text(self.id) {
            Some(s) => f.write_str(s),
            None => self.id.iter().try_for_each(|b| write!(f, "{b:02x}")),
        }
    }
}

/// `b` as text when it is printable ASCII (names, interface names), else `None`.
pub fn text(b: &[u8]) -> Option<&str> {
    std::str::from_utf8(b)
        .ok()
        .filter(|s| !s.is_empty() && s.bytes().all(|c| c.is_ascii_graphic() || c == b' '))
}

/// One CEE DCBX application entry: `protocol` (an EtherType for selector 0, a TCP/UDP port for
/// selector 1) on the priorities of the `priorities` bitmap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CeeApp {
    pub protocol: u16,
    /// 2 bits: 0 EtherType, 1 TCP/UDP port.
    pub selector: u8,
    /// 24 bits, the low 2 bits of its first octet zero (an OUI's are), zero for the
    /// well-known protocols.
    pub oui: u32,
    /// Bit n: priority n.
    pub priorities: u8,
}

impl CeeApp {
    pub const LEN: usize = 6;

    /// Protocol ID (2 bytes), the OUI with the 2-bit selector in the low bits of its first
    /// octet, the priority map.
    pub fn parse(b: &[u8]) -> Result<Self> {
        let b = b.get(..Self::LEN).ok_or(Error::Truncated)?;
        Ok(Self {
            protocol: be16(b, 0),
            selector: b[2] & 0x03,
            oui: u32::from(b[2] & 0xfc) << 16 | u32::from(be16(b, 3)),
            priorities: b[5],
        })
    }

    pub fn emit(&self, b: &mut [u8]) {
        put16(b, 0, self.protocol);
        b[2] = (self.oui >> 16) as u8 & 0xfc | self.selector & 0x03;
        put16(b, 3, self.oui as u16);
        b[5] = self.priorities;
    }

    /// The entry in IEEE terms, one per priority of the map.
    pub fn entries(self) -> impl Iterator<Item = AppEntry> {
        let selector = if self.selector == 0 {
            app_sel::ETHERTYPE
        } else {
            app_sel::TCP_SCTP_UDP_DCCP
        };
        (0..8u8)
            .filter(move |p| self.priorities >> p & 1 == 1)
            .map(move |priority| AppEntry {
                priority,
                selector,
                protocol: self.protocol,
            })
    }
}

/// PFC Configuration (IEEE 802.1Q-2018 D.2.10): the priorities on which PFC is enabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PfcConfig {
    /// Willing to accept the peer's configuration.
    pub willing: bool,
    /// MACsec bypass capability.
    pub mbc: bool,
    /// How many traffic classes may have PFC enabled at once (4 bits).
    pub cap: u8,
    /// Bit n: PFC enabled on priority n.
    pub enable: u8,
}

impl PfcConfig {
    /// Body length after the OUI and subtype.
    pub const LEN: usize = 2;

    pub fn parse(b: &[u8]) -> Result<Self> {
        let b = b.get(..Self::LEN).ok_or(Error::Truncated)?;
        Ok(Self {
            willing: b[0] & 0x80 != 0,
            mbc: b[0] & 0x40 != 0,
            cap: b[0] & 0x0f,
            enable: b[1],
        })
    }

    pub fn emit(&self, b: &mut [u8]) {
        b[0] = u8::from(self.willing) << 7 | u8::from(self.mbc) << 6 | self.cap & 0x0f;
        b[1] = self.enable;
    }
}

/// ETS Configuration (IEEE 802.1Q-2018 D.2.8): priorities to traffic classes, each class's
/// share of the bandwidth and its transmission selection algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EtsConfig {
    pub willing: bool,
    /// Credit-based shaper supported.
    pub cbs: bool,
    /// Traffic classes supported (3 bits; 0 means 8).
    pub max_tcs: u8,
    /// The traffic class of each priority (4 bits each).
    pub prio_tc: [u8; 8],
    /// Percent of the bandwidth of each traffic class.
    pub tc_bw: [u8; 8],
    /// Transmission selection algorithm of each traffic class (0 strict, 2 ETS, …).
    pub tsa: [u8; 8],
}

impl EtsConfig {
    pub const LEN: usize = 21;

    pub fn parse(b: &[u8]) -> Result<Self> {
        let b = b.get(..Self::LEN).ok_or(Error::Truncated)?;
        let mut prio_tc = [0u8; 8];
        for (p, tc) in prio_tc.iter_mut().enumerate() {
            let byte = b[1 + p / 2];
            *tc = if p % 2 == 0 { byte >> 4 } else { byte & 0x0f };
        }
        let mut tc_bw = [0u8; 8];
        tc_bw.copy_from_slice(&b[5..13]);
        let mut tsa = [0u8; 8];
        tsa.copy_from_slice(&b[13..21]);
        Ok(Self {
            willing: b[0] & 0x80 != 0,
            cbs: b[0] & 0x40 != 0,
            max_tcs: b[0] & 0x07,
            prio_tc,
            tc_bw,
            tsa,
        })
    }

    pub fn emit(&self, b: &mut [u8]) {
        b[0] = u8::from(self.willing) << 7 | u8::from(self.cbs) << 6 | self.max_tcs & 0x07;
        for i in 0..4 {
            b[1 + i] = (self.prio_tc[2 * i] & 0x0f) << 4 | self.prio_tc[2 * i + 1] & 0x0f;
        }
        b[5..13].copy_from_slice(&self.tc_bw);
        b[13..21].copy_from_slice(&self.tsa);
    }
}

/// Congestion Notification (IEEE 802.1Q-2018 D.2.7): the priorities that are congestion
/// notification priority values, and those ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CnConfig {
    /// Bit n: priority n is a CNPV.
    pub cnpv: u8,
    pub ready: u8,
}

impl CnConfig {
    pub const LEN: usize = 2;

    pub fn parse(b: &[u8]) -> Result<Self> {
        let b = b.get(..Self::LEN).ok_or(Error::Truncated)?;
        Ok(Self {
            cnpv: b[0],
            ready: b[1],
        })
    }

    pub fn emit(&self, b: &mut [u8]) {
        b[0] = self.cnpv;
        b[1] = self.ready;
    }
}

/// One Application Priority entry (IEEE 802.1Q-2018 D.2.9): traffic of `protocol` (as the
/// selector says: an EtherType, a port or a DSCP) goes on `priority`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppEntry {
    /// 3 bits.
    pub priority: u8,
    /// 3 bits ([`app_sel`]).
    pub selector: u8,
    pub protocol: u16,
}

impl AppEntry {
    pub const LEN: usize = 3;

    pub fn parse(b: &[u8]) -> Result<Self> {
        let b = b.get(..Self::LEN).ok_or(Error::Truncated)?;
        Ok(Self {
            priority: b[0] >> 5,
            selector: b[0] & 0x07,
            protocol: be16(b, 1),
        })
    }

    pub fn emit(&self, b: &mut [u8]) {
        b[0] = (self.priority & 0x07) << 5 | self.selector & 0x07;
        put16(b, 1, self.protocol);
    }

    /// RoCE: RoCEv2's UDP port 4791 or RoCEv1's EtherType 0x8915.
    pub fn is_roce(&self) -> bool {
        matches!(
            (self.selector, self.protocol),
            (app_sel::UDP_DCCP | app_sel::TCP_SCTP_UDP_DCCP, 4791) | (app_sel::ETHERTYPE, 0x8915)
        )
    }
}

/// Writes a CEE DCBX TLV (control, PFC and application sub-TLVs, versions 0) at the start
/// of `b`; returns its length.
pub fn emit_cee_tlv(b: &mut [u8], willing: bool, enable: u8, app: &[CeeApp]) -> usize {
    let sub = |b: &mut [u8], ty: u8, len: usize| Tlv::emit_header(ty, len, b);
    let mut at = TLV_HEADER_LEN + ORG_HEADER_LEN;
    sub(&mut b[at..], cee::CONTROL, 10);
    at += 12;
    sub(&mut b[at..], cee::PFC, cee::FEATURE_HEADER_LEN + 2);
    let flags = cee::FLAG_ENABLE | if willing { cee::FLAG_WILLING } else { 0 };
    b[at + 2..at + 6].copy_from_slice(&[0, 0, flags, 0]);
    b[at + 6] = enable;
    b[at + 7] = 8;
    at += 8;
    sub(
        &mut b[at..],
        cee::APP,
        cee::FEATURE_HEADER_LEN + CeeApp::LEN * app.len(),
    );
    b[at + 2..at + 6].copy_from_slice(&[0, 0, cee::FLAG_ENABLE, 0]);
    for (i, e) in app.iter().enumerate() {
        e.emit(&mut b[at + 6 + CeeApp::LEN * i..]);
    }
    at += 6 + CeeApp::LEN * app.len();
    Tlv::emit_header(tlv::ORG, at - TLV_HEADER_LEN, b);
    b[2..5].copy_from_slice(&OUI_CEE);
    b[5] = CEE_SUBTYPE;
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An LLDPDU of a chassis ID, a TTL, and the four DCB TLVs, then End.
    fn lldpdu(pfc: PfcConfig, ets: EtsConfig, cn: CnConfig, app: &[AppEntry]) -> Vec<u8> {
        let mut b = vec![0u8; 512];
        let mut at = 0;
        Tlv::emit_header(tlv::CHASSIS_ID, 7, &mut b[at..]);
        b[at + 2] = 4;
        b[at + 3..at + 9].copy_from_slice(&[0, 1, 2, 3, 4, 5]);
        at += 9;
        Tlv::emit_header(tlv::TTL, 2, &mut b[at..]);
        put16(&mut b, at + 2, 120);
        at += 4;
        let body = TLV_HEADER_LEN + ORG_HEADER_LEN;
        Tlv::emit_ieee_header(subtype::PFC, PfcConfig::LEN, &mut b[at..]);
        pfc.emit(&mut b[at + body..]);
        at += body + PfcConfig::LEN;
        Tlv::emit_ieee_header(subtype::ETS_CONFIG, EtsConfig::LEN, &mut b[at..]);
        ets.emit(&mut b[at + body..]);
        at += body + EtsConfig::LEN;
        Tlv::emit_ieee_header(subtype::CN, CnConfig::LEN, &mut b[at..]);
        cn.emit(&mut b[at + body..]);
        at += body + CnConfig::LEN;
        Tlv::emit_ieee_header(subtype::APP, 1 + AppEntry::LEN * app.len(), &mut b[at..]);
        for (i, e) in app.iter().enumerate() {
            e.emit(&mut b[at + body + 1 + AppEntry::LEN * i..]);
        }
        at += body + 1 + AppEntry::LEN * app.len();
        Tlv::emit_header(tlv::END, 0, &mut b[at..]);
        b.truncate(at + 2);
        b
    }

    fn app_entry() -> impl Strategy<Value = AppEntry> {
        (0u8..8, 0u8..8, any::<u16>()).prop_map(|(priority, selector, protocol)| AppEntry {
            priority,
            selector,
            protocol,
        })
    }

    proptest! {
        #[test]
        fn dcb_tlvs_round_trip(
            (willing, mbc, cap, enable) in (any::<bool>(), any::<bool>(), 0u8..16, any::<u8>()),
            (ew, cbs, max_tcs) in (any::<bool>(), any::<bool>(), 0u8..8),
            prio_tc in proptest::array::uniform8(0u8..16),
            tc_bw: [u8; 8],
            tsa: [u8; 8],
            (cnpv, ready) in (any::<u8>(), any::<u8>()),
            app in proptest::collection::vec(app_entry(), 0..20),
        ) {
            let pfc = PfcConfig { willing, mbc, cap, enable };
            let ets = EtsConfig { willing: ew, cbs, max_tcs, prio_tc, tc_bw, tsa };
            let cn = CnConfig { cnpv, ready };
            let b = lldpdu(pfc, ets, cn, &app);
            let p = LldpPacket::new_checked(&b[..]).unwrap();
            prop_assert_eq!(p.chassis_id(), Some((4, &[0u8, 1, 2, 3, 4, 5][..])));
            prop_assert_eq!(p.ttl(), Some(120));
            prop_assert_eq!(p.pfc(), Some(pfc));
            prop_assert_eq!(p.ets(), Some(ets));
            prop_assert_eq!(p.cn(), Some(cn));
            prop_assert_eq!(p.app().collect::<Vec<_>>(), app);
            let mut t = p.tlvs();
            prop_assert_eq!(t.by_ref().count(), 6);
            prop_assert!(!t.cut);
        }

        /// Any bytes: the walk ends, and every accessor answers without panicking.
        #[test]
        fn any_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..600)) {
            if let Ok(p) = LldpPacket::new_checked(&b[..]) {
                let n = p.tlvs().count();
                prop_assert!(n <= b.len() / TLV_HEADER_LEN);
                let _ = (p.chassis_id(), p.port_id(), p.ttl(), p.system_name());
                let _ = (p.pfc(), p.ets(), p.cn(), p.app().count());
            }
        }
    }

    proptest! {
        #[test]
        fn cee_round_trip(
            willing: bool,
            enable: u8,
            app in proptest::collection::vec(
                (any::<u16>(), 0u8..4, (0u32..1 << 24).prop_map(|o| o & 0xfc_ffff), any::<u8>()),
                0..10,
            ),
        ) {
            let app: Vec<CeeApp> = app
                .into_iter()
                .map(|(protocol, selector, oui, priorities)| CeeApp { protocol, selector, oui, priorities })
                .collect();
            let mut b = vec![0u8; 512];
            let n = emit_cee_tlv(&mut b, willing, enable, &app);
            Tlv::emit_header(tlv::END, 0, &mut b[n..]);
            let p = LldpPacket::new_checked(&b[..n + 2]).unwrap();
            prop_assert_eq!(p.cee_pfc(), Some(PfcConfig { willing, mbc: false, cap: 8, enable }));
            prop_assert_eq!(p.any_pfc(), p.cee_pfc());
            prop_assert_eq!(p.cee_app().collect::<Vec<_>>(), app.clone());
            let n_entries: u32 = app.iter().map(|a| a.priorities.count_ones()).sum();
            prop_assert_eq!(p.any_app().count(), n_entries as usize);
        }
    }

    #[test]
    fn a_tlv_past_the_end_is_cut() {
        let mut b = [0u8; 6];
        Tlv::emit_header(tlv::SYSTEM_NAME, 10, &mut b);
        let p = LldpPacket::new_checked(&b[..]).unwrap();
        let mut t = p.tlvs();
        assert_eq!(t.next(), None);
        assert!(t.cut);
    }

    #[test]
    fn roce_app_entries() {
        let e = |selector, protocol| AppEntry {
            priority: 3,
            selector,
            protocol,
        };
        assert!(e(app_sel::UDP_DCCP, 4791).is_roce());
        assert!(e(app_sel::ETHERTYPE, 0x8915).is_roce());
        assert!(!e(app_sel::TCP_SCTP, 4791).is_roce());
        assert!(!e(app_sel::TCP_SCTP_UDP_DCCP, 3260).is_roce());
    }
}
