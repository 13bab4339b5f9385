//! Generate a JSONL corpus of short Chinese documents with planted near-duplicates, for the
//! macro benchmark: `cargo run --release -p fpdb-tools --bin gen_corpus -- N SEED > corpus.jsonl`.
//! Every 10th document is an edited copy (new first line, a replaced character, or ASCII
//! punctuation) of a random earlier one. A third argument `web` gives each document a `url` on
//! one of 1,000 hosts (a few large, many small) and a `title`; seven copies in ten are on one of
//! 20 aggregator hosts (the corpus of `fpdb report`'s measurement).

use std::io::Write;

const POOL: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严";

use fpdb_tools::rng::Rng;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let mut rng = Rng(args.get(2).and_then(|s| s.parse().ok()).unwrap_or(42) | 1);
    let web = args.get(3).is_some_and(|a| a == "web");
    let pool: Vec<char> = POOL.chars().collect();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let mut kept: Vec<String> = Vec::new();
    for i in 0..n {
        let text = if i % 10 == 9 && !kept.is_empty() {
            let src = &kept[rng.index(kept.len())];
            match rng.index(3) {
                0 => format!("【转载】{src}"),
                1 => {
                    let mut c: Vec<char> = src.chars().collect();
                    let at = rng.index(c.len());
                    c[at] = pool[rng.index(pool.len())];
                    c.into_iter().collect()
                }
                _ => src.replace('，', ",").replace('。', "."),
            }
        } else {
            let mut s = String::new();
            for _ in 0..2 + rng.index(3) {
                for j in 0..12 + rng.index(20) {
                    if j == 8 {
                        s.push('，');
                    }
                    s.push(pool[rng.index(pool.len())]);
                }
                s.push('。');
            }
            s
        };
        if web {
            // Skewed: host h is picked about 1/(h+1) as often as host 0; most copies are on one
            // of 20 aggregators (hosts 1000-1019, the first ones the busiest).
            let spread = rng.index(1000) + 1;
            let host = if i % 10 == 9 && rng.index(10) < 7 {
                let spread = rng.index(20) + 1;
                1000 + rng.index(spread)
            } else {
                rng.index(spread)
            };
            writeln!(
                out,
                "{{\"id\":\"g{i}\",\"url\":\"https://www.site{host}.example/a/{i}.html\",\"title\":\"第{i}篇\",\"text\":\"{text}\"}}"
            )
            .unwrap();
        } else {
            writeln!(out, "{{\"id\":\"g{i}\",\"text\":\"{text}\"}}").unwrap();
        }
        if kept.len() < 100_000 {
            kept.push(text);
        } else {
            let at = rng.index(kept.len());
            kept[at] = text;
        }
    }
}
