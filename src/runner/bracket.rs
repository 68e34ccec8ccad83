//! What the server and the tables say around the measured phase: the server's counters and
//! the workload's tallies, read on a connection of the run's own as the phase starts (after
//! any warmup) and once every client has finished.

use super::{bounded, checks};
use crate::db::{Connection, DbError};
use crate::model::TallyRecord;
use crate::workload::program::Tally;
use std::collections::BTreeMap;
use std::time::Duration;

pub struct Bracket<'a, C> {
    rt: crate::LocalRuntime,
    conn: C,
    tallies: &'a [Tally],
    /// Whether this run reads them (of a run's shards, one does).
    reads: bool,
    counters_before: BTreeMap<String, i64>,
    tallies_before: Vec<Option<i64>>,
}

/// Counters before and after, and each tally.
pub struct Bracketed {
    pub counters_before: BTreeMap<String, i64>,
    pub counters_after: BTreeMap<String, i64>,
    pub tallies: Vec<TallyRecord>,
}

impl<'a, C: Connection> Bracket<'a, C> {
    /// `reads`: whether this run reads them at all.
    pub fn open<D>(db: &D, tallies: &'a [Tally], reads: bool) -> Result<Self, DbError>
    where
        D: crate::db::Database<Conn = C>,
    {
        let rt = crate::local_runtime();
        let conn = rt.block_on(db.connect())?;
        let (counters_before, tallies_before) = (BTreeMap::new(), Vec::new());
        Ok(Bracket { rt, conn, tallies, reads, counters_before, tallies_before })
    }

    /// As the measured phase starts; a server that does not answer in time leaves them empty.
    /// The tallies' queries are read outside the counters' span (before them here, after
    /// them at the end), so the server's counters hold the workload's statements alone.
    pub fn read_before(&mut self, limit: Duration) {
        if self.reads {
            self.tallies_before = checks::read_tallies(&self.rt, limit, &mut self.conn, self.tallies);
            self.counters_before = bounded(&self.rt, limit, self.conn.status_counters()).unwrap_or_default();
        }
    }

    /// Once the phase has ended.
    pub fn read_after(mut self, limit: Duration) -> Bracketed {
        if !self.reads {
            return Bracketed {
                counters_before: BTreeMap::new(),
                counters_after: BTreeMap::new(),
                tallies: Vec::new(),
            };
        }
        let counters_after = bounded(&self.rt, limit, self.conn.status_counters()).unwrap_or_default();
        let after = checks::read_tallies(&self.rt, limit, &mut self.conn, self.tallies);
        let before = self.tallies_before.into_iter().chain(std::iter::repeat(None));
        let tallies =
            self.tallies.iter().zip(before.zip(after)).map(|(t, (b, a))| TallyRecord::read(&t.name, b, a)).collect();
        Bracketed { counters_before: self.counters_before, counters_after, tallies }
    }
}
