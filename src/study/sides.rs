//! What answered a claim: its checks' sides as they ran, each named with what its result
//! says the server was (product and version), what the target was (a sandbox, a URL) and
//! where it ran. A study's claim is its seed's question; the verdict is about these sides.

use crate::model::study::{ClaimCheck, ClaimDefinition, StudyCell};
use crate::model::ResultDocument;

/// `on this host, 'template' (MariaDB 10.11.6, mariadb sandbox) vs 'stock' (MariaDB
/// 10.11.6, mariadb sandbox)`; a ratio over another variable: `..., table_size 400000 vs
/// 25000`. Empty when no check has a side.
pub fn as_run(
    claim: &ClaimDefinition,
    checks: &[ClaimCheck],
    cells: &[StudyCell],
    docs: &[Option<&ResultDocument>],
) -> String {
    let index = |id: &str| cells.iter().position(|c| c.id == id);
    let mut pairs: Vec<String> = Vec::new();
    let mut local = Vec::new();
    for check in checks {
        let sides: Vec<usize> = check.baseline_cell.iter().chain([&check.cell]).filter_map(|id| index(id)).collect();
        local.extend(sides.iter().filter_map(|&i| docs[i]).map(|d| d.conditions.server.same_host_as_client));
        let named = match claim.vary.as_deref() {
            None | Some("target") => {
                let each: Vec<String> = sides.iter().rev().map(|&i| side(&cells[i], docs[i])).collect();
                each.join(" vs ")
            }
            Some(axis) => {
                let cell = &cells[*sides.last().unwrap_or(&0)];
                let values: Vec<&str> = sides.iter().rev().filter_map(|&i| cells[i].value(axis)).collect();
                format!("{}, {axis} {}", side(cell, sides.last().and_then(|&i| docs[i])), values.join(" vs "))
            }
        };
        if !pairs.contains(&named) {
            pairs.push(named);
        }
    }
    if pairs.is_empty() {
        return String::new();
    }
    let place = match (local.iter().all(|l| *l), local.iter().any(|l| *l)) {
        (true, true) => "on this host, ",
        (false, false) if !local.is_empty() => "on the targets' own hosts, ",
        (false, true) => "on this host and others, ",
        _ => "",
    };
    format!("{place}{}", pairs.join("; "))
}

/// `'template' (MariaDB 10.11.6, mariadb sandbox)`; without a result, the target as declared.
fn side(cell: &StudyCell, doc: Option<&ResultDocument>) -> String {
    let server = doc.map(|d| &d.conditions.server).map(|s| format!("{} {}", s.product, s.version));
    let what: Vec<&str> = server
        .as_deref()
        .into_iter()
        .chain((!cell.target_kind.is_empty()).then_some(cell.target_kind.as_str()))
        .collect();
    match what.is_empty() {
        true => format!("'{}'", cell.target),
        false => format!("'{}' ({})", cell.target, what.join(", ")),
    }
}
