//! Every decoded field by name, as Wireshark's display-filter fields name them (without the
//! `infiniband.` prefix). The JSON printer and the display filter both walk [`visit`], so the
//! two always agree. `docs/json.md` documents each key.

use crate::ext::AethKind;
use crate::frame::{DecodeError, Frame, LinkHeader, Other};
use crate::lldp::{cee, LldpPacket};
use crate::macctl::MacControl;
use crate::mad::{self, CmMessage};
use crate::opcode::OpInfo;

/// A field's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    U(u64),
    Bool(bool),
    Mac([u8; 6]),
    Ipv4([u8; 4]),
    /// An IPv6 address or a GID.
    Ipv6([u8; 16]),
    Str(&'static str),
    Bytes(&'a [u8]),
    /// Text as captured (an LLDP name), shown with invalid UTF-8 replaced.
    Text(&'a [u8]),
    /// Nanoseconds since the epoch.
    Time(u64),
    Error(DecodeError),
}

impl Value<'_> {
    /// The value as an integer, for comparisons (booleans are 0/1).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Self::U(v) | Self::Time(v) => Some(v),
            Self::Bool(b) => Some(u64::from(b)),
            _ => None,
        }
    }
}

impl core::fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::U(v) => write!(f, "{v}"),
            Self::Bool(b) => write!(f, "{}", u8::from(b)),
            Self::Mac(m) => write!(
                f,
                "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
                m[0], m[1], m[2], m[3], m[4], m[5]
            ),
            Self::Ipv4(a) => write!(f, "{}", core::net::Ipv4Addr::from(a)),
            Self::Ipv6(a) => write!(f, "{}", core::net::Ipv6Addr::from(a)),
            Self::Str(s) => f.write_str(s),
            Self::Bytes(b) => {
                for x in b {
                    write!(f, "{x:02x}")?;
                }
                Ok(())
            }
            Self::Text(b) => f.write_str(&String::from_utf8_lossy(b)),
            Self::Time(ns) => write!(f, "{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000),
            Self::Error(e) => write!(f, "{e}"),
        }
    }
}

/// Per-record facts that are not in the frame bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecordMeta {
    /// 1-based frame number across the files shown.
    pub number: u64,
    pub ts_ns: u64,
    pub interface: u32,
}

/// Calls `f` with every field of the frame, outermost layer first.
pub fn visit<'a>(m: &RecordMeta, fr: &Frame<'a>, f: &mut dyn FnMut(&'static str, Value<'a>)) {
    use Value::*;
    f("frame.number", U(m.number));
    f("frame.time_epoch", Time(m.ts_ns));
    f("frame.len", U(u64::from(fr.orig_len)));
    f("frame.cap_len", U(fr.data.len() as u64));
    f("frame.interface_id", U(u64::from(m.interface)));
    f("frame.linktype", U(u64::from(fr.linktype)));
    f("frame.truncated", Bool(fr.truncated));
    if let Some(e) = fr.error {
        f("frame.error", Error(e));
    }
    match fr.link {
        LinkHeader::None => {}
        LinkHeader::Sll(s) => {
            f("sll.pkttype", U(u64::from(s.pkttype)));
            f("sll.hatype", U(u64::from(s.hatype)));
            f("sll.etype", U(u64::from(s.protocol)));
        }
        LinkHeader::Sll2(s) => {
            f("sll.pkttype", U(u64::from(s.pkttype)));
            f("sll.hatype", U(u64::from(s.hatype)));
            f("sll.ifindex", U(u64::from(s.ifindex)));
            f("sll.etype", U(u64::from(s.protocol)));
        }
        LinkHeader::Erf(e) => {
            f("erf.types.type", U(u64::from(e.rtype)));
            f("erf.flags", U(u64::from(e.flags)));
            f("erf.rlen", U(u64::from(e.rlen)));
            f("erf.wlen", U(u64::from(e.wlen)));
        }
        LinkHeader::Ipoib(i) => {
            f("ipoib.src.qpn", U(u64::from(i.src_qpn)));
            f("ipoib.src.gid", Ipv6(i.src_gid));
            f("ipoib.dst.qpn", U(u64::from(i.dst_qpn)));
            f("ipoib.dst.gid", Ipv6(i.dst_gid));
            f("ipoib.type", U(u64::from(i.ethertype)));
        }
    }
    if let Some(t) = fr.tunnel {
        if let Some(g) = t.gre {
            f("gre.flags_and_version", U(u64::from(g.flags_version)));
            f("gre.proto", U(u64::from(g.protocol)));
            if let Some(c) = g.checksum {
                f("gre.checksum", U(u64::from(c >> 16)));
            }
            if let Some(k) = g.key {
                f("gre.key", U(u64::from(k)));
            }
            if let Some(n) = g.sequence {
                f("gre.sequence_number", U(u64::from(n)));
            }
        }
        if let Some(v) = t.vxlan {
            f("vxlan.flags", U(u64::from(v.flags)));
            f("vxlan.vni", U(u64::from(v.vni)));
        }
        if let Some(e) = t.erspan {
            f("erspan.version", U(u64::from(e.version)));
            f("erspan.vlan", U(u64::from(e.vlan)));
            f("erspan.cos", U(u64::from(e.cos)));
            if e.version == 2 {
                f("erspan.bso", U(u64::from(e.encap)));
            } else {
                f("erspan.encap", U(u64::from(e.encap)));
            }
            f("erspan.truncated", U(u64::from(e.truncated)));
            f("erspan.spanid", U(u64::from(e.session)));
            if e.version == 2 {
                f("erspan.timestamp", U(u64::from(e.timestamp)));
                f("erspan.sgt", U(u64::from(e.sgt)));
                f("erspan.p", U(u64::from(e.p)));
                f("erspan.ft", U(u64::from(e.frame_type)));
                f("erspan.hw", U(u64::from(e.hw_id)));
                f("erspan.direction", Bool(e.direction));
                f("erspan.gra", U(u64::from(e.granularity)));
                f("erspan.o", U(u64::from(e.platform.is_some())));
            } else {
                f("erspan.index", U(u64::from(e.index)));
            }
        }
    }
    if let Some(e) = fr.eth {
        f("eth.dst", Mac(e.dst));
        f("eth.src", Mac(e.src));
        f("eth.type", U(u64::from(e.ethertype)));
    }
    for (i, v) in fr.vlans.iter().enumerate() {
        if let Some(v) = v {
            let names = if i == 0 {
                ["vlan.priority", "vlan.dei", "vlan.id", "vlan.etype"]
            } else {
                [
                    "vlan.inner.priority",
                    "vlan.inner.dei",
                    "vlan.inner.id",
                    "vlan.inner.etype",
                ]
            };
            f(names[0], U(u64::from(v.pcp)));
            f(names[1], Bool(v.dei));
            f(names[2], U(u64::from(v.vid)));
            f(names[3], U(u64::from(v.ethertype)));
        }
    }
    if let Some(mc) = fr.macctl {
        f("macc.opcode", U(u64::from(mc.opcode())));
        match mc {
            MacControl::Pause { quanta } => f("macc.pause_time", U(u64::from(quanta))),
            MacControl::Pfc { enable, quanta } => {
                const C: [&str; 8] = [
                    "macc.cbfc.pause_time.c0",
                    "macc.cbfc.pause_time.c1",
                    "macc.cbfc.pause_time.c2",
                    "macc.cbfc.pause_time.c3",
                    "macc.cbfc.pause_time.c4",
                    "macc.cbfc.pause_time.c5",
                    "macc.cbfc.pause_time.c6",
                    "macc.cbfc.pause_time.c7",
                ];
                f("macc.cbfc.enbv", U(u64::from(enable)));
                for (n, q) in C.iter().zip(quanta) {
                    f(n, U(u64::from(q)));
                }
            }
            MacControl::Other { .. } => {}
        }
    }
    if let Some(ip) = fr.ipv4 {
        f("ip.version", U(4));
        f("ip.hdr_len", U(u64::from(ip.header_len)));
        f("ip.dsfield.dscp", U(u64::from(ip.dscp)));
        f("ip.dsfield.ecn", U(u64::from(ip.ecn)));
        f("ip.len", U(u64::from(ip.total_len)));
        f("ip.id", U(u64::from(ip.ident)));
        f("ip.flags.df", Bool(ip.dont_frag));
        f("ip.flags.mf", Bool(ip.more_frags));
        f("ip.frag_offset", U(u64::from(ip.frag_offset)));
        f("ip.ttl", U(u64::from(ip.ttl)));
        f("ip.proto", U(u64::from(ip.protocol)));
        f("ip.checksum", U(u64::from(ip.checksum)));
        f("ip.src", Ipv4(ip.src));
        f("ip.dst", Ipv4(ip.dst));
    }
    if let Some(ip) = fr.ipv6 {
        f("ipv6.tclass", U(u64::from(ip.traffic_class)));
        f("ipv6.tclass.dscp", U(u64::from(ip.dscp())));
        f("ipv6.tclass.ecn", U(u64::from(ip.ecn())));
        f("ipv6.flow", U(u64::from(ip.flow_label)));
        f("ipv6.plen", U(u64::from(ip.payload_len)));
        f("ipv6.nxt", U(u64::from(ip.next_header)));
        f("ipv6.hlim", U(u64::from(ip.hop_limit)));
        f("ipv6.src", Ipv6(ip.src));
        f("ipv6.dst", Ipv6(ip.dst));
    }
    if let Some(u) = fr.udp {
        f("udp.srcport", U(u64::from(u.src_port)));
        f("udp.dstport", U(u64::from(u.dst_port)));
        f("udp.length", U(u64::from(u.length)));
        f("udp.checksum", U(u64::from(u.checksum)));
    }
    match fr.other {
        Some(Other::Tcp {
            src_port,
            dst_port,
            seq,
            ack,
            flags,
            payload_len,
        }) => {
            f("tcp.srcport", U(u64::from(src_port)));
            f("tcp.dstport", U(u64::from(dst_port)));
            f("tcp.seq_raw", U(u64::from(seq)));
            f("tcp.ack_raw", U(u64::from(ack)));
            f("tcp.flags", U(u64::from(flags)));
            f("tcp.len", U(u64::from(payload_len)));
        }
        Some(Other::Icmp { ty, code }) => {
            f("icmp.type", U(u64::from(ty)));
            f("icmp.code", U(u64::from(code)));
        }
        Some(Other::Icmpv6 { ty, code }) => {
            f("icmpv6.type", U(u64::from(ty)));
            f("icmpv6.code", U(u64::from(code)));
        }
        Some(Other::Arp {
            op,
            sender_ip,
            target_ip,
        }) => {
            f("arp.opcode", U(u64::from(op)));
            f("arp.src.proto_ipv4", Ipv4(sender_ip));
            f("arp.dst.proto_ipv4", Ipv4(target_ip));
        }
        Some(Other::Lldp { .. }) => {
            f("lldp", Bool(true));
            if let Some(l) = fr.lldp() {
                lldp(&l, f);
            }
        }
        Some(Other::Llc { dsap, ssap }) => {
            f("llc.dsap", U(u64::from(dsap)));
            f("llc.ssap", U(u64::from(ssap)));
        }
        None => {}
    }
    if let Some(e) = fr.encap {
        f("rdma.encap", Str(e.name()));
    }
    if let Some(l) = fr.lrh {
        f("lrh.vl", U(u64::from(l.vl)));
        f("lrh.lver", U(u64::from(l.lver)));
        f("lrh.sl", U(u64::from(l.sl)));
        f("lrh.lnh", U(u64::from(l.lnh)));
        f("lrh.dlid", U(u64::from(l.dlid)));
        f("lrh.pktlen", U(u64::from(l.pktlen)));
        f("lrh.slid", U(u64::from(l.slid)));
    }
    if let Some(g) = fr.grh {
        f("grh.ipver", U(u64::from(g.ipver)));
        f("grh.tclass", U(u64::from(g.tclass)));
        f("grh.flowlabel", U(u64::from(g.flowlabel)));
        f("grh.paylen", U(u64::from(g.paylen)));
        f("grh.nxthdr", U(u64::from(g.nxthdr)));
        f("grh.hoplmt", U(u64::from(g.hoplmt)));
        f("grh.sgid", Ipv6(g.sgid));
        f("grh.dgid", Ipv6(g.dgid));
    }
    if let Some(b) = fr.bth {
        let info = OpInfo::of(b.opcode);
        f("bth.opcode", U(u64::from(b.opcode)));
        f("bth.opname", Str(info.name));
        f("bth.transport", Str(info.transport.name()));
        f("bth.se", Bool(b.se));
        f("bth.m", Bool(b.m));
        f("bth.padcnt", U(u64::from(b.padcnt)));
        f("bth.tver", U(u64::from(b.tver)));
        f("bth.p_key", U(u64::from(b.pkey)));
        f("bth.fecn", Bool(b.fecn));
        f("bth.becn", Bool(b.becn));
        f("bth.destqp", U(u64::from(b.destqp)));
        f("bth.a", Bool(b.ackreq));
        f("bth.psn", U(u64::from(b.psn)));
    }
    visit_ext(fr, f);
    if fr.bth.is_some() {
        f("rdma.payload_len", U(fr.payload_len as u64));
    }
    if let Some(m) = fr.mad() {
        let h = m.header;
        f("mad.baseversion", U(u64::from(h.base_version)));
        f("mad.mgmtclass", U(u64::from(h.mgmt_class)));
        f("mad.classversion", U(u64::from(h.class_version)));
        f("mad.method", U(u64::from(h.method)));
        f("mad.status", U(u64::from(h.status)));
        f("mad.classspecific", U(u64::from(h.class_specific)));
        f("mad.transactionid", U(h.tid));
        f("mad.attributeid", U(u64::from(h.attr_id)));
        f("mad.attributemodifier", U(u64::from(h.attr_mod)));
        if let Some(cm) = m.cm {
            visit_cm(&cm, f);
        }
    }
    if let Some(v) = fr.icrc_value {
        f("icrc", U(u64::from(v)));
    }
    if let Some(s) = fr.icrc {
        f("icrc.status", Str(s.name()));
    }
    if let Some(v) = fr.vcrc_value {
        f("vcrc", U(u64::from(v)));
    }
    if let Some(s) = fr.vcrc {
        f("vcrc.status", Str(s.name()));
    }
}

fn visit_ext<'a>(fr: &Frame<'a>, f: &mut dyn FnMut(&'static str, Value<'a>)) {
    use Value::*;
    let e = &fr.ext;
    if let Some(r) = e.rdeth {
        f("rdeth.eecnxt", U(u64::from(r.ee_context)));
    }
    if let Some(d) = e.deth {
        f("deth.q_key", U(u64::from(d.qkey)));
        f("deth.srcqp", U(u64::from(d.src_qp)));
    }
    if let Some(x) = e.xrceth {
        f("xrceth.xrcsrq", U(u64::from(x.xrc_srq)));
    }
    if let Some(x) = e.feth {
        f("feth.selectivity", U(u64::from(x.selectivity)));
        f("feth.placement", U(u64::from(x.placement)));
    }
    if let Some(r) = e.reth {
        f("reth.va", U(r.va));
        f("reth.r_key", U(u64::from(r.rkey)));
        f("reth.dmalen", U(u64::from(r.dma_len)));
    }
    if let Some(a) = e.atomiceth {
        f("atomiceth.va", U(a.va));
        f("atomiceth.r_key", U(u64::from(a.rkey)));
        f("atomiceth.swapdt", U(a.swap_add));
        f("atomiceth.cmpdt", U(a.compare));
    }
    if let Some(a) = e.aeth {
        f("aeth.syndrome", U(u64::from(a.syndrome)));
        f("aeth.syndrome.opcode", U(u64::from((a.syndrome >> 5) & 3)));
        match a.kind() {
            AethKind::Ack { credit_code } => {
                f("aeth.kind", Str("ACK"));
                f("aeth.syndrome.credit_count", U(u64::from(credit_code)));
            }
            AethKind::RnrNak { timer_code } => {
                f("aeth.kind", Str("RNR_NAK"));
                f("aeth.syndrome.timer", U(u64::from(timer_code)));
                f(
                    "aeth.rnr_timer_us",
                    U(u64::from(crate::ext::rnr_timer_us(timer_code))),
                );
            }
            AethKind::Nak { code } => {
                f("aeth.kind", Str("NAK"));
                f("aeth.syndrome.error_code", U(u64::from(code)));
                f("aeth.nak", Str(crate::ext::nak_name(code)));
            }
            AethKind::Reserved { value } => {
                f("aeth.kind", Str("RESERVED"));
                f("aeth.syndrome.reserved_value", U(u64::from(value)));
            }
        }
        f("aeth.msn", U(u64::from(a.msn)));
    }
    if let Some(a) = e.atomicacketh {
        f("atomicacketh.origremdt", U(a.orig_data));
    }
    if let Some(v) = e.immdt {
        f("immdt", U(u64::from(v)));
    }
    if let Some(v) = e.ieth {
        f("ieth", U(u64::from(v)));
    }
}

fn visit_cm<'a>(cm: &CmMessage, f: &mut dyn FnMut(&'static str, Value<'a>)) {
    use Value::*;
    let u = |v: u32| U(u64::from(v));
    let b = |v: u8| U(u64::from(v));
    f("cm.message", Str(cm.name()));
    match *cm {
        CmMessage::Req(r) => {
            f("cm.req.localcommid", u(r.local_comm_id));
            f("cm.req.serviceid", U(r.service_id));
            f("cm.req.localcaguid", U(r.local_ca_guid));
            f("cm.req.localqkey", u(r.local_qkey));
            f("cm.req.localqpn", u(r.local_qpn));
            f("cm.req.responderres", b(r.responder_resources));
            f("cm.req.localeecn", u(r.local_eecn));
            f("cm.req.initdepth", b(r.initiator_depth));
            f("cm.req.remoteeecn", u(r.remote_eecn));
            f("cm.req.remoteresptout", b(r.remote_cm_response_timeout));
            f("cm.req.transpsvctype", b(r.transport_type));
            f("cm.req.e2eflowctrl", Bool(r.e2e_flow_control));
            f("cm.req.startpsn", u(r.starting_psn));
            f("cm.req.localresptout", b(r.local_cm_response_timeout));
            f("cm.req.retrcount", b(r.retry_count));
            f("cm.req.pkey", U(u64::from(r.pkey)));
            f("cm.req.pppmtu", b(r.path_mtu));
            if let Some(m) = mad::mtu_bytes(r.path_mtu) {
                f("cm.req.pmtu_bytes", u(m));
            }
            f("cm.req.rdcexist", Bool(r.rdc_exists));
            f("cm.req.rnrretrcount", b(r.rnr_retry_count));
            f("cm.req.maxcmretr", b(r.max_cm_retries));
            f("cm.req.srq", Bool(r.srq));
            f("cm.req.ext_transport", b(r.ext_transport));
            f("cm.req.prim_locallid", U(u64::from(r.primary_local_lid)));
            f("cm.req.prim_remotelid", U(u64::from(r.primary_remote_lid)));
            f("cm.req.prim_localgid", Ipv6(r.primary_local_gid));
            f("cm.req.prim_remotegid", Ipv6(r.primary_remote_gid));
            f("cm.req.prim_flowlabel", u(r.primary_flow_label));
            f("cm.req.prim_pktrate", b(r.primary_packet_rate));
            f("cm.req.prim_tfcclass", b(r.primary_traffic_class));
            f("cm.req.prim_hoplim", b(r.primary_hop_limit));
            f("cm.req.prim_sl", b(r.primary_sl));
            f("cm.req.prim_subnetlocal", Bool(r.primary_subnet_local));
            f("cm.req.prim_localacktout", b(r.primary_local_ack_timeout));
            if mad::is_rdma_cm_service(r.service_id) {
                f(
                    "cm.req.serviceid.protocol",
                    b(mad::service_port_space(r.service_id)),
                );
                f(
                    "cm.req.serviceid.dport",
                    U(u64::from(mad::service_port(r.service_id))),
                );
            }
            if let Some(ip) = r.ip_cm {
                f("cm.req.ip_cm.ipv", b(ip.ip_version));
                f("cm.req.ip_cm.sport", U(u64::from(ip.src_port)));
                if ip.ip_version == 4 {
                    let v4 = |a: [u8; 16]| Ipv4([a[12], a[13], a[14], a[15]]);
                    f("cm.req.ip_cm.sip4", v4(ip.src_ip));
                    f("cm.req.ip_cm.dip4", v4(ip.dst_ip));
                } else {
                    f("cm.req.ip_cm.sip6", Ipv6(ip.src_ip));
                    f("cm.req.ip_cm.dip6", Ipv6(ip.dst_ip));
                }
            }
        }
        CmMessage::Rep(r) => {
            f("cm.rep.localcommid", u(r.local_comm_id));
            f("cm.rep.remotecommid", u(r.remote_comm_id));
            f("cm.rep.localqkey", u(r.local_qkey));
            f("cm.rep.localqpn", u(r.local_qpn));
            f("cm.rep.localeecn", u(r.local_eecn));
            f("cm.rep.startpsn", u(r.starting_psn));
            f("cm.rep.respres", b(r.responder_resources));
            f("cm.rep.initdepth", b(r.initiator_depth));
            f("cm.rep.tgtackdelay", b(r.target_ack_delay));
            f("cm.rep.failoveracc", b(r.failover_accepted));
            f("cm.rep.e2eflowctrl", Bool(r.e2e_flow_control));
            f("cm.rep.rnrretrcount", b(r.rnr_retry_count));
            f("cm.rep.srq", Bool(r.srq));
            f("cm.rep.localcaguid", U(r.local_ca_guid));
        }
        CmMessage::Rej(r) => {
            f("cm.rej.localcommid", u(r.local_comm_id));
            f("cm.rej.remotecommid", u(r.remote_comm_id));
            f("cm.rej.msgrej", b(r.msg_rejected));
            f("cm.rej.rejinfolen", b(r.reject_info_len));
            f("cm.rej.reason", U(u64::from(r.reason)));
            f("cm.rej.reason_name", Str(mad::rej_reason_name(r.reason)));
        }
        CmMessage::Mra(r) => {
            f("cm.mra.localcommid", u(r.local_comm_id));
            f("cm.mra.remotecommid", u(r.remote_comm_id));
            f("cm.mra.msgmraed", b(r.msg_mraed));
            f("cm.mra.servicetimeout", b(r.service_timeout));
        }
        CmMessage::Rtu(r) => {
            f("cm.rtu.localcommid", u(r.local_comm_id));
            f("cm.rtu.remotecommid", u(r.remote_comm_id));
        }
        CmMessage::Drep(r) => {
            f("cm.drep.localcommid", u(r.local_comm_id));
            f("cm.drep.remotecommid", u(r.remote_comm_id));
        }
        CmMessage::Dreq(r) => {
            f("cm.dreq.localcommid", u(r.local_comm_id));
            f("cm.dreq.remotecommid", u(r.remote_comm_id));
            f("cm.dreq.remoteqpn", u(r.remote_qpn));
        }
        CmMessage::Lap(r) => {
            f("cm.lap.localcommid", u(r.local_comm_id));
            f("cm.lap.remotecommid", u(r.remote_comm_id));
            f("cm.lap.remoteqpn", u(r.remote_qpn));
            f("cm.lap.remoteresptout", b(r.remote_cm_response_timeout));
        }
        CmMessage::Apr(r) => {
            f("cm.apr.localcommid", u(r.local_comm_id));
            f("cm.apr.remotecommid", u(r.remote_comm_id));
            f("cm.apr.addinfolen", b(r.additional_info_len));
            f("cm.apr.apstatus", b(r.ap_status));
        }
        CmMessage::SidrReq(r) => {
            f("cm.sidr_req.requestid", u(r.request_id));
            f("cm.sidr_req.pkey", U(u64::from(r.pkey)));
            f("cm.sidr_req.serviceid", U(r.service_id));
        }
        CmMessage::SidrRep(r) => {
            f("cm.sidr_rep.requestid", u(r.request_id));
            f("cm.sidr_rep.status", b(r.status));
            f("cm.sidr_rep.addinfolen", b(r.additional_info_len));
            f("cm.sidr_rep.qpn", u(r.qpn));
            f("cm.sidr_rep.serviceid", U(r.service_id));
            f("cm.sidr_rep.qkey", u(r.qkey));
        }
    }
}

/// Looks up one field by name (the first occurrence).
pub fn get<'a>(m: &RecordMeta, fr: &Frame<'a>, name: &str) -> Option<Value<'a>> {
    let mut out = None;
    visit(m, fr, &mut |n, v| {
        if out.is_none() && n == name {
            out = Some(v);
        }
    });
    out
}

/// Names of the Application Priority entries after the first (which takes Wireshark's names).
const APP_NAMES: [[&str; 3]; 7] = [
    [
        "lldp.dcbx.ieee.app2.prio",
        "lldp.dcbx.ieee.app2.sel",
        "lldp.dcbx.ieee.app2.proto",
    ],
    [
        "lldp.dcbx.ieee.app3.prio",
        "lldp.dcbx.ieee.app3.sel",
        "lldp.dcbx.ieee.app3.proto",
    ],
    [
        "lldp.dcbx.ieee.app4.prio",
        "lldp.dcbx.ieee.app4.sel",
        "lldp.dcbx.ieee.app4.proto",
    ],
    [
        "lldp.dcbx.ieee.app5.prio",
        "lldp.dcbx.ieee.app5.sel",
        "lldp.dcbx.ieee.app5.proto",
    ],
    [
        "lldp.dcbx.ieee.app6.prio",
        "lldp.dcbx.ieee.app6.sel",
        "lldp.dcbx.ieee.app6.proto",
    ],
    [
        "lldp.dcbx.ieee.app7.prio",
        "lldp.dcbx.ieee.app7.sel",
        "lldp.dcbx.ieee.app7.proto",
    ],
    [
        "lldp.dcbx.ieee.app8.prio",
        "lldp.dcbx.ieee.app8.sel",
        "lldp.dcbx.ieee.app8.proto",
    ],
];

/// The LLDP fields: who sent it and the DCB TLVs (IEEE 802.1Q Annex D.2), by Wireshark's
/// names where it has one field for one value. Ours differ where it has none: the PFC enable
/// bits (Wireshark: `lldp.dcbx.feature.pfc.prioN`), the CNPV and ready bits
/// (`lldp.ieee.802_1qau.cnpv.prioN`, `.ready.prioN`) and the ETS tables (`...tsaN` and the
/// like) are one bitmap or one packed number each; PFC's willing bit is
/// `lldp.dcbx.ieee.willing` and ETS's `lldp.dcbx.ieee.ets.willing` (Wireshark: both
/// `lldp.dcbx.ieee.willing`); the Application Priority selector is
/// `lldp.dcbx.ieee.app.sel` (Wireshark: `lldp.dcbx.iee.app.sf`, sic) and its protocol
/// `lldp.dcbx.ieee.app.proto` (Wireshark: `lldp.dcbx.feature.app.proto`); entries after the
/// first are `app2` to `app8`, and `lldp.dcbx.ieee.app.count` counts them all.
fn lldp<'a>(l: &LldpPacket<&'a [u8]>, f: &mut dyn FnMut(&'static str, Value<'a>)) {
    use Value::*;
    if let Some((sub, id)) = l.chassis_id() {
        f("lldp.chassis.subtype", U(u64::from(sub)));
        f("lldp.chassis.id", Bytes(id));
    }
    if let Some((sub, id)) = l.port_id() {
        f("lldp.port.subtype", U(u64::from(sub)));
        // Interface name and locally assigned subtypes are text (IEEE 802.1AB Table 8-3).
        f(
            "lldp.port.id",
            if matches!(sub, 5 | 7) {
                Text(id)
            } else {
                Bytes(id)
            },
        );
    }
    if let Some(t) = l.ttl() {
        f("lldp.time_to_live", U(u64::from(t)));
    }
    if let Some(n) = l.system_name() {
        f("lldp.tlv.system.name", Text(n));
    }
    if let Some(p) = l.pfc() {
        f("lldp.dcbx.ieee.willing", Bool(p.willing));
        f("lldp.dcbx.ieee.pfc.mbc", Bool(p.mbc));
        f("lldp.dcbx.ieee.pfc.numtcs", U(u64::from(p.cap)));
        f("lldp.dcbx.ieee.pfc.enable", U(u64::from(p.enable)));
    }
    if let Some(e) = l.ets() {
        f("lldp.dcbx.ieee.ets.willing", Bool(e.willing));
        f("lldp.dcbx.ieee.ets.cbs", Bool(e.cbs));
        f("lldp.dcbx.ieee.ets.maxtcs", U(u64::from(e.max_tcs)));
        let pack = |v: [u8; 8], bits: u32| {
            v.iter().fold(0u64, |acc, &x| {
                acc << bits | u64::from(x) & ((1 << bits) - 1)
            })
        };
        f("lldp.dcbx.ieee.ets.prio_tc", U(pack(e.prio_tc, 4)));
        f("lldp.dcbx.ieee.ets.tc_bw", U(pack(e.tc_bw, 8)));
        f("lldp.dcbx.ieee.ets.tsa", U(pack(e.tsa, 8)));
    }
    if let Some(c) = l.cn() {
        f("lldp.ieee.802_1qau.cnpv", U(u64::from(c.cnpv)));
        f("lldp.ieee.802_1qau.ready", U(u64::from(c.ready)));
    }
    // CEE DCBX (pre-standard), by Wireshark's names: its PFC feature and first application.
    if let Some((flags, _)) = l.cee(cee::PFC) {
        f(
            "lldp.dcbx.feature.willing",
            Bool(flags & cee::FLAG_WILLING != 0),
        );
    }
    if let Some(p) = l.cee_pfc() {
        f("lldp.dcbx.feature.pfc.enable", U(u64::from(p.enable)));
        f("lldp.dcbx.feature.pfc.numtcs", U(u64::from(p.cap)));
    }
    if let Some(a) = l.cee_app().next() {
        f("lldp.dcbx.feature.app.proto", U(u64::from(a.protocol)));
        f("lldp.dcbx.feature.app.sf", U(u64::from(a.selector)));
        f("lldp.dcbx.feature.app.oui", U(u64::from(a.oui)));
        f("lldp.dcbx.feature.app.priomap", U(u64::from(a.priorities)));
    }
    let mut n = 0u64;
    for (i, a) in l.app().enumerate() {
        n += 1;
        let [p, s, q] = match i {
            0 => [
                "lldp.dcbx.ieee.app.prio",
                "lldp.dcbx.ieee.app.sel",
                "lldp.dcbx.ieee.app.proto",
            ],
            i => match APP_NAMES.get(i - 1) {
                Some(names) => *names,
                None => continue,
            },
        };
        f(p, U(u64::from(a.priority)));
        f(s, U(u64::from(a.selector)));
        f(q, U(u64::from(a.protocol)));
    }
    if n > 0 {
        f("lldp.dcbx.ieee.app.count", U(n));
    }
}
