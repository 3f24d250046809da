#!/usr/bin/env bash
# Writes a synthetic vote file to stdout (CSV, no header).
#
#   scripts/gen-votes.sh N [K] [--id]
# N rows of K 0/1 votes ("--id" adds an id column q1..qN). Each row is one
# of 4096 random vote vectors, so generation is fast; the votes are not
# meant to be realistic, only to exercise the reader and the aggregators.
#
#   scripts/gen-votes.sh --classes C [--abstain A] [--seed S] N K
# N rows of K class indices in 0..C-1 (read with --classes C), -1 for a
# teacher that abstains (with probability A, default 0), drawn as PATE's
# teachers vote on MNIST-like data: each query has a true class and a class
# it is confused with; three in four are easy (each teacher right with
# probability 0.85 to 0.99), one in six harder (0.5 to 0.85), the rest hard
# (0.15 to 0.5); a wrong teacher votes for the confusable class with
# probability 0.6, else for a class at random. The seed (default 1) fixes
# the file; two seeds give two independent sets, e.g. held-out votes to
# plan on and the votes to release.
set -euo pipefail
usage="usage: gen-votes.sh N [K] [--id] | gen-votes.sh --classes C [--abstain A] [--seed S] N K"
if [[ "${1:-}" == --classes ]]; then
	c=${2:?$usage}
	shift 2
	a=0 seed=1
	while [[ "${1:-}" == --* ]]; do
		case $1 in
		--abstain) a=${2:?$usage} ;;
		--seed) seed=${2:?$usage} ;;
		*) echo "$usage" >&2; exit 2 ;;
		esac
		shift 2
	done
	n=${1:?$usage}
	k=${2:?$usage}
	exec mawk -v n="$n" -v k="$k" -v c="$c" -v a="$a" -v seed="$seed" 'BEGIN {
		srand(seed)
		for (i = 1; i <= n; i++) {
			t = int(rand() * c); conf = (t + 1 + int(rand() * (c - 1))) % c
			u = rand()
			if (u < 0.75) acc = 0.85 + 0.14 * rand(); else if (u < 0.92) acc = 0.5 + 0.35 * rand(); else acc = 0.15 + 0.35 * rand()
			row = ""
			for (j = 0; j < k; j++) {
				if (rand() < a) v = -1
				else if (rand() < acc) v = t
				else if (rand() < 0.6) v = conf
				else v = int(rand() * c)
				row = row (j ? "," : "") v
			}
			print row
		}
	}'
fi
n=${1:?$usage}
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
