//! Fingerprint settings: chosen when a store is created, saved in its `meta` column family,
//! and compared on every reopen (fingerprints made with other settings are not comparable).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

mod algo;
mod key_algo;
mod rules;
#[macro_use]
mod table;
pub use algo::Algo;
pub use key_algo::{KeyAlgo, KeyAlgos};
pub use rules::{stored_options, RulesVersion, StoredError, RULES_VERSIONS};

/// Hash function used for sentence hashes (`nshash`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum SentenceHash {
    /// First 8 bytes of MD5 (the original nshash scheme).
    Md5,
    /// Google FarmHash Fingerprint64 (stable across platforms; ~20x faster).
    Farmhash,
}

impl std::fmt::Display for SentenceHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SentenceHash::Md5 => "md5",
            SentenceHash::Farmhash => "farmhash",
        })
    }
}

impl std::str::FromStr for SentenceHash {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "md5" => Ok(SentenceHash::Md5),
            "farmhash" => Ok(SentenceHash::Farmhash),
            _ => Err(Error::InvalidOption(format!(
                "unknown sentence hash `{s}` (md5, farmhash)"
            ))),
        }
    }
}

/// Features simhash is computed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum SimhashFeatures {
    /// jieba-rs words with TF-IDF weights (stop words dropped).
    #[default]
    Words,
    /// Character 3-grams of letters and digits, weighted by count.
    Chars,
}

impl std::fmt::Display for SimhashFeatures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SimhashFeatures::Words => "words",
            SimhashFeatures::Chars => "chars",
        })
    }
}

/// Stop words dropped from simhash's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Stopwords {
    /// jieba-rs's keyword extractor list (31 English function words; Chinese function words
    /// are mostly one character and dropped by the two-character minimum anyway).
    #[default]
    Jieba,
    /// Stopwords ISO lists for Chinese (794) and English (1,298), from the `stop-words` crate.
    Iso,
    /// None (only one-character words are dropped).
    None,
}

impl std::fmt::Display for Stopwords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stopwords::Jieba => "jieba",
            Stopwords::Iso => "iso",
            Stopwords::None => "none",
        })
    }
}

/// How word-based algorithms (simhash words, keyword and I-Match keys) cut text into words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Segmenter {
    /// jieba's most probable route over its dictionary (HMM off).
    #[default]
    Jieba,
    /// Forward maximum matching over jieba's dictionary.
    Fmm,
    /// Backward maximum matching over jieba's dictionary.
    Bmm,
}

impl std::fmt::Display for Segmenter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Segmenter::Jieba => "jieba",
            Segmenter::Fmm => "fmm",
            Segmenter::Bmm => "bmm",
        })
    }
}

/// Where simhash's IDF weights come from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdfSource {
    /// jieba's built-in table (from a large general Chinese corpus).
    #[default]
    Jieba,
    /// A table learned from a corpus ([`crate::text::IdfTable`]), kept in the store; named by
    /// its digest.
    Table {
        /// [`crate::text::IdfTable::digest`].
        digest: String,
        /// Words in the table.
        words: u64,
        /// Documents it was learned from.
        docs: u64,
    },
}

impl std::fmt::Display for IdfSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IdfSource::Jieba => f.write_str("jieba"),
            IdfSource::Table {
                digest,
                words,
                docs,
            } => write!(f, "table {digest} ({words} words, {docs} docs)"),
        }
    }
}

/// How far a candidate's 4-gram resemblance must exceed its sentence overlap to be a strong
/// link by [`Options::strong_resemblance_pct`] (part of that rule: a new value needs a new
/// setting).
pub const STRONG_GAP: f64 = 0.10;

/// In stores with [`Options::strong_resemblance_pct`], a link of ≥ 85% similarity is strong only
/// when its sentence overlap exceeds its 4-gram resemblance by at most this much: beyond it the
/// two share whole sentences and differ elsewhere, as a window overlapping a third document
/// does (part of that rule: a new value needs a new setting).
pub const WINDOW_GAP: f64 = 0.20;

/// Documents up to this many characters are verified at [`Options::verify_resemblance_pct`].
pub const SHORT_CHARS: u64 = 1_200;

/// Documents of this many characters or more are verified at 90% resemblance.
pub const LONG_CHARS: u64 = 4_000;

/// Resemblance at which a longer document is accepted on its shingles alone (stores with
/// `reflow`): a copy whose lines were re-wrapped keeps its characters but not its sentences.
/// High, because revised editions of a law, or one city's regulation copied from another's,
/// reach 0.6-0.85 in 4-gram resemblance and are not near-duplicates.
pub const LONG_RESEMBLANCE: f64 = 0.9;

/// The resemblance at which a document of the same length as another is verified
/// on its shingles alone, whatever its length (`reordered_lines`): under [`LONG_RESEMBLANCE`],
/// over what any pair that is not a near-duplicate of the labeled sets reaches (docs/accuracy.md,
/// "Reordered lines").
pub const REORDERED_RESEMBLANCE: f64 = 0.8;

/// Two documents count as the same length for `reordered_lines` when they differ by at most
/// this many characters per thousand of the longer.
pub const REORDERED_CHARS_PER_MILLE: u64 = 5;

/// Version of the text normalization rules (`text::normalize`); part of the store format,
/// since changing the rules changes every fingerprint. Kept here, below both the text layer
/// that applies the rules and the store layer that writes the format marker.
pub const NORMALIZE_VERSION: u32 = 1;

/// A store format's number: which key layout and rules a store holds. The store's `meta`
/// marker carries it (`store::schema`); the formats and what each added are listed there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FormatVersion(pub u32);

impl FormatVersion {
    /// The last format whose `nshash` keys are bare hashes (opened read-only, upgraded on a
    /// writable open).
    pub const LEGACY: Self = Self(2);
    /// The current layout with none of the settings of the table that older stores lack; the
    /// oldest format this version opens and writes as it is.
    pub const PLAIN: Self = Self(3);
    /// The newest format: the greatest `since` of the table of settings (a test keeps them
    /// equal).
    pub const CURRENT: Self = Self(20);

    /// Whether this version opens and writes a store of this format as it is: every format
    /// from [`FormatVersion::PLAIN`] to [`FormatVersion::CURRENT`] is the current layout with
    /// fewer settings. Older ones ([`FormatVersion::LEGACY`]) are upgraded on a writable open;
    /// newer ones are refused.
    pub fn opens_as_is(self) -> bool {
        (Self::PLAIN..=Self::CURRENT).contains(&self)
    }
}

impl std::fmt::Display for FormatVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What the table says of one setting ([`SETTING_TABLE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingRow {
    /// Its name: the field of [`Options`] and of `Settings`.
    pub name: &'static str,
    /// The oldest store format that can hold a value other than `older`.
    pub since: FormatVersion,
    /// The value a store made before the setting implies, as written in the table (`None`:
    /// every store has it).
    pub older: Option<&'static str>,
    /// How a front end sets it.
    pub set: SetBy,
}

/// How a front end sets a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetBy {
    /// A flag of its own name (without `_pct`, `_` as `-`), and by its name.
    Flag,
    /// Through the list of algorithms (`--algos`), and by its name.
    Algos,
    /// By a value of its own type, not by name (the IDF table, read from a file).
    Hand,
}

macro_rules! set_by {
    (flag) => {
        SetBy::Flag
    };
    (algos) => {
        SetBy::Algos
    };
    (hand) => {
        SetBy::Hand
    };
}

/// The value a stored `Options` without the field implies (`none`: it is an error).
macro_rules! older_value {
    (none, $name:ident) => {
        Err(concat!("missing field `", stringify!($name), "`").to_string())
    };
    (($older:expr), $name:ident) => {
        Ok::<_, String>($older)
    };
}

/// Whether a value other than the one older stores imply needs the row's format.
macro_rules! older_differs {
    (none, $value:expr) => {
        false
    };
    (($older:expr), $value:expr) => {
        $value != $older
    };
}

macro_rules! older_shown {
    (none) => {
        None
    };
    (($older:expr)) => {
        Some(stringify!($older))
    };
}

macro_rules! define_options {
    ($( $(#[doc = $doc:literal])* $name:ident : $ty:ty = $default:expr,
        older $older:tt, since $since:literal, set $by:ident $(($own:ty))? $(, help $help:literal)? ; )*) => {
        /// The settings a store is created with. All of them change fingerprints or the index
        /// layout, so all of them are saved and checked on reopen. Defined by the table of
        /// settings (`options/table.rs`).
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(try_from = "StoredOptions")]
        pub struct Options {
            $( $(#[doc = $doc])* pub $name: $ty, )*
        }

        /// [`Options`] as a store's `meta` holds them: a setting newer than the store is
        /// absent, and reads as the value the table says older stores imply.
        #[derive(Deserialize)]
        struct StoredOptions {
            $( #[serde(default)] $name: Option<$ty>, )*
        }

        impl TryFrom<StoredOptions> for Options {
            type Error = String;
            fn try_from(s: StoredOptions) -> std::result::Result<Self, String> {
                Ok(Options {
                    $( $name: match s.$name {
                        Some(v) => v,
                        None => older_value!($older, $name)?,
                    }, )*
                })
            }
        }

        impl Options {
            /// The table's defaults (before the derived `simhash_blocks`).
            fn table_default() -> Self {
                Options { $( $name: $default, )* }
            }

            /// The oldest format of the table's rules that holds these settings: the
            /// greatest `since` of a setting whose value is not the one older stores imply.
            pub fn rules_format(&self) -> FormatVersion {
                let mut format = FormatVersion::PLAIN;
                $( if older_differs!($older, self.$name) {
                    format = format.max(FormatVersion($since));
                } )*
                format.max(self.key_algos.since())
            }
        }

        /// Each row's name and the value, as JSON, that a stored `Options` without it reads
        /// as (`None`: it must be there).
        #[cfg(test)]
        fn older_values() -> Vec<(&'static str, Option<serde_json::Value>)> {
            vec![ $( (
                stringify!($name),
                older_value!($older, $name)
                    .ok()
                    .map(|v: $ty| serde_json::to_value(v).unwrap()),
            ), )* ]
        }

        /// Every store setting, in the order of [`Options`]' fields.
        pub const SETTING_TABLE: &[SettingRow] = &[
            $( SettingRow {
                name: stringify!($name),
                since: FormatVersion($since),
                older: older_shown!($older),
                set: set_by!($by),
            }, )*
        ];
    };
}

for_each_setting!(define_options);

impl Default for Options {
    fn default() -> Self {
        let mut o = Options::table_default();
        o.simhash_blocks = crate::index::choose_blocks(o.simhash_k, o.expected_docs);
        o
    }
}

impl Options {
    /// The resemblance floor of stores made before the setting.
    pub const LEGACY_RESEMBLANCE: u32 = 90;

    /// The resemblance that accepts a candidate on its shingles alone, for a pair whose
    /// larger document has `chars` characters: [`Options::verify_resemblance_pct`] up to
    /// `SHORT_CHARS`, [`LONG_RESEMBLANCE`]
    /// (90%) from `LONG_CHARS`, halfway between the two in between. Revised editions of a
    /// law and one city's copy of another's regulation reach 60–90% resemblance; they are
    /// long, while the reposts that lose as much (a retitled news item with an ad) are short.
    pub fn resemblance_floor(&self, chars: u64) -> f64 {
        let short = f64::from(self.verify_resemblance_pct) / 100.0;
        let long = LONG_RESEMBLANCE.max(short);
        if chars <= SHORT_CHARS {
            short
        } else if chars < LONG_CHARS {
            (short + long) / 2.0
        } else {
            long
        }
    }

    /// The similarity a candidate must reach to be verified (`verify_overlap_pct` as a share).
    /// Every check compares against this one value: a teaser is given it exactly.
    pub fn verify_threshold(&self) -> f64 {
        f64::from(self.verify_overlap_pct) / 100.0
    }

    /// Check ranges and fill derived values (`simhash_blocks` when 0).
    pub fn validate(mut self) -> Result<Self> {
        if self.minhash_bands == 0 {
            self.minhash_rows = 0;
        }
        // The strong link by resemblance is part of the tight-cluster rule.
        if !self.tight_clusters {
            self.strong_resemblance_pct = 0;
            self.link_shape = false;
        }
        if !self.nshash && !self.simhash && self.minhash_bands == 0 && self.key_algos.0.is_empty() {
            return Err(Error::InvalidOption(
                "at least one algorithm must be enabled".into(),
            ));
        }
        if self.nshash_n == 0 || self.nshash_n > 64 {
            return Err(Error::InvalidOption(format!(
                "nshash n = {} (1..=64)",
                self.nshash_n
            )));
        }
        if self.nshash_min_shared == 0 {
            return Err(Error::InvalidOption(
                "nshash min shared must be >= 1".into(),
            ));
        }
        if self.verify_overlap_pct > 100 {
            return Err(Error::InvalidOption(format!(
                "verify overlap = {}% (0..=100)",
                self.verify_overlap_pct
            )));
        }
        self.key_algos.validate()?;
        if self.strong_resemblance_pct > 100 {
            return Err(Error::InvalidOption(format!(
                "strong resemblance = {}% (0..=100)",
                self.strong_resemblance_pct
            )));
        }
        if self.verify_resemblance_pct > 100 {
            return Err(Error::InvalidOption(format!(
                "verify resemblance = {}% (0..=100)",
                self.verify_resemblance_pct
            )));
        }
        // Few-term simhashes are left out where MinHash finds what they would (see the
        // setting); without MinHash bands, or without simhash, the setting reads as 1 (as 0
        // does: every document with a term has a simhash).
        if self.minhash_bands == 0 || !self.simhash || self.simhash_min_terms == 0 {
            self.simhash_min_terms = 1;
        }
        if self.simhash_k > 16 {
            return Err(Error::InvalidOption(format!(
                "simhash k = {} (0..=16)",
                self.simhash_k
            )));
        }
        if self.minhash_bands > 64
            || u64::from(self.minhash_bands) * u64::from(self.minhash_rows.max(1)) > 256
        {
            return Err(Error::InvalidOption(format!(
                "minhash {} bands x {} rows (at most 64 bands, 256 minima)",
                self.minhash_bands, self.minhash_rows
            )));
        }
        if self.minhash_bands > 0 && self.minhash_rows == 0 {
            return Err(Error::InvalidOption("minhash rows = 0 (at least 1)".into()));
        }
        if self.expected_docs == 0 {
            return Err(Error::InvalidOption(
                "expected docs = 0 (at least 1)".into(),
            ));
        }
        if self.simhash_blocks == 0 {
            self.simhash_blocks = crate::index::choose_blocks(self.simhash_k, self.expected_docs);
        }
        crate::index::Permutations::new(self.simhash_k, self.simhash_blocks)?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resemblance_floor_rises_with_length() {
        let o = Options::default();
        assert_eq!(o.resemblance_floor(800), 0.6);
        assert_eq!(o.resemblance_floor(SHORT_CHARS), 0.6);
        assert_eq!(o.resemblance_floor(SHORT_CHARS + 1), 0.75);
        assert_eq!(o.resemblance_floor(LONG_CHARS), 0.9);
        let legacy = Options {
            verify_resemblance_pct: Options::LEGACY_RESEMBLANCE,
            ..Options::default()
        };
        for chars in [10, 2_000, 100_000] {
            assert_eq!(legacy.resemblance_floor(chars), 0.9);
        }
    }

    /// A stored `Options` without a setting reads it as the table's `older` value, and one
    /// without a setting every store has is refused; every other field reads as written.
    #[test]
    fn a_stored_options_without_a_setting_reads_the_older_value() {
        let full = serde_json::to_value(Options::default()).unwrap();
        for (name, older) in older_values() {
            let mut stored = full.clone();
            stored.as_object_mut().unwrap().remove(name);
            let read = serde_json::from_value::<Options>(stored);
            match older {
                None => {
                    let e = read.expect_err(name).to_string();
                    assert!(e.contains(name), "{name}: {e}");
                }
                Some(v) => {
                    let mut want = full.clone();
                    want[name] = v;
                    assert_eq!(serde_json::to_value(read.unwrap()).unwrap(), want, "{name}");
                }
            }
        }
        assert_eq!(
            serde_json::from_value::<Options>(full.clone()).unwrap(),
            Options::default()
        );
    }

    #[test]
    fn minhash_sizes_are_checked() {
        let with = |bands, rows| {
            Options {
                minhash_bands: bands,
                minhash_rows: rows,
                ..Options::default()
            }
            .validate()
        };
        assert!(with(8, 4).is_ok());
        assert!(with(64, 4).is_ok());
        assert!(with(65, 1).is_err());
        assert!(with(8, 0).is_err());
        assert!(with(8, u32::MAX).is_err(), "no overflow");
        assert_eq!(with(0, 9).unwrap().minhash_rows, 0, "no bands, no rows");
    }
}
