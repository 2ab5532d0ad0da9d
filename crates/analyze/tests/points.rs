//! A file that holds the same packets from two capture points (captures on both hosts merged
//! with mergecap, a tap and a mirror): each flow is read at one point, so the transport's
//! figures and findings are those of one capture, and `capture.multiple_points` says so. A
//! file whose interfaces carry different flows (a tap's two directions, a flow that moved after
//! a bond's failover) or different packets of a flow (a NIC that spreads a QP's packets over
//! its ports) is read as one capture.

mod common;

use common::{report, scenario_events, TRANSPORT_SCENARIOS};
use rdmascope_analyze::{Analyzer, Batch, Bth, Config, Event, Node, PacketMeta};
use rdmascope_synth::Scenario;
use rdmascope_wire::frame::Encap;
use rdmascope_wire::opcode::{OpInfo, Transport};
use serde_json::Value;

/// The events `(ts, interface, event)` in time order, numbered anew.
fn merged(mut all: Vec<(i64, u32, Event)>) -> Vec<Event> {
    all.sort_by_key(|&(ts, i, _)| (ts, i));
    all.into_iter()
        .enumerate()
        .map(|(n, (ts, i, mut e))| {
            e.meta.number = n as u64 + 1;
            e.meta.ts_ns = ts as u64;
            e.meta.if_id = i;
            e
        })
        .collect()
}

/// Every event at interface 0 and again at interface 1, `skew` ns later (earlier if negative).
fn two_points(evs: &[Event], skew: i64) -> Vec<Event> {
    merged(
        evs.iter()
            .flat_map(|e| {
                let ts = e.meta.ts_ns as i64 + 10_000_000;
                [(ts, 0, e.clone()), (ts + skew, 1, e.clone())]
            })
            .collect(),
    )
}

/// The node that sent `e`, if it has one.
fn sender(e: &Event) -> Option<Node> {
    e.nodes.map(|n| n.0)
}

/// Captures on the two hosts of each node pair, merged: interface 0 is the capture of the
/// lower node, 1 of the higher; each sees what it sends `d` ns before the capture between
/// them did and what it receives `d` ns after.
fn two_hosts(evs: &[Event], d: i64) -> Vec<Event> {
    merged(
        evs.iter()
            .flat_map(|e| {
                let ts = e.meta.ts_ns as i64 + 10_000_000;
                let low = match e.nodes {
                    Some((a, b)) => a < b,
                    None => true,
                };
                let (at0, at1) = if low {
                    (ts - d, ts + d)
                } else {
                    (ts + d, ts - d)
                };
                [(at0, 0, e.clone()), (at1, 1, e.clone())]
            })
            .collect(),
    )
}

/// The transport's counters, latencies and messages of each flow, and the totals.
fn transport(r: &Value) -> Vec<Value> {
    let mut keys = common::TRANSPORT_COUNTERS.to_vec();
    keys.push("retransmission_triggers");
    let mut v: Vec<Value> = keys.iter().map(|k| r["totals"][*k].clone()).collect();
    for f in r["flows"].as_array().unwrap() {
        v.extend(keys.iter().map(|k| f[*k].clone()));
        for k in [
            "ack_latency_ns",
            "messages",
            "cnp_interval_ns",
            "ce_to_cnp_ns",
        ] {
            v.push(f[k].clone());
        }
    }
    v
}

fn codes(r: &Value) -> Vec<String> {
    common::codes_but(r, "capture.multiple_points")
}

fn points_finding(r: &Value) -> Option<&Value> {
    common::report_finding(r, "capture.multiple_points")
}

#[test]
fn two_capture_points_read_as_one() {
    for scenario in TRANSPORT_SCENARIOS {
        let evs = scenario_events(scenario, 3000);
        let once = report(&evs);
        // Frames of flows (not PFC or LLDP frames) at the second point.
        let seen_twice = evs
            .iter()
            .filter(|e| e.bth.is_some() && e.nodes.is_some())
            .count();
        let views = [
            ("20 µs later", two_points(&evs, 20_000)),
            ("5 µs earlier", two_points(&evs, -5_000)),
            ("2 ms later", two_points(&evs, 2_000_000)),
            ("two hosts", two_hosts(&evs, 1_000)),
        ];
        for (view, twice) in views {
            let name = format!("{scenario:?}, {view}");
            let twice = report(&twice);
            assert_eq!(transport(&once), transport(&twice), "{name}");
            assert_eq!(codes(&once), codes(&twice), "{name}");
            let f = points_finding(&twice).unwrap_or_else(|| panic!("{name}: no finding"));
            assert_eq!(
                f["evidence"][0],
                format!("capture.other_point_frames = {seen_twice}"),
                "{name}"
            );
            // Both points saw the same losses: they happened before either.
            assert!(
                f["evidence"][2]
                    .as_str()
                    .unwrap()
                    .ends_with("whose points saw different losses = 0"),
                "{name}: {}",
                f["evidence"]
            );
        }
    }
}

/// Requests the second point never saw were lost between the points: the finding counts, per
/// flow, the PSNs each point saw late or never.
#[test]
fn losses_between_two_points_are_told() {
    for scenario in [Scenario::Clean, Scenario::Lossy] {
        let evs = scenario_events(scenario, 3000);
        let name = format!("{scenario:?}");
        let mut n = 0;
        let dropped = merged(
            evs.iter()
                .flat_map(|e| {
                    let ts = e.meta.ts_ns as i64;
                    let request = e.bth.is_some_and(|b| {
                        OpInfo::of(b.opcode).transport == Transport::Rc && !common::is_answer(e)
                    });
                    n += u32::from(request);
                    let lost = request && n % 37 == 5;
                    let at1 = (!lost).then(|| (ts + 20_000, 1, e.clone()));
                    std::iter::once((ts, 0, e.clone())).chain(at1)
                })
                .collect(),
        );
        let r = report(&dropped);
        let f = points_finding(&r).unwrap_or_else(|| panic!("{name}: no finding"));
        let ev: Vec<&str> = f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(
            !ev[2].ends_with("different losses = 0") && ev[3].contains("before interface 0"),
            "{name}: {ev:?}"
        );
    }
}

/// A tap's two directions on two interfaces, and flows that move to another interface after
/// a silence (a bond's failover), are one capture: nothing is a copy.
#[test]
fn interfaces_with_different_flows_are_one_capture() {
    for scenario in TRANSPORT_SCENARIOS {
        let evs = scenario_events(scenario, 3000);
        let once = report(&evs);
        let name = format!("{scenario:?}");
        let tap = merged(
            evs.iter()
                .map(|e| {
                    let i = u32::from(sender(e).zip(e.nodes).is_some_and(|(s, n)| s > n.1));
                    (e.meta.ts_ns as i64, i, e.clone())
                })
                .collect(),
        );
        let tap = report(&tap);
        assert_eq!(transport(&once), transport(&tap), "{name}: tap");
        assert_eq!(codes(&once), codes(&tap), "{name}: tap");
        assert!(points_finding(&tap).is_none(), "{name}: tap");
        // Everything after the middle frame, 200 ms later and at interface 1.
        let mid = evs.len() / 2;
        let moved = merged(
            evs.iter()
                .enumerate()
                .map(|(n, e)| {
                    let later = n >= mid;
                    let ts = e.meta.ts_ns as i64 + if later { 200_000_000 } else { 0 };
                    (ts, u32::from(later), e.clone())
                })
                .collect(),
        );
        let moved = report(&moved);
        assert!(points_finding(&moved).is_none(), "{name}: moved");
        for k in ["retransmitted_packets", "missing_packets", "duplicate_acks"] {
            assert_eq!(once["totals"][k], moved["totals"][k], "{name}: moved {k}");
        }
    }
}

/// A NIC that spreads each RC QP's requests over two ports, each captured on its own interface:
/// a request whose PSN its flow has not seen is new, wherever it comes, so a capture without
/// loss reads as one. (A resend at the other interface would read as a copy.)
#[test]
fn requests_spread_over_two_interfaces_are_all_read() {
    for scenario in [Scenario::Clean, Scenario::Incast] {
        let evs = scenario_events(scenario, 3000);
        let once = report(&evs);
        let spread = merged(
            evs.iter()
                .map(|e| {
                    let request = e.bth.is_some_and(|b| {
                        OpInfo::of(b.opcode).transport == Transport::Rc && !common::is_answer(e)
                    });
                    let i = e.bth.map_or(0, |b| u32::from(request && b.psn % 2 == 1));
                    (e.meta.ts_ns as i64, i, e.clone())
                })
                .collect(),
        );
        let spread = report(&spread);
        let name = format!("{scenario:?}");
        assert_eq!(transport(&once), transport(&spread), "{name}");
        assert_eq!(codes(&once), codes(&spread), "{name}");
        assert!(points_finding(&spread).is_none(), "{name}");
    }
}

/// The report of `files`, each fed as one input file.
fn report_files(files: &[Vec<Event>]) -> Value {
    let mut a = Analyzer::new(Config::default());
    let mut n = 0;
    for (i, evs) in files.iter().enumerate() {
        let mut b = Batch::default();
        b.set_file(i as u32, 1);
        for e in evs {
            n += 1;
            let mut e = e.clone();
            e.meta.number = n;
            b.push(e);
        }
        a.feed(&mut b);
    }
    serde_json::to_value(a.finish()).expect("report serialises")
}

/// Two hosts' captures given as two files that overlap in time are two capture points; ring
/// files, each beginning where the one before ends, are one; and two hosts' ring files, given
/// one host after the other, are two.
#[test]
fn overlapping_files_are_capture_points() {
    for scenario in TRANSPORT_SCENARIOS {
        let evs = scenario_events(scenario, 3000);
        let once = report(&evs);
        let name = format!("{scenario:?}");
        let later = |evs: &[Event], by: u64| -> Vec<Event> {
            evs.iter()
                .map(|e| {
                    let mut e = e.clone();
                    e.meta.ts_ns += by;
                    e
                })
                .collect()
        };
        let two = report_files(&[evs.clone(), later(&evs, 20_000)]);
        assert_eq!(transport(&once), transport(&two), "{name}: two files");
        let mut with_overlap = codes(&once);
        with_overlap.push("capture.files_overlap".to_string());
        with_overlap.sort();
        assert_eq!(with_overlap, codes(&two), "{name}: two files");
        let f = points_finding(&two).unwrap_or_else(|| panic!("{name}: no finding"));
        assert!(
            f["summary"]
                .as_str()
                .unwrap()
                .contains("interface 0 of file 2"),
            "{name}: {}",
            f["summary"]
        );
        let (a, b) = evs.split_at(evs.len() / 2);
        let ring = report_files(&[a.to_vec(), b.to_vec()]);
        assert_eq!(transport(&once), transport(&ring), "{name}: ring");
        assert!(points_finding(&ring).is_none(), "{name}: ring");
        assert_eq!(codes(&once), codes(&ring), "{name}: ring");
        let hosts = report_files(&[a.to_vec(), b.to_vec(), later(a, 20_000), later(b, 20_000)]);
        assert_eq!(
            transport(&once),
            transport(&hosts),
            "{name}: two hosts' rings"
        );
        let f = points_finding(&hosts).unwrap_or_else(|| panic!("{name}: no finding"));
        assert_eq!(
            f["evidence"][0],
            format!(
                "capture.other_point_frames = {}",
                evs.iter()
                    .filter(|e| e.bth.is_some() && e.nodes.is_some())
                    .count()
            ),
            "{name}"
        );
    }
}

/// The lag of the second sighting of `e` between two points merged into one interface, when
/// their path's queue moves it: 20–39 µs.
fn varying_lag(e: &Event) -> i64 {
    20_000 + (e.meta.number as i64 * 7_919) % 20 * 1_000
}

/// `evs` with each seen again on the same interface `lag` later, its source MAC `mac` then
/// when given.
fn seen_again(evs: &[Event], lag: impl Fn(&Event) -> i64, mac: Option<u64>) -> Vec<Event> {
    merged(
        evs.iter()
            .flat_map(|e| {
                let ts = e.meta.ts_ns as i64;
                let mut seen = e.clone();
                seen.eth_src = mac.unwrap_or(e.eth_src);
                [(ts, 0, e.clone()), (ts + lag(e), 0, seen)]
            })
            .collect(),
    )
}

/// Two points merged into one interface (mergecap merges interfaces that look alike), the
/// second sightings 20 µs later: the capture's first packets show every packet come again at
/// that lag, so the second sightings are the capture's copies (`capture.duplicates`) and the
/// transport reads as one point's (session 49).
#[test]
fn two_points_merged_into_one_interface_20_us_apart_read_as_one() {
    for scenario in TRANSPORT_SCENARIOS {
        let evs = scenario_events(scenario, 3000);
        let name = format!("{scenario:?}");
        let once = report(&evs);
        let r = report(&seen_again(&evs, |_| 20_000, Some(0x02aa_bbcc_ddee)));
        assert_eq!(transport(&once), transport(&r), "{name}");
        assert!(points_finding(&r).is_none(), "{name}");
        let bth = evs.iter().filter(|e| e.bth.is_some()).count();
        assert_eq!(
            common::evidence(&r, "capture.duplicates", 1, &name),
            &format!("capture.late_copy_frames = {bth}"),
            "{name}"
        );
    }
}

/// Two points merged into one interface, the second sightings 20–39 µs later (no one lag):
/// each second sighting, whose source MAC a routed hop rewrote, reads as a resend, and the
/// finding says why; a path that changes (a reroute: new packets and resends alike come with
/// another MAC from then on) is no such thing.
#[test]
fn two_points_merged_into_one_interface_are_told_by_their_macs() {
    const ROUTER: u64 = 0x02aa_bbcc_ddee;
    for scenario in [Scenario::Clean, Scenario::Lossy, Scenario::Incast] {
        let evs = scenario_events(scenario, 3000);
        let name = format!("{scenario:?}");
        let merged_one = seen_again(&evs, varying_lag, Some(ROUTER));
        let r = report(&merged_one);
        let f = points_finding(&r).unwrap_or_else(|| panic!("{name}: no finding"));
        assert!(
            f["evidence"][0]
                .as_str()
                .unwrap()
                .starts_with("retransmissions with another source MAC = "),
            "{name}: {}",
            f["evidence"][0]
        );
        let mid = evs.len() / 2;
        let rerouted: Vec<Event> = evs
            .iter()
            .enumerate()
            .map(|(n, e)| {
                let mut e = e.clone();
                if n >= mid && e.eth_src != 0 {
                    e.eth_src ^= ROUTER;
                }
                e
            })
            .collect();
        assert!(
            points_finding(&report(&rerouted)).is_none(),
            "{name}: rerouted"
        );
    }
}

/// Two points merged into one interface on a fabric that keeps the source MAC (one L2
/// segment), the second sightings 20–39 µs later (no one lag, which would make them copies):
/// nothing tells the points apart, and each second sighting reads as a go-back-N
/// pass after an ACK timeout; but those passes begin sooner after the responder's last
/// progress than any ACK timeout, and `capture.early_resends` says so. The capture at one
/// point raises nothing of the kind. (`Lossy` takes 10,000 packets: since its WRITE flow shares
/// a link with READs, in its first 3,000 most second sightings are found as copies, and fewer
/// than half of the 86 passes left begin within 8 µs of an ACK.)
#[test]
fn second_sightings_on_one_interface_are_early_resends() {
    for (scenario, n) in [(Scenario::Clean, 3000), (Scenario::Lossy, 10_000)] {
        let evs = scenario_events(scenario, n);
        let name = format!("{scenario:?}");
        let early = |r: &Value| {
            r["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["code"] == "capture.early_resends")
        };
        assert!(!early(&report(&evs)), "{name}");
        let one_interface = seen_again(&evs, varying_lag, None);
        assert!(early(&report(&one_interface)), "{name}");
    }
}

/// Directed-route SMPs go from and to the permissive LID (IBTA §14.2.2), so a Get and its
/// GetResp are one flow: at a tap (an ERF capture's two ports kept as two interfaces) the two
/// directions come on two interfaces, and neither is a copy.
#[test]
fn directed_route_smps_at_a_tap_are_one_capture() {
    let smp = |n: u64, ts: u64, if_id: u32, psn: u32| Event {
        meta: PacketMeta {
            number: n,
            ts_ns: ts,
            orig_len: 278,
            if_id,
            if_speed: None,
        },
        bth: Some(Bth {
            opcode: 0x64,
            ackreq: false,
            destqp: 0,
            psn,
        }),
        nodes: Some((Node::Lid(0xffff), Node::Lid(0xffff))),
        encap: Some(Encap::Ib),
        payload_len: 256,
        ..Event::default()
    };
    let evs: Vec<Event> = (0..10u64)
        .flat_map(|k| {
            let ts = 1_000_000_000 + k * 10_000_000;
            [
                smp(2 * k + 1, ts, 0, 489 + k as u32),
                smp(2 * k + 2, ts + 70_000, 1, 93_239 + k as u32),
            ]
        })
        .collect();
    let r = report(&evs);
    assert!(points_finding(&r).is_none(), "{}", r["findings"]);
    assert_eq!(r["totals"]["packets"], 20);
    assert_eq!(r["flows"][0]["packets"], 20);
}
