//! A closed connection's summaries packed into bytes: unsigned LEB128 varints, in a fixed
//! order per type. Most of a summary's counters are 0 or small, so a 320-byte request summary
//! with its boxed latencies and size list packs into about 80 bytes.

/// Appends varints.
#[derive(Default)]
pub(crate) struct Writer(Vec<u8>);

impl Writer {
    pub fn u(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    /// `None` as 0; `Some(v)` as 1, then v.
    pub fn opt(&mut self, v: Option<u64>) {
        match v {
            None => self.u(0),
            Some(v) => {
                self.u(1);
                self.u(v);
            }
        }
    }

    pub fn finish(self) -> Box<[u8]> {
        self.0.into_boxed_slice()
    }
}

/// Reads what a [`Writer`] wrote, in the same order. Past the end (which a packing bug
/// alone could cause) every value reads as 0.
pub(crate) struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        Self(b)
    }

    pub fn u(&mut self) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        while let Some((&b, rest)) = self.0.split_first() {
            self.0 = rest;
            if shift < 64 {
                v |= u64::from(b & 0x7f) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        v
    }

    pub fn opt(&mut self) -> Option<u64> {
        (self.u() != 0).then(|| self.u())
    }

    /// A value written from a `u32`.
    pub fn u32(&mut self) -> u32 {
        u32::try_from(self.u()).unwrap_or(u32::MAX)
    }

    pub fn opt_u32(&mut self) -> Option<u32> {
        self.opt().map(|v| u32::try_from(v).unwrap_or(u32::MAX))
    }

    /// Bytes not read yet.
    pub fn left(&self) -> usize {
        self.0.len()
    }

    pub fn bool(&mut self) -> bool {
        self.u() != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        let vals = [
            0,
            1,
            127,
            128,
            300,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ];
        let mut w = Writer::default();
        for &v in &vals {
            w.u(v);
            w.opt(Some(v));
        }
        w.opt(None);
        let b = w.finish();
        let mut r = Reader::new(&b);
        for &v in &vals {
            assert_eq!(r.u(), v);
            assert_eq!(r.opt(), Some(v));
        }
        assert_eq!(r.opt(), None);
        assert_eq!(r.u(), 0, "past the end reads 0");
        assert_eq!(
            Reader::new(&[0xff; 20]).u(),
            u64::MAX,
            "overlong varints do not panic"
        );
    }
}
