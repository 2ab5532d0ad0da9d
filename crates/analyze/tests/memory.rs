//! Memory grows with flows, never with packets (issue #4). A counting allocator measures the
//! analyzer's peak live heap while it analyses a generated scenario and then the same scenario
//! twice as long: with a fixed set of flows (`lossy`: three connections, each past its
//! 65,536-PSN window) the peak must stay flat, and where longer means more connections
//! (`mixed`) the growth must be per flow.
//!
//! This file holds one test, so no other test's allocations run alongside the measurement.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use rdmascope_analyze::{Analyzer, Config, PacketMeta};
use rdmascope_synth::{generate, GenOptions, Scenario, Sink};
use rdmascope_wire::link::linktype;
use rdmascope_wire::{DecodeOptions, Frame};

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting live bytes and their peak.
struct Counting;

// SAFETY: every call is forwarded to `System` unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            grow(l.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            grow(l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            LIVE.fetch_sub(l.size(), Ordering::Relaxed);
            grow(new);
        }
        q
    }
}

fn grow(n: usize) {
    let live = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// A scenario's frames in one buffer: (timestamp, wire length, start, end) per frame.
#[derive(Default)]
struct Frames {
    bytes: Vec<u8>,
    index: Vec<(u64, u32, usize, usize)>,
}

impl Sink for Frames {
    fn frame(&mut self, _iface: u32, ts: u64, orig_len: u32, data: &[u8]) -> std::io::Result<()> {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(data);
        self.index.push((ts, orig_len, at, self.bytes.len()));
        Ok(())
    }
}

/// Peak heap bytes the analysis of `packets` frames of `scenario` adds (report included), and
/// the number of flows it reports.
fn peak(scenario: Scenario, packets: u64) -> (usize, usize) {
    let o = GenOptions {
        scenario,
        packets: Some(packets),
        snaplen: 128,
        ..GenOptions::default()
    };
    let mut frames = Frames::default();
    generate(&o, &mut frames).expect("generate");
    let opts = DecodeOptions::default();
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let mut an = Analyzer::new(Config::default());
    for (i, &(ts, orig_len, a, b)) in frames.index.iter().enumerate() {
        let meta = PacketMeta {
            number: i as u64 + 1,
            ts_ns: ts,
            orig_len,
            if_id: 0,
            if_speed: None,
        };
        let f = Frame::decode(linktype::ETHERNET, &frames.bytes[a..b], orig_len, &opts);
        an.packet(&meta, &f);
    }
    let report = an.finish();
    let flows = report.flows.len();
    drop(report);
    (PEAK.load(Ordering::Relaxed) - base, flows)
}

#[test]
fn memory_grows_with_flows_not_packets() {
    // Fixed flows: twice the packets, the same peak (to within 2%).
    let (one, f1) = peak(Scenario::Lossy, 400_000);
    let (two, f2) = peak(Scenario::Lossy, 800_000);
    eprintln!("lossy: {f1} flows {one} B, {f2} flows {two} B");
    assert_eq!(f1, f2, "lossy keeps its flows");
    assert!(
        two * 100 <= one * 102,
        "lossy: twice the packets took the peak heap from {one} to {two} bytes"
    );

    // New connections keep opening: the growth is per flow. These flows are young (live 16 KB
    // latency histograms, PSN windows still filling), so a flow costs more here than over a
    // long capture, where CM has closed most connections and only their summaries stay (the
    // benchmark's 2M → 4M packets: about 0.9 KB); 150,000 more packets at even 8 bytes each
    // would show as about 16 KB per added flow.
    let (one, f1) = peak(Scenario::Mixed, 150_000);
    let (two, f2) = peak(Scenario::Mixed, 300_000);
    let per_flow = two.saturating_sub(one) / (f2 - f1).max(1);
    eprintln!("mixed: {f1} flows {one} B, {f2} flows {two} B: {per_flow} B per added flow");
    assert!(f2 > f1, "mixed opens connections as it goes");
    assert!(
        per_flow <= 6_000,
        "mixed: {per_flow} bytes of peak heap per added flow"
    );
}
