//! The parts of a result's report that only some results have: TPC-C-like figures, the
//! faults a run performed, an HA probe's verdict, the client hosts of a sharded run, the
//! server's counters and the server over time. Each is one small type behind [`Section`], which says what it adds to
//! the text report and to the HTML page, so that a new part is one type in the lists below.

use super::ReportOptions;
use crate::model::ResultDocument;

pub trait Section {
    /// Appends the section's text: nothing when the result has none.
    fn text(&self, o: &mut String, d: &ResultDocument, opts: &ReportOptions);
    /// The section's HTML: empty when the result has none (or the page shows it as charts).
    fn html(&self, d: &ResultDocument) -> String;
}

pub struct Tpcc;
pub struct Faults;
pub struct Ha;
pub struct Shards;
pub struct ServerCounters;
pub struct ServerOverTime;

/// The text report's sections after the latency tables, in order (TPC-C's figures go
/// with the transactions they come from).
pub const TEXT_AFTER_LATENCY: [&dyn Section; 2] = [&Faults, &Ha];
/// ... and after the checks and the client's cost.
pub const TEXT_AFTER_COST: [&dyn Section; 3] = [&Shards, &ServerCounters, &ServerOverTime];
/// The HTML page's sections before its charts, in order.
pub const HTML_BEFORE_CHARTS: [&dyn Section; 4] = [&Tpcc, &Faults, &Ha, &Shards];

impl Section for Tpcc {
    fn text(&self, o: &mut String, d: &ResultDocument, _: &ReportOptions) {
        if let Some(t) = &d.tpcc {
            super::tpcc::text(o, t);
        }
    }
    fn html(&self, d: &ResultDocument) -> String {
        d.tpcc.as_ref().map(super::html::tpcc_section).unwrap_or_default()
    }
}

impl Section for Faults {
    fn text(&self, o: &mut String, d: &ResultDocument, _: &ReportOptions) {
        if let Some(f) = &d.faults {
            super::faults::text(o, f);
            super::faults::stalls(o, &d.fault_stalls());
        }
    }
    fn html(&self, d: &ResultDocument) -> String {
        d.faults.as_ref().map(super::html::faults_section).unwrap_or_default()
    }
}

impl Section for Ha {
    fn text(&self, o: &mut String, d: &ResultDocument, opts: &ReportOptions) {
        if let Some(h) = &d.ha {
            super::ha::text(o, h, d.faults.as_ref(), opts.verbose);
            if let Some(v) = d.outage_views() {
                super::ha::views(o, &v);
            }
        }
    }
    fn html(&self, d: &ResultDocument) -> String {
        d.ha.as_ref().map(|h| super::html::ha_section(h, d.outage_views().as_ref())).unwrap_or_default()
    }
}

impl Section for Shards {
    fn text(&self, o: &mut String, d: &ResultDocument, _: &ReportOptions) {
        super::shards::text(o, d);
    }
    fn html(&self, d: &ResultDocument) -> String {
        super::html::shards_section(d)
    }
}

impl Section for ServerCounters {
    fn text(&self, o: &mut String, d: &ResultDocument, _: &ReportOptions) {
        super::server::counters(o, d);
    }
    /// The page lists the counters with the server's conditions.
    fn html(&self, _: &ResultDocument) -> String {
        String::new()
    }
}

impl Section for ServerOverTime {
    fn text(&self, o: &mut String, d: &ResultDocument, _: &ReportOptions) {
        super::server::text(o, d);
    }
    /// Charted under the throughput instead (html/server.rs).
    fn html(&self, _: &ResultDocument) -> String {
        String::new()
    }
}
