#!/usr/bin/env bash
# HiGHS (embedded by github.com/bartolsthoorn/gohighs) is C++: linking darrm
# needs libstdc++ and zlib besides gcc. This checks that a C program links
# against both and, if not, installs them from Debian when it can.
set -euo pipefail
probe() {
  local dir
  dir=$(mktemp -d)
  echo 'int main(void){return 0;}' > "$dir/p.c"
  gcc "$dir/p.c" -o "$dir/p" -lstdc++ -lz -lm -ldl >/dev/null 2>&1
  local ok=$?
  rm -rf "$dir"
  return $ok
}
ready="toolchain: gcc links C++ (-lstdc++) and zlib (-lz): ready to build darrm"
if probe; then
  echo "$ready"
  exit 0
fi
echo "toolchain: gcc cannot link -lstdc++ -lz; installing g++ and zlib1g-dev" >&2
if command -v apt-get >/dev/null; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq && $sudo_cmd apt-get install -y -qq g++ zlib1g-dev >/dev/null
fi
probe || { echo "toolchain: install a C++ standard library and zlib headers (Debian: apt-get install g++ zlib1g-dev)" >&2; exit 1; }
echo "$ready (installed g++ and zlib1g-dev)"
