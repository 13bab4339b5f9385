//! What a bulk load through sorted table files (RocksDB's `SstFileWriter` +
//! `ingest_external_file`) would save against the write path an ingest uses (one `WriteBatch`
//! per batch of documents through the write-ahead log and the memtables, a log sync per batch,
//! a flush at the end), measured on the keys of a real store: reads every key and value of
//! STORE, then writes them into two scratch stores with fpdb's table options, in batches of
//! 1,024 documents in seq order (each batch sorted, as `commit_batch` writes it), and prints
//! the CPU and wall time of each until the data is durable and until background compactions
//! are done.
//!
//! `bulk_load STORE SCRATCH_DIR [CHUNK_MIB]` (CHUNK_MIB: bytes of keys and values per set of
//! table files, default 64: what a bulk loader would hold in memory).

use std::path::{Path, PathBuf};
use std::time::Instant;

use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, ColumnFamilyDescriptor, DBCompressionType,
    IngestExternalFileOptions, Options, SliceTransform, SstFileWriter, WriteBatch, WriteOptions,
    DB,
};

use fpdb_tools::files::sst_bytes;

/// A key of the source store: the seq of its document, its family (index into [`FAMILIES`]),
/// key, value.
type Entry = (u64, usize, Vec<u8>, Vec<u8>);

const FAMILIES: [&str; 6] = [
    "docs", "doc_ids", "nshash", "simhash", "clusters", "members",
];

/// fpdb's options for a column family (`store/rocks.rs::cf_options`, writer side).
fn cf_options(name: &str) -> Options {
    let mut o = Options::default();
    o.set_compression_type(DBCompressionType::Lz4);
    let mut t = BlockBasedOptions::default();
    match name {
        "simhash" | "nshash" => {
            let n = if name == "simhash" { 4 } else { 8 };
            o.set_prefix_extractor(SliceTransform::create_fixed_prefix(n));
            o.set_memtable_prefix_bloom_ratio(0.02);
            t.set_bloom_filter(10.0, false);
            t.set_whole_key_filtering(false);
        }
        "docs" | "clusters" => {}
        _ => {
            t.set_bloom_filter(10.0, false);
            o.set_memtable_prefix_bloom_ratio(0.02);
            o.set_memtable_whole_key_filtering(true);
        }
    }
    o.set_write_buffer_size(8 << 20);
    o.set_max_bytes_for_level_base(32 << 20);
    o.set_target_file_size_base(8 << 20);
    t.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    t.set_partition_filters(true);
    t.set_metadata_block_size(4096);
    t.set_cache_index_and_filter_blocks(true);
    if matches!(name, "docs" | "nshash" | "simhash") {
        t.set_block_size(1 << 10);
    }
    o.set_block_based_table_factory(&t);
    o
}

fn open(dir: &Path) -> DB {
    let _ = std::fs::remove_dir_all(dir);
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.increase_parallelism(2);
    o.set_max_background_jobs(2);
    o.set_db_write_buffer_size(128 << 20);
    let cfs = FAMILIES
        .iter()
        .map(|n| ColumnFamilyDescriptor::new(*n, cf_options(n)));
    DB::open_cf_descriptors(&o, dir, cfs).expect("scratch store")
}

/// CPU seconds of this process so far (user + system).
fn cpu() -> f64 {
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `r` is a plain C struct the call fills.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(r.ru_utime) + tv(r.ru_stime)
}

fn settle(db: &DB) {
    loop {
        let busy = FAMILIES.iter().any(|n| {
            let cf = db.cf_handle(n).unwrap();
            let p = |name: &str| {
                db.property_int_value_cf(cf, name)
                    .ok()
                    .flatten()
                    .unwrap_or(0)
            };
            p("rocksdb.compaction-pending") > 0
                || p("rocksdb.num-running-compactions") > 0
                || p("rocksdb.num-running-flushes") > 0
        });
        if !busy {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[expect(
    clippy::too_many_lines,
    reason = "a measurement script: its steps in the order they run"
)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: bulk_load STORE SCRATCH_DIR [CHUNK_MIB]";
    let store = PathBuf::from(args.get(1).expect(usage));
    let scratch = PathBuf::from(args.get(2).expect(usage));
    let chunk_bytes: usize = args.get(3).map_or(64, |s| s.parse().expect(usage)) << 20;
    // Every key of the store, with the document seq it belongs to (its batch).
    let names = DB::list_cf(&Options::default(), &store).expect("list column families");
    let src = DB::open_cf_for_read_only(&Options::default(), &store, &names, false).expect("open");
    let mut entries: Vec<Entry> = Vec::new();
    let mut max_seq = 1;
    let mut max_cluster = 1;
    for (f, name) in FAMILIES.iter().enumerate() {
        let cf = src.cf_handle(name).expect("family");
        for kv in src.iterator_cf(cf, rocksdb::IteratorMode::Start) {
            let (k, v) = kv.expect("read");
            let seq = match *name {
                "docs" => u64_at(&k, 0),
                "doc_ids" => u64_at(&v, 0),
                "nshash" | "members" => u64_at(&k, 8),
                "simhash" => u64_at(&k, 9),
                // Cluster ids grow with the seqs of their first documents: spread by id.
                _ => {
                    max_cluster = max_cluster.max(u64_at(&k, 0));
                    u64::MAX - u64_at(&k, 0)
                }
            };
            if seq < u64::MAX / 2 {
                max_seq = max_seq.max(seq);
            }
            entries.push((seq, f, k.to_vec(), v.to_vec()));
        }
    }
    drop(src);
    for e in &mut entries {
        if e.0 > u64::MAX / 2 {
            e.0 = (u64::MAX - e.0) * max_seq / max_cluster;
        }
    }
    entries.sort_by(|a, b| (a.0 / 1024, a.1, &a.2).cmp(&(b.0 / 1024, b.1, &b.2)));
    let bytes: usize = entries.iter().map(|e| e.2.len() + e.3.len()).sum();
    println!(
        "{} keys, {:.1} MB, {} documents, {} batches of 1,024",
        entries.len(),
        bytes as f64 / 1e6,
        max_seq,
        max_seq / 1024 + 1
    );
    let batches: Vec<&[Entry]> = entries.chunk_by(|a, b| a.0 / 1024 == b.0 / 1024).collect();

    println!("| path | CPU s to durable | wall s to durable | CPU s with compactions | wall s with compactions | table files MB |");
    println!("|---|---:|---:|---:|---:|---:|");
    // The ingest's path: a WriteBatch per batch, log synced per batch, a flush at the end;
    // then the same without the write-ahead log (durable only once flushed).
    through_memtables(&scratch.join("writebatch"), &batches, true);
    through_memtables(&scratch.join("nowal"), &batches, false);
    // A bulk load: the batches of a chunk gathered per family, sorted, written as table files
    // and ingested (moved) into the store.
    {
        let dir = scratch.join("sst");
        let db = open(&dir);
        let files = scratch.join("sst-files");
        let _ = std::fs::create_dir_all(&files);
        let (c0, t0) = (cpu(), Instant::now());
        let mut chunk: Vec<Vec<(&[u8], &[u8])>> = vec![Vec::new(); FAMILIES.len()];
        let mut held = 0;
        let mut n = 0;
        let mut load = |chunk: &mut Vec<Vec<(&[u8], &[u8])>>| {
            for (f, kvs) in chunk.iter_mut().enumerate() {
                if kvs.is_empty() {
                    continue;
                }
                kvs.sort_unstable_by(|a, b| a.0.cmp(b.0));
                let opts = cf_options(FAMILIES[f]);
                let w = SstFileWriter::create(&opts);
                n += 1;
                let path = files.join(format!("{n}.sst"));
                w.open(&path).expect("sst open");
                let mut w = w;
                for (k, v) in kvs.iter() {
                    w.put(k, v).expect("sst put");
                }
                w.finish().expect("sst finish");
                let mut io = IngestExternalFileOptions::default();
                io.set_move_files(true);
                db.ingest_external_file_cf_opts(
                    &db.cf_handle(FAMILIES[f]).unwrap(),
                    &io,
                    vec![path],
                )
                .expect("ingest");
                kvs.clear();
            }
        };
        for b in &batches {
            for (_, f, k, v) in b.iter() {
                chunk[*f].push((k, v));
                held += k.len() + v.len();
            }
            if held >= chunk_bytes {
                load(&mut chunk);
                held = 0;
            }
        }
        load(&mut chunk);
        let (c1, t1) = (cpu() - c0, t0.elapsed().as_secs_f64());
        settle(&db);
        let (c2, t2) = (cpu() - c0, t0.elapsed().as_secs_f64());
        drop(db);
        println!(
            "| table files per {} MiB chunk | {c1:.2} | {t1:.2} | {c2:.2} | {t2:.2} | {:.1} |",
            chunk_bytes >> 20,
            sst_bytes(&dir) as f64 / 1e6
        );
    }
}

/// Write `batches` through WriteBatches (with the write-ahead log, synced per batch, or
/// without it), flush, and print the table row.
fn through_memtables(dir: &Path, batches: &[&[Entry]], wal: bool) {
    let db = open(dir);
    let (c0, t0) = (cpu(), Instant::now());
    for b in batches {
        let mut wb = WriteBatch::default();
        for (_, f, k, v) in b.iter() {
            wb.put_cf(db.cf_handle(FAMILIES[*f]).unwrap(), k, v);
        }
        let mut wo = WriteOptions::default();
        wo.disable_wal(!wal);
        db.write_opt(wb, &wo).expect("write");
        if wal {
            db.flush_wal(true).expect("sync");
        }
    }
    let cfs: Vec<_> = FAMILIES.iter().map(|n| db.cf_handle(n).unwrap()).collect();
    db.flush_cfs_opt(&cfs, &rocksdb::FlushOptions::default())
        .expect("flush");
    let (c1, t1) = (cpu() - c0, t0.elapsed().as_secs_f64());
    settle(&db);
    let (c2, t2) = (cpu() - c0, t0.elapsed().as_secs_f64());
    drop(cfs);
    drop(db);
    let path = if wal {
        "WriteBatch + WAL + memtables"
    } else {
        "WriteBatch + memtables, no WAL"
    };
    println!(
        "| {path} | {c1:.2} | {t1:.2} | {c2:.2} | {t2:.2} | {:.1} |",
        sst_bytes(dir) as f64 / 1e6
    );
}
