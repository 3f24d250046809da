#!/usr/bin/env bash
# Times `darrm solve` end to end for the targets of docs/solve.md: cold
# cache (a fresh directory) and warm cache, wall time and peak RSS.
# Usage: scripts/bench-solve.sh [quick]   ("quick" skips the K = 101, Delta > 0 case)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/darrm
go build -o "$bin" ./cmd/darrm
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "go: $(go version | cut -d' ' -f3)"
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
