//! An IDF table learned from a corpus or read in jieba's `word idf` format: the simhash
//! terms' weights of stores made with `--idf` (the built-in table is [`super::lexicon`]'s).

use foldhash::{HashMap, HashMapExt};

use super::lexicon::jieba;
use crate::error::{Error, Result};

/// An IDF table learned from a corpus (or read from a file in jieba's `word idf` format).
#[derive(Debug, Clone, PartialEq)]
pub struct IdfTable {
    idf: HashMap<String, f64>,
    median: f64,
    docs: u64,
    digest: String,
}

impl IdfTable {
    /// Learn document frequencies from `texts` (already prepared: normalized, t2s): the IDF of
    /// a word seen in `df` of `n` documents is ln(n / df). Words are counted as simhash keeps
    /// them (two characters or more; stop words too, so that a table serves any stop list).
    pub fn learn<T: AsRef<str>>(texts: impl IntoIterator<Item = T>) -> IdfTable {
        let mut df: HashMap<String, u64> = HashMap::new();
        let mut docs = 0u64;
        for text in texts {
            docs += 1;
            let mut words: Vec<&str> = jieba()
                .cut(text.as_ref(), false)
                .into_iter()
                .map(|t| t.word)
                .filter(|w| {
                    // Two characters or more; nothing the text form could not carry.
                    w.chars().nth(1).is_some()
                        && !w.starts_with('#')
                        && !w.contains(char::is_whitespace)
                })
                .collect();
            words.sort_unstable();
            words.dedup();
            for w in words {
                if let Some(n) = df.get_mut(w) {
                    *n += 1;
                } else {
                    df.insert(w.to_string(), 1);
                }
            }
        }
        let n = docs.max(1) as f64;
        let idf = df
            .into_iter()
            .map(|(w, d)| (w, (n / d as f64).ln()))
            .collect();
        IdfTable::from_map(idf, docs)
    }

    fn from_map(idf: HashMap<String, f64>, docs: u64) -> IdfTable {
        let mut values: Vec<f64> = idf.values().copied().collect();
        let median = if values.is_empty() {
            0.0
        } else {
            // jieba's rule: the lower median.
            let mid = (values.len() - 1) / 2;
            *values.select_nth_unstable_by(mid, f64::total_cmp).1
        };
        let mut t = IdfTable {
            idf,
            median,
            docs,
            digest: String::new(),
        };
        t.digest = format!(
            "{:016x}",
            crate::hash::fingerprint64(t.to_text().as_bytes())
        );
        t
    }

    /// Read a table in jieba's format: one `word idf` per line; a line that is `#` or starts
    /// with `# ` is a comment (`# docs N` records how many documents it was learned from).
    pub fn parse(text: &str, source_name: &str) -> Result<IdfTable> {
        let mut idf = HashMap::new();
        let mut docs = 0;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if let Some(c) = line.strip_prefix("# ").or((line == "#").then_some("")) {
                if let Some(n) = c.trim().strip_prefix("docs ") {
                    docs = n.trim().parse().unwrap_or(0);
                }
                continue;
            }
            if line.is_empty() {
                continue;
            }
            let mut parts = line.split_whitespace();
            let (Some(word), Some(value), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(Error::BadInput {
                    source_name: source_name.to_string(),
                    line: i as u64 + 1,
                    reason: "expected `word idf`".into(),
                });
            };
            match value.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => {
                    idf.insert(word.to_string(), v);
                }
                _ => {
                    return Err(Error::BadInput {
                        source_name: source_name.to_string(),
                        line: i as u64 + 1,
                        reason: format!("idf `{value}` is not a non-negative number"),
                    })
                }
            }
        }
        if idf.is_empty() {
            return Err(Error::BadInput {
                source_name: source_name.to_string(),
                line: 0,
                reason: "no `word idf` lines".into(),
            });
        }
        Ok(IdfTable::from_map(idf, docs))
    }

    /// The table in jieba's format, words sorted (the same table always gives the same text).
    pub fn to_text(&self) -> String {
        let mut words: Vec<(&String, &f64)> = self.idf.iter().collect();
        words.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut out = format!("# fpdb idf table\n# docs {}\n", self.docs);
        for (w, v) in words {
            out.push_str(w);
            out.push(' ');
            out.push_str(&v.to_string());
            out.push('\n');
        }
        out
    }

    /// 64-bit FarmHash of [`IdfTable::to_text`], as 16 hex digits: names the table in a
    /// store's settings.
    pub fn digest(&self) -> String {
        self.digest.clone()
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.idf.len()
    }

    /// Whether the table has no words.
    pub fn is_empty(&self) -> bool {
        self.idf.is_empty()
    }

    /// Documents it was learned from (0 when unknown).
    pub fn docs(&self) -> u64 {
        self.docs
    }

    /// IDF of a word (the median for words not in the table).
    pub fn get(&self, word: &str) -> f64 {
        self.idf.get(word).copied().unwrap_or(self.median)
    }
}
