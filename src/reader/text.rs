//! Whole-file documents: a text file or an HTML page is one document whose id is its path.

use std::io::Read;

use super::{
    decode, error, sniff::format_by_content, Deferred, Format, Input, Inputs, Record, Unit,
};

impl Inputs {
    pub(super) fn whole_file(&self, source: String, reader: Input, html: bool) -> Record {
        let max = self.shared.opts.max_doc_bytes;
        let mut bytes = Vec::new();
        if let Err(e) = reader.take(max as u64 + 1).read_to_end(&mut bytes) {
            return error(source, 1, Unit::Line, format!("read error: {e}"));
        }
        let n = bytes.len();
        if n > max {
            return Record::new(
                source,
                1,
                Unit::Line,
                n,
                Err(format!(
                    "document larger than {max} bytes (--max-doc-bytes)"
                )),
            );
        }
        if decode::looks_binary(&bytes) {
            return Record::new(source, 1, Unit::Line, n, Err("binary file".to_string()));
        }
        let html = html || format_by_content(&bytes[..n.min(1024)]) == Format::Html;
        Record::page(
            source.clone(),
            1,
            Unit::Line,
            Deferred {
                id: source,
                url: None,
                bytes,
                charset: None,
                html,
                time: None,
                digest: None,
            },
        )
    }
}
