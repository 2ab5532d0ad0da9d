//! Copies of every packet at a near-constant lag: a capture of a mirror (SPAN) port that
//! mirrors two ports with a queue between them, a tap and a SPAN port merged, two capture
//! points merged into one interface, or `tcpdump -i any` over a bond and its member, holds
//! every packet twice, the second copy a lag later. The analysis's own rules take nothing
//! later than [`crate::analyzer::DUP_NS`] (the shortest ACK timeout) for the capture's copy,
//! and sooner copies that trail behind other packets (in the order of their times) only in
//! the main, so such copies read as resends, and a clean capture as a broken network.
//!
//! The first packets of the capture show such a lag: nearly every packet that came long enough
//! before the sample's end came again, in both directions (requests and answers), the same lag
//! later. Resends cannot look like that in both directions: a requester resends after NAKs and
//! timeouts, which only answers bring or whose absence shows (go-back-N after many losses may
//! resend nearly every request about one lag later), and the answers themselves are sent once
//! (a connection never answered resends its requests a timeout apart, but has no answers). Once
//! the lag is learnt ([`LateCopies::learn`]), each packet is delayed until its copy can have
//! come, and its copy is the later packet alike (of the same capture point) whose lag is the
//! nearest to the copies' ([`LateCopies::release`]). Captures without such copies read as
//! before.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};

use crate::analyzer::{Event, ExtWord, LinkFrame};
use crate::fxhash::{FxHashMap, FxHasher};
use rdmascope_wire::macctl::MacControl;

/// The longest lag learnt: a mirror's copy later than this is not looked for.
const MAX_LAG_NS: u64 = 500_000;
/// Packets of RDMA transport the sample takes before it decides: [`SAMPLE`], and more while
/// they span less than [`SPAN_NS`] (a copy's lag must fit in the sample with room to spare),
/// up to [`SAMPLE_MAX`]; and events (of any kind) it holds back from the analysis at most
/// meanwhile. Each packet held back delays the analysis, so the span is the longest lag
/// looked for, not more: copies up to about 400 µs behind show in it.
const SAMPLE: usize = 4096;
const SAMPLE_MAX: usize = 8 * SAMPLE;
const SPAN_NS: u64 = MAX_LAG_NS;
const HELD: usize = 2 * SAMPLE_MAX;
/// Packets the sample needs copied, and of them at least [`MIN_SIDE`] requests and answers.
const MIN_PAIRS: u32 = 16;
const MIN_SIDE: u32 = 2;
/// The margin either side of the lags learnt: at least this, or half their spread.
const MARGIN_NS: u64 = 1_000;

/// No packet of the sample (see [`Sampled::prev`]).
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Learning,
    Off,
    On,
}

/// One packet of the sample: its time, its key, the sample's packet alike before it
/// ([`NONE`]: none), whether it is an answer, and under the lags tried whether it is a copy and
/// whether a copy of it came.
#[derive(Debug, Clone, Copy)]
struct Sampled {
    ts: u64,
    key: u64,
    prev: u32,
    answer: bool,
    copy: bool,
    copied: bool,
}

/// An event delayed until every packet that may be its copy came: its key, and whether it is
/// an earlier packet's copy.
#[derive(Debug)]
struct Delayed {
    e: Event,
    key: Option<u64>,
    copy: bool,
}

/// How the analysis looks for the capture's copies at a lag (see [`crate::late`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LagCopies {
    /// The capture's first packets are sampled and held back from the analysis until the
    /// sample decides.
    #[default]
    Hold,
    /// They are sampled and analysed at once, as if the capture held no such copies: if the
    /// sample finds some, the analysis stops ([`crate::Analyzer::run_again`]) and must be run
    /// again from the start with the lags it found, [`LagCopies::Known`]. For inputs that can
    /// be read twice; it saves holding the sample's events (3.3 MB of fresh memory for the
    /// 21k events of a 100 Gb/s capture's first 500 µs).
    Speculate,
    /// Found by an earlier pass that speculated: nothing is sampled, and every packet is
    /// delayed until its copy came, as [`LagCopies::Hold`] does once it found them.
    Known(Lags),
}

/// The lags a sample found the capture's copies at, and when it found them: what a pass run
/// again needs to read the capture as the pass that held its first packets back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lags {
    learnt: (u64, u64),
    lo: u64,
    hi: u64,
    center: u64,
    /// Events the sample had taken (held back) when it decided: the first release of the
    /// delayed events comes after as many, as it came after the held ones.
    taken: usize,
}

/// The capture's copies at a lag; see the module's documentation.
#[derive(Debug)]
pub(crate) struct LateCopies {
    mode: Mode,
    /// Sampling without holding the events back ([`LagCopies::Speculate`]).
    speculate: bool,
    /// Events taken while learning (held back unless speculating).
    taken: usize,
    /// With [`LagCopies::Known`]: events still to be delayed before the first release.
    pending: usize,
    /// While learning: the packets of RDMA transport sampled, every event held back from
    /// the analysis until the decision, the input file they came from, and the sample's
    /// length when it last tried to decide (it tries again at four times that).
    sample: Vec<Sampled>,
    /// The sample's last packet with each key, so its packets alike are found without sorting
    /// it at each try.
    last_of: FxHashMap<u64, u32>,
    held: Vec<Event>,
    file: u32,
    tried: usize,
    /// The lags the sample's copies came at, those taken for copies once learnt (a margin
    /// wider), and the lag most like a copy's (their median).
    learnt: (u64, u64),
    lo: u64,
    hi: u64,
    center: u64,
    /// Once learnt: the events delayed, in order, the first one's number among them all, the
    /// numbers of those with each key, and the latest time of any.
    delayed: VecDeque<Delayed>,
    base: u64,
    by_key: FxHashMap<u64, VecDeque<u64>>,
    newest: u64,
}

impl Default for LateCopies {
    fn default() -> Self {
        Self {
            mode: Mode::Learning,
            speculate: false,
            taken: 0,
            pending: 0,
            sample: Vec::new(),
            last_of: FxHashMap::default(),
            held: Vec::new(),
            file: 0,
            tried: 0,
            learnt: (0, 0),
            lo: 0,
            hi: 0,
            center: 0,
            delayed: VecDeque::new(),
            base: 0,
            by_key: FxHashMap::default(),
            newest: 0,
        }
    }
}

impl LateCopies {
    /// Copies at a lag looked for as `how` says.
    pub(crate) fn new(how: LagCopies) -> Self {
        let mut l = Self::default();
        match how {
            LagCopies::Hold => {}
            LagCopies::Speculate => l.speculate = true,
            LagCopies::Known(k) => {
                l.mode = Mode::On;
                l.learnt = k.learnt;
                (l.lo, l.hi, l.center) = (k.lo, k.hi, k.center);
                l.pending = k.taken;
            }
        }
        l
    }

    /// Whether the sample's events are analysed at once rather than held back.
    #[inline]
    pub(crate) fn speculating(&self) -> bool {
        self.speculate
    }

    /// What a pass run again needs, once copies at a lag were found.
    pub(crate) fn found(&self) -> Option<Lags> {
        self.on().then_some(Lags {
            learnt: self.learnt,
            lo: self.lo,
            hi: self.hi,
            center: self.center,
            taken: self.taken,
        })
    }

    /// Whether the delayed events may be released: with [`LagCopies::Known`], once as many
    /// were delayed as the sample had held back.
    pub(crate) fn releasing(&self) -> bool {
        self.pending == 0
    }

    /// Whether the capture's first packets are still being sampled.
    #[inline]
    pub(crate) fn learning(&self) -> bool {
        self.mode == Mode::Learning
    }

    /// Whether copies at a lag were found, and are to be looked for.
    #[inline]
    pub(crate) fn on(&self) -> bool {
        self.mode == Mode::On
    }

    /// The lags the sample's copies came at, when the capture holds copies at a lag.
    pub(crate) fn lags(&self) -> Option<(u64, u64)> {
        self.on().then_some(self.learnt)
    }

    /// What makes two packets the same: the capture point, the nodes, the BTH's opcode,
    /// destination QP and PSN, the payload's length, the AETH and the RETH's or DETH's word.
    /// Fields a hop between two mirrored ports may change (MACs, TTL, ECN) are left out. A
    /// PFC or PAUSE frame is the same as one from its source asking the same.
    fn key(e: &Event) -> Option<u64> {
        let mut h = FxHasher::default();
        if let Some(LinkFrame::MacControl(src, mc)) = e.link.as_deref() {
            // A PFC or PAUSE frame: its source and what it asks.
            h.write_u32(e.meta.if_id);
            h.write(src);
            match *mc {
                MacControl::Pfc { enable, quanta } => {
                    h.write_u8(enable);
                    quanta.iter().for_each(|&q| h.write_u16(q));
                }
                MacControl::Pause { quanta } => h.write_u16(quanta),
                MacControl::Other { opcode } => h.write_u32(1 << 16 | u32::from(opcode)),
            }
            return Some(h.finish());
        }
        let bth = e.bth?;
        let nodes = e.nodes?;
        // Two IPv4 nodes as one word (`v4_pair`), others whole.
        if e.v4_pair != 0 {
            h.write_u64(e.v4_pair);
        } else {
            nodes.hash(&mut h);
        }
        let aeth = e.aeth.map_or(0, |a| {
            1 << 40 | u64::from(a.syndrome) << 32 | u64::from(a.msn)
        });
        let ext = match e.ext {
            ExtWord::None => 0,
            ExtWord::DmaLen(n) => u64::from(n) | 1 << 32,
            ExtWord::SrcQp(q) => u64::from(q) | 2 << 32,
        };
        h.write_u64(
            u64::from(e.meta.if_id) << 32 | u64::from(bth.destqp) << 8 | u64::from(bth.opcode),
        );
        h.write_u64(u64::from(bth.psn) << 32 | u64::from(e.payload_len));
        h.write_u64(aeth);
        h.write_u64(ext);
        Some(h.finish())
    }

    /// Samples a batch's `events` of input file `file`, holding them back from the analysis
    /// unless speculating;
    /// `answer` tells an answer's opcode (ACK, READ response) from a request's. When the
    /// sample decided whether the capture holds copies at a lag, returns how many
    /// of `events` it took: those held back are then analysed ([`LateCopies::take_held`]),
    /// then the rest. It tries to decide at set lengths of the sample, wherever the batches
    /// begin and end, so a capture reads the same in any chunks.
    pub(crate) fn learn(
        &mut self,
        events: &[Event],
        file: u32,
        answer: impl Fn(u8) -> bool,
    ) -> Option<usize> {
        self.file = file;
        for (i, e) in events.iter().enumerate() {
            if self.whole() || self.taken >= HELD {
                self.decide(true);
                return Some(i);
            }
            if self.sample.capacity() == 0 {
                // At its largest at once (address space, touched as filled): a list that
                // doubles moves its events and faults its pages in twice.
                if !self.speculate {
                    self.held.reserve_exact(HELD);
                }
                self.sample.reserve_exact(SAMPLE_MAX);
            }
            if !self.speculate {
                self.held.push(e.clone());
            }
            self.taken += 1;
            if let (Some(key), Some(bth)) = (Self::key(e), e.bth) {
                let n = self.sample.len() as u32;
                self.sample.push(Sampled {
                    ts: e.meta.ts_ns,
                    key,
                    prev: self.last_of.insert(key, n).unwrap_or(NONE),
                    answer: answer(bth.opcode),
                    copy: false,
                    copied: false,
                });
                if self.sample.len() == self.next_try() && self.decide(false) {
                    return Some(i + 1);
                }
            }
        }
        None
    }

    /// The sample's length at which it tries to decide next: four times the last try's, from
    /// [`MIN_PAIRS`] times four.
    fn next_try(&self) -> usize {
        (4 * self.tried).max(4 * MIN_PAIRS as usize)
    }

    /// Whether the sample has all the packets it takes: [`SAMPLE`] spanning [`SPAN_NS`], else
    /// [`SAMPLE_MAX`].
    fn whole(&self) -> bool {
        let n = self.sample.len();
        let span = || match (self.sample.first(), self.sample.last()) {
            (Some(a), Some(b)) => b.ts.saturating_sub(a.ts),
            _ => 0,
        };
        n >= SAMPLE_MAX || n >= SAMPLE && span() >= SPAN_NS
    }

    /// Decides with the sample so far (the input ends, or another file begins).
    pub(crate) fn stop(&mut self) {
        if self.learning() {
            self.decide(true);
        }
    }

    /// The events held back while learning, once decided, and their input file.
    pub(crate) fn take_held(&mut self) -> (Vec<Event>, u32) {
        self.sample = Vec::new();
        self.last_of = FxHashMap::default();
        (std::mem::take(&mut self.held), self.file)
    }

    /// The input file of the events held back or delayed, if any are.
    pub(crate) fn holding(&self) -> Option<u32> {
        let sampling = self.learning() && self.taken > 0;
        (sampling || !self.held.is_empty() || !self.delayed.is_empty()).then_some(self.file)
    }

    /// Decides from the sample, when it can: `true` when it decided. It finds copies at a lag
    /// when, at the lags most pairs of packets alike came at, nine in ten of the requests and
    /// nine in ten of the answers that came long enough before the sample's end have their
    /// copy in it (where losses are many, go-back-N passes resend nearly every request about
    /// a NAK's round trip later, but few answers come again alike). Once the sample is whole,
    /// the lags most pairs of answers alike came at are tried too: a connection never
    /// answered resends its requests a timeout apart, and with their copies those resends can
    /// make more pairs than every packet's copy, while answers are sent once. (Tried on a part
    /// of the sample, other lags than the commonest may fit by chance: the third commonest,
    /// PFC frames sent again at a steady interval, did in a capture that held every frame
    /// twice.)
    fn decide(&mut self, force: bool) -> bool {
        let done = force || self.whole();
        if !done && self.sample.len() < self.next_try() {
            return false;
        }
        self.tried = self.sample.len();
        let alike = self.alike();
        let answers = if done { &[false, true][..] } else { &[false] };
        for &answers in answers {
            let Some((lo, center, hi)) = self.commonest_lags(&alike, answers) else {
                continue;
            };
            if self.copies_at(&alike, lo, hi) {
                self.learnt = (lo, hi);
                self.center = center;
                self.mode = Mode::On;
                return true;
            }
        }
        if done {
            self.mode = Mode::Off;
        }
        done
    }

    /// The sample's packets grouped by key, each key's in order of their times (then of their
    /// arrival).
    fn alike(&self) -> Vec<u32> {
        let sample = &self.sample;
        let mut alike = Vec::with_capacity(sample.len());
        for &last in self.last_of.values() {
            let start = alike.len();
            let mut j = last;
            while j != NONE {
                alike.push(j);
                j = sample[j as usize].prev;
            }
            let group = &mut alike[start..];
            group.reverse();
            if !group.is_sorted_by_key(|&i| sample[i as usize].ts) {
                group.sort_unstable_by_key(|&i| (sample[i as usize].ts, i));
            }
        }
        alike
    }

    /// Whether the sample's packets have their copies at lags `lo..=hi` (a margin wider): each
    /// packet matched to the earliest earlier one alike, neither a copy nor copied yet.
    fn copies_at(&mut self, alike: &[u32], lo: u64, hi: u64) -> bool {
        let margin = MARGIN_NS.max((hi - lo) / 2);
        (self.lo, self.hi) = (lo.saturating_sub(margin), hi + margin);
        for s in &mut self.sample {
            (s.copy, s.copied) = (false, false);
        }
        let (lo_m, hi_m, sample) = (self.lo, self.hi, &mut self.sample);
        let mut start = 0;
        for n in 0..alike.len() {
            let i = alike[n] as usize;
            if sample[alike[start] as usize].key != sample[i].key {
                start = n;
            }
            let ts = sample[i].ts;
            let first = alike[start..n].iter().map(|&j| j as usize).find(|&j| {
                let f = &sample[j];
                !f.copy && !f.copied && (lo_m..=hi_m).contains(&(ts - f.ts))
            });
            if let Some(j) = first {
                sample[j].copied = true;
                sample[i].copy = true;
            }
        }
        let last = self.sample.iter().map(|s| s.ts).max().unwrap_or(0);
        // Old packets and those copied, of requests and of answers.
        let (mut old, mut copied) = ([0u32; 2], [0u32; 2]);
        for s in self
            .sample
            .iter()
            .filter(|s| !s.copy && s.ts.saturating_add(self.hi) < last)
        {
            old[usize::from(s.answer)] += 1;
            copied[usize::from(s.answer)] += u32::from(s.copied);
        }
        copied[0] + copied[1] >= MIN_PAIRS
            && (0..2).all(|k| copied[k] >= MIN_SIDE && copied[k] * 10 >= old[k] * 9)
    }

    /// The lags at which most pairs of the sample's packets alike came (`alike`: the sample's
    /// packets by key, then time), of answers only if `answers`: of the most such lags within
    /// a quarter of one another (or [`MARGIN_NS`]), the middle nine tenths and the commonest,
    /// if any.
    fn commonest_lags(&self, alike: &[u32], answers: bool) -> Option<(u64, u64, u64)> {
        // A copy comes among the next few packets alike (a packet sent again and again, as to
        // a peer that never answers, would make the pairs many).
        const NEXT: usize = 16;
        let mut lags = Vec::new();
        for (n, &i) in alike.iter().enumerate() {
            let s = &self.sample[i as usize];
            if answers && !s.answer {
                continue;
            }
            for &j in alike[n + 1..].iter().take(NEXT) {
                let t = &self.sample[j as usize];
                if t.key != s.key || t.ts - s.ts > MAX_LAG_NS {
                    break;
                }
                if t.ts > s.ts {
                    lags.push(t.ts - s.ts);
                }
            }
        }
        lags.sort_unstable();
        let (mut best, mut j): (Option<(usize, usize)>, usize) = (None, 0);
        for (i, &l) in lags.iter().enumerate() {
            let top = l + MARGIN_NS.max(l / 4);
            j = j.max(i);
            while j < lags.len() && lags[j] <= top {
                j += 1;
            }
            if best.is_none_or(|(n, _)| j - i > n) {
                best = Some((j - i, i));
            }
        }
        // Within them, the middle nine tenths: a resend's lag may fall in the edges. The lag
        // most like a copy's is the commonest within a thirty-second of itself (or 100 ns):
        // resends about as late may be many, but their lags spread wider.
        let (n, i) = best?;
        let w = &lags[i..i + n];
        let (mut top, mut j) = ((0, w[n / 2]), 0);
        for (k, &l) in w.iter().enumerate() {
            j = j.max(k);
            while j < n && w[j] <= l + (l / 32).max(100) {
                j += 1;
            }
            if j - k > top.0 {
                top = (j - k, w[(k + j - 1) / 2]);
            }
        }
        Some((w[n / 20], top.1, w[n - 1 - n / 20]))
    }

    /// Delays event `e` of input file `file`, once copies at a lag were found,
    /// until every packet that may be its copy came ([`LateCopies::release`]); true when it
    /// was the last to delay before the first release ([`LagCopies::Known`]).
    pub(crate) fn delay(&mut self, e: Event, file: u32) -> bool {
        self.file = file;
        let due = self.pending == 1;
        self.pending = self.pending.saturating_sub(1);
        let key = Self::key(&e);
        if let Some(k) = key {
            let n = self.base + self.delayed.len() as u64;
            self.by_key.entry(k).or_default().push_back(n);
        }
        self.newest = self.newest.max(e.meta.ts_ns);
        self.delayed.push_back(Delayed {
            e,
            key,
            copy: false,
        });
        due
    }

    /// The first event delayed, once every packet that may be its copy came (`all`: at once),
    /// with whether it is an earlier packet's copy. A packet that is none is the first copy of
    /// itself: its copy is the later one alike, not a copy yet, whose lag is the nearest to
    /// the copies' own (a resend may come about as late, but not nearer).
    pub(crate) fn release(&mut self, all: bool) -> Option<(Event, bool)> {
        let first = self.delayed.front()?;
        if !all && first.e.meta.ts_ns.saturating_add(self.hi) >= self.newest {
            return None;
        }
        let d = self.delayed.pop_front()?;
        self.base += 1;
        if let Some(k) = d.key {
            let Self {
                by_key,
                delayed,
                base,
                lo,
                hi,
                center,
                ..
            } = self;
            if let Some(q) = by_key.get_mut(&k) {
                q.pop_front();
                let ts = d.e.meta.ts_ns;
                let copy = q
                    .iter()
                    .filter_map(|&n| {
                        let c = &delayed[(n - *base) as usize];
                        let lag = c.e.meta.ts_ns.checked_sub(ts)?;
                        (!d.copy && !c.copy && (*lo..=*hi).contains(&lag))
                            .then_some((lag.abs_diff(*center), n))
                    })
                    .min();
                if let Some((_, n)) = copy {
                    delayed[(n - *base) as usize].copy = true;
                }
                if q.is_empty() {
                    by_key.remove(&k);
                }
            }
        }
        Some((d.e, d.copy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzer::tests::{held_twice, rc};

    /// `n` requests 500 ns apart from node 1, each answered by an ACK from node 2 1 µs later.
    fn exchange(n: u32) -> Vec<Event> {
        exchange_every(n, 500)
    }

    /// `n` requests `gap` ns apart from node 1, each answered by an ACK from node 2 1 µs later.
    fn exchange_every(n: u32, gap: u64) -> Vec<Event> {
        (0..n)
            .flat_map(|i| {
                let ts = 1_000_000 + u64::from(i) * gap;
                [
                    rc(1, 2, 0x10, 0x0a, i, ts),
                    rc(2, 1, 0x20, 0x11, i, ts + 1_000),
                ]
            })
            .collect()
    }

    fn answer(op: u8) -> bool {
        op == 0x11
    }

    /// A sample that speculates holds nothing back and, finding copies, gives what a second
    /// pass needs: known lags, with the first release where the held events' came (a release
    /// sooner could miss a copy behind a packet whose time jumped ahead).
    #[test]
    fn a_speculating_sample_holds_nothing_and_a_known_one_releases_where_it_would_have() {
        let evs = held_twice(&exchange(3000), 300);
        let mut l = LateCopies::new(LagCopies::Speculate);
        let taken = l.learn(&evs, 0, answer).expect("decided");
        assert!(l.on() && l.held.is_empty() && l.holding().is_none());
        let lags = l.found().expect("copies found");
        assert_eq!(lags.taken, taken);
        let mut k = LateCopies::new(LagCopies::Known(lags));
        assert!(k.on() && !k.learning() && k.found().is_some());
        for (i, e) in evs.iter().enumerate() {
            assert!(!k.releasing() || i >= taken, "{i}");
            assert_eq!(k.delay(e.clone(), 0), i + 1 == taken, "{i}");
        }
        assert!(k.releasing());
        let mut held = LateCopies::default();
        assert_eq!(held.learn(&evs, 0, answer), Some(taken));
        assert_eq!(held.held.len(), taken);
        assert_eq!(held.found(), Some(lags));
    }

    /// Runs `evs` through learning (in batches of 256) and the delay: each event's copy flag,
    /// in order, and whether copies at a lag were found.
    fn run(evs: &[Event]) -> (Vec<(u64, bool)>, bool) {
        let mut l = LateCopies::default();
        let mut out = Vec::new();
        let mut on = false;
        let emit = |l: &mut LateCopies, out: &mut Vec<(u64, bool)>, all: bool| {
            while let Some((e, c)) = l.release(all) {
                out.push((e.meta.ts_ns, c));
            }
        };
        for batch in evs.chunks(256) {
            let mut rest = batch;
            if l.learning() {
                let Some(taken) = l.learn(batch, 0, answer) else {
                    continue;
                };
                let (held, _) = l.take_held();
                on = l.on();
                for e in held {
                    if on {
                        l.delay(e, 0);
                        emit(&mut l, &mut out, false);
                    } else {
                        out.push((e.meta.ts_ns, false));
                    }
                }
                rest = &batch[taken..];
            }
            for e in rest {
                if on {
                    l.delay(e.clone(), 0);
                    emit(&mut l, &mut out, false);
                } else {
                    out.push((e.meta.ts_ns, false));
                }
            }
        }
        l.stop();
        let (held, _) = l.take_held();
        on = l.on();
        for e in held {
            if on {
                l.delay(e, 0);
            } else {
                out.push((e.meta.ts_ns, false));
            }
        }
        emit(&mut l, &mut out, true);
        (out, on)
    }

    /// Every packet and its ACK held twice 12 µs apart, in the order of their times: the lag
    /// is learnt, and exactly the second copies are copies.
    #[test]
    fn a_capture_held_twice_12_us_apart_is_found() {
        let once = exchange(600);
        let twice = held_twice(&once, 12_000);
        let (out, on) = run(&twice);
        assert!(on);
        assert_eq!(out.len(), twice.len());
        let copies: Vec<u64> = out.iter().filter(|o| o.1).map(|o| o.0).collect();
        let want: Vec<u64> = {
            let mut v: Vec<u64> = once.iter().map(|e| e.meta.ts_ns + 12_000).collect();
            v.sort_unstable();
            v
        };
        assert_eq!(copies, want);
    }

    /// Held twice 100 µs apart, with a packet every 12.5 ns: the first 4,096 packets span
    /// 26 µs, too little of the lag to show it, so the sample goes on (until it spans 500 µs,
    /// or holds 32,768 packets).
    #[test]
    fn copies_later_than_the_first_packets_span_are_found() {
        let once = exchange_every(8_000, 25);
        let twice = held_twice(&once, 100_000);
        let (out, on) = run(&twice);
        assert!(on);
        assert_eq!(out.iter().filter(|o| o.1).count(), once.len());
    }

    /// Held twice 2 µs apart, sooner than any ACK timeout: found as well (in the order of
    /// their times, such copies trail behind other packets).
    #[test]
    fn copies_sooner_than_dup_ns_are_found_too() {
        let once = exchange(600);
        let (out, on) = run(&held_twice(&once, 2_000));
        assert!(on);
        assert_eq!(out.iter().filter(|o| o.1).count(), once.len());
    }

    /// Held twice 300 ns apart, beside a connection never answered that resends its 12
    /// requests every 4.3 µs: with their copies, those resends make more pairs of packets
    /// alike at 4.0–4.6 µs than every packet's copy makes at 300 ns. The answers' lags show
    /// the copies' (a `reorder` capture held twice read as with no copies).
    #[test]
    fn resends_to_a_peer_never_answering_do_not_hide_the_copies() {
        let mut once = exchange(600);
        once.extend((0..70u64).flat_map(|pass| {
            (0..12u32).map(move |i| {
                rc(
                    3,
                    4,
                    0x30,
                    0x0a,
                    i,
                    1_000_000 + pass * 4_300 + u64::from(i) * 100,
                )
            })
        }));
        once.sort_by_key(|e| e.meta.ts_ns);
        let (out, on) = run(&held_twice(&once, 300));
        assert!(on);
        assert_eq!(out.iter().filter(|o| o.1).count(), once.len());
    }

    /// A connection never answered resends all its requests every 16 µs: every packet comes
    /// again at one lag, but no answer does, so these are no copies.
    #[test]
    fn retries_of_a_connection_never_answered_are_no_copies() {
        let evs: Vec<Event> = (0..8u64)
            .flat_map(|pass| {
                (0..30u32).map(move |i| {
                    rc(
                        1,
                        2,
                        0x10,
                        0x0a,
                        i,
                        1_000_000 + pass * 16_000 + u64::from(i) * 500,
                    )
                })
            })
            .collect();
        let (out, on) = run(&evs);
        assert!(!on);
        assert_eq!(out.len(), evs.len());
    }

    /// A lossy capture: a fifth of the requests resent 20 µs later (with their ACKs). Most
    /// packets never come again, so nothing is a copy.
    #[test]
    fn resends_are_no_copies() {
        let mut evs = exchange(800);
        let resent: Vec<Event> = evs
            .iter()
            .filter(|e| e.bth.is_some_and(|b| b.psn % 5 == 0))
            .map(|e| {
                let mut c = e.clone();
                c.meta.ts_ns += 20_000;
                c
            })
            .collect();
        evs.extend(resent);
        evs.sort_by_key(|e| e.meta.ts_ns);
        let (out, on) = run(&evs);
        assert!(!on);
        assert!(out.iter().all(|o| !o.1));
    }

    /// In a capture held twice 10 µs apart, a request resent 9.1 µs after its first copy
    /// (about as late as a copy) is a resend: the first copy's copy is the one 10 µs later,
    /// and the resend has its own.
    #[test]
    fn a_resend_about_as_late_as_a_copy_is_no_copy() {
        let mut once = exchange(600);
        let first = once
            .iter()
            .find(|e| e.bth.is_some_and(|b| b.psn == 500))
            .cloned();
        let mut resend = first.unwrap();
        resend.meta.ts_ns += 9_100;
        let resend_ts = resend.meta.ts_ns;
        once.push(resend);
        once.sort_by_key(|e| e.meta.ts_ns);
        let (out, on) = run(&held_twice(&once, 10_000));
        assert!(on);
        assert_eq!(
            out.iter().find(|o| o.0 == resend_ts),
            Some(&(resend_ts, false))
        );
        assert_eq!(
            out.iter().find(|o| o.0 == resend_ts + 10_000),
            Some(&(resend_ts + 10_000, true))
        );
        assert_eq!(out.iter().filter(|o| o.1).count(), once.len());
    }
}
