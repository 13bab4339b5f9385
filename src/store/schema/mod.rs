//! The one place that names every column family and encodes every key and value.
//!
//! | family | key | value |
//! |---|---|---|
//! | `meta` | `format`, `options`, `next_seq`, `next_cluster` | magic+version; JSON options; u64 BE counters |
//! | `docs` | doc seq, u64 BE | versioned bincode [`DocRecord`] |
//! | `doc_ids` | external id bytes | doc seq, u64 BE |
//! | `nshash` | sentence hash u64 BE + doc seq u64 BE (one posting per holder) | cluster id u64 BE |
//! | `simhash` | table (1 byte) + permuted fp (8 bytes BE) + doc seq (8 bytes BE) | empty |
//! | `clusters` | cluster id, u64 BE | versioned bincode [`ClusterRecord`] |
//! | `members` | root cluster id u64 BE + doc seq u64 BE | empty |
//! | `furniture` | host key u64 BE + line key u64 BE | the cluster ids it was seen in, u64 BE each, or empty (furniture) |
//!
//! Format 2 stores (read-only until upgraded, see `db::upgrade`) keyed `nshash` by the hash
//! alone, valued with the cluster and seq of its first holder, and had no `members`.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub use crate::options::FormatVersion;

mod keys;
mod record;
pub use keys::{
    decode_furniture, decode_furniture_host, decode_members_key, decode_nshash, decode_simhash_key,
    decode_u64, furniture_key, furniture_range, members_key, members_range, nshash_key,
    nshash_range, simhash_key, simhash_range, u64_key, ClusterId, Posting, Seq,
};
pub use record::{decode_cluster, decode_doc, encode_cluster, encode_doc};

/// Column families.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cf {
    /// Format, options, counters.
    Meta,
    /// Document records by seq.
    Docs,
    /// External id -> seq.
    DocIds,
    /// Sentence hash -> cluster.
    Nshash,
    /// Permuted simhash tables.
    Simhash,
    /// Cluster records (union-find).
    Clusters,
    /// Root cluster -> member documents.
    Members,
    /// (host, line) -> the cluster it was seen in, or furniture (stores with `furniture`).
    Furniture,
}

impl Cf {
    /// Every column family, in a fixed order.
    pub const ALL: [Cf; 8] = [
        Cf::Meta,
        Cf::Docs,
        Cf::DocIds,
        Cf::Nshash,
        Cf::Simhash,
        Cf::Clusters,
        Cf::Members,
        Cf::Furniture,
    ];

    /// On-disk name.
    pub fn name(self) -> &'static str {
        match self {
            Cf::Meta => "meta",
            Cf::Docs => "docs",
            Cf::DocIds => "doc_ids",
            Cf::Nshash => "nshash",
            Cf::Simhash => "simhash",
            Cf::Clusters => "clusters",
            Cf::Members => "members",
            Cf::Furniture => "furniture",
        }
    }

    /// Position in [`Cf::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The bytes of a key its lookups scan by (the key layout's prefix: an `nshash` key's
    /// sentence hash, a `simhash` key's table byte and 24 bits of its permuted fingerprint),
    /// for the families read by prefix: a store's prefix blooms and the presence filter are
    /// keyed by it.
    pub fn scan_prefix(self) -> Option<usize> {
        match self {
            Cf::Simhash => Some(SIMHASH_SCAN_PREFIX),
            Cf::Nshash => Some(NSHASH_SCAN_PREFIX),
            _ => None,
        }
    }

    /// Whether every key of `[s, e)` shares one scan prefix of this family (so prefix bloom
    /// filters may skip files).
    pub fn within_prefix(self, s: &[u8], e: &[u8]) -> bool {
        self.scan_prefix()
            .is_some_and(|n| s.len() >= n && e.len() >= n && s[..n] == e[..n])
    }
}

/// Bytes of a `simhash` key its lookups scan by (table byte + 24 bits).
const SIMHASH_SCAN_PREFIX: usize = 4;

/// Bytes of an `nshash` key its lookups scan by (the sentence hash).
const NSHASH_SCAN_PREFIX: usize = 8;

/// Magic bytes + format version stored under `meta/format`.
pub const FORMAT_MAGIC: &[u8; 4] = b"FPDB";
/// The format marker of the current layout and normalization (`FORMAT_MAGIC`, the format's
/// number, [`crate::options::NORMALIZE_VERSION`]). The formats, each the one before it plus
/// what it names. [`FormatVersion::CURRENT`] is bumped on a change to keys, values or record
/// versions; a decision rule that changes none of them is a setting of the next rules version
/// ([`crate::options::RulesVersion`]), with no format of its own (formats 4 to 19, made before
/// binaries refused settings they do not know, each added rules):
///
/// 3: `nshash` holds one posting per (sentence hash, holder) and `members` lists each
/// cluster's documents, so a replaced document's entries can be removed and clusters split.
/// 4: format 3 plus the settings older binaries do not know: MinHash band keys (postings in
/// `nshash`, version 2 document records), the resemblance floor and tight clusters. A store
/// whose settings use none of them is written as format 3 (older binaries keep opening it).
/// 5: format 4 plus the settings format 4 binaries do not know: the strong link by
/// resemblance, and the exact-key algorithms keywords-check / keywords-con-check (version 3
/// document records), punct-title and two-stage. A store using none of them stays format 4.
/// 6: format 5 plus the Taiwan-vocabulary fold (`tw_phrases`), which changes what text is
/// fingerprinted. A store without it keeps the oldest format that holds its other settings.
/// 7: format 6 plus the link shape (`link_shape`: version 4 document records keep where each
/// sentence sits, and a copy-shaped link joins through any member).
/// 8: format 7 plus template instances (`template_figures`: version 5 document records keep
/// their figures, and a pair whose figures differ is not verified).
/// 9: format 8 plus originals (`originals`: version 6 document records keep their
/// publication time, version 2 cluster records their original).
/// 10: format 9 plus text digests (`digests`: version 7 document records keep a digest of the
/// text as given, so a re-run knows a stored document without fingerprinting it).
/// 11: format 10 plus teasers (`teasers`: a document all of whose sentences begin another and
/// make a third of it is verified against it).
/// 12: format 11 plus reordered lines (`reordered_lines`: a document of the same length as
/// another, 80% alike in 4-grams, is verified whatever its length).
/// 13: format 12 plus a site's furniture (`furniture`: the `furniture` family counts the
/// lines of each host's pages, and a line seen in three of its clusters is not fingerprinted).
/// 14: format 13 plus teasers on pages (`page_teasers`: a teaser may hold a few sentences of
/// its own page, and its article a standfirst before them) and sites' templates
/// (`site_templates`: version 8 document records keep the sentences of their site's
/// template, left out against a page of another host).
/// 15: format 14 plus a site's furniture as one ingest batch shows it (`batch_furniture`: a
/// line three pages of one host in a batch show, each with text of its own, is furniture for
/// every page of the batch).
/// 16: format 15 plus sites' templates within a site (`same_site_templates`: a page compared
/// with a page of its own host leaves out the lines its host showed before that the other
/// lacks).
/// 17: format 16 plus a floor of terms for simhash (`simhash_min_terms`: a document of fewer
/// terms has no simhash, in stores with MinHash).
/// 18: format 17 plus site knowledge (`site_knowledge`).
/// 19: format 18 plus excerpts (`excerpts`: an article's first sentences, two or more, with
/// at most one of their own, are verified against it).
/// 20: format 19 plus late keys (`late_keys`: version 10 document records of pages keep the
/// high halves of their sentence hashes, so a page whose keys became its site's furniture is
/// posted under its other sentences).
pub fn format_value() -> Vec<u8> {
    format_value_of(FormatVersion::CURRENT)
}

/// The format marker of `version` (current normalization).
pub fn format_value_of(version: FormatVersion) -> Vec<u8> {
    let mut v = FORMAT_MAGIC.to_vec();
    v.extend_from_slice(&version.0.to_be_bytes());
    v.extend_from_slice(&crate::options::NORMALIZE_VERSION.to_be_bytes());
    v
}

/// The format version of a marker this binary's normalization wrote (None for anything else:
/// another normalization, or not a marker).
pub fn format_version(marker: &[u8]) -> Option<FormatVersion> {
    let current = format_value();
    (marker.len() == current.len() && marker[..4] == current[..4] && marker[8..] == current[8..])
        .then(|| {
            FormatVersion(u32::from_be_bytes(
                marker[4..8].try_into().expect("4 bytes"),
            ))
        })
}

/// The format a store with `opts` is marked with: the oldest that holds its settings, the
/// greatest `since` of the table of settings among those whose value is not the one older
/// stores imply ([`crate::options::Options::rules_format`]), so that older binaries keep
/// opening the stores whose rules they know, and refuse the others.
pub fn format_for(opts: &crate::options::Options) -> Vec<u8> {
    format_value_of(opts.rules_format())
}

/// `meta` keys.
pub mod meta {
    /// Format magic + version.
    pub const FORMAT: &[u8] = b"format";
    /// JSON of the creation options.
    pub const OPTIONS: &[u8] = b"options";
    /// Next document seq.
    pub const NEXT_SEQ: &[u8] = b"next_seq";
    /// Next cluster id.
    pub const NEXT_CLUSTER: &[u8] = b"next_cluster";
    /// The learned IDF table (jieba's text format) of a store created with one.
    pub const IDF_TABLE: &[u8] = b"idf_table";
    /// Retention in seconds (u64 BE): every ingest first expires older documents. Absent: keep
    /// everything.
    pub const RETENTION: &[u8] = b"retention";
}

/// Describe a stored format marker for error messages.
pub fn describe_format(v: &[u8]) -> String {
    if v.len() == 12 && &v[..4] == FORMAT_MAGIC {
        let f = u32::from_be_bytes(v[4..8].try_into().unwrap());
        let n = u32::from_be_bytes(v[8..12].try_into().unwrap());
        format!("fpdb format {f} (normalization {n})")
    } else {
        format!("unknown marker {}", hex(v))
    }
}

/// A match recorded with a document: which stored document, by which algorithm, how close.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredMatch {
    /// Seq of the matched document.
    pub seq: u64,
    /// The algorithm, stored as its name.
    pub algo: crate::options::Algo,
    /// Similarity in [0, 1].
    pub score: f64,
    /// Sentence overlap at ingest.
    pub overlap: f64,
}

/// A stored document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DocRecord {
    /// External id.
    pub id: String,
    /// Source URL, if given.
    pub url: Option<String>,
    /// Title, if given.
    pub title: Option<String>,
    /// Meta description, if given.
    pub description: Option<String>,
    /// Meta keywords, if given.
    pub keywords: Option<String>,
    /// Characters of normalized text.
    pub chars: u64,
    /// Sentence hashes.
    pub nshash: Vec<u64>,
    /// Simhash.
    pub simhash: Option<u64>,
    /// Sentence sketch (sorted 32-bit sentence hashes) for verification.
    pub sketch: Vec<u32>,
    /// Character-shingle sketch (short documents only).
    pub shingles: Vec<u32>,
    /// Cluster id given at ingest (resolve through `clusters` for the current one).
    pub similar_id: u64,
    /// Matches found at ingest.
    pub matches: Vec<StoredMatch>,
    /// Ingest time, seconds since the Unix epoch.
    pub time: u64,
    /// MinHash band keys (stores with minhash; each also a posting in `nshash`). Last with
    /// `keys`, so that a record without either is encoded as before them ([`encode_doc`]).
    pub bands: Vec<u64>,
    /// Keys of the exact-key algorithms (each also a posting in `nshash`).
    pub keys: Vec<u64>,
    /// Weights of the heaviest terms, for the keyword weight check (record version 3 and 4).
    pub key_weights: Vec<f32>,
    /// Where each sentence of `sketch` sits in the text (stores with `link_shape`: record
    /// version 4 and 5).
    pub order: Vec<u8>,
    /// Hashes of the document's distinct figures (stores with `template_figures`: record
    /// version 5 and 6).
    pub figures: Vec<u32>,
    /// When it was published, seconds since the epoch, as its input said (stores with
    /// `originals`: record version 6 only; `None`: its ingest `time` counts).
    pub published: Option<i64>,
    /// Keys of the URLs it cites (record version 6 only).
    pub cites: Vec<u64>,
    /// Whether a document that verified against it cites it (record version 6 only): a cited
    /// member comes first when a cluster's original is chosen.
    pub cited: bool,
    /// The digest of its text as given (`crate::hash::text_digest`; stores with `digests`:
    /// record version 7 and 8).
    pub digest: Option<u64>,
    /// The sentences of its site's template: those of its lines its host showed on an earlier
    /// page and that were not furniture yet, when it was ingested (a subset of `sketch`, sorted;
    /// stores with `site_templates`: record version 8 to 10).
    pub template: Vec<u32>,
    /// The stored documents whose first sentences it holds and which it verified against only
    /// as such, by seq (stores with `excerpts`: record version 9 and 10; `export` names the
    /// first still stored as its `excerpt_of`).
    pub excerpts: Vec<u64>,
    /// The high 32 bits of the sentence hash of each sentence of `sketch` (its low 32 bits),
    /// parallel to it: a page's, in stores with `late_keys` (record version 10), so that its
    /// sentences can be posted once its keys are its site's furniture (`writer/late.rs`).
    pub highs: Vec<u32>,
}

impl DocRecord {
    /// Its postings in `nshash`: sentence hashes, MinHash band keys, exact-algorithm keys.
    pub fn postings(&self) -> impl Iterator<Item = &u64> {
        self.nshash.iter().chain(&self.bands).chain(&self.keys)
    }

    /// The time a cluster's original is chosen by: its publication time, else its ingest time.
    pub fn dated(&self) -> i64 {
        self.published
            .unwrap_or(i64::try_from(self.time).unwrap_or(i64::MAX))
    }

    /// Where it stands when its cluster's original is chosen (it being at `seq`).
    pub fn original(&self, seq: u64) -> Original {
        Original {
            uncited: !self.cited,
            time: self.dated(),
            seq,
        }
    }
}

/// A cluster's original: its member that comes first by (cited first, time, seq).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Original {
    /// No document that verified against it cites it ([`DocRecord::cited`]).
    pub uncited: bool,
    /// Its time ([`DocRecord::dated`]).
    pub time: i64,
    /// Its seq.
    pub seq: u64,
}

impl Original {
    /// The earlier of two originals (either may be unknown).
    pub fn earliest(a: Option<Original>, b: Option<Original>) -> Option<Original> {
        match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, None) => x,
            (None, y) => y,
        }
    }
}

/// A cluster: its parent after a merge (None for a root), its first document, its size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterRecord {
    /// The cluster this one was merged into.
    pub parent: Option<u64>,
    /// Seq of the first document of the cluster.
    pub first_seq: u64,
    /// Documents in the cluster (including merged clusters; meaningful on roots).
    pub size: u64,
    /// Its original (stores with `originals`; version 2 cluster records).
    pub original: Option<Original>,
    /// Keys of URLs its members cite that no member had when they were cited (at most
    /// [`crate::text::cites::MAX_CITES`]): a document arriving later with one of them is cited
    /// (version 2 cluster records).
    pub pending_cites: Vec<u64>,
}

impl ClusterRecord {
    /// The seq of the document `duplicate_of` names: the original, in a store without
    /// originals the first document.
    pub fn named(&self) -> u64 {
        self.original.map_or(self.first_seq, |o| o.seq)
    }
}

/// Record encoding version (first byte of every encoded record).
pub(super) const RECORD_VERSION: u8 = 1;

fn bincode_config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// Largest allocation a record decode may claim (a record holds at most a document's fields,
/// and inputs are capped at 32 MiB): a damaged length prefix is an error, not an attempt to
/// allocate exabytes that aborts the process (found by `tools/src/bin/fuzz.rs`).
const DECODE_LIMIT: usize = 256 << 20;

pub(super) fn decode_config() -> bincode::config::Configuration<
    bincode::config::LittleEndian,
    bincode::config::Varint,
    bincode::config::Limit<DECODE_LIMIT>,
> {
    bincode::config::standard().with_limit::<DECODE_LIMIT>()
}

/// Encode a record: one version byte, then bincode.
pub fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    let mut out = vec![RECORD_VERSION];
    out.extend(bincode::serde::encode_to_vec(v, bincode_config()).expect("records always encode"));
    out
}

/// Decode a record written by [`encode`].
pub fn decode<T: for<'de> Deserialize<'de>>(cf: Cf, key: &[u8], v: &[u8]) -> Result<T> {
    match v.split_first() {
        Some((&RECORD_VERSION, rest)) => bincode::serde::decode_from_slice(rest, decode_config())
            .map(|(r, _)| r)
            .map_err(|e| corrupt(cf, key, e.to_string())),
        Some((ver, _)) => Err(corrupt(cf, key, format!("unknown record version {ver}"))),
        None => Err(corrupt(cf, key, "empty record".into())),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A corruption error for `cf`/`key`.
pub fn corrupt(cf: Cf, key: &[u8], detail: String) -> Error {
    Error::Corruption {
        cf: cf.name(),
        key: hex(key),
        detail,
    }
}

#[cfg(test)]
mod tests;
