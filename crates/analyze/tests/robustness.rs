//! The analysis never panics, whatever it is fed: damaged frames of every scenario with
//! timestamps that jump back and forth or sit at the ends of `u64`, and events with any field
//! values at all (including ones no decoder produces), with and without a cap on the flows
//! analysed one by one. Each case ends with the report and its
//! JSON, so the summaries, findings and serialisation see the same values.

use std::sync::LazyLock;

use proptest::prelude::*;
use rdmascope_analyze::{
    Analyzer, Batch, Bth, Config, Event, ExtWord, LinkFrame, Node, PacketMeta,
};
use rdmascope_synth::{generate, GenOptions, Scenario, Sink};
use rdmascope_wire::ext::Aeth;
use rdmascope_wire::frame::Encap;
use rdmascope_wire::link::linktype;
use rdmascope_wire::macctl::MacControl;
use rdmascope_wire::{DecodeOptions, IcrcStatus};

/// A frame: link type, wire length, timestamp, bytes.
type Rec = (u32, u32, u64, Vec<u8>);

/// Frames of a scenario.
struct Frames(Vec<Rec>);

impl Sink for Frames {
    fn frame(&mut self, iface: u32, ts: u64, orig_len: u32, data: &[u8]) -> std::io::Result<()> {
        let link = if iface == 0 {
            linktype::ETHERNET
        } else {
            linktype::ERF
        };
        self.0.push((link, orig_len, ts, data.to_vec()));
        Ok(())
    }
}

/// Every scenario (PFC, CM, NAKs, RNR, READs, native IB), some with VLAN tags, IPv6 or a
/// snaplen, in one list to take windows from.
static FRAMES: LazyLock<Vec<Rec>> = LazyLock::new(|| {
    let mut all = Frames(Vec::new());
    for (i, scenario) in Scenario::ALL.into_iter().enumerate() {
        let o = GenOptions {
            scenario,
            packets: Some(1500),
            snaplen: if i % 3 == 2 { 128 } else { 65535 },
            ipv6: i % 4 == 1,
            vlan: (i % 2 == 0).then_some((3, 3)),
            corrupt_rate: 0.01,
            ..GenOptions::default()
        };
        generate(&o, &mut all).expect("scenario");
    }
    all.0
});

/// Runs `events` through a fresh analyser (one by one, or as batches of `batch` events from a
/// file whose timestamps count in units of `unit` ns) and returns the report's JSON.
fn report(
    events: impl Iterator<Item = Event>,
    link: Option<u64>,
    (batch, unit): (usize, u64),
    max_flows: Option<usize>,
) -> String {
    let mut a = Analyzer::new(Config {
        link_bps: link,
        files: vec!["robustness".into()],
        max_flows,
        ..Config::default()
    });
    let mut b = Batch::default();
    b.set_file(0, unit);
    let mut n = 0;
    for e in events {
        if batch == 0 {
            a.event(&e);
        } else {
            b.push(e);
            n += 1;
            if n == batch {
                a.feed(&mut b);
                b.clear();
                n = 0;
            }
        }
    }
    a.feed(&mut b);
    serde_json::to_string(&a.finish()).expect("report serialises")
}

/// A timestamp rewritten by `mode`: as captured, going back, near zero or near `u64::MAX`,
/// or `x` itself.
fn timestamp(mode: u8, ts: u64, x: u64) -> u64 {
    match mode {
        0 | 1 => ts,
        2 => ts.saturating_sub(x % 1_000_000_000),
        3 => x % 4096,
        4 => u64::MAX - x % 1_000_000,
        _ => x,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Frames of every scenario with bytes changed, cut short, and timestamps and interface
    /// speeds at their extremes.
    #[test]
    fn damaged_frames_never_panic(
        start in 0usize..100_000,
        len in 1usize..600,
        edits in proptest::collection::vec((any::<u16>(), any::<u16>(), any::<u8>()), 0..200),
        cuts in proptest::collection::vec((any::<u16>(), any::<u16>()), 0..20),
        times in proptest::collection::vec((0u8..6, any::<u64>()), 1..8),
        if_speed in prop_oneof![Just(None), Just(Some(0)), Just(Some(1)), Just(Some(u64::MAX)), any::<u64>().prop_map(Some)],
        link in prop_oneof![Just(None), Just(Some(1)), Just(Some(u64::MAX)), (1u64..1 << 40).prop_map(Some)],
        no_crc in any::<bool>(),
        batch in prop_oneof![Just(0usize), 1usize..64],
        unit in prop_oneof![Just(1u64), Just(1000), Just(1_000_000_000), any::<u64>()],
        max_flows in prop_oneof![Just(None), (0usize..8).prop_map(Some)],
    ) {
        let all = &*FRAMES;
        let start = start % all.len();
        let mut window: Vec<_> = all[start..(start + len).min(all.len())].to_vec();
        let w = window.len();
        for &(i, at, x) in &edits {
            let (_, _, _, d) = &mut window[usize::from(i) % w];
            if !d.is_empty() {
                let at = usize::from(at) % d.len();
                d[at] ^= x | 1;
            }
        }
        for &(i, keep) in &cuts {
            let (_, _, _, d) = &mut window[usize::from(i) % w];
            d.truncate(usize::from(keep) % (d.len() + 1));
        }
        let opts = DecodeOptions {
            verify_crc: !no_crc,
            ..DecodeOptions::default()
        };
        let events = window.iter().enumerate().map(|(n, (link, orig, ts, d))| {
            let (mode, x) = times[n % times.len()];
            let meta = PacketMeta {
                number: n as u64 + 1,
                ts_ns: timestamp(mode, *ts, x.wrapping_add(n as u64)),
                orig_len: *orig,
                // Now and then a second capture point.
                if_id: u32::from(n % 7 == 3),
                if_speed,
            };
            Event::decode(meta, *link, d, *orig, &opts)
        });
        report(events, link, (batch, unit), max_flows);
    }

    /// Events with any values: every opcode, PSNs at the wrap, AETH syndromes and MSNs that
    /// no responder sends, lengths up to `u32::MAX`, PFC and PAUSE frames with any quanta,
    /// among a few nodes and QPs so that flows pair up, ACK and answer one another.
    #[test]
    fn arbitrary_events_never_panic(
        evs in proptest::collection::vec(
            (
                (0usize..6, 0usize..6, 0usize..5, any::<u8>(), prop_oneof![Just(0u32), Just(0xff_ffff), 0u32..8, 0xff_fff8u32..0x100_0000, any::<u32>()], any::<bool>()),
                ((0u8..6, any::<u64>()), any::<u32>(), prop_oneof![Just(0u32), 0u32..5000, any::<u32>()], 0u8..5, prop_oneof![Just(None), any::<u8>().prop_map(Some)], any::<u8>()),
                (prop_oneof![Just(None), (any::<u8>(), any::<u32>()).prop_map(Some)], prop_oneof![Just(None), any::<u32>().prop_map(Some)], 0u8..4, any::<bool>(), 0u8..12, any::<u16>()),
                (0u8..3, any::<[u16; 8]>(), any::<u8>(), any::<u64>()),
            ),
            1..400,
        ),
        link in prop_oneof![Just(None), Just(Some(1)), Just(Some(u64::MAX)), (1u64..1 << 40).prop_map(Some)],
        batch in prop_oneof![Just(0usize), 1usize..64],
        unit in prop_oneof![Just(1u64), Just(1000), Just(1_000_000_000), any::<u64>()],
        max_flows in prop_oneof![Just(None), (0usize..8).prop_map(Some)],
    ) {
        const NODES: [Node; 6] = [
            Node::V4([10, 0, 0, 1]),
            Node::V4([10, 0, 0, 2]),
            Node::Gid([0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
            Node::Gid([0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]),
            Node::Lid(1),
            Node::Lid(0xffff),
        ];
        const QPS: [u32; 5] = [0, 1, 2, 0x11, 0xff_ffff];
        let mut ts = 0u64;
        let events = evs.iter().enumerate().map(|(n, &(a, b, c, d))| {
            let (src, dst, qp, opcode, psn, ackreq) = a;
            let ((mode, x), orig_len, payload_len, icrc, ecn, prio) = b;
            let (aeth, dma_len, encap, truncated, rare, sport) = c;
            let (mc, quanta, enable, mac) = d;
            ts = timestamp(mode, ts.wrapping_add(x % 10_000), x);
            let mut e = Event {
                meta: PacketMeta {
                    number: n as u64 + 1,
                    ts_ns: ts,
                    orig_len,
                    if_id: (x >> 7) as u32 % 3,
                    if_speed: (x % 5 == 0).then_some(x >> 3),
                },
                truncated,
                bth: Some(Bth { opcode, ackreq, destqp: QPS[qp], psn }),
                nodes: Some((NODES[src], NODES[dst])),
                encap: [Some(Encap::RoceV2), Some(Encap::RoceV1), Some(Encap::Ib), None][usize::from(encap)],
                payload_len,
                eth_src: mac & 0x1_ffff_ffff_ffff,
                icrc: [IcrcStatus::Ok, IcrcStatus::Bad, IcrcStatus::Truncated, IcrcStatus::Unverifiable]
                    .get(usize::from(icrc))
                    .copied(),
                vcrc: [IcrcStatus::Ok, IcrcStatus::Bad, IcrcStatus::Truncated, IcrcStatus::Unverifiable]
                    .get(usize::from(icrc ^ prio) % 5)
                    .copied(),
                ecn,
                prio,
                udp_sport: (sport != 0).then_some(sport),
                aeth: aeth.map(|(syndrome, msn)| Aeth { syndrome, msn }),
                // Now and then a DETH's source QP instead (UD copies are told by it).
                ext: match dma_len {
                    Some(n) if n % 3 == 0 => ExtWord::SrcQp(n & 0xff_ffff),
                    Some(n) => ExtWord::DmaLen(n),
                    None => ExtWord::None,
                },
                ..Event::default()
            };
            // Now and then a frame of another kind: no BTH, or a rare kind beside one.
            match rare {
                0 => {
                    let m = match mc {
                        0 => MacControl::Pause { quanta: quanta[0] },
                        1 => MacControl::Pfc { enable, quanta },
                        _ => MacControl::Other { opcode: quanta[1] },
                    };
                    let src = (mac >> 8).to_be_bytes()[2..].try_into().unwrap();
                    e.link = Some(Box::new(LinkFrame::MacControl(src, m)));
                    e.bth = None;
                    e.nodes = None;
                }
                1 => e.bth = None,
                2 => e.nodes = None,
                3 => e.perftest = true,
                4 => e.frag_needed = true,
                5 => e.roce_fragment = true,
                _ => {}
            }
            e
        });
        report(events, link, (batch, unit), max_flows);
    }
}

/// Packets of a file of coarse timestamps (microseconds, seconds, any unit) at the top of the
/// clock, or jumping between its ends: spreading the ties, the requester's pace, a NAK's
/// turn-round and the storm bound never overflow.
#[test]
fn coarse_timestamps_at_the_clock_s_ends_never_overflow() {
    let opts = DecodeOptions::default();
    for unit in [1000, 1_000_000_000, u64::MAX] {
        for ends in [false, true] {
            let events = FRAMES
                .iter()
                .take(3000)
                .enumerate()
                .map(|(n, (link, orig, _, d))| {
                    let ts = if ends && n % 3 == 1 { 0 } else { u64::MAX };
                    let meta = PacketMeta {
                        number: n as u64 + 1,
                        ts_ns: ts,
                        orig_len: *orig,
                        if_id: 0,
                        if_speed: None,
                    };
                    Event::decode(meta, *link, d, *orig, &opts)
                });
            report(events, None, (64, unit), None);
        }
    }
}
