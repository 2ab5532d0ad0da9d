//! The IB VCRC tells where a packet with a bad ICRC was damaged (IBTA §7.8): every hop
//! recomputes the VCRC, so a bad VCRC means the last link, and a bad ICRC under a good VCRC
//! means a switch or the sender. Frames of the `ib` scenario are damaged both ways and the
//! report must count and tell them apart.

use rdmascope_analyze::{Analyzer, Batch, Config, PacketMeta};
use rdmascope_synth::{generate, GenOptions, Scenario, Sink};
use rdmascope_wire::icrc;
use rdmascope_wire::link::{linktype, ErfRepr};
use rdmascope_wire::lrh::LrhPacket;
use rdmascope_wire::DecodeOptions;
use serde_json::Value;

/// The ERF records of the scenario's native IB link.
struct IbFrames(Vec<(u64, u32, Vec<u8>)>);

impl Sink for IbFrames {
    fn frame(&mut self, iface: u32, ts: u64, orig_len: u32, data: &[u8]) -> std::io::Result<()> {
        if iface == 1 {
            self.0.push((ts, orig_len, data.to_vec()));
        }
        Ok(())
    }
}

/// The LRH's offset and the end of the packet (LRH PktLen), where its VCRC is.
fn packet(d: &[u8]) -> (usize, usize) {
    let (_, off) = ErfRepr::parse(d).expect("an ERF record");
    let l = LrhPacket::new_checked(&d[off..]).expect("an LRH");
    (off, off + usize::from(l.pktlen()) * 4)
}

fn analyse(frames: &[(u64, u32, Vec<u8>)]) -> Value {
    let opts = DecodeOptions {
        verify_crc: true,
        ..DecodeOptions::default()
    };
    let mut a = Analyzer::new(Config::default());
    let mut b = Batch::default();
    for (n, (ts, orig_len, d)) in frames.iter().enumerate() {
        let meta = PacketMeta {
            number: n as u64 + 1,
            ts_ns: *ts,
            orig_len: *orig_len,
            if_id: 0,
            if_speed: None,
        };
        b.decode(meta, linktype::ERF, d, *orig_len, &opts);
    }
    a.feed(&mut b);
    serde_json::to_value(a.finish()).expect("report serialises")
}

#[test]
fn vcrc_tells_the_last_link_from_a_switch() {
    let mut frames = IbFrames(Vec::new());
    let o = GenOptions {
        scenario: Scenario::Ib,
        packets: Some(2000),
        ..GenOptions::default()
    };
    generate(&o, &mut frames).expect("scenario");
    let mut frames = frames.0;
    let clean = analyse(&frames);
    let n = frames.len() as u64;
    assert_eq!(clean["totals"]["vcrc"]["ok"], n);
    assert_eq!(clean["totals"]["vcrc"]["bad"], 0);

    // Large packets only, so the byte changed is payload (the ICRC is the 4 bytes before
    // the VCRC).
    let big: Vec<usize> = (0..frames.len())
        .filter(|&i| {
            let (at, end) = packet(&frames[i].2);
            end - at >= 256
        })
        .take(5)
        .collect();
    assert_eq!(big.len(), 5);
    for (k, &i) in big.iter().enumerate() {
        let (at, end) = packet(&frames[i].2);
        let d = &mut frames[i].2;
        d[end - 100] ^= 0x04;
        // The first three as a switch would forward them: a new, good VCRC.
        if k < 3 {
            let v = icrc::vcrc(&d[at..end]).to_le_bytes();
            d[end..end + 2].copy_from_slice(&v);
        }
    }
    let r = analyse(&frames);
    let v = &r["totals"]["vcrc"];
    assert_eq!(r["totals"]["icrc"]["bad"], 5);
    assert_eq!(v["ok"], n - 2);
    assert_eq!(v["bad"], 2);
    assert_eq!(v["ok_with_bad_icrc"], 3);
    assert_eq!(v["bad_with_bad_icrc"], 2);

    let finding = |code: &str| {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == code)
            .unwrap_or_else(|| panic!("no {code} finding"))
            .clone()
    };
    let vf = finding("vcrc.bad");
    let bad_frames: Vec<u64> = big[3..].iter().map(|&i| i as u64 + 1).collect();
    assert_eq!(vf["frames"], serde_json::json!(bad_frames));
    let icf = finding("icrc.bad");
    let evidence = icf["evidence"].to_string();
    assert!(
        evidence.contains("3 of them have a good VCRC"),
        "{evidence}"
    );
    assert!(
        evidence.contains("2 of them have a bad VCRC too"),
        "{evidence}"
    );
    let advice = icf["advice"].as_str().unwrap();
    assert!(advice.contains("inside a switch"), "{advice}");
    // Native IB only: no RoCE advice about rewritten UDP ports.
    assert!(!advice.contains("UDP source port"), "{advice}");
}
