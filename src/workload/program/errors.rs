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

/// Everything wrong with a workload file, each `file:line:col: message`, in file order: a
/// file is refused with all of its problems at once, not the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileErrors(pub Vec<String>);

impl std::ops::Deref for CompileErrors {
    type Target = [String];
    fn deref(&self) -> &[String] {
        &self.0
    }
}
