//! Patroni's settings as sandbox.json records them: what [`super::Engine::manager_settings`]
//! returns and [`super::Sandbox`] holds, below the engines (patroni.rs runs them).

/// Patroni's ports and timings, recorded in sandbox.json.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Settings {
    /// Every node's REST API port, on the node's own address.
    pub rest_port: u16,
    pub etcd_client_port: u16,
    pub etcd_peer_port: u16,
    /// The leader key's time to live: a dead leader's key expires after at most this.
    pub ttl_s: u32,
    /// The pause between two runs of Patroni's HA loop.
    pub loop_wait_s: u32,
    /// How long Patroni retries etcd and PostgreSQL before it demotes itself.
    pub retry_timeout_s: u32,
}

impl Settings {
    /// Short timings, so a failover takes seconds (Patroni's defaults: 30, 10, 10). Patroni's
    /// rule: loop_wait + 2 * retry_timeout <= ttl.
    pub fn new(first_port: u16) -> Settings {
        Settings {
            rest_port: first_port + 1,
            etcd_client_port: first_port + 2,
            etcd_peer_port: first_port + 3,
            ttl_s: 8,
            loop_wait_s: 1,
            retry_timeout_s: 3,
        }
    }
}
