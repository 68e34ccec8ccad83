//! The last step of every result: what is added once its record has closed (the files
//! streamed beside it; beside a probe, the probe's figures and the faults it performed),
//! then the audit, on the whole document. Every command that makes or changes a result
//! ends here, so a finding never depends on which command wrote the file.

use super::BuildError;
use crate::model::fault::FaultRecord;
use crate::model::ha::HaRecord;
use crate::model::record::{Record, RecordStart};
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

/// What a result is completed from.
pub enum Basis<'a> {
    /// A record, ended or not: built.
    Record(&'a Record),
    /// A record just begun: its start document stands in place of the result until the end.
    Start(&'a RecordStart),
    /// A document built from records, then changed where no record says it (combine's
    /// rows, recover's verdict, a probe verified again).
    Built(ResultDocument),
}

/// A run's record closed, and the files streamed beside it: what a measurement hands back
/// before its result is completed (a probe beside it adds its figures to the same ending).
pub struct Closed {
    pub record: Record,
    pub streamed: Vec<StreamedFile>,
}

impl Closed {
    /// The result of this record, its streamed files named.
    pub fn complete(self) -> Result<ResultDocument, BuildError> {
        complete(Basis::Record(&self.record), Ending::streamed(self.streamed))
    }
}

/// The one pipeline's last steps: `build` (when from a record), then `finish`.
pub fn complete(from: Basis<'_>, ending: Ending) -> Result<ResultDocument, BuildError> {
    let doc = match from {
        Basis::Record(record) => super::build(record)?,
        Basis::Start(start) => start.document.clone(),
        Basis::Built(doc) => doc,
    };
    Ok(finish(doc, ending))
}

/// `doc` with `ending` added and audited.
fn finish(mut doc: ResultDocument, ending: Ending) -> ResultDocument {
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
