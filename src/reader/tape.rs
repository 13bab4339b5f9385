//! The compressed reader under [`super::gzip::Members`] and [`super::zstd_frames::Frames`]: it
//! counts the bytes consumed (the compressed offset), keeps the current unit's (member's,
//! frame's) first [`TAPE`] bytes, and after damage goes back to the unit's second byte (from
//! the tape, or by a seek in a file) to look for the next unit's magic number there. A damaged
//! unit's decoder may have run on over the units after it (a stored block's length, a frame's
//! block size read from damaged bytes): looking on from where it stopped lost them.

use std::io::{BufRead, Read};

/// Compressed bytes of a unit kept to look for the next unit inside them after damage, in a
/// file (past them a seek goes back).
pub(super) const TAPE: usize = 1 << 20;

/// The same in a stream (stdin, a pipe), which cannot go back: a damaged member of up to this
/// many compressed bytes costs only its own records there too (a 1.2 MB one cost the 69
/// intact records after it when the tape held 1 MiB).
pub(super) const STREAM_TAPE: usize = 64 << 20;

/// See the module documentation.
pub struct Counted<R> {
    pub(super) inner: R,
    /// Compressed bytes consumed before this point.
    pub(super) at: u64,
    /// The magic number units start with (a search keeps a partial one across reads).
    magic: &'static [u8],
    /// The current unit's bytes consumed so far, while under [`TAPE`] (else empty, and
    /// `taping` false).
    tape: Vec<u8>,
    taping: bool,
    /// The most bytes taped ([`TAPE`] in a file, [`STREAM_TAPE`] in a stream).
    tape_max: usize,
    /// Bytes to read again before `inner`, from `replay_at`.
    replay: Vec<u8>,
    replay_at: usize,
}

impl<R: BufRead> Counted<R> {
    /// A stream's compressed reader (taping up to [`STREAM_TAPE`]).
    pub(super) fn new(inner: R, at: u64, magic: &'static [u8]) -> Self {
        Counted {
            inner,
            at,
            magic,
            tape: Vec::new(),
            taping: false,
            tape_max: STREAM_TAPE,
            replay: Vec::new(),
            replay_at: 0,
        }
    }

    /// A file's compressed reader: it can seek back, so it tapes up to [`TAPE`] only.
    pub(super) fn seekable(mut self) -> Self {
        self.tape_max = TAPE;
        self
    }

    /// A unit starts here: tape it.
    pub(super) fn start_tape(&mut self) {
        self.tape.clear();
        self.taping = true;
    }

    /// The unit that started at `unit_at` is damaged: go back to its second byte (from the
    /// tape; else, past the tape's reach, by `seek` when there is one; else stay: a stream
    /// looks on from here) and skip to the next magic number. Returns the bytes passed over
    /// from the unit's start.
    pub(super) fn skip_damaged(
        &mut self,
        unit_at: u64,
        seek: Option<fn(&mut R, u64) -> std::io::Result<()>>,
    ) -> std::io::Result<u64> {
        if self.taping && !self.tape.is_empty() {
            // Read the unit again from its second byte, then on.
            let mut again = std::mem::take(&mut self.tape);
            again.drain(..1);
            let pending = self.replay.len() - self.replay_at;
            again.extend_from_slice(&self.replay[self.replay_at..]);
            self.at -= (again.len() - pending) as u64;
            self.replay = again;
            self.replay_at = 0;
            self.taping = false;
            return Ok(1 + self.skip_to_magic()?);
        }
        self.taping = false;
        self.tape = Vec::new();
        if let (true, Some(seek)) = (self.at > unit_at + 1, seek) {
            seek(&mut self.inner, unit_at + 1)?;
            self.at = unit_at + 1;
            self.replay.clear();
            self.replay_at = 0;
            return Ok(1 + self.skip_to_magic()?);
        }
        if self.at > unit_at {
            // Past the tape's reach in a stream: the next unit is here or further.
            return Ok(self.at - unit_at + self.skip_to_magic()?);
        }
        if self.fill_buf().is_ok_and(|b| !b.is_empty()) {
            // A bad header at this very byte: skip it, so that it is not read again.
            self.consume(1);
            return Ok(1 + self.skip_to_magic()?);
        }
        Ok(0)
    }

    /// Skip to the next magic number (or the end); the bytes passed over.
    pub(super) fn skip_to_magic(&mut self) -> std::io::Result<u64> {
        let magic = self.magic;
        let mut skipped = 0u64;
        loop {
            let buf = self.fill_buf()?;
            if buf.is_empty() {
                return Ok(skipped);
            }
            if let Some(i) = buf.windows(magic.len()).position(|w| w == magic) {
                self.consume(i);
                return Ok(skipped + i as u64);
            }
            // A magic number may straddle two reads: keep the longest end of this one that
            // could start it.
            let keep = (1..magic.len().min(buf.len() + 1))
                .rev()
                .find(|&k| buf[buf.len() - k..] == magic[..k])
                .unwrap_or(0);
            let n = buf.len() - keep;
            if n == 0 {
                // Only a partial magic number is left and no more bytes come: the end.
                let n = buf.len();
                self.consume(n);
                return Ok(skipped + n as u64);
            }
            self.consume(n);
            skipped += n as u64;
        }
    }

    /// The next `n` bytes, not consumed (fewer at the end of the input): they are read again
    /// from the replay buffer, so a look across the inner reader's buffer boundary works.
    pub(super) fn peek(&mut self, n: usize) -> std::io::Result<&[u8]> {
        if self.replay_at >= self.replay.len() {
            self.replay.clear();
            self.replay_at = 0;
        }
        while self.replay.len() - self.replay_at < n {
            let more = self.inner.fill_buf()?;
            if more.is_empty() {
                break;
            }
            let take = more.len().min(n - (self.replay.len() - self.replay_at));
            self.replay.extend_from_slice(&more[..take]);
            self.inner.consume(take);
        }
        let end = (self.replay_at + n).min(self.replay.len());
        Ok(&self.replay[self.replay_at..end])
    }

    /// Forget what is being read again (the position was moved under it).
    pub(super) fn clear_replay(&mut self) {
        self.replay.clear();
        self.replay_at = 0;
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
            if self.replay.len() - self.replay_at < self.magic.len() {
                // A magic number may start in the last bytes read again: join the next ones.
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
            if self.tape.len() + amt > self.tape_max {
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

/// A unit's decoded bytes, held until its check passes, then read out.
#[derive(Default)]
pub(super) struct Held {
    bytes: Vec<u8>,
    at: usize,
}

impl Held {
    /// Copy the next held bytes into `buf`; `None` when none are left.
    pub(super) fn give(&mut self, buf: &mut [u8]) -> Option<usize> {
        if self.at >= self.bytes.len() {
            return None;
        }
        let n = buf.len().min(self.bytes.len() - self.at);
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Some(n)
    }

    pub(super) fn clear(&mut self) {
        self.bytes.clear();
        self.at = 0;
    }

    pub(super) fn push(&mut self, decoded: &[u8]) {
        self.bytes.extend_from_slice(decoded);
    }

    pub(super) fn len(&self) -> usize {
        self.bytes.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// What the tests of both readers of units share.
#[cfg(test)]
pub(super) mod testing {
    use std::io::Read;

    /// Everything readable, and the number of damage reports in between.
    pub(in crate::reader) fn read_all(mut r: impl Read) -> (Vec<u8>, usize) {
        let (mut out, mut damaged) = (Vec::new(), 0);
        let mut buf = [0u8; 7];
        loop {
            match r.read(&mut buf) {
                Ok(0) => return (out, damaged),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                // A damage report (`gzip::Damaged`, named by its kind here: gzip's tests use
                // this module).
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => damaged += 1,
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// Units (`encode`d) of `texts`, bytes flipped by `flips` at `at` of unit `which`, read by
    /// `read`: exactly every other unit's text in order, with the damaged unit's own text in
    /// its place when the flips missed what its checks cover, and never an altered text of it.
    pub(in crate::reader) fn whole_or_nothing(
        encode: fn(&[u8]) -> Vec<u8>,
        read: fn(&[u8]) -> Vec<u8>,
        texts: &[String],
        which: usize,
        at: f64,
        flips: &[u8],
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let which = which % texts.len();
        let mut data = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            let mut m = encode(format!("<{i}:{t}>").as_bytes());
            if i == which {
                let p = ((m.len() - flips.len()) as f64 * at) as usize;
                for (k, f) in flips.iter().enumerate() {
                    m[p + k] ^= f;
                }
            }
            data.extend(m);
        }
        let out = String::from_utf8_lossy(&read(&data)).into_owned();
        let whole = |with: bool| -> String {
            texts
                .iter()
                .enumerate()
                .filter(|&(i, _)| with || i != which)
                .map(|(i, t)| format!("<{i}:{t}>"))
                .collect()
        };
        proptest::prop_assert!(out == whole(false) || out == whole(true), "{:?}", out);
        Ok(())
    }
}
