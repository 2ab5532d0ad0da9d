//! Differential tests against Wireshark: for every RDMA packet of every corpus file and of
//! `gen`'s captures of every scenario, the values of the BTH, RETH, AETH, DETH, ImmDt,
//! AtomicETH, LRH, GRH fields and the CM local QPN / starting PSN / service ID equal what
//! `tshark -T fields` prints for the same frame.
//!
//! tshark is the peer, not the oracle. Known differences, each asserted in our favour:
//! - FECN/BECN: tshark 4.0 has no fields for them (we decode them; not compared).
//! - CNP (0x81): tshark shows it as an unknown opcode 129; the opcode number still compares.
//! - Mellanox DC frames (RD opcodes 0x4A/0x51 in `rocev2_mlx-dct_*`): tshark assumes a 20-byte
//!   DC BTH and misreads the headers after it; we decode the IBTA RD layout, so only the BTH
//!   is compared for that file.
//! - A frame cut inside its CM MAD: tshark decodes none of its CM fields, we decode those
//!   captured; the CM fields of cut frames are not compared.
//! - UDP source port 69 (TFTP) wins tshark's port priority; we run tshark with
//!   `--disable-protocol tftp` so it decodes those frames as RoCEv2, as we do by destination port.

mod common;

use rdmascope_wire::fields::{self, RecordMeta, Value};
use rdmascope_wire::DecodeOptions;

const FIELDS: &[&str] = &[
    "bth.opcode",
    "bth.se",
    "bth.m",
    "bth.padcnt",
    "bth.tver",
    "bth.p_key",
    "bth.destqp",
    "bth.a",
    "bth.psn",
    "reth.va",
    "reth.r_key",
    "reth.dmalen",
    "aeth.syndrome",
    "aeth.msn",
    "deth.q_key",
    "deth.srcqp",
    "immdt",
    "atomiceth.swapdt",
    "atomiceth.cmpdt",
    "lrh.vl",
    "lrh.lver",
    "lrh.sl",
    "lrh.lnh",
    "lrh.dlid",
    "lrh.pktlen",
    "lrh.slid",
    "grh.ipver",
    "grh.tclass",
    "grh.flowlabel",
    "grh.paylen",
    "grh.nxthdr",
    "grh.hoplmt",
    "grh.sgid",
    "grh.dgid",
    "cm.req.localqpn",
    "cm.req.startpsn",
    "cm.req.serviceid",
    "cm.rep.localqpn",
    "cm.rep.startpsn",
];

/// A value normalised for comparison.
#[derive(Debug, PartialEq, Eq)]
enum Norm {
    Int(u128),
    Addr([u8; 16]),
}

fn norm_tshark(s: &str) -> Option<Norm> {
    if s.is_empty() {
        return None;
    }
    if let Some(h) = s.strip_prefix("0x") {
        return u128::from_str_radix(h, 16).ok().map(Norm::Int);
    }
    if let Ok(v) = s.parse::<u128>() {
        return Some(Norm::Int(v));
    }
    match s {
        "True" => return Some(Norm::Int(1)),
        "False" => return Some(Norm::Int(0)),
        _ => {}
    }
    if let Ok(a) = s.parse::<std::net::Ipv6Addr>() {
        return Some(Norm::Addr(a.octets()));
    }
    norm_bytes(s)
}

/// A byte string as tshark prints it ("00:00:00:14" or "00000014"), read as hex.
fn norm_bytes(s: &str) -> Option<Norm> {
    let hex: String = s.chars().filter(|c| *c != ':').collect();
    u128::from_str_radix(&hex, 16).ok().map(Norm::Int)
}

fn norm_ours(v: Value<'_>) -> Norm {
    match v {
        Value::Ipv6(a) => Norm::Addr(a),
        other => Norm::Int(u128::from(other.as_u64().expect("integer field"))),
    }
}

/// `tshark -T fields` of `columns` (first occurrences) for every frame of `path`.
fn tshark_fields(
    tshark: &str,
    path: &std::path::Path,
    args: &[&str],
    columns: &[String],
) -> String {
    let mut cmd = std::process::Command::new(tshark);
    cmd.arg("-n").arg("-r").arg(path).args(args);
    cmd.args(["-T", "fields", "-E", "occurrence=f"]);
    for c in columns {
        cmd.args(["-e", c]);
    }
    let out = cmd.output().expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Compares every RDMA packet's [`FIELDS`] in `path` with tshark's (only the BTH of a
/// Mellanox DC file, see above; nor the CM fields of a frame cut inside its MAD, which tshark
/// does not decode at all). Returns the values compared and the DC differences.
fn compare_fields(tshark: &str, path: &std::path::Path) -> (u64, u64) {
    let opts = DecodeOptions::default();
    let mut compared = 0u64;
    let mut exceptions = 0u64;
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let recs = common::read_all(path);
    let columns: Vec<String> = std::iter::once("frame.number".to_string())
        .chain(FIELDS.iter().map(|f| format!("infiniband.{f}")))
        .collect();
    let text = tshark_fields(tshark, path, &["--disable-protocol", "tftp"], &columns);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), recs.len(), "{name}: frame count");
    let dc = name.contains("mlx-dct");
    for (rec, row) in recs.iter().zip(&rows) {
        let frame = rec.decode(&opts);
        if frame.bth.is_none() {
            continue;
        }
        let meta = RecordMeta {
            number: rec.number,
            ts_ns: rec.ts_ns,
            interface: 0,
        };
        for (i, f) in FIELDS.iter().enumerate() {
            let theirs = row.get(i + 1).and_then(|s| {
                // tshark prints ImmDt as bytes ("00000014"): hex, though all digits.
                if *f == "immdt" {
                    norm_bytes(s)
                } else {
                    norm_tshark(s)
                }
            });
            let ours = fields::get(&meta, &frame, f).map(norm_ours);
            if dc && !f.starts_with("bth.") {
                if ours != theirs {
                    exceptions += 1;
                }
                continue;
            }
            if f.starts_with("cm.") && frame.truncated {
                continue;
            }
            assert_eq!(
                ours, theirs,
                "{name} frame {} field {f}: ours vs tshark",
                rec.number
            );
            if ours.is_some() {
                compared += 1;
            }
        }
    }
    (compared, exceptions)
}

#[test]
fn fields_equal_tshark() {
    let Some(dir) = common::corpus() else { return };
    let Some(tshark) = common::tshark() else {
        return;
    };
    let mut compared = 0u64;
    let mut exceptions = 0u64;
    for path in common::corpus_files(&dir) {
        let (c, e) = compare_fields(tshark, &path);
        compared += c;
        exceptions += e;
    }
    eprintln!(
        "compared {compared} field values with tshark; {exceptions} documented DC differences"
    );
    assert!(compared > 10_000, "too few values compared: {compared}");
}

/// The same fields in `gen`'s captures, which need no corpus: every scenario over IPv4, IPv6
/// behind a VLAN tag and native IB, whole and cut by the snaplen inside their headers.
#[test]
fn generated_fields_equal_tshark() {
    let Some(tshark) = common::tshark() else {
        return;
    };
    let dir = common::tmp_dir("tshark-gen");
    let mut compared = 0u64;
    for (i, scenario) in common::SCENARIOS.iter().enumerate() {
        let variants: &[&[&str]] = if *scenario == "ib" {
            &[&[], &["--snaplen", "64"]]
        } else {
            &[&[], &["--ipv6", "--vlan", "9", "--snaplen", "96"]]
        };
        for (j, extra) in variants.iter().enumerate() {
            let cap = dir.join(format!("{scenario}-{j}.pcap"));
            let seed = (i * 2 + j + 1).to_string();
            let o = common::bin()
                .args([
                    "gen",
                    "--scenario",
                    scenario,
                    "--packets",
                    "1500",
                    "--seed",
                    &seed,
                ])
                .args(*extra)
                .arg("-o")
                .arg(&cap)
                .output()
                .unwrap();
            assert!(o.status.success(), "gen {scenario} {extra:?}");
            compared += compare_fields(tshark, &cap).0;
        }
    }
    eprintln!("compared {compared} field values of generated captures with tshark");
    assert!(compared > 50_000, "too few values compared: {compared}");
}

/// tshark's fields for one of ours: one field, or eight per-priority fields (bit or nibble n
/// of ours is priority or class n) folded into ours's bitmap or packed table.
enum Theirs {
    One(&'static str),
    /// Eight booleans, priority 0 first, as a bitmap (bit n = priority n).
    Bits(&'static str),
    /// Eight values, the first in the top `width` bits, as we pack them.
    Packed(&'static str, u32),
}

/// LLDP and its DCB TLVs against tshark's `lldp` fields, in every LLDP corpus file.
///
/// Differences in naming, each compared here: tshark has a field per priority where we have
/// one bitmap (`lldp.dcbx.ieee.pfc.enable`, `lldp.ieee.802_1qau.cnpv` and `.ready`) or one
/// packed table (`lldp.dcbx.ieee.ets.prio_tc`, `.tc_bw`, `.tsa`); it spells the Application
/// Priority selector `lldp.dcbx.iee.app.sf` (sic) and names its protocol
/// `lldp.dcbx.feature.app.proto`; and its `lldp.dcbx.ieee.willing` is PFC's or ETS's bit, our
/// `lldp.dcbx.ieee.willing` PFC's and `lldp.dcbx.ieee.ets.willing` ETS's (no corpus frame
/// carries both TLVs, which the test checks).
#[test]
fn lldp_fields_equal_tshark() {
    use Theirs::*;
    let Some(dir) = common::corpus() else { return };
    let Some(tshark) = common::tshark() else {
        return;
    };
    let pairs: &[(&str, Theirs)] = &[
        ("lldp.chassis.subtype", One("lldp.chassis.subtype")),
        ("lldp.port.subtype", One("lldp.port.subtype")),
        ("lldp.time_to_live", One("lldp.time_to_live")),
        ("lldp.dcbx.ieee.pfc.mbc", One("lldp.dcbx.ieee.pfc.mbc")),
        (
            "lldp.dcbx.ieee.pfc.numtcs",
            One("lldp.dcbx.ieee.pfc.numtcs"),
        ),
        (
            "lldp.dcbx.ieee.pfc.enable",
            Bits("lldp.dcbx.feature.pfc.prio"),
        ),
        ("lldp.dcbx.ieee.ets.cbs", One("lldp.dcbx.ieee.ets.cbs")),
        (
            "lldp.dcbx.ieee.ets.maxtcs",
            One("lldp.dcbx.ieee.ets.maxtcs"),
        ),
        (
            "lldp.dcbx.ieee.ets.prio_tc",
            Packed("lldp.dcbx.feature.pg.pgid_prio", 4),
        ),
        (
            "lldp.dcbx.ieee.ets.tc_bw",
            Packed("lldp.dcbx.feature.pg.per", 8),
        ),
        (
            "lldp.dcbx.ieee.ets.tsa",
            Packed("lldp.dcbx.ieee.ets.tsa", 8),
        ),
        (
            "lldp.ieee.802_1qau.cnpv",
            Bits("lldp.ieee.802_1qau.cnpv.prio"),
        ),
        (
            "lldp.ieee.802_1qau.ready",
            Bits("lldp.ieee.802_1qau.ready.prio"),
        ),
        ("lldp.dcbx.ieee.app.prio", One("lldp.dcbx.ieee.app.prio")),
        ("lldp.dcbx.ieee.app.sel", One("lldp.dcbx.iee.app.sf")),
        (
            "lldp.dcbx.ieee.app.proto",
            One("lldp.dcbx.feature.app.proto"),
        ),
    ];
    // tshark's columns: frame number, willing, then each pair's one or eight fields.
    let mut columns: Vec<String> = vec!["frame.number".into(), "lldp.dcbx.ieee.willing".into()];
    for (_, t) in pairs {
        match t {
            One(n) => columns.push(n.to_string()),
            Bits(n) | Packed(n, _) => columns.extend((0..8).map(|i| format!("{n}{i}"))),
        }
    }
    let opts = DecodeOptions::default();
    let mut compared = 0u64;
    for path in common::corpus_files(&dir) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("lldp") {
            continue;
        }
        let recs = common::read_all(&path);
        let text = tshark_fields(tshark, &path, &[], &columns);
        let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
        assert_eq!(rows.len(), recs.len(), "{name}: frame count");
        for (rec, row) in recs.iter().zip(&rows) {
            let frame = rec.decode(&opts);
            let Some(l) = frame.lldp() else { continue };
            let meta = RecordMeta {
                number: rec.number,
                ts_ns: rec.ts_ns,
                interface: 0,
            };
            let int = |s: &str| match norm_tshark(s) {
                Some(Norm::Int(v)) => Some(v),
                _ => None,
            };
            let ours = |f: &str| fields::get(&meta, &frame, f).map(norm_ours);
            assert!(
                l.pfc().is_none() || l.ets().is_none(),
                "{name} frame {}: PFC and ETS in one frame",
                rec.number
            );
            let willing = ours("lldp.dcbx.ieee.willing").or(ours("lldp.dcbx.ieee.ets.willing"));
            assert_eq!(
                willing,
                int(row[1]).map(Norm::Int),
                "{name} frame {} willing",
                rec.number
            );
            let mut col = 2;
            for (f, t) in pairs {
                let theirs = match t {
                    One(_) => {
                        col += 1;
                        int(row[col - 1])
                    }
                    Bits(_) | Packed(..) => {
                        let width = if let Packed(_, w) = t { *w } else { 1 };
                        let vals: Vec<Option<u128>> =
                            row[col..col + 8].iter().map(|s| int(s)).collect();
                        col += 8;
                        if vals.iter().all(Option::is_none) {
                            None
                        } else if width == 1 {
                            Some((0..8).fold(0, |acc, i| acc | vals[i].unwrap_or(0) << i))
                        } else {
                            Some(vals.iter().fold(0, |acc, v| acc << width | v.unwrap_or(0)))
                        }
                    }
                };
                assert_eq!(
                    ours(f),
                    theirs.map(Norm::Int),
                    "{name} frame {} field {f}: ours vs tshark",
                    rec.number
                );
                compared += u64::from(theirs.is_some());
            }
        }
    }
    eprintln!("compared {compared} LLDP field values with tshark");
    assert!(compared > 250, "too few LLDP values compared: {compared}");
}

/// CEE DCBX (the pre-standard TLV, OUI 00-1B-21), which the corpus lacks: LLDP frames built
/// here with every PFC enable map, both willing bits and assorted application entries, decoded
/// by tshark and by us. Ours gives the enable bits as one bitmap (tshark: `pfc.prio0`–`7`) and
/// an application's priorities as one map (tshark: one `app.prio` per priority).
#[test]
fn cee_dcbx_equals_tshark() {
    use rdmascope_wire::lldp::{emit_cee_tlv, tlv, CeeApp, Tlv};
    let Some(tshark) = common::tshark() else {
        return;
    };
    let frames: Vec<Vec<u8>> = (0..=255u8)
        .map(|enable| {
            let mut f = vec![0u8; 160];
            f[..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e]);
            f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, enable]);
            f[12..14].copy_from_slice(&0x88ccu16.to_be_bytes());
            let mut at = 14;
            Tlv::emit_header(tlv::CHASSIS_ID, 7, &mut f[at..]);
            f[at + 2] = 4;
            f[at + 8] = enable;
            at += 9;
            Tlv::emit_header(tlv::PORT_ID, 5, &mut f[at..]);
            f[at + 2] = 5;
            f[at + 3..at + 7].copy_from_slice(b"eth1");
            at += 7;
            Tlv::emit_header(tlv::TTL, 2, &mut f[at..]);
            f[at + 3] = 120;
            at += 4;
            let app = [
                CeeApp {
                    protocol: if enable % 2 == 0 { 0x8915 } else { 4791 },
                    selector: enable % 2,
                    oui: (u32::from(enable) * 0x1_0101) & 0xfc_ffff,
                    priorities: enable.rotate_left(3),
                },
                CeeApp {
                    protocol: 3260,
                    selector: 1,
                    oui: 0,
                    priorities: 1 << (enable % 8),
                },
            ];
            at += emit_cee_tlv(
                &mut f[at..],
                enable % 3 == 0,
                enable,
                &app[..1 + usize::from(enable % 2)],
            );
            Tlv::emit_header(tlv::END, 0, &mut f[at..]);
            f.truncate(at + 2);
            f
        })
        .collect();
    let dir = common::tmp_dir("cee");
    let path = dir.join("cee.pcap");
    let mut pcap = Vec::new();
    for v in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, 1] {
        if pcap.len() == 4 {
            pcap.extend_from_slice(&2u16.to_le_bytes());
            pcap.extend_from_slice(&4u16.to_le_bytes());
            continue;
        }
        pcap.extend_from_slice(&v.to_le_bytes());
    }
    for (i, f) in frames.iter().enumerate() {
        for v in [i as u32, 0, f.len() as u32, f.len() as u32] {
            pcap.extend_from_slice(&v.to_le_bytes());
        }
        pcap.extend_from_slice(f);
    }
    std::fs::write(&path, &pcap).unwrap();
    let mut columns = vec!["lldp.dcbx.feature.willing".to_string()];
    columns.extend((0..8).map(|i| format!("lldp.dcbx.feature.pfc.prio{i}")));
    for c in ["pfc.numtcs", "app.proto", "app.sf", "app.oui", "app.prio"] {
        columns.push(format!("lldp.dcbx.feature.{c}"));
    }
    let text = tshark_fields(tshark, &path, &[], &columns);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), frames.len(), "frame count");
    let opts = DecodeOptions::default();
    let int = |s: &str| match norm_tshark(s) {
        Some(Norm::Int(v)) => Some(v),
        _ => None,
    };
    let mut compared = 0;
    for (i, (f, row)) in frames.iter().zip(&rows).enumerate() {
        let frame = rdmascope_wire::Frame::decode(1, f, f.len() as u32, &opts);
        let meta = RecordMeta {
            number: i as u64 + 1,
            ts_ns: 0,
            interface: 0,
        };
        let ours = |name: &str| fields::get(&meta, &frame, name).map(norm_ours);
        let bits = (0..8).fold(0, |acc, p| acc | int(row[1 + p]).unwrap_or(0) << p);
        let theirs = [
            ("lldp.dcbx.feature.willing", int(row[0])),
            ("lldp.dcbx.feature.pfc.enable", Some(bits)),
            ("lldp.dcbx.feature.pfc.numtcs", int(row[9])),
            ("lldp.dcbx.feature.app.proto", int(row[10])),
            ("lldp.dcbx.feature.app.sf", int(row[11])),
            ("lldp.dcbx.feature.app.oui", int(row[12])),
        ];
        for (name, t) in theirs {
            assert_eq!(ours(name), t.map(Norm::Int), "frame {}: {name}", i + 1);
            compared += 1;
        }
        // tshark gives one `app.prio` per priority of the map; the first is its lowest bit.
        let map = match ours("lldp.dcbx.feature.app.priomap") {
            Some(Norm::Int(m)) => m,
            other => panic!("frame {}: priority map {other:?}", i + 1),
        };
        let lowest = (map != 0).then(|| u128::from(map.trailing_zeros()));
        assert_eq!(lowest, int(row[13]), "frame {}: app.prio", i + 1);
        compared += 1;
    }
    assert_eq!(compared, 7 * 256);
}
