//! Differential test against Wireshark: for every RDMA packet of every corpus file, the values
//! of the BTH, RETH, AETH, DETH, ImmDt, AtomicETH, LRH, GRH fields and the CM local QPN /
//! starting PSN / service ID equal what `tshark -T fields` prints for the same frame.
//!
//! tshark is the peer, not the oracle. Known differences, each asserted in our favour:
//! - FECN/BECN: tshark 4.0 has no fields for them (we decode them; not compared).
//! - CNP (0x81): tshark shows it as an unknown opcode 129; the opcode number still compares.
//! - Mellanox DC frames (RD opcodes 0x4A/0x51 in `rocev2_mlx-dct_*`): tshark assumes a 20-byte
//!   DC BTH and misreads the headers after it; we decode the IBTA RD layout, so only the BTH
//!   is compared for that file.
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
    // Byte strings (ImmDt): "00:00:00:01" or "00000001".
    let hex: String = s.chars().filter(|c| *c != ':').collect();
    u128::from_str_radix(&hex, 16).ok().map(Norm::Int)
}

fn norm_ours(v: Value<'_>) -> Norm {
    match v {
        Value::Ipv6(a) => Norm::Addr(a),
        other => Norm::Int(u128::from(other.as_u64().expect("integer field"))),
    }
}

#[test]
fn fields_equal_tshark() {
    let Some(dir) = common::corpus() else { return };
    let Some(tshark) = common::tshark() else {
        return;
    };
    let opts = DecodeOptions::default();
    let mut compared = 0u64;
    let mut exceptions = 0u64;
    for path in common::corpus_files(&dir) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let recs = common::read_all(&path);
        let mut cmd = std::process::Command::new(tshark);
        cmd.arg("-n").arg("-r").arg(&path).args([
            "--disable-protocol",
            "tftp",
            "-T",
            "fields",
            "-E",
            "occurrence=f",
        ]);
        cmd.args(["-e", "frame.number"]);
        for f in FIELDS {
            cmd.args(["-e", &format!("infiniband.{f}")]);
        }
        let out = cmd.output().expect("run tshark");
        assert!(
            out.status.success(),
            "tshark failed on {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
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
                let theirs = row.get(i + 1).and_then(|s| norm_tshark(s));
                let ours = fields::get(&meta, &frame, f).map(norm_ours);
                if dc && !f.starts_with("bth.") {
                    if ours != theirs {
                        exceptions += 1;
                    }
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
    }
    eprintln!(
        "compared {compared} field values with tshark; {exceptions} documented DC differences"
    );
    assert!(compared > 10_000, "too few values compared: {compared}");
}
