#!/usr/bin/env bash
# Usage: scripts/sandbox.sh [--writable DIR]... COMMAND [ARG...]
#
# Runs a command, the tests as a rule (.ci/run runs go test ./... so), where
# it cannot write outside folders of its own, and fails when it tried:
#
#   - HOME and TMPDIR are new empty folders; XDG_* and darrm's
#     DARRM_CACHE_DIR and DARRM_STATE_DIR are unset, so that every default
#     falls under that HOME; DARRM_DATA points at the data of
#     scripts/fetch-data.sh when they are present;
#   - where user namespaces are available (Linux, `unshare -r`), the command
#     runs in a user and mount namespace of its own in which /tmp, /var/tmp,
#     the real home folder, the data folder and the current directory (the
#     repository) are read-only, except the new HOME and TMPDIR, Go's build
#     and module caches and each --writable DIR: a write anywhere else there
#     fails with "Read-only file system";
#   - afterwards, anything left in the new HOME or TMPDIR fails the run and
#     is listed (Go's own telemetry counters in HOME aside).
#
# Inside the namespace the command runs as its root, mapped to the caller:
# tests that need another user (TestUnwritableLedger) skip there.
set -euo pipefail

writable=()
while [[ ${1:-} == --writable ]]; do
	writable+=("$2")
	shift 2
done
if (($# == 0)); then
	echo "usage: scripts/sandbox.sh [--writable DIR]... COMMAND [ARG...]" >&2
	exit 2
fi

box=$(mktemp -d)
trap 'rm -rf "$box"' EXIT
mkdir "$box/home" "$box/tmp"

# Go keeps its caches where they are, although HOME moves.
for v in GOCACHE GOMODCACHE GOPATH GOENV; do
	export "$v=$(go env "$v")"
done
data=${DARRM_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/darrm}
if [[ -d $data ]]; then
	export DARRM_DATA=$data
else
	unset DARRM_DATA
	data=
fi
realhome=$HOME
unset XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME XDG_STATE_HOME DARRM_CACHE_DIR DARRM_STATE_DIR
export HOME=$box/home TMPDIR=$box/tmp

# mounts: the shell code that binds the writable folders onto themselves
# and then the read-only ones, recursively, read-only; the writable binds
# inside stay writable.
mounts="set -e"
for d in "$box" "$GOCACHE" "$GOMODCACHE" "${writable[@]}"; do
	[[ -d $d ]] && mounts+=$'\n'"mount --bind -- $(printf %q "$d") $(printf %q "$d")"
done
for d in /tmp /var/tmp "$realhome" "$data" "$PWD"; do
	[[ -n $d && $d != / && -d $d ]] || continue
	q=$(printf %q "$d")
	mounts+=$'\n'"mount --rbind -- $q $q"$'\n'"mount -o remount,bind,ro -- $q"
done
mounts+=$'\n'"cd -- \"\$PWD\""

status=0
if unshare --user --map-root-user --mount bash -c "$mounts"$'\ntest ! -w /tmp' 2> "$box/why"; then
	unshare --user --map-root-user --mount bash -c "$mounts"$'\nset +e\nexec "$@"' bash "$@" || status=$?
else
	echo "sandbox: user namespaces are not available ($(head -c 300 "$box/why")): /tmp and the home folder stay writable; only HOME and TMPDIR are checked" >&2
	"$@" || status=$?
fi

left=$(cd "$box" && find home tmp -mindepth 1 \( -path home/.config/go -prune \) -o \( ! -path home/.config -print \) | head -n 40)
if [[ -n $left ]]; then
	echo "sandbox: the command left files in its HOME or TMPDIR (a test writes outside its t.TempDir()):" >&2
	echo "$left" >&2
	((status)) || status=1
fi
exit "$status"
