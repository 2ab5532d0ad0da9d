//! A connection whose responder never answers (UDP 4791 filtered one way, a wrong GID or QPN):
//! the requester's requests wait and are retried, and nothing comes back.

mod common;

use common::{clean_events, is_answer, report, scenario_events, scenario_events_cut};
use rdmascope_analyze::Event;
use serde_json::Value;

/// The `clean` scenario's events, those `keep` accepts.
fn events(keep: impl Fn(&Event) -> bool) -> Vec<Event> {
    clean_events().into_iter().filter(keep).collect()
}

fn finding(evs: &[Event]) -> Option<Value> {
    common::finding(evs, "transport.no_response")
}

#[test]
fn answered_requests_give_no_finding() {
    assert_eq!(finding(&events(|_| true)), None);
    // Without the answers, but no retry and a short capture: too early to say.
    assert_eq!(finding(&events(|e| !is_answer(e))), None);
}

#[test]
fn unanswered_and_retried_requests_are_found() {
    let mut evs = events(|e| !is_answer(e));
    // The requester retries its first AckReq request once the rest is sent.
    let first = evs
        .iter()
        .position(|e| e.bth.is_some_and(|b| b.ackreq && b.destqp > 1))
        .expect("an AckReq request");
    let mut again = evs[first].clone();
    let last = evs.last().unwrap().meta;
    again.meta.number = last.number + 1;
    again.meta.ts_ns = last.ts_ns + 1_000;
    evs.push(again);
    let f = finding(&evs).expect("transport.no_response");
    assert_eq!(f["severity"], "warning");
    let ev = f["evidence"].to_string();
    assert!(ev.contains("1 retransmitted"), "{ev}");
    // The newest request still waiting is cited.
    assert_eq!(f["frames"].as_array().map(Vec::len), Some(1), "{f}");
}

#[test]
fn a_capture_with_nothing_from_the_responder_may_be_one_way() {
    // Only the first request's direction, and the capture runs on for two seconds.
    let evs = events(|e| !is_answer(e));
    let (src, dst) = evs
        .iter()
        .find(|e| e.bth.is_some_and(|b| b.ackreq && b.destqp > 1))
        .and_then(|e| e.nodes)
        .expect("an AckReq request");
    let mut evs: Vec<Event> = evs
        .into_iter()
        .filter(|e| e.nodes != Some((dst, src)))
        .collect();
    let mut tail = evs[0].clone();
    tail.bth = None;
    tail.nodes = None;
    tail.meta.number = evs.last().unwrap().meta.number + 1;
    tail.meta.ts_ns = evs.last().unwrap().meta.ts_ns + 2_000_000_000;
    evs.push(tail);
    let f = finding(&evs).expect("transport.no_response");
    assert!(
        f["evidence"]
            .to_string()
            .contains("no packet at all from the responder's node"),
        "{f}"
    );
    assert!(f["advice"].as_str().unwrap().contains("one-way"), "{f}");
}

/// A snaplen that ends inside the AETH (54–57 bytes for RoCEv2 over IPv4) leaves each ACK's
/// and NAK's kind unknown, not the ACK itself: the connections are answered and paired, the
/// retransmissions counted as in the whole capture, and nothing is read as an ACK timeout.
#[test]
fn answers_cut_before_their_aeth_are_still_answers() {
    use rdmascope_synth::Scenario;
    let whole = report(&scenario_events(Scenario::Lossy, 6000));
    for snaplen in [54, 57] {
        let r = report(&scenario_events_cut(Scenario::Lossy, 6000, snaplen));
        let codes = common::codes_but(&r, "");
        assert!(
            !codes.contains(&"transport.no_response".to_string()),
            "{snaplen}: {codes:?}"
        );
        assert!(
            !codes.contains(&"transport.timeout".to_string()),
            "{snaplen}: {codes:?}"
        );
        assert!(
            codes.contains(&"transport.loss".to_string()),
            "{snaplen}: {codes:?}"
        );
        let acks = &r["totals"]["opcodes"]["RC_ACKNOWLEDGE"];
        assert!(acks.as_u64().unwrap() > 0, "{snaplen}");
        assert_eq!(&r["capture"]["cut_before_aeth"], acks, "{snaplen}");
        for k in [
            "retransmitted_packets",
            "gap_filled_packets",
            "missing_packets",
        ] {
            assert_eq!(r["totals"][k], whole["totals"][k], "{snaplen}: {k}");
        }
        assert_eq!(r["totals"]["naks"]["psn_sequence_error"], 0, "{snaplen}");
        assert_eq!(r["totals"]["timeouts"], 0, "{snaplen}");
        // The WRITE/SEND connection, the one whose ACKs black out, and the READs.
        assert_eq!(r["connections"].as_array().unwrap().len(), 3, "{snaplen}");
        let cut = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "capture.truncated")
            .expect("capture.truncated");
        assert_eq!(cut["severity"], "warning", "{snaplen}");
    }
    // A capture that ends right after a gap fill, the resend of a packet lost before the
    // capture point: its NAK may be among the cut answers, so it is not taken for reordering.
    let evs = scenario_events_cut(Scenario::Lossy, 6000, 54);
    let mut seen = std::collections::HashMap::new();
    let fill = evs
        .iter()
        .position(|e| {
            let (Some(b), Some(n)) = (e.bth, e.nodes) else {
                return false;
            };
            // A READ request takes a PSN per response, so its re-read is no gap fill; gen
            // loses none.
            if is_answer(e) || b.destqp <= 1 || b.opcode == 0x0c {
                return false;
            }
            let psns: &mut Vec<u32> = seen.entry((n, b.destqp)).or_default();
            let filled = psns.iter().any(|&p| p > b.psn) && !psns.contains(&b.psn);
            psns.push(b.psn);
            filled
        })
        .expect("a gap fill");
    let r = report(&evs[..=fill]);
    // The gap fill's flow (READ responses lost before the capture point and sent again are
    // gap fills of their own flow).
    let (b, (src, dst)) = (evs[fill].bth.unwrap(), evs[fill].nodes.unwrap());
    let flow = common::flow(&r, &src.to_string(), &dst.to_string(), b.destqp);
    assert_eq!(flow["gap_filled_packets"], 1);
    assert_eq!(r["totals"]["reordered_packets"], 0);
    // The whole capture reads its NAKs and its timeout.
    assert!(
        whole["totals"]["naks"]["psn_sequence_error"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(whole["totals"]["timeouts"].as_u64().unwrap() > 0);
}
