//! `sandbox up`: a primary and its replicas created, started, replicating (verified), and a
//! `fairbench` database on the primary.

use super::engine::{on, Engine};
use super::engines;
use super::lifecycle;
use super::lines::{recorded_line, NodeLine};
use super::process;
use super::{check_name, home, names, ports, verify, Node, Role, Sandbox, SandboxError};
use std::collections::BTreeMap;
use std::path::Path;

/// What `sandbox up` was asked for.
#[derive(Clone, Debug)]
pub struct UpOptions {
    pub name: String,
    pub engine: String,
    /// The failover manager that runs the servers (`--manager patroni`).
    pub manager: Option<String>,
    pub replicas: u32,
    /// `var=value`, for every node's server.
    pub settings: Vec<String>,
    /// The primary's port; replicas take the next ones.
    pub port: Option<u16>,
    /// HAProxy in front (a writer and a reader port after the nodes' ports).
    pub proxy: bool,
    /// A sandbox that fails to start keeps its files for inspection (`sandbox up`), else
    /// they are removed (a study's sandboxes: the error quotes the server's log).
    pub keep_failed: bool,
}

/// The most replicas one sandbox has (ports and memory of one host).
const MAX_REPLICAS: u32 = 9;
/// A Unix socket path's limit (sun_path, with its NUL).
const MAX_SOCKET_PATH: usize = 107;

/// Creates the sandbox; `note` hears each step. On failure the started nodes are stopped and
/// the files kept for inspection (or removed: `keep_failed`).
pub fn up(opts: &UpOptions, note: &mut dyn FnMut(String)) -> Result<Vec<NodeLine>, SandboxError> {
    check_name(&opts.name)?;
    let engine = engines::engine_managed(&opts.engine, opts.manager.as_deref())?;
    let settings = parse_settings(&opts.settings)?;
    super::mariadb::check_log_bin(engine.name(), opts.replicas, &opts.settings)?;
    if opts.replicas > MAX_REPLICAS {
        return Err(SandboxError::Invalid(format!("--replicas {} is more than {MAX_REPLICAS}", opts.replicas)));
    }
    engine.check_installed()?;
    if opts.proxy {
        super::proxy::check_installed()?;
    }
    let user = engine.os_user()?;
    let home = home()?;
    let dir = home.join(&opts.name);
    if dir.exists() {
        return Err(SandboxError::Exists { name: opts.name.clone(), dir });
    }
    let count = opts.replicas as usize + 1;
    // Spread nodes share their ports, each on its own address.
    let per_node_blocks = if engine.spread() { 1 } else { count };
    let block = per_node_blocks * engine.ports_per_node() + if opts.proxy { 2 } else { 0 };
    let hosts: Vec<String> = (0..count).map(|i| host(engine.spread(), i)).collect();
    let _held = ports::lock()?; // until the nodes listen on the ports chosen
    let mut reserved = recorded_ports(&home);
    reserved.extend(ports::registered());
    let ports = ports::choose(opts.port, engine.default_port(), block, &reserved, &hosts)?;
    let sb = Sandbox {
        name: opts.name.clone(),
        dir: dir.clone(),
        engine: engine.name().into(),
        settings,
        proxy: opts.proxy.then(|| super::proxy::Proxy { writer_port: ports[block - 2], reader_port: ports[block - 1] }),
        nodes: (0..count)
            .map(|i| {
                let port = if engine.spread() { ports[0] } else { ports[i] };
                let mut node = new_node(&dir, i, port, engine.multi_primary());
                node.host = hosts[i].clone();
                if engine.manager().is_some() {
                    node.source = None; // the manager picks each replica's source
                }
                node
            })
            .collect(),
        patroni: engine.manager_settings(ports[0]),
    };
    check_socket_paths(&sb)?;
    std::fs::create_dir_all(&dir).map_err(SandboxError::io("cannot create", &dir))?;
    ports::register(&ports, &dir)?;
    if let Some(u) = user {
        for d in process::open_path(&dir, u)? {
            note(format!("note: made {} enterable by the server's OS user (chmod o+x)", d.display()));
        }
    }
    sb.save()?;
    if let Err(e) = build(engine, &sb, note).and_then(|()| super::proxy::start(&sb, engine)) {
        let _ = super::proxy::stop(&sb);
        for node in &sb.nodes {
            let _ = lifecycle::stop(engine, node);
        }
        let _ = engine.stop_shared(&sb);
        let files = match opts.keep_failed {
            true => format!("files kept in {}: `fairbench sandbox down {}` removes them", dir.display(), sb.name),
            false => match std::fs::remove_dir_all(&dir) {
                Ok(()) => format!("{} removed", dir.display()),
                Err(why) => format!("{} not removed: {why}", dir.display()),
            },
        };
        return Err(SandboxError::Failed(format!("{e} (servers stopped, {files})")));
    }
    let nodes = sb.nodes.iter().map(|n| recorded_line(engine, &sb, n));
    Ok(nodes.chain(super::proxy::lines(&sb, engine)).collect())
}

/// A primary and its replicas, or the members of a multi-primary cluster (`node1`...).
fn new_node(dir: &Path, i: usize, port: u16, multi_primary: bool) -> Node {
    let (name, role, source) = match i {
        _ if multi_primary => (format!("node{}", i + 1), Role::Member, None),
        0 => ("primary".to_string(), Role::Primary, None),
        i => (format!("replica{i}"), Role::Replica, Some("primary".to_string())),
    };
    Node { dir: dir.join(&name), name, role, host: "127.0.0.1".into(), port, source, server_id: i as u32 + 1 }
}

/// `port P`, or `HOST:P` for a node on an address of its own.
fn place(node: &Node) -> String {
    match node.host.as_str() {
        "127.0.0.1" => format!("port {}", node.port),
        host => format!("{host}:{}", node.port),
    }
}

/// Node `i`'s address: its own loopback address from 127.0.0.2 when spread, else 127.0.0.1.
fn host(spread: bool, i: usize) -> String {
    if spread {
        format!("127.0.0.{}", i + 2)
    } else {
        "127.0.0.1".into()
    }
}

/// The nodes, started in order, then the database and the verification of every replica.
fn build(engine: &dyn Engine, sb: &Sandbox, note: &mut dyn FnMut(String)) -> Result<(), SandboxError> {
    let primary = &sb.nodes[0];
    engine.start_shared(sb)?;
    let managed = engine.manager().map(|m| format!(", run by {m}")).unwrap_or_default();
    note(format!("Creating {} on {} ({}{managed})", primary.name, place(primary), engine.name()));
    engine.init(sb, primary)?;
    engine.start(sb, primary)?;
    engine.bootstrap(primary)?;
    for replica in &sb.nodes[1..] {
        let how = if engine.multi_primary() { "joining the cluster of" } else { "replicating from" };
        note(format!("Creating {} on {}, {how} {}", replica.name, place(replica), primary.name));
        engine.init_replica(sb, primary, replica)?;
        engine.start(sb, replica)?;
        engine.bootstrap(replica)?;
        engine.follow(primary, replica)?;
    }
    engine.create_database(primary).map_err(on(primary, "creating the fairbench database"))?;
    for replica in &sb.nodes[1..] {
        verify::replication(engine, sb, primary, replica)?;
        if !engine.has_database(replica).map_err(on(replica, "reading the databases"))? {
            return Err(SandboxError::Failed(format!("the fairbench database did not reach {}", replica.name)));
        }
        let how = if engine.multi_primary() { "is a synced member with" } else { "replicates from" };
        note(format!("Verified: {} {how} {} (marker read, replication healthy)", replica.name, primary.name));
    }
    Ok(())
}

/// `var=value` pairs; the last of a repeated name wins.
pub fn parse_settings(given: &[String]) -> Result<BTreeMap<String, String>, SandboxError> {
    let mut out = BTreeMap::new();
    for s in given {
        let (k, v) = s.split_once('=').unwrap_or((s, ""));
        let name_ok = !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
        if !name_ok || v.is_empty() || v.contains('\n') {
            return Err(SandboxError::Invalid(format!(
                "--set {s:?}: write --set name=value, e.g. --set max_connections=500"
            )));
        }
        out.insert(k.to_string(), v.to_string());
    }
    Ok(out)
}

/// Ports other sandboxes recorded: a stopped sandbox keeps its ports.
fn recorded_ports(home: &Path) -> Vec<u16> {
    let sandboxes = names(home).into_iter().filter_map(|n| Sandbox::load(home, &n).ok());
    sandboxes.flat_map(|sb| sb.nodes.into_iter().map(|n| n.port)).collect()
}

/// Sockets live in the node directories: their paths must fit a Unix socket address.
fn check_socket_paths(sb: &Sandbox) -> Result<(), SandboxError> {
    // The longest socket name of any engine: `.s.PGSQL.65535`.
    let longest = sb.nodes.iter().map(|n| n.dir.as_os_str().len() + "/.s.PGSQL.65535".len()).max().unwrap_or(0);
    if longest > MAX_SOCKET_PATH {
        return Err(SandboxError::Invalid(format!(
            "{} is too deep for the servers' Unix sockets ({longest} bytes, at most {MAX_SOCKET_PATH}): set FAIRBENCH_SANDBOX_HOME to a shorter path",
            sb.dir.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_name_value_pairs() {
        let s = parse_settings(&["a=1".into(), "b_c=x=y".into(), "a=2".into()]).unwrap();
        assert_eq!(s["a"], "2");
        assert_eq!(s["b_c"], "x=y");
        for bad in ["novalue", "=1", "a b=1", "a="] {
            assert!(parse_settings(&[bad.into()]).is_err(), "{bad}");
        }
    }

    #[test]
    fn nodes_are_a_primary_then_replicas_on_the_next_ports() {
        let r = new_node(Path::new("/h/x"), 2, 13308, false);
        assert_eq!(
            (r.name.as_str(), r.role, r.source.as_deref(), r.server_id),
            ("replica2", Role::Replica, Some("primary"), 3)
        );
        assert_eq!(new_node(Path::new("/h/x"), 0, 13306, false).dir, Path::new("/h/x/primary"));
        let m = new_node(Path::new("/h/x"), 1, 13307, true);
        assert_eq!((m.name.as_str(), m.role, m.source), ("node2", Role::Member, None));
    }
}
