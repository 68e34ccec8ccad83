//! A workload file compiled for one database: `{param}`s substituted, every `:name` turned
//! into a positional `?` bound from a value slot, every name checked to exist before it is
//! used. The whole file validates before anything runs, and nothing is parsed per event.

mod sql;

use super::spec::{line_col, Flag, Generator, Number, Scalar, Spec, SqlTexts};
use super::{StatementClass, StatementInfo};
use crate::model::{ColumnDef, ColumnType, Dialect, TableDef};
pub use sql::positional;
use sql::{classify, table_marker, values_row};
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

/// A compiled workload.
#[derive(Clone, Debug)]
pub struct Program {
    pub name: String,
    pub description: String,
    /// Statements named without their transaction's name in results.
    pub bare_names: bool,
    pub dialect: Dialect,
    pub params: BTreeMap<String, Scalar>,
    /// Names of the value slots each client keeps (client values, then the rest).
    pub slots: Vec<String>,
    pub client: Vec<(usize, Generator)>,
    pub tables: Vec<TableProgram>,
    pub transactions: Vec<TransactionProgram>,
    pub checks: Vec<(String, String)>,
}

#[derive(Clone, Debug)]
pub struct TableProgram {
    pub def: TableDef,
    pub rows: u64,
    /// How `prepare` fills each column of `def`, in order.
    pub generators: Vec<Generator>,
    /// The table set it belongs to (`sbtest` for sbtest3), if any.
    pub set: Option<String>,
}

impl TableProgram {
    pub fn name(&self) -> &str {
        &self.def.name
    }
}

#[derive(Clone, Debug)]
pub struct TransactionProgram {
    pub name: String,
    pub weight: u32,
    pub begin: bool,
    pub think_ms: u64,
    pub params: Vec<(usize, Generator)>,
    pub statements: Vec<StatementProgram>,
    /// The order statements run in: each step runs `count` statements from `first`,
    /// `repeat` times.
    pub steps: Vec<StepProgram>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StepProgram {
    pub first: usize,
    pub count: usize,
    pub repeat: u32,
    /// Drawn once, before the repetitions.
    pub once: Vec<(usize, Generator)>,
}

#[derive(Clone, Debug)]
pub struct StatementProgram {
    pub name: String,
    pub class: StatementClass,
    /// With `?` placeholders.
    pub sql: String,
    /// The slot bound to each `?`, in order.
    pub args: Vec<usize>,
    pub params: Vec<(usize, Generator)>,
    pub saves: Vec<Save>,
    /// A statement on a table set: the slot holding the table number and the SQL for
    /// each table (`sql` is table 1's).
    pub per_table: Option<(usize, Vec<String>)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Save {
    pub slot: usize,
    pub from: SaveFrom,
    pub client_scope: bool,
}

/// Where a saved value comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaveFrom {
    /// The named column of the first row (NULL when no row came back).
    Column(String),
    /// The id the INSERT generated (MySQL, SQLite).
    InsertId,
    /// The first column of the first row: PostgreSQL's `RETURNING id`.
    FirstColumn,
}

/// Where one transaction's statements sit in the run's list of measured statements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransactionIds {
    pub begin: Option<usize>,
    pub statements: Vec<usize>,
    pub commit: Option<usize>,
}

impl Program {
    /// The statements measured, in id order (per transaction: BEGIN, its statements,
    /// COMMIT), and where each transaction's are.
    pub fn measured(&self) -> (Vec<StatementInfo>, Vec<TransactionIds>) {
        let mut infos = Vec::new();
        let mut add = |name: String, class| {
            infos.push(StatementInfo { name, class });
            infos.len() - 1
        };
        let ids = self
            .transactions
            .iter()
            .map(|t| {
                let named = |s: &str| if self.bare_names { s.to_string() } else { format!("{}.{s}", t.name) };
                TransactionIds {
                    begin: t.begin.then(|| add(named("begin"), StatementClass::Other)),
                    statements: t.statements.iter().map(|s| add(s.name.clone(), s.class)).collect(),
                    commit: t.begin.then(|| add(named("commit"), StatementClass::Commit)),
                }
            })
            .collect();
        (infos, ids)
    }

    /// Whether any transaction can write (decides the ownership checks before a run).
    pub fn writes(&self) -> bool {
        self.transactions.iter().any(TransactionProgram::writes)
    }

    /// A table by name, or the first of a table set by the set's name.
    pub fn table(&self, name: &str) -> Option<&TableProgram> {
        self.tables
            .iter()
            .find(|t| t.def.name == name)
            .or_else(|| self.tables.iter().find(|t| t.set.as_deref() == Some(name)))
    }

    /// The number of tables in set `name` (None: not a set).
    pub fn set_count(&self, name: &str) -> Option<u32> {
        let n = self.tables.iter().filter(|t| t.set.as_deref() == Some(name)).count();
        (n > 0).then_some(n as u32)
    }
}

impl TransactionProgram {
    /// Anything but a read may write (SQLite then begins with BEGIN IMMEDIATE).
    pub fn writes(&self) -> bool {
        self.statements.iter().any(|s| s.class != StatementClass::Read)
    }
}

/// Names that become SQL identifiers or result keys: letters, digits and `_`, not
/// starting with a digit.
fn identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 60
}

/// Errors, each `file:line:col: message`, collected over the whole file.
struct Errors<'a> {
    file: &'a str,
    text: &'a str,
    list: Vec<String>,
}

impl Errors<'_> {
    fn at<T>(&mut self, spanned: &Spanned<T>, message: impl std::fmt::Display) {
        let (line, col) = line_col(self.text, spanned.span().start);
        self.list.push(format!("{}:{line}:{col}: {message}", self.file));
    }
}

/// `value` given on the command line as `--set name=value`: an integer, a float or text.
pub fn scalar_from_text(value: &str) -> Scalar {
    value
        .parse::<i64>()
        .map(Scalar::Int)
        .or_else(|_| value.parse::<f64>().map(Scalar::Float))
        .unwrap_or_else(|_| Scalar::Text(value.to_string()))
}

/// A scalar as it is substituted into SQL and shown.
pub fn scalar_text(s: &Scalar) -> String {
    match s {
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) => f.to_string(),
        Scalar::Text(t) => t.clone(),
    }
}

/// Compiles `spec` (read from `file`, whose text is `text`) for `dialect`, with `--set`
/// overrides.
pub fn compile(
    spec: &Spec,
    file: &str,
    text: &str,
    dialect: Dialect,
    overrides: &[(String, Scalar)],
) -> Result<Program, Vec<String>> {
    let mut e = Errors { file, text, list: Vec::new() };
    let mut params: BTreeMap<String, Scalar> =
        spec.params.iter().map(|(k, v)| (k.clone(), v.get_ref().clone())).collect();
    for (name, value) in overrides {
        match params.get_mut(name) {
            Some(v) => *v = value.clone(),
            None => e.list.push(format!(
                "--set {name}: {file} has no parameter {name} (its parameters: {})",
                spec.params.keys().cloned().collect::<Vec<_>>().join(", ")
            )),
        }
    }
    let mut slots: Vec<String> = Vec::new();
    let mut slot = |name: &str| match slots.iter().position(|s| s == name) {
        Some(i) => i,
        None => {
            slots.push(name.to_string());
            slots.len() - 1
        }
    };

    // Generators are kept with their bounds resolved, so drawing looks nothing up; `ids`
    // may name any table.
    // Every table (or set) with its rows, for `ids` generators anywhere in the file.
    let table_rows: Vec<(String, i64)> = spec
        .tables
        .iter()
        .map(|t| {
            let rows = match t.rows.get_ref() {
                Number::Int(i) => Some(*i),
                Number::Param(p) => match params.get(p.trim().trim_start_matches('{').trim_end_matches('}')) {
                    Some(Scalar::Int(i)) => Some(*i),
                    _ => None,
                },
            };
            (t.name.get_ref().clone(), rows.unwrap_or(1))
        })
        .collect();
    // Table sets first: a column or parameter may draw table numbers of any set.
    let mut sets: Vec<(String, u32)> = Vec::new();
    for t in &spec.tables {
        if let Some(c) = &t.count {
            match number(&mut e, &params, c.span(), c.get_ref(), "count") {
                n @ 1..=100_000 => sets.push((t.name.get_ref().clone(), n as u32)),
                n => e.at(c, format!("table set {}: count {n} must be from 1 to 100000", t.name.get_ref())),
            }
        }
    }
    let mut tables = Vec::new();
    for t in &spec.tables {
        let rows = number(&mut e, &params, t.rows.span(), t.rows.get_ref(), "rows");
        if rows < 0 {
            e.at(&t.rows, format!("table {}: rows {rows} must be at least 0", t.name.get_ref()));
        }
        let tname = t.name.get_ref();
        if !identifier(tname) {
            e.at(&t.name, format!("table name {tname:?}: use letters, digits and _ (at most 60)"));
        }
        let (mut columns, mut generators) = (Vec::new(), Vec::new());
        for c in &t.columns {
            let cname = c.name.get_ref();
            if !identifier(cname) {
                e.at(&c.name, format!("column name {cname:?}: use letters, digits and _ (at most 60)"));
            }
            let ty = ColumnType::parse(c.ty.get_ref()).unwrap_or_else(|| {
                e.at(&c.ty, format!("column {cname}: unknown type {:?} (integer, bigint, smallint, double, decimal(P,S), char(N), varchar(N), text, blob)", c.ty.get_ref()));
                ColumnType::Text
            });
            let g = generator(&mut e, &params, &table_rows, &sets, &c.gen, true);
            // A single integer key numbered by row is the database's to generate later.
            let generated = ty.is_integer() && g == Generator::Row && t.primary_key == [cname.clone()];
            columns.push(ColumnDef { name: cname.clone(), ty, generated });
            generators.push(g);
        }
        if t.columns.is_empty() {
            e.at(&t.name, format!("table {tname} has no columns"));
        }
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.get_ref().as_str()).collect();
        for key in t.primary_key.iter().chain(t.indexes.iter().flatten()) {
            if !names.contains(&key.as_str()) {
                e.at(&t.name, format!("table {tname}: key column {key} is not one of its columns"));
            }
        }
        let count = sets.iter().find(|(n, _)| n == tname).map(|x| x.1);
        let names: Vec<String> = match count {
            Some(n) => (1..=n).map(|i| format!("{tname}{i}")).collect(),
            None => vec![tname.clone()],
        };
        for table in names {
            tables.push(TableProgram {
                def: TableDef {
                    name: table,
                    columns: columns.clone(),
                    primary_key: t.primary_key.clone(),
                    indexes: t.indexes.clone(),
                },
                rows: rows.max(0) as u64,
                generators: generators.clone(),
                set: count.map(|_| tname.clone()),
            });
        }
    }
    let expanded: Vec<&str> = tables.iter().map(|t| t.name()).collect();
    if expanded.iter().enumerate().any(|(i, n)| expanded[..i].contains(n)) {
        e.list.push(format!("{file}: two tables share a name"));
    }
    // Client values: drawn at connect, plus anything a statement saves for the client.
    let mut client = Vec::new();
    for (name, g) in &spec.client {
        client.push((slot(name), generator(&mut e, &params, &table_rows, &sets, g, false)));
    }
    let client_saved: Vec<&String> =
        spec.transactions.iter().flat_map(|t| &t.get_ref().statements).flat_map(|s| s.save_client.keys()).collect();

    if spec.transactions.is_empty() {
        e.list.push(format!("{file}: no [[transactions]]: a workload needs at least one"));
    }
    let mut transactions = Vec::new();
    for t in &spec.transactions {
        let tx = t.get_ref();
        let name = tx.name.get_ref();
        if !identifier(name) {
            e.at(&tx.name, format!("transaction name {name:?}: use letters, digits and _"));
        }
        let weight = number(&mut e, &params, tx.weight.span(), tx.weight.get_ref(), "weight");
        let switched_off = weight == 0 && matches!(tx.weight.get_ref(), Number::Param(_));
        if !(1..=1_000_000).contains(&weight) && !switched_off {
            e.at(&tx.weight, format!("transaction {name}: weight {weight} must be a whole number from 1 to 1000000"));
        }
        if tx.statements.is_empty() {
            e.at(&tx.name, format!("transaction {name} has no statements"));
        }
        let begin = match tx.begin.get_ref() {
            Flag::Bool(b) => *b,
            Flag::Param(p) => match number(&mut e, &params, tx.begin.span(), &Number::Param(p.clone()), "begin") {
                0 => false,
                1 => true,
                n => {
                    e.at(&tx.begin, format!("transaction {name}: begin {n} must be 1 or 0 (or true or false)"));
                    false
                }
            },
        };
        let mut steps = steps_of(&mut e, &params, name, &tx.statements);
        // What a statement may use: client values, the transaction's draws, what earlier
        // statements saved, its own draws.
        let mut known: Vec<String> =
            spec.client.keys().cloned().chain(client_saved.iter().map(|s| s.to_string())).collect();
        let mut tx_params = Vec::new();
        for (p, g) in &tx.params {
            tx_params.push((slot(p), generator(&mut e, &params, &table_rows, &sets, g, false)));
            known.push(p.clone());
        }
        let mut statements = Vec::new();
        for (i, st) in tx.statements.iter().enumerate() {
            let sname = st.name.get_ref();
            if !identifier(sname) {
                e.at(&st.name, format!("statement name {sname:?}: use letters, digits and _"));
            }
            if begin && (sname == "begin" || sname == "commit") {
                e.at(&st.name, format!("statement name {sname} is taken: transaction {name} measures its own {sname}"));
            }
            // A group's `once` values: drawn before its repetitions, known from here on.
            if let Some(step) = steps.iter_mut().find(|s| s.first == i) {
                for (p, g) in &st.once {
                    step.once.push((slot(p), generator(&mut e, &params, &table_rows, &sets, g, false)));
                    known.push(p.clone());
                }
            } else if let Some((_, g)) = st.once.iter().next() {
                e.at(
                    g,
                    format!(
                        "statement {name}.{sname} is inside a group: `once` belongs on the group's first statement"
                    ),
                );
            }
            let mut own = Vec::new();
            for (p, g) in &st.params {
                own.push((slot(p), generator(&mut e, &params, &table_rows, &sets, g, false)));
            }
            let Some(sql) = st.sql_for(dialect) else {
                e.at(
                    &st.name,
                    format!(
                        "statement {name}.{sname} has no SQL for {} (add sql = or {} =)",
                        dialect.name(),
                        dialect.name()
                    ),
                );
                continue;
            };
            let mut text = substitute(&mut e, &params, sql);
            // A batch repeats the VALUES row; row r > 0 binds its own draws, `name#r`.
            let mut rows_at: Option<(usize, usize, usize)> = None;
            if let Some(b) = &st.batch {
                let rows = number(&mut e, &params, b.span(), b.get_ref(), "batch");
                match (rows, values_row(&text)) {
                    (1..=100_000, Some((open, close))) => {
                        let before = positional(&text[..open]).map(|(_, n)| n.len()).unwrap_or(0);
                        let per_row = positional(&text[open..=close]).map(|(_, n)| n.len()).unwrap_or(0);
                        let row = &text[open..=close];
                        text =
                            format!("{}{}{}", &text[..open], vec![row; rows as usize].join(", "), &text[close + 1..]);
                        rows_at = Some((before, per_row, rows as usize));
                        for r in 1..rows {
                            for (p, g) in &st.params {
                                own.push((
                                    slot(&format!("{p}#{r}")),
                                    generator(&mut e, &params, &table_rows, &sets, g, false),
                                ));
                            }
                        }
                    }
                    (1..=100_000, None) => e.at(
                        b,
                        format!("statement {name}.{sname}: batch needs an INSERT ... VALUES (...) row to repeat"),
                    ),
                    _ => e.at(b, format!("statement {name}.{sname}: batch {rows} must be between 1 and 100000")),
                }
            }
            // `set{:t}`: one table of a set, by the number in value t.
            let mut on_table: Option<(String, u32)> = None;
            match table_marker(&text) {
                Ok(None) => {}
                Ok(Some((set, value, marker))) => match sets.iter().find(|(n, _)| *n == set) {
                    Some((_, count)) => {
                        text = text.replace(&marker, "\u{1}");
                        on_table = Some((value, *count));
                    }
                    None => e.at(
                        sql,
                        format!("statement {name}.{sname}: {set}{marker} names no table set (a [[tables]] with count)"),
                    ),
                },
                Err(m) => e.at(sql, format!("statement {name}.{sname}: {m}")),
            }
            let (positional, names) = match positional(&text) {
                Ok(x) => x,
                Err(m) => {
                    e.at(sql, format!("statement {name}.{sname}: {m}"));
                    continue;
                }
            };
            let mut args = Vec::new();
            for (k, n) in names.iter().enumerate() {
                let row = rows_at.and_then(|(before, per_row, rows)| {
                    (k >= before && per_row > 0 && k < before + per_row * rows).then(|| (k - before) / per_row)
                });
                if let (Some(r @ 1..), true) = (row, st.params.contains_key(n)) {
                    args.push(slot(&format!("{n}#{r}")));
                    continue;
                }
                if known.contains(n) || st.params.contains_key(n) {
                    args.push(slot(n));
                    continue;
                }
                let later =
                    tx.statements[i..].iter().find(|s| s.save.contains_key(n)).map(|s| s.name.get_ref().clone());
                match later {
                    Some(by) => e.at(sql, format!("statement {name}.{sname} uses :{n} before statement {by} saves it")),
                    None => e.at(
                        sql,
                        format!(
                            "statement {name}.{sname} uses :{n}, which is not defined (known here: {})",
                            list(&known, &st.params)
                        ),
                    ),
                }
            }
            if args.len() > 32_766 {
                e.at(sql, format!("statement {name}.{sname} binds {} values; SQLite takes at most 32766 per statement (MySQL and PostgreSQL 65535): use a smaller batch", args.len()));
            }
            let mut saves = Vec::new();
            for (map, client_scope) in [(&st.save, false), (&st.save_client, true)] {
                for (var, column) in map {
                    // PostgreSQL has no last insert id: there it is the first column RETURNING gives.
                    let generated = column.get_ref() == "last_insert_id";
                    if generated && !dialect.reports_insert_id() && !text.to_ascii_uppercase().contains("RETURNING") {
                        e.at(column, format!("statement {name}.{sname}: PostgreSQL has no last insert id: add RETURNING <id column> to its postgres SQL"));
                    }
                    let from = match (generated, dialect.reports_insert_id()) {
                        (false, _) => SaveFrom::Column(column.get_ref().clone()),
                        (true, true) => SaveFrom::InsertId,
                        (true, false) => SaveFrom::FirstColumn,
                    };
                    saves.push(Save { slot: slot(var), from, client_scope });
                    if !client_scope {
                        known.push(var.clone());
                    }
                }
            }
            let per_table = on_table.map(|(value, count)| {
                if !(known.contains(&value) || st.params.contains_key(&value)) {
                    e.at(sql, format!("statement {name}.{sname} picks its table by :{value}, which is not defined (known here: {})", list(&known, &st.params)));
                }
                let texts = (1..=count).map(|n| positional.replace('\u{1}', &n.to_string())).collect::<Vec<_>>();
                (slot(&value), texts)
            });
            let positional = match &per_table {
                Some((_, texts)) => texts[0].clone(),
                None => positional,
            };
            // A set of one table needs no choosing.
            let per_table = per_table.filter(|(_, texts)| texts.len() > 1);
            known.extend(st.params.keys().cloned());
            statements.push(StatementProgram {
                name: if spec.workload.bare_names { sname.clone() } else { format!("{name}.{sname}") },
                class: classify(&positional),
                per_table,
                sql: positional,
                args,
                params: own,
                saves,
            });
        }
        // Statements repeated 0 times are left out (checked like the others).
        let kept: Vec<bool> = (0..tx.statements.len())
            .map(|i| steps.iter().any(|s| s.repeat > 0 && (s.first..s.first + s.count).contains(&i)))
            .collect();
        let (statements, steps) = if statements.len() == tx.statements.len() {
            let mut index = Vec::new();
            let mut out = Vec::new();
            for (i, st) in statements.into_iter().enumerate() {
                index.push(out.len());
                if kept[i] {
                    out.push(st);
                }
            }
            let steps = steps
                .iter()
                .filter(|s| s.repeat > 0)
                .map(|s| StepProgram { first: index[s.first], ..s.clone() })
                .collect();
            (out, steps)
        } else {
            (statements, Vec::new()) // errors reported: nothing runs
        };
        let mut seen: Vec<&str> = statements.iter().map(|s| s.name.as_str()).collect();
        seen.sort();
        if seen.windows(2).any(|w| w[0] == w[1]) {
            e.at(&tx.name, format!("transaction {name}: two statements that run share a name"));
        }
        if statements.is_empty() && !tx.statements.is_empty() {
            e.at(&tx.name, format!("transaction {name}: every statement is repeated 0 times"));
        }
        transactions.push(TransactionProgram {
            name: name.clone(),
            weight: weight.clamp(0, 1_000_000) as u32,
            begin,
            think_ms: tx.think_ms,
            params: tx_params,
            statements,
            steps,
        });
    }
    // A transaction switched off (weight 0 from a parameter) is not part of the run.
    transactions.retain(|t| t.weight > 0 || spec.transactions.len() == 1);
    if spec.workload.bare_names && transactions.len() > 1 {
        e.at(&spec.workload.name, "bare_names needs a single transaction (statement names would clash)");
    }
    for list in std::iter::once(&spec.client)
        .chain(spec.transactions.iter().map(|t| &t.get_ref().params))
        .chain(spec.transactions.iter().flat_map(|t| &t.get_ref().statements).map(|s| &s.params))
    {
        for g in list.values() {
            if let Generator::Offset(from, _) = g.get_ref() {
                if !list.get(from).is_some_and(|f| !matches!(f.get_ref(), Generator::Offset(..))) {
                    e.at(g, format!("offset of {from:?}, which is not drawn beside it (an offset adds to a value of the same params)"));
                }
            }
        }
    }
    if let (Some(first), true) = (spec.transactions.first(), transactions.iter().all(|t| t.weight == 0)) {
        e.at(&first.get_ref().weight, "every transaction has weight 0: nothing would run");
    }
    let mut names: Vec<&String> = transactions.iter().map(|t| &t.name).collect();
    names.sort();
    names.dedup();
    if names.len() != transactions.len() {
        e.list.push(format!("{file}: two transactions share a name"));
    }

    let mut checks = Vec::new();
    for c in &spec.checks {
        match c.sql_for(dialect) {
            Some(sql) => checks.push((c.name.get_ref().clone(), substitute(&mut e, &params, sql))),
            None => e.at(&c.name, format!("check {} has no SQL for {}", c.name.get_ref(), dialect.name())),
        }
    }
    if !e.list.is_empty() {
        return Err(e.list);
    }
    Ok(Program {
        name: spec.workload.name.get_ref().clone(),
        description: spec.workload.description.clone(),
        bare_names: spec.workload.bare_names,
        dialect,
        params,
        slots,
        client,
        tables,
        transactions,
        checks,
    })
}

/// The steps of a transaction: each statement once, unless `repeat` runs it (and the
/// `group - 1` after it) several times.
fn steps_of(
    e: &mut Errors,
    params: &BTreeMap<String, Scalar>,
    tx: &str,
    statements: &[super::spec::StatementSpec],
) -> Vec<StepProgram> {
    let mut steps = Vec::new();
    let mut i = 0;
    while i < statements.len() {
        let st = &statements[i];
        let Some(r) = &st.repeat else {
            if let Some(g) = &st.group {
                e.at(g, format!("statement {tx}.{}: group needs repeat", st.name.get_ref()));
            }
            steps.push(StepProgram { first: i, count: 1, repeat: 1, once: Vec::new() });
            i += 1;
            continue;
        };
        let repeat = number(e, params, r.span(), r.get_ref(), "repeat");
        if !(0..=1_000_000).contains(&repeat) {
            e.at(r, format!("statement {tx}.{}: repeat {repeat} must be from 0 to 1000000", st.name.get_ref()));
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
            repeat: repeat.clamp(0, 1_000_000) as u32,
            once: Vec::new(),
        });
        i += count as usize;
    }
    steps
}

fn list(known: &[String], own: &BTreeMap<String, Spanned<Generator>>) -> String {
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
fn number(e: &mut Errors, params: &BTreeMap<String, Scalar>, span: Range<usize>, n: &Number, what: &str) -> i64 {
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
fn generator(
    e: &mut Errors,
    params: &BTreeMap<String, Scalar>,
    tables: &[(String, i64)],
    sets: &[(String, u32)],
    g: &Spanned<Generator>,
    column: bool,
) -> Generator {
    let mut resolved = g.get_ref().clone();
    match &mut resolved {
        Generator::Uniform(bounds)
        | Generator::Gaussian(bounds)
        | Generator::Special(bounds)
        | Generator::Pareto(bounds)
        | Generator::Zipfian(bounds) => {
            let lo = number(e, params, g.span(), &bounds[0], "range");
            let hi = number(e, params, g.span(), &bounds[1], "range");
            if lo > hi {
                e.at(g, format!("range [{lo}, {hi}] is empty: the first bound must not exceed the second"));
            } else if (hi as i128 - lo as i128) >= 1 << 32 {
                e.at(
                    g,
                    format!("range [{lo}, {hi}] spans more than 2^32 values (the distributions draw 32-bit offsets)"),
                );
            }
            *bounds = [Number::Int(lo), Number::Int(hi)];
        }
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
        Generator::Unique if column => {
            e.at(g, "\"unique\" ids are drawn by clients: it is for parameters, not columns")
        }
        Generator::Offset(_, n) => {
            let add = number(e, params, g.span(), n, "offset");
            *n = Number::Int(add);
        }
        _ => {}
    }
    resolved
}

/// `{param}` replaced by its value; `{{` and `}}` are literal braces.
fn substitute(e: &mut Errors, params: &BTreeMap<String, Scalar>, sql: &Spanned<String>) -> String {
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

#[cfg(test)]
mod tests;
