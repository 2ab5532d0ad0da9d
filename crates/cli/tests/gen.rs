//! `rdmascope gen`: every scenario, with and without --ipv6 and --vlan, writes frames that
//! tshark and our decoder both read with the intended opcode, no malformed or warning expert
//! entry, and verifying ICRCs; the truth agrees with the frames; the same seed gives the same
//! bytes.

mod common;

use std::collections::BTreeMap;
use std::process::Command;

use rdmascope_wire::{DecodeOptions, IcrcStatus, OpInfo};

use common::SCENARIOS;

fn dir() -> std::path::PathBuf {
    common::tmp_dir("gen-test")
}

/// Runs `gen` and returns (capture path, truth).
fn gen(name: &str, args: &[&str]) -> (std::path::PathBuf, serde_json::Value) {
    let d = dir();
    let ext = if args.contains(&"pcapng") {
        "pcapng"
    } else {
        "pcap"
    };
    let out = d.join(format!("{name}.{ext}"));
    let truth = d.join(format!("{name}.json"));
    let mut cmd = common::bin();
    cmd.arg("gen").args(args.iter().filter(|a| **a != "pcapng"));
    cmd.arg("-o").arg(&out).arg("--truth").arg(&truth);
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "gen {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let t = serde_json::from_str(&std::fs::read_to_string(&truth).unwrap()).unwrap();
    (out, t)
}

/// Decodes a capture with our code: per-frame opcodes, and the ICRC counts.
fn ours(path: &std::path::Path) -> (Vec<Option<u8>>, BTreeMap<String, u64>, [u64; 4]) {
    let opts = DecodeOptions::default();
    let mut ops = Vec::new();
    let mut names = BTreeMap::new();
    let mut icrc = [0u64; 4];
    for rec in common::read_all(path) {
        let f = rec.decode(&opts);
        assert!(
            f.error.is_none(),
            "{}: frame {}: {}",
            path.display(),
            rec.number,
            f.error.unwrap()
        );
        if let Some(b) = f.bth {
            *names
                .entry(OpInfo::of(b.opcode).name.to_string())
                .or_insert(0) += 1;
        }
        match f.icrc {
            Some(IcrcStatus::Ok) => icrc[0] += 1,
            Some(IcrcStatus::Bad) => icrc[1] += 1,
            Some(IcrcStatus::Truncated) => icrc[2] += 1,
            Some(IcrcStatus::Unverifiable) => icrc[3] += 1,
            None => {}
        }
        if let Some(v) = f.vcrc {
            assert_eq!(
                v,
                if f.truncated {
                    IcrcStatus::Truncated
                } else {
                    IcrcStatus::Ok
                },
                "VCRC of frame {}",
                rec.number
            );
        }
        ops.push(f.bth.map(|b| b.opcode));
    }
    (ops, names, icrc)
}

fn check_truth_against_frames(
    name: &str,
    t: &serde_json::Value,
    names: &BTreeMap<String, u64>,
    icrc: [u64; 4],
) {
    let totals = &t["totals"];
    let want: BTreeMap<String, u64> = totals["opcodes"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect();
    assert_eq!(&want, names, "{name}: opcodes in the truth vs decoded");
    assert_eq!(totals["icrc"]["ok"], icrc[0], "{name}: icrc ok");
    assert_eq!(totals["icrc"]["bad"], icrc[1], "{name}: icrc bad");
    assert_eq!(
        totals["icrc"]["truncated"], icrc[2],
        "{name}: icrc truncated"
    );
    // Totals are the sum of the flows.
    let flows = t["flows"].as_array().unwrap();
    for k in [
        "packets",
        "bytes",
        "payload_bytes",
        "retransmitted_packets",
        "gap_filled_packets",
        "missing_packets",
        "duplicate_acks",
        "rnr_naks",
        "timeouts",
        "cnp",
    ] {
        let sum: u64 = flows.iter().map(|f| f[k].as_u64().unwrap()).sum();
        assert_eq!(
            totals[k].as_u64().unwrap(),
            sum,
            "{name}: totals.{k} = sum over flows"
        );
    }
}

#[test]
fn every_scenario_decodes_with_intended_opcodes() {
    let tshark = common::tshark();
    for scenario in SCENARIOS {
        let variants: &[(&str, &[&str])] = if scenario == "ib" {
            &[("", &[])]
        } else {
            &[
                ("", &[]),
                ("-v6", &["--ipv6"]),
                ("-vlan", &["--vlan", "100", "--pcp", "3"]),
            ]
        };
        for (suffix, extra) in variants {
            let name = format!("{scenario}{suffix}");
            let mut args = vec!["--scenario", scenario, "--packets", "3000", "--seed", "3"];
            args.extend_from_slice(extra);
            let (path, truth) = gen(&name, &args);
            let (ops, names, icrc) = ours(&path);
            assert_eq!(truth["frames"], ops.len() as u64, "{name}: frame count");
            assert_eq!(
                icrc[1] + icrc[2] + icrc[3],
                0,
                "{name}: every ICRC verifies"
            );
            check_truth_against_frames(&name, &truth, &names, icrc);
            if !extra.is_empty() {
                // The options reach the frames.
                let rec = &common::read_all(&path)[10];
                let f = rec.decode(&DecodeOptions::default());
                if extra.contains(&"--ipv6") {
                    assert!(f.ipv6.is_some(), "{name}: IPv6");
                } else {
                    assert_eq!(
                        f.vlans[0].map(|v| (v.vid, v.pcp)),
                        Some((100, 3)),
                        "{name}: VLAN tag"
                    );
                }
            }
            let Some(tshark) = tshark else { continue };
            let out = Command::new(tshark)
                .arg("-n")
                .arg("-r")
                .arg(&path)
                .args([
                    "-T",
                    "fields",
                    "-E",
                    "occurrence=f",
                    "-e",
                    "infiniband.bth.opcode",
                    "-e",
                    "_ws.malformed",
                    "-e",
                    "_ws.expert.severity",
                    "-e",
                    "lldp",
                ])
                .output()
                .unwrap();
            assert!(out.status.success(), "{name}: tshark failed");
            let text = String::from_utf8(out.stdout).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), ops.len(), "{name}: tshark frame count");
            for (i, (l, ours)) in lines.iter().zip(&ops).enumerate() {
                let cols: Vec<&str> = l.split('\t').collect();
                let theirs = cols[0].parse::<u8>().ok();
                assert_eq!(
                    theirs,
                    *ours,
                    "{name} frame {}: tshark opcode vs ours",
                    i + 1
                );
                assert!(
                    cols.get(1).is_none_or(|m| m.is_empty()),
                    "{name} frame {}: tshark says malformed",
                    i + 1
                );
                // Expert severity: 0x00400000 note, 0x00600000 warning, 0x00800000 error.
                // tshark 4.0 ends an LLDPDU one byte early after each IEEE 802.1 DCB TLV
                // (PFC, Application Priority), so the last bytes look like a trailer that is
                // not zero padding, a note; it does the same on tcpdump's DCB captures in the
                // corpus, whose fields it decodes as we do (tshark_diff.rs).
                let lldp = cols.get(3).is_some_and(|s| !s.is_empty());
                let sev = cols.get(2).filter(|_| !lldp).and_then(|s| {
                    s.strip_prefix("0x")
                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                        .or(s.parse().ok())
                });
                assert!(
                    sev.is_none_or(|s| s < 0x0040_0000),
                    "{name} frame {}: tshark expert entry {l}",
                    i + 1
                );
            }
        }
    }
}

#[test]
fn same_seed_same_bytes() {
    let (a, ta) = gen(
        "seed-a",
        &[
            "--scenario",
            "mixed",
            "--packets",
            "4000",
            "--seed",
            "9",
            "pcapng",
        ],
    );
    let (b, tb) = gen(
        "seed-b",
        &[
            "--scenario",
            "mixed",
            "--packets",
            "4000",
            "--seed",
            "9",
            "pcapng",
        ],
    );
    let (c, _) = gen(
        "seed-c",
        &[
            "--scenario",
            "mixed",
            "--packets",
            "4000",
            "--seed",
            "10",
            "pcapng",
        ],
    );
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(ta, tb);
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(c).unwrap());
}

/// An IB frame's ERF header carries the time of its pcap record, as ibdump writes both:
/// tshark and `editcap` take the frame's time from the ERF header, rdmascope from the record.
#[test]
fn ib_erf_time_is_the_record_time() {
    let (cap, _) = gen("ib-erf-time", &["--scenario", "ib", "--packets", "300"]);
    let recs = common::read_all(&cap);
    assert_eq!(recs.len(), 300);
    for r in recs {
        let (erf, _) = rdmascope_wire::link::ErfRepr::parse(&r.data).unwrap();
        let frac = ((r.ts_ns % 1_000_000_000) << 32) / 1_000_000_000;
        assert_eq!(
            erf.ts,
            (r.ts_ns / 1_000_000_000) << 32 | frac,
            "frame {}: ERF time vs record time {} ns",
            r.number,
            r.ts_ns
        );
    }
}

#[test]
fn corrupt_rate_gives_bad_icrcs_the_truth_counts() {
    let (p, t) = gen(
        "corrupt",
        &[
            "--scenario",
            "clean",
            "--packets",
            "3000",
            "--corrupt-rate",
            "0.05",
        ],
    );
    let (_, names, icrc) = ours(&p);
    assert!(icrc[1] > 50, "bad ICRCs: {icrc:?}");
    check_truth_against_frames("corrupt", &t, &names, icrc);
    let codes = t["expected_findings"].as_array().unwrap();
    assert!(codes.iter().any(|f| f == "icrc.bad"));
    // Each damaged packet is dropped by its receiver, after the capture point, and recovered:
    // the `clean` scenario loses nothing else, yet it resends.
    let drops = t["events"]["drops"].as_array().unwrap();
    assert_eq!(drops.len() as u64, icrc[1], "one drop per bad ICRC");
    assert!(drops.iter().all(|d| d["at"] == "after_capture"));
    assert!(t["totals"]["retransmitted_packets"].as_u64().unwrap() > 0);
    assert!(codes.iter().any(|f| f == "transport.loss"), "{codes:?}");
}

#[test]
fn snaplen_cuts_frames_and_truth_counts_truncation() {
    let (p, t) = gen(
        "snap",
        &[
            "--scenario",
            "mixed",
            "--packets",
            "3000",
            "--snaplen",
            "128",
            "pcapng",
        ],
    );
    let (_, names, icrc) = ours(&p);
    assert!(icrc[2] > 1000);
    check_truth_against_frames("snap", &t, &names, icrc);
    for rec in common::read_all(&p) {
        assert!(rec.data.len() <= 128);
    }
}

#[test]
fn duration_and_link_speed() {
    let (_, t) = gen(
        "dur",
        &[
            "--scenario",
            "pfc-storm",
            "--duration",
            "3ms",
            "--link",
            "400G",
        ],
    );
    let span = t["last_ts_ns"].as_u64().unwrap() - t["first_ts_ns"].as_u64().unwrap();
    assert!(span <= 3_000_000 && span > 2_000_000, "span {span}");
    assert_eq!(t["link_bps"], 400_000_000_000u64);
    // At 400G a full pause (65535 quanta) lasts 83.9 µs.
    let ep = &t["events"]["pfc_episodes"][0];
    assert!(ep["end_ns"].as_u64().unwrap() - ep["start_ns"].as_u64().unwrap() >= 83_886);
}

#[test]
fn bad_arguments_are_refused() {
    let bad = [
        &["--scenario", "nope"][..],
        &["--link", "fast"],
        &["--duration", "5"],
        &["--vlan", "4095"],
        &["--vlan", "5000"],
        &["--snaplen", "10"],
        &["--corrupt-rate", "2"],
        &["--vlan", "3", "--pcp", "8"],
    ];
    for extra in bad {
        let mut args = vec!["gen", "-o", "/tmp/x.pcap"];
        if extra[0] != "--scenario" {
            args.extend(["--scenario", "clean"]);
        }
        args.extend(extra);
        let o = Command::new(env!("CARGO_BIN_EXE_rdmascope"))
            .args(&args)
            .output()
            .unwrap();
        assert!(!o.status.success(), "{args:?}");
        assert!(!o.stderr.is_empty());
    }
}

#[test]
fn rnr_events_match_the_counters() {
    let (_, t) = gen("rnr-events", &["--scenario", "rnr", "--packets", "5000"]);
    let ev = t["events"]["rnr_naks"].as_array().unwrap();
    assert_eq!(ev.len() as u64, t["totals"]["rnr_naks"].as_u64().unwrap());
    assert!(!ev.is_empty());
    assert_eq!(ev[0]["timer_us"], 1280); // timer code 14
    let causes: Vec<&str> = t["events"]["retransmissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["cause"].as_str().unwrap())
        .collect();
    assert!(causes.iter().all(|c| *c == "rnr"), "{causes:?}");
}
