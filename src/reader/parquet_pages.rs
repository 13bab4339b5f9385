//! The pages of a Parquet column chunk, walked by their headers alone: to count those written
//! without a CRC, and to find a page whose values are over `--max-doc-bytes` on average before
//! it is decoded. The decoder verifies a page's CRC where one is present (the parquet crate's
//! `crc` feature): a damaged page costs its row group, counted as lost. A page without one is
//! decoded as it is, so damage inside it cannot be told from text (arrow-rs and, by default,
//! pyarrow write none); the run counts such pages and says so (`unchecked_pages`).
//!
//! A page header is a Thrift compact-protocol struct: its field 2 is the page's uncompressed
//! size, 3 its compressed size (the bytes after the header), 4 the optional CRC, and 5, 7 and
//! 8 the data, dictionary and data v2 page headers, whose field 1 is the page's number of
//! values. It is read with the `thrift` crate's protocol, every other field skipped, a header
//! at most [`MAX_HEADER`] bytes.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use thrift::protocol::{TCompactInputProtocol, TInputProtocol, TType};

/// The longest page header read (statistics of long strings can make one large).
const MAX_HEADER: usize = 1 << 20;

/// What a page header says: its length in bytes, the bytes of the page after it, whether it
/// carries a CRC, its bytes uncompressed and its number of values.
struct Header {
    len: u64,
    body: u64,
    crc: bool,
    bytes: u64,
    values: u64,
}

/// What the pages of the column chunks walked say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Pages {
    /// Pages without a CRC.
    pub(super) unchecked: u64,
    /// The page of the most bytes per value: (bytes uncompressed, values).
    pub(super) widest: (u64, u64),
}

impl Pages {
    fn add(&mut self, h: &Header) {
        self.unchecked += u64::from(!h.crc);
        let (b, v) = self.widest;
        // bytes / values > b / v, without dividing (a page of no value counts as one).
        if u128::from(h.bytes) * u128::from(v.max(1)) > u128::from(b) * u128::from(h.values.max(1))
        {
            self.widest = (h.bytes, h.values);
        }
    }

    /// Merge the pages of another column chunk.
    pub(super) fn merge(&mut self, o: Pages) {
        self.unchecked += o.unchecked;
        let (b, v) = o.widest;
        if u128::from(b) * u128::from(self.widest.1.max(1))
            > u128::from(self.widest.0) * u128::from(v.max(1))
        {
            self.widest = o.widest;
        }
    }
}

/// Field 1 (the number of values) of a page's nested data or dictionary header.
fn nested_values<P: TInputProtocol>(p: &mut P) -> Option<u64> {
    let mut values = 0;
    p.read_struct_begin().ok()?;
    loop {
        let f = p.read_field_begin().ok()?;
        match (f.field_type, f.id) {
            (TType::Stop, _) => break,
            (TType::I32, Some(1)) => values = u64::try_from(p.read_i32().ok()?).unwrap_or(0),
            (t, _) => p.skip(t).ok()?,
        }
        p.read_field_end().ok()?;
    }
    p.read_struct_end().ok()?;
    Some(values)
}

/// The header at the start of `buf`, or `None` when `buf` does not hold a whole valid one.
fn header(buf: &[u8]) -> Option<Header> {
    let mut rest = buf;
    let mut p = TCompactInputProtocol::new(&mut rest);
    let mut body = None;
    let mut crc = false;
    let (mut bytes, mut values) = (0, 0);
    p.read_struct_begin().ok()?;
    loop {
        let f = p.read_field_begin().ok()?;
        match (f.field_type, f.id) {
            (TType::Stop, _) => break,
            (TType::I32, Some(2)) => bytes = u64::try_from(p.read_i32().ok()?).unwrap_or(0),
            (TType::I32, Some(3)) => body = Some(p.read_i32().ok()?),
            (TType::Struct, Some(5 | 7 | 8)) => values = nested_values(&mut p)?,
            (TType::I32, Some(4)) => {
                p.read_i32().ok()?;
                crc = true;
            }
            (t, _) => p.skip(t).ok()?,
        }
        p.read_field_end().ok()?;
    }
    p.read_struct_end().ok()?;
    drop(p);
    let body = u64::try_from(body?).ok()?;
    Some(Header {
        len: (buf.len() - rest.len()) as u64,
        body,
        crc,
        bytes,
        values,
    })
}

/// The pages of the column chunk at bytes `start..start + len` of `file`. The walk stops at
/// the first header it cannot read (the decoder reports the damage itself); the pages walked
/// up to there stand.
pub(super) fn walk(file: &File, start: u64, len: u64) -> Pages {
    let mut count = Pages::default();
    let Ok(mut f) = file.try_clone() else {
        return count;
    };
    let end = start.saturating_add(len);
    let mut at = start;
    let mut buf = Vec::new();
    while at < end {
        let mut want = 4096;
        let h = loop {
            let room = (end - at).min(want as u64) as usize;
            buf.resize(room, 0);
            if f.seek(SeekFrom::Start(at)).is_err() || f.read_exact(&mut buf).is_err() {
                return count;
            }
            match header(&buf) {
                Some(h) => break h,
                None if room == want && want < MAX_HEADER => want *= 16,
                None => return count,
            }
        };
        count.add(&h);
        at = at.saturating_add(h.len).saturating_add(h.body);
    }
    count
}

#[cfg(test)]
mod tests {
    use super::header;

    /// A page header by hand: type, sizes, an optional CRC (Thrift compact protocol).
    fn written(body: i32, crc: Option<i32>) -> Vec<u8> {
        let zz = |v: i32| -> Vec<u8> {
            let mut n = ((v << 1) ^ (v >> 31)) as u32;
            let mut out = Vec::new();
            loop {
                if n < 0x80 {
                    out.push(n as u8);
                    return out;
                }
                out.push((n as u8 & 0x7f) | 0x80);
                n >>= 7;
            }
        };
        let mut b = vec![0x15];
        b.extend(zz(0)); // 1: type DATA_PAGE
        b.push(0x15);
        b.extend(zz(body)); // 2: uncompressed size
        b.push(0x15);
        b.extend(zz(body)); // 3: compressed size
        let next = if let Some(c) = crc {
            b.push(0x15);
            b.extend(zz(c)); // 4: crc
            0x1c // 5 (one on): the data page header
        } else {
            0x2c // 5 (two on)
        };
        b.push(next);
        b.push(0x15);
        b.extend(zz(7)); // its 1: num_values
        b.push(0x15);
        b.extend(zz(0)); // its 2: encoding
        b.push(0x00); // its end
        b.push(0x00);
        b
    }

    #[test]
    fn a_header_says_its_length_its_body_its_values_and_whether_it_has_a_crc() {
        let with = written(1000, Some(-7));
        let h = header(&[with.as_slice(), &[9; 20]].concat()).unwrap();
        assert_eq!((h.len, h.body, h.crc), (with.len() as u64, 1000, true));
        assert_eq!((h.bytes, h.values), (1000, 7));
        let without = written(300, None);
        let h = header(&without).unwrap();
        assert_eq!((h.len, h.body, h.crc), (without.len() as u64, 300, false));
        assert_eq!((h.bytes, h.values), (300, 7));
        assert!(header(&without[..without.len() - 1]).is_none(), "cut short");
        assert!(header(&[0x19, 0xff, 0xff, 0xff]).is_none(), "garbage");
    }
}
