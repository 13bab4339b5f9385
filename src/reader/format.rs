//! The input formats a reader knows, by name (`--format`).

/// Input format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// A WARC or ARC file by its first bytes (`WARC/`, `filedesc://`), else the extension
    /// (after `.gz`/`.zst`), else the first bytes: `{` is JSONL, `<html`/`<!doctype html` is
    /// HTML, anything else one text document.
    #[default]
    Auto,
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header line.
    Csv,
    /// Tab-separated values with a header line.
    Tsv,
    /// WARC or WET: `response` (HTML or text), `resource` and `conversion` records.
    Warc,
    /// ARC (v1 and v2, the Internet Archive's format before WARC): every HTTP record.
    Arc,
    /// Parquet (`.parquet`, or starts with `PAR1`): one document per row, fields as JSONL.
    Parquet,
    /// The whole file is one HTML page; its id is its path.
    Html,
    /// The whole file is one document; its id is its path.
    Text,
    /// A list of input paths, one per line.
    List,
}

impl Format {
    /// Every format by its name (`--format`, the Python package's `format`).
    pub const NAMES: &'static [(&'static str, Format)] = &[
        ("auto", Format::Auto),
        ("jsonl", Format::Jsonl),
        ("csv", Format::Csv),
        ("tsv", Format::Tsv),
        ("warc", Format::Warc),
        ("arc", Format::Arc),
        ("parquet", Format::Parquet),
        ("html", Format::Html),
        ("text", Format::Text),
        ("list", Format::List),
    ];

    /// Its name in [`Format::NAMES`].
    pub fn name(self) -> &'static str {
        Format::NAMES
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("auto", |(n, _)| n)
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Format::NAMES
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, f)| *f)
            .ok_or_else(|| {
                let names: Vec<&str> = Format::NAMES.iter().map(|(n, _)| *n).collect();
                format!("unknown format `{s}` (one of: {})", names.join(", "))
            })
    }
}
