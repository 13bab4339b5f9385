//! Damage read from a stream (stdin, a pipe) costs what it costs in a file: a gzip member whose
//! last stored block claims more bytes than it has runs its decoder over the members after it,
//! and a stream cannot seek back; the member's compressed bytes are kept (up to 64 MiB) so that
//! the next member is looked for from its second byte, and the intact records after it are
//! read (the review's `bigdmg.py`: 69 intact records were lost from stdin, counted as 1).

use crate::common;

use std::io::Write;

/// A gzip member of `data` in stored (uncompressed) deflate blocks, and the offsets of the
/// blocks.
fn stored_member(data: &[u8]) -> (Vec<u8>, Vec<usize>) {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    let mut blocks = Vec::new();
    let chunks: Vec<&[u8]> = data.chunks(65535).collect();
    for (i, c) in chunks.iter().enumerate() {
        blocks.push(out.len());
        out.push(u8::from(i + 1 == chunks.len()));
        let len = c.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(c);
    }
    let mut crc = flate2::Crc::new();
    crc.update(data);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    (out, blocks)
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn a_big_damaged_member_from_stdin_costs_only_its_own_record() {
    let d = tempfile::tempdir().unwrap();
    let mut rng = common::Rng(17);
    let page = |i: usize, body: &str| {
        let html = format!("<html><body><article><p>{body}</p></article></body></html>");
        common::warc_response(
            &format!("https://news.example/{i}"),
            "2024-05-01T00:00:00Z",
            &html,
        )
    };
    let mut file = Vec::new();
    for i in 0..30 {
        if i == 3 {
            // 1.5 MB of record, its last block's length forged to 65,535.
            let body: String = (0..900)
                .map(|_| common::synthetic_doc(&mut rng, 20))
                .collect();
            let (mut m, blocks) = stored_member(page(i, &body).as_bytes());
            let last = *blocks.last().unwrap();
            m[last + 1..last + 3].copy_from_slice(&65535u16.to_le_bytes());
            m[last + 3..last + 5].copy_from_slice(&(!65535u16).to_le_bytes());
            assert!(m.len() > 1 << 20);
            file.extend(m);
        } else {
            file.extend(gzip(
                page(i, &common::synthetic_doc(&mut rng, 6)).as_bytes(),
            ));
        }
    }
    std::fs::write(d.path().join("run.warc.gz"), &file).unwrap();
    let o = common::run(
        d.path(),
        &["--db", "f.db", "ingest", "--json", "run.warc.gz"],
    );
    let file_run: serde_json::Value = serde_json::from_str(&common::stdout(&o)).unwrap();
    let o = common::run_stdin(d.path(), &["--db", "s.db", "ingest", "--json", "-"], &file);
    let stdin_run: serde_json::Value = serde_json::from_str(&common::stdout(&o)).unwrap();
    for (what, v) in [("file", &file_run), ("stdin", &stdin_run)] {
        assert_eq!(v["added"], 29, "{what}: {v}");
        assert_eq!(v["lost_to_damage"], 1, "{what}: {v}");
    }
}
