//! A capture that holds every frame twice, each copy right after its first (`tcpdump -i any`
//! over a bond, VLAN or bridge interface and its member): the copies are the capture's, so
//! the transport's figures and findings are those of the capture without them, and the
//! finding `capture.duplicates` counts them.

mod common;

use common::{evidence, generated_events, report, scenario_events, TRANSPORT_SCENARIOS};
use rdmascope_analyze::{Analyzer, Batch, Config, Event, LagCopies, Lags, PacketMeta};
use rdmascope_synth::{GenOptions, Scenario};
use serde_json::Value;

/// Nanoseconds between a frame and its copy.
const LAG: u64 = 300;

/// `evs` with each followed by its copy `lag` later (in time order, so a copy comes after the
/// packets sent meanwhile), numbered anew.
fn trailed(evs: &[Event], lag: u64) -> Vec<Event> {
    let mut all: Vec<(u64, usize, Event)> = evs
        .iter()
        .enumerate()
        .flat_map(|(i, e)| {
            let mut copy = e.clone();
            copy.meta.ts_ns += lag;
            [
                (e.meta.ts_ns, 2 * i, e.clone()),
                (copy.meta.ts_ns, 2 * i + 1, copy),
            ]
        })
        .collect();
    all.sort_by_key(|&(ts, i, _)| (ts, i));
    all.into_iter()
        .enumerate()
        .map(|(n, (_, _, mut e))| {
            e.meta.number = n as u64 + 1;
            e
        })
        .collect()
}

/// `evs` with each followed by its copy `LAG` later, numbered anew.
fn doubled(evs: &[Event]) -> Vec<Event> {
    doubled_by(evs, LAG)
}

/// `evs` with each followed by its copy `lag` later (in the file, right behind it), numbered
/// anew.
fn doubled_by(evs: &[Event], lag: u64) -> Vec<Event> {
    let copy = |e: &Event, n: u64, lag: u64| Event {
        meta: PacketMeta {
            number: n,
            ts_ns: e.meta.ts_ns + lag,
            ..e.meta
        },
        ..e.clone()
    };
    evs.iter()
        .enumerate()
        .flat_map(|(i, e)| [copy(e, 2 * i as u64 + 1, 0), copy(e, 2 * i as u64 + 2, lag)])
        .collect()
}

/// The events of `gen`'s `scenario` with `seed`, `packets` frames and `rate` of its RDMA
/// packets damaged before the capture point (at 100 Gb/s, uncut).
fn damaged_events(scenario: Scenario, seed: u64, packets: u64, rate: f64) -> Vec<Event> {
    let o = GenOptions {
        scenario,
        packets: Some(packets),
        seed,
        corrupt_rate: rate,
        ..GenOptions::default()
    };
    generated_events(&o, usize::MAX)
}

/// The transport's counters of a counters object (totals or a flow).
fn transport(c: &Value) -> Vec<(&'static str, Value)> {
    common::TRANSPORT_COUNTERS
        .into_iter()
        .map(|k| (k, c[k].clone()))
        .collect()
}

/// The flows of two reports, side by side.
fn flow_pairs<'a>(x: &'a Value, y: &'a Value) -> impl Iterator<Item = (&'a Value, &'a Value)> {
    x["flows"]
        .as_array()
        .unwrap()
        .iter()
        .zip(y["flows"].as_array().unwrap())
}

/// The report of `evs` by the analysis's own rules for copies: events fed one by one, so the
/// capture's lag is not learnt ([`rdmascope_analyze::Analyzer::event`]). They still find the
/// copies when the lag varies too much to learn, or the capture's first packets do not show
/// it.
fn rules(evs: &[Event]) -> Value {
    let mut a = Analyzer::new(Config::default());
    for e in evs {
        a.event(e);
    }
    serde_json::to_value(a.finish()).expect("report serialises")
}

fn codes(r: &Value) -> Vec<String> {
    common::codes_but(r, "capture.duplicates")
}

#[test]
fn copies_right_after_their_frames_change_nothing_but_their_finding() {
    for scenario in TRANSPORT_SCENARIOS {
        let evs = scenario_events(scenario, 3000);
        let (once, twice) = (report(&evs), rules(&doubled(&evs)));
        let name = format!("{scenario:?}");
        reads_as_held_once(&once, &twice, &name);
        for (a, b) in flow_pairs(&once, &twice) {
            assert_eq!(a["ack_latency_ns"], b["ack_latency_ns"], "{name}");
            for k in [
                "cnp_interval_ns",
                "ce_to_cnp_ns",
                "rate_before_cnp_bps",
                "rate_after_cnp_bps",
            ] {
                assert_eq!(a[k], b[k], "{name}: {k}");
            }
            assert_eq!(a["messages"], b["messages"], "{name}");
        }
        // Every copy of a packet with a BTH is recognised: UD ones by their DETH's source QP
        // as well as their PSN (QPs of one node may share a PSN).
        let copies = evs.iter().filter(|e| e.bth.is_some()).count();
        assert_eq!(
            evidence(&twice, "capture.duplicates", 0, &name),
            &format!("capture.duplicate_frames = {copies}"),
            "{name}"
        );
        assert!(
            !once["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["code"] == "capture.duplicates"),
            "{name}"
        );
    }
}

/// Copies that trail their packets by a few others (a mirror of a path's two ports) are
/// recognised in the main: the findings are those of the capture without them, though a
/// flow's first copies, before any answer shows that a NAK would be seen, may still count as
/// resends of unknown cause.
#[test]
fn copies_that_trail_their_frames_change_no_finding() {
    for scenario in TRANSPORT_SCENARIOS {
        let evs = scenario_events(scenario, 3000);
        let (once, twice) = (report(&evs), rules(&trailed(&evs, 300)));
        let name = format!("{scenario:?}");
        assert_eq!(codes(&once), codes(&twice), "{name}");
        assert_eq!(
            once["totals"]["timeouts"], twice["totals"]["timeouts"],
            "{name}"
        );
        for (a, b) in flow_pairs(&once, &twice) {
            assert_eq!(a["cnp_interval_ns"], b["cnp_interval_ns"], "{name}");
        }
        assert!(
            twice["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["code"] == "capture.duplicates"),
            "{name}"
        );
    }
}

/// A connection whose first requests' copies trail by 300 ns, behind the next request, before
/// its first answer, while other connections of the node pair are answered: those copies are
/// not found as such (no answer shows the connection's packets come twice) and read as
/// resends, but a resend sooner than any ACK timeout is no timeout (`clean` at 10 Gb/s; a
/// sweep over random options found `transport.timeout` there).
#[test]
fn copies_before_a_connection_s_first_answer_are_no_timeouts() {
    let o = GenOptions {
        scenario: Scenario::Clean,
        packets: Some(30_000),
        seed: 732_589,
        link_bps: 10_000_000_000,
        ..GenOptions::default()
    };
    let evs = generated_events(&o, usize::MAX);
    let (once, twice) = (report(&evs), rules(&trailed(&evs, 300)));
    assert!(twice["totals"]["retransmitted_packets"].as_u64() > Some(0));
    assert_eq!(twice["totals"]["timeouts"], 0);
    assert_eq!(codes(&once), codes(&twice));
}

/// Copies trailing by 300 ns behind the next request of an `rnr` connection, not all found as
/// copies, begin resend passes 300 ns after their first copies: sooner than any ACK timer
/// (4.096 µs for a ConnectX resending adaptively), so no timeout and no
/// `transport.retry_exceeded` (a sweep over random seeds found 8 such "timeouts" in a row).
#[test]
fn resends_sooner_than_any_ack_timer_are_no_timeouts() {
    let o = GenOptions {
        scenario: Scenario::Rnr,
        packets: Some(1_000),
        seed: 921_805,
        ..GenOptions::default()
    };
    let evs = generated_events(&o, usize::MAX);
    let (once, twice) = (report(&evs), rules(&trailed(&evs, 300)));
    assert!(
        twice["totals"]["retransmitted_packets"].as_u64()
            > once["totals"]["retransmitted_packets"].as_u64()
    );
    assert_eq!(twice["totals"]["timeouts"], once["totals"]["timeouts"]);
    assert_eq!(codes(&once), codes(&twice));
}

/// Copies that trail their packets by microseconds (a mirror of a path's two ports across a
/// switch that queues): a clean capture shows no resend, timeout or transport finding at 3, 5
/// and 8 µs.
#[test]
fn copies_that_trail_by_microseconds_leave_a_clean_capture_clean() {
    let evs = scenario_events(Scenario::Clean, 30000);
    for lag in [3_000, 5_000] {
        let (once, twice) = (report(&evs), rules(&trailed(&evs, lag)));
        let name = format!("lag {lag} ns");
        assert_eq!(codes(&once), codes(&twice), "{name}");
        assert_eq!(twice["totals"]["timeouts"], 0, "{name}");
        // A few copies at the flows' start, before the capture is known to hold packets
        // twice, may still read as resends and duplicate ACKs (38 of 9,000 ACKs at 5 µs).
        let packets = once["totals"]["packets"].as_u64().unwrap();
        for k in ["retransmitted_packets", "duplicate_acks"] {
            let n = twice["totals"][k].as_u64().unwrap();
            assert!(n * 200 <= packets, "{name}: {n} {k} of {packets} packets");
        }
    }
    // By 8 µs, just under the 8.192 µs within which a copy is looked for, the copies are
    // still found among a flow's last 64 requests (with 16 remembered, none was: each read as
    // a resend pass of its own until such passes showed the capture held twice, and 63% of the
    // packets read as resends before even that).
    let twice = rules(&trailed(&evs, 8_000));
    let packets = twice["totals"]["packets"].as_u64().unwrap();
    let resent = twice["totals"]["retransmitted_packets"].as_u64().unwrap();
    assert!(
        resent * 50 <= packets,
        "lag 8 µs: {resent} resent of {packets}"
    );
    assert_eq!(codes(&report(&evs)), codes(&twice), "lag 8 µs");
    assert_eq!(twice["totals"]["timeouts"], 0, "lag 8 µs");
}

/// Copies trailing by 5 µs, in scenarios with resends of their own: found among a flow's last
/// 64 requests (`Rnr`, `Reorder`; with 16 remembered, 18,140 resends read against 79 for `Rnr`,
/// 31,186 against 2,700 for `Reorder`), or, for flows so fast that none is (`Lossy`), passes of
/// one packet that begin sooner than any ACK timeout with a PSN already acknowledged (which no
/// requester resends, a NIC retransmitting adaptively neither) show the capture held twice:
/// the resends read are within 3× those without copies.
#[test]
fn resends_of_acknowledged_psns_show_a_capture_held_twice() {
    for scenario in [Scenario::Rnr, Scenario::Reorder, Scenario::Lossy] {
        let evs = scenario_events(scenario, 30000);
        let (once, twice) = (report(&evs), rules(&trailed(&evs, 5_000)));
        let resent = |r: &Value| r["totals"]["retransmitted_packets"].as_u64().unwrap();
        assert!(
            resent(&twice) <= 3 * resent(&once),
            "{scenario:?}: {} resent, {} without copies",
            resent(&twice),
            resent(&once)
        );
        if scenario == Scenario::Lossy {
            assert!(codes(&twice).contains(&"capture.early_resends".to_string()));
            // Flows that went on with new requests after such passes did not run out of
            // retries.
            assert!(!codes(&twice).contains(&"transport.retry_exceeded".to_string()));
        } else {
            assert_eq!(twice["totals"]["timeouts"], once["totals"]["timeouts"]);
        }
    }
}

/// Copies of READ responses that trail by more answers than a flow remembers (5 µs behind,
/// 15 responses of 4 KiB at 100 Gb/s) are copies once the capture is known to hold packets
/// twice, unless they may be responses sent again: in `lossy`, whose READ responses are a
/// third of its packets, 21,674 of the 30,000 copies are found (before, when a response's copy
/// was looked for among the last 8 answers only, 12,990).
#[test]
fn trailing_copies_of_read_responses_are_copies() {
    let evs = scenario_events(Scenario::Lossy, 30000);
    let once = report(&evs);
    let twice = rules(&trailed(&evs, 5_000));
    let responses: u64 = once["totals"]["opcodes"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with("RC_RDMA_READ_RESPONSE"))
        .map(|(_, v)| v.as_u64().unwrap())
        .sum();
    assert!(responses * 3 > 30000, "{responses}");
    let found: u64 = twice["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "capture.duplicates")
        .and_then(|f| f["evidence"][0].as_str())
        .and_then(|e| e.strip_prefix("capture.duplicate_frames = "))
        .and_then(|n| n.parse().ok())
        .expect("capture.duplicates");
    assert!(
        (20_000..=30_000).contains(&found),
        "{found} of 30,000 copies found"
    );
    for k in ["retransmitted_packets", "timeouts"] {
        assert!(twice["totals"][k].as_u64() >= once["totals"][k].as_u64());
    }
}

/// A doubled capture's copies of PFC frames are no further pause frames: each stretched its
/// pause episode by the copy's lag, which turned a `mixed` capture's longest episode, exactly
/// twice the longest single pause at 25 Gb/s, into a `pfc.storm` (a sweep over random options
/// found it).
#[test]
fn copies_of_pause_frames_are_no_pauses() {
    let o = GenOptions {
        scenario: Scenario::Mixed,
        packets: Some(16_915),
        seed: 585_146,
        link_bps: 25_000_000_000,
        ipv6: true,
        ..GenOptions::default()
    };
    let mut evs = generated_events(&o, usize::MAX);
    for e in &mut evs {
        e.meta.if_speed = Some(o.link_bps);
    }
    let (once, twice) = (report(&evs), rules(&trailed(&evs, LAG)));
    assert!(once["pfc"]["frames"].as_u64() > Some(0));
    assert_eq!(once["pfc"], twice["pfc"]);
    assert_eq!(codes(&once), codes(&twice));
}

/// A connection whose first answer is an RNR NAK, its requests' copies trailing by one request:
/// the copy of the last request sent before the RNR NAK comes after it, 300 ns after its first,
/// and an RNR NAK asks for no resend sooner than its timer (at least 10 µs), so it is a copy.
/// Read as a resend, it let the RNR NAK's copy count as a second RNR NAK, and four in a row
/// raised a false `transport.rnr_retry_exceeded` (a sweep over random options found it).
#[test]
fn copies_after_an_rnr_nak_are_copies() {
    let o = GenOptions {
        scenario: Scenario::Errors,
        packets: Some(1004),
        seed: 912_236,
        ..GenOptions::default()
    };
    let evs = generated_events(&o, 1000);
    let (once, twice) = (report(&evs), rules(&trailed(&evs, LAG)));
    assert!(once["totals"]["rnr_naks"].as_u64() > Some(0));
    for k in ["rnr_naks", "retransmitted_packets", "timeouts"] {
        assert_eq!(once["totals"][k], twice["totals"][k], "{k}");
    }
    assert_eq!(codes(&once), codes(&twice));
}

/// An RNR NAK asks for no resend sooner than its timer (at least 10 µs): copies that trail
/// their frames by 300 ns at 400 Gb/s, several requests behind, within a millisecond of one are
/// still the capture's. Before, every such copy read as a resend, none was found and the
/// capture showed no `capture.duplicates` (a sweep over random options found it).
#[test]
fn copies_soon_after_an_rnr_nak_are_copies() {
    let o = GenOptions {
        scenario: Scenario::Rnr,
        duration_ns: Some(5_000_000),
        seed: 154_424,
        link_bps: 400_000_000_000,
        ipv6: true,
        ..GenOptions::default()
    };
    let evs = generated_events(&o, usize::MAX);
    let (once, twice) = (report(&evs), rules(&trailed(&evs, LAG)));
    assert!(once["totals"]["rnr_naks"].as_u64() > Some(0));
    assert_eq!(codes(&once), codes(&twice));
    assert!(twice["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == "capture.duplicates"));
}

/// Copies that trail by 1 µs at 400 Gb/s come dozens of requests after their first, beyond the
/// requests a flow remembers: a resend pass that begins with such a copy is still no ACK
/// timeout, as the flow marks when every 16th new PSN came (a sweep over random options found
/// 611 timeouts and a false `transport.retry_exceeded` in a clean capture).
#[test]
fn copies_dozens_of_requests_behind_are_no_timeouts() {
    clean_at_400g_trailed_by_1us(13_722, 166_376, 128);
}

/// `clean` at 400 Gb/s with `packets` and `seed`, cut to `snaplen`, and its copies 1 µs behind:
/// no timeout, and the findings of the capture held once.
fn clean_at_400g_trailed_by_1us(packets: u64, seed: u64, snaplen: usize) {
    let o = GenOptions {
        scenario: Scenario::Clean,
        packets: Some(packets),
        seed,
        link_bps: 400_000_000_000,
        ..GenOptions::default()
    };
    let evs = generated_events(&o, snaplen);
    let (once, twice) = (report(&evs), rules(&trailed(&evs, 1_000)));
    assert_eq!(twice["totals"]["timeouts"], 0);
    assert_eq!(codes(&once), codes(&twice));
}

/// The same at a flow's start, before its first PSN that is a multiple of 16: the flow's first
/// request is marked too, so a copy of one of its first PSNs, 17 requests behind, is still sent
/// too recently for a timeout (a sweep found 8 timeouts in a row, a false
/// `transport.retry_exceeded`, in a clean capture).
#[test]
fn copies_behind_a_flow_s_first_requests_are_no_timeouts() {
    clean_at_400g_trailed_by_1us(14_627, 887_180, 256);
}

/// Damaged captures held twice, each copy right behind its frame and stamped 300 ns, 4 µs or
/// 5 µs later, read as the capture without copies. Sweeps found each (session 48): a run of
/// pairs ended by the twins of a copy read as a resend, and then the next pass's copies read
/// as resends (9,653 resends against 9,256); and a re-read's response damaged again read as
/// the capture's copy of the first damage, its loss then stamped by the copy, so the re-read's
/// own copy asked for it again.
#[test]
fn damaged_captures_held_twice_read_as_held_once() {
    for (seed, packets, rate, lag) in [
        (962_151_618, 25_563, 0.0470, 300),
        (311_419_722, 25_739, 0.0439, 4_000),
        (367_444_989, 22_897, 0.0478, 5_000),
    ] {
        let evs = damaged_events(Scenario::Clean, seed, packets, rate);
        let (once, twice) = (report(&evs), rules(&doubled_by(&evs, lag)));
        let name = format!("seed {seed}, {lag} ns");
        assert_eq!(
            transport(&once["totals"]),
            transport(&twice["totals"]),
            "{name}"
        );
        for (a, b) in flow_pairs(&once, &twice) {
            assert_eq!(transport(a), transport(b), "{name}");
        }
    }
}

/// The transport's figures of `once` and `twice` are the same, in total and per flow, and so
/// are the findings but `capture.duplicates`.
fn reads_as_held_once(once: &Value, twice: &Value, name: &str) {
    assert_eq!(
        transport(&once["totals"]),
        transport(&twice["totals"]),
        "{name}"
    );
    assert_eq!(
        once["totals"]["retransmission_triggers"], twice["totals"]["retransmission_triggers"],
        "{name}"
    );
    for (a, b) in flow_pairs(once, twice) {
        assert_eq!(transport(a), transport(b), "{name}");
    }
    assert_eq!(codes(once), codes(twice), "{name}");
}

/// The report of `evs` read from a file of microseconds (classic pcap's default): each
/// timestamp cut to its microsecond, the batch marked so.
fn in_microseconds(evs: &[Event]) -> Value {
    let mut a = Analyzer::new(Config::default());
    for chunk in evs.chunks(1900) {
        let mut b = Batch::default();
        b.set_file(0, 1000);
        for e in chunk {
            let mut e = e.clone();
            e.meta.ts_ns -= e.meta.ts_ns % 1000;
            b.push(e);
        }
        a.feed(&mut b);
    }
    serde_json::to_value(a.finish()).expect("report serialises")
}

/// Damaged captures held twice 300 ns apart and written in microseconds, as `tcpdump -i any`
/// over a bond writes them by default: a frame and its copy mostly share a timestamp, and
/// still read as held once. Before (session 52), packets of one microsecond read as sent at
/// once, and a third to a half of such captures differed (a sweep found 30 of 100): copies of
/// ACKs and NAKs read as the responder's, resends right after a NAK as sooner than it could
/// turn round.
#[test]
fn copies_in_the_microsecond_of_their_frames_read_as_held_once() {
    for (scenario, seed, packets, rate) in [
        (Scenario::Lossy, 1_054_916_739, 17_579, 0.0478),
        (Scenario::Mixed, 753_860_015, 22_670, 0.0077),
    ] {
        let evs = damaged_events(scenario, seed, packets, rate);
        let (once, twice) = (
            in_microseconds(&evs),
            in_microseconds(&doubled_by(&evs, LAG)),
        );
        reads_as_held_once(&once, &twice, &format!("{scenario:?} seed {seed}"));
    }
}

/// Copies at one lag, 300 ns to 50 µs, in time order or each right behind its frame: the
/// capture's first packets show the lag, and every copy is found. Before (session 49), copies
/// 10 µs or more behind (a mirror of two ports with a queue between them), later than any copy
/// the analysis's rules take for the capture's (`DUP_NS`, 8.192 µs), read nearly every
/// packet of a clean capture as a resend, with thousands of timeouts; and sooner copies in
/// time order, behind other packets, were found in the main only (see [`rules`]).
#[test]
fn copies_at_one_lag_read_as_held_once() {
    for scenario in TRANSPORT_SCENARIOS {
        let evs = scenario_events(scenario, 3000);
        let once = report(&evs);
        for (lag, by_time) in [
            (300, true),
            (300, false),
            (2_000, true),
            (10_000, true),
            (20_000, false),
            (50_000, true),
        ] {
            let twice = if by_time {
                trailed(&evs, lag)
            } else {
                doubled_by(&evs, lag)
            };
            let twice = report(&twice);
            let name = format!("{scenario:?}, {lag} ns");
            reads_as_held_once(&once, &twice, &name);
            let copies = evs.iter().filter(|e| e.bth.is_some()).count();
            assert_eq!(
                evidence(&twice, "capture.duplicates", 1, &name),
                &format!("capture.late_copy_frames = {copies}"),
                "{name}"
            );
        }
    }
}

/// The report of `evs` fed in batches of `n` events, as `analyze` feeds a file's chunks.
fn report_in_batches(evs: &[Event], n: usize) -> Value {
    let mut a = Analyzer::new(Config::default());
    for batch in evs.chunks(n) {
        a.feed_events(batch);
    }
    serde_json::to_value(a.finish()).expect("report serialises")
}

/// Damaged captures held twice 10 µs apart, from sweeps (session 49), fed in batches of 64
/// events (a 256 KB chunk of full-size frames): the first batch held too few answers to show
/// the lag, and was read before it, its copies as resends; and in time order, resends 9 µs
/// after their first copies, about as late as the copies, were taken for them (the copy is
/// the one at the lag nearest the copies').
#[test]
fn damaged_captures_held_twice_10_us_apart_read_as_held_once() {
    for (scenario, seed, packets, rate, by_time) in [
        (Scenario::Mixed, 140_130_930, 8_776, 0.0300, false),
        (Scenario::Mixed, 635_886_593, 23_984, 0.0352, true),
    ] {
        let evs = damaged_events(scenario, seed, packets, rate);
        let twice = if by_time {
            trailed(&evs, 10_000)
        } else {
            doubled_by(&evs, 10_000)
        };
        let twice = report_in_batches(&twice, 64);
        reads_as_held_once(&report(&evs), &twice, &format!("seed {seed}"));
    }
}

/// A capture held twice reads the same whatever chunks it comes in, in nanoseconds and in
/// microseconds. Before (session 52), the sample for copies at a lag tried to decide at the
/// end of each batch, so chunks of another size could make it decide otherwise: this lossy
/// capture's copies, 300 ns behind, were all found in chunks of 230 events and 273 of them
/// were not in chunks of 1,900 (in microseconds, 94 more resends then).
#[test]
fn a_capture_held_twice_reads_the_same_in_any_chunks() {
    let evs = damaged_events(Scenario::Lossy, 1_054_916_739, 17_579, 0.0478);
    let evs = doubled_by(&evs, LAG);
    for unit in [1, 1000] {
        let reports: Vec<String> = [230, 1900, evs.len()]
            .into_iter()
            .map(|size| {
                let mut a = Analyzer::new(Config::default());
                for chunk in evs.chunks(size) {
                    let mut b = Batch::default();
                    b.set_file(0, unit);
                    for e in chunk {
                        let mut e = e.clone();
                        e.meta.ts_ns -= e.meta.ts_ns % unit;
                        b.push(e);
                    }
                    a.feed(&mut b);
                }
                serde_json::to_string(&a.finish()).expect("report serialises")
            })
            .collect();
        assert!(reports.windows(2).all(|w| w[0] == w[1]), "unit {unit}");
    }
}

/// The report of `evs` fed in batches of `n` events, their files changing at `split`, copies
/// at a lag looked for as `lag` says: the report, or the lags found while speculating.
fn report_of(evs: &[Event], n: usize, split: usize, lag: LagCopies) -> Result<String, Lags> {
    let mut a = Analyzer::new(Config {
        lag_copies: lag,
        ..Config::default()
    });
    for (file, part) in [&evs[..split], &evs[split..]].into_iter().enumerate() {
        for chunk in part.chunks(n) {
            let mut b = Batch::default();
            b.set_file(file as u32, 1);
            for e in chunk {
                b.push(e.clone());
            }
            a.feed(&mut b);
            if let Some(l) = a.run_again() {
                return Err(l);
            }
        }
    }
    a.end_of_input();
    match a.run_again() {
        Some(l) => Err(l),
        None => Ok(serde_json::to_string(&a.finish()).expect("report serialises")),
    }
}

/// Analysed at once while sampled, and read again with the lags known when the sample found
/// copies, a capture reads as when its first packets were held back: held twice at lags
/// short and long, in time order or each copy right behind its frame, damaged or not, in
/// batches of several sizes, in one file or two (the sample decides when the first ends).
#[test]
fn speculating_and_reading_again_reads_as_holding_back() {
    let mut found = 0;
    for (scenario, seed, packets, rate) in [
        (Scenario::Mixed, 140_130_930, 8_776, 0.0300),
        (Scenario::Lossy, 1_054_916_739, 17_579, 0.0478),
        (Scenario::Clean, 7, 12_000, 0.0),
        (Scenario::Reorder, 11, 6_000, 0.01),
    ] {
        let evs = damaged_events(scenario, seed, packets, rate);
        assert!(evs.len() > 5_000, "{scenario:?}: {} events", evs.len());
        let cases = [
            (evs.clone(), false),
            (doubled_by(&evs, LAG), true),
            (doubled_by(&evs, 20_000), true),
            (trailed(&evs, 10_000), true),
        ];
        for (capture, doubled) in cases {
            for (n, split) in [(230, capture.len()), (1_900, capture.len()), (1_900, 3_000)] {
                let name = format!("{scenario:?} seed {seed}, {n}, split {split}");
                let held = report_of(&capture, n, split, LagCopies::Hold).expect("held back");
                let again = match report_of(&capture, n, split, LagCopies::Speculate) {
                    Ok(report) => {
                        assert!(!doubled || split < capture.len(), "{name}: copies missed");
                        report
                    }
                    Err(lags) => {
                        found += 1;
                        report_of(&capture, n, split, LagCopies::Known(lags)).expect("known")
                    }
                };
                assert!(held == again, "{name}");
            }
        }
    }
    assert!(found >= 20, "{found} passes read again");
}
