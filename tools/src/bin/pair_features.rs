//! Print, for every labeled pair of a dev set, the signals a decision rule can use:
//! sentence overlap, shingle resemblance (the sketch's estimate), exact 4-gram Jaccard and
//! containment (shared 4-grams over the smaller document's).
//! `cargo run --release -p fpdb-tools --bin pair_features -- corpus.jsonl pairs.tsv > features.tsv`

use std::collections::HashMap;
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (corpus, pairs) = (PathBuf::from(&args[1]), PathBuf::from(&args[2]));
    let docs: HashMap<String, fpdb::Document> =
        fpdb::reader::Inputs::new(&[corpus], Default::default())
            .filter_map(|r| r.doc.ok())
            .map(|d| (d.id.clone(), d))
            .collect();
    let fp = fpdb::fingerprint::Fingerprinter::new(fpdb::Options::default(), None).unwrap();
    println!(
        "kind\tlabel\tlen_a\tlen_b\tkept_a\tkept_b\tshared\tdistance\toverlap\tresemblance\tjaccard4\tcontainment4\tends\tshape"
    );
    for p in fpdb::eval::read_pairs(&pairs).unwrap() {
        let (Some(da), Some(db)) = (docs.get(&p.a), docs.get(&p.b)) else {
            continue;
        };
        let e = fpdb::explain::explain(da, db, &fp);
        let (a, b) = (&da.text, &db.text);
        let (ga, gb) = (grams(&fp.prepare(a)), grams(&fp.prepare(b)));
        let both = ga.intersection(&gb).count() as f64;
        let jaccard = both / (ga.len() + gb.len()).saturating_sub(both as usize).max(1) as f64;
        let containment = both / ga.len().min(gb.len()).max(1) as f64;
        let (fa, fb) = (
            fp.fingerprint_with(a, da.meta()),
            fp.fingerprint_with(b, db.meta()),
        );
        let shape = fpdb::fingerprint::similarity::shape(
            &fa.sketch,
            &fa.order,
            &fb.sketch,
            &fb.order,
            fp.options().headings,
        );
        let sh = shape.map_or("-\t-".to_string(), |s| {
            format!(
                "{}/{}/{}:{}/{}/{}\t{}",
                s.a.head,
                s.a.inner,
                s.a.tail,
                s.b.head,
                s.b.inner,
                s.b.tail,
                s.name()
            )
        });
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.3}\t{:.3}\t{:.3}\t{:.3}\t{}",
            p.kind,
            u8::from(p.duplicate),
            a.chars().count(),
            b.chars().count(),
            e.sentences_a.len(),
            e.sentences_b.len(),
            e.shared_sentences.len(),
            e.comparison.distance.map_or(-1, i64::from),
            e.comparison.overlap,
            e.comparison.resemblance.unwrap_or(-1.0),
            jaccard,
            containment,
            sh,
        );
    }
}

/// Every character 4-gram of the letters and digits (exact, for comparison with the sketches).
fn grams(text: &str) -> std::collections::HashSet<[char; 4]> {
    let c: Vec<char> = text
        .chars()
        .filter(|&c| fpdb::text::sentences::is_word_char(c))
        .collect();
    c.windows(4).map(|w| [w[0], w[1], w[2], w[3]]).collect()
}
