//! Shared output plumbing: stdout writes that return errors, `--output` files, ids in text
//! output, read-only opens, and the exit codes.

use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use fpdb::Fpdb;

/// Exit code: success (`query`: a duplicate was found; `explain`: linked).
pub(super) const EXIT_OK: u8 = 0;
/// Exit code: `query` found no duplicate (`explain`: not linked).
pub(super) const EXIT_NO: u8 = 1;
/// Exit code: the run finished but skipped some inputs.
pub(super) const EXIT_SKIPPED: u8 = 3;
/// Exit code: an error (also what `main` returns for an `Err`).
pub(super) const EXIT_ERROR: u8 = 2;

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

/// `path` made absolute with every directory that exists resolved (symbolic links, `..`), the
/// part that does not exist yet appended as written: where a file created at `path` would be.
fn resolved(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    let mut at = absolute.as_path();
    loop {
        if let Ok(p) = std::fs::canonicalize(at) {
            return rest.iter().rev().fold(p, |p, part| p.join(part));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return absolute,
        }
    }
}

/// Whether a file written at `path` would land inside the store directory `store` (or be it).
pub(super) fn inside_store(path: &Path, store: &Path) -> bool {
    if fpdb::store::redis::RedisUrl::is_redis(&store.to_string_lossy()) {
        return false;
    }
    resolved(path).starts_with(resolved(store))
}

/// Refuse a file this command would write (`what`: `--output`, the backup directory, ...)
/// inside the store directory: it would overwrite or add to the store's own files (`CURRENT`,
/// `MANIFEST-*`, table files) and destroy the store.
pub(super) fn check_outside_store(
    what: &str,
    path: Option<&Path>,
    store: &Path,
) -> anyhow::Result<()> {
    let Some(p) = path.filter(|p| p.as_os_str() != "-") else {
        return Ok(());
    };
    if inside_store(p, store) {
        bail!(
            "{what} {} is inside the store directory {}: writing there would damage the store; \
             choose a path outside it",
            p.display(),
            store.display()
        );
    }
    Ok(())
}

/// Refuse, before anything is created, an `--output` that cannot be written, without changing
/// it: the file itself is created (emptied) only once the store's lock is held.
pub(super) fn check_output_writable(path: &Option<PathBuf>) -> anyhow::Result<()> {
    let Some(p) = path.as_ref().filter(|p| p.as_os_str() != "-") else {
        return Ok(());
    };
    let probe = if p.exists() {
        std::fs::OpenOptions::new().append(true).open(p).map(drop)
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(p)
            .and_then(|_| std::fs::remove_file(p))
    };
    probe.with_context(|| format!("cannot create {}", p.display()))
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
