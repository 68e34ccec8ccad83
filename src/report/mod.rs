//! Report formats. Each is one small type behind [`Report`] for the document it renders: a
//! result, a comparison or a sweep.

mod compare;
pub mod csv;
mod faults;
mod findings;
pub mod ha;
mod headline;
pub mod html;
mod interval;
#[cfg(test)]
mod probe_tests;
mod probed;
mod sections;
mod server;
pub mod shards;
pub mod status;
mod study;
pub(crate) mod study_seed;
mod sweep;
mod sysbench;
mod text;
mod tpcc;

pub use compare::{verdict_sentences, CompareJson, CompareText};
pub use findings::findings;
pub use interval::{IntervalPrinter, WindowEnd};
pub use sections::Section;
pub use study::StudyText;
pub use sweep::SweepTable;
pub use sysbench::SysbenchReport;
pub use text::TextReport;

use crate::model::ResultDocument;

/// Rendering options shared by formats.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// Percentile shown in the table's P columns; 0 is sysbench's --percentile=0 (none).
    pub percentile: f64,
    /// The wide per-query table too (Finch's layout).
    pub verbose: bool,
}

impl Default for ReportOptions {
    /// fairbench's own: the 95th percentile, the compact table.
    fn default() -> Self {
        ReportOptions { percentile: 95.0, verbose: false }
    }
}

impl ReportOptions {
    /// The percentile fairbench's own tables show: the one asked for, the 95th for none.
    pub fn shown_percentile(&self) -> f64 {
        if self.percentile > 0.0 {
            self.percentile
        } else {
            95.0
        }
    }
}

/// A format a document is rendered in (hyperfine's exporters): a result (`D` by default) as
/// text, sysbench's, JSON, CSV or HTML; a comparison as text or JSON; a sweep as a table. A
/// part only some results have is a [`Section`] the result formats list.
pub trait Report<D = ResultDocument> {
    fn render(&self, doc: &D, opts: &ReportOptions) -> String;
}

/// The result document itself, pretty-printed.
pub struct JsonReport;

impl Report for JsonReport {
    fn render(&self, doc: &ResultDocument, _: &ReportOptions) -> String {
        doc.to_json()
    }
}

/// One result as a self-contained HTML page (charts and all, offline).
pub struct HtmlReport<'a> {
    /// The result's file name, as the page names it.
    pub file: &'a str,
}

impl Report for HtmlReport<'_> {
    fn render(&self, doc: &ResultDocument, _: &ReportOptions) -> String {
        html::render(&html::HtmlInput::Single { file: self.file, doc })
    }
}

/// A sweep as one page: its charts over the swept axis, every point a full result.
impl Report<crate::model::sweep::SweepDocument> for HtmlReport<'_> {
    fn render(&self, sweep: &crate::model::sweep::SweepDocument, _: &ReportOptions) -> String {
        html::render(&html::HtmlInput::Sweep { file: self.file, sweep })
    }
}

/// A study as one page, its verdicts first, each cell's usual report last.
pub struct StudyHtml<'a> {
    /// The study document's file name, as the page names it.
    pub file: &'a str,
    /// Each cell's id and its completed repeats built as one result.
    pub cells: &'a [(String, ResultDocument)],
}

impl Report<crate::model::study::StudyDocument> for StudyHtml<'_> {
    fn render(&self, study: &crate::model::study::StudyDocument, _: &ReportOptions) -> String {
        html::render(&html::HtmlInput::Study { file: self.file, study, cells: self.cells })
    }
}

/// One table of a result as CSV (`fairbench export`).
#[derive(Clone, Copy, Debug)]
pub enum CsvReport {
    /// A row per timeline entry and class.
    Intervals,
    /// A row per statement kind.
    Statements,
    /// A row per recorded condition.
    Conditions,
}

impl Report for CsvReport {
    fn render(&self, doc: &ResultDocument, _: &ReportOptions) -> String {
        match self {
            CsvReport::Intervals => csv::intervals(doc),
            CsvReport::Statements => csv::statements(doc),
            CsvReport::Conditions => csv::conditions(doc),
        }
    }
}

/// 1234567.8 -> "1,234,568".
pub fn thousands(v: f64) -> String {
    let n = v.round() as i64;
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_groups_digits() {
        assert_eq!(super::thousands(1_085_187.0), "1,085,187");
        assert_eq!(super::thousands(16.0), "16");
        assert_eq!(super::thousands(0.4), "0");
    }
}
