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
    let mut d = Draw::new(&Generator::Pattern("##-@@ x".into()), &p, &DistributionSpec::default(), None, 1).unwrap();
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
    let pairs: std::collections::BTreeSet<(i64, i64)> = (0..20).map(|c| (bound(2, 1, c), bound(10, 2, c))).collect();
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
    super::population::write_decimal(-1005, 2, &mut out);
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
    assert_eq!(nurand_c(42, 255, DrawnFor::Run), nurand_c(42, 255, DrawnFor::Run));
    assert!(nurand_c(42, 1023, DrawnFor::Run) <= 1023 && nurand_c(42, 8191, DrawnFor::Run) <= 8191);
    assert!((1..50).any(|s| nurand_c(s, 255, DrawnFor::Run) != nurand_c(42, 255, DrawnFor::Run)), "C follows the seed");
    // Another client of the same run: another stream, the same C (the same hot values).
    let other = draw(42, 1);
    let hottest = (0..1000).max_by_key(|&v| counts[v]).unwrap();
    assert!(other[hottest] > 2 * 100, "value {hottest}: {} draws by another client", other[hottest]);
}

/// TPC-C's remote warehouse: over a long draw never the home one (a client value), every
/// other one about equally often; with one warehouse, the home one.
#[test]
fn other_than_never_draws_the_value_it_avoids() {
    let p = program();
    let home = p.slots.iter().position(|s| s == "r").unwrap();
    let end = p.slots.len();
    let mut slots = vec![Value::Null; end + 1];
    let mut rng = Rng::seeded(11);
    for (lo, hi, w) in [(1, 10, 4), (1, 10, 1), (1, 10, 10), (1, 2, 2)] {
        let list = [(end, Generator::OtherThan("r".into(), Number::Int(lo), Number::Int(hi)))];
        let mut scope = ScopeDraws::new(&list, &p, &DistributionSpec::default(), None, 1).unwrap();
        slots[home] = Value::Int(w);
        let mut seen = std::collections::BTreeMap::<i64, u32>::new();
        let draws = 90_000;
        for _ in 0..draws {
            scope.draw(&mut rng, Context::default(), &mut slots);
            *seen.entry(slots[end].int()).or_default() += 1;
        }
        assert!(!seen.contains_key(&w), "[{lo}, {hi}] but {w}: {seen:?}");
        let each = draws as f64 / (hi - lo) as f64;
        assert_eq!(seen.len() as i64, hi - lo, "{seen:?}");
        assert!(seen.values().all(|&n| (n as f64 - each).abs() < each * 0.05), "uniform: {seen:?}");
    }
    let list = [(end, Generator::OtherThan("r".into(), Number::Int(1), Number::Int(1)))];
    let mut scope = ScopeDraws::new(&list, &p, &DistributionSpec::default(), None, 1).unwrap();
    slots[home] = Value::Int(1);
    scope.draw(&mut rng, Context::default(), &mut slots);
    assert_eq!(slots[end].int(), 1, "one warehouse: every pick is home");
    let nowhere = [(end, Generator::OtherThan("nope".into(), Number::Int(1), Number::Int(3)))];
    assert!(ScopeDraws::new(&nowhere, &p, &DistributionSpec::default(), None, 1).is_err());
}

/// TPC-C's O_OL_CNT and its ORDER-LINE rows: a keyed draw is one value per group of rows,
/// the same in a table whose groups are 15 rows as in one whose groups are one row.
#[test]
fn a_keyed_draw_is_the_same_for_every_row_of_a_group_in_any_table() {
    let keyed = |every| Generator::Keyed { every: Number::Int(every), uniform: [Number::Int(5), Number::Int(15)] };
    let per_order = ints(keyed(1), 3_000);
    let per_line = ints(keyed(15), 45_000);
    for (i, chunk) in per_line.chunks(15).enumerate() {
        assert!(chunk.iter().all(|&v| v == per_order[i]), "group {i}: {chunk:?} vs {}", per_order[i]);
    }
    assert!(per_order.iter().all(|v| (5..=15).contains(v)));
    assert!((5..=15).all(|v| per_order.contains(&v)), "every count from 5 to 15 occurs");
    let mean = per_order.iter().sum::<i64>() as f64 / per_order.len() as f64;
    assert!((9.7..10.3).contains(&mean), "mean {mean}");
    // The seed chooses the values; the rng of the row does not.
    let p = program();
    let mut other = Draw::new(&keyed(1), &p, &DistributionSpec::default(), None, 2).unwrap();
    let row = |d: &mut Draw, seed| match d.draw(&mut Rng::seeded(seed), Context { row: 1, ..Default::default() }) {
        Drawn::Int(v) => v,
        x => panic!("{x:?}"),
    };
    assert_eq!(row(&mut other, 1), row(&mut other, 99));
    assert!(
        (1..40).any(|r| {
            let at = Context { row: r, ..Default::default() };
            matches!(other.draw(&mut Rng::seeded(0), at), Drawn::Int(v) if v != per_order[r as usize - 1])
        }),
        "another seed, other counts"
    );
}

/// Clause 2.1.6.1: C_LAST's C in a population is C_LOAD; a run's C_RUN differs from it by
/// 65..119 but not 96 or 112, whatever the seed, and every such value is drawn by some seed.
#[test]
fn c_run_keeps_the_delta_rule_against_c_load() {
    assert_eq!((nurand_c(1, 255, DrawnFor::Load), nurand_c(99, 255, DrawnFor::Load)), (C_LOAD, C_LOAD));
    let runs: std::collections::BTreeSet<u32> = (0..20_000).map(|s| nurand_c(s, 255, DrawnFor::Run)).collect();
    assert!(runs.iter().all(|&c| c_run_allowed(C_LOAD, c) && c <= 255), "{runs:?}");
    let allowed: Vec<u32> = (0..=255).filter(|&c| c_run_allowed(C_LOAD, c)).collect();
    assert_eq!(runs.len(), allowed.len(), "every allowed C_RUN is drawn");
    for (c, ok) in [
        (C_LOAD + 65, true),
        (C_LOAD - 119, true),
        (C_LOAD + 64, false),
        (C_LOAD - 96, false),
        (C_LOAD + 112, false),
        (C_LOAD - 120, false),
    ] {
        assert_eq!(c_run_allowed(C_LOAD, c), ok, "{c}");
    }
    // Prepare's draws (for_column) use C_LOAD: NURand(255, 0, 999) by its formula.
    let p = program();
    let g = Generator::Nurand([Number::Int(255), Number::Int(0), Number::Int(999)]);
    let mut column = Draw::for_column(&g, &p, &DistributionSpec::default(), 3).unwrap();
    let (mut rng, mut twin) = (Rng::seeded(11), Rng::seeded(11));
    for _ in 0..1000 {
        let expected = ((twin.uniform(0, 255) | twin.uniform(0, 999)) + C_LOAD) % 1000;
        assert_eq!(column.draw(&mut rng, Context::default()), Drawn::Int(expected as i64));
    }
    // The other constants follow the seed alike in both phases.
    assert_eq!(nurand_c(5, 1023, DrawnFor::Load), nurand_c(5, 1023, DrawnFor::Run));
}
