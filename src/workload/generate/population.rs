//! The population's generators (TPC-C's clause 4.3 and the generators made of others):
//! permutations by row, rows split in two, a-strings, weighted choices, last names from
//! syllables, exact decimals.

use super::{Context, Drawn, Kind};
use crate::random::Rng;

/// The draws of TPC-C's population and of the generators made of others: text into `buf`.
pub(super) fn population<'a>(kind: &'a mut Kind, buf: &'a mut String, rng: &mut Rng, at: Context) -> Drawn<'a> {
    match kind {
        Kind::Shuffled { count, every, seed, run } => {
            let step = at.row.saturating_sub(1) / *every;
            let (number, i) = (step / *count, step % *count);
            let (a, b) = match *run {
                Some((n, a, b)) if n == number => (a, b),
                _ => {
                    let (a, b) = shuffle_of(*seed, number, *count);
                    *run = Some((number, a, b));
                    (a, b)
                }
            };
            Drawn::Int(((a as u128 * i as u128 + b as u128) % *count as u128) as i64 + 1)
        }
        Kind::Keyed { every, lo, span, seed } => {
            let group = at.row.saturating_sub(1) / *every;
            let mut keyed = Rng::seeded(*seed ^ group.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x4B45_5945_44);
            Drawn::Int(*lo + keyed.uniform(0, *span) as i64)
        }
        Kind::FirstRows { first, every, then, rest } => {
            if at.row.saturating_sub(1) % *every < *first {
                then.draw(rng, at)
            } else {
                rest.draw(rng, at)
            }
        }
        Kind::Text { lo, span, word } => {
            buf.clear();
            let len = *lo + rng.uniform(0, *span);
            let at_char = rng.uniform(0, len - word.chars().count() as u32) as usize;
            for i in 0..len as usize {
                if i == at_char && !word.is_empty() {
                    buf.push_str(word);
                }
                if i >= at_char && i < at_char + word.chars().count() {
                    continue;
                }
                buf.push(ALNUM[rng.uniform(0, 61) as usize] as char);
            }
            Drawn::Text(buf)
        }
        Kind::Choose(sums, draws) => {
            let total = sums.last().copied().unwrap_or(1);
            let pick = rng.uniform(1, total.min(u32::MAX as u64) as u32) as u64;
            let i = sums.partition_point(|&s| s < pick).min(draws.len() - 1);
            draws[i].draw(rng, at)
        }
        Kind::Syllables(inner) => {
            let n = match inner.draw(rng, at) {
                Drawn::Int(i) => i.rem_euclid(1000) as usize,
                _ => 0,
            };
            buf.clear();
            for digit in [n / 100, n / 10 % 10, n % 10] {
                buf.push_str(SYLLABLES[digit]);
            }
            Drawn::Text(buf)
        }
        Kind::Decimal { lo, span, places } => {
            buf.clear();
            write_decimal(*lo + rng.uniform(0, *span) as i64, *places, buf);
            Drawn::Text(buf)
        }
        _ => Drawn::Null,
    }
}

/// Bounds of a `decimal` generator that are not decimals, or not in order, or too far apart.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("decimal [{lo:?}, {hi:?}]: write both bounds as decimals (\"0.0000\", \"100.00\"), the first no more than the second, at most 2^32 steps apart")]
pub struct DecimalRangeError {
    pub lo: String,
    pub hi: String,
}

/// A decimal range from its bounds' text: (lowest in units of the last place, span, places).
pub fn decimal_range(lo: &str, hi: &str) -> Result<(i64, u32, u32), DecimalRangeError> {
    let places = |t: &str| t.split_once('.').map(|(_, f)| f.len() as u32).unwrap_or(0);
    let p = places(lo).max(places(hi));
    let scaled = |t: &str| -> Option<i64> {
        let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
        let negative = whole.starts_with('-');
        let digits = format!("{}{frac:0<width$}", whole.trim_start_matches('-'), width = p as usize);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 18 {
            return None;
        }
        let v: i64 = digits.parse().ok()?;
        Some(if negative { -v } else { v })
    };
    let bad = || DecimalRangeError { lo: lo.to_string(), hi: hi.to_string() };
    let (l, h) = (scaled(lo).ok_or_else(bad)?, scaled(hi).ok_or_else(bad)?);
    let span = h.checked_sub(l).filter(|s| (0..u32::MAX as i64).contains(s)).ok_or_else(bad)?;
    Ok((l, span as u32, p))
}

/// `v` in units of the `places`-th decimal place, as decimal text.
pub(super) fn write_decimal(v: i64, places: u32, out: &mut String) {
    use std::fmt::Write;
    let scale = 10i64.pow(places);
    let sign = if v < 0 { "-" } else { "" };
    let (whole, frac) = (v.unsigned_abs() / scale as u64, v.unsigned_abs() % scale as u64);
    let _ = match places {
        0 => write!(out, "{sign}{whole}"),
        p => write!(out, "{sign}{whole}.{frac:0width$}", width = p as usize),
    };
}

/// TPC-C's syllables (clause 4.3.2.3).
const SYLLABLES: [&str; 10] = ["BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"];

const ALNUM: &[u8; 62] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// The permutation of one run of `count` values: `(a, b)` with `a` coprime to `count`.
fn shuffle_of(seed: u64, run: u64, count: u64) -> (u64, u64) {
    let mut rng = Rng::seeded(seed ^ run.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5348_5546);
    let gcd = |mut x: u64, mut y: u64| {
        while y != 0 {
            (x, y) = (y, x % y);
        }
        x
    };
    let top = (count - 1).min(u32::MAX as u64) as u32;
    let mut a = rng.uniform(0, top) as u64 + 1;
    while gcd(a, count) != 1 {
        a = a % count + 1;
    }
    (a, rng.uniform(0, top) as u64)
}
