//! READ responses are data like requests: a flow's goodput counts their first copies, a READ
//! request resent for responses that went missing is a re-read (no ACK timeout), and DCQCN
//! figures (CE → CNP, the sender's rate around CNPs) follow CE marks on them to the CNPs
//! the READ's requester sends back to the responder's QP (storage reads, NVMe-oF writes).

mod common;

use common::flow;
use rdmascope_analyze::{Event, ExtWord};
use rdmascope_wire::opcode::{OpInfo, Operation};
use serde_json::Value;

/// A READ response that carries data.
fn is_read_response(e: &Event) -> bool {
    e.bth
        .is_some_and(|b| OpInfo::of(b.opcode).op.is_response() && e.payload_len > 0)
}

/// The finding `code` of report `r`.
fn finding<'a>(r: &'a Value, code: &str) -> Option<&'a Value> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
}

/// Every 2nd READ response of one flow CE-marked, each answered 20 ns later by a CNP from the
/// READ's requester to the responder's QP: each CNP's CE → CNP time is 20 ns, and the responder's
/// rate before and after CNPs is that of its READ responses (bytes in the ten whole 10 µs
/// buckets before the CNP's own, and in the 100 µs after a CNP with none under way).
#[test]
fn cnps_for_ce_marked_read_responses_measure_their_sender() {
    let evs = common::scenario_events(rdmascope_synth::Scenario::Clean, 8000);
    // The flow with the most READ responses.
    let key = |e: &Event| (e.nodes.unwrap(), e.bth.unwrap().destqp);
    let mut counts = std::collections::BTreeMap::new();
    for e in evs.iter().filter(|e| is_read_response(e)) {
        *counts.entry(key(e)).or_insert(0) += 1;
    }
    let (&((b, a), qp_a), _) = counts
        .iter()
        .max_by_key(|&(_, n)| *n)
        .expect("READ responses");
    let of_flow =
        |e: &Event| is_read_response(e) && e.nodes == Some((b, a)) && e.bth.unwrap().destqp == qp_a;
    // A READ request of the requester's: the CNP travels on its flow, to the responder's QP.
    let request = evs
        .iter()
        .find(|e| {
            e.nodes == Some((a, b))
                && e.bth
                    .is_some_and(|x| OpInfo::of(x.opcode).op == Operation::ReadRequest)
        })
        .unwrap()
        .clone();
    let qp_b = request.bth.unwrap().destqp;
    let mut out = Vec::new();
    let (mut cnps, mut responses) = (Vec::new(), Vec::new());
    let mut seen = 0;
    for e in &evs {
        let mut e = e.clone();
        let mark = of_flow(&e) && {
            seen += 1;
            seen % 2 == 0
        };
        if of_flow(&e) {
            responses.push((e.meta.ts_ns, u64::from(e.meta.orig_len)));
        }
        if mark {
            e.ecn = Some(3);
            let mut c = request.clone();
            c.meta.ts_ns = e.meta.ts_ns + 20;
            let mut bth = c.bth.unwrap();
            (bth.opcode, bth.psn, bth.ackreq) = (0x81, 0, false);
            c.bth = Some(bth);
            (c.payload_len, c.aeth, c.ext, c.ecn, c.icrc) =
                (16, None, ExtWord::None, Some(2), None);
            cnps.push(c.meta.ts_ns);
            out.push(e);
            out.push(c);
        } else {
            out.push(e);
        }
    }
    out.sort_by_key(|e| e.meta.ts_ns);
    for (i, e) in out.iter_mut().enumerate() {
        e.meta.number = i as u64 + 1;
    }
    assert!(cnps.len() >= 10, "{} CNPs", cnps.len());
    let r = common::report(&out);
    let (a, b) = (a.to_string(), b.to_string());
    let cnp_flow = flow(&r, &a, &b, qp_b);
    assert_eq!(cnp_flow["cnp"], cnps.len() as u64);
    let lat = &cnp_flow["ce_to_cnp_ns"];
    assert_eq!(
        (
            lat["count"].as_u64(),
            lat["p50"].as_u64(),
            lat["max"].as_u64()
        ),
        (Some(cnps.len() as u64), Some(20), Some(20))
    );
    // The rates, as their definition gives them.
    let before: Vec<u64> = cnps
        .iter()
        .map(|&t| {
            let now = t / 10_000;
            let bytes: u64 = responses
                .iter()
                .filter(|&&(ts, _)| ts / 10_000 < now && ts / 10_000 + 10 >= now)
                .map(|&(_, n)| n)
                .sum();
            bytes * 80_000
        })
        .collect();
    let mut after = Vec::new();
    let mut window: Option<(u64, u64)> = None;
    let (mut next_cnp, last) = (0, responses.last().unwrap().0);
    for &(ts, n) in &responses {
        // A CNP before this response starts a window if none is open.
        while next_cnp < cnps.len() && cnps[next_cnp] < ts {
            if window.is_none() {
                window = Some((cnps[next_cnp] + 100_000, 0));
            }
            next_cnp += 1;
        }
        if let Some((end, acc)) = window {
            if ts >= end {
                after.push(acc * 80_000);
                window = None;
            } else {
                window = Some((end, acc + n));
            }
        }
    }
    assert!(!after.is_empty() && last > 100_000);
    let mean = |v: &[u64]| v.iter().sum::<u64>() / v.len() as u64;
    let sender = flow(&r, &b, &a, qp_a);
    assert_eq!(sender["rate_before_cnp_bps"], mean(&before));
    assert_eq!(sender["rate_after_cnp_bps"], mean(&after));
    let ecn = finding(&r, "congestion.ecn").expect("congestion.ecn");
    assert!(
        ecn["evidence"]
            .as_array()
            .unwrap()
            .contains(&Value::from("CE → CNP (median of flows): 20 ns")),
        "{ecn}"
    );
}

#[test]
fn read_responses_sent_again_add_no_goodput() {
    let evs = common::clean_events();
    let first = evs
        .iter()
        .find(|e| is_read_response(e))
        .expect("a READ response");
    let key = (first.nodes, first.bth.map(|b| b.destqp));
    let again: Vec<_> = evs
        .iter()
        .filter(|e| is_read_response(e) && (e.nodes, e.bth.map(|b| b.destqp)) == key)
        .take(6)
        .cloned()
        .collect();
    let last = evs.last().unwrap().meta;
    // Sent again 100 µs after the capture's last packet: a retry, not the capture's copy.
    let mut more = evs.clone();
    for (i, e) in again.iter().enumerate() {
        let mut e = e.clone();
        e.meta.ts_ns = last.ts_ns + 100_000 + 500 * i as u64;
        e.meta.number = last.number + 1 + i as u64;
        more.push(e);
    }
    let find = |r: &Value| {
        let (src, dst) = key.0.unwrap();
        flow(r, &src.to_string(), &dst.to_string(), key.1.unwrap())
    };
    let (before, after) = (find(&common::report(&evs)), find(&common::report(&more)));
    let n = |f: &serde_json::Value, k: &str| f[k].as_u64().unwrap();
    let resent: u64 = again.iter().map(|e| u64::from(e.payload_len)).sum();
    assert_eq!(
        n(&after, "payload_bytes"),
        n(&before, "payload_bytes") + resent
    );
    assert_eq!(n(&before, "retransmitted_packets"), 0);
    let span = |f: &serde_json::Value| n(f, "last_ts_ns") - n(f, "first_ts_ns");
    let goodput = |bytes: u64, span: u64| u128::from(bytes) * 8_000_000_000 / u128::from(span);
    let first_copies = n(&before, "payload_bytes") - 16 * n(&before, "cnp");
    assert!(first_copies > 0);
    assert_eq!(
        u128::from(n(&before, "goodput_bps")),
        goodput(first_copies, span(&before))
    );
    assert_eq!(
        u128::from(n(&after, "goodput_bps")),
        goodput(first_copies, span(&after))
    );
}

/// Each READ request of `evs`, with the READ responses that answer it (its PSN and the 15 after).
fn reads_and_responses(evs: &[Event]) -> impl Iterator<Item = (&Event, Vec<Event>)> {
    let is_read = |e: &&Event| {
        e.bth
            .is_some_and(|b| OpInfo::of(b.opcode).op == Operation::ReadRequest)
    };
    evs.iter().filter(is_read).map(|rq| {
        let (a, b) = rq.nodes.unwrap();
        let psn = rq.bth.unwrap().psn;
        let answers = |e: &&Event| {
            e.nodes == Some((b, a))
                && is_read_response(e)
                && (0..16).contains(&(e.bth.unwrap().psn.wrapping_sub(psn) & 0xff_ffff))
        };
        (rq, evs.iter().filter(answers).cloned().collect())
    })
}

/// The `clean` scenario's events with one READ's responses from its `lost`-th on lost (`tail`:
/// that one only, else it alone is lost and the rest come) before the capture point, the READ
/// requested again from there `wait` ns after its last response captured, and its responses
/// from there sent again: the report, and the number of responses sent again that had come.
fn read_again(lost: usize, tail: bool, wait: u64) -> (Value, u64) {
    let evs = common::clean_events();
    for (rq, resp) in reads_and_responses(&evs) {
        if resp.len() < 4 {
            continue;
        }
        let lost = if tail { resp.len() - 1 } else { lost };
        let gone = resp[lost].meta.number;
        let last = resp.last().unwrap().meta.ts_ns;
        let mut out: Vec<Event> = evs
            .iter()
            .filter(|e| e.meta.number != gone)
            .cloned()
            .collect();
        let mut retry = rq.clone();
        retry.meta.ts_ns = last + wait;
        let mut bth = retry.bth.unwrap();
        bth.psn = resp[lost].bth.unwrap().psn;
        retry.bth = Some(bth);
        out.push(retry);
        for (k, e) in resp[lost..].iter().enumerate() {
            let mut e = e.clone();
            e.meta.ts_ns = last + wait + 1_000 + 100 * k as u64;
            out.push(e);
        }
        out.sort_by_key(|e| e.meta.ts_ns);
        for (i, e) in out.iter_mut().enumerate() {
            e.meta.number = i as u64 + 1;
        }
        return (common::report(&out), (resp.len() - lost - 1) as u64);
    }
    panic!("no READ with 4 responses or more");
}

/// A response lost before the capture point in the middle of a READ: the requester sees the
/// next one, reads again from the missing PSN 3 µs later, and the responder sends the rest
/// again. That is loss recovered by a re-read, not an ACK timeout.
#[test]
fn a_read_requested_again_for_a_missing_response_is_a_re_read() {
    let (r, again) = read_again(2, false, 3_000);
    let t = &r["totals"];
    assert_eq!(t["timeouts"], 0);
    assert_eq!(t["retransmission_triggers"]["read_response_gap"], 1);
    assert_eq!(t["retransmission_triggers"]["timeout"], 0);
    // The READ request, and the responses sent again that had come; the one lost before the
    // capture point fills its gap (the requester asked for it again: lost, not reordered).
    assert!(again > 0);
    assert_eq!(t["retransmitted_packets"], 1 + again);
    assert_eq!(t["gap_filled_packets"], 1);
    assert_eq!(t["reordered_packets"], 0);
    // The READ returned its bytes once: the one lost, when it came, and not those sent again.
    let returned = |r: &Value| -> u64 {
        r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["messages"]["read_bytes_returned"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(
        returned(&r),
        returned(&common::report(&common::clean_events()))
    );
    assert!(finding(&r, "transport.timeout").is_none());
    let loss = finding(&r, "transport.loss").expect("transport.loss");
    assert!(
        loss["summary"]
            .as_str()
            .unwrap()
            .ends_with("; 1 READ re-read after its responses went missing"),
        "{loss}"
    );
}

/// A READ with no request of its flow after it: a response in its middle damaged (dropped by
/// the requester's HCA on its bad ICRC), the READ asked again from it 2 µs after the last
/// response, and the rest sent again. The re-read's PSN is beyond every request PSN seen (the
/// READ's own is the highest), yet it is the READ's: a retransmission, not a new READ (before,
/// it was new and a READ message of its own).
#[test]
fn a_re_read_with_no_request_since_its_read_is_a_retransmission() {
    let evs = common::clean_events();
    for (rq, resp) in reads_and_responses(&evs) {
        let (a, b) = rq.nodes.unwrap();
        let qp = rq.bth.unwrap().destqp;
        let last = resp.last().map_or(0, |e| e.meta.number);
        let request_since = evs.iter().any(|e| {
            e.nodes == Some((a, b))
                && e.bth.is_some_and(|x| x.destqp == qp)
                && e.meta.number > rq.meta.number
                && e.meta.number <= last
        });
        if resp.len() < 4 || request_since {
            continue;
        }
        let mut out: Vec<Event> = evs
            .iter()
            .filter(|e| e.meta.number <= last)
            .cloned()
            .collect();
        let before = common::report(&out);
        let bad = resp[2].meta.number as usize - 1;
        out[bad].icrc = Some(rdmascope_wire::IcrcStatus::Bad);
        let end = resp.last().unwrap().meta.ts_ns;
        let mut retry = rq.clone();
        retry.meta.ts_ns = end + 2_000;
        let mut bth = retry.bth.unwrap();
        bth.psn = resp[2].bth.unwrap().psn;
        retry.bth = Some(bth);
        out.push(retry);
        for (k, e) in resp[2..].iter().enumerate() {
            let mut e = e.clone();
            e.meta.ts_ns = end + 3_000 + 100 * k as u64;
            out.push(e);
        }
        for (i, e) in out.iter_mut().enumerate() {
            e.meta.number = i as u64 + 1;
        }
        let r = common::report(&out);
        let (f, was) = (
            flow(&r, &a.to_string(), &b.to_string(), qp),
            flow(&before, &a.to_string(), &b.to_string(), qp),
        );
        assert_eq!(f["retransmitted_packets"], 1, "{f}");
        assert_eq!(f["retransmission_triggers"]["read_response_gap"], 1);
        assert_eq!(f["timeouts"], 0);
        // The same READs, asking for the same bytes, as before it was read again.
        for k in ["read", "read_bytes_requested"] {
            assert_eq!(f["messages"][k], was["messages"][k], "{k}");
        }
        return;
    }
    panic!("no READ with 4 responses or more and no request after it");
}

/// The READ's last response lost: nothing after it tells the requester, which waits out its
/// ACK timeout (here 20 µs) and reads it again: a retransmission after a timeout (its PSN, inside
/// the READ's, was no request's before: not a packet lost before the capture point).
#[test]
fn a_read_s_lost_last_response_is_read_again_after_a_timeout() {
    let (r, again) = read_again(0, true, 20_000);
    let t = &r["totals"];
    assert_eq!(again, 0);
    assert_eq!(t["timeouts"], 1);
    assert_eq!(t["retransmitted_packets"], 1);
    assert_eq!(t["gap_filled_packets"], 0);
    assert_eq!(t["retransmission_triggers"]["read_response_gap"], 0);
}

/// A response lost in the middle of a READ, and the READ asked again from it only 20 µs after
/// the last response came: the requester did not act on the responses beyond the gap (a
/// requester reads again as soon as one comes) but waited out its ACK timer, so it is a
/// retransmission after a timeout (before: a re-read).
#[test]
fn a_read_asked_again_long_after_its_responses_is_a_timeout() {
    let (r, again) = read_again(2, false, 20_000);
    let t = &r["totals"];
    assert!(again > 0);
    assert_eq!(t["retransmitted_packets"], 1 + again);
    assert_eq!(t["timeouts"], 1);
    assert_eq!(t["retransmission_triggers"]["timeout"], 1);
    assert_eq!(t["retransmission_triggers"]["read_response_gap"], 0);
}

/// A READ response first seen behind the next two is its flow's gap fill (before, READ
/// responses counted in no PSN counter), no retransmission, and first-copy goodput. Without a
/// request resent it may be late rather than lost, but a strict requester reads again on it
/// either way (requests have a NAK to tell that; responses have none), so it is not
/// `reordered`.
#[test]
fn a_read_response_first_seen_behind_later_ones_fills_a_gap() {
    let evs = common::clean_events();
    let mut reads = evs.iter().filter(|e| {
        e.bth
            .is_some_and(|b| OpInfo::of(b.opcode).op == Operation::ReadRequest)
    });
    let (late, flow_of) = reads
        .find_map(|rq| {
            let (a, b) = rq.nodes.unwrap();
            let psn = rq.bth.unwrap().psn;
            let resp: Vec<&Event> = evs
                .iter()
                .filter(|e| {
                    e.nodes == Some((b, a))
                        && is_read_response(e)
                        && (0..16).contains(&(e.bth.unwrap().psn.wrapping_sub(psn) & 0xff_ffff))
                })
                .collect();
            (resp.len() >= 4)
                .then(|| (resp[1].meta.number, resp[3].meta.ts_ns))
                .map(|x| (x, (b, a, resp[1].bth.unwrap().destqp)))
        })
        .expect("a READ with 4 responses or more");
    let (number, after) = late;
    let mut out: Vec<Event> = evs.clone();
    for e in &mut out {
        if e.meta.number == number {
            e.meta.ts_ns = after + 10;
        }
    }
    out.sort_by_key(|e| e.meta.ts_ns);
    for (i, e) in out.iter_mut().enumerate() {
        e.meta.number = i as u64 + 1;
    }
    let (r, clean) = (common::report(&out), common::report(&evs));
    let (b, a, qp) = flow_of;
    let f = flow(&r, &b.to_string(), &a.to_string(), qp);
    assert_eq!(f["gap_filled_packets"], 1);
    assert_eq!(f["reordered_packets"], 0);
    assert_eq!(f["retransmitted_packets"], 0);
    assert_eq!(r["totals"]["gap_filled_packets"], 1);
    assert_eq!(r["totals"]["retransmitted_packets"], 0);
    assert_eq!(
        f["goodput_bps"],
        flow(&clean, &b.to_string(), &a.to_string(), qp)["goodput_bps"]
    );
    assert!(finding(&r, "transport.loss").is_some());
}

/// A request right after a READ's PSNs, lost before the capture point and not seen again in
/// it, is missing: the READ's last response shows where its PSNs end, so the PSN after them is
/// no longer taken for one its responses consumed (before: 0 missing).
#[test]
fn a_request_lost_right_after_a_read_is_missing() {
    let evs = common::scenario_events(rdmascope_synth::Scenario::Clean, 8000);
    let op = |e: &Event| e.bth.map(|b| OpInfo::of(b.opcode).op);
    // A READ request followed on its flow by a request with the PSN after the READ's last
    // response (the responses come on the reverse node pair, to the requester's QP).
    let mut lost = None;
    for (i, r) in evs.iter().enumerate() {
        if op(r) != Some(Operation::ReadRequest) {
            continue;
        }
        let (nodes, b) = (r.nodes.unwrap(), r.bth.unwrap());
        let last = evs[i..].iter().find(|e| {
            e.nodes == Some((nodes.1, nodes.0))
                && matches!(
                    op(e),
                    Some(Operation::ReadResponseLast | Operation::ReadResponseOnly)
                )
        });
        let Some(end) = last.map(|e| e.bth.unwrap().psn) else {
            continue;
        };
        if end == b.psn {
            continue;
        }
        let next = evs[i + 1..].iter().position(|e| {
            e.nodes == Some(nodes)
                && e.bth
                    .is_some_and(|x| x.destqp == b.destqp && x.psn == (end + 1) & 0xff_ffff)
                && op(e) != Some(Operation::ReadRequest)
                && !OpInfo::of(e.bth.unwrap().opcode).op.is_response()
        });
        if let Some(j) = next {
            lost = Some((i + 1 + j, nodes, b.destqp));
            break;
        }
    }
    let (j, nodes, qp) = lost.expect("a request right after a READ's PSNs");
    let mut cut: Vec<Event> = evs.clone();
    cut.remove(j);
    let once = common::report(&evs);
    let r = common::report(&cut);
    let (src, dst) = (nodes.0.to_string(), nodes.1.to_string());
    assert_eq!(flow(&once, &src, &dst, qp)["missing_packets"], 0);
    assert_eq!(flow(&r, &src, &dst, qp)["missing_packets"], 1);
}
