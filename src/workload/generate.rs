//! Generators made ready to draw: bounds resolved, distributions precomputed, text built in
//! a buffer the generator owns. What a client draws for a parameter and what prepare writes
//! for a column; drawing allocates nothing.

use super::program::Program;
use super::spec::{Generator, Number, Scalar};
use crate::random::{Distribution, DistributionKind, DistributionSpec, Rng, UniqueSequence};
use std::sync::Arc;

/// A drawn value; text borrows the generator's buffer until the next draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Drawn<'a> {
    Null,
    Int(i64),
    Float(f64),
    Text(&'a str),
}

/// Where a draw happens: the client's number, while loading the row's number, and in a
/// repeated statement its repetition's number.
#[derive(Clone, Copy, Debug, Default)]
pub struct Context {
    pub client: u64,
    pub row: u64,
    pub repetition: u64,
}

enum Kind {
    /// lo + a draw in [0, span] by a distribution.
    Int {
        lo: i64,
        span: u32,
        dist: Distribution,
    },
    /// The pattern's pieces, and its bytes when it is ASCII (filled byte by byte).
    Pattern(Vec<Piece>, Option<Vec<u8>>),
    /// NURand: `((random(0, a) | random(x, x + span)) + c) % (span + 1) + x`.
    NuRand {
        a: u32,
        x: i64,
        span: u32,
        c: u32,
    },
    Sequence(i64),
    Repetition,
    Now,
    ClientId,
    ByClient {
        count: u64,
        every: u64,
    },
    ByRow {
        count: u64,
        every: u64,
        first: i64,
    },
    Row,
    Const(Scalar),
    Unique(Arc<UniqueSequence>),
    Null,
    /// by_row's values in a shuffled order per run of `count` values: `(a * i + b) % count`
    /// with `a` coprime to `count`, both fixed by the seed and the run's number.
    Shuffled {
        count: u64,
        every: u64,
        seed: u64,
        run: Option<(u64, u64, u64)>,
    },
    FirstRows {
        first: u64,
        every: u64,
        then: Box<Draw>,
        rest: Box<Draw>,
    },
    Text {
        lo: u32,
        span: u32,
        word: String,
    },
    /// Weights summed up to each option, and the options.
    Choose(Vec<u64>, Vec<Draw>),
    Syllables(Box<Draw>),
    Decimal {
        lo: i64,
        span: u32,
        places: u32,
    },
}

/// A decimal range from its bounds' text: (lowest in units of the last place, span, places).
pub fn decimal_range(lo: &str, hi: &str) -> Result<(i64, u32, u32), String> {
    let places = |t: &str| t.split_once('.').map(|(_, f)| f.len() as u32).unwrap_or(0);
    let p = places(lo).max(places(hi));
    let scaled = |t: &str| -> Option<i64> {
        let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
        let negative = whole.starts_with('-');
        let digits = format!("{}{frac:0<width$}", whole.trim_start_matches('-'), width = p as usize);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 18 {
            return None;
        }
        let v: i64 = digits.parse().ok()?;
        Some(if negative { -v } else { v })
    };
    let bad = || format!("decimal [{lo:?}, {hi:?}]: write both bounds as decimals (\"0.0000\", \"100.00\"), the first no more than the second, at most 2^32 steps apart");
    let (l, h) = (scaled(lo).ok_or_else(bad)?, scaled(hi).ok_or_else(bad)?);
    let span = h.checked_sub(l).filter(|s| (0..u32::MAX as i64).contains(s)).ok_or_else(bad)?;
    Ok((l, span as u32, p))
}

/// `v` in units of the `places`-th decimal place, as decimal text.
fn write_decimal(v: i64, places: u32, out: &mut String) {
    use std::fmt::Write;
    let scale = 10i64.pow(places);
    let sign = if v < 0 { "-" } else { "" };
    let (whole, frac) = (v.unsigned_abs() / scale as u64, v.unsigned_abs() % scale as u64);
    let _ = match places {
        0 => write!(out, "{sign}{whole}"),
        p => write!(out, "{sign}{whole}.{frac:0width$}", width = p as usize),
    };
}

/// TPC-C's syllables (clause 4.3.2.3).
const SYLLABLES: [&str; 10] = ["BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"];

const ALNUM: &[u8; 62] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// The permutation of one run of `count` values: `(a, b)` with `a` coprime to `count`.
fn shuffle_of(seed: u64, run: u64, count: u64) -> (u64, u64) {
    let mut rng = Rng::seeded(seed ^ run.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5348_5546);
    let gcd = |mut x: u64, mut y: u64| {
        while y != 0 {
            (x, y) = (y, x % y);
        }
        x
    };
    let top = (count - 1).min(u32::MAX as u64) as u32;
    let mut a = rng.uniform(0, top) as u64 + 1;
    while gcd(a, count) != 1 {
        a = a % count + 1;
    }
    (a, rng.uniform(0, top) as u64)
}

/// NURand's C for `a` under `seed`: in 0..=a, the same for every client of a run.
fn nurand_c(seed: u64, a: u32) -> u32 {
    let mut rng = Rng::seeded(seed ^ (a as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x4E55_5241_4E44);
    rng.uniform(0, a)
}

/// A pattern's parts: `#` a digit, `@` a lowercase letter, anything else itself.
#[derive(Clone, Debug)]
enum Piece {
    Digit,
    Letter,
    Literal(char),
}

fn pieces(pattern: &str) -> Vec<Piece> {
    pattern
        .chars()
        .map(|c| match c {
            '#' => Piece::Digit,
            '@' => Piece::Letter,
            other => Piece::Literal(other),
        })
        .collect()
}

/// Appends a fresh draw of `pattern` to `out`. ASCII patterns (sysbench's c and pad) are
/// filled byte by byte, then checked as UTF-8 once.
#[inline]
fn fill(pattern: &[Piece], ascii: Option<&[u8]>, rng: &mut Rng, out: &mut String) {
    if let Some(ascii) = ascii {
        let mut bytes = std::mem::take(out).into_bytes();
        bytes.extend(ascii.iter().map(|&b| match b {
            b'#' => b'0' + rng.uniform(0, 9) as u8,
            b'@' => b'a' + rng.uniform(0, 25) as u8,
            other => other,
        }));
        *out = String::from_utf8(bytes).unwrap_or_default();
        return;
    }
    for piece in pattern {
        out.push(match piece {
            Piece::Digit => (b'0' + rng.uniform(0, 9) as u8) as char,
            Piece::Letter => (b'a' + rng.uniform(0, 25) as u8) as char,
            Piece::Literal(c) => *c,
        });
    }
}

/// Where a drawn value goes: the runner's value slots (`db::Value`).
pub trait Slot {
    fn set_null(&mut self);
    fn set_int(&mut self, v: i64);
    fn set_float(&mut self, v: f64);
    /// The slot as an empty text buffer, its allocation reused.
    fn text_buffer(&mut self) -> &mut String;
    /// Its value as an integer (0 when it holds none).
    fn int(&self) -> i64;
}

pub struct Draw {
    kind: Kind,
    buf: String,
}

impl Draw {
    /// `g` as compiled into `program` (bounds resolved); `run`: the run's `--rand-*`
    /// settings (used by `ids` and for the distributions' shapes).
    /// `unique`: the run's shared sequence, for `unique` generators; `seed`: the run's (or
    /// prepare's) seed, which fixes `nurand`'s C constants.
    pub fn new(
        g: &Generator,
        program: &Program,
        run: &DistributionSpec,
        unique: Option<&Arc<UniqueSequence>>,
        seed: u64,
    ) -> Result<Draw, String> {
        let bound = |n: &Number| match n {
            Number::Int(i) => Ok(*i),
            Number::Param(p) => Err(format!("{p:?} was not resolved: draw only from a compiled program")),
        };
        let range = |kind: DistributionKind, lo: &Number, hi: &Number| -> Result<Kind, String> {
            let (lo, hi) = (bound(lo)?, bound(hi)?);
            let span = hi.checked_sub(lo).filter(|s| (0..=u32::MAX as i64 - 1).contains(s));
            let span = span.ok_or_else(|| format!("range [{lo}, {hi}] is empty or wider than 2^32 values"))?;
            Ok(Kind::Int { lo, span: span as u32, dist: DistributionSpec { kind, ..run.clone() }.sampler() })
        };
        let kind = match g {
            Generator::Uniform([a, b]) => range(DistributionKind::Uniform, a, b)?,
            Generator::Gaussian([a, b]) => range(DistributionKind::Gaussian, a, b)?,
            Generator::Special([a, b]) => range(DistributionKind::Special, a, b)?,
            Generator::Pareto([a, b]) => range(DistributionKind::Pareto, a, b)?,
            Generator::Zipfian([a, b]) => range(DistributionKind::Zipfian, a, b)?,
            Generator::Ids(table) => {
                let rows = program.table(table).map(|t| t.rows).unwrap_or(0);
                if rows == 0 || rows > u32::MAX as u64 {
                    return Err(format!("ids of table {table}: it has {rows} rows"));
                }
                range(run.kind, &Number::Int(1), &Number::Int(rows as i64))?
            }
            // An offset reads another slot: the runner resolves it.
            Generator::Offset(from, _) => return Err(format!("an offset of {from} is resolved by the runner")),
            Generator::Unique => match unique {
                Some(u) => Kind::Unique(u.clone()),
                None => return Err("\"unique\" ids are drawn by clients only".into()),
            },
            Generator::Table(set) => {
                return Err(format!("table numbers of {set} were not resolved: draw only from a compiled program"))
            }
            Generator::Pattern(p) => Kind::Pattern(pieces(p), p.is_ascii().then(|| p.as_bytes().to_vec())),
            Generator::Sequence(start) => Kind::Sequence(*start),
            Generator::ClientId => Kind::ClientId,
            Generator::Now => Kind::Now,
            Generator::Repetition => Kind::Repetition,
            Generator::ByClient([count, every]) | Generator::Shuffled([count, every]) => {
                let (count, every) = (bound(count)?, bound(every)?);
                if count < 1 || every < 1 {
                    return Err(format!("by_client or shuffled [{count}, {every}]: both must be at least 1"));
                }
                let (count, every) = (count as u64, every as u64);
                match g {
                    Generator::Shuffled(_) => Kind::Shuffled { count, every, seed, run: None },
                    _ => Kind::ByClient { count, every },
                }
            }
            Generator::ByRow(parts) => {
                let values = parts.iter().map(bound).collect::<Result<Vec<i64>, String>>()?;
                match values[..] {
                    [count, every, ref first @ ..] if count >= 1 && every >= 1 && first.len() <= 1 => Kind::ByRow {
                        count: count as u64,
                        every: every as u64,
                        first: first.first().copied().unwrap_or(1),
                    },
                    _ => return Err(format!("by_row {values:?}: [count, every] or [count, every, first], both at least 1")),
                }
            }
            Generator::FirstRows { first, every, then, rest } => Kind::FirstRows {
                first: bound(first)?.max(0) as u64,
                every: bound(every)?.max(1) as u64,
                then: Box::new(Draw::new(then, program, run, unique, seed)?),
                rest: Box::new(Draw::new(rest, program, run, unique, seed)?),
            },
            Generator::Text([lo, hi]) | Generator::TextWith(_, [lo, hi]) => {
                let (lo, hi) = (bound(lo)?, bound(hi)?);
                let word = match g {
                    Generator::TextWith(word, _) => word.clone(),
                    _ => String::new(),
                };
                if lo < word.chars().count() as i64 || lo > hi || hi > u32::MAX as i64 {
                    return Err(format!("text length [{lo}, {hi}] cannot hold {word:?}"));
                }
                Kind::Text { lo: lo as u32, span: (hi - lo) as u32, word }
            }
            Generator::Choose(options) => {
                let mut sums = Vec::new();
                let mut draws = Vec::new();
                for (weight, inner) in options {
                    let w = bound(weight)?.max(1) as u64;
                    sums.push(sums.last().copied().unwrap_or(0) + w);
                    draws.push(Draw::new(inner, program, run, unique, seed)?);
                }
                if draws.is_empty() {
                    return Err("choose has no options".into());
                }
                Kind::Choose(sums, draws)
            }
            Generator::Syllables(inner) => Kind::Syllables(Box::new(Draw::new(inner, program, run, unique, seed)?)),
            Generator::Decimal([lo, hi]) => {
                let (lo, span, places) = decimal_range(lo, hi)?;
                Kind::Decimal { lo, span, places }
            }
            Generator::Null => Kind::Null,
            Generator::Row => Kind::Row,
            Generator::Const(v) => Kind::Const(v.clone()),
            Generator::Nurand([a, x, y]) => {
                let (a, x, y) = (bound(a)?, bound(x)?, bound(y)?);
                let span = y.checked_sub(x).filter(|s| (0..=u32::MAX as i64 - 1).contains(s));
                let span = span.ok_or_else(|| format!("nurand range [{x}, {y}] is empty or too wide"))?;
                let a = u32::try_from(a).map_err(|_| format!("nurand A {a} is out of range"))?;
                Kind::NuRand { a, x, span: span as u32, c: nurand_c(seed, a) }
            }
        };
        Ok(Draw { kind, buf: String::new() })
    }

    #[inline]
    pub fn draw(&mut self, rng: &mut Rng, at: Context) -> Drawn<'_> {
        match &mut self.kind {
            Kind::Int { lo, span, dist } => Drawn::Int(*lo + dist.sample(rng, 0, *span) as i64),
            Kind::Pattern(p, ascii) => {
                self.buf.clear();
                fill(p, ascii.as_deref(), rng, &mut self.buf);
                Drawn::Text(&self.buf)
            }
            // While loading, the row's number counts (so any part of a table loads alike).
            Kind::Sequence(start) if at.row > 0 => Drawn::Int(start.saturating_add(at.row as i64 - 1)),
            Kind::Sequence(next) => {
                let v = *next;
                *next += 1;
                Drawn::Int(v)
            }
            Kind::Null => Drawn::Null,
            Kind::Shuffled { count, every, seed, run } => {
                let step = at.row.saturating_sub(1) / *every;
                let (number, i) = (step / *count, step % *count);
                let (a, b) = match *run {
                    Some((n, a, b)) if n == number => (a, b),
                    _ => {
                        let (a, b) = shuffle_of(*seed, number, *count);
                        *run = Some((number, a, b));
                        (a, b)
                    }
                };
                Drawn::Int(((a as u128 * i as u128 + b as u128) % *count as u128) as i64 + 1)
            }
            Kind::FirstRows { first, every, then, rest } => {
                if at.row.saturating_sub(1) % *every < *first {
                    then.draw(rng, at)
                } else {
                    rest.draw(rng, at)
                }
            }
            Kind::Text { lo, span, word } => {
                self.buf.clear();
                let len = *lo + rng.uniform(0, *span);
                let at_char = rng.uniform(0, len - word.chars().count() as u32) as usize;
                for i in 0..len as usize {
                    if i == at_char && !word.is_empty() {
                        self.buf.push_str(word);
                    }
                    if i >= at_char && i < at_char + word.chars().count() {
                        continue;
                    }
                    self.buf.push(ALNUM[rng.uniform(0, 61) as usize] as char);
                }
                Drawn::Text(&self.buf)
            }
            Kind::Choose(sums, draws) => {
                let total = sums.last().copied().unwrap_or(1);
                let pick = rng.uniform(1, total.min(u32::MAX as u64) as u32) as u64;
                let i = sums.partition_point(|&s| s < pick).min(draws.len() - 1);
                draws[i].draw(rng, at)
            }
            Kind::Syllables(inner) => {
                let n = match inner.draw(rng, at) {
                    Drawn::Int(i) => i.rem_euclid(1000) as usize,
                    _ => 0,
                };
                self.buf.clear();
                for digit in [n / 100, n / 10 % 10, n % 10] {
                    self.buf.push_str(SYLLABLES[digit]);
                }
                Drawn::Text(&self.buf)
            }
            Kind::Decimal { lo, span, places } => {
                self.buf.clear();
                write_decimal(*lo + rng.uniform(0, *span) as i64, *places, &mut self.buf);
                Drawn::Text(&self.buf)
            }
            Kind::ClientId => Drawn::Int(at.client as i64),
            Kind::Repetition => Drawn::Int(at.repetition as i64),
            Kind::Now => {
                self.buf.clear();
                crate::model::write_sql_timestamp(crate::model::now_micros(), &mut self.buf);
                Drawn::Text(&self.buf)
            }
            Kind::ByClient { count, every } => Drawn::Int((at.client / *every % *count) as i64 + 1),
            Kind::ByRow { count, every, first } => {
                Drawn::Int((at.row.saturating_sub(1) / *every % *count) as i64 + *first)
            }
            // sysbench: a unique uint32 shifted into INTEGER range.
            Kind::Unique(u) => Drawn::Int(u.next() as i64 - 2_147_483_648),
            Kind::Row => Drawn::Int(at.row as i64),
            Kind::NuRand { a, x, span, c } => {
                let mixed = (rng.uniform(0, *a) as u64 | (*x + rng.uniform(0, *span) as i64) as u64) + *c as u64;
                Drawn::Int((mixed % (*span as u64 + 1)) as i64 + *x)
            }
            Kind::Const(Scalar::Int(i)) => Drawn::Int(*i),
            Kind::Const(Scalar::Float(f)) => Drawn::Float(*f),
            Kind::Const(Scalar::Text(t)) => Drawn::Text(t),
        }
    }
}

impl Draw {
    /// Draws straight into `slot` (text into its own buffer: no copy).
    #[inline]
    pub fn draw_to<S: Slot>(&mut self, rng: &mut Rng, at: Context, slot: &mut S) {
        match &mut self.kind {
            Kind::Int { lo, span, dist } => slot.set_int(*lo + dist.sample(rng, 0, *span) as i64),
            Kind::Pattern(p, ascii) => fill(p, ascii.as_deref(), rng, slot.text_buffer()),
            Kind::Const(Scalar::Text(t)) => slot.text_buffer().push_str(t),
            Kind::Const(Scalar::Float(f)) => slot.set_float(*f),
            _ => match self.draw(rng, at) {
                Drawn::Null => slot.set_null(),
                Drawn::Int(i) => slot.set_int(i),
                Drawn::Float(f) => slot.set_float(f),
                Drawn::Text(t) => slot.text_buffer().push_str(t),
            },
        }
    }
}

/// One scope's generators (a transaction's or a statement's `params`, the client's values)
/// in drawing order: offsets last, each adding to the value its source drew in the same pass.
pub struct ScopeDraws {
    items: Vec<(usize, Source)>,
}

enum Source {
    Draw(Draw),
    /// The value of slot `from` (drawn earlier in the pass) plus `add`.
    Offset {
        from: usize,
        add: i64,
    },
}

impl ScopeDraws {
    /// `list`: (slot, generator) as compiled.
    pub fn new(
        list: &[(usize, Generator)],
        program: &Program,
        run: &DistributionSpec,
        unique: Option<&Arc<UniqueSequence>>,
        seed: u64,
    ) -> Result<ScopeDraws, String> {
        let mut items: Vec<(usize, Source)> = Vec::new();
        for (slot, g) in list.iter().filter(|(_, g)| !matches!(g, Generator::Offset(..))) {
            items.push((*slot, Source::Draw(Draw::new(g, program, run, unique, seed)?)));
        }
        for (slot, g) in list {
            if let Generator::Offset(name, add) = g {
                let from = list
                    .iter()
                    .map(|(s, _)| *s)
                    .find(|s| program.slots.get(*s) == Some(name))
                    .ok_or_else(|| format!("an offset of {name}, which is not drawn beside it"))?;
                let add = match add {
                    Number::Int(i) => *i,
                    Number::Param(p) => {
                        return Err(format!("{p:?} was not resolved: draw only from a compiled program"))
                    }
                };
                items.push((*slot, Source::Offset { from, add }));
            }
        }
        Ok(ScopeDraws { items })
    }

    /// Draws every value of the scope into its slot.
    #[inline]
    pub fn draw<S: Slot>(&mut self, rng: &mut Rng, at: Context, slots: &mut [S]) {
        for (slot, source) in self.items.iter_mut() {
            match source {
                Source::Draw(d) => d.draw_to(rng, at, &mut slots[*slot]),
                Source::Offset { from, add } => {
                    let v = slots[*from].int().saturating_add(*add);
                    slots[*slot].set_int(v);
                }
            }
        }
    }

    /// The slots this scope writes, in drawing order.
    pub fn slots(&self) -> impl Iterator<Item = usize> + '_ {
        self.items.iter().map(|(slot, _)| *slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Value;
    use crate::model::Dialect;

    fn program() -> Program {
        let text = r#"
[workload]
name = "g"
[params]
hi = 50
[client]
r = { uniform = [-5, "{hi}"] }
[[tables]]
name = "t"
rows = 20
columns = [{ name = "id", type = "integer", gen = "row" }]
[[transactions]]
name = "x"
  [[transactions.statements]]
  name = "s"
  sql = "SELECT 1"
"#;
        let spec = super::super::spec::parse("g.toml", text).unwrap();
        super::super::program::compile(&spec, "g.toml", text, Dialect::Sqlite, &[]).unwrap()
    }

    fn ints(g: Generator, n: usize) -> Vec<i64> {
        let p = program();
        let mut d = Draw::new(&g, &p, &DistributionSpec::default(), None, 1).unwrap();
        let mut rng = Rng::seeded(7);
        (0..n)
            .map(|i| match d.draw(&mut rng, Context { client: 3, row: i as u64 + 1, repetition: 1 }) {
                Drawn::Int(v) => v,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn ranges_stay_inside_their_bounds_and_reach_both_ends() {
        // Bounds given as parameters come resolved from the compiled program.
        let compiled = program().client[0].1.clone();
        assert_eq!(compiled, Generator::Uniform([Number::Int(-5), Number::Int(50)]));
        let v = ints(compiled, 20_000);
        assert!(v.iter().all(|x| (-5..=50).contains(x)));
        assert!(v.contains(&-5) && v.contains(&50));
        for g in [
            Generator::Gaussian([Number::Int(1), Number::Int(100)]),
            Generator::Special([Number::Int(1), Number::Int(100)]),
            Generator::Pareto([Number::Int(1), Number::Int(100)]),
            Generator::Zipfian([Number::Int(1), Number::Int(100)]),
            Generator::Ids("t".into()),
        ] {
            let top = if matches!(g, Generator::Ids(_)) { 20 } else { 100 };
            assert!(ints(g.clone(), 5_000).iter().all(|x| (1..=top).contains(x)), "{g:?}");
        }
    }

    #[test]
    fn offsets_add_to_what_their_source_drew_and_unique_ids_never_repeat() {
        let p = program();
        let slot = |name: &str| p.slots.iter().position(|s| s == name).unwrap();
        // An offset reads the value drawn in the same pass, wherever it is listed.
        let end = p.slots.len(); // one more slot, for the offset
        let mut slots = vec![Value::Null; end + 1];
        let list = [
            (end, Generator::Offset("r".into(), Number::Int(99))),
            (slot("r"), Generator::Uniform([Number::Int(1), Number::Int(1000)])),
        ];
        let mut scope = ScopeDraws::new(&list, &p, &DistributionSpec::default(), None, 1).unwrap();
        let mut rng = Rng::seeded(3);
        for _ in 0..100 {
            scope.draw(&mut rng, Context::default(), &mut slots);
            assert!((1..=1000).contains(&slots[slot("r")].int()));
            assert_eq!(slots[end].int(), slots[slot("r")].int() + 99);
        }
        let mut text = Value::Null;
        let mut d = Draw::new(&Generator::Pattern("é#@".into()), &p, &DistributionSpec::default(), None, 1).unwrap();
        d.draw_to(&mut rng, Context::default(), &mut text);
        let Value::Text(t) = &text else { panic!() };
        assert!(t.starts_with('é') && t.chars().count() == 3, "{t}: literal characters kept whole");
        let unique = Arc::new(UniqueSequence::new(5));
        let mut a = Draw::new(&Generator::Unique, &p, &DistributionSpec::default(), Some(&unique), 1).unwrap();
        let mut b = Draw::new(&Generator::Unique, &p, &DistributionSpec::default(), Some(&unique), 1).unwrap();
        let mut ids = std::collections::BTreeSet::new();
        for _ in 0..5_000 {
            for d in [&mut a, &mut b] {
                let Drawn::Int(v) = d.draw(&mut rng, Context::default()) else { panic!() };
                assert!((-(1i64 << 31)..(1i64 << 31)).contains(&v));
                assert!(ids.insert(v), "{v} drawn twice");
            }
        }
        assert!(Draw::new(&Generator::Unique, &p, &DistributionSpec::default(), None, 1).is_err());
    }

    #[test]
    fn sequences_rows_clients_patterns_and_constants() {
        assert_eq!(ints(Generator::Sequence(10), 3), [10, 11, 12]);
        assert_eq!(ints(Generator::Row, 3), [1, 2, 3]);
        assert_eq!(ints(Generator::ClientId, 2), [3, 3]);
        assert_eq!(ints(Generator::Const(Scalar::Int(9)), 1), [9]);
        let p = program();
        let mut d =
            Draw::new(&Generator::Pattern("##-@@ x".into()), &p, &DistributionSpec::default(), None, 1).unwrap();
        let mut rng = Rng::seeded(1);
        let Drawn::Text(t) = d.draw(&mut rng, Context::default()) else { panic!() };
        let b = t.as_bytes();
        assert_eq!(b.len(), 7);
        assert!(b[0].is_ascii_digit() && b[1].is_ascii_digit() && b[2] == b'-');
        assert!(b[3].is_ascii_lowercase() && b[4].is_ascii_lowercase() && &b[5..] == b" x");
        assert!(Draw::new(&Generator::Ids("nope".into()), &p, &DistributionSpec::default(), None, 1).is_err());
        assert!(Draw::new(
            &Generator::Uniform([Number::Int(0), Number::Int(1 << 40)]),
            &p,
            &DistributionSpec::default(),
            None,
            1
        )
        .is_err());
    }

    /// One integer draw of `g` at `at`.
    fn int_at(p: &Program, g: &Generator, at: Context) -> i64 {
        let mut d = Draw::new(g, p, &DistributionSpec::default(), None, 1).unwrap();
        match d.draw(&mut Rng::seeded(1), at) {
            Drawn::Int(v) => v,
            other => panic!("{other:?}"),
        }
    }

    /// TPC-C's terminals: 20 clients over 2 warehouses of 10 districts take each
    /// (warehouse, district) once, and the 21st starts over.
    #[test]
    fn by_client_binds_each_client_to_its_part() {
        let p = program();
        let bound = |count: i64, every: i64, client: u64| {
            let g = Generator::ByClient([Number::Int(count), Number::Int(every)]);
            int_at(&p, &g, Context { client, row: 0, repetition: 1 })
        };
        let pairs: std::collections::BTreeSet<(i64, i64)> =
            (0..20).map(|c| (bound(2, 1, c), bound(10, 2, c))).collect();
        assert_eq!(pairs.len(), 20);
        assert!(pairs.iter().all(|&(w, d)| (1..=2).contains(&w) && (1..=10).contains(&d)));
        assert_eq!((bound(2, 1, 20), bound(10, 2, 20)), (1, 1));
    }

    /// A composite key loaded in row order: 2 warehouses x 10 districts x 3 customers, each
    /// (warehouse, district, customer) once.
    #[test]
    fn by_row_numbers_the_parts_of_a_composite_key() {
        let p = program();
        let part = |count: i64, every: i64, row: u64| {
            let g = Generator::ByRow(vec![Number::Int(count), Number::Int(every)]);
            int_at(&p, &g, Context { client: 0, row, repetition: 0 })
        };
        let keys: std::collections::BTreeSet<(i64, i64, i64)> =
            (1..=60).map(|r| (part(2, 30, r), part(10, 3, r), part(3, 1, r))).collect();
        assert_eq!(keys.len(), 60);
        assert_eq!((part(2, 30, 1), part(10, 3, 1), part(3, 1, 1)), (1, 1, 1));
        assert_eq!((part(2, 30, 60), part(10, 3, 60), part(3, 1, 60)), (2, 10, 3));
    }

    /// One text draw of `g` at `at`, with `rng`.
    fn text_at(p: &Program, g: &Generator, rng: &mut Rng, row: u64) -> Option<String> {
        let mut d = Draw::new(g, p, &DistributionSpec::default(), None, 9).unwrap();
        match d.draw(rng, Context { client: 0, row, repetition: 1 }) {
            Drawn::Text(t) => Some(t.to_string()),
            Drawn::Null => None,
            other => panic!("{other:?}"),
        }
    }

    /// TPC-C's population: new orders numbered from 2101, each district's customers
    /// permuted, delivered orders first, last names spelled from syllables.
    #[test]
    fn population_generators_follow_the_rows() {
        let p = program();
        let n = |i: i64| Number::Int(i);
        let at = |g: &Generator, row: u64| int_at(&p, g, Context { client: 0, row, repetition: 0 });
        let first = Generator::ByRow(vec![n(900), n(1), n(2101)]);
        assert_eq!((at(&first, 1), at(&first, 900), at(&first, 901)), (2101, 3000, 2101));
        // Each run of 30 rows takes 1..30 once, in an order that is not the rows' order.
        let shuffled = Generator::Shuffled([n(30), n(1)]);
        for run in 0..3u64 {
            let mut v: Vec<i64> = (1..=30).map(|r| at(&shuffled, run * 30 + r)).collect();
            assert_ne!(v, (1..=30).collect::<Vec<_>>(), "run {run} is shuffled");
            v.sort_unstable();
            assert_eq!(v, (1..=30).collect::<Vec<_>>(), "run {run} is a permutation");
        }
        let carrier = Generator::FirstRows {
            first: n(2),
            every: n(3),
            then: Box::new(Generator::Const(Scalar::Int(7))),
            rest: Box::new(Generator::Null),
        };
        let mut d = Draw::new(&carrier, &p, &DistributionSpec::default(), None, 1).unwrap();
        let drawn: Vec<Option<i64>> = (1..=6)
            .map(|row| match d.draw(&mut Rng::seeded(1), Context { client: 0, row, repetition: 0 }) {
                Drawn::Int(i) => Some(i),
                _ => None,
            })
            .collect();
        assert_eq!(drawn, [Some(7), Some(7), None, Some(7), Some(7), None]);
        let mut rng = Rng::seeded(5);
        let name = |v: i64| Generator::Syllables(Box::new(Generator::Const(Scalar::Int(v))));
        assert_eq!(text_at(&p, &name(0), &mut rng, 1).unwrap(), "BARBARBAR");
        assert_eq!(text_at(&p, &name(371), &mut rng, 1).unwrap(), "PRICALLYOUGHT");
        assert_eq!(text_at(&p, &name(999), &mut rng, 1).unwrap(), "EINGEINGEING");
    }

    /// a-strings of drawn length, "ORIGINAL" somewhere inside, weighted choices, decimals to
    /// the places their bounds are written with.
    #[test]
    fn texts_choices_and_decimals() {
        let p = program();
        let n = |i: i64| Number::Int(i);
        let mut rng = Rng::seeded(3);
        let (mut shortest, mut longest, mut starts) = (usize::MAX, 0, std::collections::BTreeSet::new());
        for _ in 0..2_000 {
            let t = text_at(&p, &Generator::Text([n(26), n(50)]), &mut rng, 1).unwrap();
            assert!(t.bytes().all(|b| b.is_ascii_alphanumeric()), "{t}");
            (shortest, longest) = (shortest.min(t.len()), longest.max(t.len()));
            let marked = text_at(&p, &Generator::TextWith("ORIGINAL".into(), [n(26), n(50)]), &mut rng, 1).unwrap();
            assert!((26..=50).contains(&marked.len()), "{marked}");
            starts.insert(marked.find("ORIGINAL").expect("holds the word"));
        }
        assert_eq!((shortest, longest), (26, 50));
        assert!(starts.contains(&0) && starts.len() > 30, "the word moves: {starts:?}");
        let credit = Generator::Choose(vec![
            (n(10), Generator::Const(Scalar::Text("BC".into()))),
            (n(90), Generator::Const(Scalar::Text("GC".into()))),
        ]);
        let bad = (0..10_000).filter(|_| text_at(&p, &credit, &mut rng, 1).unwrap() == "BC").count();
        assert!((800..1200).contains(&bad), "{bad} of 10000 bad credits, 10% expected");
        let tax = Generator::Decimal(["0.0000".into(), "0.2000".into()]);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..5_000 {
            let t = text_at(&p, &tax, &mut rng, 1).unwrap();
            assert!(t.len() == 6 && t.starts_with("0."), "{t}");
            seen.insert(t);
        }
        assert!(seen.contains("0.0000") && seen.contains("0.2000") && seen.len() > 1000);
        let mut out = String::new();
        write_decimal(-1005, 2, &mut out);
        assert_eq!(out, "-10.05");
        assert!(decimal_range("2.0", "1.0").is_err() && decimal_range("x", "1").is_err());
        assert_eq!(decimal_range("1.00", "100.00").unwrap(), (100, 9900, 2));
    }

    /// NURand(A, x, y): every value in [x, y]; C fixed by the seed (the same for every
    /// client of a run, another for another seed); non-uniform: with A = 255 over 0..999
    /// (TPC-C's C_LAST), the most drawn tenth of values takes far more than a tenth.
    #[test]
    fn nurand_stays_in_range_is_skewed_and_its_c_follows_the_seed() {
        let p = program();
        let g = Generator::Nurand([Number::Int(255), Number::Int(0), Number::Int(999)]);
        let draw = |seed: u64, client: u64| {
            let mut d = Draw::new(&g, &p, &DistributionSpec::default(), None, seed).unwrap();
            let mut rng = Rng::for_client(seed, client);
            let mut counts = vec![0u32; 1000];
            for _ in 0..100_000 {
                let Drawn::Int(v) = d.draw(&mut rng, Context::default()) else { panic!() };
                assert!((0..=999).contains(&v), "{v}");
                counts[v as usize] += 1;
            }
            counts
        };
        let counts = draw(42, 0);
        let mut sorted = counts.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let top_tenth: u32 = sorted[..100].iter().sum();
        assert!(top_tenth > 20_000, "the busiest 100 of 1000 values drew {top_tenth} of 100000");
        assert_eq!(nurand_c(42, 255), nurand_c(42, 255));
        assert!(nurand_c(42, 255) <= 255 && nurand_c(42, 8191) <= 8191);
        assert!((1..50).any(|s| nurand_c(s, 255) != nurand_c(42, 255)), "C follows the seed");
        // Another client of the same run: another stream, the same C (the same hot values).
        let other = draw(42, 1);
        let hottest = (0..1000).max_by_key(|&v| counts[v]).unwrap();
        assert!(other[hottest] > 2 * 100, "value {hottest}: {} draws by another client", other[hottest]);
    }
}
