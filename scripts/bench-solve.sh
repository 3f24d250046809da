#!/usr/bin/env bash
# Times `darrm solve` end to end for the targets of docs/solve.md: cold
# cache (a fresh directory) and warm cache, wall time and peak RSS.
# Usage: scripts/bench-solve.sh [quick]   ("quick" skips the K = 101, Delta > 0 case)
#        scripts/bench-solve.sh sweep [K...] [--limit SECONDS]
#        scripts/bench-solve.sh approx [K...] [--m LIST] [--limit SECONDS]
# sweep: pure DP (Delta = delta = 0), each K (default 101 201 301 501 1001)
# times m in {1, 2, 3, 5, 10, 20, 40, (K+1)/2}, cold, each case stopped
# after --limit seconds (default 300): wall time, peak RSS, passes, rows and
# the outcome (certified, failed with darrm's message, or stopped).
# approx: the same with Delta = 1e-5 and the default delta, each K (default
# 101 251 501 1001) times m in --m (default 3,10,40), stopped after
# --limit seconds (default 3600).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/darrm
go build -o "$bin" ./cmd/darrm
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "go: $(go version | cut -d' ' -f3)"
if [[ "${1:-}" == sweep || "${1:-}" == approx ]]; then
  mode=$1
  shift
  ks=() limit=300 mlist=
  [[ $mode == approx ]] && limit=3600 mlist=3,10,40
  while (($#)); do
    case $1 in
    --limit) limit=$2; shift ;;
    --m) mlist=$2; shift ;;
    *) ks+=("$1") ;;
    esac
    shift
  done
  if [[ $mode == approx ]]; then
    ((${#ks[@]})) || ks=(101 251 501 1001)
    privacy=(--Delta 1e-5)
  else
    ((${#ks[@]})) || ks=(101 201 301 501 1001)
    privacy=(--Delta 0 --delta 0)
  fi
  printf '| K | m | wall | peak RSS | passes | rows | outcome |\n|---|---|---|---|---|---|---|\n'
  for k in "${ks[@]}"; do
    if [[ -n $mlist ]]; then ms=${mlist//,/ }; else ms="1 2 3 5 10 20 40 $(((k + 1) / 2))"; fi
    for m in $ms; do
      out=$(mktemp)
      set +e
      /usr/bin/time -o "$out.time" -f '%e %M' timeout "$limit" "$bin" solve --K "$k" --m "$m" "${privacy[@]}" --no-cache --format json > "$out" 2> "$out.err"
      rc=$?
      set -e
      read -r wall rss < <(tail -1 "$out.time")
      if [[ $rc == 0 ]]; then
        read -r passes rows status < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["solve"]["passes"], d["solve"]["rows"], d["certificate"]["status"])' "$out")
        outcome=$status
      elif [[ $rc == 124 ]]; then
        passes=- rows=- outcome="stopped after ${limit} s"
      else
        passes=- rows=- outcome="failed: $(tail -1 "$out.err" | cut -c1-120)"
      fi
      printf '| %s | %s | %s s | %d MiB | %s | %s | %s |\n' "$k" "$m" "${wall:-?}" $((${rss:-0} / 1024)) "$passes" "$rows" "$outcome"
      rm -f "$out" "$out.err" "$out.time"
    done
  done
  exit 0
fi
printf '| case | cold: wall | cold: peak RSS | warm (cached): wall | LP solves | rows | passes |\n|---|---|---|---|---|---|---|\n'
cases=(
  "--K 11 --m 3"
  "--K 41 --m 5"
  "--K 71 --m 9"
  "--K 101 --m 10"
  "--K 101 --m 10 --Delta 0 --delta 0"
  "--K 1001 --m 40 --Delta 0 --delta 0"
)
for c in "${cases[@]}"; do
  if [[ "${1:-}" == quick && "$c" == "--K 101 --m 10" ]]; then continue; fi
  dir=$(mktemp -d)
  cold=$( { /usr/bin/time -f '%e %M' "$bin" solve $c --cache-dir "$dir" --format json > "$dir/out.json"; } 2>&1 | tail -1)
  warm=$( { /usr/bin/time -f '%e' "$bin" solve $c --cache-dir "$dir" --format json > /dev/null; } 2>&1 | tail -1)
  stats=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["solve"]; print(s["lp_solves"], s["rows"], s["passes"], d["certificate"]["status"])' "$dir/out.json")
  read -r wall rss <<<"$cold"
  read -r lps rows passes status <<<"$stats"
  [[ "$status" == certified ]] || { echo "not certified: $c" >&2; exit 1; }
  printf '| `%s` | %s s | %d MiB | %s s | %s | %s | %s |\n' "$c" "$wall" $((rss / 1024)) "$warm" "$lps" "$rows" "$passes"
  rm -rf "$dir"
done
