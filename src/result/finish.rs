//! The last step of every result: what is added once its record has closed (the files
//! streamed beside it; beside a probe, the probe's figures and the faults it performed),
//! then the audit, on the whole document. Every command that makes or changes a result
//! ends here, so a finding never depends on which command wrote the file.

use crate::model::fault::FaultRecord;
use crate::model::ha::HaRecord;
use crate::model::{ResultDocument, StreamedFile};

/// What a finished result gains beyond what its record built; `None` leaves a part as it is.
#[derive(Default)]
pub struct Ending {
    pub streamed: Option<Vec<StreamedFile>>,
    /// A workload beside a probe: the probe's figures, and the faults on the probe's clock.
    pub ha: Option<HaRecord>,
    pub faults: Option<Option<FaultRecord>>,
}

impl Ending {
    /// The files streamed beside the result.
    pub fn streamed(files: Vec<StreamedFile>) -> Self {
        Ending { streamed: Some(files), ..Ending::default() }
    }
}

/// `doc` with `ending` added and audited.
pub fn finish(mut doc: ResultDocument, ending: Ending) -> ResultDocument {
    if let Some(files) = ending.streamed {
        doc.streamed = files;
    }
    if let Some(ha) = ending.ha {
        doc.ha = Some(ha);
    }
    if let Some(faults) = ending.faults {
        doc.faults = faults;
    }
    doc.audit = crate::audit::audit(&doc);
    doc
}
