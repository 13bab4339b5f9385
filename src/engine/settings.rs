//! Settings asked for at creation (and insisted on at reopen), and the [`Builder`] that opens
//! an [`Fpdb`] with them.

use std::path::Path;
use std::sync::Arc;

use super::Fpdb;
use crate::error::{Error, Result};
use crate::options::{IdfSource, Options, SentenceHash};
#[cfg(feature = "redis")]
use crate::store::RedisStore;
use crate::store::{MemoryStore, RocksStore, Store};
use crate::text::IdfTable;

/// Explicitly requested settings; anything left `None` takes the store's value (or the default
/// at creation). An explicit value that differs from the store's is an error.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// Enable nshash.
    pub nshash: Option<bool>,
    /// Enable simhash.
    pub simhash: Option<bool>,
    /// Traditional -> simplified conversion.
    pub t2s: Option<bool>,
    /// Taiwan-vocabulary fold.
    pub tw_phrases: Option<bool>,
    /// nshash n.
    pub nshash_n: Option<usize>,
    /// nshash hash function.
    pub nshash_hash: Option<SentenceHash>,
    /// Minimum sentence length.
    pub min_sentence_chars: Option<usize>,
    /// Shared sentences required for an nshash match.
    pub nshash_min_shared: Option<usize>,
    /// Sentence overlap (percent) required to accept a candidate.
    pub verify_overlap_pct: Option<u32>,
    /// simhash features.
    pub simhash_features: Option<crate::options::SimhashFeatures>,
    /// Robustness to re-wrapped lines.
    pub reflow: Option<bool>,
    /// simhash stop words.
    pub simhash_stopwords: Option<crate::options::Stopwords>,
    /// Word segmentation of the word-based algorithms.
    pub segmenter: Option<crate::options::Segmenter>,
    /// simhash IDF table learned from a corpus (None: the store's, or jieba's at creation).
    pub simhash_idf: Option<Arc<IdfTable>>,
    /// simhash k.
    pub simhash_k: Option<u32>,
    /// simhash blocks.
    pub simhash_blocks: Option<u32>,
    /// Expected number of documents.
    pub expected_docs: Option<u64>,
    /// MinHash LSH bands (0 = off).
    pub minhash_bands: Option<u32>,
    /// MinHash LSH rows per band.
    pub minhash_rows: Option<u32>,
    /// Resemblance (percent) that verifies a longer candidate on its shingles alone.
    pub verify_resemblance_pct: Option<u32>,
    /// Join a cluster only when its first document verifies too.
    pub tight_clusters: Option<bool>,
    /// 4-gram resemblance (percent) of a strong link under tight clusters (0 = off).
    pub strong_resemblance_pct: Option<u32>,
    /// Under tight clusters, a copy-shaped link joins through any member.
    pub link_shape: Option<bool>,
    /// Pairs whose figures differ are template instances, not near-duplicates.
    pub template_figures: Option<bool>,
    /// Clusters name their original: the earliest member by publication time.
    pub originals: Option<bool>,
    /// Records keep a digest of their text (a re-run knows stored documents by it).
    pub digests: Option<bool>,
    /// A teaser of an article is verified against it.
    pub teasers: Option<bool>,
    /// The same characters in another order are verified on their resemblance.
    pub reordered_lines: Option<bool>,
    /// A line seen on pages of one host in two clusters is not fingerprinted.
    pub furniture: Option<bool>,
    /// A teaser may hold a few lines of its own page, and its article a standfirst.
    pub page_teasers: Option<bool>,
    /// A stored page keeps its site's template, left out against a page of another host.
    pub site_templates: Option<bool>,
    /// Exact-key algorithms.
    pub key_algos: Option<crate::options::KeyAlgos>,
    /// The weight check's bar, in thousandths, of the keyword algorithms that have one
    /// (`keywords-check`, `keywords-con-check`; see [`Settings::set_weight_check`]).
    pub weight_check: Option<u32>,
}

macro_rules! each_setting {
    ($m:ident) => {
        $m!(nshash, "nshash");
        $m!(simhash, "simhash");
        $m!(t2s, "t2s");
        $m!(tw_phrases, "tw_phrases");
        $m!(nshash_n, "nshash_n");
        $m!(nshash_hash, "nshash_hash");
        $m!(min_sentence_chars, "min_sentence_chars");
        $m!(nshash_min_shared, "nshash_min_shared");
        $m!(verify_overlap_pct, "verify_overlap_pct");
        $m!(simhash_features, "simhash_features");
        $m!(simhash_stopwords, "simhash_stopwords");
        $m!(segmenter, "segmenter");
        $m!(reflow, "reflow");
        $m!(simhash_k, "simhash_k");
        $m!(simhash_blocks, "simhash_blocks");
        $m!(expected_docs, "expected_docs");
        $m!(minhash_bands, "minhash_bands");
        $m!(minhash_rows, "minhash_rows");
        $m!(verify_resemblance_pct, "verify_resemblance_pct");
        $m!(tight_clusters, "tight_clusters");
        $m!(strong_resemblance_pct, "strong_resemblance_pct");
        $m!(link_shape, "link_shape");
        $m!(template_figures, "template_figures");
        $m!(originals, "originals");
        $m!(digests, "digests");
        $m!(teasers, "teasers");
        $m!(reordered_lines, "reordered_lines");
        $m!(furniture, "furniture");
        $m!(page_teasers, "page_teasers");
        $m!(site_templates, "site_templates");
        $m!(key_algos, "key_algos");
    };
}

/// Algorithm names [`Settings::set_algos`] knows (the CLI's `--algos` values): the names of
/// [`Algo::ALL`](crate::options::Algo::ALL).
pub const ALGO_NAMES: &[&str] = &{
    let all = crate::options::Algo::ALL;
    let mut names = [""; crate::options::Algo::ALL.len()];
    let mut i = 0;
    while i < all.len() {
        names[i] = all[i].name();
        i += 1;
    }
    names
};

impl Settings {
    /// The names [`Settings::set_named`] knows (a `_pct` setting also without `_pct`).
    pub fn names() -> Vec<&'static str> {
        let mut v = Vec::new();
        macro_rules! name {
            ($f:ident, $n:expr) => {
                v.push($n);
            };
        }
        each_setting!(name);
        v
    }

    /// Set the setting called `name` (a field of [`Settings`], or a `_pct` field without its
    /// `_pct`, as the command line's flags name them) from a JSON value of its type. `Ok(false)`
    /// when no setting has that name; an error when the value is not of its type. Front ends
    /// that take settings by name (the Python package) set them all through this, so a new
    /// setting reaches them without code of theirs.
    pub fn set_named(&mut self, name: &str, value: serde_json::Value) -> Result<bool> {
        macro_rules! named {
            ($f:ident, $n:expr) => {
                if name == $n || ($n.ends_with("_pct") && $n.strip_suffix("_pct") == Some(name)) {
                    self.$f = Some(
                        serde_json::from_value(value)
                            .map_err(|e| Error::InvalidOption(format!("setting `{name}`: {e}")))?,
                    );
                    return Ok(true);
                }
            };
        }
        each_setting!(named);
        Ok(false)
    }

    /// Use exactly the algorithms named (see [`ALGO_NAMES`]): nshash, simhash and minhash on
    /// or off (minhash off = 0 bands; on keeps `minhash_bands` as set), the exact-key
    /// algorithms with the literature's parameters.
    pub fn set_algos<S: AsRef<str>>(&mut self, names: &[S]) -> Result<()> {
        let mut keys = Vec::new();
        let (mut nshash, mut simhash, mut minhash) = (false, false, false);
        for name in names {
            match name.as_ref() {
                "nshash" => nshash = true,
                "simhash" => simhash = true,
                "minhash" => minhash = true,
                other => match crate::options::KeyAlgo::by_name(other) {
                    Some(k) => keys.push(k),
                    None => {
                        return Err(Error::InvalidOption(format!(
                            "unknown algorithm `{other}` (known: {})",
                            ALGO_NAMES.join(", ")
                        )))
                    }
                },
            }
        }
        self.nshash = Some(nshash);
        self.simhash = Some(simhash);
        if !minhash {
            self.minhash_bands = Some(0);
        }
        self.key_algos = Some(crate::options::KeyAlgos(keys));
        Ok(())
    }

    /// Ask for the weight check's bar `a` (in [0, 1]) of the keyword algorithms that have one
    /// (`keywords-check`, `keywords-con-check`): a new store must have one of them, an existing
    /// store the same bar.
    pub fn set_weight_check(&mut self, a: f64) -> Result<()> {
        if !(0.0..=1.0).contains(&a) {
            return Err(Error::InvalidOption(format!("weight check {a} (0..=1)")));
        }
        self.weight_check = Some((a * 1000.0).round() as u32);
        Ok(())
    }

    /// The bars of the weight checks of `algos`, in thousandths.
    fn weight_checks(algos: &crate::options::KeyAlgos) -> Vec<u32> {
        algos
            .0
            .iter()
            .filter_map(|a| match *a {
                crate::options::KeyAlgo::Keywords { check, .. }
                | crate::options::KeyAlgo::KeywordsCon { check, .. } => check,
                _ => None,
            })
            .collect()
    }

    /// [`Settings::resolve`] for a store about to be created: also refuses a weight check
    /// without a keyword algorithm that has one (on an existing store [`Settings::check`]
    /// compares it with the store's).
    pub fn resolve_new(&self) -> Result<Options> {
        let o = self.resolve()?;
        if let Some(w) = self.weight_check {
            if Self::weight_checks(&o.key_algos).is_empty() {
                return Err(Error::InvalidOption(format!(
                    "weight check {} needs keywords-check or keywords-con-check in the algorithms",
                    f64::from(w) / 1000.0
                )));
            }
        }
        Ok(o)
    }

    /// Options for a new store: defaults overridden by what was asked for.
    pub fn resolve(&self) -> Result<Options> {
        let mut o = Options {
            simhash_blocks: 0,
            ..Options::default()
        };
        macro_rules! set {
            ($f:ident, $n:expr) => {
                if let Some(v) = self.$f.clone() {
                    o.$f = v;
                }
            };
        }
        each_setting!(set);
        if let Some(w) = self.weight_check {
            for k in o.key_algos.0.iter_mut() {
                if let crate::options::KeyAlgo::Keywords { check: Some(c), .. }
                | crate::options::KeyAlgo::KeywordsCon { check: Some(c), .. } = k
                {
                    *c = w;
                }
            }
        }
        if let Some(t) = &self.simhash_idf {
            o.simhash_idf = IdfSource::Table {
                digest: t.digest(),
                words: t.len() as u64,
                docs: t.docs(),
            };
        }
        o.validate()
    }

    /// Refuse a store whose saved options differ from an explicit setting.
    pub fn check(&self, stored: &Options) -> Result<()> {
        macro_rules! cmp {
            ($f:ident, $n:expr) => {
                if let Some(v) = &self.$f {
                    if *v != stored.$f {
                        return Err(Error::OptionsMismatch {
                            setting: $n,
                            stored: format!("{}", stored.$f),
                            requested: format!("{v}"),
                        });
                    }
                }
            };
        }
        each_setting!(cmp);
        if let Some(w) = self.weight_check {
            let stored_checks = Self::weight_checks(&stored.key_algos);
            if stored_checks.iter().any(|&c| c != w) || stored_checks.is_empty() {
                return Err(Error::OptionsMismatch {
                    setting: "weight_check",
                    stored: match stored_checks.first() {
                        Some(&c) => format!("{}", f64::from(c) / 1000.0),
                        None => "none (no keywords-check or keywords-con-check)".into(),
                    },
                    requested: format!("{}", f64::from(w) / 1000.0),
                });
            }
        }
        if let Some(t) = &self.simhash_idf {
            let same = matches!(&stored.simhash_idf, IdfSource::Table { digest, .. } if *digest == t.digest());
            if !same {
                return Err(Error::OptionsMismatch {
                    setting: "simhash_idf",
                    stored: stored.simhash_idf.to_string(),
                    requested: format!("table {}", t.digest()),
                });
            }
        }
        Ok(())
    }
}

/// Opens an [`Fpdb`].
#[derive(Debug, Clone, Default)]
pub struct Builder {
    settings: Settings,
    create: bool,
    read_only: bool,
    cache_bytes: Option<usize>,
    presence_filters: bool,
    empty_filters: bool,
    saved_filters: Option<bool>,
}

impl Builder {
    /// Settings to create a store with (and to insist on when reopening).
    pub fn settings(mut self, s: Settings) -> Self {
        self.settings = s;
        self
    }
    /// simhash k (inclusive Hamming distance).
    pub fn simhash_k(mut self, k: u32) -> Self {
        self.settings.simhash_k = Some(k);
        self
    }
    /// nshash n.
    pub fn nshash_n(mut self, n: usize) -> Self {
        self.settings.nshash_n = Some(n);
        self
    }
    /// Create the store when it does not exist.
    pub fn create(mut self, yes: bool) -> Self {
        self.create = yes;
        self
    }
    /// Open read-only (no lock; writes refused).
    pub fn read_only(mut self, yes: bool) -> Self {
        self.read_only = yes;
        self
    }
    /// Block cache of the RocksDB store (default: [`crate::store::rocks::BLOCK_CACHE_BYTES`],
    /// 128 MiB); not a store setting.
    pub fn cache_bytes(mut self, bytes: usize) -> Self {
        self.cache_bytes = Some(bytes);
        self
    }
    /// Keep in memory a filter of every key prefix of the prefix-scanned column families
    /// ([`crate::store::Presence`]): lookups of absent hashes skip the store. Costs a scan of
    /// those families at open and ~10 bits per key; for long-running processes.
    pub fn presence_filters(mut self, yes: bool) -> Self {
        self.presence_filters = yes;
        self
    }
    /// The store is known to hold no document (created by this open): when no filter was
    /// saved, start empty filters of its hash prefixes (nothing to scan) instead of none.
    pub fn empty_filters(mut self, yes: bool) -> Self {
        self.empty_filters = yes;
        self
    }
    /// Use the presence filter saved with the store when it fits the store: saved at its
    /// present state, or at an earlier one (then brought up to date at open) (default: yes for
    /// a writer, no for a reader: a single lookup does not repay reading ~10 bits per stored
    /// key). `false` keeps no filter at all (memory bounded by the cache
    /// and memtables), unless [`Builder::presence_filters`] asks for one.
    pub fn saved_filters(mut self, yes: bool) -> Self {
        self.saved_filters = Some(yes);
        self
    }
    /// Open the RocksDB store at `path`, or the Redis Cluster store `path` names when it is
    /// a `redis://host:port[,…]/NAMESPACE` address ([`crate::store::RedisStore`]).
    pub fn open(self, path: impl AsRef<Path>) -> Result<Fpdb> {
        let path = path.as_ref();
        if let Some(url) = path.to_str().filter(|s| crate::store::is_redis_url(s)) {
            #[cfg(not(feature = "redis"))]
            return Err(Error::InvalidOption(format!(
                "{url}: this build of fpdb has no Redis store (cargo feature `redis`)"
            )));
            #[cfg(feature = "redis")]
            {
                if self.presence_filters {
                    return Err(Error::Storage(
                        "memory filters cannot be used with a Redis store (other writers' keys \
                         would be missing from them)"
                            .into(),
                    ));
                }
                let store = RedisStore::open(url, self.read_only)?;
                return Fpdb::init(Box::new(store), &self.settings, Some(path.to_path_buf()));
            }
        }
        let cache = self
            .cache_bytes
            .unwrap_or(crate::store::rocks::BLOCK_CACHE_BYTES);
        let mut applying = None;
        let store: Box<dyn Store> = if self.read_only {
            Box::new(RocksStore::open_read_only_with_cache(path, cache)?)
        } else {
            if self.create {
                if path.metadata().is_ok_and(|m| !m.is_dir()) {
                    return Err(Error::NotAStore {
                        path: path.to_path_buf(),
                    });
                }
                std::fs::create_dir_all(path).map_err(|e| Error::io(path, e))?;
            }
            let rocks = Box::new(RocksStore::open_with_cache(path, self.create, cache)?);
            // The writer's batches reach RocksDB on a thread of their own while the next is
            // looked up and decided (reads see them meanwhile): `store::WriteBehind`. Only
            // with a second core to run it: on one core the hand-over costs more than it saves
            // (docs/performance.md, "Store settings").
            if std::thread::available_parallelism().map_or(1, std::num::NonZero::get) >= 2 {
                let behind = crate::store::WriteBehind::new(rocks)?;
                applying = Some(behind.busy_clock());
                Box::new(behind)
            } else {
                rocks
            }
        };
        // A writer uses the presence filter saved with the store when it fits the store (a
        // cheap read, plus the documents written since the save); otherwise it scans for one
        // when asked, starts one on a store known to be empty, or goes without. A reader loads a saved one only
        // when asked (a single `query` does not).
        use crate::store::{Presence, PresenceStart};
        let saved = self.saved_filters.unwrap_or(!self.read_only);
        let fallback = if self.presence_filters {
            Some(PresenceStart::Scan)
        } else if self.empty_filters && !self.read_only {
            Some(PresenceStart::Empty)
        } else {
            None
        };
        let store = if saved || self.presence_filters {
            Presence::load_saved(store, path)?
        } else {
            // Not loaded, but a file that cannot serve this store goes (it must never be
            // taken for one of a later state).
            crate::store::remove_unusable_presence(store.as_ref(), path)?;
            Err(store)
        };
        let (store, fit): (Box<dyn Store>, _) = match (store, fallback) {
            (Ok((p, fit)), _) => (Box::new(p), Some(fit)),
            (Err(base), None) => (base, None),
            (Err(base), Some(start)) => (Box::new(Presence::start(base, Some(path), start)?), None),
        };
        let mut db = Fpdb::init(store, &self.settings, Some(path.to_path_buf()))?;
        db.applying = applying;
        if let Some(crate::store::PresenceFit::Behind { from, .. }) = fit {
            // Saved before the last writes (a run that did not end cleanly, or kept no
            // filter): the documents written since are read into it before any lookup.
            db.filter_caught_up = Some(db.catch_up_filter(from)?);
        }
        Ok(db)
    }
    /// Open a fresh in-memory store.
    pub fn open_in_memory(self) -> Result<Fpdb> {
        Fpdb::init(Box::new(MemoryStore::new()), &self.settings, None)
    }
    /// Open over any [`Store`].
    pub fn open_store(self, store: Box<dyn Store>) -> Result<Fpdb> {
        Fpdb::init(store, &self.settings, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every setting is reachable by its name (with its type), a `_pct` one also without
    /// `_pct`; an unknown name is said to be unknown and a value of another type refused.
    #[test]
    fn settings_are_set_by_name() {
        let mut s = Settings::default();
        assert!(s.set_named("link_shape", json!(false)).unwrap());
        assert!(s.set_named("strong_resemblance", json!(70)).unwrap());
        assert!(s.set_named("verify_overlap_pct", json!(40)).unwrap());
        assert!(s.set_named("nshash_hash", json!("md5")).unwrap());
        assert_eq!(s.link_shape, Some(false));
        assert_eq!(s.strong_resemblance_pct, Some(70));
        assert_eq!(s.verify_overlap_pct, Some(40));
        assert_eq!(s.nshash_hash, Some(SentenceHash::Md5));
        assert!(!s.set_named("colour", json!("blue")).unwrap());
        assert!(!s.set_named("link", json!(true)).unwrap());
        assert!(s.set_named("nshash_n", json!("five")).is_err());
        // Each name of the list is one the setter knows: the Options value of the default
        // settings, written back by name, changes nothing.
        let o = serde_json::to_value(Settings::default().resolve().unwrap()).unwrap();
        let mut back = Settings::default();
        for name in Settings::names() {
            assert!(back.set_named(name, o[name].clone()).unwrap(), "{name}");
        }
        assert_eq!(
            back.resolve().unwrap(),
            Settings::default().resolve().unwrap()
        );
    }
}
