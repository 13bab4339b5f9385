//! Fingerprint settings: chosen when a store is created, saved in its `meta` column family,
//! and compared on every reopen (fingerprints made with other settings are not comparable).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

mod algo;
mod key_algo;
pub use algo::Algo;
pub use key_algo::{KeyAlgo, KeyAlgos};

/// Hash function used for sentence hashes (`nshash`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
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

impl Stopwords {
    fn jieba() -> Self {
        Stopwords::Jieba
    }
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

/// The settings a store is created with. All of them change fingerprints or the index layout,
/// so all of them are saved and checked on reopen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Options {
    /// Use the `nshash` sentence-hash fingerprint.
    pub nshash: bool,
    /// Use the 64-bit `simhash` fingerprint.
    pub simhash: bool,
    /// Convert traditional Chinese to simplified before fingerprinting (default on; stores made
    /// before it was the default keep theirs, and stores made before the setting: off).
    #[serde(default)]
    pub t2s: bool,
    /// Fold Taiwan vocabulary onto mainland words before fingerprinting (软体 / 软件, 程式 /
    /// 程序: [`crate::text::fold_tw`]), so a copy converted with OpenCC `s2twp` matches its
    /// original (default on; stores made before this setting: off).
    #[serde(default)]
    pub tw_phrases: bool,
    /// Number of longest sentences hashed per document (default 5).
    pub nshash_n: usize,
    /// Hash used for sentences (default farmhash).
    pub nshash_hash: SentenceHash,
    /// A sentence counts only when it has at least this many letters/digits (default 10).
    /// Shorter ones ("谢谢。", "Click here.") are shared by unrelated documents.
    pub min_sentence_chars: usize,
    /// How many of a document's sentence hashes must be shared with one cluster before nshash
    /// calls it a match (capped by how many hashes the document has; default 1: candidates are verified).
    pub nshash_min_shared: usize,
    /// A candidate from either algorithm is accepted only when its similarity to the document
    /// ([`crate::fingerprint::similarity::similarity`]: shared sentences over the larger one's, or
    /// shingle resemblance where that decides) reaches this percentage (0 = no verification;
    /// default 60).
    pub verify_overlap_pct: u32,
    /// simhash: the features hashed (default words).
    #[serde(default)]
    pub simhash_features: SimhashFeatures,
    /// Robust to re-wrapped lines (default on; stores made before this setting: off): line
    /// breaks between two Chinese characters are removed before sentences and terms are cut,
    /// and every document (not only short ones) gets a character-shingle sketch, so a
    /// candidate whose shingles resemble the document's by at least 90% is accepted even when
    /// line breaks moved its sentences.
    #[serde(default)]
    pub reflow: bool,
    /// simhash: stop words dropped from the terms (stores made before this setting: jieba).
    #[serde(default = "Stopwords::jieba")]
    pub simhash_stopwords: Stopwords,
    /// simhash: IDF table (stores made before this setting: jieba).
    #[serde(default)]
    pub simhash_idf: IdfSource,
    /// Word segmentation of the word-based algorithms (stores made before this setting:
    /// jieba).
    #[serde(default)]
    pub segmenter: Segmenter,
    /// simhash: near-duplicate when the Hamming distance is <= this (inclusive; default 3).
    pub simhash_k: u32,
    /// simhash: number of bit blocks of the permuted-prefix index (derived from `expected_docs`
    /// when 0 at creation).
    pub simhash_blocks: u32,
    /// The number of documents the store is sized for (chooses `simhash_blocks`).
    pub expected_docs: u64,
    /// MinHash LSH over character 4-grams ([`crate::fingerprint::minhash::bands`]): band keys
    /// per document, each indexed like a sentence hash (0 = off; stores made before this
    /// setting: off). A candidate found through a band is verified like any other.
    #[serde(default)]
    pub minhash_bands: u32,
    /// MinHash LSH: minima hashed into one band key.
    #[serde(default)]
    pub minhash_rows: u32,
    /// With `reflow`: the 4-gram resemblance at which a candidate of more than three
    /// sentences is accepted on its shingles alone, in percent, when the larger of the two
    /// documents has up to [`SHORT_CHARS`] characters (stores made before this setting: 90;
    /// see [`Options::resemblance_floor`]). Short articles lose a larger share of their
    /// 4-grams to a new title and an inserted ad than long texts lose to a revision.
    #[serde(default = "Options::legacy_resemblance")]
    pub verify_resemblance_pct: u32,
    /// A document joins a cluster (and clusters merge through it) only when it also verifies
    /// against the cluster's first document, so clusters do not chain through third documents
    /// (stores made before this setting: off, single linkage).
    #[serde(default)]
    pub tight_clusters: bool,
    /// With tight clusters: a candidate whose character 4-gram resemblance reaches this % and
    /// exceeds its sentence overlap by at least [`STRONG_GAP`] joins its cluster even when the
    /// cluster's first document does not verify: edits inside sentences (characters changed,
    /// lines re-wrapped) leave the 4-grams of a copy and break its sentences, while a window
    /// overlapping a third document shares whole sentences (0 = off; stores made before this
    /// setting: off).
    #[serde(default)]
    pub strong_resemblance_pct: u32,
    /// With tight clusters: a verified candidate whose shared sentences sit as a copy's do
    /// (different inside the shared run, and not one document's own sentences before it and
    /// the other's after it, as two overlapping windows of a longer text:
    /// [`crate::fingerprint::similarity::Shape::copy`]) joins its cluster even when the cluster's
    /// first document does not verify. Records keep where each sentence sits (stores made
    /// before this setting: off).
    #[serde(default)]
    pub link_shape: bool,
    /// Two documents whose figures differ are two reports filled into one template, not
    /// near-duplicates, whatever their wording shares ([`crate::fingerprint::figures`]):
    /// records keep a sketch of their figures (stores made before this setting: off).
    #[serde(default)]
    pub template_figures: bool,
    /// Each cluster names its original: its earliest member by publication time (the time its
    /// input gives, else its ingest time), ingest order breaking ties, whatever order the
    /// members arrived in; `duplicate_of` names it. Records keep their publication time and
    /// clusters their original (stores made before this setting: off, and `duplicate_of`
    /// names the first document ingested).
    #[serde(default)]
    pub originals: bool,
    /// Records keep a 64-bit digest of the text as it was given ([`crate::hash::text_digest`]),
    /// so that a re-run sending a stored id with the same text is known as "already stored"
    /// without fingerprinting it again (stores made before this setting: off; their re-runs
    /// compare fingerprints instead). Not a fingerprint setting: nothing is matched on it.
    #[serde(default)]
    pub digests: bool,
    /// A teaser is a near-duplicate of its article: a candidate whose sentences are all in the
    /// document it is compared with, from that document's first sentence on, and make at least
    /// a third of it (three or more) is verified though the sentence overlap is under
    /// `verify_overlap_pct` ([`crate::fingerprint::similarity::teaser`]; stores made before
    /// this setting: off).
    #[serde(default)]
    pub teasers: bool,
    /// Reordered lines: a document of the same length as another (within
    /// [`REORDERED_CHARS_PER_MILLE`]), whose 4-grams resemble its at
    /// [`REORDERED_RESEMBLANCE`] or more, is verified on that resemblance whatever its length:
    /// a text hard-wrapped at a fixed width whose lines were put in another order has every
    /// sentence cut at a seam but keeps its characters (stores made before this setting: off,
    /// and a document over [`LONG_CHARS`] characters needs [`LONG_RESEMBLANCE`]).
    #[serde(default)]
    pub reordered_lines: bool,
    /// A site's furniture is left out of its pages: a line of a page's text (one block of an
    /// HTML page) that the store has seen on pages of the same host in two clusters is not
    /// fingerprinted ([`crate::text::lines`]; stores made before this setting: off, and every
    /// line counts). Pages without a URL are read whole.
    #[serde(default)]
    pub furniture: bool,
    /// Teasers on pages ([`Options::teasers`] with the lines of a page around them): the
    /// teaser may hold sentences of its own, up to one in
    /// [`crate::fingerprint::similarity::TEASER_OWN_PARTS`] of those it shares (its page's
    /// video box, a pull-quote, a "read more" line), and its article up to
    /// [`crate::fingerprint::similarity::TEASER_HEAD_MOST`] sentences before the shared ones
    /// (a standfirst the teaser leaves out) ([`crate::fingerprint::similarity::teaser`];
    /// stores made before this setting: off, and a teaser holds only its article's
    /// sentences, from the first on).
    #[serde(default)]
    pub page_teasers: bool,
    /// A stored page keeps its site's template: the sentences of its lines that its host
    /// showed on an earlier page and that were not furniture yet (record version 8), and
    /// compared with a page of another host it leaves out those the page lacks, unless that
    /// leaves out more than half of its sentences (stores made before this setting: off, and a
    /// stored page is compared whole). Needs `furniture`.
    #[serde(default)]
    pub site_templates: bool,
    /// Exact-key algorithms of the literature (I-Match, keyword fingerprint, segment
    /// signatures): keys indexed like sentence hashes (none by default; stores made before
    /// this setting: none).
    #[serde(default)]
    pub key_algos: KeyAlgos,
}

impl Default for Options {
    fn default() -> Self {
        let mut o = Options {
            nshash: true,
            simhash: true,
            t2s: true,
            tw_phrases: true,
            nshash_n: 5,
            nshash_hash: SentenceHash::Farmhash,
            min_sentence_chars: 10,
            nshash_min_shared: 1,
            verify_overlap_pct: 60,
            simhash_features: SimhashFeatures::Words,
            reflow: true,
            simhash_stopwords: Stopwords::Jieba,
            segmenter: Segmenter::Jieba,
            simhash_idf: IdfSource::Jieba,
            simhash_k: 3,
            simhash_blocks: 0,
            expected_docs: 10_000_000,
            minhash_bands: 8,
            minhash_rows: 4,
            verify_resemblance_pct: 60,
            strong_resemblance_pct: 78,
            link_shape: true,
            template_figures: true,
            originals: true,
            digests: true,
            teasers: true,
            reordered_lines: true,
            furniture: true,
            page_teasers: true,
            site_templates: true,
            tight_clusters: true,
            key_algos: KeyAlgos::default(),
        };
        o.simhash_blocks = crate::index::choose_blocks(o.simhash_k, o.expected_docs);
        o
    }
}

impl Options {
    /// The resemblance floor of stores made before the setting.
    pub const LEGACY_RESEMBLANCE: u32 = 90;

    fn legacy_resemblance() -> u32 {
        Self::LEGACY_RESEMBLANCE
    }

    /// The resemblance that accepts a candidate on its shingles alone, for a pair whose
    /// larger document has `chars` characters: [`Options::verify_resemblance_pct`] up to
    /// [`SHORT_CHARS`], [`LONG_RESEMBLANCE`]
    /// (90%) from [`LONG_CHARS`], halfway between the two in between. Revised editions of a
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
