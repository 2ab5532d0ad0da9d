//! `-V`: every field of every layer, grouped under a title per layer, with meanings spelled out.

use std::io::Write;

type Result = std::io::Result<()>;

use super::fast::Out;

use rdmascope_wire::fields::{self, RecordMeta, Value};
use rdmascope_wire::{ip, mad, Frame, OpInfo};

use crate::timefmt::date_time;

/// Layer prefix → title.
fn title(prefix: &str) -> &'static str {
    match prefix {
        "frame" => "Frame",
        "sll" => "Linux cooked capture",
        "erf" => "Extensible Record Format",
        "ipoib" => "IP over InfiniBand",
        "gre" => "Generic Routing Encapsulation (the tunnel of the frame below)",
        "erspan" => "Encapsulated Remote Switch Port Analyzer (a mirror session)",
        "vxlan" => "Virtual eXtensible Local Area Network (the tunnel of the frame below)",
        "eth" => "Ethernet II",
        "vlan" => "802.1Q Virtual LAN",
        "macc" => "MAC Control",
        "ip" => "Internet Protocol Version 4",
        "ipv6" => "Internet Protocol Version 6",
        "udp" => "User Datagram Protocol",
        "tcp" => "Transmission Control Protocol",
        "icmp" => "Internet Control Message Protocol",
        "icmpv6" => "Internet Control Message Protocol v6",
        "arp" => "Address Resolution Protocol",
        "lldp" => "Link Layer Discovery Protocol",
        "llc" => "Logical-Link Control",
        "rdma" => "RDMA",
        "lrh" => "Local Route Header",
        "grh" => "Global Route Header",
        "bth" => "Base Transport Header",
        "rdeth" => "Reliable Datagram ETH",
        "deth" => "Datagram ETH",
        "xrceth" => "XRC ETH",
        "feth" => "Flush ETH",
        "reth" => "RDMA ETH",
        "atomiceth" => "Atomic ETH",
        "aeth" => "ACK ETH",
        "atomicacketh" => "Atomic ACK ETH",
        "immdt" => "Immediate Data",
        "ieth" => "Invalidate ETH",
        "mad" => "MAD Header",
        "cm" => "Communication Manager",
        "icrc" => "Invariant CRC",
        "vcrc" => "Variant CRC",
        _ => "Other",
    }
}

/// Fields shown in hex.
fn hex(name: &str) -> bool {
    const H: &[&str] = &[
        "qp",
        "key",
        ".va",
        "guid",
        "commid",
        "serviceid",
        "checksum",
        "icrc",
        "vcrc",
        "syndrome",
        "type",
        "etype",
        "transactionid",
        "attributeid",
        "attributemodifier",
        "opcode",
        "immdt",
        "ieth",
        "enbv",
        "flags",
        "requestid",
        "eecn",
        "status",
        "gre.proto",
    ];
    (H.iter().any(|h| name.contains(h)) && !name.ends_with("status") || name == "mad.status")
        && name != "frame.linktype"
}

fn meaning(name: &str, v: &Value<'_>) -> Option<String> {
    let n = v.as_u64()?;
    Some(match name {
        "bth.opcode" => OpInfo::of(n as u8).desc.to_string(),
        "ip.dsfield.ecn" | "ipv6.tclass.ecn" => ip::ecn_name(n as u8).to_string(),
        "mad.mgmtclass" => mad::class_name(n as u8).to_string(),
        "mad.method" => mad::method_name(n as u8).to_string(),
        "cm.req.pppmtu" => format!("{} bytes", mad::mtu_bytes(n as u8)?),
        "cm.req.transpsvctype" => ["RC", "UC", "RD", "extended"][(n & 3) as usize].to_string(),
        "cm.rej.reason" => mad::rej_reason_name(n as u16).to_string(),
        "ip.proto" | "ipv6.nxt" => match n {
            1 => "ICMP",
            6 => "TCP",
            17 => "UDP",
            47 => "GRE",
            58 => "ICMPv6",
            _ => return None,
        }
        .to_string(),
        "frame.linktype" => rdmascope_wire::link::linktype_name(n as u32).to_string(),
        "gre.proto" => match n {
            0x88be => "ERSPAN Type I or II",
            0x22eb => "ERSPAN Type III",
            0x6558 => "Transparent Ethernet Bridging",
            _ => return None,
        }
        .to_string(),
        "erspan.direction" => ["ingress", "egress"][(n & 1) as usize].to_string(),
        _ => return None,
    })
}

pub fn write(o: &mut Vec<u8>, m: &RecordMeta, f: &Frame<'_>) -> Result {
    let mut cur = "";
    fields::visit(m, f, &mut |name, v| {
        let prefix = name.split('.').next().unwrap_or(name);
        if prefix != cur {
            cur = prefix;
            let _ = writeln!(o, "{}", title(prefix));
        }
        let _ = (|| -> Result {
            write!(o, "    {name}: ")?;
            match v {
                Value::Time(ns) => write!(o, "{v} ({})", date_time(ns))?,
                Value::U(x) if hex(name) => write!(o, "0x{x:x}")?,
                _ => write!(o, "{v}")?,
            }
            if let Some(s) = meaning(name, &v) {
                write!(o, " ({s})")?;
            }
            o.pushc('\n');
            Ok(())
        })();
    });
    o.pushc('\n');
    Ok(())
}
