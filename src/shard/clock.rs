//! A client host's clock against the database's: the offset that turns one into the other,
//! from the round trip with the least delay (as NTP picks its best sample).

use crate::db::{Connection, DbError};
use crate::model::now_micros;

/// Round trips measured; the quickest one is kept.
const SAMPLES: u32 = 9;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockOffset {
    /// The database's clock minus this host's, microseconds.
    pub offset_us: i64,
    /// Half the round trip it was measured over: the offset is exact within this.
    pub uncertainty_us: i64,
}

impl ClockOffset {
    /// Now on the database's clock, as this host estimates it.
    pub fn db_now_us(&self) -> i64 {
        now_micros() + self.offset_us
    }

    /// A database time as this host's (microseconds since the Unix epoch).
    pub fn local_us(&self, db_us: i64) -> i64 {
        db_us - self.offset_us
    }
}

/// Measures the offset with `sql`, a query whose one value is the database's clock in
/// microseconds since the Unix epoch.
pub async fn measure<C: Connection>(conn: &mut C, sql: &str) -> Result<ClockOffset, DbError> {
    let mut best: Option<(i64, ClockOffset)> = None;
    for _ in 0..SAMPLES {
        let before = now_micros();
        let rows = conn.text_rows(sql).await?;
        let after = now_micros();
        let text = rows.first().and_then(|r| r.first().cloned().flatten()).unwrap_or_default();
        let server: i64 = text.trim().parse().map_err(|_| {
            DbError::protocol(format!("the database's clock read as {text:?}, not microseconds since 1970"))
        })?;
        let rtt = after - before;
        let sample = ClockOffset { offset_us: server - (before + after) / 2, uncertainty_us: (rtt + 1) / 2 };
        if best.is_none_or(|(r, _)| rtt < r) {
            best = Some((rtt, sample));
        }
    }
    Ok(best.expect("at least one sample").1)
}
