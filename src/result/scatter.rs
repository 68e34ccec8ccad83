//! The latency scatter a result keeps: every interval samples at most 100 points, and the
//! whole run at most [`MAX_POINTS`], drawn evenly from all of them, so a long run's result
//! does not grow with its scatter. Each interval's exact max stays in its stats (no spike is
//! lost), and the streamed intervals file as many over a planned run.

use crate::model::IntervalStats;

/// Points of the scatter over a whole run.
pub const MAX_POINTS: usize = crate::model::stats::SCATTER_POINTS_PER_RUN;

/// `intervals` with at most [`MAX_POINTS`] scatter points over all of them: the i-th of N
/// points is kept when i × MAX_POINTS / N reaches a new whole number (evenly spread, the
/// same on every build of the same timeline).
pub fn bounded(mut intervals: Vec<IntervalStats>) -> Vec<IntervalStats> {
    let total: usize = intervals.iter().map(|i| i.scatter.points.len()).sum();
    if total <= MAX_POINTS {
        return intervals;
    }
    let slot = |i: usize| (i as u128 * MAX_POINTS as u128 / total as u128) as usize;
    let mut index = 0usize;
    for interval in &mut intervals {
        let points = std::mem::take(&mut interval.scatter.points);
        interval.scatter.points = points
            .into_iter()
            .filter(|_| {
                let keep = slot(index + 1) > slot(index);
                index += 1;
                keep
            })
            .collect();
    }
    intervals
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeline(intervals: usize, points: usize) -> Vec<IntervalStats> {
        (0..intervals)
            .map(|i| {
                let mut s = IntervalStats { from_s: i as f64, duration_s: 1.0, ..Default::default() };
                s.scatter.points = (0..points).map(|p| [i as f64 + p as f64 / points as f64, 1.0]).collect();
                s
            })
            .collect()
    }

    #[test]
    fn a_day_of_intervals_keeps_an_even_sample_and_a_short_run_keeps_all() {
        let short = bounded(timeline(100, 100));
        assert_eq!(short.iter().map(|i| i.scatter.points.len()).sum::<usize>(), 10_000);
        let day = bounded(timeline(86_400, 100));
        let kept: Vec<usize> = day.iter().map(|i| i.scatter.points.len()).collect();
        assert_eq!(kept.iter().sum::<usize>(), MAX_POINTS);
        // Evenly over the day: every hour holds its share (within one point per interval).
        for hour in kept.chunks(3600) {
            let n: usize = hour.iter().sum();
            assert!((n as i64 - (MAX_POINTS / 24) as i64).abs() <= 2, "{n}");
        }
    }
}
