//! UTC date and time formatting of nanosecond timestamps (no time-zone database needed).

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `HH:MM:SS.nnnnnnnnn` (UTC time of day).
pub fn time_of_day(out: &mut impl std::fmt::Write, ns: u64) -> std::fmt::Result {
    let s = ns / 1_000_000_000;
    let t = s % 86_400;
    write!(
        out,
        "{:02}:{:02}:{:02}.{:09}",
        t / 3600,
        t / 60 % 60,
        t % 60,
        ns % 1_000_000_000
    )
}

/// `YYYY-MM-DD HH:MM:SS.nnnnnnnnn UTC`.
pub fn date_time(ns: u64) -> String {
    let s = (ns / 1_000_000_000) as i64;
    let (y, m, d) = civil(s.div_euclid(86_400));
    let mut out = format!("{y:04}-{m:02}-{d:02} ");
    let _ = time_of_day(&mut out, ns);
    out.push_str(" UTC");
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates() {
        assert_eq!(super::date_time(0), "1970-01-01 00:00:00.000000000 UTC");
        assert_eq!(
            super::date_time(1_210_794_479_499_693_535),
            "2008-05-14 19:47:59.499693535 UTC"
        );
        assert_eq!(
            super::date_time(951_782_400_000_000_000),
            "2000-02-29 00:00:00.000000000 UTC"
        );
    }
}
