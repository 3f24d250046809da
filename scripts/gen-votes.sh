#!/usr/bin/env bash
# Writes a synthetic vote file to stdout: N rows of K 0/1 votes (CSV, no
# header; "--id" adds an id column q1..qN). Each row is one of 4096 random
# vote vectors, so generation is fast; the votes are not meant to be
# realistic, only to exercise the reader and the aggregators.
# Usage: scripts/gen-votes.sh N [K] [--id] > votes.csv
set -euo pipefail
n=${1:?usage: gen-votes.sh N [K] [--id]}
k=${2:-11}
id=0
[[ "${3:-}" == --id ]] && id=1
exec mawk -v n="$n" -v k="$k" -v id="$id" 'BEGIN {
	srand(1)
	for (r = 0; r < 4096; r++) {
		row = ""
		for (j = 0; j < k; j++) row = row (j ? "," : "") (rand() < 0.7 ? 1 : 0)
		rows[r] = row
	}
	for (i = 1; i <= n; i++) {
		r = int(rand() * 4096)
		if (id) print "q" i "," rows[r]; else print rows[r]
	}
}'
