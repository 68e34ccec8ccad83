//! Compiling a workload file's spec for one database: tables, transactions, statements
//! and checks, with every name checked and every error located in the file.

use super::errors::Errors;
use super::resolve::{generator, number, substitute};
use super::*;
use crate::model::{ColumnDef, ColumnType};
use crate::workload::spec::{CheckExpect, KeepSpec, Number, Spec, SqlTexts, TableSpec};
use toml::Spanned;

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
) -> Result<Program, super::errors::CompileErrors> {
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
    let mut c = Compiler { e, params, slots: Vec::new(), table_rows: Vec::new(), sets: Vec::new(), dialect };
    let tables = c.tables(spec);
    // Client values: drawn at connect, plus anything a statement saves for the client.
    let mut client = Vec::new();
    for (name, g) in &spec.client {
        let g = c.generator(g, false);
        client.push((c.slot(name), g));
    }
    let client_saved: Vec<&String> =
        spec.transactions.iter().flat_map(|t| &t.get_ref().statements).flat_map(|s| s.save_client.keys()).collect();
    if spec.transactions.is_empty() {
        c.e.list.push(format!("{file}: no [[transactions]]: a workload needs at least one"));
    }
    let mut transactions: Vec<TransactionProgram> =
        spec.transactions.iter().map(|t| c.transaction(spec, t, &client_saved)).collect();
    // A transaction switched off (weight 0 from a parameter) is not part of the run.
    transactions.retain(|t| t.weight > 0 || spec.transactions.len() == 1);
    if spec.workload.bare_names && transactions.len() > 1 {
        c.e.at(&spec.workload.name, "bare_names needs a single transaction (statement names would clash)");
    }
    if let Some(f) = &spec.workload.follows {
        follows(&mut c.e, f, spec);
    }
    let deck = deck(&mut c.e, spec, &transactions);
    c.check_offsets(spec);
    c.check_transactions(spec, &transactions);
    let [checks, prepare_checks, run_checks] = c.checks(spec, dialect);
    let tallies = c.tallies(spec, dialect);
    let Compiler { e, params, slots, .. } = c;
    if !e.list.is_empty() {
        return Err(super::errors::CompileErrors(e.list));
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
        prepare_checks,
        run_checks,
        tallies,
        follows: spec.workload.follows.as_ref().map(|f| f.get_ref().clone()),
        deck,
    })
}

/// `pick = "deck"`: true; a deck holds at most 100000 cards.
fn deck(e: &mut Errors, spec: &Spec, transactions: &[TransactionProgram]) -> bool {
    let Some(pick) = &spec.workload.pick else { return false };
    match pick.get_ref().as_str() {
        "weighted" => false,
        "deck" => {
            let cards: u64 = transactions.iter().map(|t| t.weight as u64).sum();
            if cards > 100_000 {
                e.at(pick, format!("pick = \"deck\" deals one card per unit of weight: {cards} cards is over 100000 (use smaller weights)"));
            }
            true
        }
        other => {
            e.at(pick, format!("pick {other:?}: \"weighted\" or \"deck\""));
            false
        }
    }
}

/// `follows = "tpc-c"`: the figures and the audit find the five types by name and the
/// warehouses by parameter.
fn follows(e: &mut Errors, f: &Spanned<String>, spec: &Spec) {
    if f.get_ref() != "tpc-c" {
        return e.at(f, format!("follows {:?}: the benchmarks whose rules fairbench applies are: tpc-c", f.get_ref()));
    }
    let names: Vec<&str> = spec.transactions.iter().map(|t| t.get_ref().name.get_ref().as_str()).collect();
    for (name, spec_name, ..) in crate::model::tpcc::TYPES {
        if !names.contains(&name) {
            e.at(f, format!("follows \"tpc-c\" needs a transaction named {name} (TPC-C's {spec_name})"));
        }
    }
    if !matches!(spec.params.get("warehouses").map(|p| p.get_ref()), Some(Scalar::Int(_))) {
        e.at(f, "follows \"tpc-c\" needs an integer parameter `warehouses`");
    }
}

/// What compiling keeps while it walks the file: errors, parameters, value slots, tables.
pub(super) struct Compiler<'a> {
    pub(super) e: Errors<'a>,
    pub(super) params: BTreeMap<String, Scalar>,
    /// Names of the value slots each client keeps, by first use.
    slots: Vec<String>,
    /// Every table (or set) with its rows, for `ids` generators anywhere in the file.
    table_rows: Vec<(String, i64)>,
    /// Table sets and their counts.
    pub(super) sets: Vec<(String, u32)>,
    pub(super) dialect: Dialect,
}

impl Compiler<'_> {
    /// Each `offset` adds to a value drawn beside it (in the same `params`); each
    /// `other_than` avoids one drawn beside it or a client value.
    fn check_offsets(&mut self, spec: &Spec) {
        let drawn = |list: &BTreeMap<String, Spanned<Generator>>, name: &String| {
            list.get(name).is_some_and(|f| !matches!(f.get_ref(), Generator::Offset(..) | Generator::OtherThan(..)))
        };
        for list in std::iter::once(&spec.client)
            .chain(spec.transactions.iter().map(|t| &t.get_ref().params))
            .chain(spec.transactions.iter().flat_map(|t| &t.get_ref().statements).map(|s| &s.params))
        {
            for g in list.values() {
                match g.get_ref() {
                    Generator::Offset(from, _) if !drawn(list, from) => {
                        self.e.at(g, format!("offset of {from:?}, which is not drawn beside it (an offset adds to a value of the same params)"));
                    }
                    Generator::OtherThan(other, ..) if !drawn(list, other) && !drawn(&spec.client, other) => {
                        self.e.at(g, format!("other_than {other:?}: neither a client value nor drawn beside it"));
                    }
                    _ => {}
                }
            }
        }
    }

    /// Something runs, and transaction names are unique.
    fn check_transactions(&mut self, spec: &Spec, transactions: &[TransactionProgram]) {
        if let (Some(first), true) = (spec.transactions.first(), transactions.iter().all(|t| t.weight == 0)) {
            self.e.at(&first.get_ref().weight, "every transaction has weight 0: nothing would run");
        }
        let mut names: Vec<&String> = transactions.iter().map(|t| &t.name).collect();
        names.sort();
        names.dedup();
        if names.len() != transactions.len() {
            self.e.list.push(format!("{}: two transactions share a name", self.e.file));
        }
        for t in transactions.iter().filter(|t| t.deferred) {
            let kind = t.deferred_name();
            if transactions.iter().any(|o| o.name == kind) {
                self.e.list.push(format!(
                    "{}: transaction {} is deferred, and its time from queued to committed is recorded as {kind}, the name of another transaction",
                    self.e.file, t.name
                ));
            }
        }
    }

    /// The slot of value `name`, made on first use.
    pub(super) fn slot(&mut self, name: &str) -> usize {
        match self.slots.iter().position(|s| s == name) {
            Some(i) => i,
            None => {
                self.slots.push(name.to_string());
                self.slots.len() - 1
            }
        }
    }

    pub(super) fn generator(&mut self, g: &Spanned<Generator>, column: bool) -> Generator {
        let names = super::resolve::Names { params: &self.params, tables: &self.table_rows, sets: &self.sets };
        generator(&mut self.e, &names, g, column)
    }

    pub(super) fn number(&mut self, span: std::ops::Range<usize>, n: &Number, what: &str) -> i64 {
        number(&mut self.e, &self.params, span, n, what)
    }

    /// The checks after each run, after prepare, and before each run.
    fn checks(&mut self, spec: &Spec, dialect: Dialect) -> [Vec<Check>; 3] {
        let mut lists: [Vec<Check>; 3] = Default::default();
        for check in &spec.checks {
            let Some(sql) = check.sql_for(dialect) else {
                let name = check.name.get_ref();
                self.e.at(&check.name, format!("check {name} has no SQL for {}", dialect.name()));
                continue;
            };
            let compiled = Check {
                name: check.name.get_ref().clone(),
                sql: self.substitute(sql),
                counts_offending: check.expect == CheckExpect::Zero,
            };
            for (list, wanted) in lists.iter_mut().zip([check.after_run, check.after_prepare, check.before_run]) {
                if wanted {
                    list.push(compiled.clone());
                }
            }
        }
        lists
    }

    /// The tallies, each with its SQL for `dialect`; names must differ.
    fn tallies(&mut self, spec: &Spec, dialect: Dialect) -> Vec<Tally> {
        let mut out: Vec<Tally> = Vec::new();
        for t in &spec.tallies {
            let name = t.name.get_ref();
            if out.iter().any(|o| &o.name == name) {
                self.e.at(&t.name, format!("tally {name} is declared twice"));
            }
            match t.sql_for(dialect) {
                Some(sql) => out.push(Tally { name: name.clone(), sql: self.substitute(sql) }),
                None => self.e.at(&t.name, format!("tally {name} has no SQL for {}", dialect.name())),
            }
        }
        out
    }

    pub(super) fn substitute(&mut self, sql: &Spanned<String>) -> String {
        substitute(&mut self.e, &self.params, sql)
    }

    /// Whether the file declares table `name` (a table, or one of a set's: sbtest3 of sbtest).
    pub(super) fn declares_table(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        let in_set = |(set, count): &(String, u32)| {
            let set = set.to_ascii_lowercase();
            name.strip_prefix(set.as_str())
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| (1..=*count).contains(&n))
        };
        self.table_rows.iter().any(|(t, _)| t.to_ascii_lowercase() == name) || self.sets.iter().any(in_set)
    }

    /// The tables, table sets expanded, with their generators resolved.
    fn tables(&mut self, spec: &Spec) -> Vec<TableProgram> {
        // Every table (or set) with its rows, for `ids` generators anywhere in the file;
        // generators are kept with their bounds resolved, so drawing looks nothing up.
        let rows_of = |t: &TableSpec| {
            // Errors are reported where each table compiles.
            let mut quiet = Errors { file: self.e.file, text: self.e.text, list: Vec::new() };
            let n = super::resolve::number(&mut quiet, &self.params, t.rows.span(), t.rows.get_ref(), "rows");
            quiet.list.is_empty().then_some(n)
        };
        self.table_rows = spec.tables.iter().map(|t| (t.name.get_ref().clone(), rows_of(t).unwrap_or(1))).collect();
        // Table sets first: a column or parameter may draw table numbers of any set.
        for t in &spec.tables {
            if let Some(c) = &t.count {
                match self.number(c.span(), c.get_ref(), "count") {
                    n @ 1..=100_000 => self.sets.push((t.name.get_ref().clone(), n as u32)),
                    n => self.e.at(c, format!("table set {}: count {n} must be from 1 to 100000", t.name.get_ref())),
                }
            }
        }
        let mut tables = Vec::new();
        for t in &spec.tables {
            tables.extend(self.table(t));
        }
        let expanded: Vec<&str> = tables.iter().map(|t| t.name()).collect();
        if expanded.iter().enumerate().any(|(i, n)| expanded[..i].contains(n)) {
            self.e.list.push(format!("{}: two tables share a name", self.e.file));
        }
        tables
    }

    /// One `[[tables]]`: its table, or each table of its set.
    fn table(&mut self, t: &TableSpec) -> Vec<TableProgram> {
        let rows = self.number(t.rows.span(), t.rows.get_ref(), "rows");
        if rows < 0 {
            self.e.at(&t.rows, format!("table {}: rows {rows} must be at least 0", t.name.get_ref()));
        }
        let tname = t.name.get_ref();
        if !identifier(tname) {
            self.e.at(&t.name, format!("table name {tname:?}: use letters, digits and _ (at most 60)"));
        }
        let (columns, generators) = self.columns(t);
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.get_ref().as_str()).collect();
        for key in t.primary_key.iter().chain(t.indexes.iter().flatten()) {
            if !names.contains(&key.as_str()) {
                self.e.at(&t.name, format!("table {tname}: key column {key} is not one of its columns"));
            }
        }
        let keep = t.keep.as_ref().and_then(|k| self.keep(t, k, rows));
        let count = self.sets.iter().find(|(n, _)| n == tname).map(|x| x.1);
        let names: Vec<String> = match count {
            Some(n) => (1..=n).map(|i| format!("{tname}{i}")).collect(),
            None => vec![tname.clone()],
        };
        let program = |name: String| TableProgram {
            def: TableDef {
                name,
                columns: columns.clone(),
                primary_key: t.primary_key.clone(),
                indexes: t.indexes.clone(),
            },
            rows: rows.max(0) as u64,
            generators: generators.clone(),
            set: count.map(|_| tname.clone()),
            keep: keep.clone(),
        };
        names.into_iter().map(program).collect()
    }

    /// A table's `keep`: its column, and at least as many rows drawn as it keeps.
    fn keep(&mut self, t: &TableSpec, k: &KeepSpec, rows: i64) -> Option<Keep> {
        let tname = t.name.get_ref();
        let drawn = self.number(k.drawn.span(), k.drawn.get_ref(), "drawn");
        if drawn < rows.max(0) {
            self.e.at(&k.drawn, format!("table {tname}: keep draws {drawn} rows, fewer than the {rows} it keeps"));
        }
        let column = t.columns.iter().position(|c| c.name.get_ref() == k.column.get_ref());
        let by_row = |g: &Generator| matches!(g, Generator::Row | Generator::ByRow(_) | Generator::Keyed { .. });
        match column.map(|i| t.columns[i].gen.get_ref()) {
            None => self.e.at(
                &k.column,
                format!("table {tname}: keep's column {} is not one of its columns", k.column.get_ref()),
            ),
            // Read again for the test, a random column would not be the value inserted.
            Some(g) if !by_row(g) => self.e.at(
                &k.column,
                format!(
                    "table {tname}: keep's column {} must be numbered by the row (row, by_row or keyed)",
                    k.column.get_ref()
                ),
            ),
            Some(_) => {}
        }
        let at_most = self.generator(&k.at_most, true);
        Some(Keep { drawn: drawn.max(0) as u64, column: column?, at_most })
    }

    /// A table's columns and the generators that fill them.
    fn columns(&mut self, t: &TableSpec) -> (Vec<ColumnDef>, Vec<Generator>) {
        let (mut columns, mut generators) = (Vec::new(), Vec::new());
        for c in &t.columns {
            let cname = c.name.get_ref();
            if !identifier(cname) {
                self.e.at(&c.name, format!("column name {cname:?}: use letters, digits and _ (at most 60)"));
            }
            let ty = ColumnType::parse(c.ty.get_ref()).unwrap_or_else(|| {
                self.e.at(&c.ty, format!("column {cname}: unknown type {:?} (integer, bigint, smallint, double, decimal(P,S), char(N), varchar(N), text, blob, timestamp)", c.ty.get_ref()));
                ColumnType::Text
            });
            let g = self.generator(&c.gen, true);
            // A single integer key numbered by row is the database's to generate later.
            let generated = ty.is_integer() && g == Generator::Row && t.primary_key == [cname.clone()];
            columns.push(ColumnDef { name: cname.clone(), ty, generated });
            generators.push(g);
        }
        if t.columns.is_empty() {
            self.e.at(&t.name, format!("table {} has no columns", t.name.get_ref()));
        }
        (columns, generators)
    }
}
