//! Generators made ready to draw: bounds resolved, distributions precomputed, text built in
//! a buffer the generator owns. What a client draws for a parameter and what prepare writes
//! for a column; drawing allocates nothing.

use super::program::Program;
use super::spec::{Generator, Number, Scalar};
use crate::model::tpcc::{c_run_allowed, C_LOAD};
use crate::random::{Distribution, DistributionKind, DistributionSpec, Rng, UniqueSequence};
use std::sync::Arc;

mod error;
mod population;
pub use error::DrawError;
use population::population;
pub use population::{decimal_range, DecimalRangeError};

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
    /// lo + a draw in [0, span] from the seed and the row's group number alone.
    Keyed {
        every: u64,
        lo: i64,
        span: u32,
        seed: u64,
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

/// Whether values are drawn for a population (prepare) or for a run: NURand's C differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawnFor {
    Load,
    Run,
}

/// NURand's C for `a` under `seed`: in 0..=a, the same for every client of a run. For A =
/// 255, C_LOAD while loading, and in a run a C_RUN drawn from the values the rule allows.
pub fn nurand_c(seed: u64, a: u32, drawn_for: DrawnFor) -> u32 {
    let mut rng = Rng::seeded(seed ^ (a as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x4E55_5241_4E44);
    match (a, drawn_for) {
        (255, DrawnFor::Load) => C_LOAD,
        (255, DrawnFor::Run) => {
            let allowed: Vec<u32> = (0..=255).filter(|&c| c_run_allowed(C_LOAD, c)).collect();
            allowed[rng.uniform(0, allowed.len() as u32 - 1) as usize]
        }
        _ => rng.uniform(0, a),
    }
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
    /// `unique`: the run's shared sequence, for `unique` generators; `seed`: the run's seed,
    /// which fixes `nurand`'s C constants.
    pub fn new(
        g: &Generator,
        program: &Program,
        run: &DistributionSpec,
        unique: Option<&Arc<UniqueSequence>>,
        seed: u64,
    ) -> Result<Draw, DrawError> {
        let setup = Setup { program, run, unique, seed, drawn_for: DrawnFor::Run };
        Ok(Draw { kind: setup.kind(g)?, buf: String::new() })
    }

    /// `g` as prepare draws a column's values with `seed` (NURand's C_LOAD).
    pub fn for_column(g: &Generator, program: &Program, run: &DistributionSpec, seed: u64) -> Result<Draw, DrawError> {
        let setup = Setup { program, run, unique: None, seed, drawn_for: DrawnFor::Load };
        Ok(Draw { kind: setup.kind(g)?, buf: String::new() })
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
            kind @ (Kind::Shuffled { .. }
            | Kind::Keyed { .. }
            | Kind::FirstRows { .. }
            | Kind::Text { .. }
            | Kind::Choose(..)
            | Kind::Syllables(_)
            | Kind::Decimal { .. }) => population(kind, &mut self.buf, rng, at),
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

/// What making a generator ready needs besides the generator.
struct Setup<'a> {
    program: &'a Program,
    run: &'a DistributionSpec,
    unique: Option<&'a Arc<UniqueSequence>>,
    seed: u64,
    drawn_for: DrawnFor,
}

/// A compiled number (a `"{param}"` left is a program that was not compiled).
fn bound(n: &Number) -> Result<i64, DrawError> {
    match n {
        Number::Int(i) => Ok(*i),
        Number::Param(p) => Err(DrawError::Unresolved(p.clone())),
    }
}

impl Setup<'_> {
    fn draw(&self, g: &Generator) -> Result<Draw, DrawError> {
        Ok(Draw { kind: self.kind(g)?, buf: String::new() })
    }

    /// An integer in `[lo, hi]` by a distribution of the run's shape.
    fn range(&self, kind: DistributionKind, lo: &Number, hi: &Number) -> Result<Kind, DrawError> {
        let (lo, hi) = (bound(lo)?, bound(hi)?);
        let span = hi.checked_sub(lo).filter(|s| (0..=u32::MAX as i64 - 1).contains(s));
        let span = span.ok_or(DrawError::Range { lo, hi })?;
        Ok(Kind::Int { lo, span: span as u32, dist: DistributionSpec { kind, ..self.run.clone() }.sampler() })
    }

    fn kind(&self, g: &Generator) -> Result<Kind, DrawError> {
        Ok(match g {
            Generator::Uniform([a, b]) => self.range(DistributionKind::Uniform, a, b)?,
            Generator::Gaussian([a, b]) => self.range(DistributionKind::Gaussian, a, b)?,
            Generator::Special([a, b]) => self.range(DistributionKind::Special, a, b)?,
            Generator::Pareto([a, b]) => self.range(DistributionKind::Pareto, a, b)?,
            Generator::Zipfian([a, b]) => self.range(DistributionKind::Zipfian, a, b)?,
            Generator::Ids(table) => {
                let rows = self.program.table(table).map(|t| t.rows).unwrap_or(0);
                if rows == 0 || rows > u32::MAX as u64 {
                    return Err(DrawError::Ids { table: table.clone(), rows });
                }
                self.range(self.run.kind, &Number::Int(1), &Number::Int(rows as i64))?
            }
            // An offset reads another slot: the runner resolves it.
            Generator::Offset(from, _) | Generator::OtherThan(from, ..) => {
                return Err(DrawError::DerivedOutsideScope(from.clone()))
            }
            Generator::Unique => match self.unique {
                Some(u) => Kind::Unique(u.clone()),
                None => return Err(DrawError::UniqueOutsideClients),
            },
            Generator::Table(set) => return Err(DrawError::TableUnresolved(set.clone())),
            Generator::Pattern(p) => Kind::Pattern(pieces(p), p.is_ascii().then(|| p.as_bytes().to_vec())),
            Generator::Sequence(start) => Kind::Sequence(*start),
            Generator::ClientId => Kind::ClientId,
            Generator::Now => Kind::Now,
            Generator::Repetition => Kind::Repetition,
            Generator::Null => Kind::Null,
            Generator::Row => Kind::Row,
            Generator::Const(v) => Kind::Const(v.clone()),
            Generator::Nurand([a, x, y]) => {
                let (a, x, y) = (bound(a)?, bound(x)?, bound(y)?);
                let span = y.checked_sub(x).filter(|s| (0..=u32::MAX as i64 - 1).contains(s));
                let span = span.ok_or(DrawError::NurandRange { x, y })?;
                let a = u32::try_from(a).map_err(|_| DrawError::NurandA(a))?;
                Kind::NuRand { a, x, span: span as u32, c: nurand_c(self.seed, a, self.drawn_for) }
            }
            Generator::ByClient(_)
            | Generator::Shuffled(_)
            | Generator::ByRow(_)
            | Generator::FirstRows { .. }
            | Generator::Keyed { .. } => self.by_position(g)?,
            Generator::Text(_)
            | Generator::TextWith(..)
            | Generator::Choose(_)
            | Generator::Syllables(_)
            | Generator::Decimal(_) => self.composed(g)?,
        })
    }

    /// Values from the client's or the row's number.
    fn by_position(&self, g: &Generator) -> Result<Kind, DrawError> {
        Ok(match g {
            Generator::ByClient([count, every]) | Generator::Shuffled([count, every]) => {
                let (count, every) = (bound(count)?, bound(every)?);
                if count < 1 || every < 1 {
                    return Err(DrawError::ByClient { count, every });
                }
                let (count, every) = (count as u64, every as u64);
                match g {
                    Generator::Shuffled(_) => Kind::Shuffled { count, every, seed: self.seed, run: None },
                    _ => Kind::ByClient { count, every },
                }
            }
            Generator::ByRow(parts) => {
                let values = parts.iter().map(bound).collect::<Result<Vec<i64>, DrawError>>()?;
                match values[..] {
                    [count, every, ref first @ ..] if count >= 1 && every >= 1 && first.len() <= 1 => Kind::ByRow {
                        count: count as u64,
                        every: every as u64,
                        first: first.first().copied().unwrap_or(1),
                    },
                    _ => return Err(DrawError::ByRow(values)),
                }
            }
            Generator::Keyed { every, uniform: [lo, hi] } => {
                let (every, lo, hi) = (bound(every)?, bound(lo)?, bound(hi)?);
                let span = hi.checked_sub(lo).filter(|s| (0..=u32::MAX as i64 - 1).contains(s));
                let span = span.ok_or(DrawError::Range { lo, hi })?;
                Kind::Keyed { every: every.max(1) as u64, lo, span: span as u32, seed: self.seed }
            }
            Generator::FirstRows { first, every, then, rest } => Kind::FirstRows {
                first: bound(first)?.max(0) as u64,
                every: bound(every)?.max(1) as u64,
                then: Box::new(self.draw(then)?),
                rest: Box::new(self.draw(rest)?),
            },
            other => return Err(DrawError::NotByPosition(Box::new(other.clone()))),
        })
    }

    /// Text, decimals and choices, some made of other generators.
    fn composed(&self, g: &Generator) -> Result<Kind, DrawError> {
        Ok(match g {
            Generator::Text([lo, hi]) | Generator::TextWith(_, [lo, hi]) => {
                let (lo, hi) = (bound(lo)?, bound(hi)?);
                let word = match g {
                    Generator::TextWith(word, _) => word.clone(),
                    _ => String::new(),
                };
                if lo < word.chars().count() as i64 || lo > hi || hi > u32::MAX as i64 {
                    return Err(DrawError::TextLength { lo, hi, word });
                }
                Kind::Text { lo: lo as u32, span: (hi - lo) as u32, word }
            }
            Generator::Choose(options) => {
                let mut sums = Vec::new();
                let mut draws = Vec::new();
                for (weight, inner) in options {
                    let w = bound(weight)?.max(1) as u64;
                    sums.push(sums.last().copied().unwrap_or(0) + w);
                    draws.push(self.draw(inner)?);
                }
                if draws.is_empty() {
                    return Err(DrawError::NoOptions);
                }
                Kind::Choose(sums, draws)
            }
            Generator::Syllables(inner) => Kind::Syllables(Box::new(self.draw(inner)?)),
            Generator::Decimal([lo, hi]) => {
                let (lo, span, places) = decimal_range(lo, hi)?;
                Kind::Decimal { lo, span, places }
            }
            other => return Err(DrawError::NotComposed(Box::new(other.clone()))),
        })
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
/// in drawing order: offsets and `other_than` last, each reading the value its source drew
/// in the same pass (or the client's).
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
    /// Uniform in `lo..=hi` but the value of slot `other`.
    OtherThan {
        other: usize,
        lo: i64,
        hi: i64,
    },
}

/// Uniform in `lo..=hi` without `other` (unless it is the only value there).
fn other_than(rng: &mut Rng, other: i64, lo: i64, hi: i64) -> i64 {
    let span = |hi: i64| (hi - lo) as u32;
    match (lo..=hi).contains(&other) {
        false => lo + rng.uniform(0, span(hi)) as i64,
        true if lo == hi => other,
        true => {
            let v = lo + rng.uniform(0, span(hi - 1)) as i64;
            v + (v >= other) as i64
        }
    }
}

impl ScopeDraws {
    /// `list`: (slot, generator) as compiled.
    pub fn new(
        list: &[(usize, Generator)],
        program: &Program,
        run: &DistributionSpec,
        unique: Option<&Arc<UniqueSequence>>,
        seed: u64,
    ) -> Result<ScopeDraws, DrawError> {
        // Exact capacity: one per client and scope, and a first push would reserve four.
        let mut items: Vec<(usize, Source)> = Vec::with_capacity(list.len());
        let derived = |g: &Generator| matches!(g, Generator::Offset(..) | Generator::OtherThan(..));
        for (slot, g) in list.iter().filter(|(_, g)| !derived(g)) {
            items.push((*slot, Source::Draw(Draw::new(g, program, run, unique, seed)?)));
        }
        // A source of this scope, or (other_than only) a client value.
        let slot_of = |name: &String, clients: bool| {
            let client = program.client.iter().filter(|_| clients);
            list.iter().chain(client).map(|(s, _)| *s).find(|s| program.slots.get(*s) == Some(name))
        };
        for (slot, g) in list {
            let source = match g {
                Generator::Offset(name, add) => Source::Offset {
                    from: slot_of(name, false).ok_or_else(|| DrawError::DerivedWithoutSource(name.clone()))?,
                    add: bound(add)?,
                },
                Generator::OtherThan(name, lo, hi) => Source::OtherThan {
                    other: slot_of(name, true).ok_or_else(|| DrawError::DerivedWithoutSource(name.clone()))?,
                    lo: bound(lo)?,
                    hi: bound(hi)?,
                },
                _ => continue,
            };
            items.push((*slot, source));
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
                Source::OtherThan { other, lo, hi } => {
                    let v = other_than(rng, slots[*other].int(), *lo, *hi);
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
mod tests;
