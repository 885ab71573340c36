#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian packages attngen needs that are missing on this machine.
#
#   tools/deps.sh [build|test|bench|neon-model|all]      (default: build)
#
#   build  generator and library: lua5.4, luajit, penlight (+lfs), argparse, gcc (+libc headers), clang,
#          make, binutils
#   test   build + Criterion, the aarch64 cross compiler and libc, qemu-user, cmake, pkg-config, python3-numpy
#   bench  build + gnuplot (no X)
#   neon-model  build + python3, the aarch64 cross compiler, llvm-19 (llvm-mca with Neoverse models)
#   all    everything above
#
# Prints nothing and exits 0 when nothing is missing. Otherwise, as root it runs apt-get (apt-get update
# only when the package lists are absent or an install cannot find a package); as any other user it prints
# the exact command to run and exits 1. Written for Debian 12 (bookworm); plain POSIX sh.
set -eu

mode=${1:-build}
case $mode in
  build | test | bench | neon-model | all) ;;
  -h | --help)
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "usage: tools/deps.sh [build|test|bench|neon-model|all]" >&2
    exit 2
    ;;
esac

missing=""
need() { # need PACKAGE: add it once
  case " $missing " in
    *" $1 "*) ;;
    *) missing="${missing:+$missing }$1" ;;
  esac
}
have_cmd() { command -v "$1" >/dev/null 2>&1; }
cmd() { have_cmd "$1" || need "$2"; }      # cmd COMMAND PACKAGE
path() { [ -e "$1" ] || need "$2"; }       # path FILE PACKAGE

check_build() {
  cmd lua5.4 lua5.4
  cmd luajit luajit
  # Penlight and argparse for both interpreters (the generator must give identical output under each).
  path /usr/share/lua/5.1/pl/init.lua lua-penlight
  path /usr/share/lua/5.4/pl/init.lua lua-penlight
  path /usr/share/lua/5.1/argparse.lua lua-argparse
  path /usr/share/lua/5.4/argparse.lua lua-argparse
  # Penlight only recommends LuaFileSystem, which pl.path and pl.dir need.
  for lua in lua5.4 luajit; do
    if ! have_cmd $lua || ! $lua -e 'require("lfs")' >/dev/null 2>&1; then need lua-filesystem; fi
  done
  cmd gcc gcc
  # gcc only recommends the C library headers; --no-install-recommends would leave them out.
  path /usr/include/stdio.h libc6-dev
  cmd clang clang
  cmd make make
  cmd size binutils
}
check_test() {
  path /usr/include/criterion/criterion.h libcriterion-dev
  cmd aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu
  path /usr/aarch64-linux-gnu/include/stdio.h libc6-dev-arm64-cross
  cmd qemu-aarch64 qemu-user
  cmd cmake cmake
  cmd pkg-config pkg-config # make test-install builds a project with `pkg-config --cflags --libs attngen`
  path /usr/lib/python3/dist-packages/numpy/__init__.py python3-numpy # make test-python: /usr/bin/python3 with NumPy
}
check_bench() {
  cmd gnuplot gnuplot-nox
}
check_neon_model() { # make bench-neon-model: llvm-mca 19 (llvm-14's has no Neoverse scheduling models)
  cmd python3 python3
  cmd aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu
  cmd llvm-mca-19 llvm-19
}

check_build
case $mode in
  test) check_test ;;
  bench) check_bench ;;
  neon-model) check_neon_model ;;
  all) check_test; check_bench; check_neon_model ;;
esac

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "attngen ($mode) needs these Debian packages: $missing" >&2
  echo "run:" >&2
  echo "  sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
lists_present() {
  for f in /var/lib/apt/lists/*_Packages /var/lib/apt/lists/*_Packages.*; do
    [ -e "$f" ] && return 0
  done
  return 1
}
echo "tools/deps.sh: installing $missing" >&2
if ! lists_present; then
  apt-get update -q >&2
fi
# shellcheck disable=SC2086 # word splitting of the package list is intended
if ! apt-get install -y -q --no-install-recommends $missing >&2; then
  # Stale lists (a package moved to a new version) or no lists at all: refresh once and retry.
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends $missing >&2
fi
