//! Settings asked for at creation (and insisted on at reopen), and the [`Builder`] that opens
//! an [`Fpdb`] with them.

use std::path::Path;

use super::Fpdb;
use crate::error::{Error, Result};
use crate::options::{IdfSource, Options};
use crate::store::{Location, MemoryStore, OpenConfig, PresenceStart, Store};

/// The override of the row set by hand (`simhash_idf`): a table learned from a corpus, copied
/// into the store at creation.
type LearnedIdf = std::sync::Arc<crate::text::IdfTable>;

/// Code for a row that is set by its name (`flag` and `algos` rows), nothing for one set by
/// hand.
macro_rules! by_name {
    (hand, $($code:tt)*) => {};
    ($by:ident, $($code:tt)*) => {
        $($code)*
    };
}

/// A row's override type: its `Options` type, or the one it is set by hand with.
macro_rules! override_type {
    ($ty:ty) => {
        $ty
    };
    ($ty:ty, $own:ty) => {
        $own
    };
}

macro_rules! define_settings {
    ($( $(#[doc = $doc:literal])* $name:ident : $ty:ty = $default:expr,
        older $older:tt, since $since:literal, set $by:ident $(($own:ty))? $(, help $help:literal)? ; )*) => {
        /// Explicitly requested settings; anything left `None` takes the store's value (or the
        /// default at creation). An explicit value that differs from the store's is an error.
        /// One field per row of the table of settings (`options/table.rs`), and the weight
        /// check.
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct Settings {
            $(
                #[doc = concat!("[`Options::", stringify!($name), "`], when asked for.")]
                pub $name: Option<override_type!($ty $(, $own)?)>,
            )*
            /// The weight check's bar, in thousandths, of the keyword algorithms that have one
            /// (`keywords-check`, `keywords-con-check`; see [`Settings::set_weight_check`]).
            pub weight_check: Option<u32>,
        }

        impl Settings {
            /// The names [`Settings::set_named`] knows (a `_pct` setting also without `_pct`):
            /// the table's rows not set by hand.
            pub fn names() -> Vec<&'static str> {
                crate::options::SETTING_TABLE
                    .iter()
                    .filter(|r| r.set != crate::options::SetBy::Hand)
                    .map(|r| r.name)
                    .collect()
            }

            /// Set the setting called `name` (a field of [`Settings`], or a `_pct` field
            /// without its `_pct`, as the command line's flags name them) from a JSON value of
            /// its type. `Ok(false)` when no setting has that name; an error when the value is
            /// not of its type. Front ends that take settings by name (the Python package) set
            /// them all through this, so a new setting reaches them without code of theirs.
            pub fn set_named(&mut self, name: &str, value: serde_json::Value) -> Result<bool> {
                $( by_name!($by,
                    let n = stringify!($name);
                    if name == n || n.strip_suffix("_pct") == Some(name) {
                        self.$name = Some(serde_json::from_value(value).map_err(|e| {
                            Error::InvalidOption(format!("setting `{name}`: {e}"))
                        })?);
                        return Ok(true);
                    }
                ); )*
                Ok(false)
            }

            /// The explicit values of the settings set by name, over `o`.
            fn override_named(&self, o: &mut Options) {
                $( by_name!($by,
                    if let Some(v) = &self.$name {
                        o.$name = v.clone();
                    }
                ); )*
            }

            /// The first setting set by name whose explicit value differs from `stored`'s.
            fn differs_named(&self, stored: &Options) -> Result<()> {
                $( by_name!($by,
                    if let Some(v) = &self.$name {
                        if *v != stored.$name {
                            return Err(Error::OptionsMismatch {
                                setting: stringify!($name),
                                stored: format!("{}", stored.$name),
                                requested: format!("{v}"),
                            });
                        }
                    }
                ); )*
                Ok(())
            }
        }
    };
}

crate::for_each_setting!(define_settings);

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
    /// Use exactly the algorithms named (see [`ALGO_NAMES`]): nshash, simhash and minhash on
    /// or off (minhash off = 0 bands; on keeps `minhash_bands` as set), the exact-key
    /// algorithms with the literature's parameters.
    pub fn set_algos<S: AsRef<str>>(&mut self, names: &[S]) -> Result<()> {
        let mut keys = Vec::new();
        let (mut nshash, mut simhash, mut minhash) = (false, false, false);
        for name in names {
            let name = name.as_ref();
            let key = || crate::options::KeyAlgo::by_name(name);
            match (crate::options::Algo::by_name(name), key()) {
                (Some(crate::options::Algo::Nshash), _) => nshash = true,
                (Some(crate::options::Algo::Simhash), _) => simhash = true,
                (Some(crate::options::Algo::Minhash), _) => minhash = true,
                (_, Some(k)) => keys.push(k),
                _ => {
                    return Err(Error::InvalidOption(format!(
                        "unknown algorithm `{name}` (known: {})",
                        ALGO_NAMES.join(", ")
                    )))
                }
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
        self.override_named(&mut o);
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
        self.differs_named(stored)?;
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

/// Opens an [`Fpdb`]: the store settings to create it with (or insist on), and how its
/// storage is opened ([`crate::store::OpenConfig`], assembled by [`crate::store::open`]).
#[derive(Debug, Clone, Default)]
pub struct Builder {
    settings: Settings,
    config: OpenConfig,
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
        self.config.create = yes;
        self
    }
    /// Open read-only (no lock; writes refused).
    pub fn read_only(mut self, yes: bool) -> Self {
        self.config.read_only = yes;
        self
    }
    /// Block cache of the RocksDB store (default: [`crate::store::rocks::BLOCK_CACHE_BYTES`],
    /// 128 MiB); not a store setting.
    pub fn cache_bytes(mut self, bytes: usize) -> Self {
        self.config.cache_bytes = bytes;
        self
    }
    /// Keep in memory a filter of every key prefix of the prefix-scanned column families
    /// ([`crate::store::Presence`]): lookups of absent hashes skip the store. Costs a scan of
    /// those families at open (unless a saved filter fits) and ~10 bits per key; for
    /// long-running processes.
    pub fn presence_filters(mut self, yes: bool) -> Self {
        let otherwise = &mut self.config.filters.otherwise;
        if yes {
            *otherwise = Some(PresenceStart::Scan);
        } else if *otherwise == Some(PresenceStart::Scan) {
            *otherwise = None;
        }
        self
    }
    /// The store is known to hold no document (created by this open): when no filter was
    /// saved, a writer starts empty filters of its hash prefixes (nothing to scan) instead of
    /// none.
    pub fn empty_filters(mut self, yes: bool) -> Self {
        let otherwise = &mut self.config.filters.otherwise;
        if yes && *otherwise != Some(PresenceStart::Scan) {
            *otherwise = Some(PresenceStart::Empty);
        } else if !yes && *otherwise == Some(PresenceStart::Empty) {
            *otherwise = None;
        }
        self
    }
    /// What the presence filter starts from, all at once ([`crate::store::Filters`]; the three
    /// setters around this one set its parts).
    pub fn filters(mut self, filters: crate::store::Filters) -> Self {
        self.config.filters = filters;
        self
    }
    /// Use the presence filter saved with the store when it fits the store: saved at its
    /// present state, or at an earlier one (then brought up to date at open) (default: yes for
    /// a writer, no for a reader: a single lookup does not repay reading ~10 bits per stored
    /// key). `false` keeps no filter at all (memory bounded by the cache
    /// and memtables), unless [`Builder::presence_filters`] asks for one.
    pub fn saved_filters(mut self, yes: bool) -> Self {
        self.config.filters.saved = Some(yes);
        self
    }
    /// Open the RocksDB store at `path`, or the Redis Cluster store `path` names when it is
    /// a `redis://host:port[,…]/NAMESPACE` address ([`crate::store::RedisStore`]).
    pub fn open(self, path: impl AsRef<Path>) -> Result<Fpdb> {
        let path = path.as_ref();
        let opened = crate::store::open(&Location::parse(path), &self.config)?;
        let mut db = Fpdb::init(opened.store, &self.settings, Some(path.to_path_buf()))?;
        db.applying = opened.applying;
        if let Some(crate::store::PresenceFit::Behind { from, .. }) = opened.fit {
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
    use crate::options::SentenceHash;
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
