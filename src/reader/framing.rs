//! What WARC and ARC readers share: records framed by a start line and a length, read one at
//! a time from an input that may hold damage. A record that cannot be read is reported and
//! reading resumes at the next line that starts a record ([`Framing::start`]); a damaged gzip
//! member costs the record it is in (met after a complete record, the next one); any other
//! read error ends the input. The formats differ only in their start line and header, and in
//! how a record's end is checked (`warc.rs`, `arc.rs`). Lines and bodies are read here in
//! bounded memory: a line keeps at most 64 KiB, a body is read only when wanted and not over
//! the limit, and streamed past otherwise.

use std::io::{BufRead, Read};

use super::gzip::is_damage;
use super::source::Rewind;

/// Longest line kept (longer ones are corrupt); also bounds the resync scan's memory.
const MAX_LINE: usize = 64 * 1024;

/// What happened to a record's body.
#[derive(Debug)]
pub enum Body {
    /// Read.
    Read(Vec<u8>),
    /// Not wanted: streamed past.
    Skipped,
    /// Wanted but over the limit: its first [`HEAD`] bytes kept (enough for an HTTP header),
    /// the rest streamed past.
    TooLarge(Vec<u8>),
}

/// Bytes kept of a body over the limit.
pub const HEAD: usize = 64 * 1024;

/// Why a record body could not be read.
pub(super) enum BodyError {
    /// The input failed.
    Io(std::io::Error),
    /// The input ended `after` bytes into the body.
    Truncated { after: u64 },
}

/// Read a record body of `len` bytes: all of it when `wanted` and not over `max`, its first
/// [`HEAD`] bytes when wanted and over (enough for an HTTP header), nothing otherwise; the rest
/// is streamed past, so memory stays bounded whatever `len` says. (WARC and ARC records.)
pub(super) fn read_body(
    reader: &mut impl BufRead,
    len: u64,
    wanted: bool,
    max: usize,
) -> Result<Body, BodyError> {
    let fits = len <= max as u64;
    let keep = match (wanted, fits) {
        (false, _) => 0,
        (true, true) => len,
        (true, false) => len.min(HEAD as u64),
    };
    let mut kept = Vec::with_capacity(keep as usize);
    let rest = reader
        .take(keep)
        .read_to_end(&mut kept)
        .and_then(|_| std::io::copy(&mut reader.take(len - keep), &mut std::io::sink()))
        .map_err(BodyError::Io)?;
    let after = kept.len() as u64 + rest;
    if after < len {
        return Err(BodyError::Truncated { after });
    }
    Ok(match (wanted, fits) {
        (false, _) => Body::Skipped,
        (true, true) => Body::Read(kept),
        (true, false) => Body::TooLarge(kept),
    })
}

/// Read one line (up to and including `\n`) into `line`, keeping at most [`MAX_LINE`] bytes.
/// Returns the bytes consumed (0 at end of input) and whether the line was cut.
pub(super) fn read_line(
    r: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> std::io::Result<(usize, bool)> {
    line.clear();
    let (mut consumed, mut cut) = (0, false);
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok((consumed, cut));
        }
        let (take, end) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = MAX_LINE.saturating_sub(line.len());
        line.extend_from_slice(&buf[..take.min(room)]);
        cut |= take > room;
        r.consume(take);
        consumed += take;
        if end {
            return Ok((consumed, cut));
        }
    }
}

/// The next line of `r` that is not blank (records of WARC and ARC files may be separated by
/// blank lines), into `line`: whether it was cut, or None at the end of input.
pub(super) fn next_nonblank_line(
    r: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> std::io::Result<Option<bool>> {
    loop {
        match read_line(r, line)? {
            (0, _) => return Ok(None),
            _ if trim_eol(line).is_empty() => continue,
            (_, cut) => return Ok(Some(cut)),
        }
    }
}

pub(super) fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// A format's start line: what a line that starts a record is read as (`WARC/1.0`, an ARC
/// header line), or None for a line that starts none.
pub(super) trait Framing {
    /// What the start line gives the record it starts.
    type Start;

    /// `line` (without its end) as the start of a record.
    fn start(line: &[u8]) -> Option<Self::Start>;
}

/// The state of a framed input: the reader, a start line found while resynchronizing, damage
/// met after a complete record, and whether the input is done.
pub(super) struct Framed<R, F: Framing> {
    pub(super) reader: R,
    /// A start line found while resynchronizing, to begin the next record with.
    pub(super) pending: Option<F::Start>,
    /// What was found after a complete record (a damaged gzip member, a line that starts no
    /// record): the next call reports it.
    pub(super) damage: Option<String>,
    pub(super) done: bool,
}

impl<R: Rewind, F: Framing> Framed<R, F> {
    pub(super) fn new(reader: R) -> Self {
        Framed {
            reader,
            pending: None,
            damage: None,
            done: false,
        }
    }

    /// Skip to the next line that starts a record and keep it for the next one.
    pub(super) fn resync(&mut self) -> std::io::Result<()> {
        let mut line = Vec::new();
        loop {
            let (n, _) = match read_line(&mut self.reader, &mut line) {
                // Another damaged member: a record of its own lost (reported next), and the
                // scan goes on after it.
                Err(e) if is_damage(&e) => {
                    self.damage = Some(e.to_string());
                    return Ok(());
                }
                other => other?,
            };
            if n == 0 {
                self.done = true;
                return Ok(());
            }
            if let Some(s) = F::start(trim_eol(&line)) {
                self.pending = Some(s);
                return Ok(());
            }
        }
    }

    /// Report `reason` and end: the input cannot be read further.
    pub(super) fn fail<T>(&mut self, reason: String) -> Option<Result<T, String>> {
        self.done = true;
        Some(Err(reason))
    }

    /// Read no more of this input.
    pub(super) fn stop(&mut self) {
        self.done = true;
        self.pending = None;
    }

    /// Report `reason` for the current record and resynchronize on the next one.
    pub(super) fn corrupt<T>(&mut self, reason: String) -> Option<Result<T, String>> {
        if let Err(e) = self.resync() {
            return self.fail(format!("{reason}; then: {e}"));
        }
        Some(Err(reason))
    }

    /// A read error: a damaged gzip member is this record's loss only (the input goes on with
    /// the next member); any other error ends the input.
    pub(super) fn read_failed<T>(&mut self, e: std::io::Error) -> Option<Result<T, String>> {
        if is_damage(&e) {
            self.corrupt(e.to_string())
        } else {
            self.fail(format!("read error: {e}"))
        }
    }

    /// The record whose body started at `body` was framed wrong (`reason`): read again from
    /// its body to find the next record, when the input can go back (a length that lies: the
    /// records after it are still there); else resynchronize from here.
    pub(super) fn misframed<T>(&mut self, body: u64, reason: String) -> Option<Result<T, String>> {
        match self.reader.rewind_to(body) {
            Ok(true) => {
                self.done = false;
                self.corrupt(reason)
            }
            Ok(false) => self.corrupt(reason),
            Err(e) => self.fail(format!("{reason}; then: {e}")),
        }
    }
}

/// A WARC or ARC input being read (`warc_docs.rs`, `arc.rs`): its records (`R`, the format's
/// framing over the input) and what was met so far.
pub(super) struct Archive<R> {
    pub(super) source: String,
    pub(super) records: R,
    /// Records read so far.
    pub(super) n: u64,
    /// Corrupt records met so far.
    pub(super) errors: u32,
}

impl<R> Archive<R> {
    /// `records` of the input named `source`, none read yet.
    pub(super) fn new(source: String, records: R) -> Self {
        Archive {
            source,
            records,
            n: 0,
            errors: 0,
        }
    }
}
