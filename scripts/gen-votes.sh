#!/usr/bin/env bash
# Writes a synthetic vote file to stdout: N rows of K 0/1 votes (CSV, no
# header; "--id" adds an id column q1..qN). Each row is one of 4096 random
# vote vectors, so generation is fast; the votes are not meant to be
# realistic, only to exercise the reader and the aggregators.
#
# With "--npy C" it writes instead the class labels of K teachers on N
# queries among C classes (C <= 127) as a NumPy int8 array of shape
# (K, N), teachers x queries (the layout of PATE's published votes): each
# teacher gives query q's class, q mod C, with probability 0.7, else a
# uniform class, and abstains (-1) with probability 0.05. darrm reads it
# with --classes C --teachers-in-rows, or with a metadata header beside it.
# Usage: scripts/gen-votes.sh N [K] [--id] > votes.csv
#        scripts/gen-votes.sh N K --npy C > votes.npy
set -euo pipefail
n=${1:?usage: gen-votes.sh N [K] [--id | --npy C]}
k=${2:-11}
if [[ "${3:-}" == --npy ]]; then
	c=${4:?usage: gen-votes.sh N K --npy C}
	if ((c < 2 || c > 127 || n < 1 || k < 1)); then
		echo "gen-votes.sh: --npy needs N >= 1, K >= 1 and C in [2, 127] (int8 labels)" >&2
		exit 2
	fi
	# NumPy format 1.0: the magic string, the version, the header's length
	# (2 bytes, little-endian) and the header, padded with blanks to a
	# multiple of 64 bytes in all and ended by a line break.
	dict="{'descr': '|i1', 'fortran_order': False, 'shape': ($k, $n), }"
	pad=$(((64 - (10 + ${#dict} + 1) % 64) % 64))
	hlen=$((${#dict} + pad + 1))
	printf '\223NUMPY\001\000'
	printf "\\$(printf %03o $((hlen % 256)))\\$(printf %03o $((hlen / 256)))"
	printf '%s%*s\n' "$dict" "$pad" ''
	# One line of octal escapes per teacher, written as bytes by printf.
	mawk -v n="$n" -v k="$k" -v c="$c" 'BEGIN {
		srand(1)
		for (t = 0; t < k; t++) {
			row = ""
			for (q = 0; q < n; q++) {
				v = rand() < 0.7 ? q % c : int(rand() * c)
				if (rand() < 0.05) v = 255
				row = row sprintf("\\%03o", v)
			}
			print row
		}
	}' | while IFS= read -r row; do printf "$row"; done
	exit 0
fi
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
