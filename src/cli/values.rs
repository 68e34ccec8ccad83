//! Flag values parsed and checked where clap reads them: seeds, durations, sizes, switches.

use std::time::Duration;

pub use crate::model::request::MAX_SEED;

/// A flag's value that does not parse; clap prints it after the flag's name.
#[derive(Debug, thiserror::Error)]
pub enum ValueError {
    #[error("{0:?} is not a seed from 0 to {MAX_SEED} (2^53 - 1: JSON readers keep it exact)")]
    Seed(String),
    #[error("{0:?} is not a number of seconds from 0.01 to 86400 in steps of 0.01 (omit --report-interval for no interval lines)")]
    ReportInterval(String),
    #[error("{0:?} is not a number of seconds above 0 and at most 86400")]
    Seconds(String),
    #[error("{0:?}: use bytes or a K, M or G suffix")]
    PacketUnit(String),
    #[error("{0:?} is not a packet size between 1K and 1G")]
    PacketSize(String),
    #[error("{0:?} is not on or off")]
    Switch(String),
    #[error("{0:?} is not a rate from 0.1 to 10000 per second")]
    Rate(String),
    #[error("{0:?} is not a number of milliseconds from 1 to 10000")]
    PollMs(String),
}

pub(super) fn seed(s: &str) -> Result<u64, ValueError> {
    match s.trim().parse::<u64>() {
        Ok(v) if v <= MAX_SEED => Ok(v),
        _ => Err(ValueError::Seed(s.into())),
    }
}

/// `--report-interval`: 0.01 to 86400 seconds in steps of 10 ms (so that the timeline's
/// ticks, which divide both it and a second, are never shorter than 10 ms).
pub(super) fn report_interval(s: &str) -> Result<Duration, ValueError> {
    let bad = || ValueError::ReportInterval(s.into());
    let v: f64 = s.trim().parse().map_err(|_| bad())?;
    let centis = (v * 100.0).round();
    if !v.is_finite() || !(1.0..=8_640_000.0).contains(&centis) || (v * 100.0 - centis).abs() > 1e-6 {
        return Err(bad());
    }
    Ok(Duration::from_millis(centis as u64 * 10))
}

/// A positive number of seconds up to a day (fractions allowed).
pub(super) fn seconds(s: &str) -> Result<Duration, ValueError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 => Ok(Duration::from_secs_f64(v)),
        _ => Err(ValueError::Seconds(s.into())),
    }
}

/// Bytes with an optional K/M/G suffix (powers of 1024), between 1 KiB and 1 GiB as MySQL allows.
pub(super) fn packet_size(s: &str) -> Result<usize, ValueError> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c.to_ascii_uppercase()),
        _ => (t, 'B'),
    };
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        _ => return Err(ValueError::PacketUnit(s.into())),
    };
    match digits.parse::<u64>().ok().and_then(|n| n.checked_mul(1 << shift)) {
        Some(n) if (1024..=1 << 30).contains(&n) => Ok(n as usize),
        _ => Err(ValueError::PacketSize(s.into())),
    }
}

pub(super) fn switch(s: &str) -> Result<bool, ValueError> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(ValueError::Switch(s.into())),
    }
}
