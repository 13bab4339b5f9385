//! `fpdb idf`: learn an IDF table from a corpus.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;

use fpdb::reader::Inputs;

use super::args::InputArgs;
use super::output::{check_output_not_input, check_outside_store, EXIT_OK, EXIT_SKIPPED};

#[derive(Args, Debug)]
pub(super) struct IdfArgs {
    /// Input files or directories; `-` or nothing reads stdin
    pub(super) files: Vec<PathBuf>,
    /// Write the table here [default: stdout]
    #[arg(short, long, value_name = "FILE")]
    pub(super) output: Option<PathBuf>,
    /// Learn from at most this many documents
    #[arg(long)]
    pub(super) limit: Option<usize>,
    /// Prepare text as a store with this `--t2s` setting does [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    t2s: Option<bool>,
    /// Prepare text as a store with this `--tw-phrases` setting does [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    tw_phrases: Option<bool>,
    /// Prepare text as a store with this `--reflow` setting does [default: true]
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub(super) reflow: Option<bool>,
    #[command(flatten)]
    pub(super) input: InputArgs,
}

pub(super) fn idf(store: &Path, a: &IdfArgs, quiet: bool) -> anyhow::Result<u8> {
    // `idf` opens no store, but a table written over a store's file (`-o fpdb.db/CURRENT`)
    // would destroy that store.
    check_outside_store("--output", a.output.as_deref(), store)?;
    // The table would replace its corpus.
    check_output_not_input(&a.output, &a.files)?;
    let mut files = a.files.clone();
    if files.is_empty() {
        if std::io::stdin().is_terminal() {
            bail!("no input: give files or directories, or pipe JSONL into `fpdb idf -`");
        }
        files.push(PathBuf::from("-"));
    }
    let defaults = fpdb::Options::default();
    let opts = fpdb::Options {
        t2s: a.t2s.unwrap_or(defaults.t2s),
        tw_phrases: a.tw_phrases.unwrap_or(defaults.tw_phrases),
        reflow: a.reflow.unwrap_or(defaults.reflow),
        ..defaults
    };
    // Words are counted in the text exactly as the store will cut it.
    let fp = fpdb::fingerprint::Fingerprinter::new(opts, None)?;
    let mut bad = 0u64;
    let mut inputs = Inputs::new(&files, a.input.read_options());
    if let Some(o) = a.output.as_ref().filter(|o| o.as_os_str() != "-") {
        inputs = inputs.exclude(o);
    }
    let texts = inputs
        .filter_map(|rec| match rec.doc {
            Ok(d) => Some(fp.prepare(&d.text)),
            Err(ref reason) => {
                bad += 1;
                eprintln!("fpdb: skipped {}: {reason}", rec.location());
                None
            }
        })
        .take(a.limit.unwrap_or(usize::MAX));
    let table = fpdb::text::IdfTable::learn(texts);
    if table.is_empty() {
        bail!("no words learned: the input has no documents with text");
    }
    let text = table.to_text();
    match &a.output {
        None => std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(super::to_stdout)?,
        Some(p) => {
            std::fs::write(p, &text).with_context(|| format!("cannot write {}", p.display()))?;
        }
    }
    if !quiet {
        eprintln!(
            "fpdb: learned IDF of {} words from {} documents{}",
            table.len(),
            table.docs(),
            a.output
                .as_ref()
                .map_or(String::new(), |p| format!(" -> {}", p.display()))
        );
    }
    Ok(if bad > 0 { EXIT_SKIPPED } else { EXIT_OK })
}
