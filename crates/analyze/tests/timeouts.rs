//! The time a requester's ACK timer ran before the go-back-N passes it started
//! (`timeout_wait_ns`) tells the QP's local ACK timeout, and `transport.timeout` names it;
//! which retries are timeouts on a connection never answered.

mod common;

use common::{is_answer, report, scenario_events};
use rdmascope_analyze::{Bth, Event};
use rdmascope_synth::Scenario;
use serde_json::Value;

#[test]
fn the_wait_before_a_timeout_tells_the_local_ack_timeout() {
    // `lossy`: one connection's ACKs are lost for a while, local ACK timeout 6; `errors`:
    // two requesters resend until they give up, local ACK timeout 4.
    for (scenario, code) in [(Scenario::Lossy, 6), (Scenario::Errors, 4)] {
        let r = report(&scenario_events(scenario, 30_000));
        let timeout = 4_096u64 << code;
        let timed: Vec<_> = r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["timeouts"].as_u64() > Some(0))
            .collect();
        assert!(!timed.is_empty(), "{scenario:?}: no timeouts");
        for f in timed {
            let w = &f["timeout_wait_ns"];
            let p50 = w["p50"].as_u64().unwrap();
            assert!(w["count"].as_u64() > Some(0), "{scenario:?}: {w}");
            // The timer runs the timeout; the simulator's frames leave a little later.
            assert!(
                (timeout..timeout + timeout / 20).contains(&p50),
                "{scenario:?}: {p50} against {timeout}"
            );
        }
        let finding = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "transport.timeout")
            .unwrap();
        let advice = finding["advice"].as_str().unwrap();
        assert!(
            advice.contains(&format!("a local ACK timeout of {code} ")),
            "{scenario:?}: {advice}"
        );
    }
}

/// Retries on a connection never answered are ACK timeouts when the responder's node is heard
/// in the capture (a CNP to the requester's QP, as from an incast's receiver at 10 Gb/s), so
/// a NAK would be too; with nothing at all from that node (a one-way capture may hide the
/// NAKs) what started them is unknown.
#[test]
fn retries_never_answered_are_timeouts_when_the_responder_is_heard() {
    let evs = scenario_events(Scenario::Errors, 30_000);
    let full = report(&evs);
    let flows = |r: &Value| r["flows"].as_array().unwrap().clone();
    let gave_up = flows(&full)
        .into_iter()
        .find(|f| f["timeouts_in_a_row"].as_u64() >= Some(7))
        .expect("a requester that gives up");
    let (src, dst) = (gave_up["src"].clone(), gave_up["dst"].clone());
    let of = |r: &Value| {
        flows(r)
            .into_iter()
            .find(|f| f["src"] == src && f["dst"] == dst && f["dest_qp"] == gave_up["dest_qp"])
            .unwrap()
    };
    let back = |e: &Event| {
        e.nodes
            .is_some_and(|(s, d)| s.to_string() == dst && d.to_string() == src)
    };
    assert!(
        evs.iter().filter(|e| back(e)).all(is_answer),
        "only the connection's answers come back"
    );
    let one_way: Vec<Event> = evs.iter().filter(|e| !back(e)).cloned().collect();
    let f = of(&report(&one_way));
    assert!(f["retransmitted_packets"].as_u64() > Some(0), "{f}");
    assert_eq!(f["timeouts"], 0, "one way");
    assert_eq!(f["timeouts_in_a_row"], 0, "one way");
    // The first answer becomes a CNP: the responder's node is heard, its answers are not.
    let first = evs.iter().position(back).unwrap();
    let mut heard = evs.clone();
    let cnp = &mut heard[first];
    cnp.aeth = None;
    cnp.bth = cnp.bth.map(|b| Bth {
        opcode: 0x81,
        ackreq: false,
        ..b
    });
    heard.retain(|e| !(back(e) && is_answer(e)));
    let r = report(&heard);
    let f = of(&r);
    assert_eq!(f["timeouts"], gave_up["timeouts"], "heard");
    assert_eq!(
        f["timeouts_in_a_row"], gave_up["timeouts_in_a_row"],
        "heard"
    );
    let codes: Vec<_> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].clone())
        .collect();
    assert!(
        codes.contains(&"transport.retry_exceeded".into()),
        "{codes:?}"
    );
}
