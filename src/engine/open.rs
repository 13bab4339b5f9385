//! Opening a store: format and options checked (or written, for a new store), counters
//! read, the fingerprinter built; format 2 stores upgraded on a writable open.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::clusters::Tally;
use super::{Fpdb, Settings, CLUSTER_COUNT, DOC_COUNT};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprinter;
use crate::index::Permutations;
use crate::options::{IdfSource, Options};
use crate::store::schema::{self, meta, ClusterId, Seq};
use crate::store::{Batch, Cf, Staged, Store};
use crate::text::IdfTable;

/// Write a new store's format, options (and learned IDF table) and counters; returns the
/// options.
fn create(store: &Staged, settings: &Settings) -> Result<Options> {
    let opts = settings.resolve_new()?;
    let mut b = Batch::new();
    b.put(Cf::Meta, meta::FORMAT, schema::format_for(&opts));
    b.put(
        Cf::Meta,
        meta::OPTIONS,
        serde_json::to_vec(&opts).expect("options encode"),
    );
    if let Some(t) = &settings.simhash_idf {
        b.put(Cf::Meta, meta::IDF_TABLE, t.to_text().into_bytes());
    }
    b.put(Cf::Meta, meta::NEXT_SEQ, schema::u64_key(1));
    b.put(Cf::Meta, meta::NEXT_CLUSTER, schema::u64_key(1));
    b.put(Cf::Meta, DOC_COUNT, schema::u64_key(0));
    b.put(Cf::Meta, CLUSTER_COUNT, schema::u64_key(0));
    store.write(b)?;
    store.sync()?;
    Ok(opts)
}

impl Fpdb {
    pub(super) fn init(
        store: Box<dyn Store>,
        settings: &Settings,
        path: Option<PathBuf>,
    ) -> Result<Fpdb> {
        let store = Staged::new(store);
        // A store other processes write: create it (or find it created) under the lease.
        let shared = store.lease().is_some() && !store.read_only();
        if let Some(lease) = store.lease().filter(|_| shared) {
            lease.acquire_writer()?;
        }
        let opened = Self::init_leased(store, settings, path);
        if shared {
            let released = match &opened {
                Ok(db) => db.release_lease(),
                Err(_) => Ok(()),
            };
            released?;
        }
        opened
    }

    fn init_leased(store: Staged, settings: &Settings, path: Option<PathBuf>) -> Result<Fpdb> {
        let opts = match store.get(Cf::Meta, meta::FORMAT)? {
            None => {
                if store.read_only() {
                    return Err(Error::NotFound {
                        path: path.unwrap_or_default(),
                    });
                }
                create(&store, settings)?
            }
            Some(f) => {
                // One rule: the legacy format (upgraded), or any from the oldest to the current.
                let version = schema::format_version(&f);
                let legacy = version == Some(schema::FormatVersion::LEGACY);
                let current = version.is_some_and(schema::FormatVersion::opens_as_is);
                if !legacy && !current {
                    return Err(Error::IncompatibleFormat {
                        found: schema::describe_format(&f),
                        expected: schema::describe_format(&schema::format_value()),
                    });
                }
                let raw = store.get(Cf::Meta, meta::OPTIONS)?.unwrap_or_default();
                let opts = crate::options::stored_options(&raw).map_err(|e| match e {
                    crate::options::StoredError::Unknown(names) => Error::UnknownRules { names },
                    crate::options::StoredError::Bad(e) => {
                        schema::corrupt(Cf::Meta, meta::OPTIONS, e)
                    }
                })?;
                settings.check(&opts)?;
                opts
            }
        };
        let idf = match &opts.simhash_idf {
            IdfSource::Jieba => None,
            IdfSource::Table { .. } => {
                let raw = store.get(Cf::Meta, meta::IDF_TABLE)?.unwrap_or_default();
                let text = String::from_utf8(raw)
                    .map_err(|e| schema::corrupt(Cf::Meta, meta::IDF_TABLE, e.to_string()))?;
                let t = IdfTable::parse(&text, "idf table")
                    .map_err(|e| schema::corrupt(Cf::Meta, meta::IDF_TABLE, e.to_string()))?;
                Some(Arc::new(t))
            }
        };
        let fingerprinter = Fingerprinter::new(opts.clone(), idf)
            .map_err(|e| schema::corrupt(Cf::Meta, meta::IDF_TABLE, e.to_string()))?;
        let perms = Permutations::new(opts.simhash_k, opts.simhash_blocks)?;
        let legacy = store.get(Cf::Meta, meta::FORMAT)?
            == Some(schema::format_value_of(schema::FormatVersion::LEGACY));
        let counts = super::read_counters(&store)?;
        let mut db = Fpdb {
            fingerprinter,
            counts,
            writing: Default::default(),
            lease: super::Lease::default(),
            legacy,
            lookup_pool: std::sync::OnceLock::new(),
            reads: Default::default(),
            filter_caught_up: None,
            applying: None,
            view: None,
            last_batch: None,
            batch_pages: true,
            forget: std::sync::Mutex::default(),
            grown: std::sync::Mutex::default(),
            store,
            opts,
            perms,
            path,
        };
        if legacy && !db.store.read_only() {
            db.upgrade()?;
        }
        Ok(db)
    }

    /// Put the keys of every document from seq `from` on into the store's presence filter
    /// (loaded as saved before those documents were written: [`crate::store::Presence`]).
    /// Their postings and simhash table keys are derived from the records, as
    /// [`Writer::add`](super::writer::Writer::add) wrote them. Returns the documents read.
    pub(super) fn catch_up_filter(&self, from: u64) -> Result<u64> {
        let Some(filter) = self.store.presence_filter() else {
            return Ok(0);
        };
        let mut n = 0u64;
        let mut err = None;
        self.store
            .scan(Cf::Docs, &schema::u64_key(from), &[0xff; 9], &mut |k, v| {
                let (seq, rec) =
                    match (schema::decode_u64(Cf::Docs, k, k), schema::decode_doc(k, v)) {
                        (Ok(seq), Ok(rec)) => (seq, rec),
                        (Err(e), _) | (_, Err(e)) => {
                            err = Some(e);
                            return false;
                        }
                    };
                for &h in rec.postings() {
                    filter.note_present(Cf::Nshash, &schema::nshash_key(h, Seq(seq)));
                }
                for key in rec
                    .simhash
                    .into_iter()
                    .flat_map(|q| self.index().table_keys(q, seq))
                {
                    filter.note_present(Cf::Simhash, &key);
                }
                n += 1;
                true
            })?;
        match err {
            Some(e) => Err(e),
            None => Ok(n),
        }
    }

    /// Rewrite a format 2 store in the current format: a posting per (sentence hash, holder)
    /// and the `members` lists from the document records, bare-hash entries removed, root
    /// sizes, first documents and the cluster count recomputed from the members. Runs once,
    /// on the first writable open; a killed upgrade is redone from the start on the next one
    /// (the format marker is written last).
    pub(super) fn upgrade(&mut self) -> Result<()> {
        const CHUNK: usize = 1 << 16;
        let mut counted: BTreeMap<u64, Tally> = BTreeMap::new();
        let mut b = Batch::new();
        let flush = |b: &mut Batch, store: &Staged| -> Result<()> {
            store.write(std::mem::take(b))?;
            store.commit()
        };
        self.records().for_each_doc(&mut |seq, r| {
            let (root, _) = self.records().find(r.similar_id)?;
            for &h in &r.nshash {
                b.put(
                    Cf::Nshash,
                    schema::nshash_key(h, Seq(seq)),
                    schema::u64_key(r.similar_id),
                );
            }
            b.put(
                Cf::Members,
                schema::members_key(ClusterId(root), Seq(seq)),
                Vec::new(),
            );
            counted
                .entry(root)
                .or_insert(Tally::starting_at(Seq(seq)))
                .size += 1;
            if b.len() >= CHUNK {
                flush(&mut b, &self.store)?;
            }
            Ok(())
        })?;
        flush(&mut b, &self.store)?;
        // Bare-hash entries (8-byte keys), a chunk at a time.
        let mut from = Vec::new();
        loop {
            let mut legacy = Vec::new();
            let mut last = None;
            self.store
                .scan(Cf::Nshash, &from, &[0xff; 18], &mut |k, _| {
                    if k.len() == 8 {
                        legacy.push(k.to_vec());
                    }
                    last = Some(k.to_vec());
                    legacy.len() < CHUNK
                })?;
            for k in &legacy {
                b.delete(Cf::Nshash, k.clone());
            }
            flush(&mut b, &self.store)?;
            match last {
                Some(mut k) => {
                    k.push(0);
                    from = k;
                }
                None => break,
            }
        }
        let mut roots = Vec::new();
        self.records().count_keys(Cf::Clusters, &mut |k, val| {
            if let (Ok(id), Ok(rec)) = (
                schema::decode_u64(Cf::Clusters, k, k),
                schema::decode_cluster(k, val),
            ) {
                if rec.parent.is_none_or(|p| p == id) {
                    roots.push((id, rec));
                }
            }
            true
        })?;
        for (id, mut rec) in roots {
            let counted = counted.get(&id).copied();
            let Tally { size, first } = counted.unwrap_or(Tally::starting_at(Seq(rec.first_seq)));
            rec.size = size;
            rec.first_seq = first.0;
            b.put(
                Cf::Clusters,
                schema::u64_key(id),
                schema::encode_cluster(&rec),
            );
        }
        self.counts.clusters = counted.len() as u64;
        self.counts.put(&mut b);
        flush(&mut b, &self.store)?;
        self.store.sync()?;
        b.put(Cf::Meta, meta::FORMAT, schema::format_for(&self.opts));
        flush(&mut b, &self.store)?;
        self.store.sync()?;
        self.legacy = false;
        Ok(())
    }
}
