#!/usr/bin/env bash
# Measures darrm's PATE commands end to end on synthetic counts files of
# K = 250 teachers over C = 10 classes (PATE's MNIST setting): `account
# pate` (Confident-GNMax T = 200, sigma1 = 150, sigma2 = 40: the expected
# cost at the 238 default orders and the smooth-sensitivity release) and
# `aggregate` with confident-gnmax, gnmax and lnmax; wall time and peak
# RSS of each, and the load. With "experiment" it also times `darrm pate`
# (250 MNIST teachers, needs scripts/fetch-data.sh's data): cold (teachers
# trained) and cached.
# Usage: scripts/bench-pate.sh [QUERIES...] [experiment]   (default: 5000 100000)
# Files go to a fresh temporary directory, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/darrm
go build -o "$bin" ./cmd/darrm
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "go: $(go version | cut -d' ' -f3)"

# run NAME CMD...: one table row with the wall seconds and peak RSS of CMD.
run() {
	local name=$1 secs rss
	shift
	/usr/bin/time -o "$work/time" -f '%e %M' "$@" > /dev/null 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
	read -r secs rss < "$work/time"
	printf '| %s | %s s | %d MiB |\n' "$name" "$secs" $((rss / 1024))
}

experiment=0
queries=()
for a in "$@"; do
	if [[ $a == experiment ]]; then experiment=1; else queries+=("$a"); fi
done
[[ ${#queries[@]} -gt 0 || $experiment == 1 ]] || queries=(5000 100000)
printf '| command | wall | peak RSS |\n|---|---|---|\n'
for n in "${queries[@]}"; do
	f=$work/counts-$n.csv
	# Each row: a plurality of 150-249 votes for a random class, the rest
	# spread at random.
	mawk -v n="$n" 'BEGIN {
		srand(1)
		print "# {\"darrm-votes\":1,\"ensemble\":\"bench-pate\",\"K\":250,\"classes\":10,\"layout\":\"counts\",\"relation\":\"one-vote\",\"kind\":\"fixed\",\"partition\":\"keyed-hash\",\"teachers\":[{\"count\":250,\"source\":{\"method\":\"none\"}}]}"
		for (i = 1; i <= n; i++) {
			for (j = 0; j < 10; j++) c[j] = 0
			top = 150 + int(rand() * 100)
			c[int(rand() * 10)] += top
			for (v = top; v < 250; v++) c[int(rand() * 10)]++
			row = c[0]
			for (j = 1; j < 10; j++) row = row "," c[j]
			print row
		}
	}' > "$f"
	run "account pate, $n queries" "$bin" account pate "$f" --threshold 200 --sigma1 150 --sigma2 40 --target-delta 1e-5 --format json
	run "aggregate confident-gnmax, $n queries" "$bin" aggregate "$f" --mechanism confident-gnmax --threshold 200 --sigma1 150 --sigma2 40 --delta 1e-5 --out "$work/labels.csv" --format json
	run "aggregate gnmax, $n queries" "$bin" aggregate "$f" --mechanism gnmax --sigma2 40 --delta 1e-5 --out "$work/labels.csv" --format json
	run "aggregate lnmax, $n queries" "$bin" aggregate "$f" --mechanism lnmax --laplace-scale 20 --out "$work/labels.csv" --format json
	rm -f "$f"
done
if [[ $experiment == 1 ]]; then
	cache=$work/teachers
	run "darrm pate, cold (250 teachers trained)" "$bin" pate --dataset mnist --teachers 250 --cache-dir "$cache" --student --format json
	run "darrm pate, cached teachers" "$bin" pate --dataset mnist --teachers 250 --cache-dir "$cache" --student --format json
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
