//! What compiling resolves: `{param}`s in numbers and SQL, generators with their bounds,
//! the steps `repeat` makes, and the names known at a point (for messages).

use super::errors::Errors;
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
            Repeat::Times(Number::Param(p)) if p.starts_with(':') => 1,
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

/// An integer, literal or `"{param}"`, or a product of them (`"{warehouses} * 3000"`: a
/// table's rows per warehouse); errors reported at `span`.
pub(super) fn number(
    e: &mut Errors,
    params: &BTreeMap<String, Scalar>,
    span: Range<usize>,
    n: &Number,
    what: &str,
) -> i64 {
    let at = Spanned::new(span, ());
    let p = match n {
        Number::Int(i) => return *i,
        Number::Param(p) => p,
    };
    let mut product: i64 = 1;
    for factor in p.split('*').map(str::trim) {
        let value = match factor.parse::<i64>() {
            Ok(i) => Some(i),
            Err(_) => factor_value(e, &at, params, p, factor, what),
        };
        let Some(value) = value else { return 0 };
        match product.checked_mul(value) {
            Some(v) => product = v,
            None => {
                e.at(&at, format!("{what}: {p:?} overflows a 64-bit integer"));
                return 0;
            }
        }
    }
    product
}

/// One factor of a number: `{name}` of an integer parameter.
fn factor_value(
    e: &mut Errors,
    at: &Spanned<()>,
    params: &BTreeMap<String, Scalar>,
    whole: &str,
    factor: &str,
    what: &str,
) -> Option<i64> {
    let name = factor.strip_prefix('{').and_then(|f| f.strip_suffix('}'));
    match name.and_then(|name| params.get(name).map(|v| (name, v))) {
        Some((_, Scalar::Int(i))) => Some(*i),
        Some((name, other)) => {
            e.at(at, format!("{what}: parameter {name} is {}, not an integer", scalar_text(other)));
            None
        }
        None => {
            e.at(
                at,
                format!("{what}: {whole:?} is neither an integer nor a {{parameter}} of [params] (or a product of them: \"{{a}} * 10\")"),
            );
            None
        }
    }
}

/// What a generator's names refer to: parameters, tables with their rows, table sets.
#[derive(Clone, Copy)]
pub(super) struct Names<'a> {
    pub params: &'a BTreeMap<String, Scalar>,
    pub tables: &'a [(String, i64)],
    pub sets: &'a [(String, u32)],
}

/// Checks a generator and returns it with its bounds resolved to integers.
pub(super) fn generator(e: &mut Errors, names: &Names, g: &Spanned<Generator>, column: bool) -> Generator {
    let Names { params, tables, sets } = *names;
    let mut resolved = g.get_ref().clone();
    placement(e, g, column);
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
        Generator::Decimal(bounds) => {
            if let Err(problem) = crate::workload::generate::decimal_range(&bounds[0], &bounds[1]) {
                e.at(g, problem)
            }
        }
        _ => nested(e, names, g, column, &mut resolved),
    }
    resolved
}

/// A generator that belongs to columns only, or to parameters only, used in the other place.
fn placement(e: &mut Errors, g: &Spanned<Generator>, column: bool) {
    match g.get_ref() {
        Generator::Row if !column => e.at(g, "\"row\" numbers the rows of a table: it is for columns, not parameters"),
        Generator::ByRow(_) | Generator::Shuffled(_) if !column => {
            e.at(g, "by_row and shuffled number the rows of a table: they are for columns, not parameters")
        }
        Generator::Keyed { .. } if !column => {
            e.at(g, "keyed draws one value per group of rows loaded: it is for columns, not parameters")
        }
        Generator::FirstRows { .. } if !column => {
            e.at(g, "first_rows picks by the row loaded: it is for columns, not parameters")
        }
        Generator::Repetition if column => {
            e.at(g, "\"repetition\" numbers a repeated statement's runs: it is for a statement's params, not columns")
        }
        Generator::Unique if column => {
            e.at(g, "\"unique\" ids are drawn by clients: it is for parameters, not columns")
        }
        _ => {}
    }
}

/// Generators made of generators (first_rows, choose, syllables), each part resolved.
fn nested(e: &mut Errors, names: &Names, g: &Spanned<Generator>, column: bool, resolved: &mut Generator) {
    let params = names.params;
    let part = |e: &mut Errors, inner: &mut Generator| {
        *inner = generator(e, names, &Spanned::new(g.span(), inner.clone()), column);
    };
    match resolved {
        Generator::FirstRows { first, every, then, rest } => {
            let (f, ev) =
                (number(e, params, g.span(), first, "first_rows"), number(e, params, g.span(), every, "first_rows"));
            if ev < 1 || !(0..=ev).contains(&f) {
                e.at(
                    g,
                    format!(
                        "first_rows: first {f} of every {ev} rows: every must be at least 1, first from 0 to every"
                    ),
                );
            }
            (*first, *every) = (Number::Int(f), Number::Int(ev));
            part(e, then);
            part(e, rest);
        }
        Generator::Choose(options) => {
            if options.is_empty() {
                e.at(g, "choose needs at least one [weight, generator]");
            }
            for (weight, inner) in options.iter_mut() {
                let w = number(e, params, g.span(), weight, "choose");
                if !(1..=1_000_000).contains(&w) {
                    e.at(g, format!("choose: weight {w} must be from 1 to 1000000"));
                }
                *weight = Number::Int(w);
                part(e, inner);
            }
        }
        Generator::Syllables(inner) => part(e, inner),
        _ => {}
    }
}

fn nurand_problem(a: i64, x: i64, y: i64) -> Option<String> {
    if !(1..=u32::MAX as i64 / 2).contains(&a) {
        Some(format!("nurand A {a} must be from 1 to 2147483647 (TPC-C uses 255, 1023 and 8191)"))
    } else {
        (x > y || (y as i128 - x as i128) >= 1 << 32)
            .then(|| format!("nurand range [{x}, {y}] is empty or spans more than 2^32 values"))
    }
}

fn keyed_problem(every: i64, lo: i64, hi: i64) -> Option<String> {
    (every < 1 || lo > hi || (hi as i128 - lo as i128) >= 1 << 32).then(|| {
        format!("keyed: every {every} must be at least 1, and uniform [{lo}, {hi}] a range of at most 2^32 values")
    })
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
        Generator::ByClient(ce) | Generator::Shuffled(ce) => {
            let what = if matches!(g.get_ref(), Generator::Shuffled(_)) { "shuffled" } else { "by_client" };
            let [count, every] = [int(&ce[0], what), int(&ce[1], what)];
            *ce = [Number::Int(count), Number::Int(every)];
            (count < 1 || every < 1 || count > u32::MAX as i64)
                .then(|| format!("{what} [{count}, {every}]: the count and the step must be at least 1"))
        }
        Generator::ByRow(parts) if !(2..=3).contains(&parts.len()) => {
            Some("by_row takes [count, every] or [count, every, first]".to_string())
        }
        Generator::ByRow(parts) => {
            let values: Vec<i64> = parts.iter().map(|x| int(x, "by_row")).collect();
            *parts = values.iter().map(|&v| Number::Int(v)).collect();
            (values[0] < 1 || values[1] < 1)
                .then(|| format!("by_row [{}, {}]: the count and the step must be at least 1", values[0], values[1]))
        }
        Generator::Keyed { every, uniform } => {
            let [ev, lo, hi] = [int(every, "keyed"), int(&uniform[0], "keyed"), int(&uniform[1], "keyed")];
            (*every, *uniform) = (Number::Int(ev), [Number::Int(lo), Number::Int(hi)]);
            keyed_problem(ev, lo, hi)
        }
        Generator::Text(bounds) | Generator::TextWith(_, bounds) => {
            let [lo, hi] = [int(&bounds[0], "text"), int(&bounds[1], "text")];
            *bounds = [Number::Int(lo), Number::Int(hi)];
            let word = match g.get_ref() {
                Generator::TextWith(word, _) => word.chars().count() as i64,
                _ => 0,
            };
            (lo < word.max(0) || lo > hi || hi > 1_000_000).then(|| {
                format!(
                    "text length [{lo}, {hi}]: from {word} to 1000000 characters, the first no more than the second"
                )
            })
        }
        Generator::Nurand(abc) => {
            let [a, x, y] = [int(&abc[0], "nurand"), int(&abc[1], "nurand"), int(&abc[2], "nurand")];
            *abc = [Number::Int(a), Number::Int(x), Number::Int(y)];
            nurand_problem(a, x, y)
        }
        Generator::Offset(_, n) => {
            *n = Number::Int(int(n, "offset"));
            None
        }
        Generator::OtherThan(_, lo, hi) => {
            let (l, h) = (int(lo, "other_than"), int(hi, "other_than"));
            (*lo, *hi) = (Number::Int(l), Number::Int(h));
            (l > h || (h as i128 - l as i128) >= 1 << 32)
                .then(|| format!("other_than range [{l}, {h}] is empty or spans more than 2^32 values"))
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
