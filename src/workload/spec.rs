//! Workload files (docs/workloads.md): TOML read into typed data that remembers where each
//! name and SQL text stands, so every error names the file's line and column.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// A workload file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub workload: Header,
    /// Named values for `{name}` in SQL texts and numbers; `--set name=value` overrides.
    #[serde(default)]
    pub params: BTreeMap<String, Spanned<Scalar>>,
    /// Values drawn once per client connection (`:name` in any statement).
    #[serde(default)]
    pub client: BTreeMap<String, Spanned<Generator>>,
    #[serde(default)]
    pub tables: Vec<TableSpec>,
    #[serde(default)]
    pub transactions: Vec<Spanned<TransactionSpec>>,
    #[serde(default)]
    pub checks: Vec<CheckSpec>,
    #[serde(default)]
    pub tallies: Vec<TallySpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    /// Statements named in results without their transaction's name (`point_selects`
    /// rather than `oltp_read_write.point_selects`): one-transaction workloads only.
    #[serde(default)]
    pub bare_names: bool,
    /// The benchmark whose rules the audit applies (`"tpc-c"`: warehouses per terminal,
    /// no-wait runs, steady state).
    pub follows: Option<Spanned<String>>,
    /// How a client picks each transaction: `"weighted"` (default: drawn by weight each
    /// time) or `"deck"` (a shuffled deck of `weight` cards per transaction, drawn to the
    /// end before the next: every whole deck keeps the mix exactly, as TPC-C's terminals).
    pub pick: Option<Spanned<String>>,
}

/// A number or text given in the file (or by `--set`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Scalar {
    Int(i64),
    Float(f64),
    Text(String),
}

/// A switch, literally or as `"{param}"` (1 or 0).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Flag {
    Bool(bool),
    Param(String),
}

/// How many times a statement (or group) runs per transaction: a number, or drawn for each
/// transaction (`{ uniform = [5, 15] }`: TPC-C's order lines).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Repeat {
    Times(Number),
    Drawn(Generator),
}

/// An integer, literally or as `"{param}"`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Number {
    Int(i64),
    Param(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    pub name: Spanned<String>,
    /// A set of this many tables named `name1..nameN` (sysbench's sbtest1..N), each with
    /// `rows` rows; statements pick one by number (`name{:t}` in SQL).
    pub count: Option<Spanned<Number>>,
    pub rows: Spanned<Number>,
    pub columns: Vec<ColumnSpec>,
    #[serde(default)]
    pub primary_key: Vec<String>,
    /// Secondary indexes, each a list of columns.
    #[serde(default)]
    pub indexes: Vec<Vec<String>>,
    /// Draw more rows than `rows` and keep some: a row count of its own per group of rows
    /// (TPC-C's 5..15 lines per order). `rows` is then how many it keeps on average (the
    /// number the audit compares the table with).
    pub keep: Option<KeepSpec>,
}

/// `drawn` rows are drawn (the row numbers the columns' generators see), and a row is kept
/// when its `column` is at most `at_most`'s value for it: `{ drawn = "{warehouses} *
/// 450000", column = "ol_number", at_most = { keyed = { every = 15, uniform = [5, 15] } } }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeepSpec {
    pub drawn: Spanned<Number>,
    pub column: Spanned<String>,
    pub at_most: Spanned<Generator>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnSpec {
    pub name: Spanned<String>,
    #[serde(rename = "type")]
    pub ty: Spanned<String>,
    /// How `prepare` fills it.
    pub gen: Spanned<Generator>,
}

/// How a value is produced: for a parameter when its scope begins, for a column per row.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Generator {
    /// An integer in `[lo, hi]` by one of sysbench's distributions.
    Uniform([Number; 2]),
    Gaussian([Number; 2]),
    Special([Number; 2]),
    Pareto([Number; 2]),
    Zipfian([Number; 2]),
    /// TPC-C's non-uniform random NURand(A, x, y): `((random(0, A) | random(x, y)) + C) %
    /// (y - x + 1) + x`, with C a constant in 0..A drawn from the run's seed (the same for
    /// every client of a run); for A = 255, C_LOAD in prepare and a C_RUN that keeps clause
    /// 2.1.6.1's rule in a run (`generate::nurand_c`).
    Nurand([Number; 3]),
    /// One of a table's row ids, 1..rows, by the run's `--rand-type`.
    Ids(String),
    /// A table number of a table set, 1..count, uniformly (as sysbench picks its table).
    Table(String),
    /// Another value of the same scope plus a number: `{ offset = ["id", 99] }` (drawn
    /// after the others; saturates at the 64-bit range).
    Offset(String, Number),
    /// An integer uniform in `[lo, hi]` other than another value: `{ other_than = ["w", 1,
    /// "{warehouses}"] }`, TPC-C's remote warehouse, never the home one. The other value is a
    /// client value or one drawn beside it (drawn first); when it is the range's only value,
    /// that value (one warehouse: every pick is home).
    OtherThan(String, Number, Number),
    /// An integer no other client draws during the run: sysbench's unique ids for
    /// `--auto-inc=off`, in -2^31..2^31 (parameters only).
    Unique,
    /// Text: `#` a digit, `@` a lowercase letter, anything else itself (sysbench's c and pad
    /// are `###########-###########-...`).
    Pattern(String),
    /// Per client: start, start+1, ... (unique across clients when combined with client_id).
    Sequence(i64),
    /// The time of the draw (UTC, to the microsecond): a timestamp column's or parameter's
    /// `now`, as TPC-C's order and payment dates.
    Now,
    /// In a repeated statement (or group), the repetition's number, 1..N: a loop's index
    /// (TPC-C's Delivery visits districts 1..10); 1 in a statement that runs once.
    Repetition,
    /// The client's number, 0-based.
    ClientId,
    /// 1..count from the client's number: `(client_id / every) % count + 1`. Binds each
    /// client to a part of the data: TPC-C's terminal to its warehouse
    /// (`["{warehouses}", 1]`) and district (`[10, "{warehouses}"]`).
    ByClient([Number; 2]),
    /// The row's number while loading a table, 1-based.
    Row,
    /// 1..count from the row's number: `((row - 1) / every) % count + 1`, or from `first`
    /// when a third number is given. The parts of a composite key loaded in row order:
    /// TPC-C's customer id (`[3000, 1]`), its district (`[10, 3000]`) and warehouse
    /// (`["{warehouses}", 30000]`); its new orders 2101..3000 (`[900, 1, 2101]`).
    ByRow(Vec<Number>),
    /// As `by_row = [count, every]`, but each run of `count` values comes in a shuffled
    /// order (a permutation fixed by the seed): TPC-C's O_C_ID, a permutation of the
    /// customer ids in each district (columns only).
    Shuffled([Number; 2]),
    /// An integer uniform in `[lo, hi]`, one per `every` rows loaded, drawn from the seed and
    /// the number of the row's group (`(row - 1) / every`) alone (columns and `keep` only):
    /// tables whose rows group alike draw the same values. TPC-C's O_OL_CNT, 5..15 per order
    /// (`{ every = 1, uniform = [5, 15] }`), and the ORDER-LINE rows of each order
    /// (`every = 15`, one group per order's 15 line slots).
    Keyed {
        every: Number,
        uniform: [Number; 2],
    },
    /// Of every `every` rows loaded, the first `first` take `then`, the others `rest`
    /// (columns only): TPC-C's delivered and undelivered orders.
    FirstRows {
        first: Number,
        every: Number,
        then: Box<Generator>,
        rest: Box<Generator>,
    },
    /// Random text of letters and digits, its length uniform in `[lo, hi]` (TPC-C's
    /// a-strings).
    Text([Number; 2]),
    /// The same, holding `word` at a random position (TPC-C's "ORIGINAL" data).
    TextWith(String, [Number; 2]),
    /// One of several generators by weight: `[[10, { const = "BC" }], [90, { const = "GC" }]]`.
    Choose(Vec<(Number, Generator)>),
    /// TPC-C's last name: the three digits of another generator's value (0..999) spelled
    /// in the syllables BAR, OUGHT, ABLE, PRI, PRES, ESE, ANTI, CALLY, ATION, EING.
    Syllables(Box<Generator>),
    /// A decimal uniform in `[lo, hi]` to the places the bounds are written with
    /// (`["0.0000", "0.5000"]`: TPC-C's discounts and taxes), as exact text.
    Decimal([String; 2]),
    /// SQL NULL.
    Null,
    Const(Scalar),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransactionSpec {
    pub name: Spanned<String>,
    /// Relative frequency in the mix (an integer or `"{param}"`; 0 is allowed only
    /// through a parameter, to switch a transaction off).
    #[serde(default = "one")]
    pub weight: Spanned<Number>,
    /// Inside BEGIN ... COMMIT (else each statement autocommits): true, false, or a
    /// `"{param}"` whose value is 1 or 0.
    #[serde(default = "no")]
    pub begin: Spanned<Flag>,
    /// Pause after each transaction, in milliseconds: a number, or `{ exponential = mean }`
    /// (closed loop only).
    #[serde(default = "no_pause")]
    pub think_ms: Spanned<PauseSpec>,
    /// Pause before each transaction (TPC-C's keying time), in milliseconds, the same way.
    #[serde(default = "no_pause")]
    pub keying_ms: Spanned<PauseSpec>,
    /// Queued instead of run (TPC-C's deferred Delivery, clause 2.7): the client's event is
    /// the queueing, and the run's deferred worker executes the transaction as that client,
    /// its time from queued to committed recorded as `{name}_deferred`. true, false, or a
    /// `"{param}"` product whose value is 1 or 0.
    #[serde(default = "no")]
    pub deferred: Spanned<Flag>,
    /// Drawn once per transaction.
    #[serde(default)]
    pub params: BTreeMap<String, Spanned<Generator>>,
    #[serde(default)]
    pub statements: Vec<StatementSpec>,
}

/// A pause as written: milliseconds as a number or `"{param}"` (a product such as
/// `"{waits} * 12000"` switches it by a parameter), or `{ exponential = mean }`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum PauseSpec {
    Fixed(Number),
    Drawn(PauseDistributionSpec),
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum PauseDistributionSpec {
    Exponential(Number),
}

fn no_pause() -> Spanned<PauseSpec> {
    Spanned::new(0..0, PauseSpec::Fixed(Number::Int(0)))
}

/// A pause of a client, in milliseconds, as compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pause {
    Fixed(u64),
    Drawn(PauseDistribution),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseDistribution {
    /// Negative exponential with this mean, truncated at 10 times the mean (TPC-C's think
    /// times, clause 5.2.5.4).
    Exponential(u64),
}

impl Pause {
    /// Its mean, in milliseconds.
    pub fn mean_ms(self) -> u64 {
        match self {
            Pause::Fixed(ms) | Pause::Drawn(PauseDistribution::Exponential(ms)) => ms,
        }
    }

    /// One pause: `rng`'s draw for a distribution.
    pub fn draw(self, rng: &mut crate::random::Rng) -> std::time::Duration {
        let ms = match self {
            Pause::Fixed(ms) => ms as f64,
            Pause::Drawn(PauseDistribution::Exponential(mean)) => {
                // -ln(U) for U in (0, 1], at most 10 means.
                let u = 1.0 - rng.next_f64();
                (-u.ln()).min(10.0) * mean as f64
            }
        };
        std::time::Duration::from_secs_f64(ms / 1000.0)
    }

    /// As the result and `check` describe it.
    pub fn describe(self) -> String {
        match self {
            Pause::Fixed(ms) => format!("{ms} ms"),
            Pause::Drawn(PauseDistribution::Exponential(mean)) => {
                format!("negative exponential, mean {mean} ms, at most {} ms", mean * 10)
            }
        }
    }
}

fn no() -> Spanned<Flag> {
    Spanned::new(0..0, Flag::Bool(false))
}

fn one() -> Spanned<Number> {
    Spanned::new(0..0, Number::Int(1))
}

/// A statement's SQL text as the file gives it, if it does.
type Text<'a> = &'a Option<Spanned<String>>;

/// SQL shared by the three databases (`sql`), or per database where they differ.
pub trait SqlTexts {
    /// The shared text, then each dialect's own by its name (the file's keys).
    fn texts(&self) -> (Text<'_>, [(&'static str, Text<'_>); 3]);

    /// The text for `dialect`: its own, else the shared one.
    fn sql_for(&self, dialect: crate::model::Dialect) -> Option<&Spanned<String>> {
        let (shared, own) = self.texts();
        let own = own.iter().find(|(name, _)| *name == dialect.name()).and_then(|(_, text)| text.as_ref());
        own.or(shared.as_ref())
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatementSpec {
    pub name: Spanned<String>,
    pub sql: Option<Spanned<String>>,
    pub mysql: Option<Spanned<String>>,
    pub postgres: Option<Spanned<String>>,
    pub sqlite: Option<Spanned<String>>,
    /// Drawn for each execution (for each row of a batch).
    #[serde(default)]
    pub params: BTreeMap<String, Spanned<Generator>>,
    /// A multi-row INSERT: the `VALUES (...)` row is sent this many times, each row with
    /// its own draws of the statement's `params`.
    pub batch: Option<Spanned<Number>>,
    /// Run this statement (and the `group - 1` statements after it, in order) this many
    /// times per transaction, drawing `params` again each time; 0 leaves them out.
    pub repeat: Option<Spanned<Repeat>>,
    /// How many statements, from this one, `repeat` repeats together (default 1).
    pub group: Option<Spanned<i64>>,
    /// Drawn once before the repetitions, for the whole group (sysbench's table per group).
    #[serde(default)]
    pub once: BTreeMap<String, Spanned<Generator>>,
    /// Values of the first row kept for later statements of the transaction: name = column
    /// (or `last_insert_id`).
    #[serde(default)]
    pub save: BTreeMap<String, Spanned<String>>,
    /// The same, kept for the client's later transactions.
    #[serde(default)]
    pub save_client: BTreeMap<String, Spanned<String>>,
    /// `"no_row"`: when this query returns no row, the transaction rolls back as the
    /// workload intends (TPC-C's New-Order with an unused item number): counted as a
    /// rollback of its transaction, not as an error.
    pub rollback_if: Option<Spanned<String>>,
    /// `"no_row"`: when this query returns no row, the rest of its group's repetition is
    /// skipped (TPC-C's Delivery skips a district with no undelivered order, clause
    /// 2.7.4.2), counted as a skip of its transaction.
    pub skip_if: Option<Spanned<String>>,
    /// The row `save` reads: `"first"` (default), or `"middle"`, row ceil(n/2) of the n rows
    /// in the query's order (TPC-C's customer by last name, clause 2.5.2.2).
    pub save_row: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    pub name: Spanned<String>,
    /// Also run after prepare loads the tables (a check of the initial population).
    #[serde(default)]
    pub after_prepare: bool,
    /// Also run before each run measures: a check that fails refuses the run (tables
    /// prepared with other parameters than the run's).
    #[serde(default)]
    pub before_run: bool,
    /// Run after each run (default); false: a condition of the initial population only,
    /// which the workload's own transactions change (TPC-C's condition 11).
    #[serde(default = "yes")]
    pub after_run: bool,
    /// `true` (default): the first column of the first row must be true. `zero`: it counts
    /// the offending rows, and must be 0 (the result and the report say how many).
    #[serde(default)]
    pub expect: CheckExpect,
    /// A query whose first column of its first row must be true (1, `t`, `true`), or count
    /// the offending rows (`expect = "zero"`).
    pub sql: Option<Spanned<String>>,
    pub mysql: Option<Spanned<String>>,
    pub postgres: Option<Spanned<String>>,
    pub sqlite: Option<Spanned<String>>,
}

impl SqlTexts for StatementSpec {
    fn texts(&self) -> (Text<'_>, [(&'static str, Text<'_>); 3]) {
        (&self.sql, [("mysql", &self.mysql), ("postgres", &self.postgres), ("sqlite", &self.sqlite)])
    }
}

/// A number the tables hold, read as the measured phase starts and after it ends: its change
/// is what the database says the run did (TPC-C's orders from the sum of D_NEXT_O_ID).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TallySpec {
    pub name: Spanned<String>,
    /// A query whose first column of its first row is a whole number.
    pub sql: Option<Spanned<String>>,
    pub mysql: Option<Spanned<String>>,
    pub postgres: Option<Spanned<String>>,
    pub sqlite: Option<Spanned<String>>,
}

impl SqlTexts for TallySpec {
    fn texts(&self) -> (Text<'_>, [(&'static str, Text<'_>); 3]) {
        (&self.sql, [("mysql", &self.mysql), ("postgres", &self.postgres), ("sqlite", &self.sqlite)])
    }
}

/// What a check's query returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckExpect {
    #[default]
    True,
    Zero,
}

fn yes() -> bool {
    true
}

impl SqlTexts for CheckSpec {
    fn texts(&self) -> (Text<'_>, [(&'static str, Text<'_>); 3]) {
        (&self.sql, [("mysql", &self.mysql), ("postgres", &self.postgres), ("sqlite", &self.sqlite)])
    }
}

/// A position in the file, for messages: `line:column`, both 1-based.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) + 1;
    (line, col)
}

/// What is wrong at a place in a workload file: `file:line:column: what`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {what}")]
pub struct SpecError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub what: String,
}

/// Reads a workload file's text; a syntax or shape error names the line and column.
pub fn parse(file: &str, text: &str) -> Result<Spec, SpecError> {
    toml::from_str::<Spec>(text).map_err(|e| {
        let open = ["array", "inline table", "unclosed"].iter().any(|w| e.message().contains(w));
        let at = e.span().map(|s| if open { mistake_at(text, s.start) } else { s.start });
        let (line, column) = at.map(|o| line_col(text, o)).unwrap_or((1, 1));
        SpecError { file: file.to_string(), line, column, what: e.message().trim().to_string() }
    })
}

/// Where a value left open (an array without its `]`), which the parser finds at `offset`
/// on a later line after blank lines and comments, was left open: at the end of the last
/// line of content before it.
fn mistake_at(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    if !text[line_start..offset].trim().is_empty() {
        return offset;
    }
    // Lines before this one, with where each starts, the last one with content.
    let mut start = 0;
    let mut content = None;
    for line in text[..line_start].split_inclusive('\n') {
        let body = line.trim_end();
        if !body.trim_start().is_empty() && !body.trim_start().starts_with('#') {
            content = Some(start + body.len());
        }
        start += line.len();
    }
    content.unwrap_or(offset)
}

#[cfg(test)]
mod syntax_tests {
    /// The line:column of a syntax error is where the mistake is: an array left open is
    /// on its own line, not the next; a bad line's own start stays its own.
    #[test]
    fn syntax_errors_name_the_line_of_the_mistake() {
        let at = |text: &str| super::parse("w.toml", text).unwrap_err().to_string();
        let open = at("[workload]\nname = [1, 2\n\n# note\n[[transactions]]\nname = \"t\"\n");
        assert!(open.starts_with("w.toml:2:13: "), "{open}");
        let bad_line = at("[workload]\nname = \"x\"\n= 5\n");
        assert!(bad_line.starts_with("w.toml:3:1: "), "{bad_line}");
    }
}
