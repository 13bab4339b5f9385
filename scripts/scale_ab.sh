#!/usr/bin/env bash
# Ingest scaling of two binaries on a machine with many cores, alternated at each core count
# (this kind of machine drifts by a fifth between runs minutes apart): zh100k with
# `--algos nshash` and with the defaults at 16, 1, 4 and 8 cores (taskset + --threads), then
# the 700,025-document corpus at 16 cores; wall clock, the export's md5 (it must not change
# between binaries or core counts) and the `--json` stage busy times of every run.
#   usage: scripts/scale_ab.sh BEFORE AFTER [WORKDIR]   (corpora: ../shared/bench/gen_corpus.py,
#   or GEN=path/to/gen_corpus.py; results also appended to $OUT/results.txt when OUT is set)
#   BEFORE_ENV / AFTER_ENV: VAR=VALUE settings for each binary's ingests, e.g. one binary
#   against itself with another WAL recovery mode:
#   BEFORE_ENV=FPDB_WAL_RECOVERY=point-in-time scripts/scale_ab.sh target/release/fpdb target/release/fpdb
set -u
B=$(realpath "$1"); A=$(realpath "$2"); W=${3:-$(mktemp -d)}; mkdir -p "$W"
GEN=${GEN:-$(cd "$(dirname "$0")/.." && pwd)/../shared/bench/gen_corpus.py}
R=${OUT:-$W}/results.txt
nproc; lscpu | grep -E "Model name|^CPU\(s\)"
t0=$(date +%s)
[ -s "$W/zh100k.jsonl" ] || python3 "$GEN" 100000 "$W/zh100k.jsonl" 2 >/dev/null &
for s in 3 4 5; do [ -s "$W/g$s.jsonl" ] || python3 "$GEN" 100000 "$W/g$s.jsonl" $s >/dev/null & done
wait
echo "corpora in $(( $(date +%s) - t0 )) s"
run() {
  local name=$1 bin=$2 c=$3; shift 3
  local envs=${BEFORE_ENV:-}; [ "$name" = after ] && envs=${AFTER_ENV:-}
  rm -rf "$W/db"
  local s=$(date +%s.%N)
  env $envs taskset -c 0-$((c-1)) "$bin" --db "$W/db" ingest --threads "$c" "$@" --quiet --json > "$W/out.json" 2>"$W/err.txt"
  local e=$(date +%s.%N)
  local md5=$("$bin" --db "$W/db" export 2>/dev/null | md5sum | cut -c1-8)
  local st=$(python3 -c "
import json
try:
  j=json.load(open('$W/out.json')); print(' '.join(f'{k}={v:.2f}' for k,v in j['stages'].items()))
except Exception: print('no-json', open('$W/err.txt').read()[-300:])")
  echo "$name cores=$c args=[$*] wall=$(python3 -c "print(f'{$e-$s:.2f}')") md5=$md5 $st" | tee -a "$R"
}
for c in 16 1 4 8; do
  for b in before after; do
    bin=$B; [ $b = after ] && bin=$A
    run $b "$bin" $c --algos nshash "$W/zh100k.jsonl"
    run $b "$bin" $c "$W/zh100k.jsonl"
  done
done
python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
with open(f'{w}/zh700k.jsonl', 'w') as o:
    for s, f in ((2, 'zh100k'), (3, 'g3'), (4, 'g4'), (5, 'g5')):
        for l in open(f'{w}/{f}.jsonl'):
            r = json.loads(l); r['id'] = f"{s}-{r['id']}"; o.write(json.dumps(r, ensure_ascii=False) + '\n')
PY
run after "$A" 16 "$W/zh700k.jsonl"
run before "$B" 16 "$W/zh700k.jsonl"
echo "total $(( $(date +%s) - t0 )) s"
