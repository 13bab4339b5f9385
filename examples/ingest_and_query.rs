//! The library in brief: open a store on disk, ingest documents, ask about a new one.
//!
//! ```text
//! cargo run --release --example ingest_and_query -- /tmp/news.db
//! ```

use fpdb::{Document, Fpdb, IngestResult, OnExisting};

fn main() -> fpdb::Result<()> {
    let path = std::env::args().nth(1).unwrap_or_else(|| "news.db".into());
    let mut db = Fpdb::open(&path)?;
    let article = "第一条 为了加强和规范政府督查工作，保障政令畅通，提高行政效能，制定本条例。\
                   第二条 本条例所称政府督查，是指县级以上人民政府在法定职权范围内组织开展的监督检查。";
    let docs = [
        Document::new("site-a/1", article),
        Document::new("site-b/7", format!("【转载】{article}\n来源：site-a")),
        Document::new(
            "site-c/3",
            "今天的天气非常好，我们一起去公园散步，看到了很多美丽的花朵。",
        ),
    ];
    for doc in &docs {
        // `Skip`: an id already stored is left as it is (a second run changes nothing).
        match db.ingest_document(doc, OnExisting::Skip)? {
            IngestResult::Added { outcome, .. } => println!(
                "{}: similar_id {:?}, duplicate of {:?}",
                outcome.id, outcome.similar_id, outcome.duplicate_of
            ),
            IngestResult::SkippedExisting {
                id,
                similar_id,
                same_text,
            } => {
                let what = if same_text { "the same" } else { "another" };
                println!("{id}: already stored with {what} text (similar_id {similar_id})");
            }
        }
    }
    // Durable from here on; `query_text` reads and never writes.
    db.sync()?;
    let asked = db.searcher().query_text(&format!("{article}（完）"))?;
    println!(
        "query: similar_id {:?}, {} match(es)",
        asked.similar_id,
        asked.matches.len()
    );
    Ok(())
}
