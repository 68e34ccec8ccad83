//! The key of a run whose shards were given none (`--shard-key`): its request without what
//! each shard may have its own way (its index, where its result goes and how it is shown),
//! hashed. Shards started the obvious way (the same options, each its own `--out`) agree;
//! another count, workload or option is another run. Made from the typed request, never
//! from the process's arguments: a rerun or a study cell keys what it runs.

use crate::model::request::{PrepareRequest, RunRequest, ShardRequest};
use serde::Serialize;
use sha2::Digest;

/// A run's key.
pub fn run_key(request: &RunRequest) -> String {
    let mut r = request.redacted(crate::db::redact::redact_str);
    (r.out, r.format, r.metrics_listen, r.report_interval) = (None, None, None, None);
    (r.verbose, r.histogram) = (false, false);
    r.shard = common(&r.shard);
    hashed("run", &r)
}

/// A sharded prepare's key.
pub fn prepare_key(request: &PrepareRequest) -> String {
    let target = request.target.redacted(crate::db::redact::redact_str);
    hashed("prepare", &PrepareRequest { target, shard: common(&request.shard), ..request.clone() })
}

/// The shard options every shard of one run shares: the count (of `I/N`, or `N` with
/// `--shard-index`), the timeout.
fn common(shard: &ShardRequest) -> ShardRequest {
    let count = shard.shard.as_deref().map(|s| s.rsplit('/').next().unwrap_or(s).to_string());
    ShardRequest { shard: count, shard_index: None, print_result: false, ..shard.clone() }
}

fn hashed(what: &str, request: &impl Serialize) -> String {
    let text = serde_json::to_string(request).expect("a request serializes");
    let digest = sha2::Sha256::digest(format!("{what}\u{1f}{text}").as_bytes());
    format!("req-{}", digest.iter().take(8).map(|b| format!("{b:02x}")).collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn shard(request: &RunRequest, shard: &str, out: &str) -> RunRequest {
        let mut r = request.clone();
        r.shard.shard = Some(shard.into());
        r.out = Some(PathBuf::from(out));
        r
    }

    #[test]
    fn shards_started_the_obvious_way_share_a_key() {
        let mut base = RunRequest::new("oltp_read_only");
        (base.threads, base.time) = (8, Some(60));
        base.target.targets = vec!["mysql://u:secret@db/x".into()];
        let a = shard(&base, "0/3", "a.json");
        let mut b = shard(&base, "1/3", "b.json");
        b.shard.print_result = true;
        let mut c = shard(&base, "3", "c.json");
        (c.shard.shard_index, c.format, c.metrics_listen) = (Some(2), Some("json".into()), Some("0.0.0.0:9100".into()));
        let keys: Vec<String> = [&a, &b, &c].map(run_key).to_vec();
        assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
        // What the shards run is the key: another count, workload or option is another run.
        assert_ne!(run_key(&shard(&base, "0/4", "a.json")), keys[0]);
        let mut more = a.clone();
        more.threads = 9;
        assert_ne!(run_key(&more), keys[0]);
        let mut other = a.clone();
        other.workload.workload = "oltp_read_write".into();
        assert_ne!(run_key(&other), keys[0]);
        // The password is not what keys a run (it never reaches the hash).
        let mut password = a.clone();
        password.target.targets = vec!["mysql://u:other@db/x".into()];
        assert_eq!(run_key(&password), keys[0]);
    }
}
