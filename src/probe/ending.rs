//! A probe's result finished, in one place: `result::finish` with what the probe adds (the
//! files streamed beside its record, or its figures and faults beside a workload's result),
//! the audit included.

use crate::model::fault::FaultRecord;
use crate::model::ha::HaRecord;
use crate::model::{ResultDocument, StreamedFile};
use crate::result::Ending;

/// A probe's result before it is finished.
pub(super) enum Unfinished {
    /// Without a workload: `build` of the probe's record, and the files streamed beside it.
    Recorded { doc: ResultDocument, streamed: Vec<StreamedFile> },
    /// With one: the workload's result, and the probe's figures and faults to go in it.
    Beside { doc: ResultDocument, ha: HaRecord, faults: Option<FaultRecord> },
    /// `probe verify`: a saved result whose checks were replaced.
    Verified(ResultDocument),
}

impl Unfinished {
    pub fn finish(self) -> ResultDocument {
        let (doc, ending) = match self {
            Unfinished::Recorded { doc, streamed } => (doc, Ending::streamed(streamed)),
            Unfinished::Beside { doc, ha, faults } => {
                (doc, Ending { ha: Some(ha), faults: Some(faults), streamed: None })
            }
            Unfinished::Verified(doc) => (doc, Ending::default()),
        };
        crate::result::finish(doc, ending)
    }
}
