//! `fairbench check FILE.toml`: validates a workload file and shows what it would run on
//! each database, without connecting anywhere.

use super::Error;
use crate::cli::CheckArgs;
use crate::db::Value;
use crate::model::Dialect;
use crate::random::{DistributionSpec, Rng};
use crate::workload::file::LoadError;
use crate::workload::generate::{Context, Draw, DrawError, Drawn, ScopeDraws};
use crate::workload::program::{compile, scalar_text, Program, Times};
use crate::workload::spec::Generator;
use crate::workload::{self, spec};
use std::process::ExitCode;

pub fn check_cmd(args: &CheckArgs) -> Result<ExitCode, Error> {
    let file = args.file.display().to_string();
    let text = workload::file::read(&args.file)?;
    let spec = spec::parse(&file, &text).map_err(LoadError::from)?;
    let overrides = workload::file::parse_sets(&args.set).map_err(LoadError::from)?;
    let dialects = match args.dialect.is_empty() {
        true => Dialect::ALL.to_vec(),
        false => args
            .dialect
            .iter()
            .map(|d| Dialect::from_name(d).ok_or_else(|| super::UsageError::UnknownDialect { given: d.clone() }))
            .collect::<Result<Vec<_>, _>>()?,
    };
    let mut compiled = Vec::new();
    let mut failed: Vec<(Dialect, Vec<String>)> = Vec::new();
    for d in dialects {
        match compile(&spec, &file, &text, d, &overrides) {
            Ok(p) => compiled.push(p),
            Err(errors) => failed.push((d, errors.0)),
        }
    }
    // Errors every database shares are the file's own; print each once.
    if compiled.is_empty() {
        let mut lines: Vec<&String> = failed.iter().flat_map(|(_, e)| e).collect();
        lines.sort();
        lines.dedup();
        for l in &lines {
            eprintln!("error: {l}");
        }
        return Ok(ExitCode::from(2));
    }
    for p in &compiled {
        print!("{}", describe(p));
    }
    if args.sample > 0 {
        if let Some(p) = compiled.first() {
            print!("{}", samples(p, args.sample)?);
        }
    }
    // A gate: a database it must run on and cannot fails the check.
    for (d, errors) in &failed {
        eprintln!("error: not runnable on {}: {}", d.name(), errors.first().map(String::as_str).unwrap_or("unknown"));
    }
    Ok(if failed.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// A generator as the file would write it, shortly.
fn generator_text(g: &Generator) -> String {
    use crate::workload::spec::Number;
    let n = |x: &Number| match x {
        Number::Int(i) => i.to_string(),
        Number::Param(p) => p.clone(),
    };
    match g {
        Generator::Uniform([a, b]) => format!("uniform {}..{}", n(a), n(b)),
        Generator::Gaussian([a, b]) => format!("gaussian {}..{}", n(a), n(b)),
        Generator::Special([a, b]) => format!("special {}..{}", n(a), n(b)),
        Generator::Pareto([a, b]) => format!("pareto {}..{}", n(a), n(b)),
        Generator::Zipfian([a, b]) => format!("zipfian {}..{}", n(a), n(b)),
        Generator::Ids(t) => format!("ids of {t}"),
        Generator::Table(t) => format!("table number of {t}"),
        Generator::Offset(from, add) => format!("{from} + {}", n(add)),
        Generator::OtherThan(other, lo, hi) => format!("uniform {}..{} but {other}", n(lo), n(hi)),
        Generator::Unique => "unique id".into(),
        Generator::Pattern(p) => format!("pattern '{p}'"),
        Generator::Sequence(s) => format!("sequence from {s}"),
        Generator::ClientId => "client id".into(),
        Generator::Row => "row number".into(),
        Generator::Now => "now (UTC)".into(),
        Generator::Repetition => "repetition number".into(),
        Generator::ByClient([c, e]) => format!("(client id / {}) % {} + 1", n(e), n(c)),
        Generator::ByRow(parts) => {
            let first = parts.get(2).map(n).unwrap_or_else(|| "1".into());
            format!("((row - 1) / {}) % {} + {first}", n(&parts[1]), n(&parts[0]))
        }
        Generator::Shuffled([c, e]) => format!("((row - 1) / {}) % {} + 1, shuffled", n(e), n(c)),
        Generator::FirstRows { first, every, then, rest } => format!(
            "first {} of every {} rows: {}, then: {}",
            n(first),
            n(every),
            generator_text(then),
            generator_text(rest)
        ),
        Generator::Keyed { every, uniform: [lo, hi] } => {
            format!("uniform {}..{} per {} rows, keyed by the row's group", n(lo), n(hi), n(every))
        }
        Generator::Text([lo, hi]) => format!("text of {}..{} letters and digits", n(lo), n(hi)),
        Generator::TextWith(w, [lo, hi]) => format!("text of {}..{} letters and digits holding '{w}'", n(lo), n(hi)),
        Generator::Choose(options) => {
            let parts: Vec<String> = options.iter().map(|(w, g)| format!("{} x {}", n(w), generator_text(g))).collect();
            format!("by weight: {}", parts.join(" | "))
        }
        Generator::Syllables(inner) => format!("syllables of {}", generator_text(inner)),
        Generator::Decimal([lo, hi]) => format!("decimal {lo}..{hi}"),
        Generator::Null => "NULL".into(),
        Generator::Nurand([a, x, y]) => format!("NURand({}, {}..{})", n(a), n(x), n(y)),
        Generator::Const(crate::workload::spec::Scalar::Text(t)) => format!("'{t}'"),
        Generator::Const(v) => scalar_text(v),
    }
}

/// A table's line: its rows (drawn and kept), and each column's generator.
fn table_line(t: &crate::workload::program::TableProgram, name: &str) -> String {
    let cols: Vec<String> = t
        .def
        .columns
        .iter()
        .zip(&t.generators)
        .map(|(c, g)| format!("{} {} <- {}", c.name, c.ty.text(), generator_text(g)))
        .collect();
    let each = if t.set.is_some() { " each" } else { "" };
    let kept = match &t.keep {
        Some(k) => {
            let column = &t.def.columns[k.column].name;
            format!(" of {} drawn, kept where {column} <= {}", k.drawn, generator_text(&k.at_most))
        }
        None => String::new(),
    };
    format!("  table {name} ({} rows{each}{kept}): {}\n", t.rows, cols.join(", "))
}

fn describe(p: &Program) -> String {
    let mut s = format!("{} on {}: {}\n", p.name, p.dialect.name(), p.description);
    if !p.params.is_empty() {
        let params: Vec<String> = p.params.iter().map(|(k, v)| format!("{k}={}", scalar_text(v))).collect();
        s.push_str(&format!("  params: {}\n", params.join(", ")));
    }
    for t in &p.tables {
        // A table set is shown once, by its first table.
        let name = match (&t.set, p.tables.iter().find(|x| x.set.is_some() && x.set == t.set)) {
            (Some(_), Some(first)) if first.name() != t.name() => continue,
            (Some(set), _) => format!("{} .. {set}{}", t.name(), p.set_count(set).unwrap_or(1)),
            (None, _) => t.name().to_string(),
        };
        s.push_str(&table_line(t, &name));
    }
    let total: u32 = p.transactions.iter().map(|t| t.weight).sum();
    for t in &p.transactions {
        let share = t.weight as f64 / total.max(1) as f64 * 100.0;
        let framing = if t.begin { "BEGIN ... COMMIT" } else { "autocommit" };
        let mut pauses = String::new();
        for (what, pause) in [("keying", t.keying), ("think", t.think)] {
            if pause.mean_ms() > 0 {
                pauses += &format!(", {what} {}", pause.describe());
            }
        }
        let deferred = if t.deferred { ", deferred: queued, executed by the deferred worker" } else { "" };
        s.push_str(&format!("  transaction {} ({share:.1}% of the mix, {framing}{pauses}{deferred}):\n", t.name));
        let drawn: Vec<String> =
            t.params.iter().map(|(slot, g)| format!("{} <- {}", p.slots[*slot], generator_text(g))).collect();
        if !drawn.is_empty() {
            s.push_str(&format!("    draws: {}\n", drawn.join(", ")));
        }
        for (i, st) in t.statements.iter().enumerate() {
            // A repeated step is announced at its first statement.
            let repeated = t.steps.iter().find(|step| step.first == i && step.repeat != Times::Fixed(1));
            if let Some(step) = repeated {
                let times = match step.repeat {
                    Times::Fixed(n) => format!("{n} times"),
                    Times::Drawn(slot) => {
                        let drawn = step.once.iter().find(|(s, _)| *s == slot).map(|(_, g)| generator_text(g));
                        match drawn {
                            Some(g) => format!("{g} times, drawn per transaction"),
                            None => format!(":{} times", p.slots[slot]),
                        }
                    }
                };
                let names: Vec<&str> = t.statements[i..i + step.count].iter().map(|s| s.name.as_str()).collect();
                s.push_str(&format!("    repeated {times}: {}\n", names.join(", ")));
            }
            let args: Vec<&str> = st.args.iter().map(|&i| p.slots[i].as_str()).collect();
            s.push_str(&format!("    {} [{}] {}", st.name, st.class.name(), st.sql));
            if let Some((slot, texts)) = &st.per_table {
                s.push_str(&format!("   -- on table 1..{} of its set by {}", texts.len(), p.slots[*slot]));
            }
            if !args.is_empty() {
                s.push_str(&format!("   -- ? = {}", args.join(", ")));
            }
            if st.skip_if_no_row {
                s.push_str("   -- no row: skips the rest of this repetition");
            }
            s.push('\n');
        }
    }
    for c in &p.checks {
        let counts = if c.counts_offending { " (counts offending rows)" } else { "" };
        s.push_str(&format!("  check {}{counts}: {}\n", c.name, c.sql));
    }
    for c in p.prepare_checks.iter().filter(|c| !p.checks.contains(c)) {
        s.push_str(&format!("  check after prepare only {}: {}\n", c.name, c.sql));
    }
    s
}

/// `n` draws of every generator: table columns as rows, then each transaction's values.
fn samples(p: &Program, n: u32) -> Result<String, DrawError> {
    let run = DistributionSpec::default();
    let mut rng = Rng::seeded(1);
    let show = |d: Drawn| match d {
        Drawn::Null => "NULL".into(),
        Drawn::Int(i) => i.to_string(),
        Drawn::Float(f) => f.to_string(),
        Drawn::Text(t) => format!("'{t}'"),
    };
    let mut s = String::from("samples (seed 1, uniform ids):\n");
    for t in &p.tables {
        let mut draws: Vec<Draw> =
            t.generators.iter().map(|g| Draw::for_column(g, p, &run, 1)).collect::<Result<_, _>>()?;
        for row in 1..=n as u64 {
            let at = Context { client: 0, row, repetition: 1 };
            let values: Vec<String> = draws.iter_mut().map(|d| show(d.draw(&mut rng, at))).collect();
            s.push_str(&format!("  {} row {row}: ({})\n", t.name(), values.join(", ")));
        }
    }
    let unique = std::sync::Arc::new(crate::random::UniqueSequence::new(1));
    let scope = |list: &[(usize, Generator)]| ScopeDraws::new(list, p, &run, Some(&unique), 1);
    let mut client = scope(&p.client)?;
    let mut slots = vec![Value::Null; p.slots.len()];
    for t in &p.transactions {
        let mut scopes = vec![scope(&t.params)?];
        for st in &t.statements {
            scopes.push(scope(&st.params)?);
        }
        for i in 0..n {
            let at = Context { client: 0, row: 0, repetition: 1 };
            let mut values: Vec<String> = Vec::new();
            for sc in std::iter::once(&mut client).chain(scopes.iter_mut()) {
                sc.draw(&mut rng, at, &mut slots);
                for slot in sc.slots() {
                    let shown = match &slots[slot] {
                        Value::Int(i) => i.to_string(),
                        Value::Float(f) => f.to_string(),
                        Value::Text(t) => format!("'{t}'"),
                        Value::Bytes(b) => format!("{b:?}"),
                        Value::Null => "null".into(),
                    };
                    values.push(format!("{}={shown}", p.slots[slot]));
                }
            }
            s.push_str(&format!("  {} #{}: {}\n", t.name, i + 1, values.join(", ")));
        }
    }
    Ok(s)
}
