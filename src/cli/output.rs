//! Shared output plumbing: stdout writes that return errors, `--output` files, ids in text
//! output, read-only opens, and the exit codes.

use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;

use anyhow::{bail, Context};

use fpdb::Fpdb;

/// Exit code: success (`query`: a duplicate was found; `explain`: linked).
pub(super) const EXIT_OK: u8 = 0;
/// Exit code: `query` found no duplicate (`explain`: not linked).
pub(super) const EXIT_NO: u8 = 1;
/// Exit code: the run finished but skipped some inputs.
pub(super) const EXIT_SKIPPED: u8 = 3;

pub(super) fn open_read_only(path: &PathBuf) -> anyhow::Result<Fpdb> {
    Ok(Fpdb::builder().read_only(true).open(path)?)
}

pub(super) fn output_writer(path: &Option<PathBuf>) -> anyhow::Result<Option<Box<dyn Write>>> {
    Ok(match path {
        None => None,
        Some(p) if p.as_os_str() == "-" => Some(Box::new(BufWriter::new(std::io::stdout().lock()))),
        Some(p) => Some(Box::new(BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        ))),
    })
}

/// Refuse an `--output` file that is also an input: creating it would empty the input before
/// it is read.
pub(super) fn check_output_not_input(
    output: &Option<PathBuf>,
    inputs: &[PathBuf],
) -> anyhow::Result<()> {
    let Some(o) = output.as_ref().filter(|o| o.as_os_str() != "-") else {
        return Ok(());
    };
    let Some(out_id) = fpdb::reader::file_id(o) else {
        return Ok(());
    };
    for i in inputs.iter().filter(|i| i.as_os_str() != "-") {
        if fpdb::reader::file_id(i) == Some(out_id) {
            bail!(
                "--output {} is also an input ({}): it would be emptied before it is read; write the results elsewhere",
                o.display(),
                i.display()
            );
        }
    }
    Ok(())
}

/// One line of `ingest --output`.
pub(super) use fpdb::ResultLine as OutputLine;

/// An id for a line of text output: control characters (a newline would forge a line; such
/// ids are refused at input, but older stores may hold them) escaped.
pub(super) fn shown(id: &str) -> std::borrow::Cow<'_, str> {
    if id.chars().any(char::is_control) {
        id.escape_debug().to_string().into()
    } else {
        id.into()
    }
}

pub(super) fn read_stdin() -> anyhow::Result<String> {
    let mut s = String::new();
    std::io::stdin()
        .read_to_string(&mut s)
        .context("reading stdin")?;
    Ok(s)
}

/// The lookups' reading per looked-up document, for the summary on stderr (None when nothing
/// was looked up): what a lookup costs and why it grows with the store.
pub(super) fn lookup_line(s: &fpdb::LookupStats) -> Option<String> {
    if s.lookups == 0 {
        return None;
    }
    let per = |n: u64| n as f64 / s.lookups as f64;
    Some(format!(
        "fpdb: per document looked up: {:.2} postings found, {:.1} simhash entries scanned, \
         {:.2} simhash candidates, {:.2} records read to verify, {:.2} candidates verified",
        per(s.postings_found),
        per(s.simhash_scanned),
        per(s.simhash_candidates),
        per(s.records_read),
        per(s.verified)
    ))
}
