//! Applying after the lease: a writer logs its batch under the lease and applies it after
//! giving the lease back, while the next writer looks up and decides.
//!
//! Batches are applied in the order they were logged: a writer applies batch N once
//! `applied` = N − 1 (the batches commute with nothing: a later one may change a key an
//! earlier one set). Each logged batch has an owner key (`{NS}owner:N`, the writer's token,
//! expiring after the lease's time and renewed while it waits its turn); a batch whose
//! owner is gone (its writer died) is applied by whichever writer finds it so, from its log.
//!
//! Under the lease, reads see every batch logged, applied or not: the changes of the batches
//! after `applied` (their logs, and this writer's own writes) lie over what the cluster
//! answers ([`RedisStore::overlay`]). A key no such batch changed already holds its last
//! value in the cluster, whatever is being applied meanwhile.
//!
//! With `?wait=N` a batch is applied under the lease, as it is logged: the writes of one
//! connection are what `WAIT` acknowledges, and they are written again through a new one
//! after a failover ([`RedisStore::wait_replicas`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::write::{ops_of_journal, RENEW_LUA};
use super::RedisStore;
use crate::error::{Error, Result};
use crate::store::behind::{range, Overlay};
use crate::store::staged::{scan_over, scan_ranges_over};
use crate::store::{Batch, Cf, Entry, Op, Store};

/// Claim batch N if its owner is gone: KEYS owner; ARGV token, ms.
const CLAIM_LUA: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
";

/// The store's reads as the cluster answers them, without the batches not yet applied (the
/// base that [`RedisStore::overlay`] lies over).
pub(super) struct Applied<'a>(pub(super) &'a RedisStore);

impl Store for Applied<'_> {
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.0.get_applied(cf, key)
    }

    fn scan(
        &self,
        cf: Cf,
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.0.scan_applied(cf, start, end, visit)
    }

    fn scan_ranges(
        &self,
        cf: Cf,
        ranges: &[(&[u8], &[u8])],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.0.scan_ranges_applied(cf, ranges, visit)
    }

    fn write(&self, _batch: Batch) -> Result<()> {
        Err(Error::Storage(
            "redis: the applied view is read-only".into(),
        ))
    }

    fn sync(&self) -> Result<()> {
        Ok(())
    }

    fn read_only(&self) -> bool {
        true
    }
}

/// One batch not applied yet, as logged, and sorted as an overlay once a read needs it.
pub(super) struct Layer {
    ops: Arc<Vec<Op>>,
    sorted: std::sync::OnceLock<Overlay>,
}

impl Layer {
    pub(super) fn new(ops: Arc<Vec<Op>>) -> Self {
        Layer {
            ops,
            sorted: std::sync::OnceLock::new(),
        }
    }

    /// Its changes, per column family, sorted, the last change to a key kept (sorted on
    /// first use: while waiting for the lease, or under it when read then).
    pub(super) fn sorted(&self) -> &Overlay {
        self.sorted.get_or_init(|| {
            let mut batch = Batch::new();
            batch.ops = self.ops.to_vec();
            batch.into_sorted()
        })
    }
}

/// The batches not applied yet, oldest first: a later one's change to a key hides an
/// earlier one's.
type Layers = Vec<Arc<Layer>>;

/// The changes of `layers` to keys of `[start, end)` of `cf`, merged (newest wins), sorted.
fn merged(layers: &Layers, cf: Cf, start: &[u8], end: &[u8]) -> Vec<Entry> {
    let slices: Vec<&[Entry]> = layers
        .iter()
        .map(|l| range(&l.sorted()[cf.index()], start, end))
        .filter(|s| !s.is_empty())
        .collect();
    match slices.as_slice() {
        [] => Vec::new(),
        [one] => one.to_vec(),
        many => {
            let mut all: std::collections::BTreeMap<&[u8], &Option<Vec<u8>>> = Default::default();
            for s in many {
                for (k, v) in *s {
                    all.insert(k, v);
                }
            }
            all.into_iter()
                .map(|(k, v)| (k.to_vec(), v.clone()))
                .collect()
        }
    }
}

impl RedisStore {
    /// The batches whose changes lie over the cluster's answers (under the lease, while
    /// batches logged are not all applied).
    fn layers(&self) -> Option<Layers> {
        let l = self.overlay.lock().expect("overlay");
        (!l.is_empty()).then(|| l.clone())
    }

    pub(super) fn get_over(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if let Some(layers) = self.layers() {
            for l in layers.iter().rev() {
                let e = &l.sorted()[cf.index()];
                if let Ok(i) = e.binary_search_by(|x| x.0.as_slice().cmp(key)) {
                    return Ok(e[i].1.clone());
                }
            }
        }
        self.get_applied(cf, key)
    }

    pub(super) fn scan_over(
        &self,
        cf: Cf,
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        match self.layers() {
            Some(layers) => {
                let staged = merged(&layers, cf, start, end);
                scan_over(&Applied(self), cf, start, end, &staged, visit)
            }
            _ => self.scan_applied(cf, start, end, visit),
        }
    }

    pub(super) fn scan_ranges_over(
        &self,
        cf: Cf,
        ranges: &[(&[u8], &[u8])],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        let Some(layers) = self.layers() else {
            return self.scan_ranges_applied(cf, ranges, visit);
        };
        let staged: Vec<Vec<Entry>> = ranges
            .iter()
            .map(|(s, e)| merged(&layers, cf, s, e))
            .collect();
        let staged: Vec<&[Entry]> = staged.iter().map(Vec::as_slice).collect();
        scan_ranges_over(&Applied(self), cf, ranges, &staged, visit)
    }

    /// Lay `logs` (batches logged and not applied yet, in order) over the cluster's
    /// answers.
    pub(super) fn lay_over(&self, logs: impl IntoIterator<Item = Arc<Layer>>) {
        self.overlay.lock().expect("overlay").extend(logs);
    }

    /// Drop the overlay (the lease given back).
    pub(super) fn clear_overlay(&self) {
        self.overlay.lock().expect("overlay").clear();
    }

    /// Under the lease just taken: apply the batches whose writers died (in order, from
    /// the first not applied, as long as their owners are gone), wait while more than half
    /// the kept logs are not applied, and lay the changes of the batches not applied yet
    /// over the cluster's answers. `logs`: those already read (by number).
    pub(super) fn settle_logged(
        &self,
        commit: u64,
        mut applied: u64,
        logs: &std::collections::BTreeMap<u64, Arc<Layer>>,
    ) -> Result<()> {
        while applied < commit && self.take_over(applied + 1)? {
            applied += 1;
        }
        let keep = super::KEEP_LOGS / 2;
        if commit.saturating_sub(applied) >= keep {
            applied = self.wait_applied(commit - keep, None)?;
        }
        self.clear_overlay();
        if applied >= commit {
            return Ok(());
        }
        let missing: Vec<u64> = (applied + 1..=commit)
            .filter(|n| !logs.contains_key(n))
            .collect();
        let read = self.read_logs(&missing)?;
        let over: Vec<Arc<Layer>> = (applied + 1..=commit)
            .map(|n| {
                logs.get(&n)
                    .cloned()
                    .or_else(|| read.get(&n).map(|ops| Arc::new(Layer::new(ops.clone()))))
            })
            .collect::<Option<_>>()
            .ok_or_else(|| self.damaged())?;
        self.lay_over(over);
        Ok(())
    }

    /// The logs numbered `ns`, decoded (an error when one is gone or damaged).
    pub(super) fn read_logs(
        &self,
        ns: &[u64],
    ) -> Result<std::collections::BTreeMap<u64, Arc<Vec<Op>>>> {
        if ns.is_empty() {
            return Ok(Default::default());
        }
        let keys: Vec<String> = ns.iter().map(|n| self.log_key(*n)).collect();
        let blobs: Vec<Option<Vec<u8>>> = self.run("read the journals", |c| {
            redis::cmd("MGET").arg(&keys[..]).query(c)
        })?;
        ns.iter()
            .zip(blobs)
            .map(|(n, b)| {
                let ops = b
                    .as_deref()
                    .and_then(ops_of_journal)
                    .ok_or_else(|| self.damaged())?;
                Ok((*n, Arc::new(ops)))
            })
            .collect()
    }

    /// Batch `n` applied from its log by this writer if its owner is gone (it died), once
    /// the batches before it are. Returns whether it was.
    fn take_over(&self, n: u64) -> Result<bool> {
        let owner = self.owner_key(n);
        let got = self.eval_token("claim a batch", CLAIM_LUA, &owner)?;
        if got != 1 {
            return Ok(false);
        }
        let ops = self
            .read_logs(&[n])?
            .remove(&n)
            .ok_or_else(|| self.damaged())?;
        self.note_unacked(&ops);
        self.apply(&ops)?;
        self.set_applied(n)?;
        self.run("claim a batch", |c| {
            redis::cmd("DEL").arg(&owner).query::<()>(c)
        })?;
        Ok(true)
    }

    /// Wait until every batch up to `upto` is applied, applying those whose writers died;
    /// meanwhile keep this writer's claim on batch `mine`. Returns `applied`.
    fn wait_applied(&self, upto: u64, mine: Option<u64>) -> Result<u64> {
        let applied_key = self.ns_key("applied");
        let mut pause = Duration::from_millis(1);
        let mut kept = Instant::now();
        loop {
            let applied: Option<u64> = self.run("read the journal", |c| {
                redis::cmd("GET").arg(&applied_key).query(c)
            })?;
            let applied = applied.unwrap_or(0);
            if applied >= upto {
                return Ok(applied);
            }
            if self.take_over(applied + 1)? {
                continue;
            }
            if let Some(n) =
                mine.filter(|_| kept.elapsed() * 4 > Duration::from_millis(self.url.lease_ms))
            {
                self.keep_claim(n)?;
                kept = Instant::now();
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(8));
        }
    }

    /// Extend this writer's claim on batch `n`; an error if it lost it (it stalled longer
    /// than the lease's time and another writer applied the batch).
    fn keep_claim(&self, n: u64) -> Result<()> {
        let ok = self.eval_token("keep a batch's claim", RENEW_LUA, &self.owner_key(n))?;
        if ok != 1 {
            return Err(Error::Storage(format!(
                "redis store {}: this writer stalled longer than {} s after committing a batch, \
                 and another writer applied it; nothing more was written",
                self.url.namespace,
                self.url.lease_ms / 1000
            )));
        }
        Ok(())
    }

    /// Apply this writer's batches logged under the lease, each in its turn: after the
    /// lease is given back, or under it once [`KEEP_LOGS`](super::KEEP_LOGS) / 4 wait (then
    /// every batch logged is applied, and nothing lies over the cluster's answers).
    pub(super) fn apply_logged(&self) -> Result<()> {
        let pending = std::mem::take(&mut *self.pending.lock().expect("pending"));
        for (n, ops) in pending {
            self.apply_own(n, &ops)?;
        }
        Ok(())
    }

    /// Apply batch `n`, logged and claimed by this writer, in its turn; then mark it
    /// applied and give up the claim.
    pub(super) fn apply_own(&self, n: u64, ops: &[Op]) -> Result<()> {
        self.wait_applied(n - 1, Some(n))?;
        self.keep_claim(n)?;
        self.apply(ops)?;
        self.set_applied(n)?;
        let owner = self.owner_key(n);
        self.run_write("write", true, |c| {
            redis::cmd("DEL").arg(&owner).query::<()>(c)
        })
    }

    /// Give the lease back and leave the batches logged under it not applied, as a writer
    /// that stalls (or dies) right after would (for tests; not part of the store's
    /// interface).
    #[doc(hidden)]
    pub fn release_lease_only(&self) -> Result<()> {
        let pending = std::mem::take(&mut *self.pending.lock().expect("pending"));
        let released = crate::store::Lease::release_writer(self);
        *self.pending.lock().expect("pending") = pending;
        released
    }

    /// Apply the batches [`RedisStore::release_lease_only`] left (for tests).
    #[doc(hidden)]
    pub fn apply_left(&self) -> Result<()> {
        self.apply_logged()
    }
}
