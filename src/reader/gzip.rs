//! Gzip members one after another ([`Members`]), as `MultiGzDecoder` reads them, except that a
//! damaged member does not end the input: its error is reported once (a [`Damaged`]
//! `io::Error`), the compressed bytes up to the next member header are skipped, and reading goes
//! on there. WARC and ARC writers put each record in a member of its own, so one flipped byte
//! costs one record, not the rest of the file. A gzip file can go back to an earlier position
//! from a member start ([`Members::rewind_to`]; checkpoints every [`CHECKPOINT_EVERY`] decoded
//! bytes).

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

use super::tape::{Counted, Held};

/// Gzip's member header: magic and the deflate method.
pub(super) const GZIP_HEADER: [u8; 3] = [0x1f, 0x8b, 0x08];

/// Decoded bytes between two kept member checkpoints.
pub const CHECKPOINT_EVERY: u64 = 4 << 20;

/// The error a damaged gzip member (or zstd frame: `super::zstd_frames`) reports once
/// (reading goes on at the next one).
#[derive(Debug)]
pub struct Damaged {
    /// What was damaged: `gzip member`, `zstd frame`.
    pub unit: &'static str,
    /// What the decoder said.
    pub error: String,
    /// Compressed bytes passed over to reach the next member (or the end).
    pub skipped: u64,
}

impl std::fmt::Display for Damaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = self.unit;
        if self.error.contains("too much memory") {
            // Not damage: a frame written with a long window (`zstd --long=28` or more).
            return write!(
                f,
                "{unit} needs a window over 128 MiB ({}; written with `zstd --long=28` or more): \
                 not read, as more memory than fpdb gives one frame (decompress it with \
                 `zstd -d --long=31` and read that); its records are lost, {} compressed bytes \
                 skipped to the next {unit}",
                self.error, self.skipped
            );
        }
        if self.error.contains("Dictionary mismatch") {
            // A frame compressed with a dictionary this input does not hold (or held damaged).
            return write!(
                f,
                "{unit} needs a dictionary this input does not hold ({}; a `.warc.zst` carries \
                 its dictionary in a skippable frame at its start): its records are lost, {} \
                 compressed bytes skipped to the next {unit}",
                self.error, self.skipped
            );
        }
        write!(
            f,
            "damaged {unit} ({}); its records are lost, {} compressed bytes skipped to the next {unit}",
            self.error, self.skipped
        )
    }
}

impl std::error::Error for Damaged {}

impl Damaged {
    /// The read error that reports `unit`'s damage (`error`, what its decoder said) once
    /// `skipped` compressed bytes were passed over.
    pub(super) fn io(
        unit: &'static str,
        error: &dyn std::fmt::Display,
        skipped: u64,
    ) -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            Damaged {
                unit,
                error: error.to_string(),
                skipped,
            },
        )
    }
}

/// Whether `e` is a damaged member's report: the input goes on after it.
pub fn is_damage(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(
        <dyn std::error::Error + std::marker::Send + std::marker::Sync + 'static>::is::<Damaged>,
    )
}

/// A member's decoded bytes held until its trailer's CRC-32 and length are checked: a member
/// whose deflate stream decodes but whose check fails (most single flipped bits do: the
/// decoder cannot see them) gives none of its records, which would otherwise be stored with
/// altered text or ids. A member larger than this is passed on as it decodes once this much is
/// held (a one-member `.jsonl.gz` of gigabytes; WARC and ARC members hold one record each).
pub const HOLD: usize = 16 << 20;

/// Gzip members of `R`, decoded one after another; see the module documentation.
pub struct Members<R: BufRead> {
    decoder: Option<flate2::bufread::GzDecoder<Counted<R>>>,
    /// The compressed reader once the input ended (kept to go back in it).
    ended: Option<Counted<R>>,
    /// Decoded bytes taken from the decoder so far (those held included).
    decoded: u64,
    /// The current member's bytes decoded and checked (or, `streaming`, past [`HOLD`]), not
    /// yet read.
    held: Held,
    /// The current member outgrew [`HOLD`]: the rest of it goes on as it decodes.
    streaming: bool,
    /// Moves the compressed reader to an offset (a regular file's seek), when it can.
    seek: Option<fn(&mut R, u64) -> std::io::Result<()>>,
    /// (compressed offset, decoded offset) of member starts, one per [`CHECKPOINT_EVERY`].
    checkpoints: Vec<(u64, u64)>,
    /// Compressed offset of the current member's start.
    member_at: u64,
}

impl<R: BufRead> Members<R> {
    /// Members of `raw`, positioned at a member header.
    pub fn new(raw: R) -> Self {
        Self::starting(Counted::new(raw, 0, &GZIP_HEADER), 0)
    }

    fn starting(raw: Counted<R>, decoded: u64) -> Self {
        let mut m = Members {
            decoder: None,
            ended: None,
            decoded,
            held: Held::default(),
            streaming: false,
            seek: None,
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
        self.streaming = false;
        self.member_at = raw.at;
        self.decoder = Some(flate2::bufread::GzDecoder::new(raw));
    }

    /// The compressed reader, taken out (for seeking it).
    fn take_raw(&mut self) -> Option<Counted<R>> {
        match self.decoder.take() {
            Some(d) => Some(d.into_inner()),
            None => self.ended.take(),
        }
    }
}

impl<R: BufRead> Members<R> {
    /// Decode the current member into `held` until it ends and its check passes (then the next
    /// member is started), or [`HOLD`] bytes are held (then the rest streams). `Ok(false)`: no
    /// member is left. A damaged member's bytes are dropped and its [`Damaged`] returned.
    fn fill_held(&mut self) -> std::io::Result<bool> {
        self.held.clear();
        let mut chunk = [0u8; 1 << 16];
        loop {
            let Some(decoder) = self.decoder.as_mut() else {
                return Ok(!self.held.is_empty());
            };
            match decoder.read(&mut chunk) {
                Ok(0) => {
                    // The member ended and its trailer matched: the next one, if any.
                    let raw = self.decoder.take().expect("decoder").into_inner();
                    self.start(raw);
                    if !self.held.is_empty() {
                        return Ok(true);
                    }
                }
                Ok(n) => {
                    self.held.push(&chunk[..n]);
                    self.decoded += n as u64;
                    if self.held.len() >= HOLD {
                        self.streaming = true;
                        return Ok(true);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // Also a member cut off by the end of the input: what decoded before the
                    // cut cannot be told from what a damaged member decodes before it fails.
                    self.decoded -= self.held.len() as u64;
                    self.held.clear();
                    return Err(self.damaged(e));
                }
            }
        }
    }

    /// The current member failed (`e`): skip to the next member header, start it, and return
    /// the [`Damaged`] report.
    fn damaged(&mut self, e: std::io::Error) -> std::io::Error {
        let mut raw = self.decoder.take().expect("decoder").into_inner();
        // Not a read error of the file itself: the member's bytes are bad; the next header is
        // looked for from its second byte ([`Counted::skip_damaged`]).
        let skipped = raw.skip_damaged(self.member_at, self.seek);
        let skipped = match skipped {
            Ok(n) => n,
            Err(read) => return read,
        };
        self.start(raw);
        Damaged::io("gzip member", &e, skipped)
    }
}

impl<R: BufRead> Read for Members<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if let Some(n) = self.held.give(buf) {
                return Ok(n);
            }
            if !self.streaming {
                if !self.fill_held()? {
                    return Ok(0);
                }
                continue;
            }
            // A member past HOLD: as it decodes.
            let Some(decoder) = self.decoder.as_mut() else {
                return Ok(0);
            };
            match decoder.read(buf) {
                Ok(0) if !buf.is_empty() => {
                    let raw = self.decoder.take().expect("decoder").into_inner();
                    self.start(raw);
                }
                Ok(n) => {
                    self.decoded += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.damaged(e)),
            }
        }
    }
}

impl Members<BufReader<File>> {
    /// Members of a regular file: a damaged member larger than the tape is searched for the
    /// next header from its own start again, not from where its decoding stopped.
    pub fn file(raw: BufReader<File>) -> Self {
        let mut m = Self::starting(Counted::new(raw, 0, &GZIP_HEADER).seekable(), 0);
        m.seek = Some(|r, at| r.seek(SeekFrom::Start(at)).map(drop));
        m
    }

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
        raw.clear_replay();
        let seek = self.seek;
        *self = Members::starting(raw, decoded_at);
        self.seek = seek;
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
    use crate::reader::tape::testing::{read_all, whole_or_nothing};
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// Everything readable, with the damage reports in between.

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

    #[test]
    fn a_member_whose_check_fails_gives_none_of_its_bytes() {
        let mut bad = gz(b"<the damaged member>");
        // Its CRC-32 (the trailer's first four bytes): the deflate stream itself decodes.
        let crc = bad.len() - 8;
        bad[crc] ^= 0x01;
        let mut data = gz(b"<one>");
        data.extend(bad);
        data.extend(gz(b"<three>"));
        let (out, damaged) = read_all(Members::new(&data[..]));
        assert_eq!((out.as_slice(), damaged), (&b"<one><three>"[..], 1));
    }

    #[test]
    fn a_member_past_the_hold_streams() {
        let big: Vec<u8> = (0..HOLD + 5000).map(|i| b'a' + (i % 26) as u8).collect();
        let mut data = gz(&big);
        data.extend(gz(b"<after>"));
        let (out, damaged) = read_all(Members::new(&data[..]));
        assert_eq!(damaged, 0);
        assert_eq!(out.len(), big.len() + 7);
        assert!(out.ends_with(b"<after>") && out[..big.len()] == big[..]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// Members of random text with bits flipped in one of them: what is read is exactly
        /// every other member's text in order, with the damaged member's own text in its place
        /// when the flips missed what its check covers (header fields), and never an altered
        /// text of it.
        #[test]
        fn a_damaged_member_gives_its_text_whole_or_nothing(
            texts in proptest::collection::vec("[a-z ]{1,400}", 2..8),
            which in 0usize..8,
            at in 0.0f64..1.0,
            flips in proptest::collection::vec(1u8..=255, 1..4),
        ) {
            whole_or_nothing(gz, |d| read_all(Members::new(d)).0, &texts, which, at, &flips)?;
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
