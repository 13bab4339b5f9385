//! The saved filter (`fpdb-presence` in a RocksDB store's directory): the store state it is
//! tagged with, how that state fits the store as it is now, and the file's format (a header,
//! the layers, a CRC-32 of every byte before it), read and written streaming.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::bloom::MAX_FAMILY_BYTES;
use super::bloom::{Bloom, Layers};
use crate::error::{Error, Result};
use crate::store::schema::{self, meta};
use crate::store::{Cf, Store};

/// The saved filter's file in a store's directory.
pub const FILE_NAME: &str = "fpdb-presence";

/// First bytes of the file, with its format version.
pub(super) const MAGIC: &[u8; 8] = b"FPDBPRS3";

/// First bytes of a version 2 file, whose header lacks the next document seq: used only at
/// exactly the state it was saved at.
pub(super) const MAGIC_2: &[u8; 8] = b"FPDBPRS2";

/// A store's state, as a saved filter is tagged with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct State {
    /// RocksDB's `IDENTITY` file.
    identity: Vec<u8>,
    /// RocksDB's last write sequence number: changed by any write.
    sequence: u64,
    /// The seq the next document takes (`meta/next_seq`) and [`last_doc`] of the store at the
    /// save; unknown in version 2 files.
    next_doc: Option<(u64, u32)>,
}

/// What tells the document at seq `next_doc - 1` of `base` from another at that seq: the
/// CRC-32 of its id (0 when there is none). Two copies of one store (same identity) that
/// took different documents after they parted differ there.
pub(super) fn last_doc(base: &dyn Store, next_doc: u64) -> Option<u32> {
    if next_doc <= 1 {
        return Some(0);
    }
    let key = schema::u64_key(next_doc - 1);
    Some(match base.get(Cf::Docs, &key).ok()? {
        Some(v) => crc32fast::hash(schema::decode_doc(&key, &v).ok()?.id.as_bytes()),
        None => 0,
    })
}

impl State {
    /// The state of `base`, the store open in `dir` (none for a store without sequence
    /// numbers or identity: then no filter is saved or loaded).
    pub(super) fn of(base: &dyn Store, dir: &Path) -> Option<State> {
        let sequence = base.last_sequence()?;
        let identity = std::fs::read(dir.join("IDENTITY")).ok()?;
        let next_doc = match base.get(Cf::Meta, meta::NEXT_SEQ).ok()? {
            Some(v) => schema::decode_u64(Cf::Meta, meta::NEXT_SEQ, &v).ok()?,
            // Seqs start at 1.
            None => 1,
        };
        (!identity.is_empty()).then_some(State {
            identity,
            sequence,
            next_doc: Some((next_doc, last_doc(base, next_doc)?)),
        })
    }

    /// How a filter saved at state `self` fits `base`, a store at state `now`: behind it only
    /// when the store holds, at the last seq given out before the save, the document it held
    /// then (one read).
    pub(super) fn fit(&self, now: &State, base: &dyn Store) -> Fit {
        if self.identity != now.identity {
            return Fit::No;
        }
        if self.sequence == now.sequence {
            return Fit::Current;
        }
        match (self.next_doc, now.next_doc) {
            (Some((from, last)), Some((next, _)))
                if self.sequence < now.sequence
                    && from <= next
                    && last_doc(base, from) == Some(last) =>
            {
                Fit::Behind {
                    from,
                    documents: next - from,
                }
            }
            _ => Fit::No,
        }
    }
}

/// How a saved filter fits the store as it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Saved at the store's present state: used as it is.
    Current,
    /// Saved at an earlier state of this store: it holds every key of that state, and the
    /// documents written since are read into it.
    Behind {
        /// The first seq given out after the save.
        from: u64,
        /// Seqs given out since (documents written, some perhaps removed since).
        documents: u64,
    },
    /// Of another store or a later state, damaged, or of an unknown state: never used.
    No,
}

/// The presence filter saved in `dir` (a store's directory) for `base`, the store open there:
/// its size in bytes and how it fits the store's present state (whether the next writer loads
/// it). Reads only the file's header (the checksum is checked when it is loaded).
pub fn saved(base: &dyn Store, dir: &Path) -> Option<(u64, Fit)> {
    let file = dir.join(FILE_NAME);
    let f = std::fs::File::open(&file).ok()?;
    let len = f.metadata().ok()?.len();
    let mut r = Verified {
        from: std::io::BufReader::with_capacity(4096, f),
        crc: crc32fast::Hasher::new(),
        left: len.saturating_sub(4),
    };
    let fit = match (header(&mut r), State::of(base, dir)) {
        (Some(at), Some(now)) => at.fit(&now, base),
        _ => Fit::No,
    };
    Some((len, fit))
}

/// Remove the filter saved in `dir` when it cannot serve the store open there (`base`) and
/// the store is writable: a writer that does not load it still removes a file of another
/// state, so it can never be taken for one of a later state of this store.
pub fn remove_unusable(base: &dyn Store, dir: &Path) -> Result<()> {
    let file = dir.join(FILE_NAME);
    if base.read_only() || !file.exists() {
        return Ok(());
    }
    if matches!(saved(base, dir), Some((_, Fit::No)) | None) {
        std::fs::remove_file(&file).map_err(|e| Error::io(&file, e))?;
    }
    Ok(())
}

/// A file being written, with the checksum of what was written so far.
pub(super) struct Checksummed<W: Write> {
    to: W,
    crc: crc32fast::Hasher,
}

impl<W: Write> Checksummed<W> {
    pub(super) fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.crc.update(bytes);
        self.to.write_all(bytes)
    }
}

/// The filters saved in `file`, when it is whole and fits the store's state `now`, with how it
/// fits and whether the file is of version 2. Read as a stream (no copy of the file in memory
/// besides the filters themselves).
pub(super) fn load(
    file: &Path,
    now: &State,
    base: &dyn Store,
) -> Option<(Vec<Option<Layers>>, Fit, bool)> {
    let f = std::fs::File::open(file).ok()?;
    let len = f.metadata().ok()?.len();
    let mut r = Verified {
        from: std::io::BufReader::with_capacity(1 << 16, f),
        crc: crc32fast::Hasher::new(),
        left: len.checked_sub(4)?,
    };
    let at = header(&mut r)?;
    let fit = at.fit(now, base);
    if fit == Fit::No {
        return None;
    }
    let mut filters: Vec<Option<Layers>> = Cf::ALL.iter().map(|_| None).collect();
    let u64_at = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    for _ in Cf::ALL.iter().filter(|&&cf| cf.scan_prefix().is_some()) {
        let i = r.take(1)?[0] as usize;
        if i >= Cf::ALL.len() || Cf::ALL[i].scan_prefix().is_none() || filters[i].is_some() {
            return None;
        }
        let count = u32::from_le_bytes(r.take(4)?.try_into().ok()?) as usize;
        let mut layers = Vec::with_capacity(count.min(64));
        for _ in 0..count {
            let capacity = u64_at(&r.take(8)?);
            let inserted = u64_at(&r.take(8)?);
            let words = u64_at(&r.take(8)?);
            // Checked against the file's size before anything that large is allocated.
            if words == 0 || words.checked_mul(8)? > r.left {
                return None;
            }
            let mut ws = Vec::with_capacity(words as usize);
            let mut left = words as usize;
            while left > 0 {
                let n = left.min(1 << 13);
                ws.extend(
                    r.take(n * 8)?
                        .chunks_exact(8)
                        .map(|w| AtomicU64::new(u64_at(w))),
                );
                left -= n;
            }
            layers.push(Bloom {
                words: ws,
                bits: words * 64,
                capacity: capacity.max(1),
                inserted: AtomicU64::new(inserted),
            });
        }
        if layers.is_empty() {
            return None;
        }
        filters[i] = Some(Layers::of(layers, MAX_FAMILY_BYTES));
    }
    if r.left != 0 {
        return None;
    }
    let mut crc = [0u8; 4];
    r.from.read_exact(&mut crc).ok()?;
    (r.crc.finalize().to_le_bytes() == crc).then_some((filters, fit, at.next_doc.is_none()))
}

/// The state in the header of a saved filter being read (after checking its first bytes).
pub(super) fn header<R: Read>(r: &mut Verified<R>) -> Option<State> {
    let magic = r.take(8)?;
    let n = u32::from_le_bytes(r.take(4)?.try_into().ok()?) as usize;
    let u64_of = |b: Vec<u8>| b.try_into().ok().map(u64::from_le_bytes);
    if magic == MAGIC {
        let identity = r.take(n)?;
        let sequence = u64_of(r.take(8)?)?;
        let next_doc = u64_of(r.take(8)?)?;
        let last = u32::from_le_bytes(r.take(4)?.try_into().ok()?);
        Some(State {
            identity,
            sequence,
            next_doc: Some((next_doc, last)),
        })
    } else if magic == MAGIC_2 {
        // Version 2: the identity and the sequence number as one tag.
        let mut tag = r.take(n)?;
        let at = tag.len().checked_sub(8)?;
        let sequence = u64_of(tag.split_off(at))?;
        Some(State {
            identity: tag,
            sequence,
            next_doc: None,
        })
    } else {
        None
    }
}

/// A saved filter being read: `left` bytes before its checksum, and the checksum of what was
/// read so far.
pub(super) struct Verified<R: Read> {
    from: R,
    crc: crc32fast::Hasher,
    left: u64,
}

impl<R: Read> Verified<R> {
    pub(super) fn take(&mut self, n: usize) -> Option<Vec<u8>> {
        if n as u64 > self.left {
            return None;
        }
        let mut b = vec![0u8; n];
        self.from.read_exact(&mut b).ok()?;
        self.crc.update(&b);
        self.left -= n as u64;
        Some(b)
    }
}

/// Write the filter (`filters`, tagged with `state`) to `tmp`, synced, and rename it to
/// `file`: a crash leaves the old file or the new one, whole.
pub(super) fn write(
    tmp: &Path,
    file: &Path,
    state: &State,
    filters: &[Option<Layers>],
) -> std::io::Result<()> {
    // Streamed (the filter is not copied: at 10^6 documents it is ~40 MB), with a
    // checksum of every byte before it.
    let mut out = Checksummed {
        to: std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(tmp)?),
        crc: crc32fast::Hasher::new(),
    };
    out.put(MAGIC)?;
    out.put(&(state.identity.len() as u32).to_le_bytes())?;
    out.put(&state.identity)?;
    out.put(&state.sequence.to_le_bytes())?;
    let (next_doc, last) = state.next_doc.unwrap_or((1, 0));
    out.put(&next_doc.to_le_bytes())?;
    out.put(&last.to_le_bytes())?;
    for (i, f) in filters.iter().enumerate() {
        let Some(layers) = f else { continue };
        let layers = layers
            .layers
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        out.put(&[i as u8])?;
        out.put(&(layers.len() as u32).to_le_bytes())?;
        for b in layers.iter() {
            out.put(&b.capacity.to_le_bytes())?;
            out.put(&b.inserted.load(Ordering::Relaxed).to_le_bytes())?;
            out.put(&(b.words.len() as u64).to_le_bytes())?;
            let mut chunk = Vec::with_capacity(1 << 16);
            for ws in b.words.chunks(1 << 13) {
                chunk.clear();
                for w in ws {
                    chunk.extend_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
                }
                out.put(&chunk)?;
            }
        }
    }
    let crc = out.crc.finalize().to_le_bytes();
    out.to.write_all(&crc)?;
    let f = out
        .to
        .into_inner()
        .map_err(std::io::IntoInnerError::into_error)?;
    f.sync_all()?;
    std::fs::rename(tmp, file)
}
