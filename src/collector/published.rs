//! What the collector publishes as the run goes, for readers on threads of their own: the
//! terminal's interval lines and status line, `--metrics-listen`. The measuring thread only
//! sends; it never calls into what reads.

use super::{Progress, Window};
use crate::model::IntervalStats;
use crate::recorder::classes::ClassHistograms;
use std::sync::mpsc::{Receiver, Sender};

/// One thing the collector tells, in the order it happens.
pub enum Published {
    /// All clients are connected: the run's clock starts (warmup included).
    Started(std::time::Instant),
    /// One timeline interval (about a second; warmup flagged) and its histograms per class.
    Second(Box<(IntervalStats, ClassHistograms)>),
    /// One `--report-interval` window ([`Window`]'s fields).
    Window(Box<IntervalStats>, f64, bool),
    /// Measurement is over: what follows is the run's end being read.
    Stopped,
}

pub type Publisher = Sender<Published>;

/// Reads what is published until the collector is gone, telling `progress` of each.
pub fn read(from: Receiver<Published>, progress: &mut dyn Progress) {
    for published in from {
        match published {
            Published::Started(at) => progress.started(at),
            Published::Second(second) => progress.second(&second.0, &second.1),
            Published::Window(stats, end_s, partial) => progress.window(&Window { stats: &stats, end_s, partial }),
            Published::Stopped => progress.stopped(),
        }
    }
}
