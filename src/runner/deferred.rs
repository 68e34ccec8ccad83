//! Deferred transactions (TPC-C's Delivery, clause 2.7): a client queues its request, and
//! the queueing is its event; the run's deferred worker, a client of its own with its own
//! connection, executes the transaction as the client that queued it and records the time
//! from queued to committed as the transaction's deferred kind (`{name}_deferred`).

use super::client::{self, Admitted, Client, ClientSpec, Execution};
use super::Shared;
use crate::db::Database;
use crate::recorder::TickRecorder;
use std::sync::{Arc, Mutex};

/// The deferred worker: connects as client `id`, then executes queued requests in order
/// until the run stops. Returns its connection still open, as a client does.
pub(super) async fn work<D: Database>(
    db: Arc<D>,
    spec: Arc<ClientSpec>,
    shared: Arc<Shared>,
    id: u64,
    rec: Arc<Mutex<TickRecorder>>,
) -> Option<Client<D::Conn>> {
    let connected = Box::pin(client::connect_gated(&*db, &spec, &shared, id)).await;
    let mut client = match connected {
        Ok(c) => c,
        Err(e) => {
            shared.fail(format!("the deferred worker: {e}"));
            return None;
        }
    };
    shared.ready();
    shared.wait_start().await?;
    while let Some(request) = shared.deferred.next(&shared).await {
        // Through the warmup's gate like any event: nothing straddles the counters' reading.
        // Its latency still runs from the queueing (admit restarts a closed loop's clock).
        let mut restarted = request.queued;
        let busy = match client::admit(&shared, &spec, true, &mut restarted).await {
            Admitted::Run { warmup_event, .. } => warmup_event,
            Admitted::Next => {
                shared.deferred.put_back(request);
                break;
            }
        };
        let kind = spec.events.deferred_kind(request.tx).unwrap_or(request.tx);
        let job = Execution { tx: request.tx, kind, act_as: Some(&request.values) };
        let ran = client::run_to_success(&db, &spec, &shared, id, &rec, &mut client, job, request.queued).await;
        drop(busy);
        if ran.is_none() {
            break;
        }
    }
    Some(client)
}
