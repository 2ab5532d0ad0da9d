//! Frames a switch mirrors to a collector over GRE (ERSPAN Type I, II and III, and transparent
//! Ethernet bridging) or that come in VXLAN: `analyze` of the mirrored capture reports what the
//! direct capture reports, and `show` decodes the GRE, ERSPAN and VXLAN headers as tshark does,
//! and the frame inside as if it had been captured directly.

mod common;

use common::bin;
use rdmascope_capture::PcapWriter;
use rdmascope_wire::fields::{self, RecordMeta};
use rdmascope_wire::gre::{protocol, ErspanRepr, GreRepr};
use rdmascope_wire::ip::Ipv4Repr;
use rdmascope_wire::udp::UdpRepr;
use rdmascope_wire::vxlan::VxlanRepr;
use rdmascope_wire::DecodeOptions;
use serde_json::Value;

#[derive(Clone, Copy, Debug)]
enum Kind {
    TypeI,
    TypeII,
    TypeIII,
    Teb,
    Vxlan,
    /// Type II of a frame whose 802.1Q tag the switch removed (En = 2), its VLAN and priority
    /// in the ERSPAN header.
    TypeIITagRemoved,
}

const KINDS: [Kind; 5] = [
    Kind::TypeI,
    Kind::TypeII,
    Kind::TypeIII,
    Kind::Teb,
    Kind::Vxlan,
];

/// `inner` as a mirror session sends it: Ethernet, IPv4, GRE, the ERSPAN header, the frame;
/// or Ethernet, IPv4, UDP to port 4789, VXLAN, the frame.
/// `tci` is the 802.1Q tag removed from the frame, for [`Kind::TypeIITagRemoved`].
fn wrap(kind: Kind, inner: &[u8], inner_len: u32, n: u32, tci: Option<u16>) -> (Vec<u8>, u32) {
    if let Kind::Vxlan = kind {
        let wire = 14 + 20 + 8 + 8 + inner_len;
        let mut b = vec![0u8; 50];
        b[..14].copy_from_slice(&[2, 0xaa, 0, 0, 0, 1, 2, 0xbb, 0, 0, 0, 2, 8, 0]);
        outer_ip(17, wire, n).emit(&mut b[14..34]);
        UdpRepr {
            src_port: 50000 + (n % 1000) as u16,
            dst_port: 4789,
            length: (wire - 34) as u16,
            checksum: 0,
        }
        .emit(&mut b[34..42]);
        VxlanRepr {
            flags: 0x0800,
            vni: 0x12345,
        }
        .emit(&mut b[42..50]);
        b.extend_from_slice(inner);
        return (b, wire);
    }
    let (gre, erspan) = match kind {
        Kind::TypeI => (gre(protocol::ERSPAN_II, None, None), None),
        Kind::TypeII | Kind::TypeIITagRemoved => (
            gre(protocol::ERSPAN_II, None, Some(n)),
            Some(ErspanRepr {
                version: 1,
                vlan: tci.map_or(100, |t| t & 0xfff),
                cos: tci.map_or(3, |t| (t >> 13) as u8),
                encap: if tci.is_some() { 2 } else { 0 },
                session: 5,
                index: n & 0xfffff,
                ..ErspanRepr::default()
            }),
        ),
        Kind::TypeIII => (
            gre(protocol::ERSPAN_III, Some(0x77), None),
            Some(ErspanRepr {
                version: 2,
                vlan: 7,
                cos: 5,
                truncated: n % 7 == 0,
                session: 1023,
                timestamp: n.wrapping_mul(1000),
                sgt: 42,
                hw_id: 9,
                direction: n % 2 == 1,
                granularity: 3,
                platform: Some(0x0800_0000_0000_1234),
                ..ErspanRepr::default()
            }),
        ),
        Kind::Teb | Kind::Vxlan => (gre(protocol::TEB, None, None), None),
    };
    let hdr = 14 + 20 + gre.header_len() + erspan.map_or(0, |e| e.header_len());
    let mut b = vec![0u8; hdr];
    b[..14].copy_from_slice(&[2, 0xaa, 0, 0, 0, 1, 2, 0xbb, 0, 0, 0, 2, 8, 0]);
    let wire = hdr as u32 + inner_len;
    outer_ip(47, wire, n).emit(&mut b[14..34]);
    gre.emit(&mut b[34..]);
    if let Some(e) = erspan {
        e.emit(&mut b[34 + gre.header_len()..]);
    }
    b.extend_from_slice(inner);
    (b, wire)
}

/// The tunnel's IPv4 header, of a frame of `wire` bytes.
fn outer_ip(protocol: u8, wire: u32, n: u32) -> Ipv4Repr {
    Ipv4Repr {
        header_len: 20,
        dscp: 0,
        ecn: 0,
        total_len: (wire - 14) as u16,
        ident: n as u16,
        dont_frag: true,
        more_frags: false,
        frag_offset: 0,
        ttl: 64,
        protocol,
        checksum: 0,
        src: [192, 168, 9, 1],
        dst: [192, 168, 9, 2],
    }
}

fn gre(proto: u16, key: Option<u32>, sequence: Option<u32>) -> GreRepr {
    GreRepr {
        flags_version: 0,
        protocol: proto,
        checksum: None,
        key,
        sequence,
    }
}

/// Writes `direct`'s records mirrored as `kind` into `out`.
fn mirror(direct: &std::path::Path, out: &std::path::Path, kind: Kind) {
    let recs = common::read_all(direct);
    let f = std::fs::File::create(out).unwrap();
    let mut w = PcapWriter::new(std::io::BufWriter::new(f), 1, 262_144).unwrap();
    for r in &recs {
        let (mut data, mut len, mut tci) = (r.data.clone(), r.orig_len, None);
        // PFC and LLDP frames are untagged.
        if matches!(kind, Kind::TypeIITagRemoved) && data[12..14] == [0x81, 0x00] {
            tci = Some(u16::from_be_bytes([data[14], data[15]]));
            data.drain(12..16);
            len -= 4;
        }
        let (b, wire) = wrap(kind, &data, len, r.number as u32, tci);
        w.write(r.ts_ns, wire, &b).unwrap();
    }
    w.flush().unwrap();
}

/// A `gen` capture in `dir`.
fn generated(dir: &std::path::Path, name: &str, args: &[&str]) -> std::path::PathBuf {
    let path = dir.join(name);
    let o = bin()
        .arg("gen")
        .args(args)
        .arg("-o")
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    path
}

fn analyze(path: &std::path::Path) -> Value {
    let o = bin()
        .args(["analyze", "--json"])
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn mirrored_captures_analyse_as_direct_ones() {
    let d = common::tmp_dir("erspan");
    let direct = generated(
        &d,
        "mixed.pcap",
        &["--scenario", "mixed", "--packets", "4000"],
    );
    let mut want = analyze(&direct);
    want["capture"]["files"] = Value::Null;
    assert!(want["totals"]["icrc"]["ok"].as_u64() > Some(3000));
    for kind in KINDS {
        let m = d.join(format!("mixed-{kind:?}.pcap"));
        mirror(&direct, &m, kind);
        let mut got = analyze(&m);
        got["capture"]["files"] = Value::Null;
        // Type III marks every seventh frame truncated: the ICRC still checks.
        if matches!(kind, Kind::TypeIII) {
            assert_eq!(got["totals"]["icrc"], want["totals"]["icrc"]);
            continue;
        }
        assert_eq!(got, want, "{kind:?}");
    }
}

/// GRE, ERSPAN and the mirrored frame's fields equal tshark's, for every kind.
#[test]
fn erspan_fields_equal_tshark() {
    let Some(tshark) = common::tshark() else {
        return;
    };
    let d = common::tmp_dir("erspan");
    let direct = generated(
        &d,
        "lossy.pcap",
        &["--scenario", "lossy", "--packets", "1500"],
    );
    // The tunnel's fields occur once; the mirrored frame's IP and UDP fields are compared at
    // their last occurrence (tshark lists the outer and the inner one).
    let first = [
        "gre.proto",
        "gre.key",
        "gre.sequence_number",
        "erspan.version",
        "erspan.vlan",
        "erspan.cos",
        "erspan.encap",
        "erspan.bso",
        "erspan.truncated",
        "erspan.spanid",
        "erspan.index",
        "erspan.timestamp",
        "erspan.sgt",
        "erspan.p",
        "erspan.ft",
        "erspan.hw",
        "erspan.direction",
        "erspan.gra",
        "erspan.o",
        "vxlan.flags",
        "vxlan.vni",
        "infiniband.bth.opcode",
        "infiniband.bth.destqp",
        "infiniband.bth.psn",
        "infiniband.aeth.syndrome",
        "infiniband.reth.dmalen",
    ];
    let last = [
        "ip.src",
        "ip.dst",
        "ip.dsfield.ecn",
        "udp.srcport",
        "udp.dstport",
    ];
    let opts = DecodeOptions::default();
    let mut compared = 0;
    for kind in KINDS {
        let m = d.join(format!("lossy-{kind:?}.pcap"));
        mirror(&direct, &m, kind);
        let recs = common::read_all(&m);
        for (names, occurrence) in [(&first[..], "f"), (&last[..], "l")] {
            let mut cmd = std::process::Command::new(tshark);
            cmd.arg("-n").arg("-r").arg(&m);
            cmd.args(["-T", "fields", "-E", &format!("occurrence={occurrence}")]);
            for n in names {
                cmd.args(["-e", n]);
            }
            let out = cmd.output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8(out.stdout).unwrap();
            let rows: Vec<&str> = text.lines().collect();
            assert_eq!(rows.len(), recs.len());
            for (rec, row) in recs.iter().zip(rows) {
                let frame = rec.decode(&opts);
                let meta = RecordMeta {
                    number: rec.number,
                    ts_ns: rec.ts_ns,
                    interface: 0,
                };
                for (n, theirs) in names.iter().zip(row.split('\t')) {
                    let ours = fields::get(&meta, &frame, n.trim_start_matches("infiniband."))
                        .map(|v| v.to_string());
                    let theirs = match theirs {
                        "" => None,
                        "True" => Some("1".to_string()),
                        "False" => Some("0".to_string()),
                        t => Some(match t.strip_prefix("0x") {
                            Some(h) => u64::from_str_radix(h, 16).unwrap().to_string(),
                            None => t.to_string(),
                        }),
                    };
                    assert_eq!(ours, theirs, "{kind:?} frame {} {n}", rec.number);
                    compared += usize::from(ours.is_some());
                }
            }
        }
    }
    assert!(compared > 20_000, "{compared}");
}

/// A switch that removes the 802.1Q tag of the frames it mirrors keeps their priority in the
/// ERSPAN header: the analysis takes it from there, so the priorities RDMA data uses, and the
/// findings, are those of the tagged capture.
#[test]
fn erspan_cos_stands_for_a_removed_tag() {
    let d = common::tmp_dir("erspan");
    let args = [
        "--scenario",
        "mixed",
        "--packets",
        "3000",
        "--vlan",
        "100",
        "--pcp",
        "5",
    ];
    let direct = generated(&d, "tagged.pcap", &args);
    let m = d.join("tagged-removed.pcap");
    mirror(&direct, &m, Kind::TypeIITagRemoved);
    let (want, got) = (analyze(&direct), analyze(&m));
    let prios = |r: &Value| -> Vec<Value> {
        r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["priorities"].clone())
            .collect()
    };
    let codes = |r: &Value| -> Vec<Value> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].clone())
            .collect()
    };
    // PCP 5 under DSCP 26: the tag, not the DSCP (priority 3), gives the priority.
    assert!(prios(&want).iter().any(|p| p.to_string().contains('5')));
    assert_eq!(prios(&got), prios(&want));
    assert_eq!(codes(&got), codes(&want));
    assert_eq!(got["totals"]["opcodes"], want["totals"]["opcodes"]);
}
