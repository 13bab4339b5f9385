//! Storage behind a narrow, engine-neutral trait: ordered key/value maps per column family,
//! atomic multi-family batches, explicit durability. No RocksDB type appears here.
//! [`RocksStore`] is the durable implementation, [`MemoryStore`] the in-memory one; both pass
//! the same conformance suite (`tests/store/conformance.rs`).

mod behind;
mod memory;
mod open;
mod presence;
#[cfg(feature = "redis")]
pub mod redis;
pub(crate) mod rocks;
// Key and record encodings: the binary and the tests read them; not a stable API.
#[doc(hidden)]
pub mod schema;
mod staged;

pub use behind::WriteBehind;
pub use memory::MemoryStore;
pub use open::{open, Filters, Location, OpenConfig, Opened};
pub use presence::{
    remove_unusable as remove_unusable_presence, saved as saved_presence, Fit as PresenceFit,
    Presence, Start as PresenceStart, FILE_NAME as PRESENCE_FILE,
};
#[cfg(feature = "redis")]
pub use redis::RedisStore;
pub use rocks::{RocksStore, BLOCK_CACHE_BYTES};
pub use schema::Cf;
pub use staged::Staged;

use rayon::prelude::*;

use crate::error::Result;

/// One staged change of a column family: a key and its new value (`None`: deleted).
pub type Entry = (Vec<u8>, Option<Vec<u8>>);

/// The [`Store`] methods a wrapper store passes to its `base` unchanged, one per name:
/// `forward! { read_only, lease, ... }` inside its `impl Store`. What a wrapper does itself
/// (its reads, writes, settling before a flush) it writes out.
macro_rules! forward {
    ($($method:ident),* $(,)?) => { $( $crate::store::forward!(@ $method); )* };
    (@ syncer) => {
        fn syncer(&self) -> Option<$crate::store::Syncer> { self.base.syncer() }
    };
    (@ flush) => {
        fn flush(&self) -> $crate::error::Result<()> { self.base.flush() }
    };
    (@ settle) => {
        fn settle(&self) -> $crate::error::Result<()> { self.base.settle() }
    };
    (@ last_sequence) => {
        fn last_sequence(&self) -> Option<u64> { self.base.last_sequence() }
    };
    (@ estimate_keys) => {
        fn estimate_keys(&self, cf: $crate::store::Cf) -> Option<u64> { self.base.estimate_keys(cf) }
    };
    (@ read_only) => {
        fn read_only(&self) -> bool { self.base.read_only() }
    };
    (@ lease) => {
        fn lease(&self) -> Option<&dyn $crate::store::Lease> { self.base.lease() }
    };
    (@ maintenance) => {
        fn maintenance(&self) -> Option<&dyn $crate::store::Maintenance> { self.base.maintenance() }
    };
    (@ read_ahead) => {
        fn read_ahead(&self) -> Option<&dyn $crate::store::ReadAhead> { self.base.read_ahead() }
    };
    (@ presence_filter) => {
        fn presence_filter(&self) -> Option<&dyn $crate::store::PresenceFilter> {
            self.base.presence_filter()
        }
    };
}
pub(crate) use forward;

/// A write built ahead in a store's own form ([`Store::prepare_entries`]), to be handed back
/// to the same store with the changes it was built from ([`Store::write_prepared`]). One
/// variant per store that builds one: the others write their entries as they are.
pub enum Prepared {
    /// RocksDB's write batch (a copy of every key and value, built off the commit thread).
    Rocks(rocksdb::WriteBatch),
}

/// One change in a [`Batch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Set `key` to `value` in a column family.
    Put(Cf, Vec<u8>, Vec<u8>),
    /// Remove `key` from a column family.
    Delete(Cf, Vec<u8>),
}

impl Op {
    /// (column family index, key).
    fn cf_key(&self) -> (usize, &[u8]) {
        match self {
            Op::Put(cf, k, _) | Op::Delete(cf, k) => (cf.index(), k),
        }
    }
}

/// Batches of at least this many changes are sorted on several threads
/// ([`Batch::into_sorted`]).
const PARALLEL_SORT: usize = 8192;

/// Changes applied atomically: after a crash, either all of them are visible or none is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    ops: Vec<Op>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }
    /// Queue a put.
    pub fn put(&mut self, cf: Cf, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) {
        self.ops.push(Op::Put(cf, key.into(), value.into()));
    }
    /// Queue a delete.
    pub fn delete(&mut self, cf: Cf, key: impl Into<Vec<u8>>) {
        self.ops.push(Op::Delete(cf, key.into()));
    }
    /// Add every op of `other` after this batch's.
    pub fn append(&mut self, other: Batch) {
        self.ops.extend(other.ops);
    }
    /// Drop every change queued after the first `len`.
    pub fn truncate(&mut self, len: usize) {
        self.ops.truncate(len);
    }
    /// The changes per column family (indexed by [`Cf::index`]), each sorted by key, a key
    /// once (its last change; `None`: deleted). A large batch is sorted on the threads of the
    /// rayon pool the caller runs on, if any, each family at once.
    pub fn into_sorted(self) -> Vec<Vec<Entry>> {
        let mut counts = [0usize; Cf::ALL.len()];
        for op in &self.ops {
            counts[op.cf_key().0] += 1;
        }
        let parallel = rayon::current_thread_index().is_some() && self.ops.len() >= PARALLEL_SORT;
        let mut per_cf: Vec<Vec<Entry>> = counts.iter().map(|&n| Vec::with_capacity(n)).collect();
        for op in self.ops {
            match op {
                Op::Put(cf, k, v) => per_cf[cf.index()].push((k, Some(v))),
                Op::Delete(cf, k) => per_cf[cf.index()].push((k, None)),
            }
        }
        if parallel {
            per_cf.par_iter_mut().for_each(|e| sort_entries(e, true));
        } else {
            per_cf.iter_mut().for_each(|e| sort_entries(e, false));
        }
        per_cf
    }
    /// The queued changes, in order (a later change to a key wins).
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }
    /// Number of queued changes.
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// `entries` (one column family's changes, in the order they were queued) sorted by key, a
/// key once: its last change. Sorted by a copy of each key's first 24 bytes held as integers
/// (every key of the prefix-scanned families fits), the keys themselves compared only where
/// those are equal, so the entries are not touched while sorting; on the current rayon pool
/// when `parallel`.
fn sort_entries(entries: &mut Vec<Entry>, parallel: bool) {
    let head = |(i, (k, _)): (usize, &Entry)| {
        let mut head = [0u8; 16];
        let n = k.len().min(16);
        head[..n].copy_from_slice(&k[..n]);
        let mut tail = [0u8; 8];
        let rest = k.get(16..).unwrap_or_default();
        let m = rest.len().min(8);
        tail[..m].copy_from_slice(&rest[..m]);
        (u128::from_be_bytes(head), u64::from_be_bytes(tail), i)
    };
    let all: &[Entry] = entries;
    // A shorter key pads with zeros: equal integers, then the keys decide (a key that is a
    // prefix of another sorts first), then the order they were queued in.
    let cmp = |a: &(u128, u64, usize), b: &(u128, u64, usize)| {
        (a.0, a.1)
            .cmp(&(b.0, b.1))
            .then_with(|| all[a.2].0.cmp(&all[b.2].0))
            .then(a.2.cmp(&b.2))
    };
    let order: Vec<(u128, u64, usize)> = if parallel && all.len() >= PARALLEL_SORT / 4 {
        let mut order: Vec<_> = all.par_iter().enumerate().map(head).collect();
        order.par_sort_unstable_by(cmp);
        order
    } else {
        let mut order: Vec<_> = all.iter().enumerate().map(head).collect();
        order.sort_unstable_by(cmp);
        order
    };
    let mut taken: Vec<Option<Entry>> = entries.drain(..).map(Some).collect();
    for &(_, _, i) in &order {
        let e = taken[i].take().expect("each entry once");
        match entries.last_mut() {
            Some(last) if last.0 == e.0 => *last = e,
            _ => entries.push(e),
        }
    }
}

/// See [`Store::syncer`].
pub type Syncer = std::sync::Arc<dyn Fn() -> Result<()> + Send + Sync>;

/// The write lease of a store that other processes write at the same time (Redis): the
/// engine writes only between [`Lease::acquire_writer`] and [`Lease::release_writer`], and
/// reloads what it keeps in memory after acquiring. A store offers it through
/// [`Store::lease`]; a wrapper in front of one offers its own, which hands the base what it
/// holds before letting other writers in.
pub trait Lease {
    /// Wait until this process may write.
    fn acquire_writer(&self) -> Result<()>;

    /// Let other writers in (after a sync).
    fn release_writer(&self) -> Result<()>;

    /// When [`Lease::acquire_writer`] last got the lease (None: never, or a store that
    /// does nothing after it). A store may bring itself up to date after that moment and
    /// before the call returns (Redis applies what others logged to what it read ahead).
    fn acquired_at(&self) -> Option<std::time::Instant> {
        None
    }

    /// When [`Lease::release_writer`] last let other writers in (None: never, or a store
    /// that does nothing after it). A store may finish its writes after that moment and
    /// before the call returns (Redis applies the batches logged under the lease).
    fn released_at(&self) -> Option<std::time::Instant> {
        None
    }
}

/// What a store of files can do besides reading and writing (RocksDB's): copy itself,
/// reorganize its files, check their checksums and say their sizes. A store offers it through
/// [`Store::maintenance`]; a wrapper in front of it offers its own, which first hands the
/// base what it holds (a write still being applied, a staged batch).
pub trait Maintenance {
    /// Write a consistent copy of the store into the new directory `dir` (hard links where
    /// the file system allows), openable as a store of its own.
    fn checkpoint(&self, dir: &std::path::Path) -> Result<()>;

    /// Reorganize on-disk data for reads (after a bulk load).
    fn compact(&self) -> Result<()>;

    /// Read every block of every table file and check its checksum (index, filter and meta
    /// blocks included, not only the data a scan reads).
    fn verify_checksums(&self) -> Result<()>;

    /// Bytes of table files per column family.
    fn cf_sizes(&self) -> Vec<(&'static str, u64)>;

    /// Approximate bytes on disk.
    fn disk_size(&self) -> u64;
}

/// The [`Maintenance`] of a wrapper's `base`: a wrapper offers its own only over a base
/// that has one, so it is there whenever the wrapper's is called.
fn base_maintenance(base: &dyn Store) -> &dyn Maintenance {
    base.maintenance()
        .expect("a wrapper offers maintenance only over a base that has it")
}

/// The [`Lease`] of a wrapper's `base`, as [`base_maintenance`].
fn base_lease(base: &dyn Store) -> &dyn Lease {
    base.lease()
        .expect("a wrapper offers a lease only over a base that has one")
}

/// Reading ahead, for a store a round trip away (Redis): told before many lookups (a batch's)
/// what they will read, it reads it in a few pipelines and answers those reads from memory
/// until its next write. A store offers it through [`Store::read_ahead`]; a store on this
/// machine has none, and the engine then builds no list of keys for it.
pub trait ReadAhead {
    /// The ranges of `cf` about to be scanned.
    fn prefetch(&self, cf: Cf, ranges: &[(&[u8], &[u8])]) -> Result<()>;

    /// [`ReadAhead::prefetch`] for point reads of `keys`.
    fn prefetch_keys(&self, cf: Cf, keys: &[&[u8]]) -> Result<()>;

    /// Drop what was read ahead (a batch done, a read-only pass moving on to its next chunk).
    fn end_prefetch(&self);

    /// Before a shared store's write lease ([`Store::lease`]) is taken: keep every answer
    /// read from now on, and when the lease is taken bring them up to date with what other
    /// writers committed meanwhile, so that the reads under the lease are answered from
    /// memory as if made then. Returns whether it does (false by default: a store that
    /// does not would drop them, and reading before the lease would be wasted).
    fn read_before_lease(&self) -> Result<bool> {
        Ok(false)
    }

    /// Under the lease taken after [`ReadAhead::read_before_lease`]: whether nothing was
    /// committed in between, so what lookups found before the lease holds as found.
    fn unchanged(&self) -> bool {
        false
    }
}

/// The in-memory presence filter in front of a store ([`Presence`]), offered through
/// [`Store::presence_filter`].
pub trait PresenceFilter {
    /// Save the filter next to the store, for the next writer. A failure loses nothing
    /// stored: the next open goes without the filter (or builds one).
    fn save(&self) -> Result<()>;

    /// Memory the filter takes.
    fn bytes(&self) -> u64;

    /// `key` of `cf` is in the store but may be missing from the filter (loaded as saved
    /// before the documents written since: their keys are put back into it this way).
    fn note_present(&self, cf: Cf, key: &[u8]);

    /// Keys are about to be written for documents older than the saved filter's state's next
    /// document (a page's late keys): an open after a kill reads only the documents from
    /// there on back into a saved filter, so the saved file is removed first (the next open
    /// builds the filter; a clean close saves it again).
    fn forget_saved(&self) -> Result<()>;
}

/// Ordered key/value storage with column families.
pub trait Store: Send + Sync {
    /// The value of `key`, if any.
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Visit keys in `[start, end)` in ascending byte order until `visit` returns `false`.
    fn scan(
        &self,
        cf: Cf,
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()>;

    /// [`Store::scan`] over several non-overlapping ranges in order (one iterator for all of
    /// them where the engine allows); `visit` returning `false` ends the current range.
    fn scan_ranges(
        &self,
        cf: Cf,
        ranges: &[(&[u8], &[u8])],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        for (start, end) in ranges {
            self.scan(cf, start, end, visit)?;
        }
        Ok(())
    }

    /// Apply every change of `batch` atomically. Visible to later reads at once; durable after
    /// the next [`Store::sync`].
    fn write(&self, batch: Batch) -> Result<()>;

    /// [`Store::write`] of changes given per column family (indexed by [`Cf::index`]), each
    /// sorted by key (`None`: a delete), without handing over their bytes ([`WriteBehind`]'s
    /// commit thread writes the batch that its readers read meanwhile).
    fn write_entries(&self, per_cf: &[Vec<Entry>]) -> Result<()> {
        let mut b = Batch::new();
        for (cf, entries) in Cf::ALL.iter().zip(per_cf) {
            for (k, v) in entries {
                match v {
                    Some(v) => b.put(*cf, k.clone(), v.clone()),
                    None => b.delete(*cf, k.clone()),
                }
            }
        }
        self.write(b)
    }

    /// The engine's own form of a write of `per_cf` (as [`Store::write_entries`] takes it),
    /// built on the caller's thread for [`Store::write_prepared`]. [`WriteBehind`] builds it
    /// before it hands a batch to its commit thread: that thread's apply is an ingest's one
    /// sequential step on many cores, and RocksDB's batch is a copy of every key and value.
    /// `None` (the default): nothing to build ahead.
    fn prepare_entries(&self, _per_cf: &[Vec<Entry>]) -> Option<Prepared> {
        None
    }

    /// [`Store::write_entries`] of `per_cf`, from `prepared` when it is what
    /// [`Store::prepare_entries`] built for these same changes.
    fn write_prepared(&self, per_cf: &[Vec<Entry>], prepared: Option<Prepared>) -> Result<()> {
        let _ = prepared;
        self.write_entries(per_cf)
    }

    /// Make every write so far durable (survives power loss).
    fn sync(&self) -> Result<()>;

    /// What makes every write made before it is called durable, callable from any thread
    /// while later writes go on (RocksDB: a sync of its write-ahead log). `None` when only
    /// [`Store::sync`] does it (a remote store, where a sync also ends the write lease).
    fn syncer(&self) -> Option<Syncer> {
        None
    }

    /// Wait until the storage engine holds every write handed over so far (a write still
    /// being applied on another thread, [`WriteBehind`], done), without making it durable. A
    /// caller that then takes a lock and writes does not wait for the previous write under it.
    fn settle(&self) -> Result<()> {
        Ok(())
    }

    /// Make every write so far durable and move it out of the write-ahead log into table
    /// files, so the next open replays nothing (end of a bulk load). Default: [`Store::sync`].
    fn flush(&self) -> Result<()> {
        self.sync()
    }

    /// The sequence number of the last write (RocksDB's), which names the store's state:
    /// equal on two opens only when nothing was written in between. `None` when the store has
    /// none.
    fn last_sequence(&self) -> Option<u64> {
        None
    }

    /// An estimate of the number of keys in `cf` (RocksDB's), to size what will hold them.
    fn estimate_keys(&self, _cf: Cf) -> Option<u64> {
        None
    }

    /// Whether writes are refused.
    fn read_only(&self) -> bool;

    /// The write lease of a store other processes write at the same time ([`Lease`]: a Redis
    /// store). `None` by default: one writer per store, enforced at open.
    fn lease(&self) -> Option<&dyn Lease> {
        None
    }

    /// What the store can do with its files ([`Maintenance`]: a copy, compaction, checksums,
    /// sizes), when it has files. `None` by default: a store without files is copied key by
    /// key, has nothing to compact or verify, and takes no bytes on disk.
    fn maintenance(&self) -> Option<&dyn Maintenance> {
        None
    }

    /// Reading ahead ([`ReadAhead`]: a remote store). `None` by default: a read costs no round
    /// trip.
    fn read_ahead(&self) -> Option<&dyn ReadAhead> {
        None
    }

    /// The in-memory presence filter in front of the store ([`PresenceFilter`]), when it has
    /// one.
    fn presence_filter(&self) -> Option<&dyn PresenceFilter> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What [`Batch::into_sorted`] promises, by a stable sort on the keys themselves and
    /// each key's last change kept.
    fn oracle(ops: &[Op]) -> Vec<Vec<Entry>> {
        let mut sorted = ops.to_vec();
        sorted.sort_by(|a, b| a.cf_key().cmp(&b.cf_key()));
        let mut per_cf: Vec<Vec<Entry>> = vec![Vec::new(); Cf::ALL.len()];
        for op in sorted {
            let (cf, e) = match op {
                Op::Put(cf, k, v) => (cf, (k, Some(v))),
                Op::Delete(cf, k) => (cf, (k, None)),
            };
            let entries = &mut per_cf[cf.index()];
            if entries.last().is_some_and(|last| last.0 == e.0) {
                entries.pop();
            }
            entries.push(e);
        }
        per_cf
    }

    /// Keys of a run of zeros (up to 26) and a few bytes of two values: equal first 23
    /// bytes, prefixes of one another and one key changed twice are common.
    fn op() -> impl Strategy<Value = Op> {
        (
            0..Cf::ALL.len(),
            (0usize..27, proptest::collection::vec(0u8..2, 0..6)),
            any::<bool>(),
            any::<u8>(),
        )
            .prop_map(|(cf, (zeros, tail), put, v)| {
                let mut k = vec![0u8; zeros];
                k.extend(tail);
                if put {
                    Op::Put(Cf::ALL[cf], k, vec![v])
                } else {
                    Op::Delete(Cf::ALL[cf], k)
                }
            })
    }

    proptest! {
        #[test]
        fn sorted_per_family_by_key_with_each_keys_last_change(
            ops in proptest::collection::vec(op(), 0..300)
        ) {
            let expected = oracle(&ops);
            prop_assert_eq!(Batch { ops }.into_sorted(), expected);
        }
    }

    #[test]
    fn sort_on_the_threads_of_a_pool_gives_the_same_order() {
        // Enough changes for the parallel sort, of keys that often share their first bytes.
        let mut x = 7u64;
        let ops: Vec<Op> = (0..3 * PARALLEL_SORT)
            .map(|i| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let key: Vec<u8> = (0..(x >> 59) as usize + 14)
                    .map(|j| ((x >> (j % 48)) & 3) as u8)
                    .collect();
                Op::Put(
                    Cf::ALL[(x >> 40) as usize % Cf::ALL.len()],
                    key,
                    vec![i as u8],
                )
            })
            .collect();
        let expected = oracle(&ops);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let b = Batch { ops };
        assert!(pool.install(|| b.into_sorted()) == expected);
    }
}
