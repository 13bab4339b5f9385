#!/usr/bin/env bash
# Repeated pages: N copies of one text (an 849-character news article, the same text under new
# ids; the article plus "您是第i位访客。"; a 70-character cookie notice) against N distinct texts
# of the article's length (random Chinese sentences), each ingested with the defaults into a new
# store: wall seconds and peak RSS. What bounds the candidates a lookup reads is in
# docs/performance.md ("Repeated pages").
#
#   scripts/repeated_pages.sh [N ...]          (default: 500 2000 5000 20000)
#   FPDB=/path/to/fpdb scripts/repeated_pages.sh 2000   (another binary: before/after)
#   TIMEOUT=600 (seconds per run; a run past it prints "> TIMEOUT s")
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
if [ -n "${FPDB:-}" ]; then
  fpdb="$FPDB"
else
  cargo build --release --quiet --bin fpdb
  fpdb="$CARGO_TARGET_DIR/release/fpdb"
fi
command -v /usr/bin/time >/dev/null || { echo "repeated_pages: needs /usr/bin/time (Debian: time)" >&2; exit 1; }
limit="${TIMEOUT:-600}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(500 2000 5000 20000)

gen() { # kind n out
  python3 - "$1" "$2" "$3" <<'PY'
import json, random, sys
kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ART = ("新华社北京3月15日电 国家统计局15日发布数据显示，今年1至2月份，全国规模以上工业增加值同比增长7.0%，比上年12月份加快0.2个百分点。"
       "其中，制造业增加值增长7.5%，高技术制造业增加值增长7.5%，装备制造业增加值增长8.5%。\n"
       "分三大门类看，采矿业增加值同比增长2.3%，制造业增长7.7%，电力、热力、燃气及水生产和供应业增长7.9%。"
       "分经济类型看，国有控股企业增加值同比增长5.6%；股份制企业增长7.6%，外商及港澳台商投资企业增长5.8%；私营企业增长5.3%。\n"
       "国家统计局新闻发言人刘爱华在国务院新闻办公室举行的新闻发布会上表示，1至2月份，国民经济延续回升向好态势，生产需求稳中有升，"
       "就业物价总体稳定，转型升级持续推进，发展质量稳步提升，高质量发展扎实推进。\n"
       "从需求看，1至2月份，社会消费品零售总额81307亿元，同比增长5.5%。其中，除汽车以外的消费品零售额73787亿元，增长5.6%。"
       "全国网上零售额21209亿元，同比增长15.1%。其中，实物商品网上零售额18151亿元，增长14.4%，占社会消费品零售总额的比重为22.3%。\n"
       "从投资看，1至2月份，全国固定资产投资（不含农户）50847亿元，同比增长4.2%，增速比上年全年加快1.2个百分点。"
       "分领域看，基础设施投资增长6.3%，制造业投资增长9.4%，房地产开发投资下降9.0%。全国新建商品房销售面积11369万平方米，同比下降20.5%。")
COOKIE = "本网站使用Cookie来改善您的浏览体验。继续浏览即表示您同意我们使用Cookie。了解更多请阅读我们的隐私政策和用户协议。"
CH = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可也你能而子那得着下自之年过发后里道行所然家种事方多经么去法学如都同现当没动面起看定天还进好小部其些主样理心她本前开但因只从想实日军者意无力它与长把机民第公此已工使情明性知全三又关点正业外将两高间由问很最重并物手应战向头文体政美相见被利什二等产或新己制身果加西斯月话合回特代内信表化老给世位次度门任常先海通教儿原东声提立及比员解水名真论处走义各入几口认条平系气题活尔更别打女变四神总何电数安少报才结反受目太量再感建务做接必场件计管期市直德资命山金指克许统区保至队形社便空决治展马科司五基眼书非则听白却界达光放强即像难且权思王象完设式色路记南品住告类求据程北边死张该交规万取拉格望觉术领共确传师观清今切院让识候带导争运笑飞风步改收根干造言联持组每济车亲极林服快办议往元英士证近失转夫令准布始怎呢存未远叫台单影具罗字爱击流备兵连调深商"
with open(out, "w", encoding="utf-8") as f:
    for i in range(n):
        if kind == "copies":
            t = ART
        elif kind == "near":
            t = ART + "您是第%d位访客。" % i
        elif kind == "cookie":
            t = COOKIE
        else:
            r = random.Random(i)
            t = ""
            while len(t) < len(ART):
                t += "".join(r.choice(CH) for _ in range(r.randint(15, 30))) + "。"
        f.write(json.dumps({"id": "%s%d" % (kind, i), "text": t}, ensure_ascii=False) + "\n")
PY
}

echo "| documents | kind | seconds | peak RSS (MiB) | clusters |"
echo "|---:|---|---:|---:|---:|"
for n in "${sizes[@]}"; do
  for kind in distinct copies near cookie; do
    gen "$kind" "$n" "$work/in.jsonl"
    rm -rf "$work/db"
    if timeout "$limit" /usr/bin/time -o "$work/time.txt" -f "%e %M" \
        "$fpdb" --db "$work/db" -q ingest "$work/in.jsonl" >/dev/null 2>"$work/err.txt"; then
      read -r secs kib < <(tail -1 "$work/time.txt")
      clusters=$("$fpdb" --db "$work/db" stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["clusters"])')
      echo "| $n | $kind | $secs | $((kib / 1024)) | $clusters |"
    else
      echo "| $n | $kind | > $limit s | | |"
    fi
  done
done
