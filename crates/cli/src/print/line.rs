//! One line per packet, tcpdump-style: number, time, addresses, transport and opcode, QP, PSN,
//! the fields that matter for the opcode, and flags.

use std::io::Write;

type Result = std::io::Result<()>;

use super::fast::Out;

use rdmascope_wire::ext::{nak_name, rnr_timer_us, AethKind};
use rdmascope_wire::fields::{RecordMeta, Value};
use rdmascope_wire::frame::{Encap, Other};
use rdmascope_wire::ip::ecn_name;
use rdmascope_wire::lldp::{app_sel, LldpPacket};
use rdmascope_wire::macctl::MacControl;
use rdmascope_wire::mad::{self, CmMessage};
use rdmascope_wire::{Frame, IcrcStatus};

use super::fast;

pub fn write(o: &mut Vec<u8>, m: &RecordMeta, f: &Frame<'_>) -> Result {
    for _ in 0..6usize.saturating_sub(digits(m.number)) {
        o.pushc(' ');
    }
    fast::dec(o, m.number);
    o.pushc(' ');
    fast::time_of_day(o, m.ts_ns);
    o.pushc(' ');
    if let Some(t) = f.tunnel {
        tunnel(o, &t)?;
    }
    for v in f.vlans.iter().flatten() {
        write!(o, "vlan {} p{} ", v.vid, v.pcp)?;
    }
    if f.bth.is_some() {
        rdma(o, f)?;
    } else {
        other(o, f)?;
    }
    flags(o, f)?;
    o.pushc('\n');
    Ok(())
}

/// The tunnel a frame came in: its kind, outer addresses, and mirror session or VNI.
fn tunnel(o: &mut Vec<u8>, t: &rdmascope_wire::frame::Tunnel) -> Result {
    let kind = match (t.erspan, t.gre) {
        (Some(e), _) if e.version == 2 => "ERSPAN-III",
        (Some(_), _) => "ERSPAN-II",
        (None, Some(g)) if g.protocol == rdmascope_wire::gre::protocol::ERSPAN_II => "ERSPAN-I",
        (None, Some(_)) => "GRE",
        (None, None) => "VXLAN",
    };
    o.push_str(kind);
    o.pushc(' ');
    if let Some(ip) = t.ipv4 {
        write!(o, "{} > {}", Value::Ipv4(ip.src), Value::Ipv4(ip.dst))?;
    } else if let Some(ip) = t.ipv6 {
        write!(o, "{} > {}", Value::Ipv6(ip.src), Value::Ipv6(ip.dst))?;
    }
    if let Some(e) = t.erspan {
        write!(o, " session {}", e.session)?;
    }
    if let Some(v) = t.vxlan {
        write!(o, " vni {}", v.vni)?;
    }
    o.push_str(": ");
    Ok(())
}

fn digits(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

fn addrs(o: &mut Vec<u8>, f: &Frame<'_>) -> Result {
    match f.encap {
        Some(Encap::RoceV2) => {
            let (sp, dp) = f.udp.map_or((0, 0), |u| (u.src_port, u.dst_port));
            if let Some(ip) = f.ipv4 {
                fast::ipv4(o, ip.src);
                o.pushc('.');
                fast::dec(o, u64::from(sp));
                o.push_str(" > ");
                fast::ipv4(o, ip.dst);
                o.pushc('.');
                fast::dec(o, u64::from(dp));
                o.pushc(' ');
                Ok(())
            } else if let Some(ip) = f.ipv6 {
                write!(
                    o,
                    "{}.{} > {}.{} ",
                    Value::Ipv6(ip.src),
                    sp,
                    Value::Ipv6(ip.dst),
                    dp
                )
            } else {
                Ok(())
            }
        }
        _ => {
            if let Some(g) = f.grh {
                write!(o, "{} > {} ", Value::Ipv6(g.sgid), Value::Ipv6(g.dgid))?;
            }
            if let Some(l) = f.lrh {
                write!(o, "lid {} > {} ", l.slid, l.dlid)?;
            }
            Ok(())
        }
    }
}

fn rdma(o: &mut Vec<u8>, f: &Frame<'_>) -> Result {
    let Some(b) = f.bth else { return Ok(()) };
    let info = rdmascope_wire::OpInfo::of(b.opcode);
    addrs(o, f)?;
    o.push_str(f.encap.map_or("RDMA", |e| e.name()));
    o.pushc(' ');
    o.push_str(info.name);
    o.push_str(" qp ");
    fast::hex0x(o, u64::from(b.destqp), 6);
    o.push_str(" psn ");
    fast::dec(o, u64::from(b.psn));
    if b.ackreq {
        o.push_str(" ackreq");
    }
    if b.se {
        o.push_str(" se");
    }
    let e = &f.ext;
    if let Some(r) = e.rdeth {
        write!(o, " eecnxt {}", r.ee_context)?;
    }
    if let Some(d) = e.deth {
        write!(o, " qkey 0x{:08x} srcqp 0x{:06x}", d.qkey, d.src_qp)?;
    }
    if let Some(x) = e.xrceth {
        write!(o, " xrcsrq 0x{:06x}", x.xrc_srq)?;
    }
    if let Some(x) = e.feth {
        write!(o, " flush sel {} type {}", x.selectivity, x.placement)?;
    }
    if let Some(r) = e.reth {
        o.push_str(" va ");
        fast::hex0x(o, r.va, 0);
        o.push_str(" rkey ");
        fast::hex0x(o, u64::from(r.rkey), 8);
        o.push_str(" dmalen ");
        fast::dec(o, u64::from(r.dma_len));
    }
    if let Some(a) = e.atomiceth {
        write!(
            o,
            " va 0x{:x} rkey 0x{:08x} swap/add {} cmp {}",
            a.va, a.rkey, a.swap_add, a.compare
        )?;
    }
    if let Some(a) = e.aeth {
        match a.kind() {
            AethKind::Ack { credit_code: 31 } => o.push_str(" ACK"),
            AethKind::Ack { credit_code } => write!(
                o,
                " ACK credits {}",
                rdmascope_wire::ext::credits(credit_code).unwrap_or(0)
            )?,
            AethKind::RnrNak { timer_code } => {
                let us = rnr_timer_us(timer_code);
                write!(o, " RNR-NAK timer {}.{:02}ms", us / 1000, us % 1000 / 10)?
            }
            AethKind::Nak { code } => write!(o, " NAK {}", nak_name(code))?,
            AethKind::Reserved { value } => write!(o, " AETH reserved 0x{value:02x}")?,
        }
        o.push_str(" msn ");
        fast::dec(o, u64::from(a.msn));
    }
    if let Some(a) = e.atomicacketh {
        write!(o, " orig {}", a.orig_data)?;
    }
    if let Some(v) = e.immdt {
        write!(o, " imm 0x{v:08x}")?;
    }
    if let Some(v) = e.ieth {
        write!(o, " inv-rkey 0x{v:08x}")?;
    }
    if let Some(md) = f.mad() {
        mad_summary(o, &md)?;
    } else if info.has_payload {
        o.push_str(" len ");
        fast::dec(o, f.payload_len as u64);
    }
    if let Some(ecn) = f.ecn() {
        if f.encap == Some(Encap::RoceV2) {
            o.pushc(' ');
            o.push_str(ecn_name(ecn));
        }
    }
    Ok(())
}

fn mad_summary(o: &mut Vec<u8>, m: &mad::Mad) -> Result {
    let h = m.header;
    let Some(cm) = m.cm else {
        return write!(
            o,
            " MAD {} {} attr 0x{:04x} tid 0x{:x}",
            mad::class_name(h.mgmt_class),
            mad::method_name(h.method),
            h.attr_id,
            h.tid
        );
    };
    write!(o, " CM {}", cm.name())?;
    match cm {
        CmMessage::Req(r) => {
            write!(
                o,
                " comm 0x{:08x} qpn 0x{:06x} psn {} sid 0x{:016x}",
                r.local_comm_id, r.local_qpn, r.starting_psn, r.service_id
            )?;
            if mad::is_rdma_cm_service(r.service_id) {
                write!(o, " (port {})", mad::service_port(r.service_id))?;
            }
            let t = ["RC", "UC", "RD", "XRC"][usize::from(r.transport_type & 3)];
            write!(o, " {t} mtu {}", mad::mtu_bytes(r.path_mtu).unwrap_or(0))
        }
        CmMessage::Rep(r) => write!(
            o,
            " comm 0x{:08x} remote 0x{:08x} qpn 0x{:06x} psn {}",
            r.local_comm_id, r.remote_comm_id, r.local_qpn, r.starting_psn
        ),
        CmMessage::Rej(r) => write!(
            o,
            " comm 0x{:08x} remote 0x{:08x} reason {} ({})",
            r.local_comm_id,
            r.remote_comm_id,
            r.reason,
            mad::rej_reason_name(r.reason)
        ),
        CmMessage::Mra(r) => write!(
            o,
            " comm 0x{:08x} remote 0x{:08x}",
            r.local_comm_id, r.remote_comm_id
        ),
        CmMessage::Rtu(r) | CmMessage::Drep(r) => write!(
            o,
            " comm 0x{:08x} remote 0x{:08x}",
            r.local_comm_id, r.remote_comm_id
        ),
        CmMessage::Dreq(r) => write!(
            o,
            " comm 0x{:08x} remote 0x{:08x} qpn 0x{:06x}",
            r.local_comm_id, r.remote_comm_id, r.remote_qpn
        ),
        CmMessage::Lap(r) => write!(
            o,
            " comm 0x{:08x} remote 0x{:08x} qpn 0x{:06x}",
            r.local_comm_id, r.remote_comm_id, r.remote_qpn
        ),
        CmMessage::Apr(r) => write!(
            o,
            " comm 0x{:08x} remote 0x{:08x} status {}",
            r.local_comm_id, r.remote_comm_id, r.ap_status
        ),
        CmMessage::SidrReq(r) => {
            write!(o, " req 0x{:08x} sid 0x{:016x}", r.request_id, r.service_id)
        }
        CmMessage::SidrRep(r) => write!(
            o,
            " req 0x{:08x} status {} qpn 0x{:06x} qkey 0x{:08x}",
            r.request_id, r.status, r.qpn, r.qkey
        ),
    }
}

fn other(o: &mut Vec<u8>, f: &Frame<'_>) -> Result {
    if let Some(mc) = f.macctl {
        if let Some(e) = f.eth {
            write!(o, "{} > {} ", Value::Mac(e.src), Value::Mac(e.dst))?;
        }
        return match mc {
            MacControl::Pause { quanta } => write!(o, "PAUSE quanta {quanta}"),
            MacControl::Pfc { enable, quanta } => {
                write!(o, "PFC enable 0x{enable:02x}")?;
                for (p, q) in quanta.iter().enumerate() {
                    if enable & (1 << p) != 0 {
                        if *q == 0 {
                            write!(o, " p{p} XON")?;
                        } else {
                            write!(o, " p{p} XOFF {q}")?;
                        }
                    }
                }
                Ok(())
            }
            MacControl::Other { opcode } => write!(o, "MAC control opcode 0x{opcode:04x}"),
        };
    }
    let ip: Option<(Value<'_>, Value<'_>)> = f
        .ipv4
        .map(|i| (Value::Ipv4(i.src), Value::Ipv4(i.dst)))
        .or(f.ipv6.map(|i| (Value::Ipv6(i.src), Value::Ipv6(i.dst))));
    match (f.other, f.udp, ip) {
        (
            Some(Other::Tcp {
                src_port,
                dst_port,
                flags,
                payload_len,
                ..
            }),
            _,
            Some((s, d)),
        ) => {
            write!(o, "{s}.{src_port} > {d}.{dst_port} TCP [")?;
            for (bit, c) in [
                (0x02, 'S'),
                (0x01, 'F'),
                (0x04, 'R'),
                (0x08, 'P'),
                (0x10, '.'),
                (0x20, 'U'),
            ] {
                if flags & bit != 0 {
                    o.pushc(c);
                }
            }
            write!(o, "] len {payload_len}")
        }
        (_, Some(u), Some((s, d))) => write!(
            o,
            "{s}.{} > {d}.{} UDP len {}",
            u.src_port,
            u.dst_port,
            u.length.saturating_sub(8)
        ),
        (Some(Other::Icmp { ty, code }), _, Some((s, d))) => {
            write!(o, "{s} > {d} ICMP type {ty} code {code}")
        }
        (Some(Other::Icmpv6 { ty, code }), _, Some((s, d))) => {
            write!(o, "{s} > {d} ICMPv6 type {ty} code {code}")
        }
        (_, _, Some((s, d))) => {
            let proto = f
                .ipv4
                .map(|i| i.protocol)
                .or(f.ipv6.map(|i| i.next_header))
                .unwrap_or(0);
            write!(o, "{s} > {d} IP proto {proto}")?;
            if f.ipv4.is_some_and(|i| i.is_fragment()) {
                o.push_str(" fragment");
            }
            Ok(())
        }
        (
            Some(Other::Arp {
                op,
                sender_ip,
                target_ip,
            }),
            _,
            _,
        ) => {
            let (s, t) = (Value::Ipv4(sender_ip), Value::Ipv4(target_ip));
            if op == 1 {
                write!(o, "ARP who-has {t} tell {s}")
            } else {
                write!(o, "ARP reply {s} (op {op})")
            }
        }
        (Some(Other::Lldp { .. }), _, _) => {
            if let Some(e) = f.eth {
                write!(o, "{} > {} ", Value::Mac(e.src), Value::Mac(e.dst))?;
            }
            o.push_str("LLDP");
            if let Some(l) = f.lldp() {
                lldp_summary(o, &l)?;
            }
            Ok(())
        }
        (Some(Other::Llc { dsap, ssap }), _, _) => {
            if let Some(e) = f.eth {
                write!(o, "{} > {} ", Value::Mac(e.src), Value::Mac(e.dst))?;
            }
            let what = if dsap == 0x42 { " (STP)" } else { "" };
            write!(o, "802.3 LLC dsap 0x{dsap:02x} ssap 0x{ssap:02x}{what}")
        }
        _ => {
            if let Some(e) = f.eth {
                let ty = f
                    .vlans
                    .iter()
                    .flatten()
                    .last()
                    .map_or(e.ethertype, |v| v.ethertype);
                write!(
                    o,
                    "{} > {} ethertype 0x{ty:04x}",
                    Value::Mac(e.src),
                    Value::Mac(e.dst)
                )?;
            } else if let Some(l) = f.lrh {
                write!(o, "lid {} > {} IB raw (LNH {})", l.slid, l.dlid, l.lnh)?;
            } else {
                write!(
                    o,
                    "{} packet",
                    rdmascope_wire::link::linktype_name(f.linktype)
                )?;
            }
            write!(o, " len {}", f.orig_len)
        }
    }
}

/// Who sent an LLDPDU and the DCB settings it advertises: `LLDP leaf0b port eth10, PFC on 3
/// (willing), app udp/4791 -> 3, ETS tc 0 0 0 1 0 0 0 0 bw 50 50 0 0 0 0 0 0, CNPV 3`.
fn lldp_summary(o: &mut Vec<u8>, l: &LldpPacket<&[u8]>) -> Result {
    let (who, port) = (
        l.sender().map(|s| s.to_string()),
        l.port().map(|p| p.to_string()),
    );
    if let Some(w) = &who {
        write!(o, " {w}")?;
    }
    // The port, unless it only repeats the chassis (a host's MAC as both).
    if let Some(p) = port.filter(|p| Some(p) != who.as_ref()) {
        write!(o, " port {p}")?;
    }
    let prios = |bits: u8| {
        let v: Vec<String> = (0..8)
            .filter(|p| bits >> p & 1 == 1)
            .map(|p| p.to_string())
            .collect();
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(",")
        }
    };
    if let Some(p) = l.any_pfc() {
        let w = if p.willing { " (willing)" } else { "" };
        write!(o, ", PFC on {}{w}", prios(p.enable))?;
    }
    for a in l.any_app() {
        let proto = match a.selector {
            app_sel::ETHERTYPE => format!("ethertype 0x{:04x}", a.protocol),
            app_sel::TCP_SCTP => format!("tcp/{}", a.protocol),
            app_sel::UDP_DCCP => format!("udp/{}", a.protocol),
            app_sel::TCP_SCTP_UDP_DCCP => format!("port {}", a.protocol),
            app_sel::DSCP => format!("dscp {}", a.protocol),
            s => format!("selector {s} 0x{:04x}", a.protocol),
        };
        write!(o, ", app {proto} -> {}", a.priority)?;
    }
    if let Some(e) = l.ets() {
        o.push_str(", ETS tc");
        for tc in e.prio_tc {
            write!(o, " {tc}")?;
        }
        o.push_str(" bw");
        for bw in e.tc_bw {
            write!(o, " {bw}")?;
        }
    }
    if let Some(c) = l.cn() {
        write!(o, ", CNPV {}", prios(c.cnpv))?;
    }
    Ok(())
}

fn flags(o: &mut Vec<u8>, f: &Frame<'_>) -> Result {
    if let Some(b) = f.bth {
        if b.fecn {
            o.push_str(" FECN");
        }
        if b.becn {
            o.push_str(" BECN");
        }
    }
    match f.icrc {
        Some(IcrcStatus::Bad) => o.push_str(" ICRC-BAD"),
        Some(IcrcStatus::Unverifiable) => o.push_str(" icrc-unverifiable"),
        _ => {}
    }
    if f.vcrc == Some(IcrcStatus::Bad) {
        o.push_str(" VCRC-BAD");
    }
    if f.truncated {
        o.push_str(" [truncated]");
    }
    if let Some(e) = f.error {
        write!(o, " [{e}]")?;
    }
    Ok(())
}
