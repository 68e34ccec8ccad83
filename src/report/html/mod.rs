//! One self-contained HTML report: a result, a comparison or a sweep, opened offline from
//! disk. Everything is inline (CSS, Chart.js, report.js and the chart data computed here as
//! compact rounded arrays); a strict Content-Security-Policy forbids any network request.
//! Every text that comes from a result goes through [`escape::html`]; the chart data through
//! [`escape::script_json`]. Documented in docs/report.md.

mod chart;
mod data;
mod decimate;
mod escape;
mod ha;
mod multi;
mod server;
mod shards;
mod single;
mod study;
mod tpcc;
mod views;

pub use ha::{faults_section, section as ha_section};
pub use shards::section as shards_section;
pub use tpcc::section as tpcc_section;

use crate::model::comparison::Comparison;
use crate::model::sweep::SweepDocument;
use crate::model::{Finding, ResultDocument};
use chart::Chart;
use data::PageData;
use escape::html as esc;
use std::fmt::Write;

/// Chart.js 4.6.1 (MIT, vendored from the npm registry; licence in vendor/).
const CHART_JS: &str = include_str!("vendor/chart.umd.min.js");
const REPORT_JS: &str = include_str!("report.js");
const REPORT_CSS: &str = include_str!("report.css");

/// No request of any kind: scripts and styles inline, images only as data: URLs.
pub const CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

/// What one HTML report shows.
pub enum HtmlInput<'a> {
    /// One result.
    Single { file: &'a str, doc: &'a ResultDocument },
    /// Several results, the first the baseline, with their comparison.
    Compare { files: Vec<&'a str>, docs: Vec<&'a ResultDocument>, comparison: &'a Comparison },
    /// A sweep: every point a full result.
    Sweep { file: &'a str, sweep: &'a SweepDocument },
    /// A study: its verdicts first, its cells' figures, costs and runs.
    Study { file: &'a str, study: &'a crate::model::study::StudyDocument, cells: &'a [(String, ResultDocument)] },
}

pub fn render(input: &HtmlInput<'_>) -> String {
    let (title, body, charts) = match input {
        HtmlInput::Single { file, doc } => views::single_page(file, doc),
        HtmlInput::Compare { files, docs, comparison } => views::compare_page(files, docs, comparison),
        HtmlInput::Sweep { file, sweep } => views::sweep_page(file, sweep),
        HtmlInput::Study { file, study, cells } => study::study_page(file, study, cells),
    };
    page(&title, &body, &PageData::new(charts))
}

/// The page around a body: CSP, styles, the error recorder, chart data and scripts.
fn page(title: &str, body: &str, data: &PageData) -> String {
    let mut o = String::with_capacity(body.len() + CHART_JS.len() + 64 * 1024);
    let _ = write!(
        o,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <link rel=\"icon\" href=\"data:,\"><title>{}</title>\n<style>\n{}</style></head>\n\
         <body data-js-errors=\"[]\" data-csp-violations=\"[]\" data-charts-expected=\"{}\">\n<script>{}</script>\n",
        esc(CSP),
        esc(title),
        escape::inline_asset(REPORT_CSS),
        data.charts.len(),
        ERROR_RECORDER
    );
    o.push_str("<main>\n");
    o.push_str(body);
    let _ = write!(
        o,
        "\n<footer>Written by fairbench {}. Charts: Chart.js 4.6.1 (MIT licence), embedded; this file makes no network request.</footer>\n</main>\n",
        esc(env!("CARGO_PKG_VERSION"))
    );
    let _ = writeln!(o, "<script type=\"application/json\" id=\"fb-data\">{}</script>", escape::script_json(data));
    let _ = write!(o, "<script>\n{}\n</script>\n", escape::inline_asset(CHART_JS));
    let _ = write!(o, "<script>\n{}\n</script>\n</body></html>\n", escape::inline_asset(REPORT_JS));
    o
}

/// Records uncaught errors and CSP violations into the DOM before anything else runs, so a
/// test (or a reader) can see them: `data-js-errors`, `data-csp-violations` on `<body>`.
const ERROR_RECORDER: &str = "(function(){var errs=[],csp=[];\
function put(){document.body.dataset.jsErrors=JSON.stringify(errs);document.body.dataset.cspViolations=JSON.stringify(csp);}\
window.fbError=function(m){errs.push(String(m));put();};\
window.addEventListener('error',function(e){errs.push(e.message+' at '+e.filename+':'+e.lineno);put();});\
window.addEventListener('unhandledrejection',function(e){errs.push('unhandled rejection: '+e.reason);put();});\
document.addEventListener('securitypolicyviolation',function(e){csp.push(e.violatedDirective+' '+e.blockedURI);put();});})();";

/// One table cell: escaped content with an optional class.
pub struct TableCell {
    html: String,
    class: String,
    strong: bool,
}

impl TableCell {
    pub fn text(s: &str) -> TableCell {
        TableCell { html: esc(s), class: String::new(), strong: false }
    }
    /// A number, right-aligned.
    pub fn num(s: String) -> TableCell {
        TableCell { html: esc(&s), class: "n".into(), strong: false }
    }
    pub fn code(s: &str) -> TableCell {
        TableCell { html: format!("<code>{}</code>", esc(s)), class: String::new(), strong: false }
    }
    /// Markup built by the caller from escaped parts.
    pub fn raw(html: String) -> TableCell {
        TableCell { html, class: String::new(), strong: false }
    }
    pub fn class(mut self, c: &str) -> TableCell {
        if !self.class.is_empty() {
            self.class.push(' ');
        }
        self.class.push_str(c);
        self
    }
    pub fn strong(mut self) -> TableCell {
        self.strong = true;
        self
    }
    fn td(&self) -> String {
        let cls = if self.class.is_empty() { String::new() } else { format!(" class=\"{}\"", esc(&self.class)) };
        if self.strong {
            format!("<td{cls}><strong>{}</strong></td>", self.html)
        } else {
            format!("<td{cls}>{}</td>", self.html)
        }
    }
}

/// A table with a header row.
pub fn table(head: &[&str], rows: Vec<Vec<TableCell>>, class: &str) -> String {
    let mut o = format!("<div class=\"scroll\"><table class=\"{}\"><thead><tr>", esc(class));
    for h in head {
        let _ = write!(o, "<th>{}</th>", esc(h));
    }
    o.push_str("</tr></thead><tbody>");
    for r in rows {
        o.push_str("<tr>");
        for c in r {
            o.push_str(&c.td());
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table></div>");
    o
}

/// Key/value rows; `id` names the table for a filter box.
pub fn kv_table(rows: &[(String, String)], id: Option<&str>) -> String {
    let id = id.map(|i| format!(" id=\"{}\"", esc(i))).unwrap_or_default();
    let mut o = format!("<div class=\"scroll\"><table class=\"kv\"{id}><tbody>");
    for (k, v) in rows {
        let _ = write!(o, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    o.push_str("</tbody></table></div>");
    o
}

/// A collapsible block; `class` `print-hide` leaves it out of print.
pub fn details(summary: &str, body: &str, open: bool, class: &str) -> String {
    format!(
        "<details class=\"{}\"{}><summary>{}</summary>{body}</details>",
        esc(class),
        if open { " open" } else { "" },
        esc(summary)
    )
}

/// Findings, the most severe first, in their severity's colour with evidence and advice.
pub fn findings(list: &[Finding], none: &str) -> String {
    if list.is_empty() {
        return format!("<p class=\"none\">{}</p>", esc(none));
    }
    let mut sorted: Vec<&Finding> = list.iter().collect();
    sorted.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let mut o = String::from("<ul class=\"findings\">");
    for f in sorted {
        let sev = f.severity.name();
        let _ = write!(
            o,
            "<li class=\"finding sev-{sev}\"><span class=\"badge\">{sev}</span> <code>{}</code> {}",
            esc(&f.id),
            esc(&f.title)
        );
        if !f.evidence.is_empty() {
            let ev: Vec<String> = f
                .evidence
                .iter()
                .map(|(k, v)| {
                    let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                    format!("{} = {}", esc(k), esc(&v))
                })
                .collect();
            let _ = write!(o, "<div class=\"evidence\">evidence: {}</div>", ev.join(", "));
        }
        let _ = write!(o, "<div class=\"advice\">{}</div></li>", esc(&f.advice));
    }
    o.push_str("</ul>");
    o
}

/// `critical 1, warn 2, info 0`.
pub fn severity_counts(list: &[Finding]) -> String {
    use crate::model::Severity::*;
    let n = |s| list.iter().filter(|f| f.severity == s).count();
    format!("{} critical, {} warn, {} info", n(Critical), n(Warn), n(Info))
}

/// The figure a chart is drawn in (report.js finds it by id).
pub fn figure(c: &Chart) -> String {
    format!(
        "<figure class=\"chart\"><div class=\"box{}\" style=\"height:{}px\"><canvas id=\"chart-{}\" role=\"img\" aria-label=\"{}\"></canvas></div></figure>",
        if c.height > 360 { " tall" } else { "" },
        c.height,
        esc(&c.id),
        esc(&c.title)
    )
}

/// The figures of the charts whose id starts with `prefix`.
pub fn figures(charts: &[Chart], prefix: &str) -> String {
    charts.iter().filter(|c| c.id.starts_with(prefix)).map(figure).collect()
}

#[cfg(test)]
mod tests;
