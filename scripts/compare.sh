#!/usr/bin/env bash
# fpdb side by side with the tools users would pick instead, on the same corpora, on this
# machine, in one run: whole process (start-up, JSON parsing, a durable on-disk store for fpdb;
# the anchors keep everything in memory, but for `nshash-leveldb` of --one-core, the nshash
# script with its own durable HashDB), wall clock and peak RSS, fpdb and anchor runs
# alternated, best of RUNS each. Prints one Markdown table.
#
#   scripts/compare.sh [RUNS]        (default 2)
#   scripts/compare.sh --one-core [RUNS]   (default 3: fpdb with --threads 1 and each anchor
#       pinned to the same core; CPU seconds, user + sys of the whole process, MB/s per core
#       and peak RSS; the table of issue "one core's worth")
#   FPDB=/path/to/fpdb scripts/compare.sh   (that binary instead of building this tree: A/B runs)
#
# Corpora: the synthetic Chinese corpus of ../shared/bench/gen_corpus.py (100,000 groups ->
# 174,923 documents, 289 MB; generated once), its first 50,000 documents, and
# ../shared/data/zh_laws.jsonl. Anchors: ../shared/bench/run_anchor.py in a venv with
# pyfarmhash, gaoya and datasketch (installed once; rows without them are skipped).
# SHARED (default ../shared) points elsewhere; work files go to ${BENCH_DIR:-target/compare}.
set -euo pipefail
cd "$(dirname "$0")/.."
one_core=""
if [ "${1:-}" = "--one-core" ]; then
  one_core=1
  shift
fi
runs="${1:-$([ -n "$one_core" ] && echo 3 || echo 2)}"
shared="${SHARED:-../shared}"
work="${BENCH_DIR:-target/compare}"
mkdir -p "$work"
./scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/fpdb-target}"
if [ -n "${FPDB:-}" ]; then
  fpdb="$FPDB"
else
  cargo build --release --quiet --bin fpdb
  fpdb="$CARGO_TARGET_DIR/release/fpdb"
fi
command -v /usr/bin/time >/dev/null || { echo "compare: needs /usr/bin/time (Debian: time)" >&2; exit 1; }

# shellcheck source=scripts/bench_corpora.sh
. scripts/bench_corpora.sh
anchor="$shared/bench/run_anchor.py"

py=""
if [ -f "$anchor" ] && command -v python3 >/dev/null; then
  venv="$work/venv"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import farmhash, gaoya, datasketch" 2>/dev/null; then
    echo "compare: installing the Python anchors into $venv" >&2
    python3 -m venv "$venv" && "$venv/bin/pip" install -q pyfarmhash gaoya datasketch >&2 || true
  fi
  "$venv/bin/python" -c "import farmhash, gaoya, datasketch" 2>/dev/null && py="$venv/bin/python"
  if [ -n "$one_core" ] && ! "$venv/bin/python" -c "import rensa" 2>/dev/null; then
    "$venv/bin/pip" install -q rensa >&2 || true
  fi
  # The nshash script with its own durable HashDB (LevelDB): the like-for-like anchor of a
  # durable store (pip builds its bundled C++, ~25 s once; the row is "—" without it).
  if [ -n "$one_core" ] && ! "$venv/bin/python" -c "import leveldb" 2>/dev/null; then
    "$venv/bin/pip" install -q leveldb >&2 || true
  fi
fi
[ -n "$py" ] || echo "compare: no Python anchors (python3 venv + pip needed); fpdb rows only" >&2

# One timed run: prints "seconds peak_KiB".
timed() {
  /usr/bin/time -o "$work/time.txt" -f "%e %M" "$@" >/dev/null 2>"$work/stderr.txt" || {
    echo "compare: failed: $* (stderr in $work/stderr.txt)" >&2
    exit 1
  }
  tail -1 "$work/time.txt"
}

# One run pinned to core 0: prints "cpu_seconds peak_KiB" (user + sys of the whole process).
cpu_timed() {
  /usr/bin/time -o "$work/time.txt" -f "%U %S %M" taskset -c 0 "$@" >/dev/null 2>"$work/stderr.txt" || {
    echo "compare: failed: $* (stderr in $work/stderr.txt)" >&2
    exit 1
  }
  tail -1 "$work/time.txt" | awk '{ printf "%.2f %s\n", $1 + $2, $3 }'
}

if [ -n "$one_core" ]; then
  command -v taskset >/dev/null || { echo "compare: --one-core needs taskset (util-linux)" >&2; exit 1; }
  best_cpu() { awk 'NR == 1 || $1 < s { s = $1 } $2 > m { m = $2 } END { printf "%.2f %.0f", s, m / 1024 }'; }
  mb() { awk -v b="$(stat -c %s "$1")" -v s="$2" 'BEGIN { printf "%.0f", b / 1e6 / s }'; }
  printf '| corpus | fpdb job (--threads 1) | fpdb CPU s | fpdb MB/s | fpdb MiB | anchor | anchor CPU s | anchor MiB | fpdb speed / anchor |\n'
  printf '|---|---|---:|---:|---:|---|---:|---:|---:|\n'
  one() { # corpus-name corpus fpdb-label "fpdb args" anchor-algos...
    local name=$1 corpus=$2 label=$3 args=$4
    shift 4
    local f="" algo
    declare -A a=()
    for _ in $(seq "$runs"); do
      rm -rf "$work/store.db"
      # shellcheck disable=SC2086
      f+="$(cpu_timed "$fpdb" --db "$work/store.db" --quiet ingest --threads 1 "$corpus" $args)"$'\n'
      if [ -n "$py" ]; then
        for algo in "$@"; do
          a[$algo]+="$(cpu_timed "$py" "$anchor" "$algo" "$corpus" "$work/anchor.out" || true)"$'\n'
        done
      fi
    done
    read -r fs fm <<< "$(printf '%s' "$f" | best_cpu)"
    for algo in "$@"; do
      if [ -n "$py" ] && [ -n "${a[$algo]//[$'\n']/}" ]; then
        read -r as am <<< "$(printf '%s' "${a[$algo]}" | best_cpu)"
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s× |\n' "$name" "$label" "$fs" "$(mb "$corpus" "$fs")" "$fm" \
          "$algo" "$as" "$am" "$(awk -v a="$as" -v f="$fs" 'BEGIN { printf "%.2f", a / f }')"
      else
        printf '| %s | %s | %s | %s | %s | %s | — | — | — |\n' "$name" "$label" "$fs" "$(mb "$corpus" "$fs")" "$fm" "$algo"
      fi
    done
  }
  one "zh100k ($(wc -l < "$zh100k" | tr -d ' ') docs)" "$zh100k" "ingest --algos nshash" "--algos nshash" nshash nshash-leveldb
  one "zh50k ($(wc -l < "$zh50k" | tr -d ' ') docs)" "$zh50k" "ingest (defaults)" "" gaoya-simhash rensa
  # The defaults with simhash (on request since `band_holders`): what its words and tables cost
  # (docs/performance.md, "What simhash costs and what it finds").
  one "zh50k ($(wc -l < "$zh50k" | tr -d ' ') docs)" "$zh50k" "ingest --algos nshash,simhash,minhash" "--algos nshash,simhash,minhash" gaoya-simhash rensa
  echo
  echo "1 core (taskset -c 0) of $(nproc); $("$fpdb" --version 2>/dev/null | head -1); CPU seconds (user + sys), best of $runs alternated runs; $(date -u +%F)"
  exit 0
fi

# best-of: min seconds, max RSS over the runs given as "s kib" lines
best() { awk 'NR == 1 || $1 < s { s = $1 } $2 > m { m = $2 } END { printf "%.2f %.0f", s, m / 1024 }'; }

printf '| corpus | fpdb job | fpdb s | fpdb MiB | anchor | anchor s | anchor MiB | fpdb speed / anchor |\n'
printf '|---|---|---:|---:|---|---:|---:|---:|\n'
row() { # corpus-name corpus fpdb-label "fpdb args" anchor-algo [taskset-cpus]
  local name=$1 corpus=$2 label=$3 args=$4 algo=$5 cpus=${6:-}
  local f="" a="" pin=()
  [ -n "$cpus" ] && pin=(taskset -c "$cpus")
  for _ in $(seq "$runs"); do
    rm -rf "$work/store.db"
    # shellcheck disable=SC2086
    f+="$(timed "${pin[@]}" "$fpdb" --db "$work/store.db" --quiet ingest "$corpus" $args)"$'\n'
    if [ -n "$py" ]; then
      a+="$(timed "$py" "$anchor" "$algo" "$corpus" "$work/anchor.out")"$'\n'
    fi
  done
  read -r fs fm <<< "$(printf '%s' "$f" | best)"
  if [ -n "$py" ]; then
    read -r as am <<< "$(printf '%s' "$a" | best)"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s× |\n' "$name" "$label" "$fs" "$fm" "$algo" "$as" "$am" \
      "$(awk -v a="$as" -v f="$fs" 'BEGIN { printf "%.2f", a / f }')"
  else
    printf '| %s | %s | %s | %s | — | — | — | — |\n' "$name" "$label" "$fs" "$fm"
  fi
}

docs() { wc -l < "$1" | tr -d ' '; }
# The defaults before minhash, the resemblance floor by length and tight clusters.
old_rules="--algos nshash,simhash --verify-resemblance 90 --tight-clusters false --tw-phrases false"
row "zh100k ($(docs "$zh100k") docs)" "$zh100k" "ingest --algos nshash" "--algos nshash" nshash
row "zh100k, fpdb on 1 core" "$zh100k" "ingest --algos nshash" "--algos nshash" nshash 0
row "zh50k ($(docs "$zh50k") docs)" "$zh50k" "ingest (defaults)" "" gaoya-simhash
row "zh50k, fpdb on 1 core" "$zh50k" "ingest (defaults)" "" gaoya-simhash 0
row "zh50k" "$zh50k" "ingest, format 3 rules" "$old_rules" gaoya-simhash
if [ -s "$laws" ]; then
  row "zh_laws ($(docs "$laws") docs)" "$laws" "ingest --algos nshash" "--algos nshash" nshash
  row "zh_laws" "$laws" "ingest (defaults)" "" gaoya-simhash
fi
echo
echo "$(nproc) cores; $("$fpdb" --version 2>/dev/null | head -1); best of $runs alternated runs; $(date -u +%F)"
