//! `--rand-type` distributions: fairbench's draws against sysbench's formulas, and against
//! the sysbench 1.0.20 binary itself (two-sample chi-square over buckets).

use fairbench::random::{DistributionKind, DistributionSpec, Rng};
use std::process::Command;

const N: usize = 200_000;
const MAX: u32 = 10_000;

fn draws(kind: DistributionKind, n: usize, seed: u64) -> Vec<u32> {
    let spec = DistributionSpec { kind, ..Default::default() };
    let d = spec.sampler();
    let mut rng = Rng::seeded(seed);
    (0..n).map(|_| d.sample(&mut rng, 1, MAX)).collect()
}

fn frac(v: &[u32], pred: impl Fn(u32) -> bool) -> f64 {
    v.iter().filter(|&&x| pred(x)).count() as f64 / v.len() as f64
}

#[test]
fn uniform_covers_the_range_evenly() {
    let v = draws(DistributionKind::Uniform, N, 1);
    assert!(v.iter().all(|&x| (1..=MAX).contains(&x)));
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / N as f64;
    assert!((mean - 5000.5).abs() < 30.0, "{mean}");
    assert!((frac(&v, |x| x <= 1000) - 0.1).abs() < 0.005);
}

#[test]
fn gaussian_is_irwin_hall_of_12() {
    let v = draws(DistributionKind::Gaussian, N, 2);
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / N as f64;
    let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / N as f64;
    // Sum of 12 uniforms on [0, t) divided by 12: variance t^2 / 12 / 12.
    let expected = (MAX as f64).powi(2) / 144.0;
    assert!((mean - 5000.5).abs() < 20.0, "{mean}");
    assert!((var / expected - 1.0).abs() < 0.03, "{var} vs {expected}");
}

#[test]
fn special_puts_three_quarters_on_one_percent_in_the_middle() {
    let v = draws(DistributionKind::Special, N, 3);
    // sysbench-compat.md: ~76% of draws hit ids 4975..5051 (77 rows) at table_size 10000.
    let hot = frac(&v, |x| (4975..=5051).contains(&x));
    assert!((hot - 0.76).abs() < 0.01, "{hot}");
}

#[test]
fn pareto_puts_80_percent_on_the_lowest_20_percent() {
    let v = draws(DistributionKind::Pareto, N, 4);
    let low = frac(&v, |x| x <= 2000);
    assert!((low - 0.8).abs() < 0.005, "{low}");
}

#[test]
fn zipfian_follows_one_over_k_to_the_exponent() {
    let spec = DistributionSpec { kind: DistributionKind::Zipfian, ..Default::default() };
    let d = spec.sampler();
    let mut rng = Rng::seeded(5);
    let n = 100u32;
    let draws: Vec<u32> = (0..N).map(|_| d.sample(&mut rng, 1, n)).collect();
    let norm: f64 = (1..=n).map(|k| (k as f64).powf(-0.8)).sum();
    for k in 1..=5u32 {
        let expected = (k as f64).powf(-0.8) / norm;
        let got = frac(&draws, |x| x == k);
        assert!((got - expected).abs() < 0.005, "k={k}: {got} vs {expected}");
    }
}

/// 200,000 draws of sysbench.rand.default(1, 10000) from the sysbench binary.
fn sysbench_draws(rand_type: &str) -> Vec<u32> {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("draw.lua");
    std::fs::write(
        &script,
        format!("function prepare()\n  for i = 1, {N} do io.write(sysbench.rand.default(1, {MAX}), '\\n') end\nend\n"),
    )
    .unwrap();
    let out = Command::new("sysbench")
        .arg(&script)
        .arg(format!("--rand-type={rand_type}"))
        .arg("--rand-seed=7")
        .arg("prepare")
        .output()
        .expect("sysbench is installed by scripts/test.sh");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Vec<u32> = String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.trim().parse().ok()).collect();
    assert_eq!(v.len(), N);
    v
}

/// Two-sample chi-square statistic over `buckets` equal-width buckets of [1, MAX].
fn chi_square(a: &[u32], b: &[u32], edges: &[u32]) -> (f64, usize) {
    let bucket = |x: u32| edges.iter().position(|&e| x < e).unwrap_or(edges.len());
    let mut ca = vec![0f64; edges.len() + 1];
    let mut cb = vec![0f64; edges.len() + 1];
    for &x in a {
        ca[bucket(x)] += 1.0;
    }
    for &x in b {
        cb[bucket(x)] += 1.0;
    }
    let mut stat = 0.0;
    let mut dof = 0;
    for (x, y) in ca.iter().zip(&cb) {
        if x + y > 0.0 {
            stat += (x - y).powi(2) / (x + y);
            dof += 1;
        }
    }
    (stat, dof.max(1) - 1)
}

#[test]
fn same_distributions_as_the_sysbench_binary() {
    for (name, kind) in [
        ("uniform", DistributionKind::Uniform),
        ("gaussian", DistributionKind::Gaussian),
        ("special", DistributionKind::Special),
        ("pareto", DistributionKind::Pareto),
    ] {
        let theirs = sysbench_draws(name);
        let ours = draws(kind, N, 11);
        // Buckets: 40 equal ones, plus fine ones around the special hot spot.
        let mut edges: Vec<u32> = (1..40).map(|i| 1 + i * MAX / 40).collect();
        edges.extend((4960..5070).step_by(5));
        edges.sort();
        edges.dedup();
        let (stat, dof) = chi_square(&ours, &theirs, &edges);
        // Critical value for p = 0.0001 is below dof + 5.5*sqrt(2*dof) for these dofs.
        let critical = dof as f64 + 5.5 * (2.0 * dof as f64).sqrt();
        assert!(stat < critical, "{name}: chi-square {stat:.1} with {dof} dof (critical {critical:.1})");
        // Sanity: the test can fail: uniform against special is rejected.
        if name == "special" {
            let (other, _) = chi_square(&draws(DistributionKind::Uniform, N, 12), &theirs, &edges);
            assert!(other > critical * 10.0);
        }
    }
}
