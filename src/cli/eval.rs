//! `fpdb eval`: precision and recall on labeled pairs, per configuration and per kind.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::builder::TypedValueParser as _;
use clap::Args;

use rayon::prelude::*;

use fpdb::reader::Inputs;
use fpdb::{Algo, Settings};

use super::args::{InputArgs, SettingsArgs};
use super::output::EXIT_OK;

#[derive(Args, Debug)]
pub(super) struct EvalArgs {
    /// Corpus to ingest in order: any input `ingest` reads (JSONL, CSV/TSV, WARC/ARC, HTML,
    /// Parquet, text; gzip and zstd), by the same sniffing and input flags
    #[arg(long)]
    pub(super) corpus: PathBuf,
    /// Labeled pairs: TSV with header id_a, id_b, label (0/1), kind
    #[arg(long)]
    pub(super) pairs: PathBuf,
    /// Which article each document shows: TSV with header id, article. Every pair of
    /// documents in one cluster is then judged too (false merges the labeled pairs miss)
    #[arg(long, value_name = "TSV")]
    pub(super) articles: Option<PathBuf>,
    /// Configurations to score: nshash, simhash, minhash, imatch, keywords, keywords-con,
    /// keywords-pct, keywords-check, keywords-con-check, des, punct, punct-title, segments,
    /// two-stage alone, or
    /// default (the store settings given, else the defaults) [default: nshash, simhash,
    /// minhash, default]
    #[arg(long, value_delimiter = ',', value_parser = eval_algo())]
    pub(super) algo: Vec<EvalAlgo>,
    /// Learn simhash's IDF table from the corpus itself (first pass) instead of using jieba's
    #[arg(long)]
    pub(super) learn_idf: bool,
    /// List up to N wrongly judged pairs per configuration (missed duplicates, false merges);
    /// `fpdb explain --corpus … A B` tells why [JSON output always lists them all]
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(super) errors: usize,
    /// Machine-readable JSON on stdout
    #[arg(long)]
    pub(super) json: bool,
    /// Documents per batch, as `ingest --batch-size`; a batch also ends at 32 MiB of input,
    /// as ingest's do (the pages of one batch learn their sites' furniture together:
    /// --batch-furniture)
    #[arg(long, default_value_t = fpdb::BATCH_DOCS, value_parser = clap::value_parser!(u64).range(1..).map(|n| usize::try_from(n).unwrap_or(usize::MAX)))]
    pub(super) batch_size: usize,
    #[command(flatten)]
    pub(super) input: InputArgs,
    #[command(flatten)]
    pub(super) settings: SettingsArgs,
}

/// A configuration `--algo` names: one algorithm alone, or the store settings given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum EvalAlgo {
    /// This algorithm alone.
    Alone(Algo),
    /// The store settings given, else the defaults.
    Default,
}

/// `--algo`'s values: the algorithms' names ([`Algo`]) and `default`.
fn eval_algo() -> impl clap::builder::TypedValueParser<Value = EvalAlgo> {
    clap::builder::PossibleValuesParser::new(Algo::ALL.iter().map(|a| a.name()).chain(["default"]))
        .map(|name| Algo::by_name(&name).map_or(EvalAlgo::Default, EvalAlgo::Alone))
}

pub(super) fn eval(a: &EvalArgs) -> anyhow::Result<u8> {
    let (mut docs, mut sizes) = (Vec::new(), Vec::new());
    for rec in Inputs::new(std::slice::from_ref(&a.corpus), a.input.read_options()) {
        match rec.doc {
            Ok(d) => {
                docs.push(d);
                sizes.push(rec.bytes);
            }
            Err(ref reason) => eprintln!("fpdb: skipped {}: {reason}", rec.location()),
        }
    }
    let pairs = fpdb::eval::read_pairs(&a.pairs)?;
    if pairs.is_empty() {
        bail!("{}: no labeled pairs in it", a.pairs.display());
    }
    let articles = match &a.articles {
        Some(p) => fpdb::eval::read_articles(p)?,
        None => std::collections::HashMap::new(),
    };
    let mut base = a.settings.to_settings()?;
    if a.learn_idf {
        base.simhash_idf = Some(std::sync::Arc::new(learned_idf(&base, &docs, a.json)?));
    }
    // The documents fingerprinted once per simhash floor the configurations' stores have
    // (the defaults: 8; simhash alone: 1).
    let mut fingerprinted: Vec<(u32, Vec<fpdb::Fingerprints>)> = Vec::new();
    let algos = if a.algo.is_empty() {
        vec![
            EvalAlgo::Alone(Algo::Nshash),
            EvalAlgo::Alone(Algo::Simhash),
            EvalAlgo::Alone(Algo::Minhash),
            EvalAlgo::Default,
        ]
    } else {
        a.algo.clone()
    };
    let mut reports = Vec::new();
    for algo in algos {
        let (name, s) = configuration(algo, &base);
        let floor = fpdb::eval::simhash_floor(&s)?;
        let at = match fingerprinted
            .iter()
            .position(|(f, _)| floor.is_none_or(|floor| *f == floor))
        {
            Some(i) => i,
            None => {
                let fps = fpdb::eval::fingerprint_all(&docs, &s)?;
                fingerprinted.push((floor.unwrap_or(1), fps));
                fingerprinted.len() - 1
            }
        };
        reports.push(fpdb::eval::evaluate(
            name,
            (
                &docs,
                &fingerprinted[at].1,
                fpdb::eval::Batches {
                    docs: a.batch_size,
                    sizes: &sizes,
                    bytes: fpdb::pipeline::CHUNK_BYTES,
                },
            ),
            &pairs,
            &articles,
            &s,
        )?);
    }
    if a.json {
        outln!("{}", serde_json::to_string(&reports)?);
        return Ok(EXIT_OK);
    }
    outln!("{} documents, {} pairs", docs.len(), pairs.len());
    for r in &reports {
        print_report(r, a.errors)?;
    }
    Ok(EXIT_OK)
}

/// Learn an IDF table from the corpus (`--learn-idf`): simhash's terms of every document.
fn learned_idf(
    base: &Settings,
    docs: &[fpdb::Document],
    quiet: bool,
) -> anyhow::Result<fpdb::text::IdfTable> {
    if base.simhash_idf.is_some() {
        anyhow::bail!("--learn-idf and --idf exclude each other");
    }
    let mut opts = base.resolve()?;
    opts.simhash_idf = fpdb::IdfSource::Jieba; // the table is what is being learned
    let fp = fpdb::fingerprint::Fingerprinter::new(opts, None)?;
    let prepared: Vec<String> = docs.par_iter().map(|d| fp.prepare(&d.text)).collect();
    let t = fpdb::text::IdfTable::learn(prepared.iter().map(String::as_str));
    if !quiet {
        eprintln!(
            "learned IDF table: {} words from {} documents",
            t.len(),
            t.docs()
        );
    }
    Ok(t)
}

/// The settings `--algo` names: one algorithm of `base`, or `base` itself (`default`), with
/// `--weight-check` only where a checked keyword algorithm runs.
fn configuration(algo: EvalAlgo, base: &Settings) -> (&'static str, Settings) {
    let (name, mut s) = match algo {
        EvalAlgo::Alone(a @ Algo::Nshash) => (a.name(), only(base, true, false, false)),
        EvalAlgo::Alone(a @ Algo::Simhash) => (a.name(), only(base, false, true, false)),
        EvalAlgo::Alone(a @ Algo::Minhash) => (a.name(), only(base, false, false, true)),
        EvalAlgo::Default => ("default", base.clone()),
        EvalAlgo::Alone(keyed) => {
            let k = fpdb::KeyAlgo::by_name(keyed.name())
                .expect("every other algorithm is an exact-key one");
            (k.name(), keys_only(base, k))
        }
    };
    let checked = s
        .key_algos
        .as_ref()
        .is_some_and(|k| k.0.iter().any(|a| a.weight_check().is_some()));
    if !checked {
        s.weight_check = None;
    }
    (name, s)
}

/// One configuration's scores, per kind, and up to `errors` wrongly judged pairs.
fn print_report(r: &fpdb::eval::Report, errors: usize) -> anyhow::Result<()> {
    outln!(
        "\n{:<8} precision {:.4}  recall {:.4}  F1 {:.4}  (tp {}, fp {}, fn {}{})",
        r.algo,
        r.precision,
        r.recall,
        r.f1,
        r.tp,
        r.fp,
        r.fn_,
        if r.missing > 0 {
            format!(", {} pairs with unknown ids", r.missing)
        } else {
            String::new()
        }
    );
    if let Some(c) = &r.cluster_pairs {
        outln!(
            "  pairs in one cluster: {} show one article, {} show different ones (precision {:.4}); {} of {} pairs of one article share a cluster (recall {:.4})",
            c.same,
            c.different,
            c.precision,
            c.same,
            c.possible,
            c.recall
        );
        if errors > 0 && !c.merged.is_empty() {
            outln!(
                "  different articles in one cluster ({} of {} pairs of articles, one page of each):",
                c.merged.len().min(errors),
                c.merged.len()
            );
            for [a, b] in c.merged.iter().take(errors) {
                outln!("    merged\t{a}\t{b}");
            }
        }
    }
    outln!(
        "  {:<22} {:>5} {:>6} {:>10} {:>9}",
        "kind",
        "label",
        "pairs",
        "predicted",
        "accuracy"
    );
    for (k, s) in &r.kinds {
        outln!(
            "  {:<22} {:>5} {:>6} {:>10} {:>8.1}%",
            k,
            s.label,
            s.pairs,
            s.predicted_duplicate,
            100.0 * s.accuracy
        );
    }
    if errors > 0 && !r.errors.is_empty() {
        outln!(
            "  wrongly judged ({} of {}):",
            r.errors.len().min(errors),
            r.errors.len()
        );
        for e in r.errors.iter().take(errors) {
            outln!(
                "    {} {}\t{}\t{}",
                if e.label == 1 { "missed" } else { "merged" },
                e.kind,
                e.a,
                e.b
            );
        }
    }
    Ok(())
}

/// `base` with only the algorithms named on (minhash with `base`'s bands, else the default).
fn only(base: &Settings, nshash: bool, simhash: bool, minhash: bool) -> Settings {
    Settings {
        nshash: Some(nshash),
        simhash: Some(simhash),
        minhash_bands: if minhash {
            base.minhash_bands.filter(|&b| b > 0)
        } else {
            Some(0)
        },
        key_algos: Some(fpdb::KeyAlgos::default()),
        ..base.clone()
    }
}

/// `base` with only the exact-key algorithm `algo` on.
fn keys_only(base: &Settings, algo: fpdb::KeyAlgo) -> Settings {
    Settings {
        key_algos: Some(fpdb::KeyAlgos(vec![algo])),
        ..only(base, false, false, false)
    }
}
