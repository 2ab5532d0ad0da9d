//! A connection whose responder never answers (UDP 4791 filtered one way, a wrong GID or QPN):
//! the requester's requests wait and are retried, and nothing comes back.

mod common;

use common::{clean_events, is_answer};
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
