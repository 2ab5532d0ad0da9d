//! Per-flow PSN tracking in 24-bit serial arithmetic (IBTA §9.7.1), with memory bounded by a
//! sliding window: what a request packet's PSN says about loss and retransmission.

use std::collections::VecDeque;

use rdmascope_wire::bth::psn_diff;

/// PSNs remembered per flow (a multiple of 64).
const WINDOW_WORDS: usize = 1024;
/// PSNs the window covers.
pub(crate) const WINDOW_PSNS: u32 = 64 * WINDOW_WORDS as u32;

/// What a request PSN was, against the PSNs seen before it on its flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Beyond the highest PSN so far.
    New,
    /// Seen before: a second or later copy.
    Retransmitted,
    /// Below the highest PSN and never seen: lost before the capture point, now recovered.
    GapFilled,
}

/// The PSNs seen on one flow.
#[derive(Debug, Clone, Default)]
pub struct Tracker {
    init: bool,
    base: u32,
    highest: u32,
    /// 64 PSNs a word pair: (seen, READ). A seen PSN with the READ bit is a READ request; the
    /// PSNs right after it are consumed by its responses (its shadow, up to the next seen
    /// PSN). An unseen PSN with the READ bit is one its responses showed consumed
    /// ([`Tracker::consumed`]): the shadow ends there.
    words: VecDeque<(u64, u64)>,
    /// Unseen PSNs that slid out of the window.
    missing_out: u64,
    /// True while the slide-out scan is inside a READ's consumed range.
    shadow: bool,
    /// The window was freed by `seal`; `missing_out` holds the final count.
    sealed: bool,
}

impl Tracker {
    pub fn highest(&self) -> Option<u32> {
        self.init.then_some(self.highest)
    }

    /// Whether PSN `i` of the window was seen, and whether it was a READ request.
    fn bits(w: &VecDeque<(u64, u64)>, i: usize) -> (bool, bool) {
        w.get(i / 64).map_or((false, false), |&(s, r)| {
            (s >> (i % 64) & 1 == 1, r >> (i % 64) & 1 == 1)
        })
    }

    /// Records a request PSN; `is_read` for RDMA READ requests.
    #[inline]
    pub fn see(&mut self, psn: u32, is_read: bool) -> Class {
        // The usual case, inline: a PSN beyond the highest (so never seen) whose word is stored.
        if self.init && !self.sealed && psn_diff(psn, self.highest) > 0 {
            let off = psn_diff(psn, self.base);
            if let Some(w) = usize::try_from(off).ok().and_then(|o| {
                let w = self.words.get_mut(o / 64)?;
                Some((w, o % 64))
            }) {
                let (w, bit) = w;
                w.0 |= 1 << bit;
                w.1 |= u64::from(is_read) << bit;
                self.highest = psn;
                return Class::New;
            }
        }
        self.see_general(psn, is_read)
    }

    #[inline(never)]
    fn see_general(&mut self, psn: u32, is_read: bool) -> Class {
        if self.sealed {
            // Traffic after the connection closed: count it as new.
            return Class::New;
        }
        if !self.init {
            self.init = true;
            self.base = psn;
            self.highest = psn;
            self.words.push_back((1, u64::from(is_read)));
            return Class::New;
        }
        let off = psn_diff(psn, self.base);
        if off < 0 {
            return Class::Retransmitted;
        }
        let mut off = off as usize;
        // Slide the window before growing it, so it never holds more than `WINDOW_WORDS` words
        // (a deque pushed past that would double its capacity) and a far jump costs no memory.
        let need = off / 64 + 1;
        if need > WINDOW_WORDS {
            let slide = need - WINDOW_WORDS;
            let stored = slide.min(self.words.len());
            for _ in 0..stored {
                self.slide_out();
            }
            // Words never stored: 64 unseen PSNs each.
            let unstored = (slide - stored) as u64;
            if !self.shadow {
                self.missing_out += 64 * unstored;
            }
            self.base = self.base.wrapping_add(64 * unstored as u32) & 0xff_ffff;
            off -= 64 * slide;
        }
        while off / 64 >= self.words.len() {
            self.words.push_back((0, 0));
        }
        let class = if Self::bits(&self.words, off).0 {
            Class::Retransmitted
        } else if psn_diff(psn, self.highest) < 0 {
            Class::GapFilled
        } else {
            Class::New
        };
        if let Some(w) = self.words.get_mut(off / 64) {
            w.0 |= 1 << (off % 64);
            if is_read {
                w.1 |= 1 << (off % 64);
            }
        }
        if psn_diff(psn, self.highest) > 0 {
            self.highest = psn;
        }
        class
    }

    /// Moves the window's first word out, counting its unseen PSNs.
    fn slide_out(&mut self) {
        let (s, r) = self.words.pop_front().unwrap_or((0, 0));
        let (n, shadow) = Self::word_missing(s, r, u64::MAX, self.shadow);
        self.missing_out += u64::from(n);
        self.shadow = shadow;
        self.base = self.base.wrapping_add(64) & 0xff_ffff;
    }

    /// The missing PSNs among those of one window word in `valid` (`s` the seen bits, `r` the
    /// READ bits), in order, `shadow` carried in from the PSN before, and the shadow carried
    /// out. A PSN is missing when unseen, not consumed and not in a READ's shadow: a seen READ
    /// request starts a shadow, any other seen PSN or one marked consumed
    /// ([`Tracker::consumed`]) ends it. All 64 at once: the PSNs that end or start a shadow
    /// are the word's marks; a run of unmarked PSNs lies in a shadow when the mark below it
    /// starts one (or, for the run at the bottom, when one is carried in), and adding the
    /// run's lowest bit to the runs carries through exactly that run.
    #[inline]
    fn word_missing(s: u64, r: u64, valid: u64, shadow: bool) -> (u32, bool) {
        let marks = (s | r) & valid;
        let starts = s & r & valid;
        let unmarked = !marks & valid;
        let run_starts = (starts << 1 | u64::from(shadow)) & unmarked;
        let shadowed = (unmarked.wrapping_add(run_starts) ^ unmarked) & unmarked;
        let out = match marks.checked_ilog2() {
            Some(last) => starts >> last & 1 == 1,
            None => shadow,
        };
        ((unmarked & !shadowed).count_ones(), out)
    }

    /// PSNs `from` to `to` were consumed by a READ request's responses (`to` its last): none
    /// of them is missing, and the unseen PSNs after `to` are no longer in the READ's shadow.
    /// Only those within the window and up to the highest PSN are marked.
    pub fn consumed(&mut self, from: u32, to: u32) {
        if !self.init || self.sealed || psn_diff(to, from) < 0 {
            return;
        }
        let to = if psn_diff(to, self.highest) > 0 {
            self.highest
        } else {
            to
        };
        let (Ok(a), Ok(b)) = (
            usize::try_from(psn_diff(from, self.base).max(0)),
            usize::try_from(psn_diff(to, self.base)),
        ) else {
            return;
        };
        let mut i = a;
        while i <= b {
            let (bit, n) = (i % 64, (b - i + 1).min(64 - i % 64));
            let mask = (u64::MAX >> (64 - n)) << bit;
            if let Some(w) = self.words.get_mut(i / 64) {
                w.1 |= mask & !w.0;
            }
            i += n;
        }
    }

    /// Starts afresh at the next PSN seen, as at the first: the QP began a new connection,
    /// whose PSNs have nothing to do with the old ones. The PSNs the old connection never
    /// showed still count as missing. A sealed tracker stays sealed.
    pub fn restart(&mut self) {
        if !self.init || self.sealed {
            return;
        }
        *self = Self {
            missing_out: self.missing(),
            ..Self::default()
        };
    }

    /// Counts the unseen PSNs now and frees the window (the flow has ended); later PSNs
    /// start a new window.
    pub fn seal(&mut self) {
        if !self.init {
            return;
        }
        self.missing_out = self.missing();
        self.words = VecDeque::new();
        self.sealed = true;
    }

    /// Packs a sealed tracker (its window is empty): the highest PSN comes first, so
    /// [`Tracker::packed_highest`] reads it alone.
    pub(crate) fn pack(&self, w: &mut crate::pack::Writer) {
        debug_assert!(self.words.is_empty(), "only a sealed tracker is packed");
        w.u(u64::from(self.init) | u64::from(self.shadow) << 1 | u64::from(self.sealed) << 2);
        w.u(u64::from(self.highest));
        w.u(u64::from(self.base));
        w.u(self.missing_out);
    }

    pub(crate) fn unpack(r: &mut crate::pack::Reader<'_>) -> Self {
        let flags = r.u();
        Self {
            init: flags & 1 != 0,
            shadow: flags & 2 != 0,
            sealed: flags & 4 != 0,
            highest: r.u32(),
            base: r.u32(),
            missing_out: r.u(),
            words: VecDeque::new(),
        }
    }

    /// [`Tracker::highest`] of a packed tracker.
    pub(crate) fn packed_highest(r: &mut crate::pack::Reader<'_>) -> Option<u32> {
        let init = r.u() & 1 != 0;
        let highest = r.u32();
        init.then_some(highest)
    }

    /// Of [`Tracker::missing`], those at or before `psn` (an ACK's): unseen PSNs of the
    /// window after `psn` are subtracted, READ-consumed ones too, so the answer is never more
    /// than the truth. 0 when `psn` lies before the window.
    pub fn missing_through(&self, psn: u32) -> u64 {
        if !self.init || self.sealed {
            return 0;
        }
        if psn_diff(psn, self.highest) >= 0 {
            return self.missing();
        }
        let Ok(from) = usize::try_from(psn_diff(psn, self.base)) else {
            return 0;
        };
        let end = psn_diff(self.highest, self.base) as usize;
        let after = (from + 1..=end)
            .filter(|&i| !Self::bits(&self.words, i).0)
            .count() as u64;
        self.missing().saturating_sub(after)
    }

    /// The first PSN after `psn` seen on the flow: after a READ request, the request that
    /// followed the PSNs its responses consumed. `None` past the highest PSN, outside the
    /// window, or once sealed.
    pub fn next_seen(&self, psn: u32) -> Option<u32> {
        if !self.init || self.sealed {
            return None;
        }
        let from = usize::try_from(psn_diff(psn, self.base)).ok()? + 1;
        let end = usize::try_from(psn_diff(self.highest, self.base)).ok()?;
        let mut i = from;
        while i <= end {
            let bits = self.words.get(i / 64)?.0 >> (i % 64);
            if bits != 0 {
                let at = i + bits.trailing_zeros() as usize;
                return (at <= end).then(|| self.base.wrapping_add(at as u32) & 0xff_ffff);
            }
            i = (i / 64 + 1) * 64;
        }
        None
    }

    /// [`Tracker::bits`] of `psn`: `None` past the highest PSN, before the window, or once
    /// sealed.
    fn bits_of(&self, psn: u32) -> Option<(bool, bool)> {
        if !self.init || self.sealed || psn_diff(psn, self.highest) > 0 {
            return None;
        }
        let i = usize::try_from(psn_diff(psn, self.base)).ok()?;
        Some(Self::bits(&self.words, i))
    }

    /// Whether `psn` was seen on the flow: `false` past the highest PSN, outside the window,
    /// or once sealed.
    pub fn seen(&self, psn: u32) -> bool {
        self.bits_of(psn).is_some_and(|(seen, _)| seen)
    }

    /// Whether `psn` was seen as a request other than an RDMA READ (answered by an ACK, never
    /// by READ responses): `false` when unknown, as [`Tracker::seen`].
    pub fn other_request(&self, psn: u32) -> bool {
        self.bits_of(psn).is_some_and(|(seen, read)| seen && !read)
    }

    /// PSNs between the first and the highest never seen (READ-consumed ones excepted).
    pub fn missing(&self) -> u64 {
        if !self.init {
            // Nothing seen yet, or nothing since a restart.
            return self.missing_out;
        }
        if self.sealed {
            return self.missing_out;
        }
        let end = psn_diff(self.highest, self.base) as usize;
        let mut n = self.missing_out;
        let mut shadow = self.shadow;
        for k in 0..=end / 64 {
            let (s, r) = self.words.get(k).copied().unwrap_or((0, 0));
            let last = if k == end / 64 { end % 64 } else { 63 };
            let (missing, out) = Self::word_missing(s, r, u64::MAX >> (63 - last), shadow);
            n += u64::from(missing);
            shadow = out;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_at_the_wrap() {
        let mut t = Tracker::default();
        assert_eq!(t.see(0xff_fffe, false), Class::New);
        assert_eq!(t.see(0, false), Class::New);
        assert_eq!(t.missing(), 1); // 0xffffff
        assert_eq!(t.see(0xff_ffff, false), Class::GapFilled);
        assert_eq!(t.see(0, false), Class::Retransmitted);
        assert_eq!(t.see(1, false), Class::New);
        assert_eq!(t.missing(), 0);
    }

    /// After a restart the next PSN is new wherever it lies; the PSNs unseen before it stay
    /// missing, and a sealed tracker is not restarted.
    #[test]
    fn seen_psns_are_told_from_unseen_ones() {
        let mut t = Tracker::default();
        assert!(!t.seen(5));
        for psn in [0xff_fffe, 0xff_ffff, 1] {
            t.see(psn, false);
        }
        assert!(t.seen(0xff_fffe) && t.seen(0xff_ffff) && t.seen(1));
        assert!(!t.seen(0) && !t.seen(2) && !t.seen(0xff_fffd));
    }

    #[test]
    fn a_restart_keeps_what_was_missing() {
        let mut t = Tracker::default();
        t.restart();
        assert_eq!(t.missing(), 0);
        for p in [100, 101, 104] {
            t.see(p, false);
        }
        t.restart();
        assert_eq!(t.missing(), 2);
        assert_eq!(t.highest(), None);
        assert_eq!(t.see(7, false), Class::New);
        assert_eq!(t.see(8, false), Class::New);
        assert_eq!(t.see(7, false), Class::Retransmitted);
        assert_eq!(t.missing(), 2);
        t.seal();
        t.restart();
        assert_eq!((t.missing(), t.see(100, false)), (2, Class::New));
    }

    #[test]
    fn missing_through_an_ack() {
        let mut t = Tracker::default();
        for p in [0xff_fffe, 0, 3, 4, 8] {
            t.see(p, false);
        }
        // Unseen: 0xffffff, 1, 2, 5, 6, 7.
        assert_eq!(t.missing(), 6);
        assert_eq!(t.missing_through(8), 6);
        assert_eq!(t.missing_through(100), 6);
        assert_eq!(t.missing_through(4), 3);
        assert_eq!(t.missing_through(1), 2);
        assert_eq!(t.missing_through(0xff_fffe), 0);
        assert_eq!(t.missing_through(0xff_0000), 0); // before the window
    }

    /// A request other than a READ is told from a READ, from the PSNs a READ's responses
    /// consumed and from PSNs past the highest, across the wrap.
    #[test]
    fn other_requests_are_told_from_reads() {
        let mut t = Tracker::default();
        let start = 0xff_fffe;
        t.see(start, false);
        t.see(start + 1, true); // a READ of 3 PSNs: 0 and 1 are its responses'
        t.see(2, false);
        assert!(t.other_request(start));
        assert!(!t.other_request(start + 1));
        assert!(!t.other_request(0) && !t.other_request(1));
        assert!(t.other_request(2));
        assert!(!t.other_request(3));
        assert!(!t.other_request(start - 100));
    }

    /// The next PSN seen: the next request, past what a READ consumed, across words and the
    /// wrap; none past the highest or before the window.
    #[test]
    fn next_seen_skips_what_reads_consumed() {
        let mut t = Tracker::default();
        let start = 0xff_fff0;
        t.see(start, false);
        t.see(start + 1, true); // a READ of 3 PSNs: 0xFFFFF2 and 0xFFFFF3 are its responses'
        for i in 4..100 {
            t.see((start + i) & 0xff_ffff, false);
        }
        t.see((start + 200) & 0xff_ffff, false);
        assert_eq!(t.next_seen(start), Some(start + 1));
        assert_eq!(t.next_seen(start + 1), Some(start + 4));
        assert_eq!(t.next_seen(start + 20), Some(5)); // across the wrap
        assert_eq!(
            t.next_seen((start + 99) & 0xff_ffff),
            Some((start + 200) & 0xff_ffff)
        );
        assert_eq!(t.next_seen((start + 200) & 0xff_ffff), None);
        assert_eq!(t.next_seen(start - 1), None);
    }

    #[test]
    fn read_requests_consume_psns() {
        let mut t = Tracker::default();
        t.see(10, false);
        t.see(11, true); // READ of 4 responses: 11..14
        assert_eq!(t.see(15, false), Class::New);
        assert_eq!(t.missing(), 0);
        assert_eq!(t.see(11, true), Class::Retransmitted);
        t.see(17, false); // 16 lost
        assert_eq!(t.missing(), 1);
    }

    /// The window as it was first written (grow to the new PSN, then slide), kept to check
    /// that sliding first changes nothing but memory.
    #[derive(Default)]
    struct Reference {
        init: bool,
        base: u32,
        highest: u32,
        seen: VecDeque<u64>,
        read: VecDeque<u64>,
        missing_out: u64,
        shadow: bool,
    }

    impl Reference {
        fn see(&mut self, psn: u32, is_read: bool) -> Class {
            if !self.init {
                self.init = true;
                self.base = psn;
                self.highest = psn;
                self.seen.push_back(1);
                self.read.push_back(u64::from(is_read));
                return Class::New;
            }
            let off = psn_diff(psn, self.base);
            if off < 0 {
                return Class::Retransmitted;
            }
            let off = off as usize;
            while off / 64 >= self.seen.len() {
                self.seen.push_back(0);
                self.read.push_back(0);
            }
            let class = if self.seen[off / 64] >> (off % 64) & 1 == 1 {
                Class::Retransmitted
            } else if psn_diff(psn, self.highest) < 0 {
                Class::GapFilled
            } else {
                Class::New
            };
            self.seen[off / 64] |= 1 << (off % 64);
            if is_read {
                self.read[off / 64] |= 1 << (off % 64);
            }
            if psn_diff(psn, self.highest) > 0 {
                self.highest = psn;
            }
            while self.seen.len() > WINDOW_WORDS {
                let s = self.seen.pop_front().unwrap_or(0);
                let r = self.read.pop_front().unwrap_or(0);
                for i in 0..64 {
                    if s >> i & 1 == 1 {
                        self.shadow = r >> i & 1 == 1;
                    } else if r >> i & 1 == 1 {
                        self.shadow = false;
                    } else if !self.shadow {
                        self.missing_out += 1;
                    }
                }
                self.base = self.base.wrapping_add(64) & 0xff_ffff;
            }
            class
        }

        /// PSN by PSN: an unseen PSN from `from` to `to` within the window and up to the
        /// highest is marked consumed.
        fn consumed(&mut self, from: u32, to: u32) {
            if !self.init || psn_diff(to, from) < 0 {
                return;
            }
            let mut p = from;
            loop {
                let off = psn_diff(p, self.base);
                if psn_diff(p, self.highest) > 0 {
                    break;
                }
                if off >= 0 {
                    let off = off as usize;
                    if off / 64 < self.seen.len() && self.seen[off / 64] >> (off % 64) & 1 == 0 {
                        self.read[off / 64] |= 1 << (off % 64);
                    }
                }
                if p == to {
                    break;
                }
                p = p.wrapping_add(1) & 0xff_ffff;
            }
        }

        /// Bit by bit: the first seen PSN after `psn` up to the highest.
        fn next_seen(&self, psn: u32) -> Option<u32> {
            let from = usize::try_from(psn_diff(psn, self.base)).ok()?;
            let end = usize::try_from(psn_diff(self.highest, self.base)).ok()?;
            (from + 1..=end)
                .find(|&i| {
                    self.seen
                        .get(i / 64)
                        .is_some_and(|w| w >> (i % 64) & 1 == 1)
                })
                .map(|i| self.base.wrapping_add(i as u32) & 0xff_ffff)
        }

        /// Bit by bit, as the window's definition reads.
        fn missing(&self) -> u64 {
            if !self.init {
                return 0;
            }
            let end = psn_diff(self.highest, self.base) as usize;
            let (mut n, mut shadow) = (self.missing_out, self.shadow);
            for i in 0..=end {
                let bit = |d: &VecDeque<u64>| d.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1);
                if bit(&self.seen) {
                    shadow = bit(&self.read);
                } else if bit(&self.read) {
                    shadow = false;
                } else if !shadow {
                    n += 1;
                }
            }
            n
        }
    }

    proptest::proptest! {
        /// A word's missing PSNs and the shadow it carries out, all 64 at once, are what the
        /// PSNs one by one give (`valid`: the word's lowest `bits` PSNs).
        #[test]
        fn a_word_at_once_is_its_psns_one_by_one(
            s: u64,
            r: u64,
            dense_reads: bool,
            shadow: bool,
            bits in 1u32..=64,
        ) {
            // Also words with many READ requests among their seen PSNs.
            let r = if dense_reads { r | s & r.rotate_left(7) } else { r };
            let valid = u64::MAX >> (64 - bits);
            let (mut n, mut sh) = (0u32, shadow);
            for i in 0..bits {
                let (seen, read) = (s >> i & 1 == 1, r >> i & 1 == 1);
                if seen {
                    sh = read;
                } else if read {
                    sh = false;
                } else if !sh {
                    n += 1;
                }
            }
            proptest::prop_assert_eq!(Tracker::word_missing(s, r, valid, shadow), (n, sh));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        /// Same classes and missing counts as the grow-then-slide window, through gaps,
        /// retransmissions, READs, jumps far past the window and the 24-bit wrap; and the
        /// window's memory stays within `WINDOW_WORDS` words.
        #[test]
        fn sliding_first_matches_the_reference(
            start in 0u32..0x100_0000,
            steps in proptest::collection::vec((0u8..16, 0u32..200_000, proptest::bool::ANY), 1..2000),
        ) {
            let mut t = Tracker::default();
            let mut r = Reference::default();
            let mut psn = start;
            for (i, &(kind, amount, is_read)) in steps.iter().enumerate() {
                psn = match kind {
                    0..=9 => psn.wrapping_add(1),                    // in order
                    10 | 11 => psn.wrapping_add(2 + amount % 100),  // a gap
                    12 => psn.wrapping_sub(amount % 500),           // a retransmission
                    13 => psn.wrapping_add(amount * 8),             // far ahead
                    14 => psn.wrapping_add(65_536 + amount % 4096), // just past the window
                    _ => psn.wrapping_sub(amount % 70_000),         // far back
                } & 0xff_ffff;
                proptest::prop_assert_eq!(t.see(psn, is_read), r.see(psn, is_read), "step {}", i);
                if is_read && kind == 12 {
                    let from = psn.wrapping_sub(amount % 300) & 0xff_ffff;
                    let to = from.wrapping_add(amount % 200) & 0xff_ffff;
                    t.consumed(from, to);
                    r.consumed(from, to);
                }
                if i % 97 == 0 {
                    proptest::prop_assert_eq!(t.missing(), r.missing(), "step {}", i);
                }
                proptest::prop_assert!(t.words.capacity() <= WINDOW_WORDS);
            }
            proptest::prop_assert_eq!(t.missing(), r.missing());
        }

        /// The missing count, which goes a word at a time, equals the bit-by-bit count when
        /// READs are rare (so most words hold none, and a READ's shadow often runs into the
        /// next word), at every step; so does the next PSN seen after one up to 200 back.
        #[test]
        fn missing_by_words_matches_bit_by_bit(
            start in 0u32..0x100_0000,
            steps in proptest::collection::vec((0u8..16, 0u32..300, 0u8..40), 1..1500),
        ) {
            let mut t = Tracker::default();
            let mut r = Reference::default();
            let mut psn = start;
            for (i, &(kind, amount, read)) in steps.iter().enumerate() {
                psn = match kind {
                    0..=11 => psn.wrapping_add(1),                  // in order
                    12 | 13 => psn.wrapping_add(2 + amount % 150), // a gap
                    14 => psn.wrapping_sub(amount % 200),          // a retransmission
                    _ => psn.wrapping_add(amount * 3),             // a jump
                } & 0xff_ffff;
                let is_read = read == 0;
                proptest::prop_assert_eq!(t.see(psn, is_read), r.see(psn, is_read), "step {}", i);
                // A READ's responses come: the PSNs after it up to its last are consumed.
                if read == 1 {
                    let from = psn.wrapping_sub(amount % 200) & 0xff_ffff;
                    let to = from.wrapping_add(amount % 90) & 0xff_ffff;
                    t.consumed(from, to);
                    r.consumed(from, to);
                }
                proptest::prop_assert_eq!(t.missing(), r.missing(), "step {}", i);
                let back = psn.wrapping_sub(amount % 200) & 0xff_ffff;
                proptest::prop_assert_eq!(t.next_seen(back), r.next_seen(back), "step {}", i);
            }
        }
    }

    /// Responses that show where a READ's PSNs end make the unseen PSNs after them missing:
    /// a READ at 10 answered up to 13, a request at 16: 14 and 15 were lost (before, the READ's
    /// shadow hid them); a READ whose responses did not come keeps its shadow.
    #[test]
    fn consumed_psns_end_a_read_s_shadow() {
        let mut t = Tracker::default();
        t.see(9, false);
        t.see(10, true);
        t.see(16, false);
        assert_eq!(t.missing(), 0);
        t.consumed(11, 13);
        assert_eq!(t.missing(), 2);
        t.see(17, true);
        t.see(30, false);
        assert_eq!(t.missing(), 2);
        // Past the highest PSN nothing is marked; the next PSNs count as before.
        t.consumed(31, 40);
        t.see(41, false);
        assert_eq!(t.missing(), 2 + 10);
    }

    #[test]
    fn window_slides_and_keeps_counting() {
        let mut t = Tracker::default();
        for p in 0..200_000u32 {
            if p % 1000 != 7 {
                t.see(p, false);
            }
        }
        assert_eq!(t.missing(), 200);
        assert!(t.words.len() <= WINDOW_WORDS);
    }
}
