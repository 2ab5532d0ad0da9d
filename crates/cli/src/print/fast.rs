//! Allocation-free writers for the hot printing paths (the `core::fmt` machinery costs more
//! than the decode itself at millions of packets per second).

const HEX: &[u8; 16] = b"0123456789abcdef";
const PAIRS: &[u8; 200] = b"00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/// `String`-like appends on the byte buffer the printers fill.
pub trait Out {
    fn push_str(&mut self, s: &str);
    fn pushc(&mut self, c: char);
}

impl Out for Vec<u8> {
    #[inline]
    fn push_str(&mut self, s: &str) {
        self.extend_from_slice(s.as_bytes());
    }
    #[inline]
    fn pushc(&mut self, c: char) {
        let mut b = [0u8; 4];
        self.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
    }
}

/// Appends `v` in decimal.
#[inline]
pub fn dec(o: &mut Vec<u8>, mut v: u64) {
    if v < 10 {
        o.push(b'0' + v as u8);
        return;
    }
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[d..d + 2]);
    }
    if v >= 10 {
        let d = v as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[d..d + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    o.extend_from_slice(&buf[i..]);
}

/// Appends `v` in lower-case hex, zero-padded to at least `width` digits, without `0x`.
#[inline]
pub fn hex(o: &mut Vec<u8>, v: u64, width: usize) {
    let mut buf = [0u8; 16];
    let mut i = buf.len();
    let mut x = v;
    loop {
        i -= 1;
        buf[i] = HEX[(x & 15) as usize];
        x >>= 4;
        if x == 0 {
            break;
        }
    }
    while buf.len() - i < width.min(16) {
        i -= 1;
        buf[i] = b'0';
    }
    o.extend_from_slice(&buf[i..]);
}

/// Appends `0x` and `v` in hex with at least `width` digits.
#[inline]
pub fn hex0x(o: &mut Vec<u8>, v: u64, width: usize) {
    o.push_str("0x");
    hex(o, v, width);
}

/// Appends a dotted-quad IPv4 address.
#[inline]
pub fn ipv4(o: &mut Vec<u8>, a: [u8; 4]) {
    for (i, b) in a.iter().enumerate() {
        if i > 0 {
            o.pushc('.');
        }
        dec(o, u64::from(*b));
    }
}

/// Appends a colon-separated MAC address.
#[inline]
pub fn mac(o: &mut Vec<u8>, m: [u8; 6]) {
    for (i, b) in m.iter().enumerate() {
        if i > 0 {
            o.pushc(':');
        }
        hex(o, u64::from(*b), 2);
    }
}

/// Appends `seconds.nanoseconds`.
#[inline]
pub fn epoch(o: &mut Vec<u8>, ns: u64) {
    dec(o, ns / 1_000_000_000);
    o.pushc('.');
    let frac = ns % 1_000_000_000;
    let mut buf = [b'0'; 9];
    let mut x = frac;
    for d in buf.iter_mut().rev() {
        *d = b'0' + (x % 10) as u8;
        x /= 10;
    }
    o.extend_from_slice(&buf);
}

/// Appends `HH:MM:SS.nnnnnnnnn`, the UTC time of day.
#[inline]
pub fn time_of_day(o: &mut Vec<u8>, ns: u64) {
    let t = ns / 1_000_000_000 % 86_400;
    for (i, v) in [t / 3600, t / 60 % 60, t % 60].iter().enumerate() {
        if i > 0 {
            o.pushc(':');
        }
        if *v < 10 {
            o.pushc('0');
        }
        dec(o, *v);
    }
    let mut s = Vec::with_capacity(12);
    epoch(&mut s, ns % 1_000_000_000);
    o.extend_from_slice(&s[1..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn writers() {
        let mut o = Vec::new();
        dec(&mut o, 0);
        o.pushc(' ');
        dec(&mut o, u64::MAX);
        o.pushc(' ');
        hex(&mut o, 0x1f, 6);
        o.pushc(' ');
        hex0x(&mut o, 0, 0);
        o.pushc(' ');
        ipv4(&mut o, [10, 0, 0, 255]);
        o.pushc(' ');
        mac(&mut o, [2, 0, 0xab, 0, 0, 1]);
        o.pushc(' ');
        epoch(&mut o, 1_000_000_007);
        o.pushc(' ');
        time_of_day(&mut o, 3_723_000_000_123);
        assert_eq!(String::from_utf8(o).unwrap(), "0 18446744073709551615 00001f 0x0 10.0.0.255 02:00:ab:00:00:01 1.000000007 01:02:03.000000123");
    }
}
