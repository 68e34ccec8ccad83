//! `fairbench sandbox ...`: runs src/sandbox and prints its lines (steps on stderr, nodes on
//! stdout, one line each, columns aligned, no header: easy to read and to cut).

use super::{say, Error};
use crate::cli::{SandboxArgs, SandboxCommand};
use crate::sandbox::{self, NodeLine, Signal, UpOptions};
use std::process::ExitCode;

pub fn sandbox_cmd(args: &SandboxArgs) -> Result<ExitCode, Error> {
    let mut note = |line: String| say(format_args!("{line}"));
    match &args.command {
        SandboxCommand::Up(a) => {
            let opts = UpOptions {
                name: a.name.clone(),
                engine: a.engine.clone(),
                manager: a.manager.clone(),
                replicas: match (a.nodes, a.engine.as_str()) {
                    (Some(n), _) => n - 1,
                    (None, "galera" | "mariadb-galera") => 2,
                    (None, _) => a.replicas,
                },
                settings: a.set.clone(),
                port: a.port,
                proxy: a.proxy,
                keep_failed: true,
            };
            let nodes = sandbox::up(&opts, &mut note)?;
            print_rows(nodes.iter().map(|n| vec![n.node.clone(), n.role.clone(), n.url.clone()]).collect());
        }
        SandboxCommand::Ls(a) => {
            let nodes = sandbox::ls(a.name.as_deref())?;
            if nodes.is_empty() {
                note(format!("No sandbox in {}", sandbox::home()?.display()));
            }
            print_nodes(&nodes);
        }
        SandboxCommand::Kill(a) => {
            for line in sandbox::kill(&a.name, &a.node, Signal::parse(&a.signal)?)? {
                println!("{line}");
            }
        }
        SandboxCommand::Start(a) => print_nodes(&sandbox::start(&a.name, &a.node, &mut note)?),
        SandboxCommand::Promote(a) => print_nodes(&sandbox::promote(&a.name, &a.node, &mut note)?),
        SandboxCommand::Down(a) => sandbox::down(&a.name, &mut note)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// sandbox, engine, node, role, URL, pid, status.
fn print_nodes(nodes: &[NodeLine]) {
    print_rows(
        nodes
            .iter()
            .map(|n| {
                let pid = n.pid.map_or("-".to_string(), |p| p.to_string());
                vec![
                    n.sandbox.clone(),
                    n.engine.clone(),
                    n.node.clone(),
                    n.role.clone(),
                    n.url.clone(),
                    pid,
                    n.status.name().into(),
                ]
            })
            .collect(),
    );
}

fn print_rows(rows: Vec<Vec<String>>) {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> =
        (0..columns).map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.len()).max().unwrap_or(0)).collect();
    for row in rows {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(s, w)| format!("{s:<w$}")).collect();
        println!("{}", cells.join("  ").trim_end());
    }
}
