//! RocksDB [`Store`]: one column family per [`Cf`], LZ4 compression, WAL on. Writes are
//! atomic: one `WriteBatch` each (a store an earlier fpdb left with a batch in parts is
//! finished at open: `journal.rs`).
//! [`Store::sync`] fsyncs the WAL, so every batch written before it survives power loss, and
//! after any crash the store reopens at a batch boundary.

use std::path::{Path, PathBuf};

use rocksdb::{ColumnFamilyDescriptor, Direction, IteratorMode, Options, ReadOptions, DB};

mod journal;
mod tuning;
mod view;
mod write;

pub use journal::Journaled;

pub use tuning::BLOCK_CACHE_BYTES;
use tuning::{block_cache, cf_options, no_fallocate, MEMTABLE_BUDGET};
use view::{log_files, Listing};

use super::{Batch, Cf, Entry, Maintenance, Store};
use crate::error::{Error, Result};

/// A RocksDB-backed store.
pub struct RocksStore {
    /// Shared with [`Store::syncer`]s.
    db: std::sync::Arc<DB>,
    /// Column families missing from a store opened read-only (made by an older format).
    missing: Vec<Cf>,
    path: PathBuf,
    read_only: bool,
}

impl std::fmt::Debug for RocksStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksStore")
            .field("path", &self.path)
            .field("read_only", &self.read_only)
            .finish()
    }
}

/// How the write-ahead log is replayed at open. RocksDB's default (point in time) stops
/// silently at the first damaged record: a store whose log had one flipped byte opened as if
/// the acknowledged documents after it had never been written, and `verify` passed. So a
/// store no writer has open is replayed to the end of its logs, and a damaged record (not an
/// incomplete last one, which a power loss leaves and which was never acknowledged) fails the
/// open. A reader opening while a writer appends keeps point in time: the writer's last record
/// may be half written, and the tolerant mode, which then goes on to the next log, gave
/// readers a view with a batch missing in the middle (1 open in ~12 during a running ingest).
///
/// `FPDB_WAL_RECOVERY=point-in-time` opens a damaged store anyway, up to the damage (what the
/// error message offers, for when no backup exists).
fn wal_recovery(opts: &mut Options, path: &Path) {
    let mode = match std::env::var("FPDB_WAL_RECOVERY").as_deref() {
        Ok("point-in-time") => rocksdb::DBRecoveryMode::PointInTime,
        _ if writer_running(path) => rocksdb::DBRecoveryMode::PointInTime,
        _ => rocksdb::DBRecoveryMode::TolerateCorruptedTailRecords,
    };
    opts.set_wal_recovery_mode(mode);
}

/// Whether another process holds the store's lock (RocksDB's POSIX record lock on `LOCK`).
fn writer_running(path: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(f) = std::fs::File::open(path.join("LOCK")) else {
        return false;
    };
    // SAFETY: `fl` is a plain C struct, zero-initialized and then filled; `f` stays open for
    // the call; F_GETLK only writes into `fl`.
    unsafe {
        let mut fl: libc::flock = std::mem::zeroed();
        fl.l_type = libc::F_WRLCK as libc::c_short;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        if libc::fcntl(f.as_raw_fd(), libc::F_GETLK, &mut fl) != 0 {
            return false;
        }
        fl.l_type != libc::F_UNLCK as libc::c_short
    }
}

/// [`map_err`] for an open: a corruption RocksDB reports without a file name is in the
/// write-ahead log it replays; name those files and what can be done.
fn open_err(path: &Path, e: rocksdb::Error) -> Error {
    let msg = e.to_string();
    if !msg.contains("Corruption") || msg.contains(".sst") || msg.contains(".log") {
        return map_err(path, e);
    }
    let mut logs = log_files(path);
    logs.sort();
    Error::Storage(format!(
        "{}: {msg} while replaying the write-ahead log ({}): the store is damaged. Restore a \
         backup (`fpdb backup`), or set FPDB_WAL_RECOVERY=point-in-time to open it with only \
         the writes before the damage",
        path.display(),
        logs.iter()
            .map(|l| path.join(l).display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// A call of RocksDB's C API that reports a failure by setting `*err` to a C string RocksDB
/// allocated (the calls the crate does not wrap): that message, copied and freed with
/// `rocksdb_free`, as an error naming the store at `path`.
fn c_call(path: &Path, call: impl FnOnce(*mut *mut std::ffi::c_char)) -> Result<()> {
    let mut err: *mut std::ffi::c_char = std::ptr::null_mut();
    call(&mut err);
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: `err` is non-null, so RocksDB set it to a NUL-terminated string it allocated; it
    // is read once and freed once, with RocksDB's own allocator.
    let msg = unsafe {
        let m = std::ffi::CStr::from_ptr(err).to_string_lossy().into_owned();
        librocksdb_sys::rocksdb_free(err.cast());
        m
    };
    Err(Error::Storage(format!("{}: {msg}", path.display())))
}

fn map_err(path: &Path, e: rocksdb::Error) -> Error {
    let msg = e.to_string();
    if msg.contains("lock")
        && (msg.contains("Resource temporarily unavailable") || msg.contains("LOCK"))
    {
        Error::Locked {
            path: path.to_path_buf(),
        }
    } else {
        Error::Storage(format!("{}: {msg}", path.display()))
    }
}

impl RocksStore {
    /// Open (creating when `create` is set) the store at `path` for writing. A store held by
    /// another writer gives [`Error::Locked`].
    pub fn open(path: &Path, create: bool) -> Result<Self> {
        Self::open_with_cache(path, create, BLOCK_CACHE_BYTES)
    }

    /// [`RocksStore::open`] with a block cache of `cache_bytes` (index, filter and data blocks
    /// of every column family): more keeps more of a large store's lookups in memory.
    pub fn open_with_cache(path: &Path, create: bool, cache_bytes: usize) -> Result<Self> {
        not_a_file(path)?;
        if !create && !path.join("CURRENT").exists() {
            return Err(Error::NotFound {
                path: path.to_path_buf(),
            });
        }
        let mut opts = Options::default();
        wal_recovery(&mut opts, path);
        opts.create_if_missing(create);
        // Families added by later formats are created in older stores (the engine upgrades
        // their contents).
        opts.create_missing_column_families(true);
        opts.increase_parallelism(2);
        opts.set_max_background_jobs(2);
        opts.set_keep_log_file_num(3);
        // No space reserved ahead: on a full disk the write that does not fit fails, with
        // "No space left on device" naming its file (a reservation made ahead failed first
        // and later writes only said "Writer has previous error").
        no_fallocate(&opts);
        // One memory budget for every memtable, so memory does not grow with the column
        // families' write sizes (and stays flat however large the input).
        opts.set_db_write_buffer_size(MEMTABLE_BUDGET);
        let cache = block_cache(cache_bytes);
        let cfs = Cf::ALL
            .iter()
            .map(|&cf| ColumnFamilyDescriptor::new(cf.name(), cf_options(cf, &cache, false)));
        let db = DB::open_cf_descriptors(&opts, path, cfs).map_err(|e| open_err(path, e))?;
        let store = RocksStore {
            db: std::sync::Arc::new(db),
            missing: Vec::new(),
            path: path.to_path_buf(),
            read_only: false,
        };
        // A batch a crash left in parts (an earlier fpdb) is finished before anything reads
        // the store.
        store.finish_parts()?;
        Ok(store)
    }

    /// Open the store at `path` read-only. Takes no lock: works while a writer runs, and sees
    /// the writes synced before it opened.
    pub fn open_read_only(path: &Path) -> Result<Self> {
        Self::open_read_only_with_cache(path, BLOCK_CACHE_BYTES)
    }

    /// [`RocksStore::open_read_only`] with a block cache of `cache_bytes`.
    pub fn open_read_only_with_cache(path: &Path, cache_bytes: usize) -> Result<Self> {
        not_a_file(path)?;
        if !path.join("CURRENT").exists() {
            return Err(Error::NotFound {
                path: path.to_path_buf(),
            });
        }
        let mut opts = Options::default();
        wal_recovery(&mut opts, path);
        let cache = block_cache(cache_bytes);
        let list = |opts: &Options| DB::list_cf(opts, path).map(|f| Listing::of(path, f));
        // A writer running meanwhile may delete a write-ahead log (after a flush) or a table
        // file (after a compaction) between RocksDB listing and opening it: open again. A
        // view the writer tore across families while it opened is opened again too
        // (`view.rs`).
        let mut tries = 0;
        let gone = |e: &rocksdb::Error| e.to_string().contains("No such file or directory");
        let (db, missing) = loop {
            let before = match list(&opts) {
                Ok(l) => l,
                Err(e) if tries < 20 && gone(&e) => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    continue;
                }
                Err(e) => return Err(map_err(path, e)),
            };
            // Only the families the store has: an older format lacks the newer ones, which
            // then read as empty.
            let (have, missing): (Vec<Cf>, Vec<Cf>) = Cf::ALL
                .iter()
                .partition(|cf| before.families.iter().any(|p| p == cf.name()));
            let cfs = have
                .iter()
                .map(|&cf| ColumnFamilyDescriptor::new(cf.name(), cf_options(cf, &cache, true)));
            match DB::open_cf_descriptors_read_only(&opts, path, cfs, false) {
                Ok(db) => {
                    let torn = list(&opts).map_or(true, |after| before.torn_by(&after));
                    if tries < 20 && torn {
                        drop(db);
                        tries += 1;
                        continue;
                    }
                    break (db, missing);
                }
                Err(e) if tries < 20 && gone(&e) => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => return Err(open_err(path, e)),
            }
        };
        Ok(RocksStore {
            db: std::sync::Arc::new(db),
            missing,
            path: path.to_path_buf(),
            read_only: true,
        })
    }

    /// Apply `ops` (column family, key, value or `None` for a delete) as one write, not
    /// synced.
    fn write_ops<'a>(
        &self,
        ops: impl Iterator<Item = (Cf, &'a [u8], Option<&'a [u8]>)> + Clone,
    ) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly);
        }
        self.write_batch(self.batch_of(ops))
    }

    fn handle(&self, cf: Cf) -> &rocksdb::ColumnFamily {
        self.db
            .cf_handle(cf.name())
            .expect("every column family is opened")
    }

    /// Whether `cf` is absent (an older store opened read-only): it reads as empty.
    fn absent(&self, cf: Cf) -> bool {
        self.missing.contains(&cf)
    }
}

impl Store for RocksStore {
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if self.absent(cf) {
            return Ok(None);
        }
        self.db
            .get_cf(self.handle(cf), key)
            .map_err(|e| map_err(&self.path, e))
    }

    fn scan(
        &self,
        cf: Cf,
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        if start >= end || self.absent(cf) {
            return Ok(());
        }
        let mut ro = ReadOptions::default();
        if cf.within_prefix(start, end) {
            ro.set_prefix_same_as_start(true);
        } else {
            ro.set_total_order_seek(true);
            if start.is_empty() {
                // A scan from the first key (export, verify, a presence filter's build): its
                // blocks are read once, in order, and would only evict what lookups keep in
                // the cache (figures: docs/performance.md, "Store settings").
                ro.fill_cache(false);
                ro.set_readahead_size(1 << 20);
            }
        }
        ro.set_iterate_lower_bound(start.to_vec());
        ro.set_iterate_upper_bound(end.to_vec());
        let it = self.db.iterator_cf_opt(
            self.handle(cf),
            ro,
            IteratorMode::From(start, Direction::Forward),
        );
        for item in it {
            let (k, v) = item.map_err(|e| map_err(&self.path, e))?;
            if !visit(&k, &v) {
                break;
            }
        }
        Ok(())
    }

    fn scan_ranges(
        &self,
        cf: Cf,
        ranges: &[(&[u8], &[u8])],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        // One iterator, re-seeked per range: creating an iterator costs more than a seek once
        // the data is spread over several files. When every range stays within one extractor
        // prefix, the prefix bloom filters may skip files; otherwise read in total order.
        if self.absent(cf) {
            return Ok(());
        }
        let mut ro = ReadOptions::default();
        if ranges.iter().all(|(s, e)| cf.within_prefix(s, e)) {
            ro.set_prefix_same_as_start(true);
        } else {
            ro.set_total_order_seek(true);
        }
        let mut it = self.db.raw_iterator_cf_opt(self.handle(cf), ro);
        for (start, end) in ranges {
            if start >= end {
                continue;
            }
            it.seek(start);
            while let (Some(k), Some(v)) = (it.key(), it.value()) {
                if k >= *end || !visit(k, v) {
                    break;
                }
                it.next();
            }
            it.status().map_err(|e| map_err(&self.path, e))?;
        }
        Ok(())
    }

    fn write(&self, batch: Batch) -> Result<()> {
        // In key order: the memtable takes ordered inserts fastest (a write-behind store
        // hands its batches over sorted, through `write_entries`).
        let per_cf = batch.into_sorted();
        self.write_ops(journal::ops_of_all(&per_cf))?;
        // Freeing the batch's keys and values is work the writer need not wait for.
        rayon::spawn(move || drop(per_cf));
        Ok(())
    }

    fn write_entries(&self, per_cf: &[Vec<Entry>]) -> Result<()> {
        self.write_ops(journal::ops_of_all(per_cf))
    }

    fn prepare_entries(&self, per_cf: &[Vec<Entry>]) -> Option<super::Prepared> {
        (!self.read_only)
            .then(|| super::Prepared::Rocks(self.batch_of(journal::ops_of_all(per_cf))))
    }

    fn write_prepared(
        &self,
        per_cf: &[Vec<Entry>],
        prepared: Option<super::Prepared>,
    ) -> Result<()> {
        // Built by `prepare_entries` of these changes: only for a writer, and only when they
        // go in one write.
        match prepared {
            Some(super::Prepared::Rocks(wb)) => self.write_batch(wb),
            None => self.write_entries(per_cf),
        }
    }

    fn sync(&self) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        self.db.flush_wal(true).map_err(|e| map_err(&self.path, e))
    }

    fn syncer(&self) -> Option<super::Syncer> {
        if self.read_only {
            return None;
        }
        let (db, path) = (self.db.clone(), self.path.clone());
        Some(std::sync::Arc::new(move || {
            db.flush_wal(true).map_err(|e| map_err(&path, e))
        }))
    }

    fn flush(&self) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        self.sync()?;
        // RocksDB's flush first waits until it would not stall writes: with level 0 at its
        // slowdown trigger (a large store whose last run left compactions pending) that is
        // until a level-0 compaction ends, which at a large store rewrites the postings' base
        // level (figures: docs/performance.md, "Store settings"). This flush ends a run,
        // which writes nothing after it: it goes ahead (`allow_write_stall`, which the crate
        // does not wrap); the compaction, cancelled at close like any unfinished one, is left to
        // the next run.
        use rocksdb::{AsColumnFamilyRef, AsRawPtr};
        let mut handles: Vec<*mut librocksdb_sys::rocksdb_column_family_handle_t> =
            Cf::ALL.iter().map(|&cf| self.handle(cf).inner()).collect();
        // SAFETY: `self.db` and its column family handles live for the whole call (borrowed);
        // the options are created, used and destroyed here.
        c_call(&self.path, |err| unsafe {
            let opts = librocksdb_sys::rocksdb_flushoptions_create();
            librocksdb_sys::rocksdb_flushoptions_set_wait(opts, 1);
            librocksdb_sys::rocksdb_flushoptions_set_allow_write_stall(opts, 1);
            librocksdb_sys::rocksdb_flush_cfs(
                self.db.as_raw_ptr(),
                opts,
                handles.as_mut_ptr(),
                handles.len() as std::ffi::c_int,
                err,
            );
            librocksdb_sys::rocksdb_flushoptions_destroy(opts);
        })
    }

    fn read_only(&self) -> bool {
        self.read_only
    }

    fn last_sequence(&self) -> Option<u64> {
        Some(self.db.latest_sequence_number())
    }

    fn estimate_keys(&self, cf: Cf) -> Option<u64> {
        if self.absent(cf) {
            return Some(0);
        }
        self.db
            .property_int_value_cf(self.handle(cf), "rocksdb.estimate-num-keys")
            .ok()
            .flatten()
    }

    fn maintenance(&self) -> Option<&dyn Maintenance> {
        Some(self)
    }
}

impl Maintenance for RocksStore {
    fn checkpoint(&self, dir: &Path) -> Result<()> {
        if dir.exists() {
            return Err(Error::Storage(format!(
                "{}: already exists (a backup goes into a new directory)",
                dir.display()
            )));
        }
        if !self.read_only {
            self.sync()?;
        }
        rocksdb::checkpoint::Checkpoint::new(&self.db)
            .and_then(|c| c.create_checkpoint(dir))
            .map_err(|e| map_err(dir, e))
    }

    fn compact(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly);
        }
        // The bottommost level too: the deletes of a removal (documents, the lines they
        // taught) are only dropped from disk when they meet the entries they delete there.
        let mut opts = rocksdb::CompactOptions::default();
        opts.set_bottommost_level_compaction(rocksdb::BottommostLevelCompaction::ForceOptimized);
        for cf in Cf::ALL {
            self.db
                .compact_range_cf_opt(self.handle(cf), None::<&[u8]>, None::<&[u8]>, &opts);
        }
        Ok(())
    }

    fn verify_checksums(&self) -> Result<()> {
        use rocksdb::AsRawPtr;
        // SAFETY: `self.db` is open for the whole call (borrowed), the pointer comes from the
        // crate that owns it.
        c_call(&self.path, |err| unsafe {
            librocksdb_sys::rocksdb_verify_checksum(self.db.as_raw_ptr(), err);
        })
    }

    fn cf_sizes(&self) -> Vec<(&'static str, u64)> {
        Cf::ALL
            .iter()
            .filter(|cf| !self.absent(**cf))
            .map(|&cf| {
                let n = self
                    .db
                    .property_int_value_cf(self.handle(cf), "rocksdb.total-sst-files-size")
                    .ok()
                    .flatten()
                    .unwrap_or(0);
                (cf.name(), n)
            })
            .collect()
    }

    fn disk_size(&self) -> u64 {
        fn walk(p: &Path) -> u64 {
            std::fs::read_dir(p)
                .map(|rd| {
                    rd.flatten()
                        .map(|e| match e.metadata() {
                            Ok(m) if m.is_dir() => walk(&e.path()),
                            Ok(m) => m.len(),
                            Err(_) => 0,
                        })
                        .sum()
                })
                .unwrap_or(0)
        }
        walk(&self.path)
    }
}

/// A store is a directory: a path at anything else (a file, a device) is refused as such, not
/// with the OS's "File exists" from creating a directory there.
fn not_a_file(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_dir() => Err(Error::NotAStore {
            path: path.to_path_buf(),
        }),
        _ => Ok(()),
    }
}
