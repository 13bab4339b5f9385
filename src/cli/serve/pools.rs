//! The thread pools of the HTTP API: CPU work runs there, never on the HTTP threads (but a
//! short query's, when no write holds the store): reads on `fpdb-read-N`, the parsing and
//! fingerprints of write requests on `fpdb-write-N` at a lower priority. A panic there fails
//! one request, not the server.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use super::error::{internal_error, ApiError};
use super::Shared;

type Db = Arc<Shared>;

/// Run `f` on `pool`; a panic fails this request only.
pub(super) async fn run_on<T: Send + 'static>(
    pool: &rayon::ThreadPool,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    pool.spawn(move || {
        let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
    });
    match rx.await {
        Ok(Ok(v)) => Ok(v),
        _ => Err(internal_error()),
    }
}

/// A pool of all cores' size, its threads named `{name}-N` and `nice` steps below the server's
/// priority (`cli/nice.rs`).
pub(super) fn pool(name: &'static str, nice: i32) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(rayon::current_num_threads())
        .thread_name(move |i| format!("{name}-{i}"))
        .start_handler(move |_| crate::cli::nice::lower_this_thread(nice))
        .build()
        .expect("a thread pool")
}

/// Run a read's CPU work (fingerprints, lookups, page extraction) on the reads' pool
/// (`fpdb-read-N`): the store's writes use rayon's global pool (the records of a batch are
/// encoded on it), and a query must not queue behind them.
pub(super) async fn on_cpu<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    run_on(POOL.get_or_init(|| pool("fpdb-read", 0)), f).await
}

/// Nice value of the threads that read and fingerprint write requests: under a write load
/// that fills every core, the scheduler gives a query's threads the CPU first. (The writer
/// thread and the lookups it runs keep the default: they hold the store's lock, and a
/// lowered priority there would make queries wait longer for it.)
pub(super) const WRITE_NICE: i32 = crate::cli::nice::FEEDER_NICE;

/// Reading and fingerprinting for writes: on a pool of its own (`fpdb-write-N`, at a lower
/// priority), so that queries never queue behind a large request's documents.
pub(super) async fn on_write_cpu<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    run_on(write_pool(), f).await
}

/// The writes' pool (`fpdb-write-N`, at a lower priority): requests are parsed and their
/// documents fingerprinted there.
pub(super) fn write_pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| pool("fpdb-write", WRITE_NICE))
}

/// `read` run against the store (read lock) on the reads' pool; a store error is a 500.
pub(super) async fn read_db<T: Send + 'static>(
    s: Db,
    read: impl FnOnce(&fpdb::Fpdb) -> fpdb::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    on_cpu(move || {
        read(
            &s.db
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    })
    .await?
    .map_err(ApiError::store)
}
