//! Per-flow PSN tracking in 24-bit serial arithmetic (IBTA §9.7.1), with memory bounded by a
//! sliding window: what a request packet's PSN says about loss and retransmission.

use std::collections::VecDeque;

use rdmascope_wire::bth::psn_diff;

/// PSNs remembered per flow (a multiple of 64).
const WINDOW_WORDS: usize = 1024;

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
    seen: VecDeque<u64>,
    /// PSNs of READ requests: the PSNs right after one are consumed by its responses.
    read: VecDeque<u64>,
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

    fn bit(w: &VecDeque<u64>, i: usize) -> bool {
        w.get(i / 64).is_some_and(|x| x >> (i % 64) & 1 == 1)
    }

    /// Records a request PSN; `is_read` for RDMA READ requests.
    pub fn see(&mut self, psn: u32, is_read: bool) -> Class {
        if self.sealed {
            // Traffic after the connection closed: count it as new.
            return Class::New;
        }
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
        let class = if Self::bit(&self.seen, off) {
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
            let (s, r) = (
                self.seen.pop_front().unwrap_or(0),
                self.read.pop_front().unwrap_or(0),
            );
            if s == u64::MAX {
                // Every PSN of the word seen (the usual case): none missing, and the READ
                // shadow is the last one's.
                self.shadow = r >> 63 == 1;
            } else {
                for i in 0..64 {
                    self.step(s >> i & 1 == 1, r >> i & 1 == 1);
                }
            }
            self.base = self.base.wrapping_add(64) & 0xff_ffff;
        }
        class
    }

    fn step(&mut self, seen: bool, read: bool) {
        if seen {
            self.shadow = read;
        } else if !self.shadow {
            self.missing_out += 1;
        }
    }

    /// Counts the unseen PSNs now and frees the window (the flow has ended); later PSNs
    /// start a new window.
    pub fn seal(&mut self) {
        if !self.init {
            return;
        }
        self.missing_out = self.missing();
        self.seen = VecDeque::new();
        self.read = VecDeque::new();
        self.sealed = true;
    }

    /// PSNs between the first and the highest never seen (READ-consumed ones excepted).
    pub fn missing(&self) -> u64 {
        if !self.init {
            return 0;
        }
        if self.sealed {
            return self.missing_out;
        }
        let end = psn_diff(self.highest, self.base) as usize;
        let mut n = self.missing_out;
        let mut shadow = self.shadow;
        for i in 0..=end {
            if Self::bit(&self.seen, i) {
                shadow = Self::bit(&self.read, i);
            } else if !shadow {
                n += 1;
            }
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

    #[test]
    fn window_slides_and_keeps_counting() {
        let mut t = Tracker::default();
        for p in 0..200_000u32 {
            if p % 1000 != 7 {
                t.see(p, false);
            }
        }
        assert_eq!(t.missing(), 200);
        assert!(t.seen.len() <= WINDOW_WORDS);
    }
}
