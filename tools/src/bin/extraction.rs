//! The main text fpdb keeps of each page of an extraction benchmark, in the benchmark's
//! prediction format, and the time it took: `extraction HTML_DIR OUT.json [REPEAT]`.
//!
//! HTML_DIR holds `<id>.html.gz` (or `<id>.html`) pages, as `../shared/data/extraction/html`
//! does; OUT.json gets `{"<id>": {"articleBody": "<text>"}}`, which the benchmark's
//! `evaluate.py` scores (scripts/extraction.sh runs both). Each page is decoded as `ingest`
//! decodes it (charset detection) and extracted with `fpdb::reader::html::extract`, on one
//! thread; REPEAT (default 1) runs the whole set that many times for the pages-per-second line.

use std::io::Read;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(out)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: extraction HTML_DIR OUT.json [REPEAT]");
        std::process::exit(2);
    };
    let repeat: usize = args.get(3).map_or(1, |s| s.parse().expect("REPEAT"));
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("HTML_DIR")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    let mut pages = Vec::new();
    for f in &files {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let (id, gz) = if let Some(id) = name.strip_suffix(".html.gz") {
            (id, true)
        } else if let Some(id) = name.strip_suffix(".html") {
            (id, false)
        } else {
            continue;
        };
        let mut bytes = Vec::new();
        let file = std::fs::File::open(f).expect("page");
        if gz {
            flate2::read::GzDecoder::new(file).read_to_end(&mut bytes)
        } else {
            std::io::BufReader::new(file).read_to_end(&mut bytes)
        }
        .expect("read page");
        let (html, _) = fpdb::reader::decode::decode(&bytes, None, true);
        pages.push((id.to_string(), html));
    }
    let start = Instant::now();
    let mut texts = serde_json::Map::new();
    for round in 0..repeat {
        for (id, html) in &pages {
            let page = fpdb::reader::html::extract(html);
            if round == 0 {
                texts.insert(id.clone(), serde_json::json!({ "articleBody": page.text }));
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let n = pages.len() * repeat;
    eprintln!(
        "{n} pages in {secs:.2} s: {:.0} pages/s on one thread",
        n as f64 / secs
    );
    std::fs::write(out, serde_json::to_string(&texts).expect("json")).expect("write OUT.json");
}
