//! Long timelines drawn from buckets: a day at one-second intervals is 86,400 points per
//! line, more than a browser draws quickly and more than a screen has pixels. Each series on
//! a time axis longer than [`BUCKETS`] × 4 points keeps, per bucket of equal time, its first,
//! lowest, highest and last points in time order (min/max decimation): every spike and every
//! dip survives, and the line passes through the same extremes as the full one.

use super::chart::{Chart, Series};
use serde_json::Value;

/// Buckets per time axis (about one per pixel column of a wide chart).
pub const BUCKETS: usize = 1_000;

/// Decimates every line series on a time axis; the chart's title says so.
pub fn long_timelines(charts: &mut [Chart]) {
    for c in charts.iter_mut().filter(|c| c.kind == "line" && c.x.format == "s") {
        let mut width = None;
        for s in c.series.iter_mut().filter(|s| s.style != "points") {
            width = decimate(s, BUCKETS).or(width);
        }
        if let Some(w) = width {
            c.title += &format!(
                " — drawn from {BUCKETS} buckets of {w:.3} s: each one's first, lowest, highest and last point"
            );
        }
    }
}

/// Keeps each bucket's first, lowest, highest and last point (a gap, null, is kept too);
/// returns the bucket width in x units when it decimated.
pub fn decimate(s: &mut Series, buckets: usize) -> Option<f64> {
    let n = s.y.len();
    if n <= buckets * 4 || s.x.len() != n || !s.lo.is_empty() || !s.tip.is_empty() {
        return None;
    }
    let x: Vec<f64> = s.x.iter().map(|v| v.as_f64().unwrap_or(f64::NAN)).collect();
    let (first, last) = (x.iter().copied().find(|v| v.is_finite())?, x.iter().rev().copied().find(|v| v.is_finite())?);
    let width = (last - first) / buckets as f64;
    if width <= 0.0 {
        return None;
    }
    let bucket = |v: f64| if v.is_finite() { (((v - first) / width) as usize).min(buckets - 1) } else { usize::MAX };
    let mut keep = vec![false; n];
    let mut start = 0;
    while start < n {
        let b = bucket(x[start]);
        let end = (start..n).find(|&i| bucket(x[i]) != b).unwrap_or(n);
        mark(&s.y[start..end], &mut keep[start..end]);
        start = end;
    }
    let kept = |v: &mut Vec<Value>| {
        let mut k = keep.iter();
        v.retain(|_| *k.next().unwrap_or(&false));
    };
    kept(&mut s.x);
    kept(&mut s.y);
    Some(width)
}

/// One bucket: its first and last points, its lowest and highest, its first gap.
fn mark(y: &[Value], keep: &mut [bool]) {
    let n = y.len();
    keep[0] = true;
    keep[n - 1] = true;
    let numbers = || y.iter().enumerate().filter_map(|(i, v)| v.as_f64().map(|v| (i, v)));
    if let Some((i, _)) = numbers().min_by(|a, b| a.1.total_cmp(&b.1)) {
        keep[i] = true;
    }
    if let Some((i, _)) = numbers().max_by(|a, b| a.1.total_cmp(&b.1)) {
        keep[i] = true;
    }
    if let Some(i) = y.iter().position(Value::is_null) {
        keep[i] = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_day_keeps_four_points_a_bucket_and_every_spike() {
        let n = 86_400;
        let x = (1..=n).map(|i| json!(i as f64)).collect();
        let y = (1..=n)
            .map(|i| {
                json!(if i == 50_001 {
                    900.0
                } else if i == 70_003 {
                    0.5
                } else {
                    2.0 + (i % 7) as f64
                })
            })
            .collect();
        let mut s = Series::line("p99", x, y, 0);
        let width = decimate(&mut s, 1_000).unwrap();
        assert!((width - 86.399).abs() < 1e-9, "{width}");
        assert!(s.y.len() <= 4_000 && s.y.len() >= 2_000, "{} points", s.y.len());
        assert_eq!(s.x.len(), s.y.len());
        let at = |t: f64| s.x.iter().position(|v| v.as_f64() == Some(t));
        assert_eq!(s.y[at(50_001.0).unwrap()], json!(900.0), "the spike survives");
        assert_eq!(s.y[at(70_003.0).unwrap()], json!(0.5), "the dip survives");
        assert_eq!((s.x[0].clone(), s.x.last().unwrap().clone()), (json!(1.0), json!(86_400.0)));
        assert!(s.x.windows(2).all(|w| w[0].as_f64() < w[1].as_f64()), "in time order");
    }

    #[test]
    fn a_short_series_and_a_gap_stay() {
        let mut short = Series::line("p99", vec![json!(1.0), json!(2.0)], vec![json!(3.0), json!(4.0)], 0);
        assert_eq!(decimate(&mut short, 1_000), None);
        let n = 10_000;
        let x = (0..n).map(|i| json!(i as f64)).collect();
        let y = (0..n).map(|i| if i == 5_000 { Value::Null } else { json!(1.0) }).collect();
        let mut s = Series::line("cpu", x, y, 0);
        decimate(&mut s, 100).unwrap();
        assert!(s.y.iter().any(Value::is_null), "a gap stays a gap");
    }
}
