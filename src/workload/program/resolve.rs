//! What compiling resolves: `{param}`s in numbers and SQL, generators with their bounds,
//! the steps `repeat` makes, and the names known at a point (for messages).

use super::compile::Errors;
use super::*;
use crate::workload::spec::{Number, Repeat, StatementSpec};
use std::ops::Range;
use toml::Spanned;

/// The steps of a transaction: each statement once, unless `repeat` runs it (and the
/// `group - 1` after it) several times.
pub(super) fn steps_of(
    e: &mut Errors,
    params: &BTreeMap<String, Scalar>,
    tx: &str,
    statements: &[StatementSpec],
) -> Vec<StepProgram> {
    let mut steps = Vec::new();
    let mut i = 0;
    while i < statements.len() {
        let st = &statements[i];
        let Some(r) = &st.repeat else {
            if let Some(g) = &st.group {
                e.at(g, format!("statement {tx}.{}: group needs repeat", st.name.get_ref()));
            }
            steps.push(StepProgram { first: i, count: 1, repeat: Times::Fixed(1), once: Vec::new() });
            i += 1;
            continue;
        };
        // A drawn count gets its slot and generator where the step's `once` values are made.
        let repeat = match r.get_ref() {
            Repeat::Times(n) => number(e, params, r.span(), n, "repeat"),
            Repeat::Drawn(_) => 1,
        };
        if !(0..=MAX_REPEAT).contains(&repeat) {
            e.at(r, format!("statement {tx}.{}: repeat {repeat} must be from 0 to {MAX_REPEAT}", st.name.get_ref()));
        }
        let count = st.group.as_ref().map(|g| *g.get_ref()).unwrap_or(1);
        if count < 1 || i + count as usize > statements.len() {
            let at = st.group.as_ref().map(|g| g.span()).unwrap_or(r.span());
            e.at(
                &Spanned::new(at, ()),
                format!(
                    "statement {tx}.{}: group {count} must count this statement and those after it",
                    st.name.get_ref()
                ),
            );
            i += 1;
            continue;
        }
        for inner in &statements[i + 1..i + count as usize] {
            if let Some(r) = &inner.repeat {
                e.at(
                    r,
                    format!(
                        "statement {tx}.{} is inside the group of {}: it repeats with it",
                        inner.name.get_ref(),
                        st.name.get_ref()
                    ),
                );
            }
        }
        steps.push(StepProgram {
            first: i,
            count: count as usize,
            repeat: Times::Fixed(repeat.clamp(0, MAX_REPEAT) as u32),
            once: Vec::new(),
        });
        i += count as usize;
    }
    steps
}

pub(super) fn list(known: &[String], own: &BTreeMap<String, Spanned<Generator>>) -> String {
    let mut all: Vec<&str> = known.iter().map(String::as_str).chain(own.keys().map(String::as_str)).collect();
    all.sort();
    all.dedup();
    if all.is_empty() {
        "none".into()
    } else {
        all.join(", ")
    }
}

/// An integer, literal or `"{param}"` (errors reported at `span`).
pub(super) fn number(
    e: &mut Errors,
    params: &BTreeMap<String, Scalar>,
    span: Range<usize>,
    n: &Number,
    what: &str,
) -> i64 {
    let at = Spanned::new(span, ());
    match n {
        Number::Int(i) => *i,
        Number::Param(p) => {
            let name = p.trim().trim_start_matches('{').trim_end_matches('}');
            match params.get(name) {
                Some(Scalar::Int(i)) => *i,
                Some(other) => {
                    e.at(&at, format!("{what}: parameter {name} is {}, not an integer", scalar_text(other)));
                    0
                }
                None => {
                    e.at(&at, format!("{what}: {p:?} is neither an integer nor a {{parameter}} of [params]"));
                    0
                }
            }
        }
    }
}

/// Checks a generator and returns it with its bounds resolved to integers.
pub(super) fn generator(
    e: &mut Errors,
    params: &BTreeMap<String, Scalar>,
    tables: &[(String, i64)],
    sets: &[(String, u32)],
    g: &Spanned<Generator>,
    column: bool,
) -> Generator {
    let mut resolved = g.get_ref().clone();
    if integer_arguments(e, params, g, &mut resolved) {
        return resolved;
    }
    match &mut resolved {
        Generator::Ids(t) => match tables.iter().find(|(name, _)| name == t) {
            None => {
                let names: Vec<&str> = tables.iter().map(|(n, _)| n.as_str()).collect();
                e.at(g, format!("ids of table {t:?}, which [[tables]] does not define (defined: {})", names.join(", ")))
            }
            Some((_, rows)) if *rows < 1 || *rows > u32::MAX as i64 => {
                e.at(g, format!("ids of table {t}, which has {rows} rows: there is no id to draw"))
            }
            Some(_) => {}
        },
        Generator::Table(t) => match sets.iter().find(|(name, _)| name == t) {
            // One table: nothing to draw.
            Some((_, 1)) => resolved = Generator::Const(Scalar::Int(1)),
            Some((_, n)) => resolved = Generator::Uniform([Number::Int(1), Number::Int(*n as i64)]),
            None => e.at(g, format!("table numbers of {t:?}, which is not a table set (a [[tables]] with count)")),
        },
        Generator::Pattern(p) if p.is_empty() => e.at(g, "an empty pattern"),
        // A whole "{param}" constant takes the parameter's value (and type).
        Generator::Const(c @ Scalar::Text(_)) => {
            if let Scalar::Text(t) = &*c {
                if t.len() > 2 && t.starts_with('{') && t.ends_with('}') && !t.starts_with("{{") {
                    match params.get(&t[1..t.len() - 1]) {
                        Some(v) => *c = v.clone(),
                        None => e.at(g, format!("{t} is not a parameter of [params] (write {{{{ for a literal brace)")),
                    }
                }
            }
        }
        Generator::Row if !column => e.at(g, "\"row\" numbers the rows of a table: it is for columns, not parameters"),
        Generator::ByRow(_) if !column => {
            e.at(g, "by_row numbers the rows of a table: it is for columns, not parameters")
        }
        Generator::Repetition if column => {
            e.at(g, "\"repetition\" numbers a repeated statement's runs: it is for a statement's params, not columns")
        }
        Generator::Unique if column => {
            e.at(g, "\"unique\" ids are drawn by clients: it is for parameters, not columns")
        }
        _ => {}
    }
    resolved
}

/// A generator with integer arguments (ranges, nurand, by_client, offset): each
/// `"{param}"` resolved and the values checked. False for any other generator.
fn integer_arguments(
    e: &mut Errors,
    params: &BTreeMap<String, Scalar>,
    g: &Spanned<Generator>,
    resolved: &mut Generator,
) -> bool {
    let mut int = |x: &Number, what: &str| number(e, params, g.span(), x, what);
    let problem = match resolved {
        Generator::Uniform(bounds)
        | Generator::Gaussian(bounds)
        | Generator::Special(bounds)
        | Generator::Pareto(bounds)
        | Generator::Zipfian(bounds) => {
            let [lo, hi] = [int(&bounds[0], "range"), int(&bounds[1], "range")];
            *bounds = [Number::Int(lo), Number::Int(hi)];
            if lo > hi {
                Some(format!("range [{lo}, {hi}] is empty: the first bound must not exceed the second"))
            } else {
                ((hi as i128 - lo as i128) >= 1 << 32).then(|| {
                    format!("range [{lo}, {hi}] spans more than 2^32 values (the distributions draw 32-bit offsets)")
                })
            }
        }
        Generator::ByClient(ce) | Generator::ByRow(ce) => {
            let what = if matches!(g.get_ref(), Generator::ByRow(_)) { "by_row" } else { "by_client" };
            let [count, every] = [int(&ce[0], what), int(&ce[1], what)];
            *ce = [Number::Int(count), Number::Int(every)];
            (count < 1 || every < 1)
                .then(|| format!("{what} [{count}, {every}]: the count and the step must be at least 1"))
        }
        Generator::Nurand(abc) => {
            let [a, x, y] = [int(&abc[0], "nurand"), int(&abc[1], "nurand"), int(&abc[2], "nurand")];
            *abc = [Number::Int(a), Number::Int(x), Number::Int(y)];
            if !(1..=u32::MAX as i64 / 2).contains(&a) {
                Some(format!("nurand A {a} must be from 1 to 2147483647 (TPC-C uses 255, 1023 and 8191)"))
            } else {
                (x > y || (y as i128 - x as i128) >= 1 << 32)
                    .then(|| format!("nurand range [{x}, {y}] is empty or spans more than 2^32 values"))
            }
        }
        Generator::Offset(_, n) => {
            *n = Number::Int(int(n, "offset"));
            None
        }
        _ => return false,
    };
    if let Some(problem) = problem {
        e.at(g, problem);
    }
    true
}

/// `{param}` replaced by its value; `{{` and `}}` are literal braces.
pub(super) fn substitute(e: &mut Errors, params: &BTreeMap<String, Scalar>, sql: &Spanned<String>) -> String {
    let s = sql.get_ref();
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        match (tail.starts_with('{'), tail.find('}')) {
            (true, Some(end)) if tail[1..end].starts_with(':') => {
                // A table set's table number, resolved per statement (see table_marker).
                out.push_str(&tail[..=end]);
                rest = &tail[end + 1..];
            }
            (true, Some(end)) => {
                let name = &tail[1..end];
                match params.get(name) {
                    Some(v) => out.push_str(&scalar_text(v)),
                    None => {
                        e.at(sql, format!("{{{name}}} is not a parameter of [params] (write {{{{ for a literal brace)"))
                    }
                }
                rest = &tail[end + 1..];
            }
            _ => {
                e.at(sql, "an unmatched brace (write {{ or }} for a literal one)");
                out.push_str(&tail[..1]);
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}
