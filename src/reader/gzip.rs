//! Gzip members one after another ([`Members`]), as `MultiGzDecoder` reads them, except that a
//! damaged member does not end the input: its error is reported once (a [`Damaged`]
//! `io::Error`), the compressed bytes up to the next member header are skipped, and reading goes
//! on there. WARC and ARC writers put each record in a member of its own, so one flipped byte
//! costs one record, not the rest of the file. A gzip file can go back to an earlier position
//! from a member start ([`Members::rewind_to`]; checkpoints every [`CHECKPOINT_EVERY`] decoded
//! bytes).

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

/// Gzip's member header: magic and the deflate method.
pub(super) const GZIP_HEADER: [u8; 3] = [0x1f, 0x8b, 0x08];

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

impl Members<BufReader<File>> {
    /// Go back to decoded position `at` of a gzip file: from the last member start at or
    /// before it (a checkpoint), decoding up to `at` again. False when no checkpoint is that
    /// early or the bytes up to `at` no longer decode (the caller says the rest is lost).
    pub fn rewind_to(&mut self, at: u64) -> std::io::Result<bool> {
        let Some(&(raw_at, decoded_at)) = self.checkpoints.iter().rev().find(|&&(_, d)| d <= at)
        else {
            return Ok(false);
        };
        let checkpoints = std::mem::take(&mut self.checkpoints);
        let Some(mut raw) = self.take_raw() else {
            return Ok(false);
        };
        raw.inner.seek(SeekFrom::Start(raw_at))?;
        raw.at = raw_at;
        raw.replay.clear();
        raw.replay_at = 0;
        *self = Members::starting(raw, decoded_at);
        // Checkpoints before this one stay valid.
        self.checkpoints = checkpoints
            .into_iter()
            .filter(|&(_, d)| d <= decoded_at)
            .collect();
        // Decode up to `at` again.
        let mut skip = at - decoded_at;
        let mut scratch = vec![0u8; 1 << 16];
        while skip > 0 {
            let want = skip.min(scratch.len() as u64) as usize;
            match self.read(&mut scratch[..want]) {
                Ok(0) => return Ok(false),
                Ok(n) => skip -= n as u64,
                Err(e) if is_damage(&e) => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
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
}
