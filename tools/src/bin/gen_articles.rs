//! Generate a JSONL corpus of article-length Chinese documents with near-duplicates, drawn as
//! `../shared/bench/gen_corpus.py` draws them (the same character pool, 8–20 sentences of 8–70
//! characters ending in 。！？； with a line break after a fifth of them; each group's base
//! document followed by 0, 0, 1 or 2 copies with 1–3 characters replaced), at the speed of
//! Rust (the Python script takes ~10 minutes per 10^6 documents):
//! `cargo run --release -p fpdb-tools --bin gen_articles -- GROUPS SEED > corpus.jsonl`.
//! Ids are `SEED-N`, so corpora of different seeds can go into one store. ~1.75 documents per
//! group, ~1.7 KB each. Not the Python script's bytes: the same kind of text.

use std::io::Write;

use fpdb_tools::rng::Rng;

/// gen_corpus.py's pool: frequent characters of Chinese text.
const POOL: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严";

const ENDS: [char; 6] = ['。', '。', '。', '！', '？', '；'];

fn between(rng: &mut Rng, lo: usize, hi: usize) -> usize {
    lo + rng.index(hi - lo + 1)
}

fn doc(rng: &mut Rng, pool: &[char]) -> Vec<char> {
    let mut d = Vec::with_capacity(1024);
    for _ in 0..between(rng, 8, 20) {
        for _ in 0..between(rng, 8, 70) {
            d.push(pool[rng.index(pool.len())]);
        }
        d.push(ENDS[rng.index(ENDS.len())]);
        if rng.below(5) == 0 {
            d.push('\n');
        }
    }
    d
}

fn mutate(rng: &mut Rng, base: &[char], pool: &[char]) -> Vec<char> {
    let mut c = base.to_vec();
    for _ in 0..between(rng, 1, 3) {
        let i = rng.index(c.len());
        if !"。！？；\n".contains(c[i]) {
            c[i] = pool[rng.index(pool.len())];
        }
    }
    c
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let groups: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let pool: Vec<char> = POOL.chars().collect();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let mut k = 0u64;
    let mut line = String::with_capacity(4096);
    let mut write = |text: &[char], group: usize, k: &mut u64| -> std::io::Result<()> {
        line.clear();
        line.push_str(&format!(
            "{{\"id\":\"{seed}-{k}\",\"group\":{group},\"text\":\""
        ));
        for &c in text {
            if c == '\n' {
                line.push_str("\\n");
            } else {
                line.push(c);
            }
        }
        line.push_str("\"}\n");
        *k += 1;
        out.write_all(line.as_bytes())
    };
    for g in 0..groups {
        let base = doc(&mut rng, &pool);
        let copies = [0, 0, 1, 2][rng.index(4)];
        let mut go = || -> std::io::Result<()> {
            write(&base, g, &mut k)?;
            for _ in 0..copies {
                let m = mutate(&mut rng, &base, &pool);
                write(&m, g, &mut k)?;
            }
            Ok(())
        };
        if go().is_err() {
            // A closed pipe (`| head`): stop quietly.
            return;
        }
    }
}
