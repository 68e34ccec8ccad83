//! The nodes a cluster names itself: a replica's source and a primary's replicas as each
//! node the probe reaches lists them (`Connection::listed_nodes`), and the members Patroni's
//! REST API lists (`/cluster`). The probe then reads them directly too, instead of trusting
//! what one endpoint says about the rest.

use super::ProbeError;
use crate::db::{Connection, Database, ListedNode};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Every node any endpoint names, each once, in the order first named.
pub async fn listed<D: Database>(dbs: &[Arc<D>], timeout: Duration) -> Vec<ListedNode> {
    let mut out: Vec<ListedNode> = Vec::new();
    for db in dbs {
        let read = async { db.connect().await?.listed_nodes().await };
        let Ok(Ok(nodes)) = tokio::time::timeout(timeout, read).await else { continue };
        for n in nodes {
            if !out.iter().any(|o| o.host == n.host && o.port == n.port) {
                out.push(n);
            }
        }
    }
    out
}

/// A Patroni cluster's members from its REST API (`http://HOST:8008`): name, host, port.
pub async fn patroni_members(api: &str, timeout: Duration) -> Result<Vec<(String, ListedNode)>, ProbeError> {
    let refuse = |why: String| ProbeError::Refused(format!("--patroni-api {api}: {why}"));
    let authority = api
        .strip_prefix("http://")
        .ok_or_else(|| {
            refuse(
                "give Patroni's REST API as http://HOST:PORT (https is not read here: give the nodes with --node)"
                    .into(),
            )
        })?
        .trim_end_matches('/');
    let body = tokio::time::timeout(timeout, get(authority, "/cluster"))
        .await
        .map_err(|_| refuse(format!("no answer within {:.1} s", timeout.as_secs_f64())))?
        .map_err(|e| refuse(e.to_string()))?;
    let json: serde_json::Value =
        serde_json::from_str(&body).map_err(|e| refuse(format!("/cluster did not answer JSON: {e}")))?;
    let members = json["members"].as_array().ok_or_else(|| refuse("/cluster lists no members".into()))?;
    Ok(members
        .iter()
        .filter_map(|m| {
            let node = ListedNode {
                host: m["host"].as_str()?.to_string(),
                port: m["port"].as_u64()?.try_into().ok()?,
                listed_by: "Patroni /cluster",
            };
            Some((m["name"].as_str().unwrap_or_default().to_string(), node))
        })
        .collect())
}

/// The body of `GET path` over HTTP/1.0.
async fn get(authority: &str, path: &str) -> std::io::Result<String> {
    let mut stream = tokio::net::TcpStream::connect(authority).await?;
    let host = authority.split(':').next().unwrap_or(authority);
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {host}\r\nAccept: application/json\r\n\r\n").as_bytes())
        .await?;
    let mut response = Vec::new();
    stream.take(4 << 20).read_to_end(&mut response).await?;
    let text = String::from_utf8_lossy(&response);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    match head.split_whitespace().nth(1) {
        Some("200") => Ok(body.to_string()),
        status => Err(std::io::Error::other(format!("HTTP status {}", status.unwrap_or("missing")))),
    }
}

/// Why a node the cluster named is not read.
#[derive(Debug, thiserror::Error)]
pub enum NotRead {
    #[error("{0}")]
    Unreachable(String),
    #[error("the same server as a node already read ({0})")]
    AlreadyRead(String),
}

/// Which of `candidates` (nodes the cluster named) to read: each must answer and be a server
/// no known endpoint reaches directly (a listed address may be another name for a node
/// already read; `pg_stat_replication` gives a replica's address, not its port, so a guess
/// may reach nothing). A server reached only through a proxy is worth reading directly.
/// `known_dialled` is each known endpoint's `host:port`, `writers` how many are targets.
pub async fn worth_reading<D: Database>(
    known: &[Arc<D>],
    known_dialled: &[String],
    writers: usize,
    candidates: &[Arc<D>],
    timeout: Duration,
) -> Vec<Result<(), NotRead>> {
    let identity = |db: Arc<D>| async move {
        match tokio::time::timeout(timeout, async { db.connect().await?.node_role().await }).await {
            Ok(Ok(r)) => Ok((r.node, r.address)),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {:.1} s", timeout.as_secs_f64())),
        }
    };
    let known = futures_util::future::join_all(known.iter().cloned().map(identity)).await;
    let mut seen: Vec<String> = known
        .into_iter()
        .enumerate()
        .filter_map(|(i, id)| id.ok().filter(|(_, a)| super::servers::reaches_itself(i, writers, known_dialled, a)))
        .map(|(key, _)| key)
        .filter(|k| !k.is_empty())
        .collect();
    let mut out = Vec::new();
    for id in futures_util::future::join_all(candidates.iter().cloned().map(identity)).await {
        out.push(match id {
            Ok((key, _)) if seen.contains(&key) => Err(NotRead::AlreadyRead(key)),
            Ok((key, _)) => {
                seen.push(key);
                Ok(())
            }
            Err(e) => Err(NotRead::Unreachable(e)),
        });
    }
    out
}
