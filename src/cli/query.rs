//! `fpdb query`: one text (argument, file, stdin) or `--batch` inputs, looked up read-only.

use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use rayon::prelude::*;

use fpdb::reader::{Inputs, ReadOptions};
use fpdb::Outcome;

use super::args::InputArgs;
use super::output::{open_read_only, read_stdin, OutputLine, EXIT_NO, EXIT_OK, EXIT_SKIPPED};
use fpdb::pipeline::next_chunk;

#[derive(Args, Debug)]
pub(super) struct QueryArgs {
    /// The text to look up (or use --file, or `-` for stdin)
    pub(super) text: Option<String>,
    /// Read the text from FILE
    #[arg(long, short, value_name = "FILE", conflicts_with = "text")]
    pub(super) file: Option<PathBuf>,
    /// Look up every document of these inputs (files, directories, `-`; any ingest format)
    /// and print one JSON line each: {"id","duplicate","similar_id","duplicate_of","matches"}.
    /// Read-only: documents of the batch are compared with the store, not with each other
    #[arg(long, value_name = "PATH", num_args = 1.., conflicts_with_all = ["text", "file"])]
    pub(super) batch: Vec<PathBuf>,
    /// The document's title (for the algorithms that read one: punct-title, two-stage; a
    /// JSON or HTML --file brings its own)
    #[arg(long, conflicts_with = "batch")]
    pub(super) title: Option<String>,
    /// Machine-readable JSON on stdout
    #[arg(long)]
    pub(super) json: bool,
    #[command(flatten)]
    pub(super) input: InputArgs,
}

/// `fpdb query --batch`: every document of the inputs looked up, one JSON line each, in input
/// order; fingerprints computed and lookups run on all cores, a batch at a time.
pub(super) fn query_batch(
    path: &PathBuf,
    a: &QueryArgs,
    quiet: bool,
    verbose: bool,
) -> anyhow::Result<u8> {
    // With the presence filter the last writer saved, when it matches the store: lookups of
    // hashes no document has skip the store (the file is ~10 bits per stored key).
    let db = fpdb::Fpdb::builder()
        .read_only(true)
        .saved_filters(true)
        .open(path)?;
    let fp = db.fingerprinter().clone();
    let read_opts = ReadOptions {
        defer_pages: true,
        ..a.input.read_options()
    };
    let mut inputs = Inputs::new(&a.batch, read_opts);
    let mut out = BufWriter::new(std::io::stdout().lock());
    let (mut records, mut duplicates, mut skipped) = (0u64, 0u64, 0u64);
    while let Some((chunk, fps)) = next_chunk(&mut inputs, 1024, &fp) {
        // Pages without their site's furniture, as the store knows it.
        let fps: Vec<Option<fpdb::Fingerprints>> = chunk
            .par_iter()
            .zip(fps)
            .map(|(rec, f)| match (&rec.doc, f) {
                (Ok(doc), Some(f)) => db.searcher().furnish(doc, f).map(Some),
                (_, f) => Ok(f),
            })
            .collect::<fpdb::Result<_>>()?;
        // Lookups are independent (nothing is written): all cores, then output in order.
        let looked: Vec<(&str, &fpdb::Fingerprints)> = chunk
            .iter()
            .zip(&fps)
            .filter_map(|(rec, f)| match (&rec.doc, f) {
                (Ok(doc), Some(f)) => Some((doc.id.as_str(), f)),
                _ => None,
            })
            .collect();
        let mut outcomes = db.searcher().query_many(&looked).into_iter();
        let found: Vec<Option<fpdb::Result<Outcome>>> = chunk
            .iter()
            .zip(&fps)
            .map(|(rec, f)| match (&rec.doc, f) {
                (Ok(_), Some(_)) => outcomes.next(),
                _ => None,
            })
            .collect();
        for (rec, o) in chunk.iter().zip(found) {
            records += 1;
            match (&rec.doc, o) {
                (Ok(doc), Some(o)) => {
                    let o = o?;
                    duplicates += u64::from(o.is_duplicate());
                    serde_json::to_writer(&mut out, &o.answer(Some(&doc.id)))
                        .map_err(super::to_stdout)?;
                    out.write_all(b"\n").map_err(super::to_stdout)?;
                }
                (Err(reason), _) => {
                    skipped += 1;
                    eprintln!("fpdb: skipped {}: {reason}", rec.location());
                    let line = OutputLine {
                        id: None,
                        similar_id: None,
                        duplicate_of: None,
                        previous_original: None,
                        composite_of: &[],
                        excerpt_of: None,
                        matches: &[],
                        status: "skipped",
                        reason: Some(reason),
                        source: Some(rec.location()),
                    };
                    serde_json::to_writer(&mut out, &line).map_err(super::to_stdout)?;
                    out.write_all(b"\n").map_err(super::to_stdout)?;
                }
                (Ok(_), None) => unreachable!("every readable document is fingerprinted"),
            }
        }
        out.flush().map_err(super::to_stdout)?;
    }
    if !quiet {
        eprintln!(
            "fpdb: {records} records looked up: {duplicates} duplicates of stored documents, {} new, {skipped} skipped",
            records - duplicates - skipped
        );
        if let Some(line) = super::output::lookup_line(&db.meters().lookups).filter(|_| verbose) {
            eprintln!("{line}");
        }
    }
    Ok(if skipped > 0 { EXIT_SKIPPED } else { EXIT_OK })
}

pub(super) fn query(path: &PathBuf, a: &QueryArgs) -> anyhow::Result<u8> {
    let mut doc = match (&a.text, &a.file) {
        (Some(t), None) if t == "-" => fpdb::Document::new("", read_stdin()?),
        (Some(t), None) => fpdb::Document::new("", t.clone()),
        (None, Some(f)) => read_one_document(
            f,
            a.input.read_options(),
            &format!("look them up with `fpdb query --batch {}`", f.display()),
        )?,
        (None, None) if !std::io::stdin().is_terminal() => fpdb::Document::new("", read_stdin()?),
        _ => bail!("no text: give TEXT, --file FILE, or pipe text into `fpdb query -`"),
    };
    if doc.text.trim().is_empty() {
        bail!("the text to query is empty");
    }
    if a.title.is_some() {
        doc.title = a.title.clone();
    }
    let db = open_read_only(path)?;
    // Fingerprinted as `ingest` would (a page's title and meta description feed the keys that
    // read them).
    let fps = db.searcher().furnish(
        &doc,
        db.fingerprinter().fingerprint_with(&doc.text, doc.meta()),
    )?;
    let o: Outcome = db.searcher().query("", &fps)?;
    if a.json {
        outln!("{}", serde_json::to_string(&o.answer(None))?);
    } else if let Some(id) = o.similar_id {
        outln!(
            "duplicate: similar_id {id} (original: {})",
            o.duplicate_of.as_deref().unwrap_or("?")
        );
        for m in &o.matches {
            match m.distance {
                Some(d) => outln!("  {}\t{}\tscore {:.3}\tdistance {d}", m.id, m.algo, m.score),
                None => outln!("  {}\t{}\tscore {:.3}", m.id, m.algo, m.score),
            }
        }
    } else {
        outln!("new: no stored document matches (it would get a fresh similar_id)");
    }
    Ok(if o.is_duplicate() { EXIT_OK } else { EXIT_NO })
}

/// The one document in `file`, read as `ingest` reads it (format, charset, HTML extraction);
/// `several` is what to do instead when it holds several (e.g. ``use `fpdb query --batch` ``).
pub(super) fn read_one_document(
    file: &Path,
    opts: ReadOptions,
    several: &str,
) -> anyhow::Result<fpdb::Document> {
    let mut records = Inputs::new(&[file.to_path_buf()], opts);
    let first = records
        .next()
        .with_context(|| format!("{}: no document in it", file.display()))?;
    if records.next().is_some() {
        bail!("{} holds several documents: {several}", file.display());
    }
    let location = first.location();
    match first.doc {
        Ok(doc) => Ok(doc),
        Err(reason) => bail!("{location}: {reason}"),
    }
}
