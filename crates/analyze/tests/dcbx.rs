//! DCB settings from LLDP (IEEE 802.1Q Annex D): the two ends of a link must enable PFC on the
//! same priorities unless one is willing to follow the other, RoCE's application priority must
//! be one of them, and so must the priority RDMA data travels on.

use rdmascope_analyze::{Analyzer, Config, Event, PacketMeta};
use rdmascope_synth::{generate, GenOptions, Scenario, Sink};
use rdmascope_wire::link::linktype;
use rdmascope_wire::lldp::PfcConfig;
use rdmascope_wire::DecodeOptions;
use serde_json::Value;

/// An LLDP frame from `mac` named `name`, advertising PFC and RoCE's priority, as `gen` sends.
fn lldp_frame(mac: [u8; 6], name: &str, pfc: PfcConfig, roce: Option<u8>) -> Vec<u8> {
    let mut f = Vec::new();
    rdmascope_synth::frames::lldp(&mut f, mac, name, pfc, roce);
    f
}

fn pfc(enable: u8, willing: bool) -> PfcConfig {
    PfcConfig {
        willing,
        mbc: false,
        cap: 8,
        enable,
    }
}

/// The Ethernet frames of a small `clean` scenario (RoCEv2 data on DSCP 26: priority 3).
struct Eth(Vec<Vec<u8>>);

impl Sink for Eth {
    fn frame(&mut self, iface: u32, _: u64, _: u32, data: &[u8]) -> std::io::Result<()> {
        if iface == 0 {
            self.0.push(data.to_vec());
        }
        Ok(())
    }
}

fn analyse(lldp: &[Vec<u8>], with_data: bool) -> Value {
    let mut frames: Vec<Vec<u8>> = lldp.to_vec();
    if with_data {
        let mut eth = Eth(Vec::new());
        let o = GenOptions {
            scenario: Scenario::Clean,
            packets: Some(300),
            ..GenOptions::default()
        };
        generate(&o, &mut eth).expect("scenario");
        frames.extend(eth.0);
    }
    let mut a = Analyzer::new(Config::default());
    let opts = DecodeOptions::default();
    for (n, d) in frames.iter().enumerate() {
        let meta = PacketMeta {
            number: n as u64 + 1,
            ts_ns: n as u64 * 1000,
            orig_len: d.len() as u32,
            if_id: 0,
            if_speed: None,
        };
        a.event(&Event::decode(
            meta,
            linktype::ETHERNET,
            d,
            d.len() as u32,
            &opts,
        ));
    }
    serde_json::to_value(a.finish()).expect("report serialises")
}

fn codes(r: &Value) -> Vec<String> {
    let mut v: Vec<String> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .filter(|c| c.starts_with("dcbx."))
        .collect();
    v.sort();
    v
}

/// The report's finding of `code`.
fn finding<'a>(r: &'a Value, code: &str) -> &'a Value {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code} finding"))
}

const SWITCH: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
const HOST: [u8; 6] = [0x02, 0, 0, 0, 0, 2];

#[test]
fn agreeing_ends_give_no_finding_and_are_reported() {
    let r = analyse(
        &[
            lldp_frame(SWITCH, "leaf1", pfc(1 << 3, false), Some(3)),
            lldp_frame(HOST, "host7", pfc(1 << 3, false), None),
            lldp_frame(SWITCH, "leaf1", pfc(1 << 3, false), Some(3)),
        ],
        true,
    );
    assert_eq!(codes(&r), Vec::<String>::new());
    let s = &r["dcbx"]["senders"];
    assert_eq!(s.as_array().unwrap().len(), 2);
    assert_eq!(s[0]["name"], "leaf1");
    assert_eq!(s[0]["port"], "eth0");
    assert_eq!(s[0]["frames"], 2);
    assert_eq!(s[0]["first_frame"], 1);
    assert_eq!(s[0]["pfc"]["enabled"], serde_json::json!([3]));
    assert_eq!(s[0]["roce_priorities"], serde_json::json!([3]));
    assert_eq!(s[0]["app"][0]["protocol"], 4791);
    assert_eq!(s[1]["src_mac"], "02:00:00:00:00:02");
}

#[test]
fn a_willing_end_follows_its_peer() {
    let r = analyse(
        &[
            lldp_frame(SWITCH, "leaf1", pfc(1 << 3, false), None),
            lldp_frame(HOST, "host7", pfc(0, true), None),
        ],
        false,
    );
    assert_eq!(codes(&r), Vec::<String>::new());
}

#[test]
fn ends_that_disagree_roce_off_pfc_and_data_off_pfc_are_found() {
    let r = analyse(
        &[
            lldp_frame(SWITCH, "leaf1", pfc(1 << 4, false), Some(5)),
            lldp_frame(HOST, "host7", pfc(1 << 3 | 1 << 4, false), None),
        ],
        false,
    );
    assert_eq!(codes(&r), ["dcbx.pfc_mismatch", "dcbx.roce_not_lossless"]);
    let f = finding(&r, "dcbx.pfc_mismatch");
    assert_eq!(f["frames"], serde_json::json!([1, 2]));
    let ev = f["evidence"].to_string();
    assert!(
        ev.contains("leaf1 port eth0 (02:00:00:00:00:01): PFC on 4"),
        "{ev}"
    );
    assert!(ev.contains("PFC on 3, 4"), "{ev}");

    // The `clean` scenario's data travels on priority 3 (DSCP 26); PFC only on 4 and 5.
    let r = analyse(
        &[lldp_frame(
            SWITCH,
            "leaf1",
            pfc(1 << 4 | 1 << 5, false),
            None,
        )],
        true,
    );
    assert_eq!(codes(&r), ["dcbx.priority_mismatch"]);
}

/// Senders beyond the limit are counted, not followed.
#[test]
fn senders_beyond_the_limit_are_counted() {
    let frames: Vec<Vec<u8>> = (0..4100u32)
        .map(|i| {
            let b = i.to_be_bytes();
            lldp_frame([2, 0, b[0], b[1], b[2], b[3]], "h", pfc(8, true), None)
        })
        .collect();
    let r = analyse(&frames, false);
    assert_eq!(r["dcbx"]["senders"].as_array().unwrap().len(), 4096);
    assert_eq!(r["dcbx"]["untracked_frames"], 4);
}

/// Three senders (a mirror of several ports): two settings among them are still a mismatch,
/// and the summary does not claim they are the two ends of one link.
#[test]
fn many_senders_with_two_settings() {
    let r = analyse(
        &[
            lldp_frame(SWITCH, "leaf1", pfc(1 << 3, false), None),
            lldp_frame(HOST, "host7", pfc(1 << 3, false), None),
            lldp_frame([0x02, 0, 0, 0, 0, 3], "host8", pfc(1 << 4, false), None),
        ],
        false,
    );
    assert_eq!(codes(&r), ["dcbx.pfc_mismatch"]);
    let f = finding(&r, "dcbx.pfc_mismatch");
    let summary = f["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("3 LLDP senders") && summary.contains("2 different sets"),
        "{summary}"
    );
    assert_eq!(f["frames"], serde_json::json!([1, 2, 3]));
}

/// A switch speaking CEE DCBX (the pre-standard TLV) is read in IEEE terms: its PFC map and
/// willing bit, and each priority of an application entry's map.
#[test]
fn cee_dcbx_counts_as_dcb() {
    use rdmascope_wire::lldp::{emit_cee_tlv, tlv, CeeApp, Tlv};
    let mut f = lldp_frame(SWITCH, "leaf1", pfc(0, false), None);
    // Keep the chassis, port, TTL and name; replace the IEEE PFC TLV and the end.
    let mut at = 14;
    while f[at] >> 1 != tlv::ORG {
        at += 2 + usize::from(u16::from_be_bytes([f[at], f[at + 1]]) & 0x1ff);
    }
    f.resize(at + 64, 0);
    let roce_v1 = CeeApp {
        protocol: 0x8915,
        selector: 0,
        oui: 0,
        priorities: 1 << 5,
    };
    at += emit_cee_tlv(&mut f[at..], false, 1 << 3, &[roce_v1]);
    Tlv::emit_header(tlv::END, 0, &mut f[at..]);
    f.truncate(at + 2);
    let r = analyse(&[f], false);
    let s = &r["dcbx"]["senders"][0];
    assert_eq!(s["pfc"]["enabled"], serde_json::json!([3]), "{s}");
    assert_eq!(s["pfc"]["willing"], false);
    assert_eq!(s["roce_priorities"], serde_json::json!([5]));
    assert_eq!(codes(&r), ["dcbx.roce_not_lossless"]);
}
