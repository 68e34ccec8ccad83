//! Compiling a workload file's spec for one database: tables, transactions, statements
//! and checks, with every name checked and every error located in the file.

use super::resolve::{generator, list, number, steps_of, substitute};
use super::sql::{classify, table_marker, values_row};
use super::*;
use crate::model::{ColumnDef, ColumnType};
use crate::workload::spec::{line_col, Flag, Number, Spec, SqlTexts};
use toml::Spanned;

/// Errors, each `file:line:col: message`, collected over the whole file.
pub(super) struct Errors<'a> {
    pub(super) file: &'a str,
    pub(super) text: &'a str,
    pub(super) list: Vec<String>,
}

impl Errors<'_> {
    pub(super) fn at<T>(&mut self, spanned: &Spanned<T>, message: impl std::fmt::Display) {
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
    for list in std::iter::once(&spec.client)
        .chain(spec.transactions.iter().map(|t| &t.get_ref().params))
        .chain(spec.transactions.iter().flat_map(|t| &t.get_ref().statements).map(|s| &s.params))
    {
        for g in list.values() {
            if let Generator::Offset(from, _) = g.get_ref() {
                if !list.get(from).is_some_and(|f| !matches!(f.get_ref(), Generator::Offset(..))) {
                    c.e.at(g, format!("offset of {from:?}, which is not drawn beside it (an offset adds to a value of the same params)"));
                }
            }
        }
    }
    if let (Some(first), true) = (spec.transactions.first(), transactions.iter().all(|t| t.weight == 0)) {
        c.e.at(&first.get_ref().weight, "every transaction has weight 0: nothing would run");
    }
    let mut names: Vec<&String> = transactions.iter().map(|t| &t.name).collect();
    names.sort();
    names.dedup();
    if names.len() != transactions.len() {
        c.e.list.push(format!("{file}: two transactions share a name"));
    }

    let mut checks = Vec::new();
    for check in &spec.checks {
        match check.sql_for(dialect) {
            Some(sql) => checks.push((check.name.get_ref().clone(), c.substitute(sql))),
            None => c.e.at(&check.name, format!("check {} has no SQL for {}", check.name.get_ref(), dialect.name())),
        }
    }
    let Compiler { e, params, slots, .. } = c;
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

/// What compiling keeps while it walks the file: errors, parameters, value slots, tables.
struct Compiler<'a> {
    e: Errors<'a>,
    params: BTreeMap<String, Scalar>,
    /// Names of the value slots each client keeps, by first use.
    slots: Vec<String>,
    /// Every table (or set) with its rows, for `ids` generators anywhere in the file.
    table_rows: Vec<(String, i64)>,
    /// Table sets and their counts.
    sets: Vec<(String, u32)>,
    dialect: Dialect,
}

impl Compiler<'_> {
    /// The slot of value `name`, made on first use.
    fn slot(&mut self, name: &str) -> usize {
        match self.slots.iter().position(|s| s == name) {
            Some(i) => i,
            None => {
                self.slots.push(name.to_string());
                self.slots.len() - 1
            }
        }
    }

    fn generator(&mut self, g: &Spanned<Generator>, column: bool) -> Generator {
        generator(&mut self.e, &self.params, &self.table_rows, &self.sets, g, column)
    }

    fn number(&mut self, span: std::ops::Range<usize>, n: &Number, what: &str) -> i64 {
        number(&mut self.e, &self.params, span, n, what)
    }

    fn substitute(&mut self, sql: &Spanned<String>) -> String {
        substitute(&mut self.e, &self.params, sql)
    }

    /// The tables, table sets expanded, with their generators resolved.
    fn tables(&mut self, spec: &Spec) -> Vec<TableProgram> {
        let (e, params) = (&mut self.e, &self.params);
        // Every table (or set) with its rows, for `ids` generators anywhere in the file;
        // generators are kept with their bounds resolved, so drawing looks nothing up.
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
                match number(e, params, c.span(), c.get_ref(), "count") {
                    n @ 1..=100_000 => sets.push((t.name.get_ref().clone(), n as u32)),
                    n => e.at(c, format!("table set {}: count {n} must be from 1 to 100000", t.name.get_ref())),
                }
            }
        }
        let mut tables = Vec::new();
        for t in &spec.tables {
            let rows = number(e, params, t.rows.span(), t.rows.get_ref(), "rows");
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
                let g = generator(e, params, &table_rows, &sets, &c.gen, true);
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
            e.list.push(format!("{}: two tables share a name", e.file));
        }
        self.table_rows = table_rows;
        self.sets = sets;
        tables
    }

    /// One transaction: its draws, steps and statements, every name checked in order.
    fn transaction(
        &mut self,
        spec: &Spec,
        t: &Spanned<crate::workload::spec::TransactionSpec>,
        client_saved: &[&String],
    ) -> TransactionProgram {
        let tx = t.get_ref();
        let name = tx.name.get_ref();
        if !identifier(name) {
            self.e.at(&tx.name, format!("transaction name {name:?}: use letters, digits and _"));
        }
        let weight = self.number(tx.weight.span(), tx.weight.get_ref(), "weight");
        let switched_off = weight == 0 && matches!(tx.weight.get_ref(), Number::Param(_));
        if !(1..=1_000_000).contains(&weight) && !switched_off {
            self.e.at(
                &tx.weight,
                format!("transaction {name}: weight {weight} must be a whole number from 1 to 1000000"),
            );
        }
        if tx.statements.is_empty() {
            self.e.at(&tx.name, format!("transaction {name} has no statements"));
        }
        let begin = match tx.begin.get_ref() {
            Flag::Bool(b) => *b,
            Flag::Param(p) => match self.number(tx.begin.span(), &Number::Param(p.clone()), "begin") {
                0 => false,
                1 => true,
                n => {
                    self.e.at(&tx.begin, format!("transaction {name}: begin {n} must be 1 or 0 (or true or false)"));
                    false
                }
            },
        };
        let mut steps = steps_of(&mut self.e, &self.params, name, &tx.statements);
        // What a statement may use: client values, the transaction's draws, what earlier
        // statements saved, its own draws.
        let mut known: Vec<String> =
            spec.client.keys().cloned().chain(client_saved.iter().map(|s| s.to_string())).collect();
        let mut tx_params = Vec::new();
        for (p, g) in &tx.params {
            tx_params.push((self.slot(p), self.generator(g, false)));
            known.push(p.clone());
        }
        let mut statements = Vec::new();
        for (i, st) in tx.statements.iter().enumerate() {
            let sname = st.name.get_ref();
            if !identifier(sname) {
                self.e.at(&st.name, format!("statement name {sname:?}: use letters, digits and _"));
            }
            if begin && (sname == "begin" || sname == "commit") {
                self.e.at(
                    &st.name,
                    format!("statement name {sname} is taken: transaction {name} measures its own {sname}"),
                );
            }
            // A group's `once` values: drawn before its repetitions, known from here on.
            if let Some(step) = steps.iter_mut().find(|s| s.first == i) {
                for (p, g) in &st.once {
                    step.once.push((self.slot(p), self.generator(g, false)));
                    known.push(p.clone());
                }
            } else if let Some((_, g)) = st.once.iter().next() {
                self.e.at(
                    g,
                    format!(
                        "statement {name}.{sname} is inside a group: `once` belongs on the group's first statement"
                    ),
                );
            }
            let mut own = Vec::new();
            for (p, g) in &st.params {
                own.push((self.slot(p), self.generator(g, false)));
            }
            let Some(sql) = st.sql_for(self.dialect) else {
                self.e.at(
                    &st.name,
                    format!(
                        "statement {name}.{sname} has no SQL for {} (add sql = or {} =)",
                        self.dialect.name(),
                        self.dialect.name()
                    ),
                );
                continue;
            };
            let mut text = self.substitute(sql);
            // A batch repeats the VALUES row; row r > 0 binds its own draws, `name#r`.
            let mut rows_at: Option<(usize, usize, usize)> = None;
            if let Some(b) = &st.batch {
                let rows = self.number(b.span(), b.get_ref(), "batch");
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
                                own.push((self.slot(&format!("{p}#{r}")), self.generator(g, false)));
                            }
                        }
                    }
                    (1..=100_000, None) => self.e.at(
                        b,
                        format!("statement {name}.{sname}: batch needs an INSERT ... VALUES (...) row to repeat"),
                    ),
                    _ => self.e.at(b, format!("statement {name}.{sname}: batch {rows} must be between 1 and 100000")),
                }
            }
            // `set{:t}`: one table of a set, by the number in value t.
            let mut on_table: Option<(String, u32)> = None;
            match table_marker(&text) {
                Ok(None) => {}
                Ok(Some((set, value, marker))) => match self.sets.iter().find(|(n, _)| *n == set) {
                    Some((_, count)) => {
                        text = text.replace(&marker, "\u{1}");
                        on_table = Some((value, *count));
                    }
                    None => self.e.at(
                        sql,
                        format!("statement {name}.{sname}: {set}{marker} names no table set (a [[tables]] with count)"),
                    ),
                },
                Err(m) => self.e.at(sql, format!("statement {name}.{sname}: {m}")),
            }
            let (positional, names) = match positional(&text) {
                Ok(x) => x,
                Err(m) => {
                    self.e.at(sql, format!("statement {name}.{sname}: {m}"));
                    continue;
                }
            };
            let mut args = Vec::new();
            for (k, n) in names.iter().enumerate() {
                let row = rows_at.and_then(|(before, per_row, rows)| {
                    (k >= before && per_row > 0 && k < before + per_row * rows).then(|| (k - before) / per_row)
                });
                if let (Some(r @ 1..), true) = (row, st.params.contains_key(n)) {
                    args.push(self.slot(&format!("{n}#{r}")));
                    continue;
                }
                if known.contains(n) || st.params.contains_key(n) {
                    args.push(self.slot(n));
                    continue;
                }
                let later =
                    tx.statements[i..].iter().find(|s| s.save.contains_key(n)).map(|s| s.name.get_ref().clone());
                match later {
                    Some(by) => {
                        self.e.at(sql, format!("statement {name}.{sname} uses :{n} before statement {by} saves it"))
                    }
                    None => self.e.at(
                        sql,
                        format!(
                            "statement {name}.{sname} uses :{n}, which is not defined (known here: {})",
                            list(&known, &st.params)
                        ),
                    ),
                }
            }
            if args.len() > 32_766 {
                self.e.at(sql, format!("statement {name}.{sname} binds {} values; SQLite takes at most 32766 per statement (MySQL and PostgreSQL 65535): use a smaller batch", args.len()));
            }
            let mut saves = Vec::new();
            for (map, client_scope) in [(&st.save, false), (&st.save_client, true)] {
                for (var, column) in map {
                    // PostgreSQL has no last insert id: there it is the first column RETURNING gives.
                    let generated = column.get_ref() == "last_insert_id";
                    if generated
                        && !self.dialect.reports_insert_id()
                        && !text.to_ascii_uppercase().contains("RETURNING")
                    {
                        self.e.at(column, format!("statement {name}.{sname}: PostgreSQL has no last insert id: add RETURNING <id column> to its postgres SQL"));
                    }
                    let from = match (generated, self.dialect.reports_insert_id()) {
                        (false, _) => SaveFrom::Column(column.get_ref().clone()),
                        (true, true) => SaveFrom::InsertId,
                        (true, false) => SaveFrom::FirstColumn,
                    };
                    saves.push(Save { slot: self.slot(var), from, client_scope });
                    if !client_scope {
                        known.push(var.clone());
                    }
                }
            }
            let per_table = on_table.map(|(value, count)| {
            if !(known.contains(&value) || st.params.contains_key(&value)) {
                self.e.at(sql, format!("statement {name}.{sname} picks its table by :{value}, which is not defined (known here: {})", list(&known, &st.params)));
            }
            let texts = (1..=count).map(|n| positional.replace('\u{1}', &n.to_string())).collect::<Vec<_>>();
            (self.slot(&value), texts)
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
            self.e.at(&tx.name, format!("transaction {name}: two statements that run share a name"));
        }
        if statements.is_empty() && !tx.statements.is_empty() {
            self.e.at(&tx.name, format!("transaction {name}: every statement is repeated 0 times"));
        }
        TransactionProgram {
            name: name.clone(),
            weight: weight.clamp(0, 1_000_000) as u32,
            begin,
            think_ms: tx.think_ms,
            params: tx_params,
            statements,
            steps,
        }
    }
}
