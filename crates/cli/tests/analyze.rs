//! `rdmascope analyze` against ground truth: for every `gen` scenario, with and without
//! --ipv6 / --vlan and with --snaplen 128, every total and per-flow counter equals the truth
//! file, and exactly the expected findings appear. Also: real captures.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

use common::SCENARIOS;
const COUNTERS: [&str; 15] = [
    "packets",
    "bytes",
    "payload_bytes",
    "opcodes",
    "retransmitted_packets",
    "gap_filled_packets",
    "reordered_packets",
    "missing_packets",
    "duplicate_acks",
    "naks",
    "rnr_naks",
    "timeouts",
    "cnp",
    "ecn",
    "icrc",
];

use common::bin;

/// Totals a second sighting of each packet (a capture point more) must leave as they were.
const TRANSPORT_TOTALS: [&str; 5] = [
    "retransmitted_packets",
    "missing_packets",
    "duplicate_acks",
    "timeouts",
    "naks",
];

fn tmp() -> std::path::PathBuf {
    common::tmp_dir("analyze-test")
}

fn analyze(path: &std::path::Path, extra: &[&str]) -> Value {
    let o = bin()
        .arg("analyze")
        .arg("--json")
        .args(extra)
        .arg(path)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "analyze {}: {}",
        path.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `gen --scenario SCENARIO --packets N` written to `dir/name`.
fn generated(dir: &std::path::Path, name: &str, scenario: &str, n: u32) -> std::path::PathBuf {
    generated_with(dir, name, scenario, n, &[])
}

/// [`generated`] with further `gen` options.
fn generated_with(
    dir: &std::path::Path,
    name: &str,
    scenario: &str,
    n: u32,
    extra: &[&str],
) -> std::path::PathBuf {
    let cap = dir.join(name);
    let o = bin()
        .args(["gen", "--scenario", scenario, "--packets", &n.to_string()])
        .args(extra)
        .arg("-o")
        .arg(&cap)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "gen {name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    cap
}

/// `gen --scenario SCENARIO --packets N` with further options into `NAME.pcapng` and its
/// truth, analysed and compared with that truth: the report.
fn matches_truth(name: &str, scenario: &str, n: u32, extra: &[&str]) -> Value {
    let d = tmp();
    let truth = d.join(format!("{name}.json"));
    let opts = [&["--truth", truth.to_str().unwrap()], extra].concat();
    let cap = generated_with(&d, &format!("{name}.pcapng"), scenario, n, &opts);
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&truth).unwrap()).unwrap();
    let r = analyze(&cap, &[]);
    compare(name, &t, &r);
    r
}

/// [`matches_truth`] for a case a sweep of random `gen` cases found (`bench/sweep.py`), its
/// `gen` options as the sweep prints them.
fn sweep_case(name: &str, scenario: &str, n: u32, gen_options: &str) -> Value {
    let opts: Vec<&str> = gen_options.split_whitespace().collect();
    matches_truth(name, scenario, n, &opts)
}

/// Classic pcap file `ns` (little-endian, nanoseconds, as `gen` writes) written again to `us`
/// in microseconds, as `tcpdump` writes by default: each record's fraction of a second cut to
/// whole microseconds.
fn in_microseconds(ns: &std::path::Path, us: &std::path::Path) {
    let b = std::fs::read(ns).unwrap();
    assert_eq!(
        b[..4],
        0xa1b2_3c4d_u32.to_le_bytes(),
        "a pcap file of nanoseconds"
    );
    let mut out = 0xa1b2_c3d4_u32.to_le_bytes().to_vec();
    out.extend(&b[4..24]);
    let mut at = 24;
    while at + 16 <= b.len() {
        let word = |i: usize| u32::from_le_bytes(b[at + i..at + i + 4].try_into().unwrap());
        let (frac, len) = (word(4), word(8) as usize);
        out.extend(&b[at..at + 4]);
        out.extend((frac / 1000).to_le_bytes());
        out.extend(&b[at + 8..at + 16 + len]);
        at += 16 + len;
    }
    std::fs::write(us, out).unwrap();
}

/// [`matches_truth`] of a capture at `link` written in microseconds ([`in_microseconds`]; the
/// link speed given, as classic pcap keeps none): the same counters and findings. Only the
/// pause time may differ, by less than a microsecond at each end of an episode.
fn matches_truth_in_microseconds(
    name: &str,
    scenario: &str,
    n: u32,
    link: &str,
    extra: &[&str],
) -> Value {
    let d = tmp();
    let truth = d.join(format!("{name}.json"));
    let opts = [&["--truth", truth.to_str().unwrap(), "--link", link], extra].concat();
    let ns = generated_with(&d, &format!("{name}.pcap"), scenario, n, &opts);
    let us = d.join(format!("{name}-us.pcap"));
    in_microseconds(&ns, &us);
    let mut t: Value = serde_json::from_str(&std::fs::read_to_string(&truth).unwrap()).unwrap();
    let r = analyze(&us, &["--link-speed", link]);
    let pause = |v: &Value| v["pfc"]["pause_ns_total"].as_u64().unwrap();
    let episodes = t["pfc"]["pause_episodes"].as_u64().unwrap();
    assert!(
        pause(&r).abs_diff(pause(&t)) < 2_000 * episodes.max(1),
        "{name}: pause time {} against {}",
        pause(&r),
        pause(&t)
    );
    t["pfc"]["pause_ns_total"] = r["pfc"]["pause_ns_total"].clone();
    compare(name, &t, &r);
    r
}

/// The flow (`src`, `dst`, `dest_qp`) of `report`; panics naming it when there is none.
fn flow_of<'a>(report: &'a Value, src: &str, dst: &str, dest_qp: u32) -> &'a Value {
    let flows = report["flows"].as_array().expect("flows");
    let found = flows
        .iter()
        .find(|f| f["src"] == src && f["dst"] == dst && f["dest_qp"] == dest_qp);
    found.unwrap_or_else(|| panic!("no flow {src} > {dst} qp {dest_qp}"))
}

/// The findings of `report` whose code is `code`.
fn with_code<'a>(report: &'a Value, code: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

fn codes(report: &Value) -> BTreeSet<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

fn compare(name: &str, truth: &Value, report: &Value) {
    for k in COUNTERS {
        assert_eq!(
            report["totals"][k], truth["totals"][k],
            "{name}: totals.{k}"
        );
    }
    let key = |f: &Value| {
        (
            f["src"].as_str().unwrap().to_string(),
            f["dst"].as_str().unwrap().to_string(),
            f["dest_qp"].as_u64().unwrap(),
        )
    };
    let ours: BTreeMap<_, &Value> = report["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (key(f), f))
        .collect();
    let want: BTreeMap<_, &Value> = truth["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (key(f), f))
        .collect();
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{name}: flows"
    );
    for (k, w) in &want {
        let o = ours[k];
        // The counters, and the per-flow measures the truth keeps too.
        let measures = [
            "reordered_resent",
            "timeouts_in_a_row",
            "rnr_naks_in_a_row",
            "transport",
        ];
        for c in COUNTERS.iter().chain(&measures) {
            assert_eq!(o[c], w[c], "{name}: flow {k:?} {c}");
        }
        // Goodput: the first copies' payload (requests' and READ responses'; a CNP's 16
        // reserved bytes are none) over the flow's active time.
        let n = |v: &Value| v.as_u64().unwrap();
        let span = n(&o["last_ts_ns"]) - n(&o["first_ts_ns"]);
        if n(&o["icrc"]["bad"]) == 0 && span > 0 {
            assert_eq!(
                u128::from(n(&o["goodput_bps"])),
                u128::from(n(&w["first_copy_payload_bytes"])) * 8_000_000_000 / u128::from(span),
                "{name}: flow {k:?} goodput"
            );
        }
    }
    assert_eq!(
        report["totals"]["vcrc"]["ok"], truth["vcrc"]["ok"],
        "{name}: VCRC ok"
    );
    assert_eq!(
        report["totals"]["vcrc"]["bad"], truth["vcrc"]["bad"],
        "{name}: VCRC bad"
    );
    assert_eq!(
        report["totals"]["vcrc"]["truncated"], truth["vcrc"]["truncated"],
        "{name}: VCRC truncated"
    );
    // LLDP senders and the DCB settings they advertised.
    let senders = report["dcbx"]["senders"].as_array().unwrap();
    let want = truth["dcbx"].as_array().unwrap();
    assert_eq!(senders.len(), want.len(), "{name}: LLDP senders");
    for (s, w) in senders.iter().zip(want) {
        assert_eq!(s["src_mac"], w["src_mac"], "{name}: LLDP sender");
        assert_eq!(s["name"], w["name"], "{name}: LLDP name");
        assert_eq!(s["frames"], w["frames"], "{name}: LLDP frames");
        assert_eq!(s["pfc"]["enabled"], w["pfc_enabled"], "{name}: PFC enabled");
        assert_eq!(s["pfc"]["willing"], w["willing"], "{name}: PFC willing");
        assert_eq!(
            s["roce_priorities"], w["roce_priorities"],
            "{name}: RoCE priority"
        );
    }
    let want_codes: BTreeSet<String> = truth["expected_findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(codes(report), want_codes, "{name}: finding codes");
    assert_eq!(
        report["pfc"]["pause_episodes"], truth["pfc"]["pause_episodes"],
        "{name}: PFC episodes"
    );
    assert_eq!(
        report["pfc"]["pause_ns_total"], truth["pfc"]["pause_ns_total"],
        "{name}: PFC pause time"
    );
    assert_eq!(
        report["pfc"]["frames"], truth["pfc"]["frames"],
        "{name}: PFC frames"
    );
    assert_eq!(
        report["pfc"]["xoff_frames"], truth["pfc"]["xoff_frames"],
        "{name}: PFC XOFF frames"
    );
    // Connections learnt from CM carry both QPNs and starting PSNs (a 128-byte snaplen cuts
    // the 256-byte MADs before the starting PSN, so only whole frames are checked).
    let cut = truth["snaplen"].as_u64().unwrap() < 300;
    for tc in truth["connections"].as_array().unwrap() {
        if cut {
            break;
        }
        if tc["learned"] != "cm" || !tc["rejected"].is_null() || tc["in_capture"] != true {
            continue;
        }
        let found = report["connections"].as_array().unwrap().iter().any(|c| {
            c["a"]["node"] == tc["a"]["node"]
                && c["a"]["qpn"] == tc["a"]["qpn"]
                && c["b"]["qpn"] == tc["b"]["qpn"]
                && c["a"]["start_psn"] == tc["a"]["start_psn"]
                && c["b"]["start_psn"] == tc["b"]["start_psn"]
        });
        assert!(found, "{name}: CM connection {tc} not reported");
    }
}

#[test]
fn every_scenario_matches_its_ground_truth() {
    let d = tmp();
    for scenario in SCENARIOS {
        let variants: &[(&str, &[&str])] = if scenario == "ib" {
            &[
                ("", &[]),
                ("-s128", &["--snaplen", "128"]),
                ("-corrupt", &["--corrupt-rate", "0.01"]),
            ]
        } else {
            &[
                ("", &[]),
                ("-v6", &["--ipv6"]),
                ("-vlan", &["--vlan", "7", "--pcp", "3"]),
                ("-s128", &["--snaplen", "128"]),
            ]
        };
        for (suffix, extra) in variants {
            let name = format!("{scenario}{suffix}");
            let ext = if scenario == "mixed" {
                "pcapng"
            } else {
                "pcap"
            };
            let truth = d.join(format!("{name}.json"));
            let truth_arg = truth.to_str().unwrap();
            let opts = [&["--seed", "5", "--truth", truth_arg], *extra].concat();
            let cap = generated_with(&d, &format!("{name}.{ext}"), scenario, 30000, &opts);
            let t: Value = serde_json::from_str(&std::fs::read_to_string(&truth).unwrap()).unwrap();
            let r = analyze(&cap, &[]);
            compare(&name, &t, &r);
        }
    }
}

/// Packets damaged before the capture point (`--corrupt-rate`), which their receivers drop, and
/// the recovery after them, against the truth. Each case is one a sweep over random seeds found
/// read wrongly: a READ request asked again from a damaged response with no request sent since
/// the READ counted as a new READ (`mixed`); a go-back-N pass that began with a packet lost
/// before the capture point left its NAK counted as still to come, so a later pass after an ACK
/// timeout was not counted in `timeouts_in_a_row` (`lossy`); an RNR NAK that came during a
/// burst stayed pending and made the next pass after an ACK timeout an RNR retry (`errors`); a
/// late new packet between two resends of a NAK's pass ended the pass, so its next resend read
/// as a timeout's, and a late packet before a NAK for a PSN below it read as lost (`reorder`);
/// READs asked again at the requester's pace on a slow link, and passes 1 ms after a NAK the
/// requester had not acted on, read as timeouts' and as the NAK's (`misconfig`); a NAK beyond a
/// READ read again sends the requester back to that READ, and its pass's jump forward to the
/// NAK's PSN read as a retry after an ACK timeout (`misconfig` at 25 Gb/s); a responder that
/// takes packets out of order never NAKs a damaged packet's hole, so with the hole before its
/// first acknowledgement it answers nothing at all, which `analyze` reports as
/// `transport.no_response` and the truth did not expect (`reorder`).
#[test]
fn damaged_packets_and_their_recovery_match_the_truth() {
    let cases: &[(&str, &str, u32, &[&str])] = &[
        (
            "dmg-mixed",
            "mixed",
            20000,
            &[
                "--seed",
                "101995",
                "--vlan",
                "2533",
                "--pcp",
                "4",
                "--corrupt-rate",
                "0.01",
            ],
        ),
        (
            "dmg-lossy",
            "lossy",
            30000,
            &["--seed", "533223", "--ipv6", "--corrupt-rate", "0.01"],
        ),
        (
            "dmg-errors",
            "errors",
            30000,
            &["--seed", "5", "--corrupt-rate", "0.02"],
        ),
        // Late packets among the damaged ones: inside NAKs' passes, before NAKs.
        (
            "dmg-reorder",
            "reorder",
            30000,
            &["--seed", "446265", "--corrupt-rate", "0.01"],
        ),
        // Re-reads sooner than 8.192 µs after the first ask (400 Gb/s), and duplicate ACKs
        // and READ responses sent again behind long READs (10 Gb/s).
        (
            "dmg-mixed-400g",
            "mixed",
            30000,
            &[
                "--seed",
                "38834",
                "--link",
                "400G",
                "--corrupt-rate",
                "0.01",
            ],
        ),
        (
            "dmg-mixed-10g",
            "mixed",
            30000,
            &["--seed", "5156", "--link", "10G", "--corrupt-rate", "0.01"],
        ),
        // READs re-read at a requester's pace on a 10 Gb/s link, NAKs left unanswered.
        (
            "dmg-misconfig",
            "misconfig",
            30000,
            &[
                "--seed",
                "501550",
                "--link",
                "10G",
                "--corrupt-rate",
                "0.02",
            ],
        ),
        (
            "dmg-misconfig-25g",
            "misconfig",
            3898,
            &[
                "--seed",
                "383969584",
                "--link",
                "25G",
                "--corrupt-rate",
                "0.0608",
            ],
        ),
        // The `reorder` connection whose responder takes packets out of order: it waits for the
        // damaged packet's hole to fill and never NAKs it, so the requester resends after ACK
        // timeouts and the capture holds no answer at all on that connection.
        (
            "dmg-reorder-ooo",
            "reorder",
            3082,
            &[
                "--seed",
                "194832919",
                "--link",
                "25G",
                "--ipv6",
                "--corrupt-rate",
                "0.0143",
            ],
        ),
        // A requester at 10 Gb/s whose new packets keep coming for 260 µs after a NAK, and
        // whose pass then waits 850 µs more behind another QP's READ responses: 1.107 ms after
        // the NAK, it is still the NAK's pass.
        (
            "dmg-lossy-10g-queue",
            "lossy",
            34747,
            &[
                "--seed",
                "981446652",
                "--link",
                "10G",
                "--corrupt-rate",
                "0.0922",
            ],
        ),
        // A NAK that reaches the requester 0.84 ms after the capture point, once its ACK timer
        // ran out and it resent from below the NAK's PSN: its go-back within that burst is the
        // NAK's pass, no second retry in a row.
        (
            "dmg-lossy-10g-late-nak",
            "lossy",
            18126,
            &[
                "--seed",
                "1027635048",
                "--link",
                "10G",
                "--vlan",
                "7",
                "--pcp",
                "5",
                "--corrupt-rate",
                "0.0529",
            ],
        ),
        // A NAK whose pass begins at once; the requester sends new packets for 77 µs more,
        // goes quiet, and resends 1.05 ms after the NAK on its ACK timer. A pass began after
        // the NAK, so its window runs from the NAK, not from those new packets.
        (
            "dmg-clean-25g-timeout",
            "clean",
            6005,
            &[
                "--seed",
                "186891440",
                "--link",
                "25G",
                "--corrupt-rate",
                "0.0926",
            ],
        ),
    ];
    for &(name, scenario, n, extra) in cases {
        let r = matches_truth(name, scenario, n, extra);
        assert!(codes(&r).contains("icrc.bad"), "{name}");
        if name == "dmg-reorder-ooo" {
            assert!(codes(&r).contains("transport.no_response"), "{name}");
        }
    }
}

/// Snaplens shorter than the headers, and a capture that ends early, against the truth. With
/// 64 bytes, RoCEv2 over IPv4 keeps its BTH but not every extension header (payload lengths
/// still come from the IP length; a REJ's reason is gone, so no `cm.reject`); RoCEv2 over
/// IPv6 and IB with a GRH lose the BTH (`capture.truncated` as a warning, not
/// `capture.no_rdma`); behind a VLAN tag even the UDP port is cut, and `capture.no_rdma` says
/// the snaplen may hide RoCE. A connection whose MTUs differ but that sends no multi-packet message
/// in the capture shows no `mtu.mismatch`. (Cases a sweep over random seeds and options found.)
/// A snaplen that ends inside the AETH (80 bytes for RoCEv2 over IPv6 with a tag, 76 without,
/// 77 for IB with a GRH) leaves whether each answer acknowledged or refused unknown: the
/// connections are still paired (no `transport.no_response`), reordering is still told from
/// loss, and neither NAKs, RNR NAKs nor timeouts are counted (`capture.truncated` as a warning).
#[test]
fn headers_cut_by_the_snaplen_and_early_ends_match_the_truth() {
    let d = tmp();
    let cases: &[(&str, u32, &[&str])] = &[
        ("mixed", 10000, &["--snaplen", "64"]),
        ("clean", 5000, &["--snaplen", "64", "--ipv6"]),
        ("ib", 5000, &["--snaplen", "64"]),
        (
            "lossy",
            10000,
            &["--snaplen", "96", "--ipv6", "--vlan", "5"],
        ),
        ("misconfig", 500, &["--ipv6", "--seed", "833705"]),
        (
            "incast",
            3000,
            &["--snaplen", "64", "--ipv6", "--vlan", "9"],
        ),
        (
            "reorder",
            10000,
            &["--snaplen", "80", "--ipv6", "--vlan", "5"],
        ),
        ("rnr", 5000, &["--snaplen", "76", "--ipv6"]),
        ("ib", 5000, &["--snaplen", "77"]),
    ];
    for (i, (scenario, n, extra)) in cases.iter().enumerate() {
        let name = format!("cut-{i}-{scenario}");
        let truth = d.join(format!("{name}.json"));
        let opts = [&["--truth", truth.to_str().unwrap()], *extra].concat();
        let cap = generated_with(&d, &format!("{name}.pcap"), scenario, *n, &opts);
        let t: Value = serde_json::from_str(&std::fs::read_to_string(&truth).unwrap()).unwrap();
        let r = analyze(&cap, &[]);
        compare(&name, &t, &r);
        assert_eq!(
            r["capture"]["cut_before_bth"], t["cut_before_bth"],
            "{name}"
        );
        match i {
            1 => {
                assert_eq!(r["capture"]["cut_before_bth"], u64::from(*n), "{name}");
                let cut = with_code(&r, "capture.truncated");
                assert_eq!(cut[0]["severity"], "warning", "{name}");
            }
            2 => assert!(t["cut_before_bth"].as_u64().unwrap() > 0, "{name}"),
            4 => assert!(
                t["connections"].as_array().unwrap().iter().any(|c| c["path_mtu"]
                    != c["b_path_mtu"]
                    && c["observed_mtu_b_to_a"].is_null()),
                "{name}: a connection with an MTU mismatch its data does not show"
            ),
            5 => {
                let none = with_code(&r, "capture.no_rdma");
                let advice = none[0]["advice"].as_str().unwrap();
                assert!(advice.contains("at least 128 bytes"), "{name}: {advice}");
            }
            6..=8 => {
                assert!(t["cut_before_aeth"].as_u64().unwrap() > 0, "{name}");
                assert_eq!(
                    r["capture"]["cut_before_aeth"], t["cut_before_aeth"],
                    "{name}"
                );
                let cut = with_code(&r, "capture.truncated");
                assert_eq!(cut[0]["severity"], "warning", "{name}");
            }
            _ => {}
        }
    }
}

/// At 400 Gb/s a go-back-N pass resends several requests with AckReq that the responder
/// already has before the first of its alike answers comes back: each is answered, so the
/// answers are duplicate ACKs, not the capture's copies (a sweep over random seeds found it).
#[test]
fn alike_answers_to_a_burst_of_resends_are_not_copies() {
    let opts = ["--seed", "17330", "--link", "400G"];
    let r = matches_truth("reorder-400g", "reorder", 40000, &opts);
    assert!(r["totals"]["duplicate_acks"].as_u64().unwrap() > 30);
    assert!(with_code(&r, "capture.duplicates").is_empty());
}

/// At 10 Gb/s an incast's sender slowed by CNPs times out before the last packet of a long
/// WRITE, the one that asks for an ACK, again and again until it gives up: its connection is
/// never answered, but the receiver's CNPs to it are in the capture, so a NAK would be too and
/// the retries are timeouts (a sweep over random options found it).
#[test]
fn retries_never_answered_while_the_responder_is_heard_are_timeouts() {
    let opts = ["--seed", "520139", "--link", "10G"];
    let r = matches_truth("incast-10g", "incast", 18211, &opts);
    assert!(r["totals"]["timeouts"].as_u64().unwrap() > 0);
    assert!(!with_code(&r, "transport.retry_exceeded").is_empty());
}

/// A requester retries seven times in a row after ACK timeouts, and the seventh pass goes on to
/// new requests: its QP did not run out of retries (it fails only at a timeout after its last
/// one), so neither the truth nor `analyze` has `transport.retry_exceeded` (a sweep over random
/// options found the truth expecting it from the seven alone).
#[test]
fn seven_retries_that_go_on_to_new_requests_exceed_nothing() {
    let r = sweep_case(
        "lossy-seven-retries",
        "lossy",
        34324,
        "--seed 81866953 --link 100G --corrupt-rate 0.1409",
    );
    let most = r["flows"].as_array().unwrap().iter();
    assert_eq!(
        most.filter_map(|f| f["timeouts_in_a_row"].as_u64()).max(),
        Some(7)
    );
    assert!(with_code(&r, "transport.retry_exceeded").is_empty());
}

/// At 400 Gb/s with 14% of the packets damaged, a READ asked again 5.1 µs after its last send,
/// for a response that came damaged 1.4 µs before, is a re-read, not the capture's copy of that
/// send: the responses damaged and passed over since had filled the eight losses a flow
/// remembered (a sweep over random options found it).
#[test]
fn a_re_read_behind_many_damaged_responses_is_no_copy() {
    let r = sweep_case(
        "lossy-400g-damaged",
        "lossy",
        24561,
        "--seed 1056466992 --link 400G --vlan 7 --pcp 1 --corrupt-rate 0.1431",
    );
    assert!(with_code(&r, "capture.duplicates").is_empty());
}

/// A READ asked twice is answered twice; a response of the first answer came damaged, and the
/// second answer brought it before the requester's go-back reached the READ, so the pass
/// begins past it, 1.7 µs after the gap showed. That is the READ response gap's pass, no
/// timer's retry: the truth has no timeout in a row on that flow, and neither has the report
/// (a sweep found it counted one).
#[test]
fn a_go_back_past_a_read_answered_again_is_no_timer_retry() {
    let r = sweep_case(
        "misconfig-read-gap",
        "misconfig",
        37578,
        "--seed 48849334 --link 200G --corrupt-rate 0.0163",
    );
    let flow = flow_of(&r, "10.0.0.38", "10.0.0.39", 2888);
    assert_eq!(flow["retransmitted_packets"], 1000);
    assert_eq!(flow["timeouts_in_a_row"], 0);
}

/// A READ response gap's pass goes on past a PSN the responder acknowledged meanwhile and lands
/// on the PSN a NAK named 986 ns before: too soon for that NAK to have reached the requester, so
/// the pass did not jump there for it, and the NAK's own pass, 4.5 µs later, is no timer's
/// retry (a sweep found it counted one: the NAK was taken as served by the jump).
#[test]
fn a_pass_onto_a_nak_s_psn_before_the_nak_could_turn_is_no_nak_pass() {
    let r = sweep_case(
        "mixed-nak-turn",
        "mixed",
        34807,
        "--seed 565941807 --link 25G --corrupt-rate 0.0427",
    );
    let flow = flow_of(&r, "10.0.0.1", "10.0.0.2", 264);
    assert_eq!(flow["retransmitted_packets"], 85);
    assert_eq!(flow["timeouts_in_a_row"], 0);
}

/// At 400 Gb/s with 7.7% of the packets damaged, go-back-N passes resend nearly every request
/// of the capture's first packets about 4.3 µs after its first copy, as a capture that holds
/// every packet twice at a lag would; but few answers come again alike, so these are resends,
/// not the capture's copies (a sweep found half the retransmissions read as copies).
#[test]
fn resends_of_nearly_every_request_are_no_copies_at_a_lag() {
    let r = sweep_case(
        "ib-400g-damaged",
        "ib",
        23136,
        "--seed 264314439 --link 400G --corrupt-rate 0.0770",
    );
    assert!(with_code(&r, "capture.duplicates").is_empty());
}

/// A NAK for an older PSN, then an ACK of every PSN up to the newest request: the requester's
/// pass for that NAK begins at the first PSN not acknowledged, the newest request's, 2.4 µs
/// after its first copy. That is a resend, not the capture's copy (a sweep found it read as
/// one, as a packet beyond the PSN the NAK named).
#[test]
fn a_nak_s_pass_from_the_first_psn_not_acknowledged_is_no_copy() {
    let r = sweep_case(
        "clean-nak-acked",
        "clean",
        33432,
        "--seed 814549223 --link 10G --vlan 7 --pcp 5 --corrupt-rate 0.0528",
    );
    assert!(with_code(&r, "capture.duplicates").is_empty());
}

/// In a capture of microseconds, a rate-limited requester's READ and the request after it read
/// as sent at once, so the pace they set was 0 and its re-read after a damaged response, at
/// that pace, read as an ACK timeout. A gap between two timestamps may be up to a unit longer
/// or shorter than it reads (a sweep of `gen` captures written in microseconds found it).
#[test]
fn a_paced_re_read_in_microseconds_is_no_timeout() {
    let opts = [
        "--seed",
        "153256991",
        "--vlan",
        "7",
        "--pcp",
        "5",
        "--corrupt-rate",
        "0.0553",
    ];
    let r = matches_truth_in_microseconds("misconfig-us", "misconfig", 4338, "10G", &opts);
    assert_eq!(r["totals"]["timeouts"], 5);
}

/// In a capture of microseconds, a resend 735 ns after a NAK shares its microsecond: it left
/// the requester before the NAK could reach it (a NAK turns round in a microsecond at least),
/// however far apart the two are spread within it, and the NAK's own pass comes later, no
/// timer's retry (a sweep in microseconds found it read as one).
#[test]
fn a_resend_in_its_nak_s_microsecond_serves_no_nak() {
    let opts = ["--seed", "550900271", "--corrupt-rate", "0.0609"];
    let r = matches_truth_in_microseconds("ib-us", "ib", 35484, "10G", &opts);
    assert_eq!(
        flow_of(&r, "lid:49", "lid:50", 4744)["timeouts_in_a_row"],
        0
    );
}

/// In a capture of microseconds, three alike ACKs that answer three resent requests come in
/// one microsecond, and the resends within the microsecond of the READ resent before them
/// are after it all the same: none of the ACKs is the capture's copy.
#[test]
fn alike_acks_of_resends_in_one_microsecond_are_no_copies() {
    let opts = ["--seed", "561491725", "--corrupt-rate", "0.0387"];
    let r = matches_truth_in_microseconds("clean-us", "clean", 7896, "25G", &opts);
    assert!(with_code(&r, "capture.duplicates").is_empty());
}

/// A PFC episode 3 ns shorter than twice a full pause at 400 Gb/s reads 113 ns longer than
/// that in microseconds: a storm only beyond the bound by a microsecond more.
#[test]
fn a_pause_within_a_microsecond_of_the_storm_bound_is_no_storm() {
    let opts = [
        "--seed",
        "567399932",
        "--vlan",
        "7",
        "--pcp",
        "3",
        "--corrupt-rate",
        "0.0259",
    ];
    let r = matches_truth_in_microseconds("mixed-us-400g", "mixed", 10860, "400G", &opts);
    assert!(with_code(&r, "pfc.storm").is_empty());
}

/// A REJ captured just before `gen` stops (its 1,000th frame) is read by `analyze`, so the truth
/// has it too although the capture ends before it reaches the requester (a sweep over random
/// options found it).
#[test]
fn a_rej_at_the_capture_s_end_is_a_reject() {
    let r = sweep_case(
        "mixed-rej-at-end",
        "mixed",
        1000,
        "--seed 491642 --link 25G --snaplen 256 --vlan 1156",
    );
    assert_eq!(with_code(&r, "cm.reject").len(), 1);
}

#[test]
fn clean_scenario_has_no_warning() {
    let d = tmp();
    let cap = generated(&d, "clean-long.pcapng", "clean", 60000);
    let r = analyze(&cap, &[]);
    let serious: Vec<&Value> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "info")
        .collect();
    assert!(serious.is_empty(), "{serious:?}");
    // CM connections are learnt with their applications.
    let apps: BTreeSet<&str> = r["connections"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["application"].as_str())
        .collect();
    assert!(
        apps.contains("NVMe-oF") && apps.contains("NFS/RDMA"),
        "{apps:?}"
    );
    // ACK latency is measured.
    assert!(r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["ack_latency_ns"]["count"].as_u64().unwrap() > 0));
    assert!(r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["read_latency_ns"]["count"].as_u64().unwrap() > 0));
}

#[test]
fn text_report_names_findings_and_connections() {
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../samples/rocev2-misconfig-s128.pcap"
    );
    let o = bin().args(["analyze", sample]).output().unwrap();
    assert!(o.status.success());
    let s = String::from_utf8(o.stdout).unwrap();
    for code in [
        "pfc.priority_mismatch",
        "cm.reject",
        "mtu.mismatch",
        "ecmp.single_udp_sport",
        "Connections",
        "what to do",
    ] {
        assert!(s.contains(code), "missing {code} in\n{s}");
    }
    // Most severe first.
    let crit = s.find("CRITICAL").unwrap();
    let warn = s.find("WARNING").unwrap();
    assert!(crit < warn);
}

/// The summary of a capture whose ACKs and NAKs are cut before the end of their AETH says
/// why its NAK, RNR NAK and timeout counts are 0.
#[test]
fn text_report_says_when_naks_cannot_be_told() {
    let d = tmp();
    let cap = generated_with(
        &d,
        "rnr-76.pcap",
        "rnr",
        3000,
        &["--snaplen", "76", "--ipv6"],
    );
    let o = bin().args(["analyze"]).arg(&cap).output().unwrap();
    assert!(o.status.success());
    let s = String::from_utf8(o.stdout).unwrap();
    assert!(
        s.contains(
            "ACKs or NAKs cut inside their AETH: NAKs, RNR NAKs, duplicate ACKs and timeouts"
        ),
        "{s}"
    );
    // Not `rnr.pcap`: `every_scenario_matches_its_ground_truth` writes that file in the same
    // directory (the test process's), and the two tests run at once.
    let whole = generated(&d, "rnr-whole.pcap", "rnr", 3000);
    let o = bin().args(["analyze"]).arg(&whole).output().unwrap();
    assert!(!String::from_utf8(o.stdout).unwrap().contains("AETH"));
}

/// The text report of the shipped lossy, misconfigured and PFC-storm samples, word for word
/// (summaries agree with their counts: "1 connection request was rejected").
#[test]
fn text_reports_of_the_samples() {
    let mut all = String::new();
    for name in [
        "rocev2-lossy-s128.pcap",
        "rocev2-misconfig-s128.pcap",
        "rocev2-pfc-storm-s128.pcap",
    ] {
        let sample = format!("{}/../../samples/{name}", env!("CARGO_MANIFEST_DIR"));
        let o = bin()
            .args(["analyze", "--top", "5", &sample])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let s = String::from_utf8(o.stdout).unwrap();
        // The first line names the file by the path given.
        let body = s.split_once('\n').map_or("", |(_, rest)| rest);
        all.push_str(&format!("### {name}\n{body}"));
    }
    insta::assert_snapshot!("analyze_samples_text", all);
}

/// Several files are read as one stream (frame numbers go on from file to file), and a file
/// cut inside a record counts up to that record: a finding and a warning say where it stopped,
/// and the next file is read all the same.
#[test]
fn several_files_are_one_stream_and_a_cut_file_counts_up_to_where_it_stops() {
    let d = tmp();
    let cap = generated(&d, "lossy-twice.pcap", "lossy", 20000);
    let one = analyze(&cap, &[]);
    let n = one["capture"]["packets"].as_u64().unwrap();
    assert_eq!(n, 20000);
    // Two files analysed as one: the report and what went to standard error.
    let files = |x: &std::path::Path, y: &std::path::Path| -> (Value, String) {
        let o = bin()
            .args(["analyze", "--json"])
            .arg(x)
            .arg(y)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{err}");
        (serde_json::from_slice(&o.stdout).unwrap(), err)
    };
    let (two, _) = files(&cap, &cap);
    assert_eq!(two["capture"]["packets"].as_u64(), Some(2 * n));
    assert_eq!(two["capture"]["files"].as_array().unwrap().len(), 2);
    assert_eq!(
        two["capture"]["bytes"].as_u64().unwrap(),
        2 * one["capture"]["bytes"].as_u64().unwrap()
    );
    let last_frame = two["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["frames"].as_array().unwrap())
        .filter_map(Value::as_u64)
        .max()
        .unwrap();
    assert!(last_frame > n && last_frame <= 2 * n, "{last_frame}");
    // The file given twice overlaps itself.
    let overlap = |r: &Value| {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "capture.files_overlap")
            .map(|f| f["summary"].as_str().unwrap().to_string())
    };
    assert!(
        overlap(&two).is_some_and(|s| s.starts_with("file 2 (") && s.contains("before file 1 ("))
    );
    // ... and is taken for a capture at a second point: its flows are read once, each packet
    // counted twice.
    for k in TRANSPORT_TOTALS {
        assert_eq!(two["totals"][k], one["totals"][k], "{k}");
    }
    assert!(two["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == "capture.multiple_points"));

    // Cut in two at a record boundary: in time order the parts are the one capture again;
    // the other way round, the finding says the second lies before the first.
    let bytes = std::fs::read(&cap).unwrap();
    let mut at = 24;
    for _ in 0..n / 2 {
        let len = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + len;
    }
    let (a, b) = (d.join("lossy-a.pcap"), d.join("lossy-b.pcap"));
    std::fs::write(&a, &bytes[..at]).unwrap();
    std::fs::write(&b, [&bytes[..24], &bytes[at..]].concat()).unwrap();
    let (ordered, _) = files(&a, &b);
    assert_eq!(overlap(&ordered), None);
    assert_eq!(ordered["totals"], one["totals"]);
    assert_eq!(ordered["flows"], one["flows"]);
    let (reversed, _) = files(&b, &a);
    assert!(overlap(&reversed).is_some_and(|s| s.contains("lies before file 1")));

    let bytes = std::fs::read(&cap).unwrap();
    let cut = d.join("lossy-cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() - 10]).unwrap();
    let (r, err) = files(&cut, &cap);
    assert!(
        err.contains(&format!("record {n} "))
            && err.contains(&format!("the {} packets before it are analysed", n - 1)),
        "{err}"
    );
    assert_eq!(r["capture"]["packets"].as_u64(), Some(2 * n - 1));
    let f = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "capture.cut_short")
        .expect("a capture.cut_short finding");
    assert_eq!(f["severity"], "warning");
    let summary = f["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("file 1 (") && summary.contains(&format!("after {} packets", n - 1)),
        "{summary}"
    );
    assert!(
        f["evidence"][0]
            .as_str()
            .unwrap()
            .contains(&format!("file ends inside record {n} ")),
        "{f}"
    );
}

#[test]
fn no_rdma_capture_says_how_to_capture() {
    let Some(dir) = common::corpus() else { return };
    let r = analyze(&dir.join("lldp_dcbx_pfc-config.pcap"), &[]);
    let f = &r["findings"][0];
    assert_eq!(f["code"], "capture.no_rdma");
    assert!(f["advice"]
        .as_str()
        .unwrap()
        .contains("bypasses the kernel"));
}

/// Captures whose own drops show as missing PSNs the responder acknowledged (`capture.drops`)
/// show them still when cut inside the AETH, as `tcpdump -s` would (RoCEv2 over IPv4 at 54–57
/// bytes, RoCEv1 at 66–69): an answer of either kind tells the PSNs before its own arrived, so
/// they are not called network loss.
#[test]
fn drops_of_a_capture_cut_inside_the_aeth_are_still_the_capture_s() {
    let Some(dir) = common::corpus() else { return };
    let d = tmp();
    for (name, snaplens) in [
        ("rocev2_rc-send-stream_a.pcap", 54..=57),
        ("rocev1_ethertype8915_rc-send_nfs-rdma.pcap", 66..=69),
    ] {
        let full = analyze(&dir.join(name), &[]);
        assert!(!with_code(&full, "capture.drops").is_empty(), "{name}");
        let recs = common::read_all(&dir.join(name));
        for snaplen in snaplens {
            let cut = d.join(format!("cut-{snaplen}-{name}"));
            let out = std::fs::File::create(&cut).unwrap();
            let mut w = rdmascope_capture::PcapWriter::new(out, recs[0].linktype, snaplen).unwrap();
            for r in &recs {
                let n = r.data.len().min(snaplen as usize);
                w.write(r.ts_ns, r.orig_len, &r.data[..n]).unwrap();
            }
            w.flush().unwrap();
            drop(w);
            let r = analyze(&cut, &[]);
            assert!(
                r["capture"]["cut_before_aeth"].as_u64() > Some(0),
                "{name} at {snaplen}"
            );
            assert_eq!(
                r["totals"]["missing_packets"], full["totals"]["missing_packets"],
                "{name} at {snaplen}"
            );
            assert!(
                !with_code(&r, "capture.drops").is_empty(),
                "{name} at {snaplen}"
            );
            assert!(
                with_code(&r, "transport.loss").is_empty(),
                "{name} at {snaplen}"
            );
        }
    }
}

/// The public captures: clean ones give no warning or critical finding; CM connections match
/// what tshark decodes; packets per opcode equal tshark's counts.
#[test]
fn real_captures() {
    let Some(dir) = common::corpus() else { return };
    let tshark = common::tshark();
    for path in common::corpus_files(&dir) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let r = analyze(&path, &[]);
        let clean = ["softroce", "ibdump", "nvme-rdma", "perftest"]
            .iter()
            .any(|k| name.contains(k));
        if clean {
            let serious: Vec<String> = r["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["severity"] != "info")
                .map(|f| format!("{}: {}", f["code"], f["summary"]))
                .collect();
            assert!(serious.is_empty(), "{name}: {serious:?}");
        }
        // LLDP with DCB TLVs (tcpdump's test captures, decoded the same by tshark in
        // tshark_diff.rs): both ends of the PFC capture agree on priorities 2, 4 and 5, and the
        // leaf's one frame enables PFC on 4 and maps iSCSI (3260) there. No DCB finding.
        let senders = r["dcbx"]["senders"].as_array().unwrap();
        let dcb_codes = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"].as_str().unwrap().starts_with("dcbx."))
            .count();
        assert_eq!(dcb_codes, 0, "{name}");
        match name.as_str() {
            "lldp_dcbx_pfc-config.pcap" => {
                assert_eq!(senders.len(), 2, "{name}");
                for s in senders {
                    assert_eq!(s["pfc"]["enabled"], serde_json::json!([2, 4, 5]), "{name}");
                    assert_eq!(s["pfc"]["willing"], false, "{name}");
                }
            }
            "lldp_dcbx_pfc_app-priority.pcap" => {
                assert_eq!(senders.len(), 1, "{name}");
                assert_eq!(senders[0]["name"], "leaf0b");
                assert_eq!(senders[0]["port"], "leaf0b-eth10");
                assert_eq!(senders[0]["pfc"]["enabled"], serde_json::json!([4]));
                assert_eq!(
                    senders[0]["app"],
                    serde_json::json!([{"priority": 4, "selector": 4, "protocol": 3260}])
                );
                assert_eq!(senders[0]["roce_priorities"], serde_json::json!([]));
            }
            "lldp_dcbx_qcn-congestion-notification.pcap" => {
                let cnpv: Vec<&Value> = senders.iter().map(|s| &s["cnpv"]).collect();
                assert!(cnpv.contains(&&serde_json::json!([5])), "{name}: {cnpv:?}");
            }
            n if n.starts_with("lldp") => assert_eq!(senders.len(), 2, "{name}"),
            _ => assert!(senders.is_empty(), "{name}"),
        }
        // The custom responder acknowledges the last SEND with PSN 0xffffff (frame 148), so
        // that SEND (frame 147) is never acknowledged while the capture runs on for 146 s.
        // Only that capture stalls.
        let stall = with_code(&r, "transport.stall");
        if name.contains("stall") {
            assert_eq!(stall.len(), 1, "{name}");
            assert_eq!(stall[0]["frames"], serde_json::json!([147]), "{name}");
            assert_eq!(
                stall[0]["flows"],
                serde_json::json!(["192.168.178.25 > 192.168.178.23 qp 0x000019"]),
                "{name}"
            );
            let evidence = stall[0]["evidence"].to_string();
            assert!(
                evidence.contains("oldest unanswered PSN 7488513, last ACK PSN 16777215"),
                "{evidence}"
            );
        } else {
            assert!(stall.is_empty(), "{name}: {stall:?}");
        }
        // Two captures miss thousands of PSNs that their responders acknowledged, with no NAK
        // and no retransmission: the capture dropped them, and no loss is claimed.
        let codes_here = codes(&r);
        let drops = ["rocev1_ethertype8915", "rocev2_rc-send-stream_a"]
            .iter()
            .any(|k| name.starts_with(k));
        assert_eq!(
            codes_here.contains("capture.drops"),
            drops,
            "{name}: {codes_here:?}"
        );
        if drops {
            assert!(
                !codes_here.contains("transport.loss"),
                "{name}: {codes_here:?}"
            );
        }
        // Only the RoCEv1 capture is RoCEv1: an info finding, both ends on v1.
        let v1 = with_code(&r, "roce.v1");
        if name.starts_with("rocev1") {
            assert_eq!(v1.len(), 1, "{name}");
            assert_eq!(v1[0]["severity"], "info", "{name}");
            assert_eq!(
                v1[0]["evidence"],
                serde_json::json!(["2468 packets of RoCEv1 (EtherType 0x8915, GRH) in 32 flows"]),
                "{name}"
            );
        } else {
            assert!(v1.is_empty(), "{name}: {v1:?}");
        }
        if name.contains("perftest") {
            assert!(
                r["connections"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|c| c["application"] == "perftest"),
                "{name}: perftest not labelled"
            );
        }
        let Some(tshark) = tshark else { continue };
        let out = Command::new(tshark)
            .arg("-n")
            .arg("-r")
            .arg(&path)
            .args([
                "--disable-protocol",
                "tftp",
                "-T",
                "fields",
                "-e",
                "infiniband.bth.opcode",
                "-e",
                "infiniband.cm.req.localqpn",
                "-e",
                "infiniband.cm.rep.localqpn",
                "-e",
                "infiniband.cm.req.startpsn",
            ])
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let mut ops: BTreeMap<u64, u64> = BTreeMap::new();
        let mut req_qpns = BTreeSet::new();
        let mut rep_qpns = BTreeSet::new();
        for l in text.lines() {
            let c: Vec<&str> = l.split('\t').collect();
            if let Ok(op) = c[0].split(',').next().unwrap_or("").parse::<u64>() {
                *ops.entry(op).or_default() += 1;
            }
            let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
            if let Some(q) = c.get(1).and_then(|s| hex(s)) {
                req_qpns.insert(q);
            }
            if let Some(q) = c.get(2).and_then(|s| hex(s)) {
                rep_qpns.insert(q);
            }
        }
        let ours: BTreeMap<u64, u64> = r["totals"]["opcodes"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                (
                    rdmascope_wire::OpInfo::by_name(k).map_or_else(
                        || u64::from_str_radix(k.trim_start_matches("0x"), 16).unwrap(),
                        |i| u64::from(i.opcode),
                    ),
                    v.as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(ours, ops, "{name}: packets per opcode vs tshark");
        let cm: Vec<&Value> = r["connections"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["learned"] == "cm")
            .collect();
        let our_req: BTreeSet<u64> = cm.iter().map(|c| c["a"]["qpn"].as_u64().unwrap()).collect();
        let our_rep: BTreeSet<u64> = cm
            .iter()
            .filter(|c| !c["b"]["start_psn"].is_null())
            .map(|c| c["b"]["qpn"].as_u64().unwrap())
            .collect();
        assert_eq!(our_req, req_qpns, "{name}: CM REQ QPNs vs tshark");
        assert_eq!(our_rep, rep_qpns, "{name}: CM REP QPNs vs tshark");
    }
}

#[test]
fn shipped_samples_are_small_and_match_their_truth() {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../samples"));
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            std::fs::metadata(&p).unwrap().len() < 1 << 20,
            "{name} is 1 MiB or more"
        );
        if name.ends_with(".truth.json") {
            continue;
        }
        let truth = dir.join(format!("{}.truth.json", name.rsplit_once('.').unwrap().0));
        let t: Value = serde_json::from_str(&std::fs::read_to_string(&truth).unwrap()).unwrap();
        compare(&name, &t, &analyze(&p, &[]));
        n += 1;
    }
    assert!(n >= 8);
}

/// Damaged copies of the shipped samples: bytes changed inside frames, frames cut short,
/// wire lengths up to `u32::MAX`, timestamps that jump back or to the end of the clock. The
/// analysis, its text, JSON and HTML either report or say what is wrong; none may panic.
#[test]
fn damaged_samples_never_crash_the_analysis() {
    let d = tmp();
    let samples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples");
    // SplitMix64, so every run damages the same bytes.
    let mut state = 0x5eed_u64;
    let mut rnd = move |n: u64| {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n.max(1)
    };
    let le32 = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    for name in [
        "rocev2-lossy-s128.pcap",
        "rocev2-clean.pcap",
        "rocev2-incast-s128.pcap",
        "ib-clean.pcap",
    ] {
        let orig = std::fs::read(samples.join(name)).unwrap();
        assert_eq!(
            le32(&orig, 0),
            0xa1b2_3c4d,
            "{name}: a little-endian nanosecond pcap"
        );
        for variant in 0..6 {
            // Records rebuilt one by one (classic pcap: 16-byte header, then the bytes).
            let mut out = orig[..24].to_vec();
            let mut at = 24;
            let mut back = 0u32;
            while at + 16 <= orig.len() {
                let (mut sec, ns) = (le32(&orig, at), le32(&orig, at + 4));
                let incl = le32(&orig, at + 8) as usize;
                let mut wire = le32(&orig, at + 12);
                let mut data = orig[at + 16..at + 16 + incl].to_vec();
                at += 16 + incl;
                for _ in 0..rnd(4) * u64::from(rnd(6) == 0) {
                    let i = rnd(data.len() as u64) as usize;
                    data[i] ^= 1 << rnd(8);
                }
                match rnd(60) {
                    0 => data.truncate(rnd(data.len() as u64 + 1) as usize),
                    1 => wire = u32::MAX - rnd(3) as u32,
                    2 => wire = wire.saturating_add(rnd(1 << 20) as u32),
                    3 => sec = u32::MAX,
                    4 => sec = 0,
                    5 => back += rnd(1000) as u32,
                    _ => {}
                }
                sec = sec.saturating_sub(back * u32::from(variant % 2 == 1));
                out.extend(sec.to_le_bytes());
                out.extend(ns.to_le_bytes());
                out.extend((data.len() as u32).to_le_bytes());
                out.extend(wire.max(data.len() as u32).to_le_bytes());
                out.extend(&data);
            }
            let cap = d.join(format!("damaged-{variant}-{name}"));
            std::fs::write(&cap, &out).unwrap();
            let html = d.join(format!("damaged-{variant}-{name}.html"));
            for args in [&["--json"][..], &[], &["--link-speed", "1", "--html"]] {
                let mut c = bin();
                c.arg("analyze").args(args);
                if args.contains(&"--html") {
                    c.arg(&html);
                }
                let o = c.arg(&cap).output().unwrap();
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(
                    o.status.code().is_some_and(|c| c == 0 || c == 1) && !err.contains("panicked"),
                    "analyze {args:?} {}: {:?}\n{err}",
                    cap.display(),
                    o.status
                );
            }
        }
    }
}

/// Beyond `--max-flows`, packets of new flows still count in every total that needs no flow
/// state, and a warning says how many were not analysed per flow.
#[test]
fn flows_beyond_the_limit_count_in_the_totals() {
    let d = tmp();
    let cap = generated(&d, "mixed-limit.pcap", "mixed", 30000);
    let all = analyze(&cap, &[]);
    let few = analyze(&cap, &["--max-flows", "5"]);
    assert!(all["flows"].as_array().unwrap().len() > 5);
    assert_eq!(few["flows"].as_array().unwrap().len(), 5);
    assert_eq!(all["capture"]["untracked_packets"], 0);
    let tracked: u64 = few["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["packets"].as_u64().unwrap())
        .sum();
    let untracked = few["capture"]["untracked_packets"].as_u64().unwrap();
    assert!(untracked > 0);
    assert_eq!(
        tracked + untracked,
        all["totals"]["packets"].as_u64().unwrap()
    );
    for k in [
        "packets",
        "bytes",
        "payload_bytes",
        "opcodes",
        "naks",
        "rnr_naks",
        "cnp",
        "ecn",
        "icrc",
    ] {
        assert_eq!(few["totals"][k], all["totals"][k], "totals.{k}");
    }
    assert!(codes(&few).contains("capture.flow_limit"));
    assert!(!codes(&all).contains("capture.flow_limit"));
    // CM connections are recorded whatever their flows, up to as many as flows.
    let cm = |r: &Value| {
        r["connections"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["learned"] == "cm")
            .count() as u64
    };
    assert!(cm(&all) > 5, "{}", cm(&all));
    assert_eq!(cm(&few), 5);
    assert_eq!(few["capture"]["untracked_cm"].as_u64(), Some(cm(&all) - 5));
    assert_eq!(all["capture"]["untracked_cm"], 0);
}

/// A pcapng file that holds one capture at two points (interfaces 0 and 1, the second 20 µs
/// later): read at one point, with `capture.multiple_points`; `--interface 1` reads that point
/// alone, as the capture by itself, keeping the file's frame numbers.
#[test]
fn two_capture_points_in_one_file_and_one_of_them_alone() {
    use rdmascope_capture::{CaptureReader, PcapngWriter};
    let d = tmp();
    let cap = generated(&d, "lossy-points.pcap", "lossy", 6000);
    let one = analyze(&cap, &[]);
    let mut reader = CaptureReader::open(cap.to_str().unwrap()).unwrap();
    let mut w = PcapngWriter::new(Vec::new(), None).unwrap();
    for _ in 0..2 {
        w.add_interface(1, 0, None, None).unwrap();
    }
    while let Some(r) = reader.next().unwrap() {
        w.write(0, r.ts_ns, r.orig_len, r.data).unwrap();
        w.write(1, r.ts_ns + 20_000, r.orig_len, r.data).unwrap();
    }
    let points = d.join("lossy-points.pcapng");
    std::fs::write(&points, w.into_inner()).unwrap();
    let codes = |r: &Value| -> Vec<String> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap().to_string())
            .collect()
    };
    let both = analyze(&points, &[]);
    let alone = analyze(&points, &["--interface", "1"]);
    for k in TRANSPORT_TOTALS {
        assert_eq!(both["totals"][k], one["totals"][k], "{k}");
        assert_eq!(alone["totals"][k], one["totals"][k], "{k}");
    }
    assert!(codes(&both).contains(&"capture.multiple_points".to_string()));
    assert_eq!(codes(&alone), codes(&one));
    assert_eq!(alone["capture"]["packets"], one["capture"]["packets"]);
    // Frame numbers are the file's: interface 1's frames are the even ones.
    let frames: Vec<u64> = alone["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["frames"].as_array().unwrap())
        .filter_map(Value::as_u64)
        .collect();
    assert!(
        !frames.is_empty() && frames.iter().all(|n| n % 2 == 0),
        "{frames:?}"
    );
    // An interface that carried nothing is an error that says so.
    let o = bin()
        .args(["analyze", "--interface", "2"])
        .arg(&points)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("captured on interface 2"),
        "{err}"
    );
}
