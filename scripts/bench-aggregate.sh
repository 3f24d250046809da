#!/usr/bin/env bash
# Measures `darrm aggregate` end to end for the targets of docs/aggregate.md:
# K = 11, DaRRM with a cached gamma, 1M and 10M CSV rows, against `cat` and
# `wc -l` on the same file in the same run; wall time and peak RSS.
# Usage: scripts/bench-aggregate.sh [ROWS...]   (default: 1000000 10000000)
# Files go to a fresh temporary directory, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/darrm
go build -o "$bin" ./cmd/darrm
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "go: $(go version | cut -d' ' -f3)"
"$bin" solve --K 11 --m 3 --cache-dir "$work/cache" > /dev/null # warm the cache

# secs CMD...: wall seconds of CMD (its standard output discarded), to the millisecond
secs() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" > /dev/null
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
rows=("$@")
[[ ${#rows[@]} -gt 0 ]] || rows=(1000000 10000000)
printf '| rows | file | cat | wc -l | aggregate --out file | queries/s | ratio to cat | ratio to wc -l | peak RSS | aggregate > /dev/null | peak RSS |\n|---|---|---|---|---|---|---|---|---|---|---|\n'
for n in "${rows[@]}"; do
	f=$work/votes-$n.csv
	scripts/gen-votes.sh "$n" 11 > "$f"
	cat "$f" > /dev/null # into the page cache
	tcat=$(secs cat "$f")
	twc=$(secs wc -l "$f")
	agg=$( { /usr/bin/time -f '%e %M' "$bin" aggregate "$f" --m 3 --eps 0.1 --Delta 1e-5 --cache-dir "$work/cache" --out "$work/labels.csv" --format json > "$work/summary.json"; } 2>&1 | tail -1)
	tagg=$(secs "$bin" aggregate "$f" --m 3 --eps 0.1 --Delta 1e-5 --cache-dir "$work/cache" --out "$work/labels.csv" --format json)
	read -r _ rss <<<"$agg"
	read -r tnull rssnull <<<"$(/usr/bin/time -f '%e %M' "$bin" aggregate "$f" --m 3 --eps 0.1 --Delta 1e-5 --cache-dir "$work/cache" --format csv 2>&1 > /dev/null | tail -1)"
	answered=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["answered"])' "$work/summary.json")
	[[ "$answered" == "$n" ]] || { echo "answered $answered of $n" >&2; exit 1; }
	[[ $(grep -vc '^#' "$work/labels.csv") == $((n + 1)) ]] || { echo "label file has the wrong length" >&2; exit 1; }
	qps=$(awk -v n="$n" -v t="$tagg" 'BEGIN { printf "%.2fM", n / t / 1e6 }')
	printf '| %s | %s MB | %s s | %s s | %s s | %s | %s | %s | %d MiB | %s s | %d MiB |\n' "$n" $(($(stat -c %s "$f") / 1000000)) "$tcat" "$twc" "$tagg" "$qps" \
		"$(ratio "$tagg" "$tcat")" "$(ratio "$tagg" "$twc")" $((rss / 1024)) "$tnull" $((rssnull / 1024))
	rm -f "$f"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
