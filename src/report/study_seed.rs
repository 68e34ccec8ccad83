//! A study's seed in its report's first lines: the published study it redoes, what of it
//! the study reproduces (and by what) and what it drops (and why), so that the verdicts
//! are read as the seed's argument redone on this host, not as the seed's own results.

use crate::model::study::SeedRecord;
use std::fmt::Write;

/// The seed as text lines, each indented by two spaces.
pub(crate) fn seed_text(s: &SeedRecord) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Seed: {}", s.source);
    let _ = writeln!(
        o,
        "  This study redoes the seed's argument on this host's own servers: its verdicts say what these runs show, not what the original systems did."
    );
    if s.reproduced.is_empty() {
        let _ = writeln!(o, "  Reproduced: none of the points the seed's conclusion rests on");
    } else {
        let _ = writeln!(o, "  Reproduced:");
    }
    for r in &s.reproduced {
        let _ = writeln!(o, "    - {} (by {})", r.point, r.by.join(", "));
    }
    if s.dropped.is_empty() {
        let _ = writeln!(o, "  Dropped: none");
    } else {
        let _ = writeln!(o, "  Dropped (not reproduced here):");
    }
    for d in &s.dropped {
        let _ = writeln!(o, "    - {}: {}", d.point, d.why);
    }
    o
}

/// The seed as an HTML section, with `esc` escaping text.
pub(crate) fn seed_html(s: &SeedRecord, esc: impl Fn(&str) -> String) -> String {
    let mut o = String::from("<section class=\"seed\" id=\"seed\"><h2>Seed</h2>");
    let _ = write!(
        o,
        "<p>{}</p><p class=\"muted\">This study redoes the seed's argument on this host's own servers: its verdicts say what these runs show, not what the original systems did.</p>",
        esc(&s.source)
    );
    o.push_str("<h3>Reproduced</h3><ul>");
    for r in &s.reproduced {
        let _ = write!(o, "<li>{} <span class=\"muted\">(by {})</span></li>", esc(&r.point), esc(&r.by.join(", ")));
    }
    if s.reproduced.is_empty() {
        o.push_str("<li>none of the points the seed's conclusion rests on</li>");
    }
    o.push_str("</ul><h3>Dropped (not reproduced here)</h3><ul>");
    for d in &s.dropped {
        let _ = write!(o, "<li>{}: {}</li>", esc(&d.point), esc(&d.why));
    }
    if s.dropped.is_empty() {
        o.push_str("<li>none</li>");
    }
    o.push_str("</ul></section>");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::study::{DroppedPoint, ReproducedPoint};

    #[test]
    fn reproduced_points_carry_their_coverage_and_dropped_ones_their_reason() {
        let s = SeedRecord {
            source: "Seed (2023)".into(),
            reproduced: vec![ReproducedPoint {
                point: "durability off".into(),
                by: vec!["target:t".into(), "claim:c".into()],
            }],
            dropped: vec![DroppedPoint { point: "250 tables".into(), why: "2 cores".into() }],
        };
        let t = seed_text(&s);
        assert!(t.starts_with("Seed: Seed (2023)\n"), "{t}");
        assert!(t.contains("    - durability off (by target:t, claim:c)\n"), "{t}");
        assert!(t.contains("Dropped (not reproduced here):\n    - 250 tables: 2 cores\n"), "{t}");
        let h = seed_html(&s, |x| x.replace('<', "&lt;"));
        assert!(h.contains("<li>250 tables: 2 cores</li>"), "{h}");
    }

    #[test]
    fn the_study_report_prints_the_seed_under_its_title_and_question_before_the_verdicts() {
        use crate::model::study::StudyDocument;
        use crate::report::{Report, ReportOptions};
        let d: StudyDocument = serde_json::from_value(serde_json::json!({
            "schema": "fairbench.study", "schema_version": 1, "fairbench_version": "0",
            "title": "T", "question": "Q?", "file": "s.toml",
            "seed": {"source": "S (2015)", "reproduced": [{"point": "p", "by": ["target:a"]}],
                     "dropped": [{"point": "d", "why": "w"}]},
            "plan": {"repeats": 1, "order": "interleaved", "warmup_s": 0, "time_s": 1, "seed": 1, "cells": []},
            "runs": []
        }))
        .expect("a study document");
        let text = super::super::study::StudyText.render(&d, &ReportOptions::default());
        let lines: Vec<&str> = text.lines().take(8).collect();
        assert_eq!(lines[..3], ["Study: T (s.toml)", "Question: Q?", "Seed: S (2015)"], "{text}");
        assert_eq!(
            lines[4..8],
            ["  Reproduced:", "    - p (by target:a)", "  Dropped (not reproduced here):", "    - d: w"]
        );
        let verdicts = text.find("No claims declared").expect("the verdicts' place");
        assert!(text.find("Seed:").unwrap() < verdicts, "{text}");
    }
}
