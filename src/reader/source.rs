//! An input's decompressed bytes (gzip members and zstd frames one by one, a damaged one
//! reported once and passed over: [`super::gzip`], `super::zstd_frames`; plain), and going
//! back ([`Rewind`]): a record whose
//! length field lies (larger than what remains, or past the next record) is found out only
//! after its body was streamed past. A regular file can be read again from the body's start
//! ([`Source::rewind_to`]): plain files by a seek, gzip files from the last member start before
//! that point, so the next records are found by a scan. Stdin, pipes and zstd cannot go back:
//! there the rest of the input is lost, and said so.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

use super::gzip::{Members, GZIP_HEADER};
use super::zstd_frames::ZSTD_MAGIC;

/// An input that can be read again from an earlier point.
pub trait Rewind: BufRead {
    /// Bytes consumed so far.
    fn position(&self) -> u64;
    /// Go back to `at` (a position this input reported); false when this input cannot.
    fn rewind_to(&mut self, _at: u64) -> std::io::Result<bool> {
        Ok(false)
    }
}

impl Rewind for &[u8] {
    fn position(&self) -> u64 {
        0
    }
}

impl<T: AsRef<[u8]>> Rewind for std::io::Cursor<T> {
    fn position(&self) -> u64 {
        std::io::Cursor::position(self)
    }
    fn rewind_to(&mut self, at: u64) -> std::io::Result<bool> {
        self.set_position(at);
        Ok(true)
    }
}

impl Rewind for Box<dyn BufRead + Send> {
    fn position(&self) -> u64 {
        0
    }
}

/// What a [`Source`] decodes.
enum Inner {
    /// A regular file, not compressed: seekable.
    Plain(File),
    /// A regular gzip file: seekable through its member checkpoints.
    Gzip(Box<Members<BufReader<File>>>),
    /// Anything else (stdin, pipes, zstd): forward only.
    Stream(Box<dyn Read + Send>),
}

impl Read for Inner {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Inner::Plain(f) => f.read(buf),
            Inner::Gzip(m) => m.read(buf),
            Inner::Stream(r) => r.read(buf),
        }
    }
}

pub use super::zstd_frames::Unchecked;

/// Buffer of a [`Source`].
const BUFFER: usize = 1 << 16;

/// An input's decoded bytes, buffered, with their position; see the module documentation.
pub struct Source {
    buf: BufReader<Inner>,
    pos: u64,
    /// Damage met while its format was sniffed, given to the format's reader first.
    damage: Vec<std::io::Error>,
}

impl Source {
    /// A regular file, opened, decompressed as its first bytes say (gzip: damage-tolerant and
    /// seekable; zstd: forward only).
    pub fn file(path: &std::path::Path) -> std::io::Result<Self> {
        Self::file_counted(path, &Unchecked::default())
    }

    /// [`Source::file`], counting in `unchecked` the zstd frames it decodes that carry no
    /// checksum.
    pub fn file_counted(path: &std::path::Path, unchecked: &Unchecked) -> std::io::Result<Self> {
        let mut f = File::open(path)?;
        if !f.metadata()?.is_file() {
            // FIFOs, devices: read forward, as stdin is.
            return Self::stream_counted(Box::new(f), unchecked);
        }
        let mut head = [0u8; 4];
        let mut n = 0;
        while n < head.len() {
            match f.read(&mut head[n..])? {
                0 => break,
                k => n += k,
            }
        }
        f.seek(SeekFrom::Start(0))?;
        let head = &head[..n];
        let inner = if head.starts_with(&GZIP_HEADER[..2]) {
            Inner::Gzip(Box::new(Members::file(BufReader::with_capacity(BUFFER, f))))
        } else if super::zstd_frames::starts_zstd(head) {
            Inner::Stream(Box::new(
                super::zstd_frames::Frames::file(BufReader::with_capacity(BUFFER, f))
                    .counting(unchecked.clone()),
            ))
        } else {
            Inner::Plain(f)
        };
        Ok(Self::of(inner))
    }

    /// A forward-only input (stdin, a pipe), decompressed as its first bytes say.
    pub fn stream(raw: Box<dyn Read + Send>) -> std::io::Result<Self> {
        Self::stream_counted(raw, &Unchecked::default())
    }

    /// [`Source::stream`], counting in `unchecked` the zstd frames without a checksum.
    pub fn stream_counted(
        raw: Box<dyn Read + Send>,
        unchecked: &Unchecked,
    ) -> std::io::Result<Self> {
        Ok(Self::of(Inner::Stream(decoded(raw, unchecked)?)))
    }

    fn of(inner: Inner) -> Self {
        Source {
            buf: BufReader::with_capacity(BUFFER, inner),
            pos: 0,
            damage: Vec::new(),
        }
    }

    /// The first decoded bytes, past damaged members or frames (kept to be reported, in order,
    /// by the next reads), for sniffing the format.
    pub(super) fn sniff_head(&mut self) -> std::io::Result<&[u8]> {
        loop {
            match self.buf.fill_buf() {
                Err(e) if super::gzip::is_damage(&e) => self.damage.push(e),
                _ => break,
            }
        }
        self.buf.fill_buf()
    }
}

impl Read for Source {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if !self.damage.is_empty() {
            return Err(self.damage.remove(0));
        }
        let n = self.buf.read(out)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl BufRead for Source {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if !self.damage.is_empty() {
            return Err(self.damage.remove(0));
        }
        self.buf.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.pos += amt as u64;
        self.buf.consume(amt);
    }
}

impl Rewind for Source {
    fn position(&self) -> u64 {
        self.pos
    }

    fn rewind_to(&mut self, at: u64) -> std::io::Result<bool> {
        match self.buf.get_mut() {
            Inner::Plain(f) => {
                f.seek(SeekFrom::Start(at))?;
            }
            Inner::Gzip(m) => {
                if !m.rewind_to(at)? {
                    return Ok(false);
                }
            }
            Inner::Stream(_) => return Ok(false),
        }
        // The buffered bytes belong to the old position.
        let inner = std::mem::replace(
            &mut self.buf,
            BufReader::new(Inner::Stream(Box::new(std::io::empty()))),
        )
        .into_inner();
        self.buf = BufReader::with_capacity(BUFFER, inner);
        self.pos = at;
        Ok(true)
    }
}

/// Gzip's first two bytes.
const GZIP_MAGIC: &[u8] = b"\x1f\x8b";

/// `raw` decompressed as its first bytes say (gzip, any number of members, a damaged one
/// reported and passed over: [`Members`]; zstd), else as is.
/// The file name is not asked: a gzip file without `.gz` is read, a `.gz` file that is not
/// gzip is read as it is.
/// The most bytes of an uncompressed stream read ahead for sniffing its format.
const SNIFF: usize = 4096;

/// Whether `head` holds a whole line with something other than white space in it.
fn first_line_done(head: &[u8]) -> bool {
    head.iter()
        .position(|c| !c.is_ascii_whitespace())
        .is_some_and(|start| head[start..].contains(&b'\n'))
}

pub(super) fn decoded(
    mut raw: Box<dyn Read + Send>,
    unchecked: &Unchecked,
) -> std::io::Result<Box<dyn Read + Send>> {
    // The first bytes, read until there are enough or the input ends (a pipe may deliver
    // them in pieces), then put back in front of the rest.
    let mut head = Vec::with_capacity(ZSTD_MAGIC.len());
    while head.len() < ZSTD_MAGIC.len() {
        let mut byte = [0u8; 4];
        let want = ZSTD_MAGIC.len() - head.len();
        match raw.read(&mut byte[..want]) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&byte[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let gzip = head.starts_with(GZIP_MAGIC);
    let zstd = super::zstd_frames::starts_zstd(&head);
    if !gzip && !zstd {
        // Uncompressed: the format is sniffed from the first buffer the reader fills, which
        // is this head: read on to the end of its first line with content (a WARC version
        // line, a CSV header, a JSON object's start), at most SNIFF bytes, so that a pipe
        // that delivered "WARC" alone is not taken for JSONL.
        let mut chunk = [0u8; 512];
        while head.len() < SNIFF && !first_line_done(&head) {
            let want = chunk.len().min(SNIFF - head.len());
            match raw.read(&mut chunk[..want]) {
                Ok(0) => break,
                Ok(n) => head.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
    let whole = std::io::Cursor::new(head).chain(raw);
    Ok(if gzip {
        Box::new(Members::new(BufReader::new(whole)))
    } else if zstd {
        Box::new(super::zstd_frames::Frames::new(BufReader::new(whole)).counting(unchecked.clone()))
    } else {
        Box::new(whole)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn a_gzip_file_rewinds_to_any_earlier_position() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.gz");
        let mut data = Vec::new();
        let mut plain = Vec::new();
        for i in 0..50 {
            let part = format!("record {i}\n").repeat(1000);
            data.extend(gz(part.as_bytes()));
            plain.extend_from_slice(part.as_bytes());
        }
        std::fs::write(&path, &data).unwrap();
        let mut s = Source::file(&path).unwrap();
        let mut all = Vec::new();
        s.read_to_end(&mut all).unwrap();
        assert_eq!(all, plain);
        for at in [0u64, 5, 123_456, plain.len() as u64 - 3] {
            assert!(s.rewind_to(at).unwrap());
            let mut rest = Vec::new();
            s.read_to_end(&mut rest).unwrap();
            assert_eq!(rest, &plain[at as usize..], "from {at}");
        }
    }
}
