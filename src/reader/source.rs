//! An input's decompressed bytes, with the two things the archive readers need to survive
//! damage:
//!
//! - **Gzip members one after another** ([`Members`]), as `MultiGzDecoder` reads them, except
//!   that a damaged member does not end the input: its error is reported once (a [`Damaged`]
//!   `io::Error`), the compressed bytes up to the next member header are skipped, and reading
//!   goes on there. WARC and ARC writers put each record in a member of its own, so one flipped
//!   byte costs one record, not the rest of the file.
//! - **Going back** ([`Rewind`]): a record whose length field lies (larger than what remains,
//!   or past the next record) is found out only after its body was streamed past. A regular
//!   file can be read again from the body's start ([`Source::rewind_to`]): plain files by a
//!   seek, gzip files from the last member start before that point (checkpoints every
//!   [`CHECKPOINT_EVERY`] decoded bytes), so the next records are found by a scan. Stdin, pipes
//!   and zstd cannot go back: there the rest of the input is lost, and said so.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

/// Gzip's member header: magic and the deflate method.
const GZIP_HEADER: [u8; 3] = [0x1f, 0x8b, 0x08];

/// Decoded bytes between two kept member checkpoints.
pub const CHECKPOINT_EVERY: u64 = 4 << 20;

/// The error a damaged gzip member reports once (reading goes on at the next member).
#[derive(Debug)]
pub struct Damaged {
    /// What the decoder said.
    pub error: String,
    /// Compressed bytes passed over to reach the next member (or the end).
    pub skipped: u64,
}

impl std::fmt::Display for Damaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "damaged gzip member ({}); {} compressed bytes skipped to the next member",
            self.error, self.skipped
        )
    }
}

impl std::error::Error for Damaged {}

/// Whether `e` is a damaged member's report: the input goes on after it.
pub fn is_damage(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(
        <dyn std::error::Error + std::marker::Send + std::marker::Sync + 'static>::is::<Damaged>,
    )
}

/// Gzip members of `R`, decoded one after another; see the module documentation.
pub struct Members<R: BufRead> {
    decoder: Option<flate2::bufread::GzDecoder<Counted<R>>>,
    /// The compressed reader once the input ended (kept to go back in it).
    ended: Option<Counted<R>>,
    /// Decoded bytes produced so far.
    decoded: u64,
    /// (compressed offset, decoded offset) of member starts, one per [`CHECKPOINT_EVERY`].
    checkpoints: Vec<(u64, u64)>,
    /// Compressed offset of the current member's start.
    member_at: u64,
}

/// Compressed bytes of a member kept to look for the next member inside them after damage.
const TAPE: usize = 1 << 20;

/// The compressed reader under [`Members`]: counts the bytes consumed (the compressed offset),
/// keeps the current member's first [`TAPE`] bytes, and can read some of them again.
pub struct Counted<R> {
    inner: R,
    at: u64,
    /// The current member's bytes consumed so far, while under [`TAPE`] (else empty, and
    /// `taping` false).
    tape: Vec<u8>,
    taping: bool,
    /// Bytes to read again before `inner`, from `replay_at`.
    replay: Vec<u8>,
    replay_at: usize,
}

impl<R: BufRead> Counted<R> {
    fn new(inner: R, at: u64) -> Self {
        Counted {
            inner,
            at,
            tape: Vec::new(),
            taping: false,
            replay: Vec::new(),
            replay_at: 0,
        }
    }

    /// A member starts here: tape it.
    fn start_tape(&mut self) {
        self.tape.clear();
        self.taping = true;
    }
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let have = self.fill_buf()?;
            let n = have.len().min(buf.len());
            buf[..n].copy_from_slice(&have[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.replay_at < self.replay.len() {
            if self.replay.len() - self.replay_at < GZIP_HEADER.len() {
                // A header may start in the last bytes read again: join the next ones to them.
                let more = self.inner.fill_buf()?;
                let take = more.len().min(64);
                self.replay.extend_from_slice(&more[..take]);
                self.inner.consume(take);
            }
            return Ok(&self.replay[self.replay_at..]);
        }
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.at += amt as u64;
        let from_replay = self.replay_at < self.replay.len();
        if self.taping {
            if self.tape.len() + amt > TAPE {
                self.taping = false;
                self.tape = Vec::new();
            } else if from_replay {
                let end = self.replay_at + amt;
                self.tape
                    .extend_from_slice(&self.replay[self.replay_at..end]);
            } else if let Ok(buf) = self.inner.fill_buf() {
                // Already buffered: no read happens here.
                self.tape.extend_from_slice(&buf[..amt.min(buf.len())]);
            }
        }
        if from_replay {
            self.replay_at += amt;
            if self.replay_at >= self.replay.len() {
                self.replay.clear();
                self.replay_at = 0;
            }
        } else {
            self.inner.consume(amt);
        }
    }
}

impl<R: BufRead> Members<R> {
    /// Members of `raw`, positioned at a member header.
    pub fn new(raw: R) -> Self {
        Self::starting(Counted::new(raw, 0), 0)
    }

    fn starting(raw: Counted<R>, decoded: u64) -> Self {
        let mut m = Members {
            decoder: None,
            ended: None,
            decoded,
            checkpoints: Vec::new(),
            member_at: raw.at,
        };
        m.start(raw);
        m
    }

    /// Start the member at the current position of `raw` (none at the end of input).
    fn start(&mut self, mut raw: Counted<R>) {
        if raw.fill_buf().is_ok_and(<[u8]>::is_empty) {
            self.decoder = None;
            self.ended = Some(raw);
            return;
        }
        if self
            .checkpoints
            .last()
            .is_none_or(|&(_, d)| self.decoded >= d + CHECKPOINT_EVERY)
        {
            self.checkpoints.push((raw.at, self.decoded));
        }
        raw.start_tape();
        self.member_at = raw.at;
        self.decoder = Some(flate2::bufread::GzDecoder::new(raw));
    }

    /// Skip `raw` to the next member header (or its end); the bytes passed over.
    fn skip_to_header(raw: &mut Counted<R>) -> std::io::Result<u64> {
        let mut skipped = 0u64;
        loop {
            let buf = raw.fill_buf()?;
            if buf.is_empty() {
                return Ok(skipped);
            }
            // A header may straddle two buffers: keep the last two bytes unless they cannot
            // start one.
            let found = buf
                .windows(GZIP_HEADER.len())
                .position(|w| w == GZIP_HEADER);
            if let Some(i) = found {
                raw.consume(i);
                return Ok(skipped + i as u64);
            }
            let keep = if buf.len() >= 2 && buf[buf.len() - 2..] == GZIP_HEADER[..2] {
                2
            } else if buf.last() == Some(&GZIP_HEADER[0]) {
                1
            } else {
                0
            };
            let n = buf.len() - keep;
            if n == 0 {
                // Only a partial header is left and no more bytes come: the end.
                let n = buf.len();
                raw.consume(n);
                return Ok(skipped + n as u64);
            }
            raw.consume(n);
            skipped += n as u64;
        }
    }

    /// The compressed reader, taken out (for seeking it).
    fn take_raw(&mut self) -> Option<Counted<R>> {
        match self.decoder.take() {
            Some(d) => Some(d.into_inner()),
            None => self.ended.take(),
        }
    }
}

impl<R: BufRead> Read for Members<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let Some(decoder) = self.decoder.as_mut() else {
                return Ok(0);
            };
            match decoder.read(buf) {
                Ok(0) if !buf.is_empty() => {
                    // The member ended: the next one, if any.
                    let raw = self.decoder.take().expect("decoder").into_inner();
                    self.start(raw);
                }
                Ok(n) => {
                    self.decoded += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let mut raw = self.decoder.take().expect("decoder").into_inner();
                    // Not a read error of the file itself: the member's bytes are bad. A damaged
                    // deflate stream may have run on into the next members (a stored block's
                    // length read from damaged bytes), so the next header is looked for from
                    // the damaged member's second byte: in its tape, read again from there.
                    let skipped = if raw.taping && !raw.tape.is_empty() {
                        // Read the member again from its second byte, then on.
                        let mut again = std::mem::take(&mut raw.tape);
                        again.drain(..1);
                        let pending = raw.replay.len() - raw.replay_at;
                        again.extend_from_slice(&raw.replay[raw.replay_at..]);
                        raw.at -= (again.len() - pending) as u64;
                        raw.replay = again;
                        raw.replay_at = 0;
                        raw.taping = false;
                        1 + Self::skip_to_header(&mut raw)?
                    } else if raw.at > self.member_at {
                        // Past the tape's reach: the next header is here or further.
                        Self::skip_to_header(&mut raw)?
                    } else if raw.fill_buf().is_ok_and(|b| !b.is_empty()) {
                        // A bad header at this very byte: skip it, so that it is not read
                        // again.
                        raw.consume(1);
                        1 + Self::skip_to_header(&mut raw)?
                    } else {
                        0
                    };
                    self.start(raw);
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        Damaged {
                            error: e.to_string(),
                            skipped,
                        },
                    ));
                }
            }
        }
    }
}

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

/// Buffer of a [`Source`].
const BUFFER: usize = 1 << 16;

/// An input's decoded bytes, buffered, with their position; see the module documentation.
pub struct Source {
    buf: BufReader<Inner>,
    pos: u64,
}

impl Source {
    /// A regular file, opened, decompressed as its first bytes say (gzip: damage-tolerant and
    /// seekable; zstd: forward only).
    pub fn file(path: &std::path::Path) -> std::io::Result<Self> {
        let mut f = File::open(path)?;
        if !f.metadata()?.is_file() {
            // FIFOs, devices: read forward, as stdin is.
            return Self::stream(Box::new(f));
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
            Inner::Gzip(Box::new(Members::new(BufReader::with_capacity(BUFFER, f))))
        } else if head.starts_with(ZSTD_MAGIC) {
            Inner::Stream(Box::new(zstd::stream::read::Decoder::new(f)?))
        } else {
            Inner::Plain(f)
        };
        Ok(Self::of(inner))
    }

    /// A forward-only input (stdin, a pipe), decompressed as its first bytes say.
    pub fn stream(raw: Box<dyn Read + Send>) -> std::io::Result<Self> {
        Ok(Self::of(Inner::Stream(decoded(raw)?)))
    }

    fn of(inner: Inner) -> Self {
        Source {
            buf: BufReader::with_capacity(BUFFER, inner),
            pos: 0,
        }
    }
}

impl Read for Source {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.buf.read(out)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl BufRead for Source {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
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
                let Some(&(raw_at, decoded_at)) =
                    m.checkpoints.iter().rev().find(|&&(_, d)| d <= at)
                else {
                    return Ok(false);
                };
                let checkpoints = std::mem::take(&mut m.checkpoints);
                let Some(mut raw) = m.take_raw() else {
                    return Ok(false);
                };
                raw.inner.seek(SeekFrom::Start(raw_at))?;
                raw.at = raw_at;
                raw.replay.clear();
                raw.replay_at = 0;
                **m = Members::starting(raw, decoded_at);
                // Checkpoints before this one stay valid.
                m.checkpoints = checkpoints
                    .into_iter()
                    .filter(|&(_, d)| d <= decoded_at)
                    .collect();
                // Decode up to `at` again.
                let mut skip = at - decoded_at;
                let mut scratch = vec![0u8; BUFFER];
                while skip > 0 {
                    let want = skip.min(scratch.len() as u64) as usize;
                    match m.read(&mut scratch[..want]) {
                        Ok(0) => return Ok(false),
                        Ok(n) => skip -= n as u64,
                        Err(e) if is_damage(&e) => return Ok(false),
                        Err(e) => return Err(e),
                    }
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
/// Zstandard's frame magic number.
pub(super) const ZSTD_MAGIC: &[u8] = b"\x28\xb5\x2f\xfd";

/// `raw` decompressed as its first bytes say (gzip, any number of members, a damaged one
/// reported and passed over: [`Members`]; zstd), else as is.
/// The file name is not asked: a gzip file without `.gz` is read, a `.gz` file that is not
/// gzip is read as it is.
pub(super) fn decoded(mut raw: Box<dyn Read + Send>) -> std::io::Result<Box<dyn Read + Send>> {
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
    let zstd = head.starts_with(ZSTD_MAGIC);
    let whole = std::io::Cursor::new(head).chain(raw);
    Ok(if gzip {
        Box::new(Members::new(BufReader::new(whole)))
    } else if zstd {
        Box::new(zstd::stream::read::Decoder::new(whole)?)
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

    /// Everything readable, with the damage reports in between.
    fn read_all(mut r: impl Read) -> (Vec<u8>, usize) {
        let (mut out, mut damaged) = (Vec::new(), 0);
        let mut buf = [0u8; 7];
        loop {
            match r.read(&mut buf) {
                Ok(0) => return (out, damaged),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if is_damage(&e) => damaged += 1,
                Err(e) => panic!("{e}"),
            }
        }
    }

    #[test]
    fn members_read_as_one_stream() {
        let mut data = gz(b"one ");
        data.extend(gz(b"two "));
        data.extend(gz(b"three"));
        let (out, damaged) = read_all(Members::new(&data[..]));
        assert_eq!((out.as_slice(), damaged), (&b"one two three"[..], 0));
    }

    #[test]
    fn a_damaged_member_costs_only_itself() {
        let members: Vec<Vec<u8>> = (0..6)
            .map(|i| gz(format!("member {i} ").repeat(50).as_bytes()))
            .collect();
        let mut data = Vec::new();
        for (i, m) in members.iter().enumerate() {
            let mut m = m.clone();
            if i == 1 {
                let mid = m.len() / 2;
                m[mid] ^= 0xff;
                m[mid + 1] ^= 0x55;
            }
            data.extend(m);
        }
        let (out, damaged) = read_all(Members::new(&data[..]));
        let text = String::from_utf8_lossy(&out);
        assert_eq!(damaged, 1, "{text}");
        for i in [0, 2, 3, 4, 5] {
            assert!(
                text.contains(&format!("member {i} ").repeat(50)),
                "member {i}: {text}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// Members of random text with bytes flipped in one of them: every other member's
        /// text is read, in order, whatever the damage did to its own member.
        #[test]
        fn damage_costs_only_the_damaged_member(
            texts in proptest::collection::vec("[a-z ]{1,400}", 2..8),
            which in 0usize..8,
            at in 0.0f64..1.0,
            flips in proptest::collection::vec(1u8..=255, 1..4),
        ) {
            let which = which % texts.len();
            let mut data = Vec::new();
            for (i, t) in texts.iter().enumerate() {
                let mut m = gz(format!("<{i}:{t}>").as_bytes());
                if i == which {
                    let p = ((m.len() - flips.len()) as f64 * at) as usize;
                    for (k, f) in flips.iter().enumerate() {
                        m[p + k] ^= f;
                    }
                }
                data.extend(m);
            }
            let (out, _) = read_all(Members::new(&data[..]));
            let out = String::from_utf8_lossy(&out);
            let mut from = 0;
            for (i, t) in texts.iter().enumerate() {
                if i == which {
                    continue;
                }
                let want = format!("<{i}:{t}>");
                let found = out[from..].find(&want);
                proptest::prop_assert!(found.is_some(), "member {} of {}: {:?}", i, texts.len(), out);
                from += found.unwrap() + want.len();
            }
        }
    }

    #[test]
    fn garbage_after_the_last_member_is_reported_not_read() {
        let mut data = gz(b"kept");
        data.extend_from_slice(b"garbage that is not gzip");
        let (out, damaged) = read_all(Members::new(&data[..]));
        assert_eq!((out.as_slice(), damaged), (&b"kept"[..], 1));
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
