//! The errors of compiling a workload file, where compile.rs and resolve.rs report them.

use crate::workload::spec::{line_col, SpecError};
use toml::Spanned;

/// Errors, each `file:line:col: message`, collected over the whole file.
pub(super) struct Errors<'a> {
    pub(super) file: &'a str,
    pub(super) text: &'a str,
    pub(super) list: Vec<String>,
}

impl Errors<'_> {
    pub(super) fn at<T>(&mut self, spanned: &Spanned<T>, message: impl std::fmt::Display) {
        let (line, column) = line_col(self.text, spanned.span().start);
        let what = message.to_string();
        self.list.push(SpecError { file: self.file.to_string(), line, column, what }.to_string());
    }
}
