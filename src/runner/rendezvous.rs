//! How a run meets the other parts of a run split over client hosts.

use std::time::Duration;

/// Why the others called the run off: their own error (a shard barrier's), kept typed.
pub type RendezvousError = Box<dyn std::error::Error + Send + Sync>;

/// Where a run meets the others it is part of (the shards of a run split over client
/// hosts): it starts when they all do, and the server-wide counters are read once for all.
pub trait Rendezvous {
    /// Every client is connected and ready: returns once the start is agreed with the
    /// others (`Err`: the run is called off, with why). `stop`: Ctrl-C was pressed.
    fn agree(&mut self, stop: &dyn Fn() -> bool) -> Result<(), RendezvousError>;
    /// Blocks until the agreed instant.
    fn wait_for_start(&mut self);
    /// The measured phase ended `ran` after the start: returns when the server-wide
    /// counters may be read (every part ended, or it waited long enough).
    fn ended(&mut self, ran: Duration);
    /// Whether this process reads the server-wide counters around the run.
    fn reads_counters(&self) -> bool;
}

/// A run on its own: starts at once, reads its counters itself.
pub struct Alone;

impl Rendezvous for Alone {
    fn agree(&mut self, _: &dyn Fn() -> bool) -> Result<(), RendezvousError> {
        Ok(())
    }
    fn wait_for_start(&mut self) {}
    fn ended(&mut self, _: Duration) {}
    fn reads_counters(&self) -> bool {
        true
    }
}
