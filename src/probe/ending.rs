//! A probe's result completed, in one place: `result::complete` with what the probe adds
//! (the files streamed beside its record, or its figures and faults beside a workload's
//! record), the audit included.

use crate::model::fault::FaultRecord;
use crate::model::ha::HaRecord;
use crate::model::{ResultDocument, StreamedFile};
use crate::result::{Basis, BuildError, Closed, Ending};

/// A probe's result before it is completed.
pub(super) enum Unfinished {
    /// Without a workload: `build` of the probe's record, and the files streamed beside it.
    Recorded { doc: ResultDocument, streamed: Vec<StreamedFile> },
    /// With one: the workload's closed record, and the probe's figures and faults to go in
    /// its result (completed once, here).
    Beside { closed: Closed, ha: HaRecord, faults: Option<FaultRecord> },
    /// `probe verify`: a saved result whose checks were replaced.
    Verified(ResultDocument),
}

impl Unfinished {
    pub fn finish(self) -> Result<ResultDocument, BuildError> {
        match self {
            Unfinished::Recorded { doc, streamed } => {
                crate::result::complete(Basis::Built(doc), Ending::streamed(streamed))
            }
            Unfinished::Beside { closed, ha, faults } => {
                let ending = Ending { ha: Some(ha), faults: Some(faults), streamed: Some(closed.streamed) };
                crate::result::complete(Basis::Record(&closed.record), ending)
            }
            Unfinished::Verified(doc) => crate::result::complete(Basis::Built(doc), Ending::default()),
        }
    }
}
