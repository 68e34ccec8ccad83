//! One target made of several nodes (`--target A --target B`): a connection goes to
//! whichever node takes writes when it is opened, so a workload's clients follow the primary
//! through a failover by reconnecting. One node (a server, or a proxy's writer port) is
//! passed through untouched: no role is read, as before.

use super::{ConnectOptions, Connection as _, Database, DbError, TargetUrl};
use crate::model::{SbtestShape, TableDef};
use std::collections::BTreeMap;
use std::sync::Arc;

pub struct FollowPrimary<D> {
    nodes: Vec<Arc<D>>,
    /// The nodes' URLs without passwords, for messages.
    urls: Vec<String>,
}

impl<D: Database> FollowPrimary<D> {
    /// The nodes in the order tried, all of one kind (checked by the caller), with their
    /// URLs without passwords.
    pub fn new(nodes: Vec<Arc<D>>, urls: Vec<String>) -> Self {
        assert!(!nodes.is_empty() && nodes.len() == urls.len(), "one URL per node, at least one");
        FollowPrimary { nodes, urls }
    }

    /// The first node as its own database (the one conditions are read from first).
    pub fn first(&self) -> &D {
        &self.nodes[0]
    }

    /// The first node that answers and takes writes, in the order given; an error naming
    /// what each node said when none does (a lost connection: the caller's reconnect loop
    /// goes on trying until its deadline).
    async fn connect_writer(&self) -> Result<D::Conn, DbError> {
        let mut said = Vec::new();
        for (db, url) in self.nodes.iter().zip(&self.urls) {
            let reading = async {
                let mut conn = db.connect().await?;
                let role = conn.node_role().await?;
                Ok::<_, DbError>((conn, role))
            };
            match reading.await {
                Ok((conn, role)) if role.role.is_writer() => return Ok(conn),
                Ok((_, role)) => said.push(format!("{url} is {}", role.describe())),
                Err(e) => said.push(format!("{url}: {e}")),
            }
        }
        Err(DbError::lost(format!("no node takes writes now: {}", said.join("; "))))
    }
}

impl<D: Database> Database for FollowPrimary<D> {
    type Conn = D::Conn;

    fn open(url: &TargetUrl, options: &ConnectOptions) -> Result<Self, DbError> {
        Ok(FollowPrimary { nodes: vec![Arc::new(D::open(url, options)?)], urls: vec![url.redacted()] })
    }

    async fn connect(&self) -> Result<D::Conn, DbError> {
        match self.nodes.len() {
            1 => self.nodes[0].connect().await,
            _ => self.connect_writer().await,
        }
    }

    fn dialect(&self) -> super::Dialect {
        self.first().dialect()
    }

    fn transport(&self) -> super::Transport {
        self.first().transport()
    }

    fn blocking(&self) -> bool {
        self.first().blocking()
    }

    fn begin_sql(&self, writes: bool) -> &'static str {
        self.first().begin_sql(writes)
    }

    fn create_if_missing(&self) -> Result<(), DbError> {
        self.first().create_if_missing()
    }

    fn single_writer(&self) -> bool {
        self.first().single_writer()
    }

    fn server_facts(&self, product: &str, variables: &BTreeMap<String, String>) -> crate::model::ServerFacts {
        self.first().server_facts(product, variables)
    }

    fn host_facts(&self, variables: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        self.first().host_facts(variables)
    }

    fn data_caches(&self, variables: &BTreeMap<String, String>, available: Option<u64>) -> BTreeMap<String, u64> {
        self.first().data_caches(variables, available)
    }

    fn create_table_sql(&self, t: &TableDef, comment: &str) -> Vec<String> {
        self.first().create_table_sql(t, comment)
    }

    fn sbtest_create_sql(&self, n: u32, shape: &SbtestShape, comment: &str) -> Vec<String> {
        self.first().sbtest_create_sql(n, shape, comment)
    }

    fn comment_sql(&self, table: &str, comment: &str) -> Option<String> {
        self.first().comment_sql(table, comment)
    }

    fn after_load_sql(&self, t: &TableDef) -> Vec<String> {
        self.first().after_load_sql(t)
    }

    fn clock_sql(&self) -> super::ProbeSql {
        self.first().clock_sql()
    }

    fn analyze_sql(&self, table: &str) -> Option<String> {
        self.first().analyze_sql(table)
    }
}
