//! Flags shared by several subcommands: store settings and input reading.

use std::path::PathBuf;

use clap::Args;

use fpdb::reader::{Fields, Format, ReadOptions};
use fpdb::{Algo, Segmenter, SentenceHash, Settings, SimhashFeatures, Stopwords};

#[derive(Args, Debug)]
pub(super) struct JsonFlag {
    /// Machine-readable JSON on stdout.
    #[arg(long)]
    pub(super) json: bool,
}

/// The help heading of the store settings' flags.
const STORE_SETTINGS: &str = "Store settings (fixed at creation)";

/// Fingerprint settings: used when the store is created; on an existing store they must equal
/// the store's (an error names both values otherwise).
#[derive(Args, Debug, Default)]
pub(super) struct SettingsArgs {
    /// Algorithms to use, comma-separated: nshash, simhash, minhash, and the literature's
    /// exact-key ones imatch, keywords, keywords-con, keywords-pct, keywords-check,
    /// keywords-con-check, des, punct, punct-title, segments, two-stage
    /// [default: nshash,simhash,minhash]
    #[arg(
        long,
        value_delimiter = ',',
        help_heading = STORE_SETTINGS
    )]
    pub(super) algos: Option<Vec<Algo>>,
    /// Convert traditional Chinese to simplified before fingerprinting (OpenCC t2s; only texts
    /// holding a traditional character are converted) [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    t2s: Option<bool>,
    /// Fold Taiwan vocabulary onto mainland words before fingerprinting (软体 / 软件, 程式 /
    /// 程序; OpenCC's phrase tables), so a copy converted with s2twp matches [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    tw_phrases: Option<bool>,
    /// nshash: number of longest sentences hashed per document [default: 5]
    #[arg(long, help_heading = STORE_SETTINGS)]
    pub(super) nshash_n: Option<usize>,
    /// nshash: sentence hash [default: farmhash]
    #[arg(long, help_heading = STORE_SETTINGS)]
    pub(super) nshash_hash: Option<SentenceHash>,
    /// nshash: minimum letters/digits for a sentence to count [default: 10]
    #[arg(long, help_heading = STORE_SETTINGS)]
    pub(super) min_sentence_chars: Option<usize>,
    /// nshash: shared sentences needed for a candidate (capped by the document's count) [default: 1]
    #[arg(long, help_heading = STORE_SETTINGS)]
    pub(super) nshash_min_shared: Option<usize>,
    /// Accept a candidate only when its similarity reaches this %: shared sentences over the
    /// larger document's, or character-shingle resemblance for short documents and (from 90%)
    /// re-wrapped ones (0 = off) [default: 60]
    #[arg(long = "verify-overlap", value_name = "PCT", help_heading = STORE_SETTINGS)]
    pub(super) verify_overlap_pct: Option<u32>,
    /// With --reflow: a candidate of more than three sentences is also accepted when its
    /// character 4-gram resemblance reaches this % and the larger document has at most 1,200
    /// characters (halfway to 90% up to 4,000, 90% beyond) [default: 60]
    #[arg(long = "verify-resemblance", value_name = "PCT", help_heading = STORE_SETTINGS)]
    pub(super) verify_resemblance_pct: Option<u32>,
    /// Join a cluster only when the document also verifies against the cluster's first
    /// document (no chaining through a third document); false = single linkage [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) tight_clusters: Option<bool>,
    /// With --tight-clusters: a candidate whose character 4-gram resemblance reaches this %
    /// and exceeds its sentence overlap by 10 points (edits inside sentences, not a window
    /// sharing whole ones) joins its cluster even when the first document does not verify
    /// (0 = off) [default: 78]
    #[arg(long = "strong-resemblance", value_name = "PCT", help_heading = STORE_SETTINGS)]
    pub(super) strong_resemblance_pct: Option<u32>,
    /// With --tight-clusters: a verified candidate whose shared sentences sit as a copy's do
    /// (different inside the shared run, and not one's own sentences before it and the
    /// other's after it, as two overlapping windows of a longer text) joins its cluster even
    /// when the first document does not verify; records keep where each sentence sits
    /// [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) link_shape: Option<bool>,
    /// Two documents whose figures differ are two reports filled into one template, not
    /// near-duplicates: at least 3 figures, fewer than two thirds shared, and at least one
    /// differing figure per 400 characters of the shorter text; records keep a sketch of
    /// their figures [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) template_figures: Option<bool>,
    /// Each cluster names its original: its earliest member by publication time (a time
    /// field, WARC-Date, the page's published time; else its ingest time), whatever order the
    /// members arrived in; `duplicate_of` names it [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) originals: Option<bool>,
    /// Records keep a 64-bit digest of their text as given, so that a re-run knows the
    /// documents already stored with the same text without fingerprinting them again (off:
    /// the store stays readable by fpdb binaries of format 9) [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) digests: Option<bool>,
    /// A teaser is a near-duplicate of its article: a document all of whose sentences (three
    /// or more) begin another and make a third of it is verified against it, though it holds
    /// only part of it (off: the store stays readable by fpdb binaries of format 10)
    /// [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) teasers: Option<bool>,
    /// Reordered lines: a document of the same length as another whose 4-grams are 80% alike
    /// is verified on them whatever its length (a text hard-wrapped at a fixed
    /// width, its lines put in another order) (off: the store stays readable by fpdb binaries
    /// of format 11) [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) reordered_lines: Option<bool>,
    /// A site's furniture is left out: a line of a page (one block of an HTML page) the store
    /// has seen on pages of the same host in three clusters is not fingerprinted (off: the
    /// store stays readable by fpdb binaries of format 12) [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) furniture: Option<bool>,
    /// Teasers on pages: a teaser may hold sentences of its own page (up to one in eight of
    /// those it shares with its article: a video box, a pull-quote, a "read more" line), and
    /// its article up to two sentences before them (a standfirst) (off: the store stays
    /// readable by fpdb binaries of format 13) [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) page_teasers: Option<bool>,
    /// A stored page keeps its site's template (the lines its host showed on an earlier page),
    /// and a page of another host is compared with it without those lines' sentences that the
    /// page lacks (off: the store stays readable by fpdb binaries of format 13) [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) site_templates: Option<bool>,
    /// A site's furniture as one ingest batch shows it: a line that three pages of one host in
    /// a batch (--batch-size) show, each with text of its own, is furniture for every page of
    /// the batch, whatever their order (off: the store stays readable by fpdb binaries of
    /// format 14) [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) batch_furniture: Option<bool>,
    /// A page compared with another page of its own site leaves out its lines that the site
    /// showed on an earlier page (its template) and the other page lacks, as against a page of
    /// another site (off: the store stays readable by fpdb binaries of format 15) [default:
    /// true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) same_site_templates: Option<bool>,
    /// What the store learns of a site never hides a copy nor joins two articles: a page's
    /// main text is never its site's furniture, a link through left-out template lines never
    /// merges two clusters, and removing pages withdraws what they taught (off: the store
    /// stays readable by fpdb binaries of format 17) [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) site_knowledge: Option<bool>,
    /// An excerpt (an article's first sentences, two or more, with at most one of its own and
    /// none beside two) is
    /// a near-duplicate of its article, whatever its share of it (off: the store stays
    /// readable by fpdb binaries of format 18) [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) excerpts: Option<bool>,
    /// simhash: features: jieba words with TF-IDF weights, or character 3-grams [default: words]
    #[arg(long, value_enum, help_heading = STORE_SETTINGS)]
    pub(super) simhash_features: Option<SimhashFeatures>,
    /// Robust to re-wrapped lines: line breaks inside Chinese text are ignored, and every
    /// document gets a character-shingle sketch that can verify a candidate (>= 90%
    /// resemblance) whose sentences moved [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true", help_heading = STORE_SETTINGS)]
    pub(super) reflow: Option<bool>,
    /// simhash: stop words dropped from the terms: jieba's list (31 English words), Stopwords
    /// ISO Chinese + English, or none [default: jieba]
    #[arg(long, value_enum, help_heading = STORE_SETTINGS)]
    pub(super) simhash_stopwords: Option<Stopwords>,
    /// Word segmentation of simhash words and keyword keys: jieba's most probable route,
    /// or forward / backward maximum matching over jieba's dictionary [default: jieba]
    #[arg(long, value_enum, help_heading = STORE_SETTINGS)]
    pub(super) segmenter: Option<Segmenter>,
    /// simhash: IDF table (`word idf` lines, e.g. from `fpdb idf`), copied into the store
    /// [default: jieba's built-in table]
    #[arg(
        long,
        value_name = "FILE",
        help_heading = STORE_SETTINGS
    )]
    pub(super) idf: Option<PathBuf>,
    /// simhash: maximum Hamming distance, inclusive [default: 3]
    #[arg(long, help_heading = STORE_SETTINGS)]
    pub(super) simhash_k: Option<u32>,
    /// simhash: a document of fewer terms has no simhash (found by MinHash instead; without
    /// minhash this reads as 1) [default: 8]
    #[arg(long, help_heading = STORE_SETTINGS)]
    pub(super) simhash_min_terms: Option<u32>,
    /// simhash: blocks of the permuted index (default: chosen from --expected-docs)
    #[arg(long, help_heading = STORE_SETTINGS)]
    pub(super) simhash_blocks: Option<u32>,
    /// minhash: LSH bands, each a key in the store (0 = no minhash) [default: 8]
    #[arg(long, help_heading = STORE_SETTINGS)]
    pub(super) minhash_bands: Option<u32>,
    /// minhash: rows (minima) per band [default: 4]
    #[arg(long, help_heading = STORE_SETTINGS)]
    pub(super) minhash_rows: Option<u32>,
    /// keywords-check, keywords-con-check: a shared key makes a candidate only when the kept
    /// terms' weights agree: Σ(wᵢ−wⱼ)² / (Σwᵢ² + Σwⱼ²) < A [default: 0.1]
    #[arg(
        long,
        value_name = "A",
        help_heading = STORE_SETTINGS
    )]
    pub(super) weight_check: Option<f64>,
    /// Number of documents the store is sized for [default: 10000000]
    #[arg(long, help_heading = STORE_SETTINGS, value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) expected_docs: Option<u64>,
}

/// Code for a row of the table of settings that has a flag of its own.
macro_rules! if_flag {
    (flag, $($code:tt)*) => {
        $($code)*
    };
    ($by:ident, $($code:tt)*) => {};
}

macro_rules! copy_flags {
    ($( $(#[doc = $doc:literal])* $name:ident : $ty:ty = $default:expr,
        older $older:tt, since $since:literal, set $by:ident $(($own:ty))? ; )*) => {
        impl SettingsArgs {
            /// Every flag of a setting into `settings` (a row of the table of settings with a
            /// flag and no field here does not compile).
            fn copy_flags(&self, settings: &mut Settings) {
                $( if_flag!($by, settings.$name = self.$name.clone();); )*
            }
        }
    };
}

fpdb::for_each_setting!(copy_flags);

impl SettingsArgs {
    pub(super) fn to_settings(&self) -> anyhow::Result<Settings> {
        let simhash_idf = match &self.idf {
            None => None,
            Some(p) => {
                // A table is lines of `word idf`.
                let text = super::output::read_lines_capped(p, 64 * 1024, "IDF table")?.join("\n");
                Some(std::sync::Arc::new(fpdb::text::IdfTable::parse(
                    &text,
                    &p.display().to_string(),
                )?))
            }
        };
        if let Some(a) = &self.algos {
            if !a.contains(&Algo::Minhash) && self.minhash_bands.is_some_and(|b| b > 0) {
                anyhow::bail!("--minhash-bands needs minhash in --algos");
            }
        }
        let mut settings = Settings {
            simhash_idf,
            ..Default::default()
        };
        self.copy_flags(&mut settings);
        if let Some(a) = &self.algos {
            let names: Vec<&str> = a.iter().map(|x| x.name()).collect();
            settings.set_algos(&names)?;
        }
        if let Some(w) = self.weight_check {
            settings.set_weight_check(w)?;
        }
        Ok(settings)
    }
}

#[derive(Args, Debug)]
pub(super) struct InputArgs {
    /// Input format. Compression (gzip, zstd) is recognized by the first bytes, whatever the
    /// name. auto: a Parquet, WARC or ARC file by its first bytes (PAR1, WARC/, filedesc://),
    /// else by extension (.parquet .jsonl .ndjson .json .csv .tsv .warc .wet .arc .html .htm,
    /// after .gz/.zst),
    /// else by the first bytes ({, <html); anything else is one text document whose id is its
    /// path. list: a file of input paths, one per line
    #[arg(long, default_value = "auto", value_parser = format_parser())]
    pub(super) format: Format,
    /// JSONL field holding the document id (empty: `file:line`). In JSONL, a name with dots
    /// that is not a key reaches into nested objects: `meta.id`, `content.body`
    #[arg(long, default_value = "id")]
    pub(super) id_field: String,
    /// JSONL field holding the text
    #[arg(long, default_value = "text", value_parser = field_name)]
    pub(super) text_field: String,
    /// JSONL field holding the title (stored, not fingerprinted)
    #[arg(long, default_value = "title")]
    pub(super) title_field: String,
    /// JSONL/CSV field holding the URL (stored)
    #[arg(long, default_value = "url")]
    pub(super) url_field: String,
    /// JSONL/CSV field holding HTML, used when the text field is absent (title, description
    /// and main text are extracted)
    #[arg(long, default_value = "html")]
    pub(super) html_field: String,
    /// JSONL/CSV/Parquet field holding the publication time (RFC 3339, RFC 2822, 2024-05-26,
    /// 2024年5月26日 10:30, Unix seconds); '' for none. WARC and ARC records use their own date,
    /// pages their article:published_time
    #[arg(long, default_value = "date")]
    pub(super) time_field: String,
    /// JSONL/CSV/Parquet field holding who published the document on its host (an account on
    /// a shared host such as mp.weixin.qq.com: what the store learns of a site is kept per
    /// publisher there); '' for none. A page's own account (WeChat's) comes first
    #[arg(long, default_value = "publisher")]
    pub(super) publisher_field: String,
    /// Skip documents (or JSONL lines) larger than this many bytes
    #[arg(long, default_value_t = 32 << 20)]
    pub(super) max_doc_bytes: usize,
    /// The earliest publication time read as one (an earlier one is a lie or a typo: the
    /// ingest time counts, with a warning)
    #[arg(long, default_value = "1900-01-01", value_parser = published_from)]
    pub(super) published_from: i64,
    /// How far past now a publication time may lie (`1d`, `6h`, `0s`); a later one is not
    /// read (the ingest time counts, with a warning)
    #[arg(long, default_value = "1d", value_parser = humantime::parse_duration)]
    pub(super) published_ahead: std::time::Duration,
}

/// `--published-from`: a time in any form the readers read.
fn published_from(s: &str) -> Result<i64, String> {
    fpdb::reader::time::parse_time(s).ok_or_else(|| {
        format!("`{s}` is not a time fpdb reads (e.g. 1900-01-01, 2024-05-26T10:30:00Z)")
    })
}

/// `--format`: one of the reader's format names ([`Format::NAMES`]), listed in the help.
fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser;
    let names = Format::NAMES.iter().map(|(n, _)| *n);
    clap::builder::PossibleValuesParser::new(names)
        .map(|s| s.parse::<Format>().expect("a name of Format::NAMES"))
}

/// A field that must be named: the text has to come from somewhere.
fn field_name(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("a field name cannot be empty (the documents' text is read from it)".into());
    }
    Ok(s.to_string())
}

impl InputArgs {
    pub(super) fn read_options(&self) -> ReadOptions {
        ReadOptions {
            format: self.format,
            fields: Fields {
                id: self.id_field.clone(),
                text: self.text_field.clone(),
                title: self.title_field.clone(),
                url: self.url_field.clone(),
                html: self.html_field.clone(),
                time: self.time_field.clone(),
                publisher: self.publisher_field.clone(),
            },
            max_doc_bytes: self.max_doc_bytes,
            defer_pages: false,
            keep_raw: false,
            published: fpdb::reader::PublishedWindow {
                earliest: self.published_from,
                ahead: i64::try_from(self.published_ahead.as_secs()).unwrap_or(i64::MAX),
            },
        }
    }
}
