//! WARC records, one at a time, in bounded memory: the header block is parsed, and the body is
//! read only when the caller wants it and it is not larger than the limit; otherwise it is
//! streamed past. (The `warc` crate reads every body whole, so one 2 GB video record would
//! take 2 GB.) A record that does not parse is reported, and reading resumes at the next line
//! that starts with `WARC/`. A damaged gzip member is reported as such and reading resumes
//! with the next member; a Content-Length that runs past the end of the input or past the
//! record's end is an error for that record only: a file is read again from the record's body
//! ([`Rewind`]) to find the records after it.

use super::framing::{
    next_nonblank_line, read_body, read_line, trim_eol, BodyError, Framed, Framing,
};
pub use super::framing::{Body, HEAD};
use super::gzip::is_damage;
use super::source::Rewind;

/// Most header bytes of one record.
const MAX_HEADER: usize = 1 << 20;

/// A record's header block.
#[derive(Debug, Clone, Default)]
pub struct Header {
    /// `WARC/1.0`, `WARC/1.1`, ...
    pub version: String,
    /// Fields in order, names lower-cased.
    fields: Vec<(String, String)>,
    /// `Content-Length`.
    pub content_length: u64,
}

impl Header {
    /// The first value of field `name` (any case).
    pub fn get(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.fields
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Streaming reader of WARC records.
pub struct Records<R> {
    f: Framed<R, Warc>,
}

/// WARC's start line: `WARC/` and its version.
struct Warc;

impl Framing for Warc {
    type Start = String;

    fn start(line: &[u8]) -> Option<String> {
        line.starts_with(b"WARC/")
            .then(|| String::from_utf8_lossy(line).into_owned())
    }
}

impl<R: Rewind> Records<R> {
    /// Records of `reader` (already decompressed).
    pub fn new(reader: R) -> Self {
        Records {
            f: Framed::new(reader),
        }
    }

    /// Read no more of this input.
    pub fn stop(&mut self) {
        self.f.stop();
    }

    /// The next record. `want` sees the header and says whether the body is needed; a wanted
    /// body over `max` bytes is not read ([`Body::TooLarge`]). `None` at the end of input.
    #[expect(
        clippy::too_many_lines,
        reason = "one framing loop: header, length, body, resync; its states share the buffer"
    )]
    pub fn next_record(
        &mut self,
        max: usize,
        want: impl FnOnce(&Header) -> bool,
    ) -> Option<Result<(Header, Body), String>> {
        if let Some(damage) = self.f.damage.take() {
            return self.f.corrupt(damage);
        }
        if self.f.done {
            return None;
        }
        let mut line = Vec::new();
        // The version line (blank lines between records are tolerated).
        let version = match self.f.pending.take() {
            Some(v) => v,
            None => match next_nonblank_line(&mut self.f.reader, &mut line) {
                Err(e) => return self.f.read_failed(e),
                Ok(None) => {
                    self.f.done = true;
                    return None;
                }
                Ok(Some(_)) if line.starts_with(b"WARC/") => {
                    String::from_utf8_lossy(trim_eol(&line)).into_owned()
                }
                Ok(Some(_)) => return self.f.corrupt("expected a `WARC/` version line".into()),
            },
        };
        let mut h = Header {
            version,
            ..Default::default()
        };
        let mut size = 0;
        let mut length = None;
        loop {
            let (n, cut) = match read_line(&mut self.f.reader, &mut line) {
                Ok(x) => x,
                Err(e) => return self.f.read_failed(e),
            };
            if n == 0 {
                return self.f.fail("input ends inside a record header".into());
            }
            size += n;
            if cut || size > MAX_HEADER {
                return self.f.corrupt("record header too long".into());
            }
            let l = trim_eol(&line);
            if l.is_empty() {
                break;
            }
            let text = String::from_utf8_lossy(l);
            if l[0] == b' ' || l[0] == b'\t' {
                // Continuation of the previous field.
                if let Some((_, v)) = h.fields.last_mut() {
                    if !v.is_empty() {
                        v.push(' ');
                    }
                    v.push_str(text.trim());
                }
                continue;
            }
            let Some((k, v)) = text.split_once(':') else {
                return self.f.corrupt(format!("bad header line `{}`", text.trim()));
            };
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
            if k == "content-length" && length.is_none() {
                match v.parse::<u64>() {
                    Ok(n) => length = Some(n),
                    Err(_) => return self.f.corrupt(format!("bad Content-Length `{v}`")),
                }
            }
            h.fields.push((k, v));
        }
        let Some(len) = length else {
            return self.f.corrupt("record without Content-Length".into());
        };
        h.content_length = len;
        let body_at = self.f.reader.position();
        let body = match read_body(&mut self.f.reader, len, want(&h), max) {
            Ok(body) => body,
            Err(BodyError::Io(e)) => return self.f.read_failed(e),
            Err(BodyError::Truncated { after }) => {
                let reason = format!(
                    "truncated record: Content-Length {len}, input ends after {after} bytes"
                );
                return match self.f.reader.rewind_to(body_at) {
                    // A length that lies: the records after this one are still there.
                    Ok(true) => self.f.corrupt(reason),
                    _ => self.f.fail(reason),
                };
            }
        };
        // The record ends with CRLF CRLF; anything else means Content-Length was wrong.
        let mut got = 0;
        while got < 4 {
            match self.f.reader.fill_buf() {
                Ok([]) => break,
                Ok(buf) if buf[0] == b'\r' || buf[0] == b'\n' => {
                    self.f.reader.consume(1);
                    got += 1;
                }
                Ok(_) => break,
                // Damage past this record's bytes: the next record's loss.
                Err(e) if is_damage(&e) => {
                    self.f.damage = Some(e.to_string());
                    break;
                }
                Err(e) => return self.f.read_failed(e),
            }
        }
        let at_end = self.f.damage.is_some()
            || match self.f.reader.fill_buf() {
                Ok(rest) => rest.is_empty(),
                Err(e) if is_damage(&e) => {
                    self.f.damage = Some(e.to_string());
                    true
                }
                Err(e) => return self.f.read_failed(e),
            };
        if got < 2 && !at_end {
            return self.f.misframed(
                body_at,
                format!("record not followed by a blank line (Content-Length {len} wrong?)"),
            );
        }
        Some(Ok((h, body)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: &str, body: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI:\r\n  http://x/{kind}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(body);
        r.extend_from_slice(b"\r\n\r\n");
        r
    }

    type Kept = Result<(String, Option<Vec<u8>>), String>;

    fn all(data: &[u8], max: usize) -> Vec<Kept> {
        let mut r = Records::new(data);
        let mut out = Vec::new();
        while let Some(x) = r.next_record(max, |h| h.get("warc-type") != Some("request")) {
            out.push(x.map(|(h, b)| {
                (
                    format!(
                        "{} {}",
                        h.get("WARC-Type").unwrap(),
                        h.get("warc-target-uri").unwrap()
                    ),
                    match b {
                        Body::Read(v) => Some(v),
                        Body::Skipped => None,
                        Body::TooLarge(head) => Some([&b"<too large>"[..], &head[..10]].concat()),
                    },
                )
            }));
        }
        out
    }

    #[test]
    fn records_are_read_skipped_or_too_large() {
        let mut data = record("response", b"hello\r\n\r\nworld");
        data.extend(record("request", b"GET /"));
        data.extend(record("resource", &[b'x'; 100]));
        let got = all(&data, 50);
        assert_eq!(got.len(), 3);
        assert_eq!(
            got[0].as_ref().unwrap(),
            &(
                "response http://x/response".to_string(),
                Some(b"hello\r\n\r\nworld".to_vec())
            )
        );
        assert_eq!(got[1].as_ref().unwrap().1, None);
        assert_eq!(
            got[2].as_ref().unwrap().1.as_deref(),
            Some(&b"<too large>xxxxxxxxxx"[..])
        );
    }

    #[test]
    fn garbage_is_reported_and_the_next_record_read() {
        let mut data = record("response", b"one");
        data.extend_from_slice(b"garbage line\r\nmore garbage\r\n");
        data.extend(record("response", b"two"));
        // Content-Length too small: the rest of the body is not a blank line.
        data.extend_from_slice(
            b"WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 2\r\n\r\nthree\r\n\r\n",
        );
        data.extend(record("response", b"four"));
        data.extend_from_slice(b"WARC/1.0\r\nWARC-Type: response\r\n\r\n");
        data.extend(record("response", b"five"));
        let got = all(&data, 1000);
        let bodies: Vec<String> = got
            .iter()
            .map(|r| match r {
                Ok((_, b)) => String::from_utf8_lossy(b.as_deref().unwrap_or(b"")).into_owned(),
                Err(e) => format!("ERR {e}"),
            })
            .collect();
        assert_eq!(bodies[0], "one");
        assert!(
            bodies[1].starts_with("ERR expected a `WARC/`"),
            "{bodies:?}"
        );
        assert_eq!(bodies[2], "two");
        assert!(
            bodies[3].starts_with("ERR record not followed"),
            "{bodies:?}"
        );
        assert_eq!(bodies[4], "four");
        assert!(bodies[5].contains("without Content-Length"), "{bodies:?}");
        assert_eq!(bodies[6], "five");
        assert_eq!(bodies.len(), 7);
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Any bytes: no panic, and the reader ends (each call consumes input or stops).
        #[test]
        fn arbitrary_bytes_never_panic_and_end(data in proptest::collection::vec(any::<u8>(), 0..2000)) {
            let mut r = Records::new(&data[..]);
            let mut calls = 0;
            while r.next_record(100, |_| true).is_some() {
                calls += 1;
                prop_assert!(calls <= data.len() + 1);
            }
        }

        /// Valid records with garbage lines between them: every record comes back, in order,
        /// with its body; the garbage is reported, never merged into a record.
        #[test]
        fn records_survive_garbage_between_them(
            bodies in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 1..8),
            garbage in proptest::collection::vec("[a-zA-Z0-9 :;<>]{0,40}", 8),
        ) {
            let mut data = Vec::new();
            for (i, b) in bodies.iter().enumerate() {
                let g = &garbage[i];
                if !g.trim().is_empty() {
                    data.extend_from_slice(format!("x{g}\r\n").as_bytes());
                }
                data.extend(record("response", b));
            }
            let got: Vec<Vec<u8>> = all(&data, 1000)
                .into_iter()
                .filter_map(std::result::Result::ok)
                .map(|(_, b)| b.unwrap())
                .collect();
            prop_assert_eq!(got, bodies);
        }
    }

    #[test]
    fn truncated_input_ends_with_an_error() {
        let mut data = record("response", b"one");
        data.extend_from_slice(
            b"WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 999\r\n\r\nshort",
        );
        let got = all(&data, 10_000);
        assert!(got[0].is_ok());
        assert!(
            got[1].as_ref().unwrap_err().contains("truncated record"),
            "{got:?}"
        );
        assert_eq!(got.len(), 2);
        let got = all(&data, 10);
        assert!(
            got[1].as_ref().unwrap_err().contains("truncated record"),
            "skipped bodies too"
        );
    }
}
