#!/usr/bin/env bash
# Times `darrm solve` end to end for the targets of docs/solve.md: cold
# cache (a fresh directory) and warm cache, wall time and peak RSS.
# Usage: scripts/bench-solve.sh [quick]   ("quick" skips the K = 101, Delta > 0 case)
#        scripts/bench-solve.sh sweep [K...] [--limit SECONDS]
#        scripts/bench-solve.sh approx [K...] [--m LIST] [--Delta D] [--limit SECONDS]
#        scripts/bench-solve.sh frontier [--m LIST] [--Delta D] [--limit SECONDS]
#        scripts/bench-solve.sh release [--base REF] [--K K] [--m LIST] [--limit SECONDS] [--base-limit SECONDS]
# sweep: pure DP (Delta = delta = 0), each K (default 101 201 301 501 1001)
# times m in {1, 2, 3, 5, 10, 20, 40, (K+1)/2}, cold, each case stopped
# after --limit seconds (default 300): wall time, peak RSS, passes, rows and
# the outcome (certified, failed with darrm's message, or stopped).
# approx: the same with Delta = 1e-5 (or --Delta) and the default delta, each K (default
# 101 251 501 1001) times m in --m (default 3,10,40), stopped after
# --limit seconds (default 3600).
# frontier: approx at K = 2001 for every m from 1 to 20 (--m to choose),
# each stopped after --limit seconds (default 600): the frontier that
# docs/solve.md states, five minutes and 2 GB a solve on 2 cores.
# sweep and approx report wall and CPU (user + sys) time, peak RSS,
# passes, rows, the gap and the outcome ("stalled" when the solve stopped
# closing its gap).
# release: the working tree against an earlier release in the same run.
# It builds the release from the git ref --base (a tag, a commit or a
# branch; by default where HEAD left main, git merge-base HEAD main, or
# HEAD's first parent when HEAD is on main, as after a merge) into a
# temporary directory, then solves
# approximate DP (eps 0.1, Delta 1e-5, the default delta) at --K (default
# 1001) for each m in --m (default 1,2,3,5,10), cold, with the new build and
# then the base, each stopped after --limit seconds (default 3600): wall and
# CPU (user + sys) time, peak RSS, the base's time over the new one's, the
# new gap and certificate, and the two utilities' relative difference.
# --base-limit stops the base sooner (default: --limit): a base stopped
# reports its CPU time so far, and the ratios are then lower bounds (">").
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/darrm
go build -o "$bin" ./cmd/darrm
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "go: $(go version | cut -d' ' -f3)"
if [[ "${1:-}" == release ]]; then
  shift
  base= k=1001 mlist=1,2,3,5,10 limit=3600 blimit=
  while (($#)); do
    case $1 in
    --base) base=$2; shift ;;
    --K) k=$2; shift ;;
    --m) mlist=$2; shift ;;
    --limit) limit=$2; shift ;;
    --base-limit) blimit=$2; shift ;;
    *) echo "release: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
  done
  blimit=${blimit:-$limit}
  if [[ -z $base ]]; then
    base=$(git merge-base HEAD main)
    [[ $base != "$(git rev-parse HEAD)" ]] || base=$(git rev-parse HEAD^)
  fi
  commit=$(git rev-parse --verify "$base^{commit}")
  old=$(mktemp -d)
  git archive "$commit" | tar -x -C "$old"
  (cd "$old" && go build -o "$old/darrm" ./cmd/darrm)
  echo "base: $base ($(git log -1 --format='%h %cs' "$commit")); new: the working tree ($(git log -1 --format='%h' HEAD)$(git diff --quiet HEAD || echo ', modified'))"
  echo "K = $k, eps 0.1, Delta 1e-5, default delta, cold; each run of the new build stopped after $limit s, of the base after $blimit s"
  # run BIN M LIMIT prints "wall cpu rss_mib status gap utility" of one solve.
  run() {
    local out rc
    out=$(mktemp)
    set +e
    /usr/bin/time -o "$out.time" -f '%e %U %S %M' timeout "$3" "$1" solve --K "$k" --m "$2" --no-cache --format json > "$out" 2> "$out.err"
    rc=$?
    set -e
    read -r wall user sys rss < <(tail -1 "$out.time")
    local cpu
    cpu=$(python3 -c "print(f'{$user + $sys:.1f}')")
    if [[ $rc == 0 ]]; then
      python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], sys.argv[3], int(sys.argv[4])//1024, d["certificate"]["status"], "%.2g" % d["gap"], repr(d["objective"]))' "$out" "$wall" "$cpu" "$rss"
    elif [[ $rc == 124 ]]; then
      echo ">$3 >$cpu $((rss / 1024)) stopped - -"
    else
      echo "$wall $cpu $((rss / 1024)) failed - -"
    fi
    rm -f "$out" "$out.err" "$out.time"
  }
  printf '| m | base: wall | base: CPU | base: RSS | new: wall | new: CPU | new: RSS | wall ratio | CPU ratio | new: gap | new: certificate | utility, relative difference |\n'
  printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
  for m in ${mlist//,/ }; do
    echo "m = $m: load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    read -r nwall ncpu nrss nstatus ngap nobj < <(run "$bin" "$m" "$limit")
    read -r bwall bcpu brss _ _ bobj < <(run "$old/darrm" "$m" "$blimit")
    ratios=$(python3 -c '
import sys
def f(x): return float(x.lstrip(">"))
bw, nw, bc, nc = sys.argv[1:5]
lower = ">" if bw.startswith(">") else ""
def r(b, n): return lower + "%.1f" % (f(b) / f(n)) if f(n) > 0 else "-"
diff = "-"
if sys.argv[5] != "-" and sys.argv[6] != "-":
    b, n = float(sys.argv[5]), float(sys.argv[6])
    diff = "%.1e" % (abs(n - b) / abs(b))
print(r(bw, nw), r(bc, nc), diff)' "$bwall" "$nwall" "$bcpu" "$ncpu" "$bobj" "$nobj")
    read -r rwall rcpu rdiff <<<"$ratios"
    printf '| %s | %s s | %s s | %s MiB | %s s | %s s | %s MiB | %s | %s | %s | %s | %s |\n' "$m" "$bwall" "$bcpu" "$brss" "$nwall" "$ncpu" "$nrss" "$rwall" "$rcpu" "$ngap" "$nstatus" "$rdiff"
  done
  echo "machine after the run: load $(cut -d' ' -f1-3 /proc/loadavg)"
  rm -rf "$old"
  exit 0
fi
if [[ "${1:-}" == sweep || "${1:-}" == approx || "${1:-}" == frontier ]]; then
  mode=$1
  shift
  ks=() limit=300 mlist= delta=
  [[ $mode == approx ]] && limit=3600 mlist=3,10,40
  [[ $mode == frontier ]] && limit=600 mlist=$(seq -s, 1 20) ks=(2001) mode=approx
  while (($#)); do
    case $1 in
    --limit) limit=$2; shift ;;
    --m) mlist=$2; shift ;;
    --Delta) delta=$2; shift ;;
    *) ks+=("$1") ;;
    esac
    shift
  done
  if [[ $mode == approx ]]; then
    ((${#ks[@]})) || ks=(101 251 501 1001)
    delta=${delta:-1e-5}
    privacy=(--Delta "$delta")
    echo "Delta $delta, default delta, cold"
  else
    [[ -z $delta ]] || { echo "sweep is pure DP: --Delta is for approx and frontier" >&2; exit 2; }
    ((${#ks[@]})) || ks=(101 201 301 501 1001)
    privacy=(--Delta 0 --delta 0)
  fi
  printf '| K | m | wall | CPU | peak RSS | passes | rows | gap | outcome |\n|---|---|---|---|---|---|---|---|---|\n'
  for k in "${ks[@]}"; do
    if [[ -n $mlist ]]; then ms=${mlist//,/ }; else ms="1 2 3 5 10 20 40 $(((k + 1) / 2))"; fi
    for m in $ms; do
      out=$(mktemp)
      set +e
      /usr/bin/time -o "$out.time" -f '%e %U %S %M' timeout "$limit" "$bin" solve --K "$k" --m "$m" "${privacy[@]}" --no-cache --format json > "$out" 2> "$out.err"
      rc=$?
      set -e
      read -r wall user sys rss < <(tail -1 "$out.time")
      cpu=$(python3 -c "print(f'{${user:-0} + ${sys:-0}:.1f}')")
      if [[ $rc == 0 ]]; then
        read -r passes rows gap status < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["solve"]; print(s["passes"], s["rows"], "%.2g" % d["gap"], d["certificate"]["status"] + (", stalled" if s.get("stalled") else ""))' "$out")
        outcome=$status
      elif [[ $rc == 124 ]]; then
        passes=- rows=- gap=- outcome="stopped after ${limit} s"
      else
        passes=- rows=- gap=- outcome="failed: $(tail -1 "$out.err" | cut -c1-120)"
      fi
      printf '| %s | %s | %s s | %s s | %d MiB | %s | %s | %s | %s |\n' "$k" "$m" "${wall:-?}" "$cpu" $((${rss:-0} / 1024)) "$passes" "$rows" "$gap" "$outcome"
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
