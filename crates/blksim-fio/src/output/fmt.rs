//! fio's number and time formatting helpers (`lib/num2str.c`, `stat.h`, `ctime`), copied quirks included.

/// fio's `enum n2s_unit`: what `num2str` appends after the unit prefix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum N2sUnit {
    None,
    PerSec,
    Byte,
    Bit,
    #[default]
    BytePerSec,
    BitPerSec,
}

impl N2sUnit {
    fn suffix(self) -> &'static str {
        match self {
            N2sUnit::None => "",
            N2sUnit::PerSec => "/s",
            N2sUnit::Byte => "B",
            N2sUnit::Bit => "bit",
            N2sUnit::BytePerSec => "B/s",
            N2sUnit::BitPerSec => "bit/s",
        }
    }
}

/// fio's `num2str`: at most `maxlen` digits (the `.` counted), dividing by
/// 1000 (or 1024 with `pow2`) and adding a k/M/G (Ki/Mi/Gi) prefix as needed.
/// `base` says what one unit of `num` already is (1024 for a count of KiB).
pub fn num2str(num: u64, maxlen: usize, base: u64, pow2: bool, units: N2sUnit) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let prefixes = if pow2 { IEC } else { SI };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };

    let mut post_index = 0;
    let mut base = base;
    while base > 1 {
        base /= thousand;
        post_index += 1;
    }
    let mut num = match units {
        N2sUnit::Bit | N2sUnit::BitPerSec => num.wrapping_mul(8),
        _ => num,
    };

    let mut modulo = None;
    let mut carry = false;
    while post_index < prefixes.len() {
        if num.to_string().len() <= maxlen {
            break;
        }
        let m = num % thousand;
        num /= thousand;
        carry = m >= thousand / 2;
        modulo = Some(m);
        post_index += 1;
    }

    let done = |num: u64, post_index: usize| {
        let post_index = if post_index >= prefixes.len() { 0 } else { post_index };
        format!("{num}{}{}", prefixes[post_index], units.suffix())
    };
    let Some(modulo) = modulo else {
        return done(num, post_index);
    };
    let len = num.to_string().len() as isize;
    if maxlen as isize - len <= 1 {
        return done(if carry { num + 1 } else { num }, post_index);
    }
    let decimals = maxlen - len as usize - 1;
    // fio prints modulo/thousand with "%.Nf" and keeps what follows the
    // point; a fraction that rounds up to 1.0 carries into the number
    // (`if (tmp[0] == '1') num++;`): 19990 is "20.0k".
    let fraction = format!("{:.*}", decimals, modulo as f64 / thousand as f64);
    let num = if fraction.starts_with('1') { num + 1 } else { num };
    format!("{num}.{}{}{}", &fraction[2..], prefixes[post_index], units.suffix())
}

/// The unit `display_lat` uses for a min/max/mean/stddev set in ns, and the
/// values scaled to it (`stat.h` nsec_to_msec, then nsec_to_usec).
pub fn scale_lat(min: u64, max: u64, mean: f64, dev: f64) -> (&'static str, u64, u64, f64, f64) {
    if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        ("msec", min / 1_000_000, max / 1_000_000, mean / 1e6, dev / 1e6)
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        ("usec", min / 1000, max / 1000, mean / 1e3, dev / 1e3)
    } else {
        ("nsec", min, max, mean, dev)
    }
}

/// fio's `scale_down_ns`: a value and its unit (ns, us, ms, s), switching at 2000 of a unit.
pub fn scale_down_ns(ns: u64) -> (f64, &'static str) {
    if ns >= 2_000_000_000 {
        (ns as f64 / 1e9, "s")
    } else if ns >= 2_000_000 {
        (ns as f64 / 1e6, "ms")
    } else if ns >= 2000 {
        (ns as f64 / 1e3, "us")
    } else {
        (ns as f64, "ns")
    }
}

/// `ctime(3)` of seconds since the Unix epoch, in UTC, with its trailing newline:
/// `"Thu Jan  1 00:00:00 1970\n"`.
pub fn ctime(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{} {}{:3} {:02}:{:02}:{:02} {}\n",
        DAYS[(days % 7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        year
    )
}

/// Howard Hinnant's days-to-civil: (year, month 1-12, day 1-31) of days since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// fio's `percentile_precision`: the most digits after the point among the
/// listed percentiles, as written. blksim sees the parsed values, so it counts
/// the digits of each value's shortest form (`99.990` written counts as 2, not 3).
pub fn percentile_precision(list: &[f64]) -> usize {
    list.iter()
        .map(|p| {
            let text = format!("{p}");
            text.split_once('.').map_or(0, |(_, frac)| frac.len())
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num2str_matches_fio_examples() {
        // From a real fio run: 11887 reads of 4 KiB in 1001 ms.
        assert_eq!(num2str(11875, 4, 1, false, N2sUnit::None), "11.9k");
        assert_eq!(num2str(11887 * 4096, 4, 1, true, N2sUnit::Byte), "46.4MiB");
        assert_eq!(num2str(11887 * 4096, 4, 1, false, N2sUnit::Byte), "48.7MB");
        assert_eq!(num2str(937_748, 4, 1, false, N2sUnit::None), "938k");
        assert_eq!(num2str(4096, 4, 1, true, N2sUnit::Byte), "4096B");
        assert_eq!(num2str(65536, 4, 1, true, N2sUnit::Byte), "64.0KiB");
        assert_eq!(num2str(131072, 4, 1, true, N2sUnit::Byte), "128KiB");
        assert_eq!(num2str(4_676_543, 6, 1, false, N2sUnit::None), "4676.5k");
        assert_eq!(num2str(999, 4, 1, false, N2sUnit::BytePerSec), "999B/s");
        // A fraction that rounds up carries (fio 3.33 prints IOPS=20.0k for 19,990).
        assert_eq!(num2str(19_990, 4, 1, false, N2sUnit::None), "20.0k");
        assert_eq!(num2str(19_949, 4, 1, false, N2sUnit::None), "19.9k");
        assert_eq!(num2str(9_999, 4, 1, false, N2sUnit::None), "9999");
        assert_eq!(num2str(99_960, 4, 1, false, N2sUnit::None), "100.0k");
        assert_eq!(num2str(1_047_552, 4, 1, true, N2sUnit::Byte), "1023KiB");
        // fio's own unit test (unittests/lib/num2str.c).
        assert_eq!(num2str(1, 1, 1, false, N2sUnit::None), "1");
        assert_eq!(num2str(u64::MAX, 99, 1, false, N2sUnit::None), "18446744073709551615");
        assert_eq!(num2str(18446744073709551, 2, 1, false, N2sUnit::None), "18P");
        assert_eq!(num2str(18446744073709551, 4, 1, false, N2sUnit::None), "18.4P");
        assert_eq!(num2str(u64::MAX, 2, 1, false, N2sUnit::None), "18E");
        assert_eq!(num2str(u64::MAX, 4, 1, false, N2sUnit::None), "18.4E");
    }

    #[test]
    fn ctime_of_the_epoch_and_a_later_date() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970\n");
        // 2026-11-21 20:34:18 UTC, a Saturday.
        assert_eq!(ctime(1_795_293_258), "Sat Nov 21 20:34:18 2026\n");
        assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000\n");
    }

    #[test]
    fn default_percentile_list_has_precision_two() {
        assert_eq!(percentile_precision(&blksim::workload::DEFAULT_PERCENTILES), 2);
        assert_eq!(percentile_precision(&[50.0, 99.0]), 0);
        assert_eq!(percentile_precision(&[50.0, 99.999]), 3);
    }

    #[test]
    fn scale_down_ns_switches_at_two_thousand() {
        assert_eq!(scale_down_ns(0), (0.0, "ns"));
        assert_eq!(scale_down_ns(1999), (1999.0, "ns"));
        assert_eq!(scale_down_ns(2000), (2.0, "us"));
        assert_eq!(scale_down_ns(2_000_000), (2.0, "ms"));
        assert_eq!(scale_down_ns(2_000_000_000), (2.0, "s"));
    }
}
