//! RoCEv1 traffic (the GRH straight over Ethernet, EtherType 0x8915): said once as information,
//! and as a warning when a host sends RoCEv1 to a host that answers in RoCEv2 (the two ends'
//! GID indexes select entries of different types).

mod common;

use common::{clean_events as events, is_answer};
use rdmascope_analyze::{Event, Node};
use rdmascope_wire::frame::Encap;
use serde_json::Value;

/// `e` as RoCEv1 would carry it: the nodes as the GRH's IPv4-mapped GIDs.
fn as_v1(e: &mut Event) {
    let gid = |n: Node| match n {
        Node::V4(a) => {
            let mut g = [0u8; 16];
            g[10..12].copy_from_slice(&[0xff, 0xff]);
            g[12..].copy_from_slice(&a);
            Node::Gid(g)
        }
        n => n,
    };
    if e.encap == Some(Encap::RoceV2) {
        e.encap = Some(Encap::RoceV1);
        e.nodes = e.nodes.map(|(s, d)| (gid(s), gid(d)));
        e.v4_pair = 0;
        e.udp_sport = None;
        e.ecn = None;
    }
}

fn finding(evs: &[Event]) -> Option<Value> {
    common::finding(evs, "roce.v1")
}

#[test]
fn rocev2_gives_no_finding() {
    assert_eq!(finding(&events()), None);
}

#[test]
fn rocev1_both_ways_is_information() {
    let mut evs = events();
    let rdma = evs.iter().filter(|e| e.bth.is_some()).count();
    evs.iter_mut().for_each(as_v1);
    let f = finding(&evs).expect("roce.v1");
    assert_eq!(f["severity"], "info");
    let ev = f["evidence"].as_array().unwrap();
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert!(
        ev[0]
            .as_str()
            .unwrap()
            .starts_with(&format!("{rdma} packets of RoCEv1")),
        "{ev:?}"
    );
    assert!(f["flows"][0].as_str().unwrap().starts_with("::ffff:"));
}

#[test]
fn requests_in_rocev1_answered_in_rocev2_are_a_warning() {
    let mut evs = events();
    evs.iter_mut().filter(|e| !is_answer(e)).for_each(as_v1);
    let f = finding(&evs).expect("roce.v1");
    assert_eq!(f["severity"], "warning");
    assert!(f["summary"]
        .as_str()
        .unwrap()
        .contains("send different RoCE versions"));
    let ev = f["evidence"].to_string();
    assert!(ev.contains("sends RoCEv1 to"), "{ev}");
    assert!(ev.contains("which sends RoCEv2 back"), "{ev}");
}
