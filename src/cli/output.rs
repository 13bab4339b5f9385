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

/// Whether a file written at `path` would land inside the store directory `store` (or be it),
/// by name or, for a file that exists, by identity: a hard link elsewhere to one of the
/// store's files is that file.
pub(super) fn inside_store(path: &Path, store: &Path) -> bool {
    if fpdb::store::Location::parse(store).is_redis() {
        return false;
    }
    // A link is judged by what it names, even where that does not exist yet (a dangling link
    // into the store would make a new file there).
    if resolved(&followed(path)).starts_with(resolved(store)) {
        return true;
    }
    let Some(id) = fpdb::reader::file_id(path) else {
        return false;
    };
    // The store's files: its directory and one level below (RocksDB keeps them flat).
    let mut dirs = vec![(store.to_path_buf(), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(m) = e.metadata() else {
                continue;
            };
            if m.is_dir() {
                if depth < 1 {
                    dirs.push((e.path(), depth + 1));
                }
            } else if fpdb::reader::file_id(&e.path()) == Some(id) {
                return true;
            }
        }
    }
    false
}

/// (device, inode) of what an output names: stdout's file for `-`; `None` for a path that does
/// not exist yet.
fn output_id(p: &Path) -> Option<(u64, u64)> {
    if p.as_os_str() != "-" {
        return fpdb::reader::file_id(p);
    }
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let fd = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
        let m = std::fs::File::from(fd).metadata().ok()?;
        Some((m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    None
}

/// Whether `p` is the null device, which any number of outputs may share.
fn is_null_device(id: (u64, u64)) -> bool {
    fpdb::reader::file_id(Path::new("/dev/null")) == Some(id)
}

/// An output's path as messages name it: `-` is stdout.
pub(super) fn output_name(p: &Path) -> String {
    if p.as_os_str() == "-" {
        "stdout".to_string()
    } else {
        p.display().to_string()
    }
}

/// Refuse two outputs of one command (flag, path; `-` is stdout) that are one file, by device
/// and inode once it exists (`X`, `./X`, a link to it, `/dev/stdout` and `-`), by resolved name
/// before: both writers would truncate it and write at their own offsets. The null device is
/// the exception.
pub(super) fn check_distinct_outputs(outputs: &[(&str, &Path)]) -> anyhow::Result<()> {
    for (i, (fa, a)) in outputs.iter().enumerate() {
        for (fb, b) in &outputs[i + 1..] {
            let same = match (output_id(a), output_id(b)) {
                (Some(x), Some(y)) => x == y && !is_null_device(x),
                _ => {
                    a.as_os_str() == b.as_os_str()
                        || (a.as_os_str() != "-"
                            && b.as_os_str() != "-"
                            && resolved(a) == resolved(b))
                }
            };
            if same {
                bail!(
                    "{fa} {} and {fb} {} are the same file: both would write into it; send them to two files",
                    output_name(a),
                    output_name(b)
                );
            }
        }
    }
    Ok(())
}

/// Write `bytes` to `path` whole. A regular file (or a name not taken yet) is written through a
/// file beside it renamed over it: a reader never sees half a page, a failed write leaves the
/// old one, and the old file's permissions are kept. A symbolic link is followed: its target
/// is written. A device, FIFO or socket is written in place, never replaced (`-o /dev/null`
/// as root must not replace the system's null device). A directory is refused.
pub(super) fn write_whole(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_whole_with(path, &mut |w| w.write_all(bytes))
}

/// [`write_whole`] of what `write` writes (streamed, not held in memory).
pub(super) fn write_whole_with(
    path: &Path,
    write: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let target = followed(path);
    let old = std::fs::metadata(&target).ok();
    if let Some(m) = &old {
        if m.is_dir() {
            bail!("--output {} is a directory; name a file", path.display());
        }
        if !m.is_file() {
            let written = std::fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .and_then(|mut f| write(&mut f).and_then(|()| f.flush()));
            return written.with_context(|| format!("cannot write {}", path.display()));
        }
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .with_context(|| format!("--output {} names no file", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = (|| -> std::io::Result<()> {
        let mut open = std::fs::OpenOptions::new();
        open.write(true).create_new(true);
        #[cfg(unix)]
        if old.is_some() {
            // Never more open than the file it replaces, even for a moment.
            use std::os::unix::fs::OpenOptionsExt;
            open.mode(0o600);
        }
        let mut f = std::io::BufWriter::new(open.open(&tmp)?);
        write(&mut f)?;
        let f = f
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        if let Some(m) = &old {
            f.set_permissions(m.permissions())?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(())
}

/// `path` with symbolic links followed to what they name (which may not exist yet); at most
/// 40 links, as the kernel does.
fn followed(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => match std::fs::read_link(&p) {
                Ok(to) => {
                    p = match p.parent() {
                        Some(dir) => dir.join(to),
                        None => to,
                    };
                }
                Err(_) => return p,
            },
            _ => return p,
        }
    }
    p
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

/// The lines of an operator-given file (`-`: stdin), each at most `max_line` bytes: a file
/// that is not one of lines (`/dev/zero`, a binary dump) is refused at its first long line
/// with its place, not read into memory whole. Line ends (`\n`, `\r\n`) are removed; a line
/// that is not UTF-8 is refused.
pub(super) fn read_lines_capped(
    path: &Path,
    max_line: usize,
    what: &str,
) -> anyhow::Result<Vec<String>> {
    use std::io::BufRead;
    let name = path.display();
    let reader: Box<dyn std::io::Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(path).with_context(|| format!("cannot read {what} {name}"))?)
    };
    let mut reader = std::io::BufReader::new(reader);
    let mut lines = Vec::new();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(max_line as u64 + 2)
            .read_until(b'\n', &mut buf)
            .with_context(|| format!("cannot read {what} {name}"))?;
        if n == 0 {
            return Ok(lines);
        }
        let line_no = lines.len() + 1;
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        if buf.len() > max_line {
            bail!("{what} {name}, line {line_no}: over {max_line} bytes (is it a file of lines?)");
        }
        let line = String::from_utf8(std::mem::take(&mut buf))
            .map_err(|_| anyhow::anyhow!("{what} {name}, line {line_no}: not UTF-8"))?;
        lines.push(line);
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

/// Seconds since the Unix epoch as RFC 3339 in UTC (`2024-05-26T10:30:00Z`).
pub(super) fn rfc3339(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0).map_or_else(
        || t.to_string(),
        |d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    )
}

/// Unsigned seconds since the Unix epoch (an ingest time) as RFC 3339 in UTC.
pub(super) fn rfc3339_secs(t: u64) -> String {
    rfc3339(i64::try_from(t).unwrap_or(i64::MAX))
}
