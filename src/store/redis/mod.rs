//! [`Store`] on a Redis Cluster, shared by many processes (`--db redis://host:port,…/NS`).
//!
//! **Key layout.** Every column family is cut into *buckets* by a prefix of its keys (a hash
//! of the key for `doc_ids`, whose ids are not ordered usefully). A bucket is a sorted set of
//! its keys (score 0, so ordered bytewise: range scans are `ZRANGE … BYLEX`) and, for the
//! families with values, a hash key → value; both share one hash tag, so one slot holds a
//! bucket (a page of keys is a `ZRANGE`, their values one `HMGET`). A per-family registry (a
//! sorted set of bucket names) tells a scan which buckets exist in its range.
//!
//! | family | bucket | spread |
//! |---|---|---|
//! | `meta` | one | a few keys |
//! | `docs`, `clusters`, `members` | first 7 key bytes (256 seqs / ids per bucket) | by document |
//! | `doc_ids` | one byte of the id's hash (256 buckets) | by id |
//! | `nshash` | top 12 bits of the sentence hash (4,096 buckets) | by hash |
//! | `simhash` | table byte + top 12 bits of the permuted fingerprint | by table and prefix |
//!
//! Keys: `{NS:F:HEX}z` (sorted set), `{NS:F:HEX}h` (hash), `{NS:F}b` (registry), where F is
//! the family's index and HEX the bucket; `{NS}lease`, `{NS}queue`, `{NS}seen`,
//! `{NS}commit`, `{NS}applied` and `{NS}log:N` belong to the writers (`{NS}journal` is an
//! older fpdb's journal, replayed when found).
//!
//! **Atomic batches.** A batch spans slots, which Redis Cluster cannot change atomically, so
//! it is first written whole under the lease, numbered, as a log (`{NS}log:N`, `{NS}commit`
//! = N, the writer's expiring claim `{NS}owner:N`). The writer applies it (pipelines) after
//! giving the lease back, in log order, marks it applied (`{NS}applied` = N) and drops its
//! claim (`apply`); until then the next writers read it through its log, laid over the
//! cluster's answers. A writer that dies in between leaves `commit` > `applied` and a claim
//! that expires: the first writer to find it expired claims the batch and applies it from its
//! log (every op is idempotent), so a batch is applied entirely or not at all as far as any
//! writer can tell. With `?wait=N` a batch is applied under the lease. Readers without the
//! lease (queries) can see a batch half applied while it is being applied. The last
//! `KEEP_LOGS` logs stay, for the next point.
//!
//! **Many writers.** Writes happen under a lease (`SET {NS}lease TOKEN NX PX`), granted in
//! arrival order (`{NS}queue`); the engine reloads its counters after taking it, so batches
//! of all writers are decided one after another against everything committed before them:
//! the result equals a sequential ingest of the batches in lease order. A writer checks and
//! extends its lease before each write; one that stalled longer than the lease (60 s by
//! default) is refused with an error instead of writing over its successor, except in the
//! window between that check and its write. A writer looks its next batch up before it asks
//! for the lease, while others hold it ([`ReadAhead::read_before_lease`]); while it waits and
//! once it holds the lease, it brings what it read up to date with the logs of the batches
//! committed since (`since`), so the lookups under the lease are answered from memory as
//! if read then.
//!
//! **Durability.** Acknowledged = on the masters' disks when they run with
//! `appendfsync always` (`scripts/redis-cluster.sh` does); `?wait=N` also waits (`WAIT`) for N
//! replicas of every master before the log is applied and at each sync, so a failover
//! loses nothing acknowledged. Commands are retried for `?retry=SECS` (30) through failovers.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use redis::cluster::{ClusterClient, ClusterConnection};

mod apply;
mod read;
mod since;
mod url;
mod write;

use read::hex;
use since::{Since, KEEP_LOGS};
pub use url::RedisUrl;
use write::{journal_of, ACQUIRE_LUA, RELEASE_LUA};

use super::{Batch, Cf, Lease, ReadAhead, Store};
use crate::error::{Error, Result};

/// Keys (with values) read per round trip of a scan.
const PAGE: usize = 512;
/// Most arguments of one ZADD / HSET / ZREM / HDEL command.
const ARGS: usize = 1024;
/// Commands per pipeline of a write.
const PIPE: usize = 4096;
/// Buckets whose first pages one pipeline of a multi-bucket scan reads.
const SCAN_BUCKETS: usize = 256;

/// A store on a Redis Cluster.
pub struct RedisStore {
    url: RedisUrl,
    client: ClusterClient,
    /// Idle connections (a cluster connection serves one caller at a time).
    pool: Mutex<Vec<ClusterConnection>>,
    read_only: bool,
    /// This process's lease token (unique per open).
    token: String,
    leased: AtomicBool,
    /// The number of the last batch committed (logged), as this writer knows it under the
    /// lease.
    commit: AtomicU64,
    /// Writes since the last sync (for `WAIT`).
    unsynced: AtomicU64,
    /// The connection every write goes through, so that a `WAIT` on it covers them all
    /// (`WAIT` counts the replicas that hold the writes of the connection it is sent on).
    writer: Mutex<Option<ClusterConnection>>,
    /// What `WAIT` has not acknowledged yet, to write again through a new connection
    /// ([`RedisStore::wait_replicas`]).
    unacked: Mutex<Unacked>,
    /// Answers read ahead for a batch's lookups ([`ReadAhead`]);
    /// dropped at every write and when the lease is given back, and brought up to date
    /// with what others wrote meanwhile when it is taken ([`since`]).
    cache: Mutex<Prefetched>,
    /// Batches logged under the lease, to apply once it is given back ([`apply`]).
    pending: Mutex<Vec<(u64, std::sync::Arc<Vec<crate::store::Op>>)>>,
    /// Under the lease: the changes of the batches logged and not yet applied (theirs
    /// in order), and them as an overlay over the cluster's answers.
    overlay: Mutex<Overlaid>,
    /// When the lease was last taken and given back.
    acquired: Mutex<Option<Instant>>,
    released: Mutex<Option<Instant>>,
}

/// The batches logged and not yet applied, oldest first, whose changes lie over the
/// cluster's answers under the lease.
type Overlaid = Vec<std::sync::Arc<apply::Layer>>;

/// The entries of a range, in key order.
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// The writes no `WAIT` has acknowledged yet (kept only when the address asks for replicas).
#[derive(Default)]
struct Unacked {
    /// The changes, in the order they were written.
    ops: Vec<crate::store::Op>,
    /// The log of the batch being written (its number and journal), since the last
    /// acknowledged `WAIT`.
    log: Option<(u64, Vec<u8>)>,
    /// The batch marked applied since then.
    applied: Option<u64>,
    /// The writer's connection was replaced since they were written: a `WAIT` on the new
    /// one would not cover them.
    replaced: bool,
}

/// Complete answers of whole ranges and single keys, read ahead in one pipeline.
#[derive(Default)]
struct Prefetched {
    ranges: std::collections::HashMap<(usize, Vec<u8>, Vec<u8>), Entries>,
    keys: std::collections::HashMap<(usize, Vec<u8>), Option<Vec<u8>>>,
    /// Set while reading before the lease: where the store stood then. Every answer read
    /// is kept meanwhile ([`RedisStore::read_since_now`]).
    since: Option<Since>,
    /// Nothing was committed between the reads before the lease and taking it.
    unchanged: bool,
    /// The logs read to bring them up to date (by batch number), decoded.
    logs: std::collections::BTreeMap<u64, std::sync::Arc<apply::Layer>>,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.url)
            .finish()
    }
}

fn storage(url: &RedisUrl, what: &str, e: redis::RedisError) -> Error {
    Error::Storage(format!(
        "redis://{}/{}: {what}: {e}",
        url.nodes.join(","),
        url.namespace
    ))
}

/// Errors worth retrying: the cluster is changing (failover, resharding) or a node is
/// unreachable for a moment.
fn transient(e: &redis::RedisError) -> bool {
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || e.is_cluster_error()
        || matches!(
            e.kind(),
            redis::ErrorKind::Server(redis::ServerErrorKind::ClusterDown)
                | redis::ErrorKind::Server(redis::ServerErrorKind::TryAgain)
                | redis::ErrorKind::Server(redis::ServerErrorKind::BusyLoading)
                | redis::ErrorKind::Server(redis::ServerErrorKind::Moved)
                | redis::ErrorKind::Server(redis::ServerErrorKind::Ask)
                | redis::ErrorKind::Server(redis::ServerErrorKind::MasterDown)
                | redis::ErrorKind::Server(redis::ServerErrorKind::ReadOnly)
        )
        // A blocked command (`WAIT`) on a master that became a replica in a failover.
        || e.code() == Some("UNBLOCKED")
}

impl RedisStore {
    /// Connect to the cluster of `url` (`redis://…`). Nothing is created until the first
    /// write; the engine decides whether a store exists by its format key.
    pub fn open(url: &str, read_only: bool) -> Result<RedisStore> {
        let url = RedisUrl::parse(url)?;
        let client = ClusterClient::builder(url.nodes.iter().map(|n| format!("redis://{n}/")))
            .connection_timeout(Duration::from_secs(2))
            .response_timeout(Duration::from_secs(10))
            .retries(4)
            .min_retry_wait(50)
            .max_retry_wait(1000)
            .build()
            .map_err(|e| storage(&url, "bad cluster address", e))?;
        static OPENS: AtomicU64 = AtomicU64::new(0);
        let token = format!(
            "{}:{}:{}:{}",
            std::env::var("HOSTNAME").unwrap_or_default(),
            std::process::id(),
            crate::clock::now(),
            OPENS.fetch_add(1, Ordering::Relaxed)
        );
        let s = RedisStore {
            url,
            client,
            pool: Mutex::new(Vec::new()),
            read_only,
            token,
            leased: AtomicBool::new(false),
            commit: AtomicU64::new(0),
            unsynced: AtomicU64::new(0),
            writer: Mutex::new(None),
            unacked: Mutex::new(Unacked::default()),
            cache: Mutex::new(Prefetched::default()),
            pending: Mutex::new(Vec::new()),
            overlay: Mutex::new(Vec::new()),
            acquired: Mutex::new(None),
            released: Mutex::new(None),
        };
        // Connect now, so that a wrong address fails here with a clear message; a server
        // without cluster mode connects but serves no slots.
        let c = s.connect()?;
        s.pool.lock().expect("pool").push(c);
        let lease = s.ns_key("lease");
        s.run("first read", |c| {
            redis::cmd("EXISTS").arg(&lease).query::<i64>(c)
        })
        .map_err(|e| match e {
            Error::Storage(m) => Error::Storage(format!(
                "{m} (is it a Redis Cluster? fpdb needs `cluster-enabled yes` with every slot \
                 served: scripts/redis-cluster.sh starts one; a single server without cluster \
                 mode is not supported)"
            )),
            other => other,
        })?;
        Ok(s)
    }

    /// The parsed address.
    pub fn url(&self) -> &RedisUrl {
        &self.url
    }

    fn connect(&self) -> Result<ClusterConnection> {
        let deadline = Instant::now() + self.url.retry;
        loop {
            match self.client.get_connection() {
                Ok(c) => return Ok(c),
                Err(e) if transient(&e) && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(e) => return Err(storage(&self.url, "cannot connect", e)),
            }
        }
    }

    /// Run `f` on a pooled connection, retrying transient errors until the retry deadline
    /// (`f` must be idempotent).
    fn run<T>(
        &self,
        what: &str,
        mut f: impl FnMut(&mut ClusterConnection) -> redis::RedisResult<T>,
    ) -> Result<T> {
        let deadline = Instant::now() + self.url.retry;
        let mut wait = Duration::from_millis(50);
        loop {
            let pooled = self.pool.lock().expect("pool").pop();
            let mut c = match pooled {
                Some(c) => c,
                None => self.connect()?,
            };
            match f(&mut c) {
                Ok(v) => {
                    self.pool.lock().expect("pool").push(c);
                    return Ok(v);
                }
                Err(e) if transient(&e) && Instant::now() < deadline => {
                    // Drop the connection: its view of the cluster may be stale.
                    drop(c);
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(Duration::from_secs(1));
                }
                Err(e) => {
                    if !transient(&e) {
                        self.pool.lock().expect("pool").push(c);
                    }
                    return Err(storage(&self.url, what, e));
                }
            }
        }
    }

    /// [`RedisStore::run`] on the writer's own connection (`f` must be idempotent). A
    /// transient error replaces the connection (what went through the old one is then
    /// written again before a `WAIT` counts on it: [`RedisStore::wait_replicas`]); with
    /// `retry` false it is returned, not retried.
    fn run_write<T>(
        &self,
        what: &str,
        retry: bool,
        mut f: impl FnMut(&mut ClusterConnection) -> redis::RedisResult<T>,
    ) -> Result<T> {
        let deadline = Instant::now() + self.url.retry;
        let mut wait = Duration::from_millis(50);
        let mut writer = self.writer.lock().expect("writer");
        loop {
            let c = match writer.as_mut() {
                Some(c) => c,
                None => writer.insert(self.connect()?),
            };
            match f(c) {
                Ok(v) => return Ok(v),
                Err(e) if transient(&e) => {
                    // Its view of the cluster may be stale, and a `WAIT` on a new one does
                    // not cover what this one wrote.
                    *writer = None;
                    self.unacked.lock().expect("unacked").replaced = true;
                    if !retry || Instant::now() >= deadline {
                        return Err(storage(&self.url, what, e));
                    }
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(Duration::from_secs(1));
                }
                Err(e) => return Err(storage(&self.url, what, e)),
            }
        }
    }

    fn ns_key(&self, suffix: &str) -> String {
        format!("{{{}}}{suffix}", self.url.namespace)
    }

    fn zkey(&self, cf: Cf, bucket: &[u8]) -> String {
        format!("{{{}:{}:{}}}z", self.url.namespace, cf.index(), hex(bucket))
    }

    fn hkey(&self, cf: Cf, bucket: &[u8]) -> String {
        format!("{{{}:{}:{}}}h", self.url.namespace, cf.index(), hex(bucket))
    }

    fn registry(&self, cf: Cf) -> String {
        format!("{{{}:{}}}b", self.url.namespace, cf.index())
    }
}

impl Store for RedisStore {
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_over(cf, key)
    }

    fn scan(
        &self,
        cf: Cf,
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.scan_over(cf, start, end, visit)
    }

    fn scan_ranges(
        &self,
        cf: Cf,
        ranges: &[(&[u8], &[u8])],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.scan_ranges_over(cf, ranges, visit)
    }

    fn write(&self, batch: Batch) -> Result<()> {
        if self.read_only {
            return Err(Error::Storage(format!(
                "redis store {} is open read-only",
                self.url.namespace
            )));
        }
        if batch.is_empty() {
            return Ok(());
        }
        self.forget_prefetched();
        if self.leased.load(Ordering::SeqCst) {
            self.renew()?;
        }
        // The journal first, numbered and claimed, then (on its replicas) the changes, then
        // the batch marked applied: a writer dying in between leaves a batch committed and
        // not applied, which the next writer applies once the claim expires. The log stays
        // for the next [`KEEP_LOGS`] batches, for writers that read before it was
        // committed. Without replicas to wait for, the changes are applied after the lease
        // is given back ([`apply`]); until then they lie over the cluster's answers here.
        if self.pending.lock().expect("pending").len() as u64 >= KEEP_LOGS / 4 {
            // Many writes under one lease: the earlier ones applied now, so that no log is
            // dropped (32 batches on) before its batch is applied.
            self.apply_logged()?;
            self.clear_overlay();
        }
        let n = if self.leased.load(Ordering::SeqCst) {
            self.commit.load(Ordering::SeqCst)
        } else {
            self.commit_and_applied()?.0
        } + 1;
        self.set_log(n, &journal_of(batch.ops()), true)?;
        if self.url.wait == 0 && self.leased.load(Ordering::SeqCst) {
            let ops = std::sync::Arc::new(batch.ops);
            self.lay_over([std::sync::Arc::new(apply::Layer::new(ops.clone()))]);
            self.pending.lock().expect("pending").push((n, ops));
            return Ok(());
        }
        self.wait_replicas()?;
        self.note_unacked(batch.ops());
        self.apply_own(n, batch.ops())?;
        self.unsynced.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        if self.unsynced.swap(0, Ordering::Relaxed) > 0 {
            self.wait_replicas()?;
        }
        Ok(())
    }

    fn read_only(&self) -> bool {
        self.read_only
    }

    fn lease(&self) -> Option<&dyn Lease> {
        Some(self)
    }

    fn read_ahead(&self) -> Option<&dyn ReadAhead> {
        Some(self)
    }
}

impl Lease for RedisStore {
    fn acquire_writer(&self) -> Result<()> {
        if self.read_only || self.leased.load(Ordering::SeqCst) {
            return Ok(());
        }
        let keys = [
            self.ns_key("lease"),
            self.ns_key("queue"),
            self.ns_key("seen"),
        ];
        let mut pause = Duration::from_millis(1);
        // What was read ahead brought up to date so far, so that little is left under the
        // lease.
        self.catch_up_waiting();
        loop {
            let got: i64 = self.run("take the write lease", |c| {
                redis::cmd("EVAL")
                    .arg(ACQUIRE_LUA)
                    .arg(3)
                    .arg(&keys[..])
                    .arg(&self.token)
                    .arg(self.url.lease_ms)
                    .query(c)
            })?;
            if got == 1 {
                break;
            }
            self.catch_up_waiting();
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(8));
        }
        self.leased.store(true, Ordering::SeqCst);
        *self.acquired.lock().expect("acquired") = Some(Instant::now());
        // What was read before the lease brought up to date (or dropped), and the batches
        // not yet applied laid over the cluster's answers.
        let settled = self.replay_older_journal().and_then(|older| {
            let (commit, applied) = self.commit_and_applied()?;
            self.commit.store(commit, Ordering::SeqCst);
            self.catch_up(older)?;
            let logs = std::mem::take(&mut self.cache.lock().expect("cache").logs);
            self.settle_logged(commit, applied, &logs)
        });
        if let Err(e) = settled {
            let _ = self.release_writer();
            return Err(e);
        }
        Ok(())
    }

    fn release_writer(&self) -> Result<()> {
        // Others may write from now on: nothing read ahead stays (also after a batch that
        // failed before writing, which would not have cleared it).
        self.forget_prefetched();
        self.clear_overlay();
        if !self.leased.swap(false, Ordering::SeqCst) {
            return self.apply_logged();
        }
        let lease = self.ns_key("lease");
        let released = self.run("give up the write lease", |c| {
            redis::cmd("EVAL")
                .arg(RELEASE_LUA)
                .arg(1)
                .arg(&lease)
                .arg(&self.token)
                .query::<i64>(c)
        });
        *self.released.lock().expect("released") = Some(Instant::now());
        // The batches logged under the lease, applied now (in their turn): if this fails,
        // their claims expire and the next writer applies them from their logs.
        let applied = self.apply_logged();
        released.map(|_| ()).and(applied)
    }

    fn acquired_at(&self) -> Option<Instant> {
        *self.acquired.lock().expect("acquired")
    }

    fn released_at(&self) -> Option<Instant> {
        *self.released.lock().expect("released")
    }
}

impl Drop for RedisStore {
    fn drop(&mut self) {
        let _ = self.release_writer();
    }
}
