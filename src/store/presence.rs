//! An in-memory presence filter in front of any store: for the column families scanned by
//! prefix (`nshash`, `simhash`), a Bloom filter of every key prefix written, so that a scan of
//! one prefix that no key has returns at once instead of seeking every table file (RocksDB's
//! own filters answer the same question, at a few microseconds per seek; most lookups of new
//! documents ask only such questions).
//!
//! Exact by construction: every prefix in the base store was inserted when the filter was
//! built (a full scan, an empty store, or a saved filter of exactly this store state) or is
//! inserted by [`Store::write`] before the base store sees the write, and Bloom filters have
//! no false negatives; a false positive only costs the seek. Deleted keys stay in the filter
//! (a false positive). Memory: ~10 bits per key.
//!
//! The filter grows in layers: when the newest layer holds as many keys as it was sized for,
//! a layer twice its size is added (a lookup asks every layer), so a filter started on an
//! empty store stays selective however many documents the store takes.
//!
//! Saved with the store (`fpdb-presence` in a RocksDB store's directory) by
//! [`Store::save_filter`] and when dropped, tagged with the store's state: its RocksDB
//! identity, last write sequence number and next document seq. An open uses it as it is when
//! nothing was written since the save ([`Fit::Current`]); when this same store was written
//! since (a run that was killed, or kept no filter), it holds every key of the saved state and
//! the opener reads the documents written since (seqs only grow: those from the saved next
//! seq on) into it ([`Fit::Behind`], [`Store::note_present`]). A file of another store, of a
//! later state (a store directory put back from an older copy) or damaged is never used, and
//! is removed by the next writer.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::RwLock;

use super::rocks::{prefix_len, within_prefix};
use super::schema::{self, meta};
use super::{Batch, Cf, Op, Store};
use crate::error::{Error, Result};

/// Hash positions per key (~1% false positives at 10 bits per key).
const PROBES: u64 = 7;

/// Keys the first layer of a filter started on an empty store is sized for (~1.3 MB).
const FIRST_LAYER_KEYS: u64 = 1 << 20;

/// Most memory the filter of one family takes (both: twice that). Layers of 1.3, 2.6, 5.2, ...
/// MB stop at 78.6 MB (63 million prefixes at full selectivity: ~5 million article-length
/// documents, whose ~13 postings and 10 simhash keys each fill the two families alike);
/// past it the newest layer takes the further keys and answers "maybe" ever more often.
const MAX_FAMILY_BYTES: u64 = 80 << 20;

/// The saved filter's file in a store's directory.
pub const FILE_NAME: &str = "fpdb-presence";

/// First bytes of the file, with its format version.
const MAGIC: &[u8; 8] = b"FPDBPRS3";

/// First bytes of a version 2 file, whose header lacks the next document seq: used only at
/// exactly the state it was saved at.
const MAGIC_2: &[u8; 8] = b"FPDBPRS2";

/// A store's state, as a saved filter is tagged with.
#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
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
fn last_doc(base: &dyn Store, next_doc: u64) -> Option<u32> {
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
    fn of(base: &dyn Store, dir: &Path) -> Option<State> {
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
    fn fit(&self, now: &State, base: &dyn Store) -> Fit {
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

/// A Bloom filter whose bits are set with atomic ORs, so readers need no lock.
struct Bloom {
    words: Vec<AtomicU64>,
    /// Bits in `words`.
    bits: u64,
    /// Keys it is sized for, and keys inserted (repeats counted: a layer fills early, never late).
    capacity: u64,
    inserted: AtomicU64,
}

impl Bloom {
    /// Words of a filter sized for `keys`.
    fn words_for(keys: u64) -> u64 {
        // Not rounded to a power of two (up to twice the memory): positions are mapped onto
        // the bits by a multiply-shift instead of a mask.
        keys.saturating_mul(10).max(1 << 16).div_ceil(64)
    }

    /// Bytes of a filter sized for `keys`.
    fn bytes_for(keys: u64) -> u64 {
        Self::words_for(keys) * 8
    }

    fn bytes(&self) -> u64 {
        self.words.len() as u64 * 8
    }

    fn with_capacity(keys: u64) -> Bloom {
        let words = Self::words_for(keys);
        Bloom {
            words: (0..words).map(|_| AtomicU64::new(0)).collect(),
            bits: words * 64,
            capacity: keys.max(1),
            inserted: AtomicU64::new(0),
        }
    }

    fn full(&self) -> bool {
        self.inserted.load(Ordering::Relaxed) >= self.capacity
    }

    fn positions(&self, prefix: &[u8]) -> impl Iterator<Item = u64> + '_ {
        // splitmix64 of the prefix bytes (at most 8 are used: the prefixes are 4 and 8 bytes).
        let mut x = prefix.len() as u64;
        for &b in prefix.iter().take(8) {
            x = (x << 8) | u64::from(b);
        }
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
        let (h1, h2) = (x, (x >> 32) | 1);
        let bits = u128::from(self.bits);
        (0..PROBES).map(move |i| {
            let x = h1
                .wrapping_add(i.wrapping_mul(h2))
                .wrapping_mul(0x9e37_79b9_7f4a_7c15);
            ((u128::from(x) * bits) >> 64) as u64
        })
    }

    fn insert(&self, prefix: &[u8]) {
        for p in self.positions(prefix) {
            self.words[(p >> 6) as usize].fetch_or(1 << (p & 63), Ordering::Relaxed);
        }
        self.inserted.fetch_add(1, Ordering::Relaxed);
    }

    fn may_contain(&self, prefix: &[u8]) -> bool {
        self.positions(prefix)
            .all(|p| self.words[(p >> 6) as usize].load(Ordering::Relaxed) & (1 << (p & 63)) != 0)
    }
}

/// Bloom filters of growing size: a key is in the newest; a lookup asks them all. They stop
/// growing at `max_bytes`: past it the newest takes every further key beyond its size, so
/// memory stays bounded whatever the store's size and the filter stays exact (a Bloom filter
/// filled past its size answers "maybe" more often, never "no" for a key it holds).
struct Layers {
    layers: RwLock<Vec<Bloom>>,
    max_bytes: u64,
    /// No layer is added any more (`max_bytes` reached).
    capped: AtomicBool,
}

impl Layers {
    fn new(first: Bloom) -> Layers {
        Self::with_max(first, MAX_FAMILY_BYTES)
    }

    fn with_max(first: Bloom, max_bytes: u64) -> Layers {
        Self::of(vec![first], max_bytes)
    }

    fn of(layers: Vec<Bloom>, max_bytes: u64) -> Layers {
        Layers {
            layers: RwLock::new(layers),
            max_bytes,
            capped: AtomicBool::new(false),
        }
    }

    fn insert(&self, prefix: &[u8]) {
        {
            let layers = self
                .layers
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let last = layers.last().expect("one layer at least");
            if !last.full() || self.capped.load(Ordering::Relaxed) {
                last.insert(prefix);
                return;
            }
        }
        let mut layers = self
            .layers
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let last = layers.last().expect("one layer at least");
        if last.full() && !self.capped.load(Ordering::Relaxed) {
            let keys = last.capacity.saturating_mul(2);
            let have: u64 = layers.iter().map(Bloom::bytes).sum();
            if have.saturating_add(Bloom::bytes_for(keys)) <= self.max_bytes {
                layers.push(Bloom::with_capacity(keys));
            } else {
                self.capped.store(true, Ordering::Relaxed);
            }
        }
        layers.last().expect("one layer at least").insert(prefix);
    }

    fn may_contain(&self, prefix: &[u8]) -> bool {
        let layers = self
            .layers
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        layers.iter().rev().any(|b| b.may_contain(prefix))
    }

    fn bytes(&self) -> u64 {
        let layers = self
            .layers
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        layers.iter().map(Bloom::bytes).sum()
    }
}

/// How a new [`Presence`] filter starts (a saved one is loaded by [`Presence::load_saved`]).
pub enum Start {
    /// Every key of the base store read once.
    Scan,
    /// Empty: the base store holds no key of the filtered families.
    Empty,
}

/// `base` with presence filters on its prefix-scanned column families.
pub struct Presence {
    base: Box<dyn Store>,
    filters: Vec<Option<Layers>>,
    /// Where the filter is saved (a RocksDB store's directory), if anywhere.
    dir: Option<PathBuf>,
    /// Whether the filter holds writes the saved file lacks.
    dirty: AtomicBool,
}

impl Presence {
    /// Wrap `base`, reading every key of its prefix-scanned column families once. Not saved
    /// anywhere.
    pub fn new(base: Box<dyn Store>) -> Result<Presence> {
        Self::start(base, None, Start::Scan)
    }

    /// Wrap `base` (a store in `dir`, where the filter is saved, when given) with a new filter
    /// started as `start` says.
    pub fn start(base: Box<dyn Store>, dir: Option<&Path>, start: Start) -> Result<Presence> {
        let filters = match start {
            // One pass per family, the families on threads of their own, each filter sized
            // from the store's estimate of its keys (layers are added if it was low).
            Start::Scan => std::thread::scope(|scope| {
                let jobs: Vec<_> = Cf::ALL
                    .iter()
                    .map(|&cf| {
                        let base = &base;
                        prefix_len(cf).map(|n| {
                            scope.spawn(move || -> Result<Layers> {
                                let keys = base.estimate_keys(cf).unwrap_or(0);
                                // Sized for the keys and half as many more, within the
                                // family's most memory.
                                let most = MAX_FAMILY_BYTES * 8 / 10;
                                let layers = Layers::new(Bloom::with_capacity(
                                    keys.saturating_add(keys / 2)
                                        .max(FIRST_LAYER_KEYS)
                                        .min(most),
                                ));
                                let end = [0xffu8; 32];
                                base.scan(cf, &[], &end, &mut |k, _| {
                                    layers.insert(&k[..n.min(k.len())]);
                                    true
                                })?;
                                Ok(layers)
                            })
                        })
                    })
                    .collect();
                jobs.into_iter()
                    .map(|j| match j {
                        None => Ok(None),
                        Some(h) => h.join().expect("a filter scan panicked").map(Some),
                    })
                    .collect::<Result<Vec<_>>>()
            })?,
            Start::Empty => Cf::ALL
                .iter()
                .map(|&cf| {
                    prefix_len(cf).map(|_| Layers::new(Bloom::with_capacity(FIRST_LAYER_KEYS)))
                })
                .collect(),
        };
        Ok(Presence {
            base,
            filters,
            dir: dir.map(Path::to_path_buf),
            dirty: AtomicBool::new(true),
        })
    }

    /// Wrap `base` (the store in `dir`) with the filter saved in `dir` when it fits the
    /// store's present state, with how it fits ([`Fit::Behind`]: the caller must read the
    /// documents written since into it, [`Store::note_present`], before any lookup);
    /// `Err(base)` back otherwise. An unusable saved file is removed when `base` is writable.
    #[allow(clippy::type_complexity)]
    pub fn load_saved(
        base: Box<dyn Store>,
        dir: &Path,
    ) -> Result<std::result::Result<(Presence, Fit), Box<dyn Store>>> {
        let file = dir.join(FILE_NAME);
        match State::of(base.as_ref(), dir).and_then(|now| load(&file, &now, base.as_ref())) {
            Some((filters, fit, v2)) => Ok(Ok((
                Presence {
                    base,
                    filters,
                    dir: Some(dir.to_path_buf()),
                    // Saved again (at the new state) once caught up, and a version 2
                    // file in the present version.
                    dirty: AtomicBool::new(fit != Fit::Current || v2),
                },
                fit,
            ))),
            None => {
                remove_unusable(base.as_ref(), dir)?;
                Ok(Err(base))
            }
        }
    }

    /// Memory the filters take, in bytes.
    pub fn bytes(&self) -> u64 {
        self.filters.iter().flatten().map(Layers::bytes).sum()
    }

    /// Whether `[start, end)` may hold a key: false only when the range lies within one prefix
    /// that was never written.
    fn may_hold(&self, cf: Cf, start: &[u8], end: &[u8]) -> bool {
        match (self.filters.get(cf.index()), prefix_len(cf)) {
            (Some(Some(layers)), Some(n)) if within_prefix(cf, start, end) => {
                layers.may_contain(&start[..n])
            }
            _ => true,
        }
    }

    /// Put the prefix of `key` (of family `cf`) into its filter, if the family has one.
    fn insert(&self, cf: Cf, key: &[u8]) {
        if let (Some(Some(layers)), Some(n)) = (self.filters.get(cf.index()), prefix_len(cf)) {
            layers.insert(&key[..n.min(key.len())]);
        }
    }

    /// Save the filter next to the store, tagged with its present state (when it has a place
    /// and holds writes the saved file lacks). Written to a temporary file and renamed, so a
    /// crash leaves the old file or the new one, whole.
    fn save(&self) -> Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        if self.base.read_only() || !self.dirty.load(Ordering::Relaxed) {
            return Ok(());
        }
        let Some(state) = State::of(self.base.as_ref(), dir) else {
            return Ok(());
        };
        let file = dir.join(FILE_NAME);
        let tmp = dir.join(format!("{FILE_NAME}.tmp"));
        // Streamed (the filter is not copied: at 10^6 documents it is ~40 MB), with a
        // checksum of every byte before it.
        let write = || -> std::io::Result<()> {
            let mut out = Checksummed {
                to: std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(&tmp)?),
                crc: crc32fast::Hasher::new(),
            };
            out.put(MAGIC)?;
            out.put(&(state.identity.len() as u32).to_le_bytes())?;
            out.put(&state.identity)?;
            out.put(&state.sequence.to_le_bytes())?;
            let (next_doc, last) = state.next_doc.unwrap_or((1, 0));
            out.put(&next_doc.to_le_bytes())?;
            out.put(&last.to_le_bytes())?;
            for (i, f) in self.filters.iter().enumerate() {
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
            std::fs::rename(&tmp, &file)
        };
        if let Err(e) = write() {
            // The old file (if any) stays, and no longer matches the store: it is ignored.
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::io(&file, e));
        }
        self.dirty.store(false, Ordering::Relaxed);
        Ok(())
    }
}

impl Drop for Presence {
    fn drop(&mut self) {
        // Best effort: a filter not saved is rebuilt or done without by the next open.
        let _ = self.save();
    }
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
struct Checksummed<W: Write> {
    to: W,
    crc: crc32fast::Hasher,
}

impl<W: Write> Checksummed<W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.crc.update(bytes);
        self.to.write_all(bytes)
    }
}

/// The filters saved in `file`, when it is whole and fits the store's state `now`, with how it
/// fits and whether the file is of version 2. Read as a stream (no copy of the file in memory
/// besides the filters themselves).
fn load(file: &Path, now: &State, base: &dyn Store) -> Option<(Vec<Option<Layers>>, Fit, bool)> {
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
    for _ in Cf::ALL.iter().filter(|&&cf| prefix_len(cf).is_some()) {
        let i = r.take(1)?[0] as usize;
        if i >= Cf::ALL.len() || prefix_len(Cf::ALL[i]).is_none() || filters[i].is_some() {
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
fn header<R: Read>(r: &mut Verified<R>) -> Option<State> {
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
struct Verified<R: Read> {
    from: R,
    crc: crc32fast::Hasher,
    left: u64,
}

impl<R: Read> Verified<R> {
    fn take(&mut self, n: usize) -> Option<Vec<u8>> {
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

impl Store for Presence {
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.base.get(cf, key)
    }

    fn scan(
        &self,
        cf: Cf,
        start: &[u8],
        end: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        if !self.may_hold(cf, start, end) {
            return Ok(());
        }
        self.base.scan(cf, start, end, visit)
    }

    fn scan_ranges(
        &self,
        cf: Cf,
        ranges: &[(&[u8], &[u8])],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        let kept: Vec<(&[u8], &[u8])> = ranges
            .iter()
            .copied()
            .filter(|(s, e)| self.may_hold(cf, s, e))
            .collect();
        if kept.is_empty() {
            return Ok(());
        }
        self.base.scan_ranges(cf, &kept, visit)
    }

    fn write(&self, batch: Batch) -> Result<()> {
        // Any write changes the store's state: the saved filter no longer matches it.
        self.dirty.store(true, Ordering::Relaxed);
        // Into the filter first: a reader that sees the key in the base store finds its prefix.
        for op in batch.ops() {
            if let Op::Put(cf, k, _) = op {
                self.insert(*cf, k);
            }
        }
        self.base.write(batch)
    }

    fn note_present(&self, cf: Cf, key: &[u8]) {
        self.dirty.store(true, Ordering::Relaxed);
        self.insert(cf, key);
    }

    fn sync(&self) -> Result<()> {
        self.base.sync()
    }

    fn save_filter(&self) -> Result<()> {
        self.save()
    }

    fn filter_bytes(&self) -> Option<u64> {
        Some(self.bytes())
    }

    // Passed to the base store as they are.
    crate::store::forward! {
        settle, syncer, flush, last_sequence, read_only, shared, prefetch, prefetch_keys, end_prefetch,
        acquire_writer, release_writer, checkpoint, compact, verify_checksums, cf_sizes,
        disk_size,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RocksStore;

    fn posting(i: u64) -> Vec<u8> {
        let mut k = i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes().to_vec();
        k.extend_from_slice(&i.to_be_bytes());
        k
    }

    fn write(s: &dyn Store, range: std::ops::Range<u64>) {
        let mut b = Batch::new();
        for i in range {
            b.put(Cf::Nshash, posting(i), Vec::new());
        }
        s.write(b).unwrap();
    }

    fn saved(dir: &Path) -> std::result::Result<Presence, Box<dyn Store>> {
        saved_fit(dir).map(|(p, _)| p)
    }

    fn saved_fit(dir: &Path) -> std::result::Result<(Presence, Fit), Box<dyn Store>> {
        let base = Box::new(RocksStore::open(dir, false).unwrap());
        Presence::load_saved(base, dir).unwrap()
    }

    /// A document `id` stored at seq `seq - 1`, and `seq` the next one.
    fn next_doc(s: &dyn Store, seq: u64, id: &str) {
        let rec = schema::DocRecord {
            id: id.into(),
            url: None,
            title: None,
            description: None,
            keywords: None,
            chars: 0,
            nshash: Vec::new(),
            simhash: None,
            sketch: Vec::new(),
            shingles: Vec::new(),
            similar_id: 1,
            matches: Vec::new(),
            time: 0,
            bands: Vec::new(),
            keys: Vec::new(),
            key_weights: Vec::new(),
            order: Vec::new(),
            figures: Vec::new(),
        };
        let mut b = Batch::new();
        b.put(Cf::Docs, schema::u64_key(seq - 1), schema::encode_doc(&rec));
        b.put(Cf::Meta, meta::NEXT_SEQ, schema::u64_key(seq).to_vec());
        s.write(b).unwrap();
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }

    #[test]
    fn layers_grow_and_keep_every_key() {
        let layers = Layers::new(Bloom::with_capacity(1000));
        for i in 0..20_000u64 {
            layers.insert(&posting(i)[..8]);
        }
        let n = layers.layers.read().unwrap().len();
        assert!(n >= 4, "{n} layers for 20x the first layer's keys");
        assert!((0..20_000u64).all(|i| layers.may_contain(&posting(i)[..8])));
        // Selective after growing: a filter of one saturated layer answers yes to everything.
        let fp = (1_000_000..1_020_000u64)
            .filter(|&i| layers.may_contain(&posting(i)[..8]))
            .count();
        assert!(fp < 20_000 / 20, "{fp} false positives in 20,000");
    }

    #[test]
    fn layers_stop_growing_at_their_most_memory_and_keep_every_key() {
        // Room for the first two layers (8 KiB at the smallest size, then 15 KB) but not a
        // third (30 KB).
        let layers = Layers::with_max(Bloom::with_capacity(6000), 24 << 10);
        for i in 0..200_000u64 {
            layers.insert(&posting(i)[..8]);
        }
        assert_eq!(layers.layers.read().unwrap().len(), 2);
        assert!(layers.bytes() <= 24 << 10, "{}", layers.bytes());
        // Filled far past its size: no key is ever missed, most absent ones are "maybe".
        assert!((0..200_000u64).all(|i| layers.may_contain(&posting(i)[..8])));
        let fp = (1_000_000..1_010_000u64)
            .filter(|&i| layers.may_contain(&posting(i)[..8]))
            .count();
        assert!(fp > 9_000, "{fp}");
    }

    #[test]
    fn saved_filter_is_used_only_for_the_state_it_was_saved_at() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path();
        {
            let base = Box::new(RocksStore::open(path, true).unwrap());
            let p = Presence::start(base, Some(path), Start::Empty).unwrap();
            write(&p, 0..5000);
            p.flush().unwrap();
            p.save_filter().unwrap();
        }
        assert!(path.join(FILE_NAME).exists());
        // Reopened unchanged: the saved filter, with every key written before.
        {
            let p = saved(path)
                .ok()
                .expect("the saved filter matches the store");
            for i in 0..5000 {
                let k = posting(i);
                assert!(p.may_hold(Cf::Nshash, &k[..8], &[&k[..8], &[0xff; 9][..]].concat()));
            }
            // Written through the filter, then dropped without a flush: saved again.
            write(&p, 5000..6000);
        }
        {
            let p = saved(path).ok().expect("saved when dropped");
            let k = posting(5500);
            assert!(p.may_hold(Cf::Nshash, &k[..8], &[&k[..8], &[0xff; 9][..]].concat()));
        }
        // A writer without the filter changes the store: the file is behind it, from the
        // next document seq it was saved at.
        {
            let s = RocksStore::open(path, false).unwrap();
            write(&s, 6000..6001);
            next_doc(&s, 7, "d6");
        }
        let (p, fit) = saved_fit(path)
            .ok()
            .expect("of an earlier state of this store");
        assert_eq!(
            fit,
            Fit::Behind {
                from: 1,
                documents: 6
            }
        );
        drop(p);
        assert_eq!(
            saved_fit(path).ok().map(|(_, f)| f),
            Some(Fit::Current),
            "saved caught up"
        );
    }

    #[test]
    fn a_filter_of_a_later_state_or_another_store_is_never_used() {
        let dir = tempfile::tempdir().unwrap();
        let (path, early, other) = (
            dir.path().join("s"),
            dir.path().join("early"),
            dir.path().join("other"),
        );
        {
            let base = Box::new(RocksStore::open(&path, true).unwrap());
            let p = Presence::start(base, Some(&path), Start::Empty).unwrap();
            write(&p, 0..100);
            next_doc(&p, 101, "d100");
            p.flush().unwrap();
        }
        // A copy of the store as it was then, before more writes.
        copy_dir(&path, &early);
        {
            let p = saved(&path).ok().expect("current");
            write(&p, 100..200);
            next_doc(&p, 201, "d200");
            p.flush().unwrap();
        }
        let later = std::fs::read(path.join(FILE_NAME)).unwrap();
        // The later filter put into the earlier copy: its keys 100..200 are not there, and
        // the documents that copy takes next reuse those seqs. Not used, and removed.
        std::fs::write(early.join(FILE_NAME), &later).unwrap();
        assert!(saved(&early).is_err());
        assert!(!early.join(FILE_NAME).exists());
        // Nor by another store (another RocksDB identity), even at a later state.
        {
            let s = RocksStore::open(&other, true).unwrap();
            write(&s, 0..300);
            next_doc(&s, 301, "d300");
        }
        std::fs::write(other.join(FILE_NAME), &later).unwrap();
        assert!(saved(&other).is_err());
        // A copy of the store that parted from it before the save and has since gone
        // further (a later sequence number, more documents): the document it holds at the
        // saved filter's last seq is not the one the filter saw. Not used.
        {
            let s = RocksStore::open(&early, false).unwrap();
            write(&s, 1000..1300);
            next_doc(&s, 150, "other-149");
            next_doc(&s, 201, "other-200");
            next_doc(&s, 260, "other-259");
        }
        std::fs::write(early.join(FILE_NAME), &later).unwrap();
        assert!(saved(&early).is_err());
        // The same store gone further: behind it (one more read, and it is used).
        {
            let s = RocksStore::open(&path, false).unwrap();
            next_doc(&s, 260, "d259");
        }
        assert_eq!(
            saved_fit(&path).ok().map(|(_, f)| f),
            Some(Fit::Behind {
                from: 201,
                documents: 59
            })
        );
        // A writer that keeps no filter removes an unusable file too.
        std::fs::write(early.join(FILE_NAME), &later).unwrap();
        {
            let s = RocksStore::open(&early, false).unwrap();
            remove_unusable(&s, &early).unwrap();
        }
        assert!(!early.join(FILE_NAME).exists());
    }

    #[test]
    fn a_failed_save_is_an_error_and_loses_nothing_stored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path();
        let base = Box::new(RocksStore::open(path, true).unwrap());
        // The temporary file's name taken by a directory: the write fails.
        let blocked = path.join(format!("{FILE_NAME}.tmp"));
        std::fs::create_dir(&blocked).unwrap();
        let p = Presence::start(base, Some(path), Start::Empty).unwrap();
        write(&p, 0..100);
        p.flush().unwrap();
        assert!(p.save_filter().is_err());
        drop(p);
        assert!(!path.join(FILE_NAME).exists());
        assert!(blocked.is_dir(), "left as it was");
        let s = RocksStore::open(path, false).unwrap();
        let mut n = 0;
        s.scan(Cf::Nshash, &[], &[0xff; 17], &mut |_, _| {
            n += 1;
            true
        })
        .unwrap();
        assert_eq!(n, 100);
    }

    /// A file written by the previous version (header: identity and sequence number as one
    /// tag, no document seq) loads at exactly the state it was saved at, is rewritten in the
    /// present version, and is not used once the store has changed (it cannot be caught up).
    #[test]
    fn version_2_file_loads_only_at_its_state_and_is_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path();
        {
            let base = Box::new(RocksStore::open(path, true).unwrap());
            let p = Presence::start(base, Some(path), Start::Empty).unwrap();
            write(&p, 0..100);
            p.flush().unwrap();
            p.save_filter().unwrap();
        }
        // The same filter with a version 2 header.
        let file = path.join(FILE_NAME);
        let v3 = std::fs::read(&file).unwrap();
        let n = u32::from_le_bytes(v3[8..12].try_into().unwrap()) as usize;
        let (identity, sequence) = (&v3[12..12 + n], &v3[12 + n..20 + n]);
        let body = &v3[12 + n + 8 + 8 + 4..v3.len() - 4];
        let mut v2 = MAGIC_2.to_vec();
        v2.extend_from_slice(&((n + 8) as u32).to_le_bytes());
        v2.extend_from_slice(identity);
        v2.extend_from_slice(sequence);
        v2.extend_from_slice(body);
        v2.extend_from_slice(&crc32fast::hash(&v2).to_le_bytes());
        std::fs::write(&file, &v2).unwrap();
        {
            let (p, fit) = saved_fit(path).ok().expect("a version 2 file at its state");
            assert_eq!(fit, Fit::Current);
            let k = posting(50);
            assert!(p.may_hold(Cf::Nshash, &k[..8], &[&k[..8], &[0xff; 9][..]].concat()));
        }
        assert_eq!(
            &std::fs::read(&file).unwrap()[..8],
            MAGIC,
            "rewritten when closed"
        );
        // A version 2 file behind the store: not used (nothing says where to catch up from).
        std::fs::write(&file, &v2).unwrap();
        {
            let s = RocksStore::open(path, false).unwrap();
            write(&s, 100..101);
        }
        assert!(saved(path).is_err());
        assert!(!file.exists());
    }

    #[test]
    fn damaged_saved_filter_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path();
        {
            let base = Box::new(RocksStore::open(path, true).unwrap());
            let p = Presence::start(base, Some(path), Start::Empty).unwrap();
            write(&p, 0..100);
            p.flush().unwrap();
            p.save_filter().unwrap();
        }
        let file = path.join(FILE_NAME);
        let mut bytes = std::fs::read(&file).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x10;
        std::fs::write(&file, &bytes).unwrap();
        assert!(saved(path).is_err());
        // Cut short: ignored too.
        {
            let base = Box::new(RocksStore::open(path, false).unwrap());
            let p = Presence::start(base, Some(path), Start::Scan).unwrap();
            p.flush().unwrap();
            p.save_filter().unwrap();
        }
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&file, &bytes[..bytes.len() - 100]).unwrap();
        assert!(saved(path).is_err());
    }
}
