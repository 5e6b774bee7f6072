//! Value syntax of fio options, copied from fio's `parse.c`: sizes, times,
//! integers, booleans, choices, per-direction lists, float lists, CPU lists
//! and `:`-separated file names. Errors are plain messages; the caller adds
//! file, line and option.

use blksim::workload::{BsSplit, RandomDistribution, Zone};

/// A size as fio reads it: bytes, or a percentage (`size=20%`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SizeVal {
    Bytes(u64),
    Percent(u64),
}

/// C's `isspace` on ASCII.
fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// `strtoll(s, NULL, base)` with fio's checks: the number, or `None` when no
/// digit was read or the value overflows.
fn strtoll(s: &str, base: u32) -> Option<i128> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && is_c_space(b[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        neg = b[i] == b'-';
        i += 1;
    }
    if base == 16 && i + 1 < b.len() && b[i] == b'0' && (b[i + 1] | 0x20) == b'x' {
        let has_hex_digit = b.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit());
        if has_hex_digit {
            i += 2;
        }
    }
    let start = i;
    let mut val: i128 = 0;
    while i < b.len() {
        let Some(d) = (b[i] as char).to_digit(base) else { break };
        val = val * base as i128 + d as i128;
        if val > i64::MAX as i128 {
            return None;
        }
        i += 1;
    }
    if i == start {
        return None;
    }
    Some(if neg { -val } else { val })
}

/// fio's `__get_mult_bytes`: the multiplier named by a suffix (already cut at
/// the first letter or `%`). With `kb_base=1024`, `kib`-style suffixes mean
/// powers of 1000 (fio's "inverted" IEC/SI compatibility quirk).
fn suffix_mult(suffix: &str, kb_base: u64) -> Option<u64> {
    let mut c = suffix.to_ascii_lowercase();
    if let Some(cut) = c.find([':', '-', ',', '/']) {
        c.truncate(cut);
    }
    let alt = if kb_base == 1000 { 1024 } else { 1000 };
    let (pow, mult) = if c.starts_with("pib") {
        (5, alt)
    } else if c.starts_with("tib") {
        (4, alt)
    } else if c.starts_with("gib") {
        (3, alt)
    } else if c.starts_with("mib") {
        (2, alt)
    } else if c.starts_with("kib") {
        (1, alt)
    } else if c.starts_with('p') {
        (5, kb_base)
    } else if c.starts_with('t') {
        (4, kb_base)
    } else if c.starts_with('g') {
        (3, kb_base)
    } else if c.starts_with('m') {
        (2, kb_base)
    } else if c.starts_with('k') {
        (1, kb_base)
    } else if c.starts_with('%') {
        return None;
    } else {
        (0, kb_base)
    };
    Some(mult.pow(pow))
}

/// Where fio looks for a unit suffix: after the leading digits (and a sign
/// before them). `None` when the character there is not a letter or `%`.
fn suffix_of(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut digit_seen = false;
    while i < b.len() {
        let c = b[i];
        if !c.is_ascii_digit() && ((c != b'+' && c != b'-') || digit_seen) {
            break;
        }
        digit_seen |= c.is_ascii_digit();
        i += 1;
    }
    match b.get(i) {
        Some(c) if c.is_ascii_alphabetic() || *c == b'%' => Some(&s[i..]),
        _ => None,
    }
}

fn number_base(s: &str) -> u32 {
    if s.starts_with("0x") || s.starts_with("0X") {
        16
    } else {
        10
    }
}

/// fio's `str_to_decimal` for sizes (`check_str_bytes`): `4k`, `1m`, `0x1000`,
/// `20%`; an unknown suffix is ignored (`4q` is 4), a blank before the number
/// loses the suffix (` 4k` is 4), a fraction is cut (`1.5k` is 1).
pub(crate) fn parse_size(s: &str, kb_base: u64) -> Result<SizeVal, String> {
    if s.is_empty() {
        return Err("needs a value".into());
    }
    let Some(val) = strtoll(s, number_base(s)) else {
        return Err(format!("'{s}' is not a number"));
    };
    if val < 0 {
        return Err(format!("'{s}' is negative"));
    }
    let val = val as u64;
    let suffix = if s.len() < 2 { Some(s) } else { suffix_of(s) };
    match suffix.map(|x| (x, suffix_mult(x, kb_base))) {
        None => Ok(SizeVal::Bytes(val)),
        Some((_, None)) => Ok(SizeVal::Percent(val)),
        Some((_, Some(m))) => val.checked_mul(m).map(SizeVal::Bytes).ok_or_else(|| format!("'{s}' is too large")),
    }
}

/// A size that must be a byte count (no `%`).
pub(crate) fn parse_bytes(s: &str, kb_base: u64) -> Result<u64, String> {
    match parse_size(s, kb_base)? {
        SizeVal::Bytes(b) => Ok(b),
        SizeVal::Percent(_) => Err(format!("'{s}': a percentage is not allowed here")),
    }
}

/// fio's `get_mult_time`, in microseconds per unit.
fn time_mult(s: &str, is_seconds: bool) -> u64 {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    if !b.get(i).is_some_and(|c| c.is_ascii_alphabetic()) {
        return if is_seconds { 1_000_000 } else { 1 };
    }
    let c = s[i..].to_ascii_lowercase();
    if c.starts_with("us") {
        1
    } else if c.starts_with("ms") {
        1000
    } else {
        match c.as_str() {
            "s" => 1_000_000,
            "m" => 60 * 1_000_000,
            "h" => 3600 * 1_000_000,
            "d" => 86_400 * 1_000_000,
            // fio reads any other suffix (`sec`, `min`) as microseconds.
            _ => 1,
        }
    }
}

/// fio's time values, in microseconds: `us`/`usec`, `ms`/`msec`, `s`, `m`,
/// `h`, `d`; no suffix means seconds when `is_seconds`, else microseconds.
pub(crate) fn parse_time_us(s: &str, is_seconds: bool) -> Result<u64, String> {
    if s.is_empty() {
        return Err("needs a value".into());
    }
    let Some(val) = strtoll(s, number_base(s)) else {
        return Err(format!("'{s}' is not a time"));
    };
    if val < 0 {
        return Err(format!("'{s}' is negative"));
    }
    (val as u64).checked_mul(time_mult(s, is_seconds)).ok_or_else(|| format!("'{s}' is too large"))
}

/// fio's `check_int` (`sscanf("%u")`, or `%x` when the value holds `0x`):
/// leading digits after optional blanks and sign.
pub(crate) fn parse_c_uint(s: &str) -> Result<i64, String> {
    let hex = s.contains("0x") || s.contains("0X");
    let t = s.trim_start_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let t = if hex { t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).unwrap_or(t) } else { t };
    let radix = if hex { 16 } else { 10 };
    let digits: String = t.chars().take_while(|c| c.is_digit(radix)).collect();
    if digits.is_empty() {
        return Err(format!("'{s}' is not a number"));
    }
    let v = i64::from_str_radix(&digits, radix).map_err(|_| format!("'{s}' is too large"))?;
    // sscanf("%u") wraps a negative value around 2^32.
    Ok(if neg { (u32::MAX as i64 + 1 - v).rem_euclid(1 << 32) } else { v })
}

/// A boolean: 0 or 1 only (fio's `FIO_OPT_BOOL`).
pub(crate) fn parse_bool(s: &str) -> Result<bool, String> {
    match parse_c_uint(s)? {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(format!("{v} is out of range (a boolean is 0 or 1)")),
    }
}

/// A flag's value (`time_based=0`): any integer, non-zero means set.
pub(crate) fn parse_flag(s: Option<&str>) -> Result<bool, String> {
    match s {
        None => Ok(true),
        Some(v) => Ok(parse_c_uint(v)? != 0),
    }
}

/// The part of a choice value fio compares with the valid values: up to the
/// first `,` or `:`; and what follows the first `:` (`randread:8`).
pub(crate) fn choice_head(s: &str) -> (&str, Option<&str>) {
    // fio's opt_len: up to the first ',' or ':'.
    let head = s.find([',', ':']).map_or(s, |i| &s[..i]);
    let post = s.find(':').map(|i| s[i + 1..].trim());
    (head, post)
}

/// The fields of a value fio splits per direction (read, write, trim): each
/// field is the rest of the string from its start (the number parsers stop at
/// a separator). Fields are cut at `,`; when there is none, at `:` and then
/// `-` (so `bs=4k-8k` gives read 4k and write/trim 8k, as fio does).
pub(crate) fn dir_fields(s: &str, comma_only: bool) -> Vec<&str> {
    let mut fields = Vec::new();
    let mut rest = s;
    loop {
        let mut cut = rest.find(',');
        let mut field = rest;
        if let Some(i) = cut {
            if i + 1 == rest.len() {
                field = &rest[..i];
            }
        }
        if cut.is_none() && !comma_only {
            cut = rest.find(':').or_else(|| rest.find('-'));
        }
        fields.push(field);
        match cut {
            Some(i) => rest = &rest[i + 1..],
            None => break,
        }
    }
    fields
}

/// fio's assignment of per-direction fields: field k sets direction k, and
/// the last field also sets the directions after it. A field that fails to
/// parse is skipped; the whole value fails only when every field fails.
pub(crate) fn assign_dirs<T: Copy>(
    fields: &[&str],
    mut parse: impl FnMut(&str) -> Result<T, String>,
) -> Result<[Option<T>; 3], String> {
    let mut out = [None; 3];
    let mut first_err = None;
    let mut any_ok = false;
    let last = fields.len() - 1;
    for (k, field) in fields.iter().enumerate() {
        match parse(field) {
            Ok(v) => {
                any_ok = true;
                if k < 3 {
                    out[k] = Some(v);
                }
                if k == last {
                    for slot in out.iter_mut().skip(k + 1) {
                        *slot = Some(v);
                    }
                }
            }
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    if any_ok {
        Ok(out)
    } else {
        Err(first_err.unwrap_or_else(|| "needs a value".into()))
    }
}

/// fio's `FIO_OPT_RANGE` (`bsrange=4k-8k`, `lo:hi`, per direction after `,`),
/// each range sorted low to high.
pub(crate) fn parse_ranges(s: &str, kb_base: u64) -> Result<[Option<(u64, u64)>; 3], String> {
    let fields = dir_fields(s, true);
    assign_dirs(&fields, |f| {
        let f = f.split(',').next().unwrap_or("");
        let Some(cut) = f.find('-').or_else(|| f.find(':')) else {
            return Err(format!("'{f}' is not a range (lo-hi)"));
        };
        let lo = parse_bytes(&f[..cut], kb_base)?;
        let hi = parse_bytes(&f[cut + 1..], kb_base)?;
        Ok((lo.min(hi), lo.max(hi)))
    })
}

/// fio's `FIO_OPT_FLOAT_LIST`: `:`-separated numbers within `min..=max`, at
/// most `max_len` of them.
pub(crate) fn parse_floats(s: &str, max_len: usize, min: f64, max: f64) -> Result<Vec<f64>, String> {
    let mut out = Vec::new();
    for field in s.split(':') {
        if out.len() >= max_len {
            return Err(format!("the list is longer than {max_len} values"));
        }
        let t = field.trim();
        let num: String =
            t.chars().take_while(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')).collect();
        let v: f64 = num.parse().map_err(|_| format!("'{field}' is not a number"))?;
        if v < min || v > max {
            return Err(format!("{v} is out of range ({min}..{max})"));
        }
        out.push(v);
    }
    Ok(out)
}

/// fio's `BSSPLIT_MAX`: entries per direction (more are dropped, as fio does with a message).
const BSSPLIT_MAX: usize = 64;

/// fio's `bssplit` (`str_split_parse` + `bssplit_ddir`): per direction (`read,write,trim`; without
/// a comma all three; a missing trim list copies write's) `bs/perc:bs/perc:...`. As fio: a
/// percentage is read with `atoi` (above 100 is 100; 0, none or not a number means "the rest"),
/// the entries without one share what the others leave, in unsigned 32-bit arithmetic (so a
/// sum above 100 with one such entry gives it a wrapped value, as fio does), and the entries are
/// sorted by percentage (fio's `bs_cmp` compares them as signed ints). `None` for a direction
/// with an empty list (it keeps `bs`).
pub(crate) fn parse_bssplit(s: &str, kb_base: u64) -> Result<[Option<Vec<BsSplit>>; 3], String> {
    let (read, write, trim) = split_dirs(s);
    // fio parses trim, then write, then read: the first error is trim's.
    let t = bssplit_ddir(trim, kb_base)?;
    let w = bssplit_ddir(write, kb_base)?;
    let r = bssplit_ddir(read, kb_base)?;
    Ok([r, w, t])
}

/// fio's str_split_parse: `read,write,trim` lists; a missing trim list
/// copies write's, and one list serves all three directions.
fn split_dirs(s: &str) -> (&str, &str, &str) {
    let s = s.trim_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
    match s.split_once(',') {
        Some((r, rest)) => match rest.split_once(',') {
            Some((w, t)) => (r, w, t),
            None => (r, rest, rest),
        },
        None => (s, s, s),
    }
}

/// fio's `ZONESPLIT_MAX`: zones per direction (more are dropped, as fio does).
const ZONESPLIT_MAX: usize = 256;

/// `random_distribution=NAME[:...]` as fio's str_random_distribution_cb
/// reads it: `zipf:THETA[:CENTER]` (1.1), `pareto:H[:CENTER]` (0.2),
/// `normal:DEV[:CENTER]` (0), `zoned:A/S:...` (percentages of the I/Os and
/// of the file, per direction), `zoned_abs:A/SIZE:...`.
pub(crate) fn parse_random_distribution(
    name: &str,
    post: Option<&str>,
    kb_base: u64,
) -> Result<RandomDistribution, String> {
    let (default, absolute) = match name {
        "random" => return Ok(RandomDistribution::Random),
        "zoned" | "zoned_abs" => (0.0, name == "zoned_abs"),
        "zipf" => (1.1, false),
        "pareto" => (0.2, false),
        _ => (0.0, false),
    };
    if name.starts_with("zoned") {
        let post = post.unwrap_or("");
        let (r, w, t) = split_dirs(post);
        // fio parses trim, then write, then read.
        let t = zone_split(t, absolute, kb_base)?;
        let w = zone_split(w, absolute, kb_base)?;
        let r = zone_split(r, absolute, kb_base)?;
        return Ok(RandomDistribution::Zoned { absolute, zones: [r, w, t] });
    }
    let float = |s: &str| s.trim().parse::<f64>().ok().filter(|v| v.is_finite());
    let (val, center) = match post {
        None => (default, None),
        Some(p) => {
            let (v, c) = match p.split_once(':') {
                Some((v, c)) => (v, Some(c)),
                None => (p, None),
            };
            let bad = || format!("'{p}' is not VALUE[:CENTER] (fio: random postfix parsing failed)");
            let center = match c {
                Some(c) => Some(float(c).ok_or_else(bad)?),
                None => None,
            };
            (float(v).ok_or_else(bad)?, center)
        }
    };
    if center.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
        return Err("the center must be from 0 to 1 (fio: distribution center out of range)".into());
    }
    match name {
        "zipf" if val == 1.0 => {
            Err("zipf theta must be other than 1.0 (fio: zipf theta must different than 1.0)".into())
        }
        "zipf" => Ok(RandomDistribution::Zipf { theta: val, center }),
        "pareto" if val <= 0.0 || val >= 1.0 => {
            Err("pareto input must be above 0 and below 1 (fio: pareto input out of range)".into())
        }
        "pareto" => Ok(RandomDistribution::Pareto { h: val, center }),
        _ if !(0.0..100.0).contains(&val) => {
            Err("normal deviation must be from 0 to below 100 (fio: normal deviation out of range)".into())
        }
        _ => Ok(RandomDistribution::Normal { dev: val, center }),
    }
}

/// One direction's zones (fio's split_parse_ddir and zone_split_ddir, with
/// its 8-bit fields: an access share of 255 counts as missing, as in fio).
fn zone_split(s: &str, absolute: bool, kb_base: u64) -> Result<Vec<Zone>, String> {
    const MISSING: u8 = u8::MAX;
    let mut zones = Vec::new();
    for entry in s.split(':') {
        if entry.is_empty() || zones.len() == ZONESPLIT_MAX {
            break;
        }
        let conv = |t: &str| {
            parse_bytes(t, kb_base).map_err(|e| format!("zone '{entry}': {e} (fio: split conversion failed)"))
        };
        let (access, size) = match entry.split_once('/') {
            Some((a, s)) if absolute => (a, conv(s)?),
            Some((a, s)) => {
                let p = atoi(s);
                let p = if !(0..=100).contains(&p) { 100 } else { p as u64 };
                (a, if p == 0 { MISSING as u64 } else { p })
            }
            None => (entry, if absolute { 0 } else { MISSING as u64 }),
        };
        let access = conv(access)? as u8;
        zones.push(if absolute {
            Zone { access_perc: access, size_perc: 0, size }
        } else {
            Zone { access_perc: access, size_perc: size as u8, size: 0 }
        });
    }
    let missing = |f: fn(&Zone) -> u8| zones.iter().filter(|z| f(z) == MISSING).count() as u32;
    let sum = |f: fn(&Zone) -> u8| zones.iter().map(f).filter(|&v| v != MISSING).map(u32::from).sum::<u32>();
    let (perc_missing, sperc_missing) =
        (missing(|z| z.access_perc), if absolute { 0 } else { missing(|z| z.size_perc) });
    let (mut perc, mut sperc) = (sum(|z| z.access_perc), if absolute { 0 } else { sum(|z| z.size_perc) });
    if zones.is_empty() {
        return Ok(zones);
    }
    if perc > 100 || sperc > 100 {
        return Err("zone percentages add to more than 100% (fio: zone_split percentages add to more than 100%)".into());
    }
    if perc < 100 {
        return Err(format!(
            "the zones' access percentages add to {perc}, not 100 (fio: access percentage don't add up to 100 for zoned \
             random distribution)"
        ));
    }
    let n = zones.len();
    if perc_missing > 0 {
        if perc_missing == 1 && n == 1 {
            perc = 100;
        }
        for z in zones.iter_mut().filter(|z| z.access_perc == MISSING) {
            z.access_perc = ((100 - perc) / perc_missing) as u8;
        }
    }
    if sperc_missing > 0 {
        if sperc_missing == 1 && n == 1 {
            sperc = 100;
        }
        for z in zones.iter_mut().filter(|z| z.size_perc == MISSING) {
            z.size_perc = ((100 - sperc) / sperc_missing) as u8;
        }
    }
    Ok(zones)
}

/// C's `atoi`: blanks, a sign, digits; nothing numeric is 0.
fn atoi(s: &str) -> i64 {
    let t = s.trim_start_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits: String = t.chars().take_while(char::is_ascii_digit).take(18).collect();
    let v = digits.parse::<i64>().unwrap_or(0);
    if neg {
        -v
    } else {
        v
    }
}

/// One direction's list of a `bssplit` (fio's `split_parse_ddir` and `bssplit_ddir`).
/// One `cmdprio_bssplit` entry as fio's `parse_cmdprio_bssplit_entry` reads
/// it: block size, percentage (at most 100), and the priority (`None`: the
/// job's `cmdprio_class` and `cmdprio`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SplitPrio {
    pub bs: u64,
    pub perc: u32,
    pub prio: Option<u16>,
}

/// `cmdprio_bssplit` as fio's `fio_cmdprio_bssplit_parse` reads it: per
/// direction (read, write; fio ignores trim's list), `bs/[perc[/class/level[/hint]]]`
/// entries separated by `:`, those of percentage 0 dropped, sorted by block size.
pub(crate) fn parse_cmdprio_bssplit(s: &str, kb_base: u64) -> Result<[Vec<SplitPrio>; 2], String> {
    let (read, write, _) = split_dirs(s);
    Ok([cmdprio_bssplit_ddir(read, kb_base)?, cmdprio_bssplit_ddir(write, kb_base)?])
}

fn cmdprio_bssplit_ddir(s: &str, kb_base: u64) -> Result<Vec<SplitPrio>, String> {
    let mut entries = Vec::new();
    let fields: Vec<&str> = s.split(':').take_while(|e| !e.is_empty()).collect();
    if fields.len() > BSSPLIT_MAX {
        return Err("too many cmdprio_bssplit entries (fio: too many cmdprio_bssplit entries)".into());
    }
    for entry in fields {
        let mut parts = entry.split('/');
        let size = parts.next().unwrap_or("");
        let bs = parse_bytes(size, kb_base).map_err(|e| {
            format!("cmdprio_bssplit entry '{entry}': {e} (fio: failed to parse cmdprio_bssplit entry)")
        })?;
        // sscanf's %u fields: the leading number of each, if any.
        let mut nums = Vec::new();
        for p in parts {
            let digits: String = p.trim_start().chars().take_while(|c| c.is_ascii_digit()).collect();
            match digits.parse::<u64>() {
                Ok(v) => nums.push(v.min(u32::MAX as u64) as u32),
                Err(_) => break,
            }
            if nums.len() == 4 {
                break;
            }
        }
        let perc = nums.first().copied().unwrap_or(0).min(100);
        let prio = match nums.len() {
            0 | 1 => None,
            2 => {
                return Err(format!(
                    "cmdprio_bssplit entry '{entry}': expected bs/perc or bs/perc/class/level[/hint] \
                     (fio: invalid cmdprio_bssplit format)"
                ))
            }
            _ => Some(blksim::workload::ioprio_value(
                nums[1].min(3),
                nums[2].min(7),
                nums.get(3).copied().unwrap_or(0).min(1023),
            )),
        };
        if perc > 0 {
            entries.push(SplitPrio { bs, perc, prio });
        }
    }
    entries.sort_by_key(|e| e.bs);
    Ok(entries)
}

fn bssplit_ddir(s: &str, kb_base: u64) -> Result<Option<Vec<BsSplit>>, String> {
    const MISSING: u32 = u32::MAX;
    let mut entries = Vec::new();
    for entry in s.split(':') {
        if entry.is_empty() || entries.len() == BSSPLIT_MAX {
            break;
        }
        let (size, perc) = match entry.split_once('/') {
            Some((size, perc)) => {
                let p = atoi(perc);
                // `unsigned long long perc = atoi(...)`: negative values are huge, hence 100.
                let p = if !(0..=100).contains(&p) { 100 } else { p as u32 };
                (size, if p == 0 { MISSING } else { p })
            }
            None => (entry, MISSING),
        };
        let bs = parse_bytes(size, kb_base)
            .map_err(|e| format!("bssplit entry '{entry}': {e} (fio: split conversion failed)"))?;
        if bs == 0 {
            return Err(format!("bssplit entry '{entry}': a block size of 0 (fio would issue empty I/Os)"));
        }
        entries.push(BsSplit { bs, perc });
    }
    if entries.is_empty() {
        return Ok(None);
    }
    let missing = entries.iter().filter(|e| e.perc == MISSING).count() as u32;
    let mut perc: u32 = entries.iter().filter(|e| e.perc != MISSING).map(|e| e.perc).sum();
    if perc > 100 && missing > 1 {
        return Err("bssplit percentages add to more than 100% (fio: bssplit percentages add to more than 100%)".into());
    }
    if missing > 0 {
        if missing == 1 && entries.len() == 1 {
            perc = 100;
        }
        for e in entries.iter_mut().filter(|e| e.perc == MISSING) {
            e.perc = 100u32.wrapping_sub(perc) / missing;
        }
    }
    entries.sort_by_key(|e| e.perc as i32);
    Ok(Some(entries))
}

/// A CPU list (`0-7,16`): sorted, without duplicates. Every CPU must exist on
/// the simulated machine (`ncpus` CPUs, numbered from 0).
pub(crate) fn parse_cpu_list(s: &str, ncpus: u32) -> Result<Vec<u32>, String> {
    let mut cpus = Vec::new();
    for entry in s.trim().split(',') {
        if entry.is_empty() {
            break;
        }
        let num = |t: &str| t.trim().parse::<u32>().map_err(|_| format!("'{entry}' is not a CPU number or range"));
        let (lo, hi) = match entry.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(entry)?, num(entry)?),
        };
        for cpu in lo..=hi {
            if cpu >= ncpus {
                return Err(format!(
                    "CPU {cpu} does not exist (the simulated machine has CPUs 0-{})",
                    ncpus.saturating_sub(1)
                ));
            }
            cpus.push(cpu);
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        return Err(format!("'{s}' selects no CPU"));
    }
    Ok(cpus)
}

/// `numa_cpu_nodes`: the CPUs of the NUMA nodes a list names (numbers and
/// ranges, as libnuma's numa_parse_nodestring takes them, or `all`), in CPU order.
pub(crate) fn cpus_of_nodes(s: &str, ctx: &crate::job::ParseContext) -> Result<Vec<u32>, String> {
    let all: Vec<u32>;
    let nodes: &[Vec<u32>] = if ctx.numa_nodes.is_empty() {
        all = (0..ctx.ncpus).collect();
        std::slice::from_ref(&all)
    } else {
        &ctx.numa_nodes
    };
    let last = nodes.len() - 1;
    let mut cpus = Vec::new();
    if s.trim() == "all" {
        cpus = nodes.concat();
    } else {
        for entry in s.trim().split(',') {
            let num = |t: &str| {
                t.trim().parse::<usize>().map_err(|_| format!("'{entry}' is not a NUMA node number or range"))
            };
            let (lo, hi) = match entry.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => (num(entry)?, num(entry)?),
            };
            if lo > hi {
                return Err(format!("'{entry}' is not a NUMA node range (its start is past its end)"));
            }
            if hi > last {
                return Err(format!("NUMA node {hi} does not exist (the simulated machine has nodes 0-{last})"));
            }
            for node in &nodes[lo..=hi] {
                cpus.extend_from_slice(node);
            }
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// `cpumask`: an integer bitmask of CPUs (fio looks at the low 32 bits).
pub(crate) fn cpus_of_mask(mask: u64, ncpus: u32) -> Result<Vec<u32>, String> {
    let cpus: Vec<u32> = (0..32).filter(|i| mask & (1 << i) != 0).collect();
    if let Some(&cpu) = cpus.iter().find(|&&c| c >= ncpus) {
        return Err(format!("CPU {cpu} does not exist (the simulated machine has CPUs 0-{})", ncpus.saturating_sub(1)));
    }
    if cpus.is_empty() {
        return Err(format!("mask {mask:#x} selects no CPU"));
    }
    Ok(cpus)
}

/// fio's `get_next_str`: names separated by `:`, `\:` for a literal colon,
/// empty names between colons skipped.
pub(crate) fn split_filenames(s: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut cur = String::new();
    let mut chars = s.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => {
                if !cur.is_empty() {
                    names.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        names.push(cur);
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(s: &str) -> u64 {
        parse_bytes(s, 1024).unwrap()
    }

    #[test]
    fn sizes_follow_fio_units() {
        assert_eq!(bytes("4096"), 4096);
        assert_eq!(bytes("4k"), 4096);
        assert_eq!(bytes("4K"), 4096);
        assert_eq!(bytes("4kb"), 4096);
        assert_eq!(bytes("1m"), 1 << 20);
        assert_eq!(bytes("1MB"), 1 << 20);
        assert_eq!(bytes("2g"), 2 << 30);
        assert_eq!(bytes("1t"), 1 << 40);
        assert_eq!(bytes("1p"), 1 << 50);
        assert_eq!(bytes("512b"), 512);
        assert_eq!(bytes("0x1000"), 4096);
        assert_eq!(bytes("0X10"), 16);
    }

    #[test]
    fn size_quirks_match_fio() {
        // kb_base=1024 inverts IEC suffixes: KiB is 1000.
        assert_eq!(bytes("4KiB"), 4000);
        assert_eq!(bytes("1mib"), 1_000_000);
        // `ki`/`mi` are not `kib`: they read as k/m.
        assert_eq!(bytes("4ki"), 4096);
        assert_eq!(bytes("1mi"), 1 << 20);
        // Unknown suffix ignored, blank before the number loses the suffix,
        // fraction cut: all as fio 3.33 prints them.
        assert_eq!(bytes("4q"), 4);
        assert_eq!(bytes(" 4k"), 4);
        assert_eq!(bytes("1.5k"), 1);
        assert_eq!(bytes("2*1024"), 2);
        // kb_base=1000: k is 1000 and KiB is 1024.
        assert_eq!(parse_bytes("4k", 1000).unwrap(), 4000);
        assert_eq!(parse_bytes("4kib", 1000).unwrap(), 4096);
    }

    #[test]
    fn percent_and_bad_sizes() {
        assert_eq!(parse_size("20%", 1024).unwrap(), SizeVal::Percent(20));
        assert!(parse_bytes("20%", 1024).is_err());
        assert!(parse_size("", 1024).is_err());
        assert!(parse_size("k", 1024).is_err());
        assert!(parse_size("abc", 1024).is_err());
        assert!(parse_size("-4k", 1024).is_err());
        assert!(parse_size("99999999999999999999", 1024).is_err());
        assert!(parse_size("99999999999p", 1024).is_err());
    }

    #[test]
    fn times_in_microseconds() {
        assert_eq!(parse_time_us("10", true).unwrap(), 10_000_000);
        assert_eq!(parse_time_us("10", false).unwrap(), 10);
        assert_eq!(parse_time_us("10s", true).unwrap(), 10_000_000);
        assert_eq!(parse_time_us("250ms", true).unwrap(), 250_000);
        assert_eq!(parse_time_us("250msec", true).unwrap(), 250_000);
        assert_eq!(parse_time_us("7us", true).unwrap(), 7);
        assert_eq!(parse_time_us("7usec", true).unwrap(), 7);
        assert_eq!(parse_time_us("5m", true).unwrap(), 300_000_000);
        assert_eq!(parse_time_us("5M", true).unwrap(), 300_000_000);
        assert_eq!(parse_time_us("2h", true).unwrap(), 7_200_000_000);
        assert_eq!(parse_time_us("1d", true).unwrap(), 86_400_000_000);
        // `sec` is not a suffix fio knows: read as microseconds.
        assert_eq!(parse_time_us("1sec", true).unwrap(), 1);
        assert!(parse_time_us("", true).is_err());
        assert!(parse_time_us("soon", true).is_err());
    }

    #[test]
    fn booleans_are_zero_or_one() {
        assert!(!parse_bool("0").unwrap());
        assert!(parse_bool("1").unwrap());
        assert!(parse_bool(" 1").unwrap());
        assert!(parse_bool("2").is_err());
        assert!(parse_bool("-1").is_err());
        assert!(parse_bool("yes").is_err());
        assert!(parse_bool("").is_err());
        assert!(parse_flag(None).unwrap());
        assert!(!parse_flag(Some("0")).unwrap());
        assert!(parse_flag(Some("5")).unwrap());
        assert!(parse_flag(Some("x")).is_err());
    }

    #[test]
    fn choice_head_cuts_at_comma_then_colon() {
        assert_eq!(choice_head("randread"), ("randread", None));
        assert_eq!(choice_head("randread:8"), ("randread", Some("8")));
        assert_eq!(choice_head("read:-8k"), ("read", Some("-8k")));
        assert_eq!(choice_head("read,write"), ("read", None));
        assert_eq!(choice_head("zoned_abs:60/4m,100/1g"), ("zoned_abs", Some("60/4m,100/1g")));
        assert_eq!(choice_head(" randread"), (" randread", None));
    }

    fn dirs(s: &str) -> [Option<u64>; 3] {
        assert_dirs(s).unwrap()
    }
    fn assert_dirs(s: &str) -> Result<[Option<u64>; 3], String> {
        assign_dirs(&dir_fields(s, false), |f| parse_bytes(f, 1024))
    }

    #[test]
    fn per_direction_lists() {
        assert_eq!(dirs("8k"), [Some(8192); 3]);
        assert_eq!(dirs("8k,32k"), [Some(8192), Some(32768), Some(32768)]);
        assert_eq!(dirs("1k,2k,3k"), [Some(1024), Some(2048), Some(3072)]);
        // A trailing comma sets only the read value; a leading one skips it.
        assert_eq!(dirs("8k,"), [Some(8192), None, None]);
        assert_eq!(dirs(",8k"), [None, Some(8192), Some(8192)]);
        // Without a comma fio also splits at ':' and '-'.
        assert_eq!(dirs("4k-8k"), [Some(4096), Some(8192), Some(8192)]);
        assert_eq!(dirs("4k:8k"), [Some(4096), Some(8192), Some(8192)]);
        assert!(assert_dirs("x,y").is_err());
    }

    #[test]
    fn ranges_and_floats() {
        assert_eq!(parse_ranges("4k-4k", 1024).unwrap(), [Some((4096, 4096)); 3]);
        assert_eq!(parse_ranges("8k:4k", 1024).unwrap(), [Some((4096, 8192)); 3]);
        assert_eq!(
            parse_ranges("1k-2k,4k-8k", 1024).unwrap(),
            [Some((1024, 2048)), Some((4096, 8192)), Some((4096, 8192))]
        );
        assert!(parse_ranges("4k", 1024).is_err());
        assert_eq!(parse_floats("50:99.5:99.99", 20, 0.0, 100.0).unwrap(), vec![50.0, 99.5, 99.99]);
        assert!(parse_floats("50:101", 20, 0.0, 100.0).is_err());
        assert!(parse_floats("x", 20, 0.0, 100.0).is_err());
        assert!(parse_floats(&["1"; 21].join(":"), 20, 0.0, 100.0).is_err());
    }

    #[test]
    fn cpu_lists_and_masks() {
        assert_eq!(parse_cpu_list("0-3,6", 8).unwrap(), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list("5,1,1", 8).unwrap(), vec![1, 5]);
        let e = parse_cpu_list("0-8", 8).unwrap_err();
        assert!(e.contains("CPU 8"), "{e}");
        assert!(parse_cpu_list("a", 8).is_err());
        assert!(parse_cpu_list("", 8).is_err());
        assert_eq!(cpus_of_mask(0b1010, 4).unwrap(), vec![1, 3]);
        assert!(cpus_of_mask(0b10000, 4).is_err());
        assert!(cpus_of_mask(0, 4).is_err());
    }

    #[test]
    fn filenames_split_at_unescaped_colons() {
        assert_eq!(split_filenames("/dev/a:/dev/b"), vec!["/dev/a", "/dev/b"]);
        assert_eq!(split_filenames("/dev/bsg/0\\:0\\:0\\:0"), vec!["/dev/bsg/0:0:0:0"]);
        assert_eq!(split_filenames("a::b:"), vec!["a", "b"]);
        assert_eq!(split_filenames(" /dev/x "), vec!["/dev/x"]);
    }
}
