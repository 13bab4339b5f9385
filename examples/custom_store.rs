//! A store of your own under the engine: anything ordered with column families implements
//! [`Store`] (get, scan, write, sync). This one wraps the in-memory store and counts what the
//! engine reads and writes; a real one would put the keys in another database.
//!
//! ```text
//! cargo run --release --example custom_store
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use fpdb::store::{Batch, Cf};
use fpdb::{Document, Fpdb, MemoryStore, OnExisting, Store};

/// What the engine asked of the store.
#[derive(Default)]
struct Counts {
    gets: AtomicU64,
    scans: AtomicU64,
    writes: AtomicU64,
}

/// The in-memory store, counted.
struct Counted {
    base: MemoryStore,
    counts: Arc<Counts>,
}

impl Store for Counted {
    fn get(&self, cf: Cf, key: &[u8]) -> fpdb::Result<Option<Vec<u8>>> {
        self.counts.gets.fetch_add(1, Ordering::Relaxed);
        self.base.get(cf, key)
    }

    fn scan(
        &self,
        cf: Cf,
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> fpdb::Result<()> {
        self.counts.scans.fetch_add(1, Ordering::Relaxed);
        self.base.scan(cf, start, end, visit)
    }

    fn write(&self, batch: Batch) -> fpdb::Result<()> {
        // One batch per decision (or per ingest batch): atomic in the base store.
        self.counts
            .writes
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        self.base.write(batch)
    }

    fn sync(&self) -> fpdb::Result<()> {
        self.base.sync()
    }

    fn read_only(&self) -> bool {
        false
    }
}

fn main() -> fpdb::Result<()> {
    let counts = Arc::new(Counts::default());
    let store = Counted {
        base: MemoryStore::new(),
        counts: Arc::clone(&counts),
    };
    let mut db = Fpdb::builder().open_store(Box::new(store))?;
    let text = "国务院办公厅关于加强政府网站信息内容建设的意见。各省、自治区、直辖市人民政府，\
                国务院各部委、各直属机构：政府网站是信息化条件下政府密切联系人民群众的重要桥梁。";
    for (i, t) in [text.to_string(), format!("{text}（转载）")]
        .iter()
        .enumerate()
    {
        db.ingest_document(
            &Document::new(format!("doc-{i}"), t.as_str()),
            OnExisting::Skip,
        )?;
    }
    db.sync()?;
    let s = db.searcher().stats();
    println!("{} documents in {} cluster(s)", s.documents, s.clusters);
    println!(
        "the engine made {} point reads, {} scans and wrote {} keys",
        counts.gets.load(Ordering::Relaxed),
        counts.scans.load(Ordering::Relaxed),
        counts.writes.load(Ordering::Relaxed)
    );
    Ok(())
}
