//! How many bytes a simhash table key costs on disk in other key layouts: reads the `simhash`
//! column family of a store and rewrites its keys into scratch RocksDB stores with the
//! table options fpdb uses (LZ4, 1 KiB blocks, partitioned index and prefix filters),
//! compacted, then prints bytes per key and the ratio to the raw 8-byte fingerprint.
//!
//! `index_layout STORE SCRATCH_DIR`
//!
//! Layouts: `current` (table byte + permuted fingerprint + 8-byte seq, one family), `seq4`
//! (the same with a 4-byte seq), `cf-per-table` (a family per table: permuted fingerprint +
//! 4-byte seq), `seq-in-value` (table + permuted fingerprint as the key, the 4-byte seq as the
//! value; unique only while no two documents share a fingerprint in a table, so a measurement,
//! not a candidate).

use std::path::PathBuf;

use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, ColumnFamilyDescriptor, DBCompressionType, Options,
    SliceTransform, WriteBatch, DB,
};

use fpdb_tools::files::sst_bytes;

fn table_options(prefix: usize, compression: DBCompressionType) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_compression_type(compression);
    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(prefix));
    let mut t = BlockBasedOptions::default();
    t.set_bloom_filter(10.0, false);
    t.set_whole_key_filtering(false);
    t.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    t.set_partition_filters(true);
    t.set_metadata_block_size(4096);
    t.set_block_size(std::env::var("BLOCK_KIB").map_or(1, |v| v.parse().expect("BLOCK_KIB")) << 10);
    o.set_block_based_table_factory(&t);
    o
}

#[expect(
    clippy::too_many_lines,
    reason = "a measurement script: its steps in the order they run"
)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let store = PathBuf::from(args.get(1).expect("usage: index_layout STORE SCRATCH_DIR"));
    let scratch = PathBuf::from(args.get(2).expect("usage: index_layout STORE SCRATCH_DIR"));
    let cfs = DB::list_cf(&Options::default(), &store).expect("list column families");
    let db = DB::open_cf_for_read_only(&Options::default(), &store, &cfs, false).expect("open");
    let cf = db.cf_handle("simhash").expect("simhash family");
    let keys: Vec<Vec<u8>> = db
        .iterator_cf(cf, rocksdb::IteratorMode::Start)
        .map(|r| r.expect("read").0.to_vec())
        .collect();
    drop(db);
    let n = keys.len() as f64;
    println!("{} keys read from {}", keys.len(), store.display());
    fn split(k: &[u8]) -> (u8, &[u8], u32) {
        let seq = u64::from_be_bytes(k[9..17].try_into().unwrap());
        (k[0], &k[1..9], u32::try_from(seq).expect("seq < 2^32"))
    }
    println!("| layout | compression | bytes per key | ratio to 8 raw bytes | keys stored |");
    println!("|---|---|---:|---:|---:|");
    for (cname, comp) in [
        ("lz4", DBCompressionType::Lz4),
        ("none", DBCompressionType::None),
    ] {
        for layout in ["current", "seq4", "cf-per-table", "seq-in-value"] {
            let dir = scratch.join(format!("{layout}-{cname}"));
            let _ = std::fs::remove_dir_all(&dir);
            let (names, prefix): (Vec<String>, usize) = match layout {
                "cf-per-table" => ((0..10).map(|t| format!("t{t}")).collect(), 3),
                _ => (vec!["t".to_string()], 4),
            };
            let o = table_options(prefix, comp);
            let descs = names
                .iter()
                .map(|n| ColumnFamilyDescriptor::new(n, table_options(prefix, comp)));
            let out = DB::open_cf_descriptors(&o, &dir, descs).expect("scratch store");
            let mut b = WriteBatch::default();
            for k in &keys {
                let (table, fp, seq) = split(k);
                let seq4 = seq.to_be_bytes();
                match layout {
                    "current" => b.put_cf(out.cf_handle("t").unwrap(), k, []),
                    "seq4" => {
                        let key = [&[table][..], fp, &seq4].concat();
                        b.put_cf(out.cf_handle("t").unwrap(), key, []);
                    }
                    "cf-per-table" => {
                        let key = [fp, &seq4].concat();
                        b.put_cf(out.cf_handle(&format!("t{table}")).unwrap(), key, []);
                    }
                    _ => {
                        let key = [&[table][..], fp].concat();
                        b.put_cf(out.cf_handle("t").unwrap(), key, seq4);
                    }
                }
                if b.len() >= 100_000 {
                    out.write(std::mem::take(&mut b)).expect("write");
                }
            }
            out.write(b).expect("write");
            for name in &names {
                let h = out.cf_handle(name).unwrap();
                out.flush_cf(h).expect("flush");
                out.compact_range_cf(h, None::<&[u8]>, None::<&[u8]>);
            }
            let stored: usize = names
                .iter()
                .map(|name| {
                    out.iterator_cf(out.cf_handle(name).unwrap(), rocksdb::IteratorMode::Start)
                        .count()
                })
                .sum();
            drop(out);
            let bytes = sst_bytes(&dir) as f64;
            if cname == "none" {
                // What zstd would make of these blocks: the uncompressed files cut at the block
                // size and compressed piece by piece (an estimate: a block's boundaries and its
                // trailer are not exactly these).
                let block = std::env::var("BLOCK_KIB").map_or(1, |v| v.parse().unwrap()) << 10;
                for level in [1, 3] {
                    let mut z = 0usize;
                    for e in std::fs::read_dir(&dir)
                        .unwrap()
                        .filter_map(std::result::Result::ok)
                    {
                        if !e.file_name().to_string_lossy().ends_with(".sst") {
                            continue;
                        }
                        let data = std::fs::read(e.path()).unwrap();
                        for c in data.chunks(block) {
                            let packed = zstd::bulk::compress(c, level).unwrap();
                            z += packed.len().min(c.len());
                        }
                    }
                    println!(
                        "| {layout} | zstd {level} (estimate) | {:.2} | {:.2}x | {stored} |",
                        z as f64 / n,
                        z as f64 / n / 8.0
                    );
                }
            }
            println!(
                "| {layout} | {cname} | {:.2} | {:.2}x | {stored} |",
                bytes / n,
                bytes / n / 8.0
            );
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
