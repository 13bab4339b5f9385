//! Build the three hard labeled sets of the quality issue from a corpus (deterministic: the
//! same corpus gives the same sets), each a folder with `corpus.jsonl` + `pairs.tsv` scored by
//! `fpdb eval`:
//!
//! - `layout/`: hard-wrapped text whose lines are reordered. Each chosen document (300–4,000
//!   characters) is hard-wrapped at 30–70 characters per line, mid-sentence (`#wrap`, the
//!   original as a journal prints it); its copy has the same lines, shuffled, one per paragraph
//!   (`edit_wrap_shuffle`, 1). Hard negatives: another document with one of its paragraphs
//!   quoted inside (`shared_paragraph`, 0).
//! - `chains/`: overlapping windows of consecutive paragraphs of one long document (articles of
//!   a law): A, C (shifted 2–4 paragraphs), B (shifted 2–4 more), ingested A, C, B. A and B
//!   share at most 40% of their paragraphs (`chained_window`, 0): single linkage through C
//!   merges them. Copies of A (char edits) and B (retitle + ad) keep recall measured
//!   (`edit_char_edits`, `edit_combo`, 1).
//! - `short/`: excerpts of 600–1,000 characters (5–12 paragraphs) and a heavy edit of each:
//!   a new title replaces the first paragraph, an ad is inserted and ~0.5% of the characters
//!   change (`edit_short_heavy`, 1). Hard negatives: two different excerpts sharing one
//!   paragraph (`shared_paragraph`, 0) or the same title line and ad (`shared_boilerplate`, 0).
//!
//! - `wrapped/`: texts hard-wrapped at a fixed width, as many Chinese corpora store them. Each
//!   chosen document (400–8,000 characters) is wrapped at 30–40 characters a line, no blank line
//!   between lines (`#wrapN`); its copy has the same lines in groups of 1–4 consecutive ones
//!   (its paragraphs) put in another order, so a sentence is cut at every seam
//!   (`edit_wrap_move`, 1). Hard negatives: two
//!   different texts, each with the same 3–6 wrapped lines of a third inserted among their own
//!   (`shared_wrapped_boilerplate`, 0).
//!
//! Every set also has `random_distinct` pairs (0).
//!
//! ```text
//! cargo run --release -p fpdb-tools --bin hard_sets -- ../shared/data/dev/zh_laws/corpus.jsonl /tmp/hard 200
//! fpdb eval --corpus /tmp/hard/layout/corpus.jsonl --pairs /tmp/hard/layout/pairs.tsv
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};

use fpdb_tools::rng::Rng;

const ADS: [&str; 6] = [
    "更多精彩内容，请关注我们的微信公众号，每日推送最新法规解读。",
    "本文来源于网络，仅供学习交流使用，如有侵权请联系删除。",
    "扫描下方二维码，免费领取法律咨询服务，专业律师在线解答。",
    "Follow us for more updates and subscribe to our newsletter today.",
    "声明：本站转载此文是出于传递更多信息之目的，不代表本站观点。",
    "点击阅读原文，了解更多相关资讯与政策动态。",
];

const TITLES: [&str; 5] = [
    "【转载】重要文件全文公布",
    "【收藏】最新规定解读，值得一读",
    "干货分享：一文读懂相关条款",
    "【关注】这些规定与你我息息相关",
    "REPOST: full text released",
];

/// Common characters that replace edited ones.
const FILL: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严";

struct Doc {
    id: String,
    text: String,
}

fn paragraphs(text: &str) -> Vec<String> {
    text.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

fn char_edits(text: &str, rng: &mut Rng, per_mille: u64) -> String {
    let fill: Vec<char> = FILL.chars().collect();
    text.chars()
        .map(|c| {
            if !c.is_whitespace() && rng.below(1000) < per_mille {
                fill[rng.index(fill.len())]
            } else {
                c
            }
        })
        .collect()
}

struct Set {
    corpus: std::io::BufWriter<std::fs::File>,
    pairs: std::io::BufWriter<std::fs::File>,
    ids: Vec<String>,
}

impl Set {
    fn new(dir: &Path) -> Set {
        std::fs::create_dir_all(dir).expect("create output dir");
        let corpus =
            std::io::BufWriter::new(std::fs::File::create(dir.join("corpus.jsonl")).unwrap());
        let mut pairs =
            std::io::BufWriter::new(std::fs::File::create(dir.join("pairs.tsv")).unwrap());
        writeln!(pairs, "id_a\tid_b\tlabel\tkind").unwrap();
        Set {
            corpus,
            pairs,
            ids: Vec::new(),
        }
    }
    fn doc(&mut self, id: &str, text: &str) {
        let o = serde_json::json!({ "id": id, "text": text });
        writeln!(self.corpus, "{o}").unwrap();
        self.ids.push(id.to_string());
    }
    fn pair(&mut self, a: &str, b: &str, dup: bool, kind: &str) {
        writeln!(self.pairs, "{a}\t{b}\t{}\t{kind}", u8::from(dup)).unwrap();
    }
    /// `n` random pairs of the base documents `base` (distinct sources).
    fn random(&mut self, base: &[String], n: usize, rng: &mut Rng) {
        for _ in 0..n {
            let (a, b) = (rng.index(base.len()), rng.index(base.len()));
            let src = |s: &str| s.split(['#', '@']).next().unwrap_or(s).to_string();
            if src(&base[a]) != src(&base[b]) {
                let (a, b) = (base[a].clone(), base[b].clone());
                self.pair(&a, &b, false, "random_distinct");
            }
        }
    }
}

/// Lines of 30–70 characters (whitespace dropped, as hard-wrapped journal text).
fn hard_wrap(text: &str, rng: &mut Rng) -> Vec<String> {
    fpdb::eval::edits::hard_wrap(text, || 30 + rng.index(41))
}

fn layout(docs: &[Doc], n: usize, out: &Path, rng: &mut Rng) {
    let mut set = Set::new(out);
    let chosen: Vec<&Doc> = docs
        .iter()
        .filter(|d| (300..=4000).contains(&d.text.chars().count()))
        .take(n)
        .collect();
    let mut base = Vec::new();
    for (i, d) in chosen.iter().enumerate() {
        let mut lines = hard_wrap(&d.text, rng);
        let orig = format!("{}#wrap", d.id);
        set.doc(&orig, &lines.join("\n"));
        for j in (1..lines.len()).rev() {
            lines.swap(j, rng.index(j + 1));
        }
        let copy = format!("{}#shuffled", d.id);
        set.doc(&copy, &lines.join("\n\n"));
        set.pair(&orig, &copy, true, "edit_wrap_shuffle");
        base.push(orig.clone());
        // Every fourth: another document quoting one paragraph of this one.
        if i % 4 == 0 && i + 1 < chosen.len() {
            let other = chosen[(i + 1 + rng.index(chosen.len() - 1)) % chosen.len()];
            if other.id != d.id {
                let mut paras = paragraphs(&other.text);
                let quote = paragraphs(&d.text)
                    .into_iter()
                    .max_by_key(|p| p.chars().count())
                    .unwrap_or_default();
                let at = rng.index(paras.len() + 1);
                paras.insert(at, quote);
                let id = format!("{}#quotes", other.id);
                set.doc(&id, &paras.join("\n\n"));
                set.pair(&orig, &id, false, "shared_paragraph");
            }
        }
    }
    set.random(&base, chosen.len(), rng);
    eprintln!("layout: {} documents", set.ids.len());
}

fn chains(docs: &[Doc], n: usize, out: &Path, rng: &mut Rng) {
    let mut set = Set::new(out);
    let mut base = Vec::new();
    let mut made = 0;
    for d in docs {
        if made == n {
            break;
        }
        let paras = paragraphs(&d.text);
        let w = 10;
        let (d1, d2) = loop {
            let (a, b) = (2 + rng.index(3), 2 + rng.index(3));
            if a + b >= 6 {
                break (a, b);
            }
        };
        if paras.len() < w + d1 + d2 + 1 {
            continue;
        }
        let s = 1 + rng.index(paras.len() - (w + d1 + d2));
        let window = |from: usize| paras[from..from + w].join("\n\n");
        let (a, c, b) = (window(s), window(s + d1), window(s + d1 + d2));
        let id = |k: &str| format!("{}@{s}{k}", d.id);
        set.doc(&id("A"), &a);
        set.doc(&id("A#edit"), &char_edits(&a, rng, 5));
        set.doc(&id("C"), &c);
        set.doc(&id("B"), &b);
        let title = TITLES[rng.index(TITLES.len())];
        let mut bp = paragraphs(&b);
        bp.insert(
            1 + rng.index(bp.len()),
            ADS[rng.index(ADS.len())].to_string(),
        );
        let combo = format!("{title}\n\n{}", bp.join("\n\n"));
        set.doc(&id("B#combo"), &char_edits(&combo, rng, 5));
        set.pair(&id("A"), &id("B"), false, "chained_window");
        set.pair(&id("A"), &id("A#edit"), true, "edit_char_edits");
        set.pair(&id("B"), &id("B#combo"), true, "edit_combo");
        base.push(id("A"));
        made += 1;
    }
    set.random(&base, made, rng);
    eprintln!("chains: {} documents", set.ids.len());
}

/// Consecutive paragraphs of `d` making 600–1,000 characters (5–12 paragraphs), if any.
fn excerpt(d: &Doc, rng: &mut Rng) -> Option<Vec<String>> {
    let paras = paragraphs(&d.text);
    if paras.len() < 5 {
        return None;
    }
    for _ in 0..8 {
        let s = rng.index(paras.len() - 4);
        let mut len = 0;
        let mut out = Vec::new();
        for p in &paras[s..] {
            len += p.chars().count();
            out.push(p.clone());
            if len >= 600 || out.len() == 12 {
                break;
            }
        }
        if (600..=1000).contains(&len) && out.len() >= 5 {
            return Some(out);
        }
    }
    None
}

fn short(docs: &[Doc], n: usize, out: &Path, rng: &mut Rng) {
    let mut set = Set::new(out);
    let mut ex: Vec<(String, Vec<String>)> = Vec::new();
    for d in docs {
        if ex.len() == n {
            break;
        }
        if let Some(p) = excerpt(d, rng) {
            ex.push((format!("{}@x", d.id), p));
        }
    }
    let ids: Vec<String> = ex.iter().map(|(id, _)| id.clone()).collect();
    for (i, (id, paras)) in ex.iter().enumerate() {
        set.doc(id, &paras.join("\n\n"));
        let mut edited = paras.clone();
        edited[0] = TITLES[rng.index(TITLES.len())].to_string();
        edited.insert(
            1 + rng.index(edited.len()),
            ADS[rng.index(ADS.len())].to_string(),
        );
        let copy = format!("{id}#heavy");
        set.doc(&copy, &char_edits(&edited.join("\n\n"), rng, 5));
        set.pair(id, &copy, true, "edit_short_heavy");
        if i % 3 == 1 {
            // Another excerpt quoting this one's longest paragraph.
            let (oid, other) = &ex[i - 1];
            let quote = paras.iter().max_by_key(|p| p.chars().count()).unwrap();
            let mut o = other.clone();
            o.insert(rng.index(o.len() + 1), quote.clone());
            let qid = format!("{oid}#quotes");
            set.doc(&qid, &o.join("\n\n"));
            set.pair(id, &qid, false, "shared_paragraph");
        }
        if i % 3 == 2 {
            // Two different excerpts dressed the same way: same title, same ad.
            let (title, ad) = (TITLES[i % TITLES.len()], ADS[i % ADS.len()]);
            let mut dressed = Vec::new();
            for (oid, o) in [&ex[i - 2], &ex[i]] {
                let mut o = o.clone();
                o.insert(0, title.to_string());
                o.insert(1 + o.len() / 2, ad.to_string());
                let did = format!("{oid}#dressed");
                set.doc(&did, &o.join("\n\n"));
                dressed.push(did);
            }
            set.pair(&dressed[0], &dressed[1], false, "shared_boilerplate");
        }
    }
    set.random(&ids, ex.len(), rng);
    eprintln!("short: {} documents", set.ids.len());
}

/// `text` hard-wrapped at `width` characters a line (whitespace dropped).
fn wrap_at(text: &str, width: usize) -> Vec<String> {
    fpdb::eval::edits::hard_wrap(text, || width)
}

fn wrapped(docs: &[Doc], n: usize, out: &Path, rng: &mut Rng) {
    let mut set = Set::new(out);
    let chosen: Vec<&Doc> = docs
        .iter()
        .filter(|d| (400..=8000).contains(&d.text.chars().count()))
        .take(n)
        .collect();
    let mut base = Vec::new();
    for (i, d) in chosen.iter().enumerate() {
        let width = 30 + rng.index(11);
        let lines = wrap_at(&d.text, width);
        let orig = format!("{}#wrap{width}", d.id);
        set.doc(&orig, &lines.join("\n"));
        base.push(orig.clone());
        // Its lines in groups of 1–4 consecutive ones (the paragraphs), put in another order.
        let mut groups: Vec<&[String]> = Vec::new();
        let mut at = 0;
        while at < lines.len() {
            let len = (1 + rng.index(4)).min(lines.len() - at);
            groups.push(&lines[at..at + len]);
            at += len;
        }
        for j in (1..groups.len()).rev() {
            groups.swap(j, rng.index(j + 1));
        }
        let moved: Vec<String> = groups.concat();
        if moved != lines {
            let copy = format!("{}#moved", d.id);
            set.doc(&copy, &moved.join("\n"));
            set.pair(&orig, &copy, true, "edit_wrap_move");
        }
        // Every fourth: two other texts sharing wrapped lines of this one as boilerplate.
        if i % 4 == 0 && chosen.len() > 3 {
            let pick = |rng: &mut Rng| chosen[(i + 1 + rng.index(chosen.len() - 1)) % chosen.len()];
            let (a, b) = (pick(rng), pick(rng));
            if a.id == b.id || a.id == d.id || b.id == d.id {
                continue;
            }
            let take = (3 + rng.index(4)).min(lines.len());
            let from = rng.index(lines.len() - take + 1);
            let boiler = &lines[from..from + take];
            let mut ids = Vec::new();
            for other in [a, b] {
                let w = 30 + rng.index(11);
                let mut own = wrap_at(&other.text, w);
                let at = rng.index(own.len() + 1);
                for (k, l) in boiler.iter().enumerate() {
                    own.insert(at + k, l.clone());
                }
                let id = format!("{}#boiler{i}", other.id);
                set.doc(&id, &own.join("\n"));
                ids.push(id);
            }
            set.pair(&ids[0], &ids[1], false, "shared_wrapped_boilerplate");
        }
    }
    set.random(&base, chosen.len(), rng);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: hard_sets CORPUS.jsonl OUT_DIR [N=200]");
        std::process::exit(2);
    }
    let (corpus, out) = (PathBuf::from(&args[1]), PathBuf::from(&args[2]));
    let n: usize = args.get(3).map_or(200, |s| s.parse().expect("N"));
    let mut docs: Vec<Doc> = fpdb::reader::Inputs::new(&[corpus], Default::default())
        .filter_map(|r| r.doc.ok())
        .filter(|d| !d.id.contains('#'))
        .map(|d| Doc {
            id: d.id,
            text: d.text,
        })
        .collect();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for i in (1..docs.len()).rev() {
        docs.swap(i, rng.index(i + 1));
    }
    layout(&docs, n, &out.join("layout"), &mut rng);
    chains(&docs, n, &out.join("chains"), &mut rng);
    short(&docs, n, &out.join("short"), &mut rng);
    wrapped(&docs, n, &out.join("wrapped"), &mut rng);
}
