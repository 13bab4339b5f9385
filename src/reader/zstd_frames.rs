//! Zstandard frames one after another ([`Frames`]), as one stream, except that a damaged frame
//! does not end the input: its error is reported once (a [`Damaged`] `io::Error`), the
//! compressed bytes up to the next frame's magic number are skipped, and reading goes on there.
//! Each frame's output is held until the frame ends and its checksum (when it has one, as the
//! `zstd` tool writes by default) is checked, so that a damaged frame gives none of its records
//! and the intact frame before it loses nothing (up to [`HOLD`] bytes; a larger frame is passed
//! on as it decodes). A frame without a checksum is taken only when the next frame's magic
//! number, or the end of the input, follows it: a damaged header can clear its checksum flag and
//! shorten a block, and the frame then decodes to a cut text, with the rest of its bytes after
//! it. A `.warc.zst` written a record per frame, or a `.jsonl.zst` of many
//! frames, loses only what a damaged frame held: one damaged frame used to end the input,
//! silently, with every intact frame after it.
//!
//! A skippable frame of magic `0x184D2A5D` holds the dictionary of the frames after it (the
//! IIPC form of a `.warc.zst`: the dictionary, itself zstd-compressed or raw, in a skippable
//! frame at the start of the file); those frames are decoded with it.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

use super::gzip::{Damaged, HOLD};
use super::tape::{Counted, Held};

/// A count of the zstd frames decoded without a checksum (damage inside them cannot be told),
/// shared by the inputs of a run ([`super::Counts::unchecked_frames`]).
pub type Unchecked = std::sync::Arc<std::sync::atomic::AtomicU64>;

/// Zstandard's frame magic number.
pub(super) const ZSTD_MAGIC: &[u8] = b"\x28\xb5\x2f\xfd";

/// The magic number of the skippable frame that holds a dictionary (`0x184D2A5D`, LE).
const DICTIONARY_MAGIC: &[u8] = b"\x5d\x2a\x4d\x18";

/// The largest dictionary read (compressed or not); dictionaries are kilobytes to a few MiB.
const MAX_DICTIONARY: usize = 64 << 20;

/// Whether `head` (an input's first bytes) starts a Zstandard frame or a skippable frame.
pub(super) fn starts_zstd(head: &[u8]) -> bool {
    head.starts_with(ZSTD_MAGIC) || is_skippable(head)
}

/// Whether `head` starts with a skippable frame's magic number (`0x184D2A50`–`0x184D2A5F`).
fn is_skippable(head: &[u8]) -> bool {
    head.len() >= 4 && head[0] & 0xf0 == 0x50 && head[1..4] == [0x2a, 0x4d, 0x18]
}

type Decoder<R> = zstd::stream::read::Decoder<'static, Counted<R>>;

/// Zstandard frames of `R`, decoded one after another; see the module documentation.
pub struct Frames<R: BufRead> {
    decoder: Option<Decoder<R>>,
    /// The compressed reader between frames and at the end.
    raw: Option<Counted<R>>,
    /// Compressed offset of the current frame's start.
    frame_at: u64,
    /// Whether the current frame's header says it ends with a checksum (which the decoder
    /// checks).
    checksummed: bool,
    /// The current frame's output, checked (or, `streaming`, past [`HOLD`]), not yet read.
    held: Held,
    streaming: bool,
    /// Moves the compressed reader to an offset (a regular file's seek), when it can.
    seek: Option<fn(&mut R, u64) -> std::io::Result<()>>,
    /// The dictionary of the frames from here on (a dictionary frame's).
    dictionary: Option<Vec<u8>>,
    /// Where the frames decoded without a checksum are counted.
    unchecked: Unchecked,
}

impl<R: BufRead> Frames<R> {
    /// Frames of `raw`, positioned at a frame's magic number.
    pub fn new(raw: R) -> Self {
        Frames {
            decoder: None,
            raw: Some(Counted::new(raw, 0, ZSTD_MAGIC)),
            frame_at: 0,
            checksummed: false,
            held: Held::default(),
            streaming: false,
            seek: None,
            dictionary: None,
            unchecked: Unchecked::default(),
        }
    }

    /// Count the frames decoded without a checksum in `unchecked`.
    pub fn counting(mut self, unchecked: Unchecked) -> Self {
        self.unchecked = unchecked;
        self
    }

    /// A frame ended whole: counted when it had no checksum.
    fn ended(&self) {
        if !self.checksummed {
            self.unchecked
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Start the frame at the current position of `self.raw`; `Ok(false)` at the end.
    fn start(&mut self) -> std::io::Result<bool> {
        let Some(mut raw) = self.raw.take() else {
            return Ok(false);
        };
        if raw.fill_buf()?.is_empty() {
            self.raw = Some(raw);
            return Ok(false);
        }
        if raw.peek(4)? == DICTIONARY_MAGIC {
            self.frame_at = raw.at;
            raw.start_tape();
            match read_dictionary(&mut raw) {
                Ok(d) => self.dictionary = Some(d),
                Err(e) => {
                    // Reported as damage (located, counted); the frames after it then need a
                    // dictionary the input does not hold, and each says so.
                    self.dictionary = None;
                    return Err(self.damaged_raw(raw, &e));
                }
            }
            self.raw = Some(raw);
            return self.start();
        }
        self.frame_at = raw.at;
        self.streaming = false;
        // The frame header's descriptor follows the magic number; bit 2: a checksum ends it.
        self.checksummed = raw.peek(5)?.get(4).is_some_and(|d| d & 0x04 != 0);
        raw.start_tape();
        let at = raw.at;
        let decoder = match &self.dictionary {
            Some(d) => zstd::stream::read::Decoder::with_dictionary(raw, d),
            None => zstd::stream::read::Decoder::with_buffer(raw),
        };
        match decoder {
            Ok(d) => {
                self.decoder = Some(d.single_frame());
                Ok(true)
            }
            Err(e) => Err(std::io::Error::other(format!(
                "zstd decoder at compressed byte {at}: {e}"
            ))),
        }
    }

    /// Decode the current frame into `held` until it ends and checks (then the next frame
    /// waits to be started) or [`HOLD`] bytes are held. `Ok(false)`: no frame is left.
    fn fill_held(&mut self) -> std::io::Result<bool> {
        self.held.clear();
        let mut chunk = [0u8; 1 << 16];
        loop {
            if self.decoder.is_none() && !self.start()? {
                return Ok(!self.held.is_empty());
            }
            let decoder = self.decoder.as_mut().expect("started");
            match decoder.read(&mut chunk) {
                Ok(0) => {
                    let mut raw = self.decoder.take().expect("decoder").finish();
                    if !self.checksummed && !next_is_frame(&mut raw)? {
                        self.held.clear();
                        let e = "a frame without a checksum is followed by bytes that start no \
                                 frame";
                        return Err(self.damaged_raw(raw, &e));
                    }
                    self.ended();
                    self.raw = Some(raw);
                    if !self.held.is_empty() {
                        return Ok(true);
                    }
                }
                Ok(n) => {
                    self.held.push(&chunk[..n]);
                    if self.held.len() >= HOLD {
                        self.streaming = true;
                        return Ok(true);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.held.clear();
                    return Err(self.damaged(&e));
                }
            }
        }
    }

    /// The current frame failed (`e`): skip to the next frame's magic number, looked for from
    /// the frame's second byte ([`Counted::skip_damaged`]), and return the [`Damaged`] report.
    fn damaged(&mut self, e: &std::io::Error) -> std::io::Error {
        let raw = self.decoder.take().expect("decoder").finish();
        self.damaged_raw(raw, e)
    }

    /// [`Frames::damaged`] of the frame read up to `raw`.
    fn damaged_raw(&mut self, mut raw: Counted<R>, e: &dyn std::fmt::Display) -> std::io::Error {
        let skipped = match raw.skip_damaged(self.frame_at, self.seek) {
            Ok(n) => n,
            Err(read) => return read,
        };
        self.raw = Some(raw);
        Damaged::io("zstd frame", e, skipped)
    }
}

/// Whether `raw` is at the end of the input or at a frame's magic number (a Zstandard frame's,
/// or a skippable frame's: `0x184D2A50` to `0x184D2A5F`, little-endian).
fn next_is_frame<R: BufRead>(raw: &mut Counted<R>) -> std::io::Result<bool> {
    let next = raw.peek(4)?;
    Ok(next.is_empty() || next == ZSTD_MAGIC || is_skippable(next))
}

/// The dictionary in the skippable frame at `raw` (read past it): its content, decompressed
/// when it is a Zstandard frame. An error names what is wrong; the frames after it cannot be
/// read without it.
fn read_dictionary<R: BufRead>(raw: &mut Counted<R>) -> std::io::Result<Vec<u8>> {
    let at = raw.at;
    let head = raw.peek(8)?;
    let size = head
        .get(4..8)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize);
    let bad = |what: String| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("zstd dictionary frame at compressed byte {at}: {what}"),
        )
    };
    let Some(size) = size.filter(|&n| n <= MAX_DICTIONARY) else {
        return Err(bad(format!(
            "its size is missing or over {MAX_DICTIONARY} bytes"
        )));
    };
    let mut frame = vec![0u8; 8 + size];
    raw.read_exact(&mut frame)
        .map_err(|e| bad(format!("cut short ({e})")))?;
    let content = frame.split_off(8);
    if !content.starts_with(ZSTD_MAGIC) {
        return Ok(content);
    }
    let mut out = Vec::new();
    zstd::stream::read::Decoder::new(&content[..])
        .and_then(|d| d.take(MAX_DICTIONARY as u64 + 1).read_to_end(&mut out))
        .map_err(|e| bad(format!("cannot be decompressed ({e})")))?;
    if out.len() > MAX_DICTIONARY {
        return Err(bad(format!("over {MAX_DICTIONARY} bytes decompressed")));
    }
    Ok(out)
}

impl<R: BufRead> Read for Frames<R> {
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
            // A frame past HOLD: as it decodes.
            let Some(decoder) = self.decoder.as_mut() else {
                self.streaming = false;
                continue;
            };
            match decoder.read(buf) {
                Ok(0) if !buf.is_empty() => {
                    self.ended();
                    self.raw = Some(self.decoder.take().expect("decoder").finish());
                    self.streaming = false;
                }
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.streaming = false;
                    return Err(self.damaged(&e));
                }
            }
        }
    }
}

impl Frames<BufReader<File>> {
    /// Frames of a regular file: a damaged frame is searched for the next magic number from
    /// its own second byte, not from where its decoding stopped.
    pub fn file(raw: BufReader<File>) -> Self {
        let mut f = Self::new(raw);
        f.raw = f.raw.take().map(Counted::seekable);
        f.seek = Some(|r, at| r.seek(SeekFrom::Start(at)).map(drop));
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::tape::testing::{read_all, whole_or_nothing};

    /// A frame of `data`, ending with a checksum when `checksum`.
    fn frame(data: &[u8], checksum: bool) -> Vec<u8> {
        let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        e.include_checksum(checksum).unwrap();
        std::io::Write::write_all(&mut e, data).unwrap();
        e.finish().unwrap()
    }

    fn zst(data: &[u8]) -> Vec<u8> {
        frame(data, true)
    }

    #[test]
    fn frames_read_as_one_stream_with_or_without_checksums() {
        for checksum in [true, false] {
            let mut data = frame(b"one ", checksum);
            data.extend(frame(b"two ", checksum));
            data.extend(frame(b"three", checksum));
            assert_eq!(
                read_all(Frames::new(&data[..])),
                (b"one two three".to_vec(), 0)
            );
        }
    }

    #[test]
    fn a_frame_cut_by_the_end_of_the_input_costs_only_itself() {
        let mut data = zst(b"one ");
        let two: Vec<u8> = (0..20_000u32).flat_map(u32::to_le_bytes).collect();
        let z = zst(&two);
        data.extend_from_slice(&z[..z.len() * 3 / 4]);
        assert_eq!(read_all(Frames::new(&data[..])), (b"one ".to_vec(), 1));
    }

    /// A frame without a checksum followed by bytes that start no frame (what a damaged
    /// header that cleared its checksum flag and shortened its block leaves) gives nothing;
    /// the frames around it are read.
    #[test]
    fn a_frame_without_a_checksum_not_followed_by_a_frame_gives_nothing() {
        let mut data = zst(b"one ");
        data.extend(frame(b"two ", false));
        data.extend_from_slice(b"\x01\x02\x03 rest of a block");
        data.extend(zst(b"three"));
        assert_eq!(read_all(Frames::new(&data[..])), (b"one three".to_vec(), 1));
        // The same at the end of the input.
        let mut data = zst(b"one ");
        data.extend(frame(b"two ", false));
        data.extend_from_slice(b"\x00\x00");
        assert_eq!(read_all(Frames::new(&data[..])), (b"one ".to_vec(), 1));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// Frames of random text with bytes flipped in one of them: what is read is exactly
        /// every other frame's text in order, with the damaged frame's own text in its place
        /// when the flips missed what its checks cover, and never an altered text of it.
        #[test]
        fn a_damaged_frame_gives_its_text_whole_or_nothing(
            texts in proptest::collection::vec("[a-z ]{1,400}", 2..8),
            which in 0usize..8,
            at in 0.0f64..1.0,
            flips in proptest::collection::vec(1u8..=255, 1..4),
        ) {
            whole_or_nothing(zst, |d| read_all(Frames::new(d)).0, &texts, which, at, &flips)?;
        }
    }
}
