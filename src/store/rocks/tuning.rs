//! The RocksDB settings of a store (the reasons here; the figures behind them in
//! docs/performance.md, "Store settings"): memory budgets, the shared block cache, memtable and
//! level sizes, block sizes, prefix extractors and their Bloom filters, per column family.

use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, Cache, DBCompressionType, Options, SliceTransform,
};

use crate::store::Cf;

/// Memory for all memtables of a store together. (Charging them to the block cache instead
/// saved memory but cost much more CPU in flushes and compactions: docs/performance.md,
/// "Store settings".)
pub(super) const MEMTABLE_BUDGET: usize = 128 << 20;

/// Block cache shared by every column family of a store, unless the opener asks for another
/// size (`RocksStore::open_with_cache`).
pub const BLOCK_CACHE_BYTES: usize = 128 << 20;

/// The block cache: RocksDB's HyperClockCache (lock-free lookups), which RocksDB recommends over
/// its LRU cache, whose shard mutexes showed in profiles of `query --batch` on all cores
/// (figures: docs/performance.md, "Store settings").
pub(super) fn block_cache(bytes: usize) -> Cache {
    // 0: the variant that sizes its table as it fills (no average block size to guess).
    Cache::new_hyper_clock_cache(bytes, 0)
}

/// Memtable size of each column family of a writer (RocksDB's default: 64 MiB). A skip list
/// of 8 MiB stays in the CPU's caches, where one of 64 MiB missed them on every insert, on the
/// writer's thread, which bounds an ingest (figures: docs/performance.md, "Store settings").
pub(super) const MEMTABLE_BYTES: usize = 8 << 20;

/// Memtable size of `meta`: its few keys (counters, settings, the marks of jobs) need little.
pub(super) const META_MEMTABLE_BYTES: usize = 2 << 20;

/// Target size of level 1 (RocksDB's default: 256 MiB; its files a quarter of it), matched to
/// [`MEMTABLE_BYTES`] as RocksDB's tuning guide asks (four flushed memtables; the posting
/// families gather eight, [`POSTINGS_LEVEL0_FILES`], of about 3.2 MB each on disk, below
/// it): with 256 MiB an L0 -> L1 compaction of small flushes rewrote up to 256 MiB
/// of L1 each time, which made small memtables alone cost CPU at large stores.
pub(super) const LEVEL1_BYTES: u64 = 32 << 20;

/// Level-0 files that start a compaction of the posting families (RocksDB's default: 4).
/// Their keys are hashes, so every flushed file spans the whole key range and a level-0
/// compaction rewrites the whole base level beneath it: gathering eight flushes instead of
/// four halves those rewrites, for up to eight files a lookup probes (each behind its prefix
/// Bloom filter, most misses answered by the store's presence filter before them). Figures:
/// docs/performance.md, "Store settings".
pub(super) const POSTINGS_LEVEL0_FILES: i32 = 8;

/// Data block size of the families lookups read at random (records, postings, simhash
/// tables; RocksDB's default is 4 KiB). A lookup reads one record or a few keys of a block and
/// a large store's blocks miss the cache, so each read decompressed and checksummed 4 KiB for
/// ~400 bytes (figures: docs/performance.md, "Store settings"). Files written before keep
/// their block size.
pub(super) const LOOKUP_BLOCK_BYTES: usize = 1 << 10;

/// Size of the memtables' prefix Bloom filters, as a share of a memtable's size
/// ([`MEMTABLE_BYTES`]): ~8 bits per key for this store's small keys. RocksDB allocates and
/// zeroes each filter whole when its memtable is created, so a larger share costs a fresh
/// writer that memory up front.
pub(super) const MEMTABLE_BLOOM_RATIO: f64 = 0.02;

pub(super) fn cf_options(cf: Cf, cache: &Cache, read_only: bool) -> Options {
    let mut o = Options::default();
    o.set_compression_type(DBCompressionType::Lz4);
    let mut t = BlockBasedOptions::default();
    match cf.scan_prefix() {
        Some(n) => {
            // Keys are scanned by prefix range (simhash: table + 24 bits; nshash: the sentence
            // hash): bloom filters on the prefix let a lookup skip every file and memtable
            // without it.
            o.set_prefix_extractor(SliceTransform::create_fixed_prefix(n));
            o.set_level_zero_file_num_compaction_trigger(POSTINGS_LEVEL0_FILES);
            o.set_memtable_prefix_bloom_ratio(MEMTABLE_BLOOM_RATIO);
            t.set_bloom_filter(10.0, false);
            t.set_whole_key_filtering(false);
        }
        None if matches!(cf, Cf::Docs | Cf::Clusters) => {
            // Read only by keys that exist (a candidate's record, a cluster named by a
            // posting or a record): a filter would always answer "maybe" and each get would
            // pay for loading its partition.
        }
        None => {
            // Most lookups (new ids) miss: bloom filters on disk and in the memtable answer
            // them without a search.
            t.set_bloom_filter(10.0, false);
            o.set_memtable_prefix_bloom_ratio(MEMTABLE_BLOOM_RATIO);
            o.set_memtable_whole_key_filtering(true);
        }
    }
    // Partitioned index and filters, cached in the shared block cache: memory stays bounded by
    // the cache whatever the store size, and a lookup loads only the partitions it needs (whole
    // filters in a small cache were evicted and re-read on every lookup at 10^7 documents).
    if read_only {
        // A read-only open writes nothing: memtables hold at most a replayed log, so no
        // memtable bloom filters and small arenas (allocating and zeroing them for seven
        // column families was most of a cold `fpdb query`).
        o.set_memtable_prefix_bloom_ratio(0.0);
        o.set_memtable_whole_key_filtering(false);
        o.set_write_buffer_size(1 << 20);
        o.set_arena_block_size(64 << 10);
    } else {
        o.set_write_buffer_size(if cf == Cf::Meta {
            META_MEMTABLE_BYTES
        } else {
            MEMTABLE_BYTES
        });
        o.set_max_bytes_for_level_base(LEVEL1_BYTES);
        o.set_target_file_size_base(LEVEL1_BYTES / 4);
    }
    t.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    t.set_partition_filters(true);
    t.set_metadata_block_size(4096);
    t.set_cache_index_and_filter_blocks(true);
    t.set_cache_index_and_filter_blocks_with_high_priority(true);
    t.set_pin_top_level_index_and_filter(true);
    t.set_block_cache(cache);
    if matches!(cf, Cf::Docs | Cf::Nshash | Cf::Simhash) {
        t.set_block_size(LOOKUP_BLOCK_BYTES);
    }
    o.set_block_based_table_factory(&t);
    o
}

/// Reserve no file space ahead (RocksDB's `allow_fallocate`, which the crate does not wrap).
/// A log is reserved at its memtable's size (tens of MB): on a disk with less free than that,
/// the reservation failed and every later write said only "Writer has previous error".
pub(super) fn no_fallocate(opts: &Options) {
    use rocksdb::AsRawPtr;
    // SAFETY: `opts` is a live options object owned by the caller for the whole call; the
    // setter only stores a flag in it.
    unsafe { librocksdb_sys::rocksdb_options_set_allow_fallocate(opts.as_raw_ptr(), 0) };
}
