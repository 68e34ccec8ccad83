//! The endpoints a failover probe reads: its `--target`s (the writer's), then every other
//! node of the cluster it knows how to reach directly (`--node`, the sandbox the first target
//! belongs to), so that roles are watched and rows are read on each node itself and never
//! only through the proxy or DNS name the writer used.

use super::failover::Targets;
use super::servers::EndpointNames;
use super::ProbeError;
use crate::db::{ConnectOptions, Database, TargetUrl};
use crate::model::probe_request::ProbeOptions;
use crate::model::request::ConnectRequest;
use crate::sandbox;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone)]
pub(super) struct Endpoints {
    pub urls: Vec<TargetUrl>,
    /// `target1`... then each node's name.
    pub names: Vec<String>,
    /// What reports call the server behind each endpoint when it is that server itself: a
    /// sandbox's node name or a `--node` NAME (None: the address the server reports).
    pub labels: Vec<Option<String>>,
    /// How many are `--target`s.
    pub writers: usize,
}

impl Endpoints {
    /// `host:port` as dialled, per endpoint.
    pub fn dialled(&self) -> Vec<String> {
        self.urls.iter().map(|u| format!("{}:{}", u.host, u.port)).collect()
    }
}

/// The targets, the `--node`s (`NAME=URL` or `URL`) and the first target's sandbox's nodes
/// (reached as the first target is, at each node's own address).
pub(super) fn endpoints(
    targets: Vec<TargetUrl>,
    nodes: &[String],
    password_file: Option<&Path>,
) -> Result<Endpoints, ProbeError> {
    let writers = targets.len();
    let sandbox_nodes = sandbox_nodes(&targets[0]);
    let label = |u: &TargetUrl| sandbox_nodes.iter().find(|(_, h, p)| same(h, *p, u)).map(|(n, _, _)| n.clone());
    let mut e = Endpoints {
        labels: targets.iter().map(label).collect(),
        names: (1..=writers).map(|i| format!("target{i}")).collect(),
        urls: targets,
        writers,
    };
    for (i, given) in nodes.iter().enumerate() {
        let (name, raw) = split_name(given).unwrap_or((format!("node{}", i + 1), given.as_str()));
        let url = TargetUrl::parse_with_password_file(raw, password_file, |k| std::env::var(k).ok())?;
        if url.dialect != e.urls[0].dialect {
            return Err(ProbeError::NodeOfAnotherKind(name));
        }
        e.push(name, url);
    }
    for (name, host, port) in sandbox_nodes {
        if e.urls.iter().any(|u| same(&host, port, u)) {
            continue;
        }
        let mut url = e.urls[0].clone();
        (url.host, url.port, url.socket) = (host, port, None);
        e.push(name, url);
    }
    Ok(e)
}

impl Endpoints {
    /// Adds the nodes the cluster named that no endpoint dials yet, reached as the first
    /// target is (its user, password, database and TLS) at each one's host and port; named
    /// as the cluster names them (Patroni), else by their address. Returns how many.
    pub fn add_listed(&mut self, listed: Vec<(Option<String>, crate::db::ListedNode)>) -> Vec<String> {
        let mut added = Vec::new();
        for (name, n) in listed {
            if self.urls.iter().any(|u| same(&n.host, n.port, u)) {
                continue;
            }
            let mut url = self.urls[0].clone();
            (url.host, url.port, url.socket) = (n.host.clone(), n.port, None);
            let name = name.filter(|n| !n.is_empty()).unwrap_or_else(|| format!("{}:{}", n.host, n.port));
            added.push(format!("{name} ({})", n.listed_by));
            self.push(name, url);
        }
        added
    }

    pub fn remove(&mut self, i: usize) {
        self.urls.remove(i);
        self.names.remove(i);
        self.labels.remove(i);
    }

    fn push(&mut self, name: String, url: TargetUrl) {
        self.names.push(name.clone());
        self.labels.push(Some(name));
        self.urls.push(url);
    }
}

/// `NAME=URL` (a name has no `:` or `/`), else None.
fn split_name(given: &str) -> Option<(String, &str)> {
    let (name, url) = given.split_once('=')?;
    (!name.is_empty() && !name.contains([':', '/'])).then(|| (name.to_string(), url))
}

fn same(host: &str, port: u16, u: &TargetUrl) -> bool {
    let local = |h: &str| if h == "localhost" { "127.0.0.1".to_string() } else { h.to_string() };
    u.socket.is_none() && port == u.port && local(host) == local(&u.host)
}

/// (name, host, port) of every node of the sandbox `url` points at (a node or its proxy).
fn sandbox_nodes(url: &TargetUrl) -> Vec<(String, String, u16)> {
    let Some(name) = sandbox::fault::owning(&url.host, url.port) else { return Vec::new() };
    let Ok(sb) = sandbox::home().and_then(|home| sandbox::Sandbox::load(&home, &name)) else { return Vec::new() };
    sb.nodes.iter().map(|n| (n.name.clone(), n.host.clone(), n.port)).collect()
}

/// How connections are opened: the request's deadlines and limits.
pub(super) fn connect_options(c: &ConnectRequest) -> ConnectOptions {
    ConnectOptions {
        connect_timeout: Duration::from_secs_f64(c.connect_timeout),
        max_packet: c.max_packet,
        allow_cleartext_password: c.allow_cleartext_password,
        ..ConnectOptions::default()
    }
}

/// A probe's connections: it must see an outage as it happens, not after the default 10 s.
pub(super) fn probe_options(common: &ProbeOptions) -> ConnectOptions {
    let mut options = connect_options(&common.connect);
    options.connect_timeout = options.connect_timeout.min(common.attempt_timeout());
    options
}

/// `first` and the other nodes of `urls` (of the same kind) opened.
pub(super) fn open_all<D: Database>(
    first: Arc<D>,
    urls: &[TargetUrl],
    options: &ConnectOptions,
) -> Result<Vec<Arc<D>>, ProbeError> {
    let mut dbs = vec![first];
    for u in &urls[1..] {
        dbs.push(Arc::new(D::open(u, options)?));
    }
    Ok(dbs)
}

/// The endpoints as the failover probe reads them.
pub(super) fn targets_of<D>(dbs: Vec<Arc<D>>, e: &Endpoints) -> Targets<D> {
    Targets { dbs, urls: e.urls.iter().map(TargetUrl::redacted).collect(), writers: e.writers, dialled: e.dialled() }
}

/// How the servers behind the endpoints are named ([`super::servers::name`]).
pub(super) fn endpoint_names<D>(e: &Endpoints, t: &Targets<D>) -> EndpointNames {
    EndpointNames { labels: e.labels.clone(), writers: e.writers, dialled: t.dialled.clone(), urls: t.urls.clone() }
}
