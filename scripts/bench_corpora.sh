# Sourced by scripts/compare.sh and scripts/cpu_ab.sh (with $shared and $work set): the
# corpora they measure on. zh100k: ../shared/bench/gen_corpus.py's synthetic Chinese corpus
# (100,000 groups -> 174,923 documents, generated once); zh50k: its first 50,000 documents;
# laws: the Chinese laws of the shared data.
zh100k="$work/zh100k.jsonl"
zh50k="$work/zh50k.jsonl"
laws="$shared/data/zh_laws.jsonl"
if [ ! -s "$zh100k" ]; then
  echo "$(basename "$0"): generating $zh100k (about a minute)" >&2
  python3 "$shared/bench/gen_corpus.py" 100000 "$zh100k" 2 >&2
fi
[ -s "$zh50k" ] || head -n 50000 "$zh100k" > "$zh50k"
