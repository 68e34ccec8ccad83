//! The engines sandboxes know, and which one `--engine`, `--manager` or sandbox.json names.

use super::engine::Engine;
use super::{galera, mariadb, patroni, postgres, Sandbox, SandboxError};

/// Every engine sandboxes know (a manager's is the engine it manages).
pub const ENGINES: [&dyn Engine; 4] = [&mariadb::MariaDb, &postgres::Postgres, &galera::Galera, &patroni::Patroni];

/// The engine `--engine` names, run by `--manager` when given.
pub fn engine_managed(name: &str, manager: Option<&str>) -> Result<&'static dyn Engine, SandboxError> {
    let named = |e: &&dyn Engine| e.name() == name || e.aliases().contains(&name);
    let found = ENGINES.iter().copied().filter(named).find(|e| e.manager() == manager);
    found.ok_or_else(|| match manager {
        Some(m) if ENGINES.iter().any(named) => SandboxError::UnknownManager { manager: m.into(), engine: name.into() },
        _ => {
            let mut names: Vec<&str> = ENGINES.iter().map(|e| e.name()).collect();
            names.dedup();
            SandboxError::UnknownEngine(name.into(), names.join(" or "))
        }
    })
}

/// The engine `--engine` or sandbox.json names, without a manager.
pub fn engine(name: &str) -> Result<&'static dyn Engine, SandboxError> {
    engine_managed(name, None)
}

/// The engine that runs sandbox `sb`'s nodes.
pub fn of(sb: &Sandbox) -> Result<&'static dyn Engine, SandboxError> {
    engine_managed(&sb.engine, sb.patroni.as_ref().map(|_| "patroni"))
}
