//! Times as text: RFC 3339 for results, and SQL's `YYYY-MM-DD HH:MM:SS.ffffff` (UTC) for
//! timestamp values, both ways (PostgreSQL sends timestamps as microseconds since 2000).

use std::fmt::Write;
use std::time::{SystemTime, UNIX_EPOCH};

/// `2026-11-18T11:06:40.123Z`.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let (date, [h, m, s]) = civil(d.as_secs() as i64);
    format!("{date}T{h:02}:{m:02}:{s:02}.{:03}Z", d.subsec_millis())
}

/// `micros` since the Unix epoch as `2026-11-18 11:06:40.123456`, appended to `out`.
pub fn write_sql_timestamp(micros: i64, out: &mut String) {
    let (secs, frac) = (micros.div_euclid(1_000_000), micros.rem_euclid(1_000_000));
    let (date, [h, m, s]) = civil(secs);
    let _ = write!(out, "{date} {h:02}:{m:02}:{s:02}.{frac:06}");
}

/// Now, in microseconds since the Unix epoch.
pub fn now_micros() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64)
}

/// `YYYY-MM-DD[ HH:MM[:SS[.ffffff]]]` (or with `T`) as microseconds since the Unix epoch.
pub fn parse_sql_timestamp(text: &str) -> Option<i64> {
    let t = text.trim();
    let (date, time) = t.split_once([' ', 'T']).unwrap_or((t, "00:00:00"));
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, mo, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.trim_end_matches('Z').split_once('.').unwrap_or((time.trim_end_matches('Z'), ""));
    let mut parts = hms.split(':').map(|p| p.parse::<i64>().ok());
    let (h, mi, s) = (parts.next()??, parts.next().unwrap_or(Some(0))?, parts.next().unwrap_or(Some(0))?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&day) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let digits: String = frac.chars().take(6).collect();
    let micros = if digits.is_empty() { 0 } else { format!("{digits:0<6}").parse::<i64>().ok()? };
    let secs = days_from_civil(y, mo, day) * 86_400 + h * 3600 + mi * 60 + s;
    Some(secs * 1_000_000 + micros)
}

/// `YYYY-MM-DD` and [hours, minutes, seconds] of `secs` since the Unix epoch (Howard
/// Hinnant's civil-from-days).
fn civil(secs: i64) -> (String, [i64; 3]) {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (format!("{year:04}-{month:02}-{day:02}"), [rem / 3600, rem % 3600 / 60, rem % 60])
}

/// Days since the Unix epoch of a civil date (Hinnant's days-from-civil).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_known_dates() {
        let t = UNIX_EPOCH + std::time::Duration::from_millis(1_795_000_000_123);
        assert_eq!(rfc3339(t), "2026-11-18T11:06:40.123Z");
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn sql_timestamps_both_ways() {
        let mut s = String::new();
        write_sql_timestamp(1_795_000_000_123_456, &mut s);
        assert_eq!(s, "2026-11-18 11:06:40.123456");
        assert_eq!(parse_sql_timestamp(&s), Some(1_795_000_000_123_456));
        assert_eq!(parse_sql_timestamp("2000-01-01"), Some(946_684_800_000_000));
        assert_eq!(parse_sql_timestamp("1999-12-31T23:59:59.5"), Some(946_684_799_500_000));
        assert_eq!(parse_sql_timestamp("2024-02-29 12:00:00"), Some(1_709_208_000_000_000));
        assert_eq!(parse_sql_timestamp("2026-13-01"), None);
        assert_eq!(parse_sql_timestamp("yesterday"), None);
    }
}
