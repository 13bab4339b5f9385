//! `fpdb explain A B`: why two texts or stored documents are (not) linked.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use fpdb::reader::Inputs;
use fpdb::Fpdb;

use super::args::{InputArgs, SettingsArgs};
use super::output::{open_read_only, EXIT_NO, EXIT_OK};

#[derive(Args, Debug)]
pub(super) struct ExplainArgs {
    /// First text: a file, an id in --corpus, or a stored document's id
    pub(super) a: String,
    /// Second text: a file, an id in --corpus, or a stored document's id
    pub(super) b: String,
    /// Look A and B up by id in this JSONL corpus
    #[arg(long)]
    pub(super) corpus: Option<PathBuf>,
    /// Machine-readable JSON on stdout
    #[arg(long)]
    pub(super) json: bool,
    #[command(flatten)]
    pub(super) input: InputArgs,
    #[command(flatten)]
    pub(super) settings: SettingsArgs,
}

#[expect(
    clippy::too_many_lines,
    reason = "the text report is one page printed top to bottom, as the user reads it"
)]
pub(super) fn explain(path: &PathBuf, a: &ExplainArgs) -> anyhow::Result<u8> {
    // Two ids of the store: neither names a file and no --corpus was given.
    if a.corpus.is_none() && !Path::new(&a.a).exists() && !Path::new(&a.b).exists() {
        if let Ok(db) = open_read_only(path) {
            return explain_stored(&db, path, a);
        }
    }
    let (ta, tb) = match &a.corpus {
        Some(c) => {
            let (mut ta, mut tb) = (None, None);
            for rec in Inputs::new(std::slice::from_ref(c), a.input.read_options()) {
                if let Ok(d) = rec.doc {
                    if d.id == a.a {
                        ta = Some(d.clone());
                    }
                    if d.id == a.b {
                        tb = Some(d);
                    }
                }
            }
            let missing = |id: &str| anyhow::anyhow!("id `{id}` is not in {}", c.display());
            (
                ta.ok_or_else(|| missing(&a.a))?,
                tb.ok_or_else(|| missing(&a.b))?,
            )
        }
        None => {
            // Read as `ingest` reads it: a page's main text, a compressed file, a charset.
            let read = |f: &str| {
                super::query::read_one_document(
                    Path::new(f),
                    a.input.read_options(),
                    &format!("name two of its ids with `--corpus {f}`"),
                )
            };
            (read(&a.a)?, read(&a.b)?)
        }
    };
    // The settings of the store when there is one, else defaults with the flags applied.
    let settings = a.settings.to_settings()?;
    // With a store, each page is compared as the store fingerprints it: without the lines it
    // knows as its site's furniture.
    let (fp, composite, ta, tb, left_out, host_lines) = match Fpdb::builder()
        .read_only(true)
        .settings(settings.clone())
        .open(path)
    {
        Ok(db) => {
            let composite = composite_of(&db, &ta.id, &db.fingerprint_document(&ta))?;
            let (ta, na) = db.searcher().without_furniture(&ta)?;
            let (tb, nb) = db.searcher().without_furniture(&tb)?;
            // B as ingest compares it with a stored A of another site: without the lines
            // its site showed before that A lacks, and A without those of the template its
            // record keeps that B lacks.
            let (ta_kept, ns) = db.searcher().without_stored_template(&ta, &tb)?;
            let (tb_kept, nt) = db.searcher().without_template_of(&tb, &ta)?;
            // The pair as compared with its template lines (stores with `site_knowledge`: a
            // link that holds only without them never merges two articles' clusters).
            // B's link to a stored A of its own host through lines its host showed before
            // only (stores with `host_lines_join_one`): such a link never merges two clusters.
            let host_lines = db.searcher().through_host_lines(&tb, &tb_kept, &ta)?;
            let whole = (db.options().site_knowledge && ns + nt > 0).then_some((ta, tb));
            (
                db.fingerprinter().clone(),
                composite,
                ta_kept,
                tb_kept,
                (na, nb, nt, ns, whole),
                host_lines,
            )
        }
        Err(fpdb::Error::NotFound { .. }) => (
            fpdb::fingerprint::Fingerprinter::new(settings.resolve()?, settings.simhash_idf)?,
            Vec::new(),
            ta,
            tb,
            (0, 0, 0, 0, None),
            false,
        ),
        Err(e) => return Err(e.into()),
    };
    let opts = fp.options().clone();
    let e = fpdb::explain::explain(&ta, &tb, &fp);
    let left_out_only = left_out.4.as_ref().is_some_and(|(a, b)| {
        e.comparison.linked() && !fpdb::explain::explain(a, b, &fp).comparison.linked()
    });
    let host_lines_only = host_lines && e.comparison.linked() && !e.comparison.strong;
    if a.json {
        let mut v = serde_json::to_value(&e)?;
        if !composite.is_empty() {
            v["composite_of"] = serde_json::json!(composite);
        }
        v["furniture_lines_left_out"] = serde_json::json!([left_out.0, left_out.1]);
        v["template_lines_left_out"] = serde_json::json!(left_out.2);
        v["stored_template_lines_left_out"] = serde_json::json!(left_out.3);
        v["linked_only_with_lines_left_out"] = serde_json::json!(left_out_only);
        v["linked_only_through_host_lines"] = serde_json::json!(host_lines_only);
        outln!("{}", serde_json::to_string(&v)?);
        // The same exit code as the text form: 1 when the pair is not linked.
        return Ok(if e.comparison.linked() {
            EXIT_OK
        } else {
            EXIT_NO
        });
    }
    print_composite(&ta.id, &composite)?;
    if (left_out.0, left_out.1) != (0, 0) {
        outln!(
            "furniture: {} lines of A and {} of B left out (lines the store has seen on pages of \
             their sites in three clusters)",
            left_out.0,
            left_out.1
        );
    }
    if left_out.2 > 0 {
        outln!(
            "template: {} lines of B left out (lines B's site showed on an earlier page, not in \
             A: B is compared as its ingest after A would compare it)",
            left_out.2
        );
    }
    if left_out.3 > 0 {
        outln!(
            "template: {} lines of A left out (its template: lines A's site had shown before A, \
             or has shown on pages of two clusters since, not in B)",
            left_out.3
        );
    }
    if left_out_only {
        outln!(
            "template: linked only with those lines left out (with them the pair is not \
             linked): such a link never merges two articles' clusters"
        );
    }
    if host_lines_only {
        outln!(
            "template: linked only through lines B's site showed before, each page with a \
             sentence of its own (not strong): such a link never merges two articles' clusters"
        );
    }
    outln!(
        "nshash: {} shared of {} / {} kept sentences -> {}",
        e.shared_sentences.len(),
        e.sentences_a.len(),
        e.sentences_b.len(),
        if e.comparison.nshash_match {
            "match"
        } else {
            "no match"
        }
    );
    if !e.sentences_a.is_empty() || !e.sentences_b.is_empty() {
        outln!(
            "  (sentences as fingerprinted: letters and digits only, lower case, simplified \
             characters, Taiwan words folded onto mainland ones; = shared)"
        );
    }
    for (name, s) in [("A", &e.sentences_a), ("B", &e.sentences_b)] {
        for x in s.iter() {
            let mark = if e.shared_sentences.contains(x) {
                "="
            } else {
                " "
            };
            let short: String = x.chars().take(60).collect();
            outln!("  {name}{mark} {short}");
        }
    }
    print_comparison(&e.comparison, &opts)?;
    let terms = |v: &[(String, f64)]| {
        v.iter()
            .map(|(t, w)| format!("{t}({w:.3})"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    outln!("terms only in A: {}", terms(&e.terms_only_a));
    outln!("terms only in B: {}", terms(&e.terms_only_b));
    outln!(
        "decision: {}",
        if e.comparison.linked() {
            "linked (a candidate, verified)"
        } else {
            "not linked"
        }
    );
    Ok(if e.comparison.linked() {
        EXIT_OK
    } else {
        EXIT_NO
    })
}

/// The signals shared by text and stored explanations.
pub(super) fn print_comparison(
    c: &fpdb::explain::Comparison,
    opts: &fpdb::Options,
) -> anyhow::Result<()> {
    outln!(
        "overlap: {:.1}% of the larger document's sentences are shared",
        100.0 * c.overlap
    );
    if let Some(r) = c.resemblance {
        outln!(
            "shingles: {:.1}% resemblance of character 4-grams (counts for documents of <= {} sentences, or from {:.0}% for these lengths)",
            100.0 * r,
            fpdb::fingerprint::minhash::SHORT_SENTENCES,
            100.0 * c.resemblance_floor
        );
    }
    if let Some(f) = &c.figures {
        use fpdb::fingerprint::figures::{DIFFER_PER_1000, MIN_FIGURES};
        let verdict = if f.template_instance {
            "template instance: two reports filled into one template, not verified".to_string()
        } else if f.compared < MIN_FIGURES {
            format!("too few to tell (under {MIN_FIGURES})")
        } else if f.differ * 3 <= f.compared {
            "a copy's figures (two thirds or more shared)".to_string()
        } else {
            format!("sparse in the text (under {DIFFER_PER_1000} per 1,000 characters): the wording decides")
        };
        outln!(
            "figures: {} of {} differ ({:.1} per 1,000 characters) -> {verdict}",
            f.differ,
            f.compared,
            f.differ_per_1000_chars
        );
    }
    outln!(
        "similarity: {:.1}% (threshold {}%) -> {}",
        100.0 * c.similarity,
        opts.verify_overlap_pct,
        if c.verified {
            "verified"
        } else {
            "not verified"
        }
    );
    match c.distance {
        Some(d) => outln!(
            "simhash: {} vs {}, distance {d} (k = {}) -> {}",
            c.simhash_a.as_deref().unwrap_or(""),
            c.simhash_b.as_deref().unwrap_or(""),
            opts.simhash_k,
            if c.simhash_match { "match" } else { "no match" }
        ),
        None if opts.simhash && opts.simhash_min_terms > 1 => outln!(
            "simhash: not computed for a text of fewer than {} terms (MinHash finds its copies)",
            opts.simhash_min_terms
        ),
        None => outln!("simhash: not computed (off, or no terms)"),
    }
    for (name, shared, hit) in &c.key_matches {
        outln!(
            "{name}: {shared} keys shared -> {}",
            if *hit { "match" } else { "no match" }
        );
    }
    if let Some(d) = c.weight_distance {
        let bars: Vec<String> = opts
            .key_algos
            .0
            .iter()
            .filter_map(|a| a.weight_check().map(|bar| format!("{} < {bar}", a.name())))
            .collect();
        outln!(
            "keyword weights: distance {d:.4} (the check: {})",
            bars.join(", ")
        );
    }
    if let Some(shape) = c.shape {
        let what = match shape {
            "copy" => "they differ inside the run of shared sentences (edited, added to): a copy; joins through any member",
            "window" => "one's own sentences precede the shared run, the other's follow it: two windows of one text; not strong by similarity",
            _ => "they differ only at their ends (a cut copy, or a window): no evidence either way",
        };
        outln!("shape: {shape} ({what})");
    }
    if c.headings != [0, 0] {
        let [a, b] = c.headings;
        outln!(
            "headings: A {a}, B {b} (a page's lines above its first sentence: counted in the similarity, left out of the shape)"
        );
    }
    print_exceptions(c)?;
    if opts.minhash_bands > 0 {
        outln!(
            "minhash: {} of {} bands shared -> {}",
            c.shared_bands,
            opts.minhash_bands,
            if c.minhash_match { "match" } else { "no match" }
        );
    }
    Ok(())
}

/// The lines of the rules that verify a pair under the threshold (reordered lines, teasers,
/// excerpts), and why a pair is not an excerpt.
fn print_exceptions(c: &fpdb::explain::Comparison) -> anyhow::Result<()> {
    if c.reordered {
        outln!(
            "reordered: the same length, 4-grams at least 80% alike -> verified on the resemblance (the same text, its lines in another order)"
        );
    }
    if c.teaser {
        outln!(
            "teaser: every sentence of the smaller begins the larger and makes at least a third of it -> verified at the threshold"
        );
    }
    if c.excerpt {
        outln!(
            "excerpt: the smaller holds the larger's first sentences in a run, with at most one of its own (none beside two) -> verified at the threshold"
        );
        if c.excerpt_cut {
            outln!(
                "  (its last sentence, cut short (no sentence end), is where it was cut, not a sentence of its own)"
            );
        }
    } else if let Some(why) = c.not_excerpt {
        outln!("excerpt: no ({why})");
    }
    Ok(())
}

/// `fpdb explain ID_A ID_B` on stored documents: their clusters and stored fingerprints.
pub(super) fn explain_stored(db: &Fpdb, path: &Path, a: &ExplainArgs) -> anyhow::Result<u8> {
    let get = |id: &str| -> anyhow::Result<fpdb::StoredDocument> {
        db.searcher().stored_document(id)?.ok_or_else(|| {
            anyhow::anyhow!(
                "`{id}` is neither a file nor an id in the store {} (to explain texts, give two files, or ids with --corpus)",
                path.display()
            )
        })
    };
    let (da, db_) = (get(&a.a)?, get(&a.b)?);
    let c = fpdb::explain::compare(&da.fingerprints, &db_.fingerprints, db.options());
    let same = da.similar_id == db_.similar_id;
    let composite = composite_of(db, &da.id, &da.fingerprints)?;
    // Ingest compared a page without the lines it left out as its site's furniture and its
    // site's template lines; a page's record keeps neither the first nor what was furniture
    // then, so two stored pages are compared here whole and may differ from ingest.
    let whole_pages = db.options().furniture && (da.url.is_some() || db_.url.is_some());
    if a.json {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            id: &'a str,
            similar_id: u64,
            duplicate_of: Option<&'a str>,
            published: Option<String>,
            ingested: String,
            chars: u64,
            matched_at_ingest: &'a [String],
        }
        #[derive(serde::Serialize)]
        struct Out<'a> {
            a: Doc<'a>,
            b: Doc<'a>,
            same_cluster: bool,
            #[serde(skip_serializing_if = "<[String]>::is_empty")]
            composite_of: &'a [String],
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            compared_whole_pages: bool,
            #[serde(flatten)]
            comparison: &'a fpdb::explain::Comparison,
        }
        fn doc(d: &fpdb::StoredDocument) -> Doc<'_> {
            Doc {
                id: &d.id,
                similar_id: d.similar_id,
                duplicate_of: d.duplicate_of.as_deref(),
                published: d.dates.published.map(super::output::rfc3339),
                ingested: ingested(d),
                chars: d.fingerprints.chars,
                matched_at_ingest: &d.matched_at_ingest,
            }
        }
        let out = Out {
            a: doc(&da),
            b: doc(&db_),
            same_cluster: same,
            composite_of: &composite,
            compared_whole_pages: whole_pages,
            comparison: &c,
        };
        outln!("{}", serde_json::to_string(&out)?);
    } else {
        for (name, d) in [("A", &da), ("B", &db_)] {
            print_stored(name, d)?;
        }
        outln!("same cluster: {}", if same { "yes" } else { "no" });
        if whole_pages {
            outln!(
                "pages: compared whole, as stored; ingest compared them without their site's \
                 furniture and template lines (give the pages' files, or ids with --corpus, to \
                 compare them as ingest did)"
            );
        }
        print_composite(&da.id, &composite)?;
        outln!(
            "nshash: {} of {} / {} kept sentence hashes shared -> {}",
            c.shared_nshash,
            da.fingerprints.nshash.len(),
            db_.fingerprints.nshash.len(),
            if c.nshash_match { "match" } else { "no match" }
        );
        print_comparison(&c, db.options())?;
        outln!(
            "pair: {} (texts are not stored: give two files, or ids with --corpus, to see sentences and terms)",
            if c.linked() {
                "linked directly (a candidate, verified)"
            } else if same {
                "not linked directly; in one cluster through other documents"
            } else {
                "not linked"
            }
        );
    }
    Ok(if same { EXIT_OK } else { EXIT_NO })
}

/// The line of stored document `d` (`name`: A or B): its cluster, original, times, size and
/// what it matched at ingest.
fn print_stored(name: &str, d: &fpdb::StoredDocument) -> anyhow::Result<()> {
    outln!(
        "{name}: {} (similar_id {}, {}; published {}, ingested {}; {} characters{})",
        d.id,
        d.similar_id,
        match &d.duplicate_of {
            Some(o) => format!("duplicate of {o}"),
            None => "its cluster's original".to_string(),
        },
        d.dates
            .published
            .map_or_else(|| "not said".to_string(), super::output::rfc3339),
        ingested(d),
        d.fingerprints.chars,
        if d.matched_at_ingest.is_empty() {
            String::new()
        } else {
            format!("; matched at ingest: {}", d.matched_at_ingest.join(", "))
        }
    );
    Ok(())
}

/// When a stored document was ingested, RFC 3339.
fn ingested(d: &fpdb::StoredDocument) -> String {
    super::output::rfc3339_secs(d.dates.ingested)
}

/// The stored documents `fps` (document `id`) is a composite of, as a lookup in `db` finds
/// them (`id` itself, when stored, left out).
fn composite_of(db: &Fpdb, id: &str, fps: &fpdb::Fingerprints) -> anyhow::Result<Vec<String>> {
    let mut parts = db.searcher().query(id, fps)?.composite_of;
    parts.retain(|p| p != id);
    Ok(if parts.len() >= 2 { parts } else { Vec::new() })
}

/// The composite line of the report, when `a` is one.
fn print_composite(a: &str, parts: &[String]) -> anyhow::Result<()> {
    if !parts.is_empty() {
        outln!(
            "composite: {} draws on {} stored documents of different clusters, sharing different \
             sentences with each: {} (whether it merges them, the rules decide)",
            super::output::shown(a),
            parts.len(),
            parts.join(", ")
        );
    }
    Ok(())
}
