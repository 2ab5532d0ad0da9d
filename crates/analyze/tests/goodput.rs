//! A flow's goodput counts the first copy of each packet that carries data, requests and READ
//! responses alike: the responses of a READ answered again add packets and bytes, no goodput.

mod common;

use rdmascope_wire::opcode::OpInfo;

#[test]
fn read_responses_sent_again_add_no_goodput() {
    let evs = common::clean_events();
    let is_read_response = |e: &rdmascope_analyze::Event| {
        e.bth
            .is_some_and(|b| OpInfo::of(b.opcode).op.is_response() && e.payload_len > 0)
    };
    let first = evs
        .iter()
        .find(|e| is_read_response(e))
        .expect("a READ response");
    let flow = (first.nodes, first.bth.map(|b| b.destqp));
    let again: Vec<_> = evs
        .iter()
        .filter(|e| is_read_response(e) && (e.nodes, e.bth.map(|b| b.destqp)) == flow)
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
    let find = |r: &serde_json::Value| {
        let (src, dst) = flow.0.unwrap();
        r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| {
                f["src"] == src.to_string()
                    && f["dst"] == dst.to_string()
                    && f["dest_qp"] == flow.1.unwrap()
            })
            .cloned()
            .unwrap()
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
