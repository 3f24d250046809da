#!/usr/bin/env bash
# The tests against PostgreSQL (internal/pgtest; docs/design.md, "Tests
# against PostgreSQL") start a throwaway server from the installed server
# binaries, initdb and postgres. This finds them where the tests look (initdb
# on PATH, else /usr/lib/postgresql/*/bin) and, if they are missing, installs
# Debian's postgresql package when it can.
set -euo pipefail
find_bin() {
  local d
  if d=$(command -v initdb); then
    d=$(dirname "$(readlink -f "$d")")
    if [[ -x $d/postgres ]]; then echo "$d"; return 0; fi
  fi
  for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -rV); do
    if [[ -x $d/initdb && -x $d/postgres ]]; then echo "$d"; return 0; fi
  done
  return 1
}
if bin=$(find_bin); then
  echo "postgres: the server's binaries are in $bin"
  exit 0
fi
echo "postgres: no initdb and postgres; installing Debian's postgresql" >&2
if command -v apt-get >/dev/null; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq &&
    $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi
bin=$(find_bin) || {
  echo "postgres: install PostgreSQL's server (Debian: apt-get install postgresql)" >&2
  exit 1
}
echo "postgres: the server's binaries are in $bin (installed postgresql)"
