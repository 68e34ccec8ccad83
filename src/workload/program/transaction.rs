//! Compiling one transaction: its header (name, weight, BEGIN), then each statement in order
//! (SQL, batch rows, the table it picks, the values it binds and saves), then the steps that
//! repeat them, with every name checked where it is used.

use super::compile::Compiler;
use super::resolve::{list, steps_of};
use super::sql::{classify, positional, table_marker, values_row};
use super::*;
use crate::model::RowPick;
use crate::workload::spec::{
    Flag, Number, Pause, PauseDistribution, PauseDistributionSpec, PauseSpec, Repeat, Spec, SqlTexts, StatementSpec,
    TransactionSpec,
};
use toml::Spanned;

/// What the statements of a transaction see while it compiles.
struct Scope<'s> {
    tx: &'s TransactionSpec,
    name: &'s str,
    begin: bool,
    /// Values a statement may use here: client values, the transaction's draws, what earlier
    /// statements saved or drew.
    known: Vec<String>,
}

/// A batch's place in a statement's values: values before the repeated row, values per row,
/// rows.
type BatchRows = (usize, usize, usize);

impl Compiler<'_> {
    /// One transaction: its draws, steps and statements, every name checked in order.
    pub(super) fn transaction(
        &mut self,
        spec: &Spec,
        t: &Spanned<TransactionSpec>,
        client_saved: &[&String],
    ) -> TransactionProgram {
        let tx = t.get_ref();
        let (weight, begin) = self.header(tx);
        let name = tx.name.get_ref();
        let mut steps = steps_of(&mut self.e, &self.params, name, &tx.statements);
        let known = spec.client.keys().cloned().chain(client_saved.iter().map(|s| s.to_string())).collect();
        let mut scope = Scope { tx, name, begin, known };
        let mut tx_params = Vec::new();
        for (p, g) in &tx.params {
            tx_params.push((self.slot(p), self.generator(g, false)));
            scope.known.push(p.clone());
        }
        let mut statements = Vec::new();
        for (i, st) in tx.statements.iter().enumerate() {
            self.once_values(&mut scope, &mut steps, i, st);
            if let Some(compiled) = self.statement(&mut scope, i, st, spec.workload.bare_names) {
                statements.push(compiled);
            }
        }
        let (statements, steps) = if statements.len() == tx.statements.len() {
            without_unrepeated(statements, &steps)
        } else {
            (statements, Vec::new()) // errors reported: nothing runs
        };
        self.check_statement_names(tx, &statements);
        TransactionProgram {
            name: name.clone(),
            weight: weight.clamp(0, 1_000_000) as u32,
            begin,
            think: self.pause(&tx.think_ms, "think_ms"),
            keying: self.pause(&tx.keying_ms, "keying_ms"),
            deferred: self.flag(name, &tx.deferred, "deferred"),
            params: tx_params,
            statements,
            steps,
        }
    }

    /// A pause in milliseconds, its numbers resolved (at most an hour).
    fn pause(&mut self, p: &Spanned<PauseSpec>, what: &str) -> Pause {
        let (n, drawn) = match p.get_ref() {
            PauseSpec::Fixed(n) => (n, false),
            PauseSpec::Drawn(PauseDistributionSpec::Exponential(n)) => (n, true),
        };
        let ms = self.number(p.span(), n, what);
        if !(0..=3_600_000).contains(&ms) {
            self.e.at(p, format!("{what} {ms}: a pause must be from 0 to 3600000 milliseconds"));
        }
        let ms = ms.clamp(0, 3_600_000) as u64;
        match (drawn, ms) {
            (true, 1..) => Pause::Drawn(PauseDistribution::Exponential(ms)),
            _ => Pause::Fixed(ms),
        }
    }

    /// The transaction's name, weight (0: switched off by a parameter) and BEGIN.
    fn header(&mut self, tx: &TransactionSpec) -> (i64, bool) {
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
        let begin = self.flag(name, &tx.begin, "begin");
        (weight, begin)
    }

    /// A flag: true or false, or a `"{param}"` product whose value is 1 or 0.
    fn flag(&mut self, tx: &str, flag: &Spanned<Flag>, what: &str) -> bool {
        match flag.get_ref() {
            Flag::Bool(b) => *b,
            Flag::Param(p) => match self.number(flag.span(), &Number::Param(p.clone()), what) {
                0 => false,
                1 => true,
                n => {
                    self.e.at(flag, format!("transaction {tx}: {what} {n} must be 1 or 0 (or true or false)"));
                    false
                }
            },
        }
    }

    /// A group's `once` values: drawn before its repetitions, known from its first statement
    /// on; a drawn repeat count first.
    fn once_values(&mut self, scope: &mut Scope, steps: &mut [StepProgram], i: usize, st: &StatementSpec) {
        if let Some(step) = steps.iter_mut().find(|s| s.first == i) {
            if let Some((name, r)) = st.repeat.as_ref().and_then(|r| match r.get_ref() {
                Repeat::Times(Number::Param(p)) => p.strip_prefix(':').map(|name| (name, r)),
                _ => None,
            }) {
                step.repeat = self.repeat_from_value(scope, st, name, r);
            }
            if let Some((g, span)) = st.repeat.as_ref().and_then(|r| match r.get_ref() {
                Repeat::Drawn(g) => Some((g, r.span())),
                Repeat::Times(_) => None,
            }) {
                let slot = self.slot(&format!("{}.{}#repeat", scope.name, st.name.get_ref()));
                let count = self.repeat_count(scope, st, &Spanned::new(span, g.clone()));
                step.once.push((slot, count));
                step.repeat = Times::Drawn(slot);
            }
            for (p, g) in &st.once {
                step.once.push((self.slot(p), self.generator(g, false)));
                scope.known.push(p.clone());
            }
        } else if let Some((_, g)) = st.once.iter().next() {
            let (name, sname) = (scope.name, st.name.get_ref());
            self.e.at(
                g,
                format!("statement {name}.{sname} is inside a group: `once` belongs on the group's first statement"),
            );
        }
    }

    /// `repeat = ":name"`: as many times as a value known before the statement (a
    /// transaction's draw, a saved value), so another statement can use the count too.
    fn repeat_from_value(&mut self, scope: &Scope, st: &StatementSpec, name: &str, r: &Spanned<Repeat>) -> Times {
        if !scope.known.iter().any(|k| k == name) {
            let (tx, sname) = (scope.name, st.name.get_ref());
            let known = list(&scope.known, &BTreeMap::new());
            self.e.at(r, format!("statement {tx}.{sname}: repeat :{name}, which is not known here (known: {known})"));
        }
        Times::Drawn(self.slot(name))
    }

    /// The generator of a drawn repeat count: an integer distribution within 0..=1000000.
    fn repeat_count(&mut self, scope: &Scope, st: &StatementSpec, r: &Spanned<Generator>) -> Generator {
        let g = self.generator(r, false);
        let bounds = match &g {
            Generator::Uniform(b)
            | Generator::Gaussian(b)
            | Generator::Special(b)
            | Generator::Pareto(b)
            | Generator::Zipfian(b) => Some(b.clone()),
            _ => None,
        };
        let (name, sname) = (scope.name, st.name.get_ref());
        match bounds {
            Some([Number::Int(lo), Number::Int(hi)]) if lo < 0 || hi > MAX_REPEAT => self.e.at(
                r,
                format!("statement {name}.{sname}: a drawn repeat count must stay within 0..{MAX_REPEAT} ({lo}..{hi})"),
            ),
            Some(_) => {}
            None => self.e.at(
                r,
                format!("statement {name}.{sname}: repeat draws a count: use uniform, gaussian, special, pareto or zipfian = [lo, hi]"),
            ),
        }
        g
    }

    /// One statement; `None` when its SQL is missing or unreadable (said in the errors).
    fn statement(
        &mut self,
        scope: &mut Scope,
        i: usize,
        st: &StatementSpec,
        bare_names: bool,
    ) -> Option<StatementProgram> {
        let (name, sname) = (scope.name, st.name.get_ref());
        if !identifier(sname) {
            self.e.at(&st.name, format!("statement name {sname:?}: use letters, digits and _"));
        }
        if scope.begin && ["begin", "commit", "rollback"].contains(&sname.as_str()) {
            self.e
                .at(&st.name, format!("statement name {sname} is taken: transaction {name} measures its own {sname}"));
        }
        let mut own: Vec<(usize, Generator)> =
            st.params.iter().map(|(p, g)| (self.slot(p), self.generator(g, false))).collect();
        let Some(sql) = st.sql_for(self.dialect) else {
            let d = self.dialect.name();
            self.e.at(&st.name, format!("statement {name}.{sname} has no SQL for {d} (add sql = or {d} =)"));
            return None;
        };
        let mut text = self.substitute(sql);
        let batch = self.batch(scope, st, &mut text, &mut own);
        let on_table = self.table_choice(scope, st, sql, &mut text);
        // A set's marker (now \u{1}) was checked by table_choice.
        for t in super::tables::referenced(&text).iter().filter(|t| !t.ends_with('\u{1}')) {
            if !self.declares_table(t) {
                self.e.at(sql, format!("statement {name}.{sname} uses table {t}, which the file does not declare (add a [[tables]] for it: fairbench runs only on tables it creates)"));
            }
        }
        let (positional, names) = match positional(&text) {
            Ok(x) => x,
            Err(m) => {
                self.e.at(sql, format!("statement {name}.{sname}: {m}"));
                return None;
            }
        };
        let args = self.bind(scope, i, st, sql, &names, batch);
        let saves = self.saves(scope, st, &text);
        let rollback_if_no_row = self.rollback_if(scope, st, &positional);
        let skip_if_no_row = self.skip_if(scope, st, &positional, rollback_if_no_row);
        let save_row = self.save_row(scope, st, &positional);
        let per_table = on_table.map(|(value, count)| {
            if !(scope.known.contains(&value) || st.params.contains_key(&value)) {
                let known = list(&scope.known, &st.params);
                self.e.at(sql, format!("statement {name}.{sname} picks its table by :{value}, which is not defined (known here: {known})"));
            }
            let texts = (1..=count).map(|n| positional.replace('\u{1}', &n.to_string())).collect::<Vec<_>>();
            (self.slot(&value), texts)
        });
        let positional = per_table.as_ref().map_or(positional, |(_, texts)| texts[0].clone());
        scope.known.extend(st.params.keys().cloned());
        Some(StatementProgram {
            name: if bare_names { sname.clone() } else { format!("{name}.{sname}") },
            class: classify(&positional),
            // A set of one table needs no choosing.
            per_table: per_table.filter(|(_, texts)| texts.len() > 1),
            sql: positional,
            args,
            params: own,
            saves,
            rollback_if_no_row,
            skip_if_no_row,
            save_row,
        })
    }

    /// `save_row = "first" | "middle"`: on a query whose row something saves.
    fn save_row(&mut self, scope: &Scope, st: &StatementSpec, sql: &str) -> RowPick {
        let Some(which) = &st.save_row else { return RowPick::First };
        let (name, sname) = (scope.name, st.name.get_ref());
        let pick = match which.get_ref().as_str() {
            "first" => RowPick::First,
            "middle" => RowPick::Middle,
            other => {
                self.e.at(which, format!("statement {name}.{sname}: save_row {other:?}: \"first\" or \"middle\""));
                RowPick::First
            }
        };
        if st.save.is_empty() && st.save_client.is_empty() {
            self.e.at(which, format!("statement {name}.{sname}: save_row without save (it says which row save reads)"));
        } else if !returns_rows(sql) {
            self.e.at(which, format!("statement {name}.{sname}: save_row needs a query that returns rows"));
        }
        pick
    }

    /// `rollback_if = "no_row"`: on a query (rows come back), in BEGIN ... COMMIT.
    fn rollback_if(&mut self, scope: &Scope, st: &StatementSpec, sql: &str) -> bool {
        let Some(when) = &st.rollback_if else { return false };
        let (name, sname) = (scope.name, st.name.get_ref());
        if when.get_ref() != "no_row" {
            self.e.at(
                when,
                format!("statement {name}.{sname}: rollback_if {:?}: the condition is \"no_row\"", when.get_ref()),
            );
        } else if !scope.begin {
            self.e.at(when, format!("statement {name}.{sname}: rollback_if needs begin = true (an autocommit statement has nothing to roll back)"));
        } else if !returns_rows(sql) {
            self.e.at(when, format!("statement {name}.{sname}: rollback_if = \"no_row\" needs a query that returns rows (SELECT, or RETURNING)"));
        }
        true
    }

    /// `skip_if = "no_row"`: on a query (rows come back), not one that may roll back.
    fn skip_if(&mut self, scope: &Scope, st: &StatementSpec, sql: &str, rolls_back: bool) -> bool {
        let Some(when) = &st.skip_if else { return false };
        let (name, sname) = (scope.name, st.name.get_ref());
        if when.get_ref() != "no_row" {
            let cond = when.get_ref();
            self.e.at(when, format!("statement {name}.{sname}: skip_if {cond:?}: the condition is \"no_row\""));
        } else if rolls_back {
            self.e.at(when, format!("statement {name}.{sname}: skip_if and rollback_if both act on no row: keep one"));
        } else if !returns_rows(sql) {
            self.e.at(when, format!("statement {name}.{sname}: skip_if = \"no_row\" needs a query that returns rows (SELECT, or RETURNING)"));
        }
        true
    }

    /// `batch = N`: the VALUES row sent N times; row r > 0 binds its own draws, `name#r`.
    fn batch(
        &mut self,
        scope: &Scope,
        st: &StatementSpec,
        text: &mut String,
        own: &mut Vec<(usize, Generator)>,
    ) -> Option<BatchRows> {
        let b = st.batch.as_ref()?;
        let (name, sname) = (scope.name, st.name.get_ref());
        let rows = self.number(b.span(), b.get_ref(), "batch");
        match (rows, values_row(text)) {
            (1..=100_000, Some((open, close))) => {
                let before = positional(&text[..open]).map(|(_, n)| n.len()).unwrap_or(0);
                let per_row = positional(&text[open..=close]).map(|(_, n)| n.len()).unwrap_or(0);
                let row = text[open..=close].to_string();
                *text =
                    format!("{}{}{}", &text[..open], vec![row.as_str(); rows as usize].join(", "), &text[close + 1..]);
                for r in 1..rows {
                    for (p, g) in &st.params {
                        own.push((self.slot(&format!("{p}#{r}")), self.generator(g, false)));
                    }
                }
                Some((before, per_row, rows as usize))
            }
            (1..=100_000, None) => {
                self.e.at(b, format!("statement {name}.{sname}: batch needs an INSERT ... VALUES (...) row to repeat"));
                None
            }
            _ => {
                self.e.at(b, format!("statement {name}.{sname}: batch {rows} must be between 1 and 100000"));
                None
            }
        }
    }

    /// `set{:t}`: one table of a set, by the number in value t (the marker becomes \u{1}).
    fn table_choice(
        &mut self,
        scope: &Scope,
        st: &StatementSpec,
        sql: &Spanned<String>,
        text: &mut String,
    ) -> Option<(String, u32)> {
        let (name, sname) = (scope.name, st.name.get_ref());
        match table_marker(text) {
            Ok(None) => None,
            Ok(Some((set, value, marker))) => match self.sets.iter().find(|(n, _)| *n == set) {
                Some((_, count)) => {
                    let count = *count;
                    *text = text.replace(&marker, "\u{1}");
                    Some((value, count))
                }
                None => {
                    let problem = format!("{set}{marker} names no table set (a [[tables]] with count)");
                    self.e.at(sql, format!("statement {name}.{sname}: {problem}"));
                    None
                }
            },
            Err(m) => {
                self.e.at(sql, format!("statement {name}.{sname}: {m}"));
                None
            }
        }
    }

    /// The slot each `:name` of the statement binds, in order (a batch row r > 0 its own).
    fn bind(
        &mut self,
        scope: &Scope,
        i: usize,
        st: &StatementSpec,
        sql: &Spanned<String>,
        names: &[String],
        batch: Option<BatchRows>,
    ) -> Vec<usize> {
        let (name, sname) = (scope.name, st.name.get_ref());
        let mut args = Vec::new();
        for (k, n) in names.iter().enumerate() {
            let row = batch.and_then(|(before, per_row, rows)| {
                (k >= before && per_row > 0 && k < before + per_row * rows).then(|| (k - before) / per_row)
            });
            if let (Some(r @ 1..), true) = (row, st.params.contains_key(n)) {
                args.push(self.slot(&format!("{n}#{r}")));
            } else if scope.known.contains(n) || st.params.contains_key(n) {
                args.push(self.slot(n));
            } else {
                let later = scope.tx.statements[i..].iter().find(|s| s.save.contains_key(n));
                let problem = match later {
                    Some(by) => format!("uses :{n} before statement {} saves it", by.name.get_ref()),
                    None => format!("uses :{n}, which is not defined (known here: {})", list(&scope.known, &st.params)),
                };
                self.e.at(sql, format!("statement {name}.{sname} {problem}"));
            }
        }
        if args.len() > 32_766 {
            self.e.at(sql, format!("statement {name}.{sname} binds {} values; SQLite takes at most 32766 per statement (MySQL and PostgreSQL 65535): use a smaller batch", args.len()));
        }
        args
    }

    /// What the statement saves for later statements (`save`) or the client (`save_client`).
    fn saves(&mut self, scope: &mut Scope, st: &StatementSpec, text: &str) -> Vec<Save> {
        let (name, sname) = (scope.name, st.name.get_ref());
        let mut saves = Vec::new();
        for (map, client_scope) in [(&st.save, false), (&st.save_client, true)] {
            for (var, column) in map {
                // PostgreSQL has no last insert id: there it is the first column RETURNING gives.
                let generated = column.get_ref() == "last_insert_id";
                let reports_id = self.dialect.reports_insert_id();
                if generated && !reports_id && !text.to_ascii_uppercase().contains("RETURNING") {
                    self.e.at(column, format!("statement {name}.{sname}: PostgreSQL has no last insert id: add RETURNING <id column> to its postgres SQL"));
                }
                let from = match (generated, reports_id) {
                    (false, _) => SaveFrom::Column(column.get_ref().clone()),
                    (true, true) => SaveFrom::InsertId,
                    (true, false) => SaveFrom::FirstColumn,
                };
                saves.push(Save { slot: self.slot(var), from, client_scope });
                if !client_scope {
                    scope.known.push(var.clone());
                }
            }
        }
        saves
    }

    /// Statement names that run are unique; something runs.
    fn check_statement_names(&mut self, tx: &TransactionSpec, statements: &[StatementProgram]) {
        let name = tx.name.get_ref();
        let mut seen: Vec<&str> = statements.iter().map(|s| s.name.as_str()).collect();
        seen.sort();
        if seen.windows(2).any(|w| w[0] == w[1]) {
            self.e.at(&tx.name, format!("transaction {name}: two statements that run share a name"));
        }
        if statements.is_empty() && !tx.statements.is_empty() {
            self.e.at(&tx.name, format!("transaction {name}: every statement is repeated 0 times"));
        }
    }
}

/// Statements repeated 0 times left out (they were checked like the others), and the steps
/// renumbered to what is left.
fn without_unrepeated(
    statements: Vec<StatementProgram>,
    steps: &[StepProgram],
) -> (Vec<StatementProgram>, Vec<StepProgram>) {
    let runs = |i: usize| steps.iter().any(|s| !s.repeat.never() && (s.first..s.first + s.count).contains(&i));
    let mut index = Vec::new();
    let mut out = Vec::new();
    for (i, st) in statements.into_iter().enumerate() {
        index.push(out.len());
        if runs(i) {
            out.push(st);
        }
    }
    let steps = steps
        .iter()
        .filter(|s| !s.repeat.never())
        .map(|s| StepProgram { first: index[s.first], ..s.clone() })
        .collect();
    (out, steps)
}

/// Whether a statement returns rows: a query, or a write with RETURNING.
fn returns_rows(sql: &str) -> bool {
    classify(sql) == StatementClass::Read || sql.to_ascii_uppercase().contains("RETURNING")
}
