//! The layering stated in src/lib.rs holds: every `crate::` import between top-level modules
//! is one the doc allows, and the modules form no cycle. Reads the source, needs no server.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Top-level module -> the modules its files name through `crate::` (unit tests excluded:
/// they may reach anywhere).
fn actual_graph(src: &Path) -> Graph {
    let mut graph = Graph::new();
    let mut files = Vec::new();
    collect_rs(src, &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top_module(src, f)).collect();
    for file in &files {
        let Some(module) = top_module(src, file) else { continue };
        // A unit-test module in a file of its own (`#[cfg(test)] mod tests;`).
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let text = match text.find("#[cfg(test)]\nmod tests") {
            Some(i) => &text[..i],
            None => &text[..],
        };
        let deps = graph.entry(module.clone()).or_default();
        for name in crate_paths(text) {
            if name != module && modules.contains(&name) {
                deps.insert(name);
            }
        }
    }
    graph
}

fn collect_rs(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn top_module(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (name != "lib" && name != "main").then_some(name)
}

/// Module names after `crate::`, including each name of a `crate::{a, b::c}` group.
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut close = group.len();
            let mut level = 0;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => level += 1,
                    '}' if level == 0 => {
                        close = j;
                        break;
                    }
                    '}' => level -= 1,
                    _ => {}
                }
            }
            let body = &group[..close];
            // Top-level names of the group: those at nesting depth 0.
            let mut depth = 0;
            let mut start = 0;
            for (j, c) in body.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(ident(body[start..j].trim()));
                        start = j + 1;
                    }
                    _ => {}
                }
            }
            out.push(ident(body[start..].trim()));
        } else {
            out.push(ident(rest));
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// The allowed arrows, from the `//! - [`x`] -> a, b.` lines of src/lib.rs. `everything`
/// allows any module.
fn allowed_graph(lib: &str) -> BTreeMap<String, Option<BTreeSet<String>>> {
    let mut allowed = BTreeMap::new();
    for line in lib.lines().filter_map(|l| l.strip_prefix("//! - ")) {
        let Some((names, rest)) = line.split_once(" -> ") else { continue };
        let deps_text = rest.split('.').next().unwrap_or("");
        let deps = match deps_text.trim() {
            "everything" => None,
            "nothing" => Some(BTreeSet::new()),
            d => Some(d.split(',').map(|s| s.trim().to_string()).collect()),
        };
        for name in names.split(',') {
            let name = name.trim().trim_start_matches("[`").trim_end_matches("`]").to_string();
            allowed.insert(name, deps.clone());
        }
    }
    allowed
}

/// Every cycle (strongly connected component of more than one module), sorted.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    // Kosaraju: order by finish time, then components on the reversed graph.
    fn visit(n: &str, g: &Graph, seen: &mut BTreeSet<String>, order: &mut Vec<String>) {
        if !seen.insert(n.to_string()) {
            return;
        }
        for m in g.get(n).into_iter().flatten() {
            visit(m, g, seen, order);
        }
        order.push(n.to_string());
    }
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for n in graph.keys() {
        visit(n, graph, &mut seen, &mut order);
    }
    let mut reversed = Graph::new();
    for (from, tos) in graph {
        reversed.entry(from.clone()).or_default();
        for to in tos {
            reversed.entry(to.clone()).or_default().insert(from.clone());
        }
    }
    let mut assigned = BTreeSet::new();
    let mut out = Vec::new();
    for n in order.iter().rev() {
        let mut component = Vec::new();
        visit(n, &reversed, &mut assigned, &mut component);
        if component.len() > 1 {
            component.sort();
            out.push(component);
        }
    }
    out.sort();
    out
}

#[test]
fn no_module_imports_against_the_layering_and_no_cycles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let graph = actual_graph(&root.join("src"));
    let allowed = allowed_graph(&std::fs::read_to_string(root.join("src/lib.rs")).unwrap());
    let mut violations = Vec::new();
    for (module, deps) in &graph {
        match allowed.get(module) {
            None => violations.push(format!("module `{module}` is not in the layering of src/lib.rs")),
            Some(None) => {}
            Some(Some(ok)) => {
                for d in deps.difference(ok) {
                    violations.push(format!("`{module}` imports `{d}`, which src/lib.rs does not allow"));
                }
            }
        }
    }
    for cycle in cycles(&graph) {
        violations.push(format!("import cycle: {}", cycle.join(" <-> ")));
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_checker_finds_a_cycle_and_a_forbidden_arrow() {
    let g: Graph = [
        ("model".to_string(), BTreeSet::from(["audit".to_string()])),
        ("audit".to_string(), BTreeSet::from(["model".to_string()])),
        ("stats".to_string(), BTreeSet::new()),
    ]
    .into_iter()
    .collect();
    assert_eq!(cycles(&g), vec![vec!["audit".to_string(), "model".to_string()]]);
    let acyclic: Graph = [("audit".to_string(), BTreeSet::from(["model".to_string()]))].into_iter().collect();
    assert!(cycles(&acyclic).is_empty());
    assert_eq!(crate_paths("use crate::{db::{A, B}, model::C};\nlet x = crate::stats::f();"), ["db", "model", "stats"]);
    let allowed = allowed_graph("//! - [`model`] -> nothing. Pure.\n//! - [`audit`], [`report`] -> model. Read.");
    assert_eq!(allowed["report"], Some(BTreeSet::from(["model".to_string()])));
    assert_eq!(allowed["model"], Some(BTreeSet::new()));
}
