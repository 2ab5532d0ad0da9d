//! The time a requester's ACK timer ran before the go-back-N passes it started
//! (`timeout_wait_ns`) tells the QP's local ACK timeout, and `transport.timeout` names it.

mod common;

use common::{report, scenario_events};
use rdmascope_synth::Scenario;

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
