//! The layering stated in src/lib.rs holds: every `crate::` import between top-level modules
//! is one the doc allows, and the modules form no cycle. Inside each top-level module (a
//! room), its files form no circle either (see [`file_edges`] for what counts). Reads the
//! source, needs no server.

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

/// A file's module path: `src/runner/client.rs` is `[runner, client]`, `src/runner/mod.rs`
/// `[runner]`, lib.rs and main.rs `[]`. None for unit-test files (`tests.rs`).
fn module_path(src: &Path, file: &Path) -> Option<Vec<String>> {
    if file.file_name().is_some_and(|n| n == "tests.rs") {
        return None;
    }
    let rel = file.strip_prefix(src).ok()?.with_extension("");
    let mut parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts == ["lib"] || parts == ["main"] {
        parts.clear();
    }
    Some(parts)
}

/// What of a file's text counts, as tools/filecycles.py reads it: everything before an
/// inline `#[cfg(test)] mod tests {`, without `//` comments, and without `pub use`
/// statements (a re-export is the room's door for other rooms, not a use of the file).
fn counted_text(text: &str) -> String {
    let mut text = text.to_string();
    if let Some(at) = text.match_indices("#[cfg(test)]").map(|(i, _)| i).find(|&i| {
        let rest = text[i + "#[cfg(test)]".len()..].trim_start();
        rest.strip_prefix("mod tests").is_some_and(|r| r.trim_start().starts_with('{'))
    }) {
        text.truncate(at);
    }
    let mut out = String::new();
    let mut in_pub_use = false;
    for line in text.lines() {
        let line = line.find("//").map_or(line, |i| &line[..i]);
        let trimmed = line.trim_start();
        let after_pub = trimmed.strip_prefix("pub").map(|r| match r.strip_prefix('(') {
            Some(r) => r.split_once(')').map_or("", |(_, r)| r),
            None => r,
        });
        if after_pub.is_some_and(|r| r.starts_with(char::is_whitespace) && r.trim_start().starts_with("use ")) {
            in_pub_use = true;
        }
        if in_pub_use {
            in_pub_use = !line.contains(';');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths of `text` that start with `crate::`, `super::` or `self::`, as segment lists;
/// a `{a, b::c}` group gives one path per item (a nested group ends its item's path).
fn relative_paths(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let at_word = i == 0 || !is_ident(bytes[i - 1]);
        let word: String = bytes[i..].iter().take_while(|c| is_ident(**c)).collect();
        if !at_word || word.is_empty() {
            i += 1;
            continue;
        }
        i += word.chars().count();
        if !["crate", "super", "self"].contains(&word.as_str()) {
            continue;
        }
        let mut segs = vec![word];
        while bytes[i..].starts_with(&[':', ':']) {
            let next: String = bytes[i + 2..].iter().take_while(|c| is_ident(**c)).collect();
            if !next.is_empty() {
                i += 2 + next.chars().count();
                segs.push(next);
            } else if bytes.get(i + 2) == Some(&'{') {
                let (items, end) = group_items(&bytes, i + 3);
                i = end;
                out.extend(items.into_iter().map(|item| segs.iter().cloned().chain(item).collect()));
                segs.truncate(1);
                break;
            } else {
                break;
            }
        }
        if segs.len() > 1 {
            out.push(segs);
        }
    }
    out
}

/// The items of the group whose text starts at `start` (after its `{`), each as segments up
/// to its own nested group if any; and where the group ends.
fn group_items(chars: &[char], start: usize) -> (Vec<Vec<String>>, usize) {
    let (mut depth, mut end) = (0, chars.len());
    let mut items = vec![String::new()];
    for (j, &c) in chars.iter().enumerate().skip(start) {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                end = j + 1;
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => items.push(String::new()),
            _ => {}
        }
        if let Some(item) = items.last_mut() {
            item.push(c);
        }
    }
    let items = items
        .iter()
        .map(|item| item.trim().trim_start_matches(',').trim())
        .filter(|item| !item.is_empty())
        .map(|item| {
            let head = item.split('{').next().unwrap_or("").trim().trim_matches(':');
            head.split("::").map(|s| s.trim().to_string()).collect()
        })
        .collect();
    (items, end)
}

/// Which files name which, inside each room. File A names file B when a `crate::`,
/// `super::` or `self::` path of A's counted text ([`counted_text`]) leads to an item of B:
/// the path is resolved from A's module to the deepest module that is a file (`self`
/// segments skipped). Kept: edges between two files of the same top-level module, neither
/// of which is the other's parent module (a room's mod.rs holding what its files share and
/// calling them is its door, not a circle). A path by a plain child name (`child::item`
/// after `use super::child`) counts through its `use`.
fn file_edges(modules: &BTreeMap<Vec<String>, String>) -> Graph {
    let shown = |m: &Vec<String>| if m.is_empty() { "lib".to_string() } else { m.join("/") };
    let resolve = |path: &[String]| -> Option<Vec<String>> {
        (1..=path.len()).rev().map(|k| path[..k].to_vec()).find(|p| modules.contains_key(p))
    };
    let ancestor = |a: &[String], b: &[String]| a.len() < b.len() && b.starts_with(a);
    let mut graph = Graph::new();
    for (module, text) in modules {
        let deps = graph.entry(shown(module)).or_default();
        for segs in relative_paths(&counted_text(text)) {
            let (base, rest): (Vec<String>, &[String]) = match segs[0].as_str() {
                "crate" => (Vec::new(), &segs[1..]),
                "self" => (module.clone(), &segs[1..]),
                _ => {
                    let up = segs.iter().take_while(|s| *s == "super").count();
                    (module[..module.len().saturating_sub(up)].to_vec(), &segs[up..])
                }
            };
            let path: Vec<String> = base.into_iter().chain(rest.iter().filter(|s| *s != "self").cloned()).collect();
            let Some(target) = resolve(&path) else { continue };
            let same_room = !module.is_empty() && target.first() == module.first();
            if same_room && target != *module && !ancestor(module, &target) && !ancestor(&target, module) {
                deps.insert(shown(&target));
            }
        }
    }
    graph
}

fn source_modules(src: &Path) -> BTreeMap<Vec<String>, String> {
    let mut files = Vec::new();
    collect_rs(src, &mut files);
    files.iter().filter_map(|f| Some((module_path(src, f)?, std::fs::read_to_string(f).unwrap()))).collect()
}

#[test]
fn no_circle_of_files_inside_a_room() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let circles: Vec<String> = cycles(&file_edges(&source_modules(&src))).iter().map(|c| c.join(" <-> ")).collect();
    assert!(
        circles.is_empty(),
        "files that name each other (move what they share into a file below both):\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_file_checker_finds_a_circle_and_leaves_a_room_door_alone() {
    let m = |path: &str, text: &str| {
        (path.split('/').filter(|s| !s.is_empty()).map(String::from).collect::<Vec<_>>(), text.to_string())
    };
    let modules: BTreeMap<_, _> = [
        m("", "mod room;"),
        m("room", "mod a;\nmod b;\nmod c;\npub use a::A;\nfn f() { a::go(); super::room::c::C; }"),
        m("room/a", "use super::{b::{self, B}, Shared};\npub use super::c::C; // super::c::D\nfn go() {}"),
        m("room/b", "use crate::room::a::go;\n#[cfg(test)]\nmod tests {\n    use super::super::c::C;\n}"),
        m("room/c", "use super::Shared;\nfn g() -> crate::other::X { todo!() }"),
        m("other", "use crate::room::c::C;"),
    ]
    .into_iter()
    .collect();
    let edges = file_edges(&modules);
    assert_eq!(edges["room/a"], BTreeSet::from(["room/b".to_string()]), "a re-export and a comment do not count");
    assert_eq!(edges["room/b"], BTreeSet::from(["room/a".to_string()]), "a unit test does not count");
    assert!(edges["room"].is_empty() && edges["room/c"].is_empty(), "a room's mod.rs is its door");
    assert!(edges["other"].is_empty(), "other rooms are the layering's business");
    assert_eq!(cycles(&edges), vec![vec!["room/a".to_string(), "room/b".to_string()]]);
    assert_eq!(
        relative_paths("use super::{x::{self, Y}, z};\nlet v = self::w::f(crate::q);"),
        [vec!["super", "x"], vec!["super", "z"], vec!["self", "w", "f"], vec!["crate", "q"]]
    );
}
