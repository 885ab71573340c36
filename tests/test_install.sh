#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/test_install.sh (make test-install): `make install` / `make uninstall` and the installed packages, used
# the way a downstream project would use them. Everything happens in a temporary directory outside the tree
# (removed on success, kept on failure); no network.
#
#   1. staged install (DESTDIR, PREFIX=/opt/attngen): every file lands under $DESTDIR$PREFIX, the manifest lists
#      exactly the installed files, the staged command runs; make uninstall leaves no file.
#   2. install into a temporary PREFIX; the `attngen` command works from any directory and through a symlink.
#   3. CMake: a fresh project (tests/install/, copied out) does find_package(attngen) + attngen_generate() on a
#      small config (h8 kv2 d64 causal, prefill + decode; avx512+avx2+scalar on x86-64, neon+scalar on aarch64); the
#      build generates the kernels, the program checks them against a float64 reference (also with
#      ATTNGEN_ISA=scalar); touching the config regenerates; an incompatible version request is refused.
#   4. pkg-config: the installed `attngen` command generates the same config, the program is compiled with
#      `pkg-config --cflags --libs attngen` and checked the same way.
#   5. make uninstall: no file is left under the prefix (empty directories may stay).
# Environment: MAKE (default make), CC (default cc).
set -eu

repo=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
MAKE=${MAKE:-make}
CC=${CC:-cc}
start=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attngen-test-install.XXXXXX")
ok=0
cleanup() {
  if [ "$ok" = 1 ]; then rm -rf "$tmp"; else echo "test-install: files kept in $tmp" >&2; fi
}
trap cleanup EXIT
log=$tmp/log

say() { echo "test-install: $*"; }
fail() {
  echo "test-install: FAIL: $*" >&2
  exit 1
}
# quietly COMMAND...: run it with its output in $log, shown only if it fails
quietly() {
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    fail "$*"
  fi
}
no_files_left() { # no_files_left DIR WHAT
  left=$(find "$1" ! -type d 2>/dev/null || true)
  [ -z "$left" ] || fail "$2 left these files:
$left"
}

for c in cmake pkg-config "$CC"; do
  command -v "$c" >/dev/null 2>&1 || fail "$c not found (make deps-test installs cmake and pkg-config)"
done
mk() { "$MAKE" --no-print-directory -C "$repo" "$@"; }

# ---- 1. staged install and uninstall
stage=$tmp/stage
quietly mk install DESTDIR="$stage" PREFIX=/opt/attngen
p=$stage/opt/attngen
for f in bin/attngen lib/libattngen.a include/attngen/attngen.h include/attngen/attngen_kernel.h include/attngen/attngen_convert.h \
         lib/pkgconfig/attngen.pc lib/cmake/attngen/attngenConfig.cmake lib/cmake/attngen/attngenConfigVersion.cmake \
         share/attngen/gen/attngen.lua share/attngen/gen/version.lua share/attngen/tools/tune/tune.lua \
         share/attngen/tools/tune/tune_harness.c share/attngen/install_manifest.txt; do
  [ -f "$p/$f" ] || fail "staged install lacks $f"
done
[ -x "$p/bin/attngen" ] || fail "bin/attngen is not executable"
ls "$p"/share/attngen/templates/*.tpl >/dev/null 2>&1 || fail "staged install lacks share/attngen/templates/*.tpl"
ls "$p"/share/attngen/runtime/*.c >/dev/null 2>&1 || fail "staged install lacks share/attngen/runtime/*.c"
outside=$(find "$stage" ! -type d | grep -v "^$p/" || true)
[ -z "$outside" ] || fail "staged install wrote outside DESTDIR/PREFIX: $outside"
find "$stage" ! -type d | sed "s|^$stage||" | LC_ALL=C sort >"$tmp/found"
LC_ALL=C sort "$p/share/attngen/install_manifest.txt" >"$tmp/listed"
cmp -s "$tmp/found" "$tmp/listed" || { diff "$tmp/listed" "$tmp/found" >&2 || true; fail "the manifest differs from the installed files"; }
grep -q "prefix=/opt/attngen" "$p/lib/pkgconfig/attngen.pc" || fail "attngen.pc does not name PREFIX /opt/attngen"
# moved (staged) tree: the command finds share/attngen next to itself
(cd / && "$p/bin/attngen" --version) >"$tmp/v" 2>&1 || { cat "$tmp/v" >&2; fail "staged attngen --version"; }
quietly mk uninstall DESTDIR="$stage" PREFIX=/opt/attngen
no_files_left "$stage" "make uninstall (DESTDIR)"
say "staged install (DESTDIR, $(wc -l <"$tmp/listed" | tr -d ' ') files) and uninstall: ok"

# ---- 2. install into a temporary prefix; the command from anywhere
prefix=$tmp/prefix
quietly mk install PREFIX="$prefix"
PATH=$prefix/bin:$PATH
export PATH
version=$(cd / && attngen --version) || fail "attngen --version from /"
version=$(printf '%s\n' "$version" | sed -n 's/^attngen \([0-9][0-9.]*\).*/\1/p')
[ -n "$version" ] || fail "attngen --version printed no version"
major_minor=$(printf '%s\n' "$version" | cut -d. -f1,2)
mkdir -p "$tmp/elsewhere"
ln -s "$prefix/bin/attngen" "$tmp/elsewhere/attngen"
(cd "$tmp" && elsewhere/attngen --version) >/dev/null 2>&1 || fail "attngen through a symlink"
say "installed attngen $version into $prefix; the command runs from / and through a symlink"

case $(uname -m) in
  x86_64 | amd64 | i?86) isas='"avx512", "avx2", "scalar"' ;;
  aarch64 | arm64) isas='"neon", "scalar"' ;;
  *) isas='"scalar"' ;;
esac
write_config() {
  cat >"$1" <<EOF
-- a small model for tests/test_install.sh
return {
  name     = "install-test",
  heads    = 8,
  kv_heads = 2,
  head_dim = 64,
  masks    = { "causal" },
  phases   = { "prefill", "decode" },
  isas     = { $isas },
}
EOF
}
run_checks() { # run_checks PROGRAM WHAT: run it with the best ISA and with ATTNGEN_ISA=scalar
  "$1" >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "$2 program"; }
  sed 's/^/    /' "$tmp/out"
  ATTNGEN_ISA=scalar "$1" >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "$2 program with ATTNGEN_ISA=scalar"; }
  grep -q '__scalar' "$tmp/out" || { cat "$tmp/out" >&2; fail "$2 program with ATTNGEN_ISA=scalar ran no scalar kernel"; }
}

# ---- 3. CMake: find_package + attngen_generate
proj=$tmp/cmake-project
build=$tmp/cmake-build
mkdir -p "$proj"
cp "$repo/tests/install/CMakeLists.txt" "$repo/tests/install/main.c" "$proj/"
write_config "$proj/install-test.lua"
quietly cmake -S "$proj" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DATTNGEN_TEST_VERSION="$major_minor"
grep -q "attngen $version from $prefix/lib/cmake/attngen" "$log" || { cat "$log" >&2; fail "CMake did not use the attngen just installed"; }
quietly cmake --build "$build"
grep -q "attngen: generating attngen_install_test" "$log" || { cat "$log" >&2; fail "the CMake build did not run the generator"; }
[ -f "$build/attngen/install_model/attngen_install_test.c" ] || fail "CMake: no generated attngen_install_test.c"
say "CMake: find_package(attngen $major_minor) + attngen_generate(install_model CONFIG install-test.lua) built:"
run_checks "$build/attn_cmake" CMake
sleep 1
touch "$proj/install-test.lua"
quietly cmake --build "$build"
grep -q "attngen: generating attngen_install_test" "$log" || { cat "$log" >&2; fail "editing the config did not regenerate"; }
"$build/attn_cmake" >/dev/null 2>&1 || fail "CMake program after regeneration"
say "CMake: touching the config regenerates and rebuilds"
mkdir -p "$tmp/cmake-too-new"
cat >"$tmp/cmake-too-new/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.13)
project(too_new LANGUAGES C)
find_package(attngen 99.0 REQUIRED)
EOF
if cmake -S "$tmp/cmake-too-new" -B "$tmp/cmake-too-new/build" -DCMAKE_PREFIX_PATH="$prefix" >"$log" 2>&1; then
  fail "find_package(attngen 99.0) accepted attngen $version"
fi
grep -q "compatible with requested version" "$log" || { cat "$log" >&2; fail "find_package(attngen 99.0) failed for another reason"; }
say "CMake: find_package(attngen 99.0) is refused (version $version)"

# ---- 4. pkg-config and the attngen command
pc=$tmp/pkg-config-project
mkdir -p "$pc"
cp "$repo/tests/install/main.c" "$pc/"
write_config "$pc/install-test.lua"
PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PKG_CONFIG_PATH
[ "$(pkg-config --modversion attngen)" = "$version" ] || fail "pkg-config --modversion attngen is not $version"
[ "$(pkg-config --variable=generator attngen)" = "$prefix/bin/attngen" ] || fail "pkg-config generator variable"
flags=$(pkg-config --cflags --libs attngen | sed "s/ *$//") || fail "pkg-config --cflags --libs attngen"
(cd "$pc" && quietly attngen install-test.lua -o gen)
[ -f "$pc/gen/attngen_install_test.c" ] || fail "attngen install-test.lua -o gen wrote no gen/attngen_install_test.c"
# shellcheck disable=SC2086 # the flags are words
(cd "$pc" && quietly "$CC" -std=c99 -O2 -Wall -Wextra -Werror -pedantic -Igen main.c gen/attngen_install_test.c \
  $flags -o attn_pkgconfig)
say "pkg-config: attngen install-test.lua -o gen; $CC ... \$(pkg-config --cflags --libs attngen) = $flags:"
run_checks "$pc/attn_pkgconfig" pkg-config

# ---- 5. uninstall
quietly mk uninstall PREFIX="$prefix"
no_files_left "$prefix" "make uninstall"
quietly mk uninstall PREFIX="$prefix"
grep -q "nothing to remove" "$log" || fail "a second make uninstall should find nothing to remove"
say "make uninstall: no file left under $prefix"

ok=1
say "all passed in $(($(date +%s) - start)) s"
