//! A statement as measurement sees it: its name and its class.

pub use crate::model::statement_class::StatementClass;

/// A statement as measurement sees it: its name in results and its class. The recorder
/// keeps one histogram per statement id (the position in the run's list of these).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementInfo {
    pub name: String,
    pub class: StatementClass,
}
