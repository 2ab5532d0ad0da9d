//! PFC / PAUSE episode accounting: start at a non-zero quanta frame, extend to
//! max(end, ts + quanta time) on each refresh, end at XON or at expiry.

use rdmascope_analyze::{Analyzer, Config, PacketMeta};
use rdmascope_wire::{DecodeOptions, Frame};

/// A PFC frame from `src` enabling `prio` with `quanta` (0 = XON).
fn pfc(src: u8, prio: u8, quanta: u16) -> Vec<u8> {
    let mut f = vec![
        0x01,
        0x80,
        0xc2,
        0,
        0,
        0x01,
        2,
        0,
        0,
        0,
        0,
        src,
        0x88,
        0x08,
        0x01,
        0x01,
        0,
        1 << prio,
    ];
    for p in 0..8 {
        let q = if p == prio { quanta } else { 0 };
        f.extend_from_slice(&q.to_be_bytes());
    }
    f.resize(60, 0);
    f
}

fn pause(src: u8, quanta: u16) -> Vec<u8> {
    let mut f = vec![
        0x01, 0x80, 0xc2, 0, 0, 0x01, 2, 0, 0, 0, 0, src, 0x88, 0x08, 0x00, 0x01,
    ];
    f.extend_from_slice(&quanta.to_be_bytes());
    f.resize(60, 0);
    f
}

fn run(frames: &[(u64, Vec<u8>)], link: u64) -> rdmascope_analyze::Report {
    let frames: Vec<_> = frames
        .iter()
        .map(|(ts, d)| (*ts, None, d.clone()))
        .collect();
    run_on(&frames, Some(link))
}

/// Frames (timestamp, the `if_speed` of their interface, bytes); `link` as `--link-speed`.
fn run_on(frames: &[(u64, Option<u64>, Vec<u8>)], link: Option<u64>) -> rdmascope_analyze::Report {
    let mut a = Analyzer::new(Config {
        link_bps: link,
        ..Config::default()
    });
    for (i, (ts, if_speed, d)) in frames.iter().enumerate() {
        let f = Frame::decode(1, d, d.len() as u32, &DecodeOptions::default());
        a.packet(
            &PacketMeta {
                number: i as u64 + 1,
                ts_ns: *ts,
                orig_len: d.len() as u32,
                if_id: 0,
                if_speed: *if_speed,
            },
            &f,
        );
    }
    a.finish()
}

const FULL_100G: u64 = 335_540; // 65535 quanta × 512 bits at 100 Gb/s, rounded up

#[test]
fn xoff_refresh_xon_is_one_episode() {
    let r = run(
        &[
            (1_000, pfc(1, 3, 0xffff)),
            (101_000, pfc(1, 3, 0xffff)),
            (251_000, pfc(1, 3, 0)),
        ],
        100_000_000_000,
    );
    assert_eq!(r.pfc.frames, 3);
    assert_eq!((r.pfc.xoff_frames, r.pfc.xon_frames), (2, 1));
    assert_eq!(r.pfc.pause_episodes, 1);
    assert_eq!(r.pfc.pause_ns_total, 250_000);
    assert_eq!(r.pfc.by_port[0].priority, 3);
}

#[test]
fn an_unrefreshed_pause_expires() {
    // 1000 quanta at 100G = 5.12 µs; the next XOFF comes long after: two episodes.
    let r = run(
        &[(0, pfc(1, 3, 1000)), (1_000_000, pfc(1, 3, 1000))],
        100_000_000_000,
    );
    assert_eq!(r.pfc.pause_episodes, 2);
    assert_eq!(r.pfc.pause_ns_total, 2 * 5_120);
}

#[test]
fn refreshes_extend_and_storms_are_found() {
    // Refreshed every half pause for 2 ms and never released: a storm.
    let frames: Vec<(u64, Vec<u8>)> = (0..12).map(|i| (i * 167_000, pfc(9, 4, 0xffff))).collect();
    let r = run(&frames, 100_000_000_000);
    assert_eq!(r.pfc.pause_episodes, 1);
    assert_eq!(r.pfc.pause_ns_total, 11 * 167_000 + FULL_100G);
    let codes: Vec<&str> = r.findings.iter().map(|f| f.code.as_str()).collect();
    assert!(codes.contains(&"pfc.storm"), "{codes:?}");
    assert!(codes.contains(&"pfc.pause"));
}

#[test]
fn link_speed_scales_quanta_and_pause_counts_all_priorities() {
    let r = run(&[(0, pause(2, 0xffff))], 400_000_000_000);
    assert_eq!(r.pfc.pause_ns_total, 83_885); // 65535 × 512 / 400e9 = 83884.8, rounded up
    assert_eq!(r.pfc.by_port[0].priority, 255);
}

/// A capture of several interfaces (pcapng): each PAUSE's quanta are bit times of the link it
/// was captured on, unless `--link-speed` forces one; an `if_speed` of 0 says nothing.
#[test]
fn quanta_use_the_speed_of_the_frame_s_own_interface() {
    let frames = [
        (0, Some(100_000_000_000), pause(1, 0xffff)),
        (0, Some(25_000_000_000), pause(2, 0xffff)),
        (0, Some(0), pause(3, 0xffff)),
        (0, None, pause(4, 0xffff)),
    ];
    let per_port = |r: &rdmascope_analyze::Report| -> Vec<u64> {
        r.pfc.by_port.iter().map(|p| p.pause_ns).collect()
    };
    // Not forced: 100G and 25G as captured; no speed (0 or none): the capture's first, 100G.
    let r = run_on(&frames, None);
    assert_eq!(per_port(&r), [FULL_100G, 1_342_157, FULL_100G, FULL_100G]);
    assert_eq!(r.capture.link_bps, 100_000_000_000);
    assert_eq!(r.capture.link_bps_from, "if_speed");
    // One full pause on the 25G link is no storm: it is measured against that link's pause.
    let codes: Vec<&str> = r.findings.iter().map(|f| f.code.as_str()).collect();
    assert!(
        codes.contains(&"pfc.pause") && !codes.contains(&"pfc.storm"),
        "{codes:?}"
    );
    // Forced to 400G: every port.
    let r = run_on(&frames, Some(400_000_000_000));
    assert_eq!(per_port(&r), [83_885; 4]);
    assert_eq!(r.capture.link_bps_from, "option");
    // A capture whose only speed is 0, or none, or below 1 Mb/s or above 100 Tb/s (damaged):
    // 100G.
    for speed in [0, 1, 999_999, 100_000_000_000_001, u64::MAX] {
        let r = run_on(&[(0, Some(speed), pause(1, 0xffff))], None);
        assert_eq!(
            (per_port(&r), r.capture.link_bps, r.capture.link_bps_from),
            (vec![FULL_100G], 100_000_000_000, "default")
        );
    }
    // 1 Mb/s is believed: a full pause is then 33.6 s.
    let r = run_on(&[(0, Some(1_000_000), pause(1, 0xffff))], None);
    assert_eq!(per_port(&r), [33_553_920_000]);
}

/// PAUSE frames from more source MACs than are followed one by one: every frame is counted,
/// the first 4,096 sources have their episodes, and a warning says how many were not followed.
#[test]
fn sources_beyond_the_limit_are_counted_not_followed() {
    let frames: Vec<_> = (0..5000u64)
        .map(|i| {
            let mut f = pause(0, 100);
            f[10..12].copy_from_slice(&(i as u16).to_be_bytes());
            (i * 10_000, f)
        })
        .collect();
    let r = run(&frames, 100_000_000_000);
    assert_eq!(r.pfc.frames, 5000);
    assert_eq!(r.pfc.by_port.len(), 4096);
    assert_eq!(r.pfc.untracked_frames, 5000 - 4096);
    assert_eq!(r.pfc.pause_episodes, 4096);
    assert!(r.findings.iter().any(|f| f.code == "capture.pfc_limit"));
    let few = run(&frames[..100], 100_000_000_000);
    assert_eq!(few.pfc.untracked_frames, 0);
    assert!(!few.findings.iter().any(|f| f.code == "capture.pfc_limit"));
}
