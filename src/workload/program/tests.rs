use super::*;
use crate::workload::spec::Number;

const GOOD: &str = r#"
[workload]
name = "t"
[params]
n = 100
[[tables]]
name = "acct"
rows = "{n}"
columns = [{ name = "id", type = "integer", gen = "row" }, { name = "v", type = "bigint", gen = { uniform = [1, 9] } }]
primary_key = ["id"]
[[transactions]]
name = "move"
begin = true
params = { a = { ids = "acct" } }
  [[transactions.statements]]
  name = "read"
  sql = "SELECT v FROM acct WHERE id = :a AND v < {n} AND note = 'x:y' AND w::text = ':z'"
  save = { old = "v" }
  [[transactions.statements]]
  name = "write"
  sql = "UPDATE acct SET v = :old + 1 WHERE id = :a"
"#;

/// `text`, read as the file `file`, compiled for `dialect`: the program, or every error.
fn compiled(file: &str, text: &str, dialect: Dialect) -> Result<Program, Vec<String>> {
    let spec = super::super::spec::parse(file, text).map_err(|e| vec![e.to_string()])?;
    compile(&spec, file, text, dialect, &[]).map_err(|e| e.0)
}

fn errors_of(text: &str) -> Vec<String> {
    compiled("w.toml", text, Dialect::Mysql).err().unwrap_or_default()
}

#[test]
fn a_good_file_compiles_to_positional_sql() {
    let spec = super::super::spec::parse("w.toml", GOOD).unwrap();
    let p = compile(&spec, "w.toml", GOOD, Dialect::Postgres, &[("n".into(), Scalar::Int(5))]).unwrap();
    let st = &p.transactions[0].statements;
    assert_eq!(st[0].sql, "SELECT v FROM acct WHERE id = ? AND v < 5 AND note = 'x:y' AND w::text = ':z'");
    assert_eq!(st[0].class, StatementClass::Read);
    assert_eq!(st[1].sql, "UPDATE acct SET v = ? + 1 WHERE id = ?");
    assert_eq!(st[1].args.iter().map(|&i| p.slots[i].as_str()).collect::<Vec<_>>(), ["old", "a"]);
    assert_eq!(st[1].class, StatementClass::Write);
    assert_eq!(p.tables[0].rows, 5);
    assert!(p.tables[0].def.columns[0].generated, "a single integer key numbered by row");
    assert!(!p.tables[0].def.columns[1].generated);
}

/// Each bad file names the line and column and what was expected.
#[test]
fn bad_files_say_where_and_what() {
    let cases: [(&str, &str, &str); 9] = [
        ("gen = \"row\" }, { name = \"v\"", "gen = \"rows\" }, { name = \"v\"", "unknown variant `rows`"),
        (
            "sql = \"UPDATE acct SET v = :old + 1",
            "sql = \"UPDATE acct SET v = :olde + 1",
            "uses :olde, which is not defined",
        ),
        ("save = { old = \"v\" }", "", "uses :old, which is not defined"),
        ("name = \"move\"\nbegin", "name = \"move\"\nweight = 0\nbegin", "weight 0 must be"),
        ("{ ids = \"acct\" }", "{ ids = \"accounts\" }", "ids of table \"accounts\""),
        ("v < {n}", "v < {m}", "{m} is not a parameter"),
        ("type = \"bigint\"", "type = \"bigint2\"", "unknown type \"bigint2\""),
        ("[1, 9]", "[9, 1]", "range [9, 1] is empty"),
        ("rows = \"{n}\"", "rows = \"{nn}\"", "neither an integer nor a {parameter}"),
    ];
    for (from, to, words) in cases {
        assert!(GOOD.contains(from), "{from}");
        let bad = GOOD.replacen(from, to, 1);
        let errors = errors_of(&bad);
        assert!(errors.iter().any(|e| e.contains(words) && e.starts_with("w.toml:")), "{words}: {errors:?}");
        // Every message has a line and column.
        for e in &errors {
            let mut parts = e.splitn(4, ':');
            parts.next();
            assert!(
                parts.next().unwrap().parse::<usize>().is_ok() && parts.next().unwrap().parse::<usize>().is_ok(),
                "{e}"
            );
        }
    }
    // Used before the statement that saves it.
    let swapped = GOOD.replace("name = \"read\"", "name = \"x\"").replace(
        "  [[transactions.statements]]\n  name = \"x\"",
        "  [[transactions.statements]]\n  name = \"first\"\n  sql = \"SELECT :old\"\n  [[transactions.statements]]\n  name = \"x\"",
    );
    assert!(
        errors_of(&swapped).iter().any(|e| e.contains("uses :old before statement x saves it")),
        "{:?}",
        errors_of(&swapped)
    );
    // No statements, raw placeholders, no SQL for the dialect.
    let empty = GOOD.split("  [[transactions.statements]]").next().unwrap().to_string();
    assert!(errors_of(&empty).iter().any(|e| e.contains("has no statements")));
    assert!(errors_of(&GOOD.replace("id = :a AND", "id = ? AND")).iter().any(|e| e.contains("raw ? placeholder")));
    // Sizes no run can use are refused before anything is prepared.
    let negative = GOOD.replace("rows = \"{n}\"", "rows = -5");
    assert!(errors_of(&negative).iter().any(|e| e.contains("rows -5 must be at least 0")));
    assert!(errors_of(&negative).iter().any(|e| e.contains("which has -5 rows: there is no id to draw")));
    let wide = GOOD.replace("[1, 9]", "[1, 10000000000]");
    assert!(errors_of(&wide).iter().any(|e| e.contains("spans more than 2^32 values")));
    let no_mysql = GOOD.replace("sql = \"UPDATE", "postgres = \"UPDATE");
    assert!(errors_of(&no_mysql).iter().any(|e| e.contains("has no SQL for mysql")));
}

#[test]
fn a_batch_repeats_the_values_row_with_its_own_draws() {
    let text = GOOD.replace(
        "  [[transactions.statements]]\n  name = \"write\"",
        "  [[transactions.statements]]\n  name = \"many\"\n  batch = 3\n  params = { v = { uniform = [1, 9] } }\n  sql = \"INSERT INTO acct (id, v) VALUES (:a, :v) RETURNING id\"\n  [[transactions.statements]]\n  name = \"write\"",
    );
    let spec = super::super::spec::parse("w.toml", &text).unwrap();
    let p = compile(&spec, "w.toml", &text, Dialect::Postgres, &[]).unwrap();
    let st = &p.transactions[0].statements[1];
    assert_eq!(st.sql, "INSERT INTO acct (id, v) VALUES (?, ?), (?, ?), (?, ?) RETURNING id");
    let bound: Vec<&str> = st.args.iter().map(|&i| p.slots[i].as_str()).collect();
    assert_eq!(bound, ["a", "v", "a", "v#1", "a", "v#2"], "transaction values shared, draws per row");
    assert_eq!(st.params.len(), 3);
    assert!(errors_of(&text.replace("batch = 3", "batch = 0")).iter().any(|e| e.contains("batch 0 must be")));
}

#[test]
fn a_table_set_gives_each_statement_one_text_per_table() {
    let text = GOOD
        .replace("name = \"acct\"\nrows", "name = \"acct\"\ncount = 3\nrows")
        .replace("params = { a = { ids = \"acct\" } }", "params = { a = { ids = \"acct\" }, t = { table = \"acct\" } }")
        .replace("UPDATE acct SET", "UPDATE acct{:t} SET");
    let spec = super::super::spec::parse("w.toml", &text).unwrap();
    let p = compile(&spec, "w.toml", &text, Dialect::Mysql, &[]).unwrap();
    let names: Vec<&str> = p.tables.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["acct1", "acct2", "acct3"]);
    assert_eq!(p.set_count("acct"), Some(3));
    assert_eq!(p.table("acct").unwrap().rows, 100, "ids of a set read its tables' rows");
    let st = &p.transactions[0].statements[1];
    let (slot, texts) = st.per_table.as_ref().unwrap();
    assert_eq!(p.slots[*slot], "t");
    assert_eq!(texts[2], "UPDATE acct3 SET v = ? + 1 WHERE id = ?");
    assert_eq!(st.sql, texts[0]);
    let t = &p.transactions[0].params.iter().find(|(s, _)| p.slots[*s] == "t").unwrap().1;
    assert_eq!(*t, Generator::Uniform([Number::Int(1), Number::Int(3)]));
    // A marker on a plain table, an undefined value, and two different markers.
    assert!(errors_of(&text.replace("count = 3\n", "")).iter().any(|e| e.contains("names no table set")));
    assert!(errors_of(&text.replace("acct{:t}", "acct{:u}")).iter().any(|e| e.contains("picks its table by :u")));
    let two = text.replace("WHERE id = :a\"", "AND 1 IN (SELECT 1 FROM acct{:a})\"");
    assert!(errors_of(&two).iter().any(|e| e.contains("one table set's table")), "{:?}", errors_of(&two));
}

#[test]
fn named_parameters_skip_quotes_and_casts() {
    let (sql, names) = positional("SELECT ':a', \"b:c\", x::int, :p1 + :p_2 FROM t").unwrap();
    assert_eq!(sql, "SELECT ':a', \"b:c\", x::int, ? + ? FROM t");
    assert_eq!(names, ["p1", "p_2"]);
    assert!(positional("SELECT 'open").is_err());
}

/// The typed errors keep the words (and the literal braces) of the messages they replaced.
#[test]
fn sql_errors_read_as_before() {
    assert_eq!(positional("SELECT 'open").unwrap_err().to_string(), "an unclosed ' quote");
    assert_eq!(sql::table_marker("SELECT {:t").unwrap_err().to_string(), "an unclosed {: table marker");
    let two = sql::table_marker("SELECT * FROM a{:t} JOIN b{:u}").unwrap_err().to_string();
    assert_eq!(two, "a statement may use one table set's table (one {:name})");
    let misplaced = sql::table_marker("SELECT {:t}").unwrap_err().to_string();
    assert_eq!(misplaced, "{:t} must follow a table set's name and hold a value name, as in sbtest{:t}");
}

#[test]
fn repeats_groups_and_switches_from_params() {
    let text = r#"
[workload]
name = "r"
bare_names = true
[params]
n = 3
pairs = 2
trx = 0
none = 0
[[tables]]
name = "t"
rows = 10
columns = [{ name = "id", type = "integer", gen = "row" }]
[[transactions]]
name = "r"
begin = "{trx}"
  [[transactions.statements]]
  name = "reads"
  repeat = "{n}"
  params = { id = { ids = "t" }, last = { offset = ["id", 9] } }
  sql = "SELECT id FROM t WHERE id BETWEEN :id AND :last"
  [[transactions.statements]]
  name = "gone"
  repeat = "{none}"
  sql = "SELECT 1"
  [[transactions.statements]]
  name = "deletes"
  repeat = "{pairs}"
  group = 2
  params = { id = { ids = "t" } }
  sql = "DELETE FROM t WHERE id = :id"
  [[transactions.statements]]
  name = "inserts"
  sql = "INSERT INTO t (id) VALUES (:id)"
"#;
    let spec = super::super::spec::parse("r.toml", text).unwrap();
    let p = compile(&spec, "r.toml", text, Dialect::Mysql, &[]).unwrap();
    let t = &p.transactions[0];
    assert!(!t.begin, "begin from a parameter");
    let names: Vec<&str> = t.statements.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["reads", "deletes", "inserts"], "repeat 0 leaves a statement out; bare names");
    let shape: Vec<(usize, usize, Times)> = t.steps.iter().map(|s| (s.first, s.count, s.repeat)).collect();
    assert_eq!(shape, [(0, 1, Times::Fixed(3)), (1, 2, Times::Fixed(2))]);
    // A later statement sees an earlier statement's draw.
    assert_eq!(p.slots[t.statements[2].args[0]], "id");
    let (infos, _) = p.measured();
    assert_eq!(infos.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(), ["reads", "deletes", "inserts"]);
    let errors = |t: &str| compiled("r.toml", t, Dialect::Mysql).err().unwrap_or_default();
    assert!(errors(&text.replace("group = 2", "group = 3")).iter().any(|e| e.contains("group 3 must count")));
    assert!(errors(&text.replace("trx = 0", "trx = 2")).iter().any(|e| e.contains("begin 2 must be 1 or 0")));
    assert!(errors(&text.replace("offset = [\"id\"", "offset = [\"idx\""))
        .iter()
        .any(|e| e.contains("offset of \"idx\"")));
    assert!(errors(&text.replace("name = \"gone\"", "name = \"reads\"").replace("\"{none}\"", "1"))
        .iter()
        .any(|e| e.contains("two statements that run share a name")));
}

#[test]
fn a_repeat_count_is_drawn_per_transaction() {
    let text = r#"
[workload]
name = "lines"
[params]
most = 15
[[tables]]
name = "t"
rows = 10
columns = [{ name = "id", type = "integer", gen = "row" }]
[[transactions]]
name = "order"
  [[transactions.statements]]
  name = "line"
  repeat = { uniform = [5, "{most}"] }
  group = 2
  once = { w = { uniform = [1, 3] } }
  params = { id = { ids = "t" } }
  sql = "SELECT id FROM t WHERE id = :id"
  [[transactions.statements]]
  name = "stock"
  sql = "SELECT :w"
"#;
    let p = compiled("l.toml", text, Dialect::Sqlite).unwrap();
    let step = &p.transactions[0].steps[0];
    let Times::Drawn(slot) = step.repeat else { panic!("{:?}", step.repeat) };
    assert_eq!(p.slots[slot], "order.line#repeat");
    assert_eq!(step.once[0], (slot, Generator::Uniform([Number::Int(5), Number::Int(15)])), "drawn first");
    assert_eq!(step.count, 2);
    let errors = |t: String| compiled("l.toml", &t, Dialect::Sqlite).err().unwrap_or_default();
    let e = errors(text.replace("uniform = [5, \"{most}\"]", "pattern = \"##\""));
    assert!(e.iter().any(|e| e.starts_with("l.toml:14:") && e.contains("repeat draws a count")), "{e:?}");
    let e = errors(text.replace("most = 15", "most = 2000000"));
    assert!(e.iter().any(|e| e.contains("must stay within 0..1000000 (5..2000000)")), "{e:?}");
}

#[test]
fn an_intended_rollback_needs_a_query_in_a_transaction() {
    let text = r#"
[workload]
name = "rb"
[[tables]]
name = "t"
rows = 10
columns = [{ name = "id", type = "integer", gen = "row" }]
[[transactions]]
name = "look"
begin = true
  [[transactions.statements]]
  name = "find"
  params = { id = { uniform = [1, 20] } }
  sql = "SELECT id FROM t WHERE id = :id"
  rollback_if = "no_row"
  [[transactions.statements]]
  name = "after"
  sql = "SELECT COUNT(*) FROM t"
"#;
    let p = compiled("rb.toml", text, Dialect::Postgres).unwrap();
    assert!(p.transactions[0].statements[0].rollback_if_no_row && p.transactions[0].may_roll_back());
    // A statement after a rollback point runs only when the transaction goes on: no fixed
    // count per event (nor has the commit).
    let per_event = p.per_event();
    assert_eq!(per_event.get("look.begin"), Some(&1), "{per_event:?}");
    assert_eq!(per_event.get("look.find"), Some(&1), "the statement that decides always runs: {per_event:?}");
    assert!(!per_event.contains_key("look.after") && !per_event.contains_key("look.commit"), "{per_event:?}");
    let (infos, ids) = p.measured();
    assert_eq!(infos[ids[0].rollback.unwrap()].name, "look.rollback");
    let errors = |t: String| compiled("rb.toml", &t, Dialect::Postgres).err().unwrap_or_default();
    let e = errors(text.replace("begin = true", "begin = false"));
    assert!(e.iter().any(|e| e.starts_with("rb.toml:15:17:") && e.contains("needs begin = true")), "{e:?}");
    let e = errors(text.replace("SELECT id FROM t WHERE id = :id", "DELETE FROM t WHERE id = :id"));
    assert!(e.iter().any(|e| e.contains("needs a query that returns rows")), "{e:?}");
    let e = errors(text.replace("\"no_row\"", "\"no_rows\""));
    assert!(e.iter().any(|e| e.contains("rollback_if \"no_rows\": the condition is \"no_row\"")), "{e:?}");
    let e = errors(text.replace("name = \"find\"", "name = \"rollback\""));
    assert!(e.iter().any(|e| e.contains("statement name rollback is taken")), "{e:?}");
}

/// `deferred`: a flag (or a product of parameters, 1 or 0) that adds a kind of event named
/// `{name}_deferred` after the transactions; `skip_if = "no_row"` on a query in a group
/// leaves the rest of its group without a fixed count per event.
#[test]
fn deferred_transactions_and_skips() {
    let text = r#"
[workload]
name = "ship"
[params]
waits = 1
defer = 1
[[tables]]
name = "t"
rows = 10
columns = [{ name = "id", type = "integer", gen = "row" }]
[[transactions]]
name = "look"
  [[transactions.statements]]
  name = "count"
  sql = "SELECT COUNT(*) FROM t"
[[transactions]]
name = "ship"
begin = true
deferred = "{waits} * {defer}"
  [[transactions.statements]]
  name = "find"
  repeat = 3
  group = 2
  params = { b = "repetition" }
  sql = "SELECT id FROM t WHERE id = :b"
  save = { p = "id" }
  skip_if = "no_row"
  [[transactions.statements]]
  name = "take"
  sql = "DELETE FROM t WHERE id = :p"
  [[transactions.statements]]
  name = "after"
  sql = "SELECT COUNT(*) FROM t"
"#;
    let p = compiled("d.toml", text, Dialect::Mysql).unwrap();
    assert_eq!(p.kind_names(), ["look", "ship", "ship_deferred"]);
    assert_eq!(p.deferred_kinds(), [None, Some(2)]);
    let ship = &p.transactions[1];
    assert!(ship.deferred && ship.may_skip() && !ship.may_roll_back());
    let per_event = p.per_event();
    assert_eq!(per_event.get("ship.find"), Some(&3), "the statement that decides always runs: {per_event:?}");
    assert!(!per_event.contains_key("ship.take"), "skipped with its repetition: {per_event:?}");
    assert_eq!(per_event.get("ship.after"), Some(&1), "outside the group, it always runs: {per_event:?}");
    let off = compiled("d.toml", &text.replace("waits = 1", "waits = 0"), Dialect::Mysql).unwrap();
    assert_eq!((off.kind_names().len(), off.transactions[1].deferred), (2, false));
    let errors = |t: String| compiled("d.toml", &t, Dialect::Mysql).err().unwrap_or_default();
    let e = errors(text.replace("waits = 1", "waits = 2"));
    assert!(e.iter().any(|e| e.contains("transaction ship: deferred 2 must be 1 or 0")), "{e:?}");
    let e = errors(text.replace("name = \"look\"", "name = \"ship_deferred\""));
    assert!(e.iter().any(|e| e.contains("recorded as ship_deferred, the name of another transaction")), "{e:?}");
    let e = errors(text.replace("skip_if = \"no_row\"", "skip_if = \"no_rows\""));
    assert!(e.iter().any(|e| e.contains("skip_if \"no_rows\": the condition is \"no_row\"")), "{e:?}");
    let e = errors(text.replace("skip_if = \"no_row\"", "skip_if = \"no_row\"\n  rollback_if = \"no_row\""));
    assert!(e.iter().any(|e| e.contains("skip_if and rollback_if both act on no row")), "{e:?}");
    let e = errors(text.replace("SELECT id FROM t WHERE id = :b", "UPDATE t SET id = id WHERE id = :b"));
    assert!(e.iter().any(|e| e.contains("skip_if = \"no_row\" needs a query that returns rows")), "{e:?}");
}

/// Think and keying times: fixed, or negative exponential truncated at 10 means (its
/// mean then a little under the nominal one: 1 - e^-10 of it, plus what the cut drops).
#[test]
fn pauses_are_fixed_or_drawn_negative_exponential() {
    use crate::workload::spec::{Pause, PauseDistribution};
    let text = GOOD.replacen(
        "[[transactions]]\nname = \"move\"",
        "[[transactions]]\nname = \"move\"\nthink_ms = { exponential = 200 }\nkeying_ms = 50",
        1,
    );
    let p = compiled("w.toml", &text, Dialect::Sqlite).unwrap();
    let t = &p.transactions[0];
    assert_eq!((t.think, t.keying), (Pause::Drawn(PauseDistribution::Exponential(200)), Pause::Fixed(50)));
    assert!(t.pauses());
    let mut rng = crate::random::Rng::seeded(5);
    let draws: Vec<f64> = (0..200_000).map(|_| t.think.draw(&mut rng).as_secs_f64() * 1000.0).collect();
    let mean = draws.iter().sum::<f64>() / draws.len() as f64;
    assert!((mean - 200.0).abs() < 3.0, "mean {mean} ms");
    assert!(draws.iter().all(|&d| (0.0..=2000.0).contains(&d)), "truncated at 10 means");
    assert!(draws.iter().filter(|&&d| d > 200.0).count() > 70_000, "skewed: about 37% above the mean");
    assert_eq!(t.keying.draw(&mut rng), std::time::Duration::from_millis(50));
    let bad = text.replace("{ exponential = 200 }", "{ normal = 200 }");
    assert!(super::super::spec::parse("w.toml", &bad).is_err());
}

#[test]
fn a_transaction_switched_off_is_not_part_of_the_run() {
    let text = GOOD.replace("[params]\nn = 100", "[params]\nn = 100\noff = 0")
        + "[[transactions]]\nname = \"idle\"\nweight = \"{off}\"\n  [[transactions.statements]]\n  name = \"s\"\n  sql = \"SELECT 1\"\n";
    let spec = super::super::spec::parse("w.toml", &text).unwrap();
    let p = compile(&spec, "w.toml", &text, Dialect::Sqlite, &[]).unwrap();
    assert_eq!(p.transactions.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["move"]);
    let on = compile(&spec, "w.toml", &text, Dialect::Sqlite, &[("off".into(), Scalar::Int(2))]).unwrap();
    assert_eq!(on.transactions.len(), 2);
}

/// Numbers as products of parameters, a repeat count from a value the transaction drew,
/// pauses switched by a parameter, and a deck.
#[test]
fn products_repeats_from_values_pauses_by_parameter_and_decks() {
    let text = r#"
[workload]
name = "o"
pick = "deck"
[params]
warehouses = 3
waits = 1
[[tables]]
name = "d"
rows = "{warehouses} * 10"
columns = [{ name = "id", type = "integer", gen = { by_row = [10, 1, 0] } }]
[[transactions]]
name = "order"
weight = 2
keying_ms = "{waits} * 18000"
think_ms = { exponential = "{waits} * 12000" }
params = { lines = { uniform = [5, 15] } }
  [[transactions.statements]]
  name = "line"
  repeat = ":lines"
  sql = "SELECT :lines"
[[transactions]]
name = "other"
  [[transactions.statements]]
  name = "s"
  sql = "SELECT 1"
"#;
    use crate::workload::spec::{Pause, PauseDistribution};
    let p = compiled("o.toml", text, Dialect::Sqlite).unwrap();
    assert_eq!(p.tables[0].rows, 30);
    let t = &p.transactions[0];
    let Times::Drawn(slot) = t.steps[0].repeat else { panic!("{:?}", t.steps[0].repeat) };
    assert_eq!(p.slots[slot], "lines", "the count is the drawn value itself");
    assert!(t.steps[0].once.is_empty());
    assert_eq!((t.keying, t.think), (Pause::Fixed(18_000), Pause::Drawn(PauseDistribution::Exponential(12_000))));
    assert!(p.deck);
    let errors = |t: String| compiled("o.toml", &t, Dialect::Sqlite).err().unwrap_or_default();
    let e = errors(text.replace("repeat = \":lines\"", "repeat = \":nope\""));
    assert!(
        e.iter().any(|e| e.starts_with("o.toml:20:") && e.contains("repeat :nope, which is not known here")),
        "{e:?}"
    );
    let e = errors(text.replace("waits = 1", "waits = \"x\""));
    assert!(e.iter().any(|e| e.contains("parameter waits is x, not an integer")), "{e:?}");
    let e = errors(text.replace("\"{warehouses} * 10\"", "\"{warehouses} * ten\""));
    assert!(e.iter().any(|e| e.starts_with("o.toml:10:") && e.contains("or a product of them")), "{e:?}");
    let e = errors(text.replace("pick = \"deck\"", "pick = \"cards\""));
    assert!(e.iter().any(|e| e.starts_with("o.toml:4:") && e.contains("\"weighted\" or \"deck\"")), "{e:?}");
    let e = errors(text.replace("waits = 1", "waits = 1000"));
    assert!(e.iter().any(|e| e.contains("keying_ms 18000000: a pause must be from 0 to 3600000")), "{e:?}");
}

/// The population's generators are checked where they stand: columns only where they number
/// rows, text lengths that hold their word, decimals written as decimals, weights in range;
/// `follows = "tpc-c"` names what it needs.
#[test]
fn population_generators_and_follows_are_checked() {
    let base = r#"
[workload]
name = "p"
[[tables]]
name = "t"
rows = 10
columns = [{ name = "id", type = "integer", gen = GEN }]
[[transactions]]
name = "x"
params = { v = PARAM }
  [[transactions.statements]]
  name = "s"
  sql = "SELECT :v"
"#;
    let errors = |column: &str, param: &str| {
        compiled("p.toml", &base.replace("GEN", column).replace("PARAM", param), Dialect::Sqlite)
            .err()
            .unwrap_or_default()
    };
    let fine = r#"{ choose = [[1, { decimal = ["0.01", "9.99"] }], [3, { text_with = ["AB", [2, 9]] }]] }"#;
    assert!(errors("{ shuffled = [10, 1] }", fine).is_empty());
    let cases = [
        ("\"row\"", "{ shuffled = [10, 1] }", "by_row and shuffled number the rows of a table"),
        (
            "\"row\"",
            "{ first_rows = { first = 1, every = 2, then = \"null\", rest = \"null\" } }",
            "first_rows picks by the row loaded",
        ),
        (
            "{ first_rows = { first = 3, every = 2, then = \"null\", rest = \"null\" } }",
            "{ const = 1 }",
            "first from 0 to every",
        ),
        ("{ by_row = [1, 2, 3, 4] }", "{ const = 1 }", "by_row takes [count, every] or [count, every, first]"),
        ("\"row\"", "{ text_with = [\"ORIGINAL\", [4, 9]] }", "text length [4, 9]: from 8"),
        ("\"row\"", "{ decimal = [\"1.5\", \"a\"] }", "write both bounds as decimals"),
        ("\"row\"", "{ choose = [[0, { const = 1 }]] }", "choose: weight 0 must be from 1 to 1000000"),
        ("\"row\"", "{ syllables = \"row\" }", "\"row\" numbers the rows of a table"),
        ("\"row\"", "{ keyed = { every = 1, uniform = [5, 15] } }", "keyed draws one value per group of rows"),
        ("{ keyed = { every = 0, uniform = [5, 15] } }", "{ const = 1 }", "keyed: every 0 must be at least 1"),
        ("{ keyed = { every = 1, uniform = [9, 5] } }", "{ const = 1 }", "uniform [9, 5] a range"),
    ];
    for (column, param, expected) in cases {
        let e = errors(column, param);
        assert!(e.iter().any(|e| e.contains(expected)), "{column} / {param}: {e:?}");
    }
    let tpcc = base
        .replace("GEN", "\"row\"")
        .replace("PARAM", "{ const = 1 }")
        .replace("name = \"p\"", "name = \"p\"\nfollows = \"tpc-c\"");
    let e = compiled("p.toml", &tpcc, Dialect::Sqlite).err().unwrap_or_default();
    assert!(e.iter().any(|e| e.starts_with("p.toml:4:") && e.contains("needs a transaction named new_order")), "{e:?}");
    assert!(e.iter().any(|e| e.contains("needs an integer parameter `warehouses`")), "{e:?}");
    let other = tpcc.replace("tpc-c", "tpc-e");
    let e = compiled("p.toml", &other, Dialect::Sqlite).err().unwrap_or_default();
    assert!(
        e.iter().any(|e| e.contains("follows \"tpc-e\": the benchmarks whose rules fairbench applies are: tpc-c")),
        "{e:?}"
    );
}

#[test]
fn a_table_keeps_the_rows_its_numbered_column_allows() {
    let text = r#"
[workload]
name = "k"
[[tables]]
name = "line"
rows = 20
keep = { drawn = DRAWN, column = "COLUMN", at_most = { keyed = { every = 3, uniform = [1, 3] } } }
columns = [{ name = "n", type = "integer", gen = { by_row = [3, 1] } }, { name = "v", type = "integer", gen = { uniform = [1, 9] } }]
[[transactions]]
name = "x"
  [[transactions.statements]]
  name = "s"
  sql = "SELECT n FROM line"
"#;
    let file = |drawn: &str, column: &str| text.replace("DRAWN", drawn).replace("COLUMN", column);
    let p = compiled("k.toml", &file("30", "n"), Dialect::Sqlite).unwrap();
    let keep = p.tables[0].keep.as_ref().expect("kept");
    assert_eq!((p.tables[0].rows, p.tables[0].drawn_rows(), keep.column), (20, 30, 0));
    for (drawn, column, expected) in [
        ("10", "n", "keep draws 10 rows, fewer than the 20 it keeps"),
        ("30", "w", "keep's column w is not one of its columns"),
        ("30", "v", "keep's column v must be numbered by the row"),
    ] {
        let e = compiled("k.toml", &file(drawn, column), Dialect::Sqlite).err().unwrap_or_default();
        assert!(e.iter().any(|e| e.starts_with("k.toml:7:") && e.contains(expected)), "{drawn} {column}: {e:?}");
    }
}
