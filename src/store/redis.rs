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
//! `{NS}journal` belong to the writers.
//!
//! **Atomic batches.** A batch spans slots, which Redis Cluster cannot change atomically, so
//! it is first written whole to the journal key, then applied (one pipeline), then the
//! journal is deleted. A writer that dies between the two leaves the journal; the next holder
//! of the write lease replays it first (every op is idempotent), so a batch is applied
//! entirely or not at all as far as any writer can tell. Readers without the lease (queries)
//! can see a batch half applied while it is being applied.
//!
//! **Many writers.** Writes happen under a lease (`SET {NS}lease TOKEN NX PX`), granted in
//! arrival order (`{NS}queue`); the engine reloads its counters after taking it, so batches
//! of all writers are decided one after another against everything committed before them:
//! the result equals a sequential ingest of the batches in lease order. A writer checks and
//! extends its lease before each write; one that stalled longer than the lease (60 s by
//! default) is refused with an error instead of writing over its successor, except in the
//! window between that check and its write.
//!
//! **Durability.** Acknowledged = on the masters' disks when they run with
//! `appendfsync always` (`scripts/redis-cluster.sh` does); `?wait=N` also waits (`WAIT`) for N
//! replicas of every master before the journal is applied and at each sync, so a failover
//! loses nothing acknowledged. Commands are retried for `?retry=SECS` (30) through failovers.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use redis::cluster::{cluster_pipe, ClusterClient, ClusterConnection, ClusterPipeline};

use super::{Batch, Cf, Op, Store};
use crate::error::{Error, Result};

/// Keys (with values) read per round trip of a scan.
const PAGE: usize = 512;
/// Most arguments of one ZADD / HSET / ZREM / HDEL command.
const ARGS: usize = 1024;
/// Commands per pipeline of a write.
const PIPE: usize = 4096;
/// Buckets whose first pages one pipeline of a multi-bucket scan reads.
const SCAN_BUCKETS: usize = 256;

/// Where a `redis://` store lives and how it writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisUrl {
    /// `host:port` of one or more cluster nodes.
    pub nodes: Vec<String>,
    /// Namespace: every key of the store starts with it (in its hash tag).
    pub namespace: String,
    /// Replicas of every master that must have a write before it counts (`WAIT`); 0 = rely
    /// on the masters' own fsync.
    pub wait: u32,
    /// Lease time of a writer, milliseconds.
    pub lease_ms: u64,
    /// How long a command is retried through failovers and refused connections.
    pub retry: Duration,
}

impl RedisUrl {
    /// Whether `s` names a Redis store rather than a directory.
    pub fn is_redis(s: &str) -> bool {
        super::is_redis_url(s)
    }

    /// Parse `redis://host:port[,host:port…]/NAMESPACE[?wait=N&lease=SECS&retry=SECS]`.
    pub fn parse(s: &str) -> Result<RedisUrl> {
        let bad = |why: &str| {
            Error::Storage(format!(
                "{s}: {why} (expected redis://host:port[,host:port…]/NAMESPACE[?wait=N&lease=SECS&retry=SECS])"
            ))
        };
        let rest = s
            .strip_prefix("redis://")
            .ok_or_else(|| bad("not a redis:// address"))?;
        let (hosts, path) = rest.split_once('/').ok_or_else(|| bad("no /NAMESPACE"))?;
        let (namespace, query) = match path.split_once('?') {
            Some((n, q)) => (n, q),
            None => (path, ""),
        };
        if namespace.is_empty()
            || namespace.len() > 64
            || !namespace
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
        {
            return Err(bad(
                "the namespace must be 1-64 characters of letters, digits, '_', '.', '-'",
            ));
        }
        let mut nodes = Vec::new();
        for h in hosts.split(',') {
            let (host, port) = h
                .rsplit_once(':')
                .ok_or_else(|| bad("a node without :port"))?;
            if host.is_empty() || port.parse::<u16>().map_or(true, |p| p == 0) {
                return Err(bad(&format!("bad node {h:?}")));
            }
            nodes.push(h.to_string());
        }
        let mut url = RedisUrl {
            nodes,
            namespace: namespace.to_string(),
            wait: 0,
            lease_ms: 60_000,
            retry: Duration::from_secs(30),
        };
        for kv in query.split('&').filter(|kv| !kv.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| bad(&format!("bad option {kv:?}")))?;
            let n: u64 = v
                .parse()
                .map_err(|_| bad(&format!("{k}: {v:?} is not a whole number")))?;
            match k {
                "wait" if n <= 16 => url.wait = n as u32,
                "lease" if (1..=3600).contains(&n) => url.lease_ms = n * 1000,
                "retry" if n <= 3600 => url.retry = Duration::from_secs(n),
                "wait" | "lease" | "retry" => return Err(bad(&format!("{k}={v} is out of range"))),
                _ => return Err(bad(&format!("unknown option {k:?}"))),
            }
        }
        Ok(url)
    }
}

/// How a family is cut into buckets.
fn bucket_of(cf: Cf, key: &[u8]) -> Vec<u8> {
    if cf == Cf::DocIds {
        return vec![(crate::hash::fingerprint64(key) >> 56) as u8];
    }
    let (n, last) = prefix_of(cf);
    let mut b = key[..key.len().min(n)].to_vec();
    if b.len() == n && n > 0 {
        b[n - 1] &= last;
    }
    b
}

/// The bucket prefix of an ordered family: its length in bytes and the mask of its last
/// byte. Bits, not bytes, set the size: 4,096 buckets of `nshash` and 4,096 per simhash
/// table hold a batch's postings in a few hundred per bucket at most, so a batch is a few
/// thousand ZADD/HSET commands of many members each rather than one per posting (65,536
/// buckets per family cost the servers 30% more CPU and 1.8x the memory at 10^4 documents),
/// while 10^7 documents still leave each bucket a few MB and spread a table over 4,096 slots.
fn prefix_of(cf: Cf) -> (usize, u8) {
    match cf {
        Cf::Meta | Cf::DocIds => (0, 0xff),
        Cf::Docs | Cf::Clusters | Cf::Members => (7, 0xff),
        Cf::Nshash => (2, 0xf0),
        Cf::Simhash => (3, 0xf0),
    }
}

/// Whether a family's buckets are key prefixes (so buckets in key order hold keys in key
/// order); `doc_ids` is bucketed by hash.
fn ordered(cf: Cf) -> bool {
    cf != Cf::DocIds
}

/// Whether a family stores values (the others store keys only: no hash per bucket).
fn has_values(cf: Cf) -> bool {
    !matches!(cf, Cf::Simhash | Cf::Members)
}

/// The one bucket holding every key of `[start, end)` when both bounds share it (a lookup's
/// range: one posting list, one simhash prefix), so no registry read is needed.
fn single_bucket(cf: Cf, start: &[u8], end: &[u8]) -> Option<Vec<u8>> {
    if !ordered(cf) {
        return None;
    }
    let b = bucket_of(cf, start);
    let n = prefix_of(cf).0;
    (start.len() >= n && end.len() >= n && bucket_of(cf, end) == b).then_some(b)
}

/// Keys of a page, and their values (empty for key-only families).
type Page = (Vec<Vec<u8>>, Vec<Option<Vec<u8>>>);

/// Visit `entries` in order until `visit` returns false.
fn visit_all(entries: &Entries, visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) {
    for (k, v) in entries {
        if !visit(k, v) {
            break;
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `[` + bytes: an inclusive lexicographic bound; `(` exclusive.
fn lex(incl: bool, b: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(b.len() + 1);
    v.push(if incl { b'[' } else { b'(' });
    v.extend_from_slice(b);
    v
}

/// Take the lease in arrival order: KEYS lease, queue, seen; ARGV token, lease ms.
const ACQUIRE_LUA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[2], 'NX', now, ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], now)
local all = redis.call('HGETALL', KEYS[3])
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) < now - 3000 then
    redis.call('ZREM', KEYS[2], all[i])
    redis.call('HDEL', KEYS[3], all[i])
  end
end
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if holder then return 0 end
local head = redis.call('ZRANGE', KEYS[2], 0, 0)
if head[1] ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
";

/// Extend the lease if still ours: KEYS lease; ARGV token, lease ms.
const RENEW_LUA: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
";

/// Give the lease up if still ours: KEYS lease; ARGV token.
const RELEASE_LUA: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
";

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
    /// Writes since the last sync (for `WAIT`).
    unsynced: AtomicU64,
    /// Answers read ahead for a batch's lookups ([`Store::prefetch`]); dropped at every write
    /// and whenever the lease is taken (others may have written).
    cache: Mutex<Prefetched>,
}

/// The entries of a range, in key order.
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Complete answers of whole ranges and single keys, read ahead in one pipeline.
#[derive(Default)]
struct Prefetched {
    ranges: std::collections::HashMap<(usize, Vec<u8>, Vec<u8>), Entries>,
    keys: std::collections::HashMap<(usize, Vec<u8>), Option<Vec<u8>>>,
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
        )
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
            unsynced: AtomicU64::new(0),
            cache: Mutex::new(Prefetched::default()),
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

    /// Buckets of `cf` that may hold keys in `[start, end)`, in order.
    fn buckets(&self, cf: Cf, start: &[u8], end: &[u8]) -> Result<Vec<Vec<u8>>> {
        let reg = self.registry(cf);
        let (lo, hi) = if ordered(cf) {
            // Masking is monotone: a key in [start, end) has a bucket in
            // [bucket(start), bucket(end)] (short bounds are their own prefixes).
            (
                lex(true, &bucket_of(cf, start)),
                lex(true, &bucket_of(cf, end)),
            )
        } else {
            (b"-".to_vec(), b"+".to_vec())
        };
        self.run("list buckets", |c| {
            redis::cmd("ZRANGE")
                .arg(&reg)
                .arg(&lo)
                .arg(&hi)
                .arg("BYLEX")
                .query(c)
        })
    }

    /// The command reading one page of a bucket's keys: from `lo` (a lexicographic bound)
    /// below `end`.
    fn page_cmd(&self, cf: Cf, bucket: &[u8], lo: &[u8], end: &[u8]) -> redis::Cmd {
        let mut c = redis::cmd("ZRANGE");
        c.arg(self.zkey(cf, bucket))
            .arg(lo)
            .arg(lex(false, end))
            .arg("BYLEX")
            .arg("LIMIT")
            .arg(0)
            .arg(PAGE);
        c
    }

    /// Visit a page; returns Some(next lower bound) when the bucket may hold more, None when
    /// it is done or `visit` asked to stop (`stopped` tells which).
    fn visit_page(
        page: &Page,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
        stopped: &mut bool,
    ) -> Option<Vec<u8>> {
        let (keys, values) = page;
        for (i, k) in keys.iter().enumerate() {
            let v = match values.get(i) {
                Some(Some(v)) => v.as_slice(),
                // A key whose value is gone: deleted between the two reads.
                Some(None) => continue,
                None => &[],
            };
            if !visit(k, v) {
                *stopped = true;
                return None;
            }
        }
        match keys.last() {
            Some(last) if keys.len() == PAGE => Some(lex(false, last)),
            _ => None,
        }
    }

    /// Keys (and values) of one bucket in `[start, end)`, a page at a time, until `visit`
    /// returns false; returns whether to go on.
    fn scan_bucket(
        &self,
        cf: Cf,
        bucket: &[u8],
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<bool> {
        self.scan_bucket_from(cf, bucket, lex(true, start), end, visit)
    }

    fn scan_bucket_from(
        &self,
        cf: Cf,
        bucket: &[u8],
        mut lo: Vec<u8>,
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<bool> {
        loop {
            let mut p: ClusterPipeline = cluster_pipe();
            p.add_command(self.page_cmd(cf, bucket, &lo, end));
            let page = self
                .pipelined_pages(cf, &[bucket], &p)?
                .pop()
                .unwrap_or_default();
            let mut stopped = false;
            match Self::visit_page(&page, visit, &mut stopped) {
                Some(next) => lo = next,
                None => return Ok(!stopped),
            }
        }
    }

    /// The pages a pipeline of [`RedisStore::page_cmd`]s (one per bucket of `buckets`)
    /// returns, in order, with their values read in a second pipeline (plain commands, not a
    /// script: a Lua call cost the server ~5x a ZRANGE). A value deleted between the two
    /// reads comes back as None and is skipped.
    fn pipelined_pages(&self, cf: Cf, buckets: &[&[u8]], p: &ClusterPipeline) -> Result<Vec<Page>> {
        if p.cmd_iter().next().is_none() {
            return Ok(Vec::new());
        }
        let keys: Vec<Vec<Vec<u8>>> = self.run("scan", |c| p.query(c))?;
        if !has_values(cf) {
            return Ok(keys.into_iter().map(|k| (k, Vec::new())).collect());
        }
        let mut hp: ClusterPipeline = cluster_pipe();
        for (b, ks) in buckets.iter().zip(&keys).filter(|(_, ks)| !ks.is_empty()) {
            let mut c = redis::cmd("HMGET");
            c.arg(self.hkey(cf, b));
            for k in ks {
                c.arg(k.as_slice());
            }
            hp.add_command(c);
        }
        let mut values: std::vec::IntoIter<Vec<Option<Vec<u8>>>> = if hp.cmd_iter().next().is_some()
        {
            self.run("scan", |c| hp.query::<Vec<Vec<Option<Vec<u8>>>>>(c))?
                .into_iter()
        } else {
            Vec::new().into_iter()
        };
        keys.into_iter()
            .map(|ks| {
                let vs = if ks.is_empty() {
                    Vec::new()
                } else {
                    values.next().ok_or_else(|| {
                        Error::Storage("redis: a pipelined read lost a reply".into())
                    })?
                };
                Ok((ks, vs))
            })
            .collect()
    }

    fn forget_prefetched(&self) {
        let mut c = self.cache.lock().expect("cache");
        c.ranges.clear();
        c.keys.clear();
    }

    /// A prefetched range's entries, if `[start, end)` was read ahead.
    fn prefetched(&self, cf: Cf, start: &[u8], end: &[u8]) -> Option<Entries> {
        let c = self.cache.lock().expect("cache");
        if c.ranges.is_empty() {
            return None;
        }
        c.ranges
            .get(&(cf.index(), start.to_vec(), end.to_vec()))
            .cloned()
    }

    /// [`RedisStore::scan_bucket`] of many buckets in order, their first pages read in
    /// pipelines of [`SCAN_BUCKETS`] buckets (a full scan of `simhash` is up to 40,960 buckets: one
    /// round trip per bucket made `verify` crawl). Returns whether to go on.
    fn scan_buckets(
        &self,
        cf: Cf,
        buckets: &[Vec<u8>],
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<bool> {
        for chunk in buckets.chunks(SCAN_BUCKETS) {
            let mut p: ClusterPipeline = cluster_pipe();
            for b in chunk {
                p.add_command(self.page_cmd(cf, b, &lex(true, start), end));
            }
            let names: Vec<&[u8]> = chunk.iter().map(std::vec::Vec::as_slice).collect();
            let pages = self.pipelined_pages(cf, &names, &p)?;
            for (b, page) in chunk.iter().zip(pages) {
                let mut stopped = false;
                if let Some(next) = Self::visit_page(&page, visit, &mut stopped) {
                    if !self.scan_bucket_from(cf, b, next, end, visit)? {
                        return Ok(false);
                    }
                }
                if stopped {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// The lease key holder's check: still ours (extended), else an error.
    fn renew(&self) -> Result<()> {
        let lease = self.ns_key("lease");
        let ok: i64 = self.run("renew the write lease", |c| {
            redis::cmd("EVAL")
                .arg(RENEW_LUA)
                .arg(1)
                .arg(&lease)
                .arg(&self.token)
                .arg(self.url.lease_ms)
                .query(c)
        })?;
        if ok != 1 {
            self.leased.store(false, Ordering::SeqCst);
            return Err(Error::Storage(format!(
                "redis store {}: this writer lost its write lease (it stalled longer than {} s); \
                 nothing more was written",
                self.url.namespace,
                self.url.lease_ms / 1000
            )));
        }
        Ok(())
    }

    /// Apply `ops` (idempotent: replaying them gives the same state).
    fn apply(&self, ops: &[Op]) -> Result<()> {
        // The last change to a key wins; grouped by (family, bucket).
        type Changes = BTreeMap<Vec<u8>, Option<Vec<u8>>>;
        let mut by_bucket: BTreeMap<(usize, Vec<u8>), Changes> = BTreeMap::new();
        for op in ops {
            let (cf, key, value) = match op {
                Op::Put(cf, k, v) => (*cf, k, Some(v.clone())),
                Op::Delete(cf, k) => (*cf, k, None),
            };
            by_bucket
                .entry((cf.index(), bucket_of(cf, key)))
                .or_default()
                .insert(key.clone(), value);
        }
        let mut cmds: Vec<redis::Cmd> = Vec::new();
        let mut registry: BTreeMap<usize, Vec<Vec<u8>>> = BTreeMap::new();
        for ((cfi, bucket), changes) in &by_bucket {
            let cf = Cf::ALL[*cfi];
            let (z, h) = (self.zkey(cf, bucket), self.hkey(cf, bucket));
            let puts: Vec<(&Vec<u8>, &Vec<u8>)> = changes
                .iter()
                .filter_map(|(k, v)| v.as_ref().map(|v| (k, v)))
                .collect();
            let dels: Vec<&Vec<u8>> = changes
                .iter()
                .filter(|(_, v)| v.is_none())
                .map(|(k, _)| k)
                .collect();
            if !puts.is_empty() {
                registry.entry(*cfi).or_default().push(bucket.clone());
            }
            for chunk in puts.chunks(ARGS) {
                let mut zadd = redis::cmd("ZADD");
                zadd.arg(&z);
                for (k, _) in chunk {
                    zadd.arg(0).arg(k.as_slice());
                }
                cmds.push(zadd);
                if has_values(cf) {
                    let mut hset = redis::cmd("HSET");
                    hset.arg(&h);
                    for (k, v) in chunk {
                        hset.arg(k.as_slice()).arg(v.as_slice());
                    }
                    cmds.push(hset);
                }
            }
            for chunk in dels.chunks(ARGS) {
                let mut zrem = redis::cmd("ZREM");
                zrem.arg(&z);
                let mut hdel = redis::cmd("HDEL");
                hdel.arg(&h);
                for k in chunk {
                    zrem.arg(k.as_slice());
                    hdel.arg(k.as_slice());
                }
                cmds.push(zrem);
                if has_values(cf) {
                    cmds.push(hdel);
                }
            }
        }
        for (cfi, buckets) in registry {
            for chunk in buckets.chunks(ARGS) {
                let mut zadd = redis::cmd("ZADD");
                zadd.arg(self.registry(Cf::ALL[cfi]));
                for b in chunk {
                    zadd.arg(0).arg(b.as_slice());
                }
                cmds.push(zadd);
            }
        }
        for chunk in cmds.chunks(PIPE) {
            let mut p: ClusterPipeline = cluster_pipe();
            for c in chunk {
                p.add_command(c.clone()).ignore();
            }
            self.run("write", |c| p.query::<()>(c))?;
        }
        Ok(())
    }

    /// Wait until `wait` replicas of every master have every write so far (a master that
    /// has lost its replicas, after a failover, holds writes up until one is back or the
    /// retry time is over).
    fn wait_replicas(&self) -> Result<()> {
        if self.url.wait == 0 {
            return Ok(());
        }
        let deadline = Instant::now() + self.url.retry;
        loop {
            // Short WAITs (under the response timeout), repeated.
            let n: i64 = self.run("wait for replicas", |c| {
                redis::cmd("WAIT").arg(self.url.wait).arg(1000).query(c)
            })?;
            if n >= i64::from(self.url.wait) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Error::Storage(format!(
                    "redis store {}: only {n} of {} replicas acknowledged the write in {} s",
                    self.url.namespace,
                    self.url.wait,
                    self.url.retry.as_secs()
                )));
            }
        }
    }

    /// Write `batch`'s journal and stop there, as a writer killed between the journal and
    /// applying it would (for tests of the replay; not part of the store's interface).
    #[doc(hidden)]
    pub fn write_journal_only(&self, batch: &Batch) -> Result<()> {
        let journal = self.ns_key("journal");
        let blob = journal_of(batch.ops());
        self.run("write the journal", |c| {
            redis::cmd("SET").arg(&journal).arg(&blob).query::<()>(c)
        })
    }

    /// Replay a batch a writer left half applied (it died between journal and delete).
    fn replay_journal(&self) -> Result<()> {
        let journal = self.ns_key("journal");
        let blob: Option<Vec<u8>> = self.run("read the journal", |c| {
            redis::cmd("GET").arg(&journal).query(c)
        })?;
        if let Some(blob) = blob {
            let ops = ops_of_journal(&blob).ok_or_else(|| {
                Error::Storage(format!(
                    "redis store {}: the journal of an unfinished write is damaged",
                    self.url.namespace
                ))
            })?;
            self.apply(&ops)?;
            self.run("clear the journal", |c| {
                redis::cmd("DEL").arg(&journal).query::<()>(c)
            })?;
        }
        Ok(())
    }
}

/// The journal of a batch: its ops, zstd-compressed (level 1: half the bytes of a batch of
/// short documents, for ~1 ms of CPU; the journal is written, replicated and fsynced once per
/// batch).
fn journal_of(ops: &[Op]) -> Vec<u8> {
    let raw = encode_ops(ops);
    match zstd::bulk::compress(&raw, 1) {
        Ok(z) => [&b"Z"[..], &z].concat(),
        Err(_) => [&b"R"[..], &raw].concat(),
    }
}

/// The ops of a journal written by [`journal_of`] (None: damaged).
fn ops_of_journal(blob: &[u8]) -> Option<Vec<Op>> {
    match blob.split_first()? {
        (b'Z', z) => decode_ops(&zstd::stream::decode_all(z).ok()?),
        (b'R', raw) => decode_ops(raw),
        _ => None,
    }
}

fn encode_ops(ops: &[Op]) -> Vec<u8> {
    let mut out = Vec::new();
    let field = |out: &mut Vec<u8>, b: &[u8]| {
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b);
    };
    for op in ops {
        match op {
            Op::Put(cf, k, v) => {
                out.push(1);
                out.push(cf.index() as u8);
                field(&mut out, k);
                field(&mut out, v);
            }
            Op::Delete(cf, k) => {
                out.push(2);
                out.push(cf.index() as u8);
                field(&mut out, k);
            }
        }
    }
    out
}

fn decode_ops(mut b: &[u8]) -> Option<Vec<Op>> {
    fn field<'a>(b: &mut &'a [u8]) -> Option<&'a [u8]> {
        let n = u32::from_le_bytes(b.get(..4)?.try_into().ok()?) as usize;
        let v = b.get(4..4 + n)?;
        *b = &b[4 + n..];
        Some(v)
    }
    let mut ops = Vec::new();
    while !b.is_empty() {
        let (tag, cf) = (b[0], *Cf::ALL.get(*b.get(1)? as usize)?);
        b = &b[2..];
        match tag {
            1 => {
                let k = field(&mut b)?.to_vec();
                ops.push(Op::Put(cf, k, field(&mut b)?.to_vec()));
            }
            2 => ops.push(Op::Delete(cf, field(&mut b)?.to_vec())),
            _ => return None,
        }
    }
    Some(ops)
}

impl Store for RedisStore {
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>> {
        {
            let c = self.cache.lock().expect("cache");
            if let Some(v) = c.keys.get(&(cf.index(), key.to_vec())) {
                return Ok(v.clone());
            }
        }
        let bucket = bucket_of(cf, key);
        if has_values(cf) {
            let h = self.hkey(cf, &bucket);
            self.run("get", |c| redis::cmd("HGET").arg(&h).arg(key).query(c))
        } else {
            let z = self.zkey(cf, &bucket);
            let score: Option<f64> =
                self.run("get", |c| redis::cmd("ZSCORE").arg(&z).arg(key).query(c))?;
            Ok(score.map(|_| Vec::new()))
        }
    }

    fn scan(
        &self,
        cf: Cf,
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        if start >= end {
            return Ok(());
        }
        if let Some(entries) = self.prefetched(cf, start, end) {
            visit_all(&entries, visit);
            return Ok(());
        }
        if let Some(b) = single_bucket(cf, start, end) {
            self.scan_bucket(cf, &b, start, end, visit)?;
            return Ok(());
        }
        let buckets = self.buckets(cf, start, end)?;
        if ordered(cf) {
            self.scan_buckets(cf, &buckets, start, end, visit)?;
            return Ok(());
        }
        // Hash buckets: gather, then visit in key order.
        let mut all: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        self.scan_buckets(cf, &buckets, start, end, &mut |k, v| {
            all.push((k.to_vec(), v.to_vec()));
            true
        })?;
        all.sort_unstable();
        visit_all(&all, visit);
        Ok(())
    }

    /// The first page of every single-bucket range in one pipelined round trip (one per
    /// node); the rest as [`Store::scan`] would.
    fn scan_ranges(
        &self,
        cf: Cf,
        ranges: &[(&[u8], &[u8])],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        let cached: Vec<Option<Entries>> = ranges
            .iter()
            .map(|(s, e)| self.prefetched(cf, s, e))
            .collect();
        let buckets: Vec<Option<Vec<u8>>> = ranges
            .iter()
            .zip(&cached)
            .map(|((s, e), hit)| {
                (s < e && hit.is_none())
                    .then(|| single_bucket(cf, s, e))
                    .flatten()
            })
            .collect();
        let mut p: ClusterPipeline = cluster_pipe();
        for ((start, end), b) in ranges.iter().zip(&buckets) {
            if let Some(b) = b {
                p.add_command(self.page_cmd(cf, b, &lex(true, start), end));
            }
        }
        let piped: Vec<&[u8]> = buckets
            .iter()
            .flatten()
            .map(std::vec::Vec::as_slice)
            .collect();
        let mut pages = self.pipelined_pages(cf, &piped, &p)?.into_iter();
        for (((start, end), b), hit) in ranges.iter().zip(&buckets).zip(cached) {
            if let Some(entries) = hit {
                visit_all(&entries, visit);
                continue;
            }
            match b {
                Some(b) => {
                    let page = pages.next().ok_or_else(|| {
                        Error::Storage("redis: a pipelined scan lost a reply".into())
                    })?;
                    let mut stopped = false;
                    if let Some(next) = Self::visit_page(&page, visit, &mut stopped) {
                        self.scan_bucket_from(cf, b, next, end, visit)?;
                    }
                }
                None => self.scan(cf, start, end, visit)?,
            }
        }
        Ok(())
    }

    fn prefetch(&self, cf: Cf, ranges: &[(&[u8], &[u8])]) -> Result<()> {
        let wanted: Vec<(&[u8], &[u8], Vec<u8>)> = ranges
            .iter()
            .filter(|(s, e)| s < e)
            .filter_map(|&(s, e)| single_bucket(cf, s, e).map(|b| (s, e, b)))
            .collect();
        for chunk in wanted.chunks(PIPE) {
            let mut p: ClusterPipeline = cluster_pipe();
            for (s, e, b) in chunk {
                p.add_command(self.page_cmd(cf, b, &lex(true, s), e));
            }
            let piped: Vec<&[u8]> = chunk.iter().map(|(_, _, b)| b.as_slice()).collect();
            let pages = self.pipelined_pages(cf, &piped, &p)?;
            let mut c = self.cache.lock().expect("cache");
            for ((s, e, _), (keys, values)) in chunk.iter().zip(pages) {
                if keys.len() >= PAGE {
                    continue; // not complete: scanned when asked
                }
                let entries = keys
                    .into_iter()
                    .enumerate()
                    .filter_map(|(i, k)| match values.get(i) {
                        Some(Some(v)) => Some((k, v.clone())),
                        Some(None) => None,
                        None => Some((k, Vec::new())),
                    })
                    .collect();
                c.ranges
                    .insert((cf.index(), s.to_vec(), e.to_vec()), entries);
            }
        }
        Ok(())
    }

    fn prefetch_keys(&self, cf: Cf, keys: &[&[u8]]) -> Result<()> {
        for chunk in keys.chunks(PIPE) {
            let mut p: ClusterPipeline = cluster_pipe();
            for k in chunk {
                let b = bucket_of(cf, k);
                if has_values(cf) {
                    p.cmd("HGET").arg(self.hkey(cf, &b)).arg(*k);
                } else {
                    p.cmd("ZSCORE").arg(self.zkey(cf, &b)).arg(*k);
                }
            }
            let replies: Vec<redis::Value> = self.run("get", |c| p.query(c))?;
            let mut c = self.cache.lock().expect("cache");
            for (k, v) in chunk.iter().zip(replies) {
                let v = match v {
                    redis::Value::Nil => None,
                    v if has_values(cf) => Some(
                        redis::from_redis_value::<Vec<u8>>(v)
                            .map_err(|e| storage(&self.url, "get", e.into()))?,
                    ),
                    _ => Some(Vec::new()),
                };
                c.keys.insert((cf.index(), k.to_vec()), v);
            }
        }
        Ok(())
    }

    fn end_prefetch(&self) {
        self.forget_prefetched();
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
        let journal = self.ns_key("journal");
        let blob = journal_of(batch.ops());
        self.run("write the journal", |c| {
            redis::cmd("SET").arg(&journal).arg(&blob).query::<()>(c)
        })?;
        self.wait_replicas()?;
        self.apply(batch.ops())?;
        self.run("clear the journal", |c| {
            redis::cmd("DEL").arg(&journal).query::<()>(c)
        })?;
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

    fn shared(&self) -> bool {
        true
    }

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
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(8));
        }
        self.leased.store(true, Ordering::SeqCst);
        self.forget_prefetched();
        if let Err(e) = self.replay_journal() {
            let _ = self.release_writer();
            return Err(e);
        }
        Ok(())
    }

    fn release_writer(&self) -> Result<()> {
        // Others may write from now on: nothing read ahead stays (also after a batch that
        // failed before writing, which would not have cleared it).
        self.forget_prefetched();
        if !self.leased.swap(false, Ordering::SeqCst) {
            return Ok(());
        }
        let lease = self.ns_key("lease");
        self.run("give up the write lease", |c| {
            redis::cmd("EVAL")
                .arg(RELEASE_LUA)
                .arg(1)
                .arg(&lease)
                .arg(&self.token)
                .query::<i64>(c)
        })?;
        Ok(())
    }

    fn disk_size(&self) -> u64 {
        0
    }
}

impl Drop for RedisStore {
    fn drop(&mut self) {
        let _ = self.release_writer();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_or_say_what_is_wrong() {
        let u =
            RedisUrl::parse("redis://127.0.0.1:7000,127.0.0.1:7001/crawl?wait=1&lease=5").unwrap();
        assert_eq!(u.nodes, ["127.0.0.1:7000", "127.0.0.1:7001"]);
        assert_eq!(
            (u.namespace.as_str(), u.wait, u.lease_ms),
            ("crawl", 1, 5000)
        );
        for (bad, says) in [
            ("redis://h:1", "no /NAMESPACE"),
            ("redis://h:1/", "namespace"),
            ("redis://h/x", "without :port"),
            ("redis://h:0/x", "bad node"),
            ("redis://h:1/a{b}", "namespace"),
            ("redis://h:1/x?wait=lots", "not a whole number"),
            ("redis://h:1/x?colour=1", "unknown option"),
            ("redis://h:1/x?lease=0", "out of range"),
        ] {
            let e = RedisUrl::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn journal_round_trips_and_refuses_damage() {
        let ops = vec![
            Op::Put(Cf::Docs, b"k".to_vec(), b"v".to_vec()),
            Op::Delete(Cf::Nshash, vec![0; 16]),
            Op::Put(Cf::Meta, Vec::new(), Vec::new()),
        ];
        let blob = encode_ops(&ops);
        assert_eq!(decode_ops(&blob), Some(ops.clone()));
        let journal = journal_of(&ops);
        assert_eq!(ops_of_journal(&journal), Some(ops.clone()));
        assert_eq!(ops_of_journal(&journal[..journal.len() / 2]), None);
        assert_eq!(ops_of_journal(b""), None);
        assert_eq!(ops_of_journal(&[&b"R"[..], &blob].concat()), Some(ops));
        assert_eq!(decode_ops(&blob[..blob.len() - 1]), None);
        assert_eq!(decode_ops(&[9, 0]), None);
        assert_eq!(decode_ops(&[1, 99]), None);
    }

    #[test]
    fn buckets_of_ordered_families_are_monotone_and_at_most_the_key() {
        // What scans rely on: keys in order have buckets in order, and a key's bucket is
        // not above it (so [bucket(start), bucket(end)] covers every key of [start, end)).
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for cf in Cf::ALL.into_iter().filter(|&cf| ordered(cf)) {
            let mut keys: Vec<Vec<u8>> = (0..2000)
                .map(|i| {
                    let len = (next() % 18) as usize;
                    let mut k: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                    if i % 3 == 0 && !k.is_empty() {
                        k[0] = 7; // shared prefixes
                    }
                    k
                })
                .collect();
            keys.sort();
            for w in keys.windows(2) {
                assert!(bucket_of(cf, &w[0]) <= bucket_of(cf, &w[1]), "{cf:?} {w:?}");
            }
            for k in &keys {
                assert!(bucket_of(cf, k).as_slice() <= k.as_slice(), "{cf:?} {k:?}");
            }
        }
    }
}
