#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/test_install.sh (make test-install): `make install` / `make uninstall` and the installed packages, used
# the way a downstream project would use them. Everything happens in a temporary directory outside the tree
# (removed on success, kept on failure); no network.
#
#   1. staged install (DESTDIR, PREFIX=/opt/attngen): every file lands under $DESTDIR$PREFIX, the manifest lists
#      exactly the installed files and the directories the install created, the staged command runs; make
#      uninstall leaves nothing under the stage but the directories above PREFIX.
#   2. install into an empty temporary PREFIX; the `attngen` command works from any directory and through a
#      symlink, and its --help names the installed documentation.
#   3. CMake: a fresh project (tests/install/, copied out) does find_package(attngen) + attngen_generate() on a
#      small config (h8 kv2 d64 causal, prefill + decode; avx512+avx2+scalar on x86-64, neon+scalar on aarch64); the
#      build generates the kernels, the program checks them against a float64 reference (also with
#      ATTNGEN_ISA=scalar); touching the config regenerates; an incompatible version request is refused.
#      A second program links the same kernels to the shared library (attngen::runtime_shared).
#   4. pkg-config: the installed `attngen` command generates the same config, the program is compiled with
#      `pkg-config --cflags --libs attngen` (the shared library, run with LD_LIBRARY_PATH) and with
#      `cc -static ... $(pkg-config --static --libs attngen)`, and checked the same way.
#   5. relocation: an install moved elsewhere as a whole builds and runs a program through its attngen.pc.
#   6. vendoring: `attngen --vendor` from the source tree and from the installed command writes the same directory,
#      which gcc and clang compile alone (no Lua, no ISA flags) into examples/downstream's program, which runs; a model
#      of fp32 caches only (gpt2) gets generic kernels for fp32 only, and tests/install/vendor_types.c checks its
#      fp32 fallback against float64 and that an int8 shape is refused by name.
#   7. make uninstall: the prefix is left as it was before the install (empty), and in a prefix whose bin/
#      already held another file, that file and bin/ stay.
# Environment: MAKE (default make), CC (default cc), LUA (default lua5.4).
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

LUA=${LUA:-lua5.4}
for c in cmake pkg-config readelf gcc clang "$CC"; do
  command -v "$c" >/dev/null 2>&1 || fail "$c not found (make deps-test installs cmake and pkg-config)"
done
# the builds below compile with every CPU (each step's output is checked after it)
jobs=$(nproc 2>/dev/null || echo 2)
mk() { "$MAKE" --no-print-directory -j"$jobs" -C "$repo" "$@"; }

# ---- 1. staged install and uninstall
stage=$tmp/stage
quietly mk install DESTDIR="$stage" PREFIX=/opt/attngen
p=$stage/opt/attngen
for f in bin/attngen lib/libattngen.a lib/libattngen.so include/attngen/attngen.h include/attngen/attngen_kernel.h include/attngen/attngen_convert.h \
         lib/pkgconfig/attngen.pc lib/cmake/attngen/attngenConfig.cmake lib/cmake/attngen/attngenConfigVersion.cmake \
         share/attngen/gen/attngen.lua share/attngen/gen/version.lua share/attngen/tools/tune/tune.lua \
         share/attngen/tools/tune/tune_harness.c share/attngen/install_manifest.txt \
         share/doc/attngen/README.md share/doc/attngen/CHANGELOG.md share/doc/attngen/LICENSE; do
  [ -f "$p/$f" ] || fail "staged install lacks $f"
done
[ -x "$p/bin/attngen" ] || fail "bin/attngen is not executable"
ls "$p"/share/attngen/templates/*.tpl >/dev/null 2>&1 || fail "staged install lacks share/attngen/templates/*.tpl"
ls "$p"/share/attngen/runtime/*.c >/dev/null 2>&1 || fail "staged install lacks share/attngen/runtime/*.c"
for f in "$repo"/docs/*.md; do
  cmp -s "$f" "$p/share/doc/attngen/docs/${f##*/}" || fail "staged install lacks share/doc/attngen/docs/${f##*/}"
done
# the shared library: its soname is the name of the link next to it, which libattngen.so (for -lattngen) names
soname=$(readelf -d "$p/lib/libattngen.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
case $soname in libattngen.so.[0-9]*) ;; *) fail "libattngen.so has no soname libattngen.so.<version> (got '$soname')" ;; esac
[ "$(readlink "$p/lib/libattngen.so")" = "$soname" ] || fail "lib/libattngen.so does not link to $soname"
[ -f "$p/lib/$(readlink "$p/lib/$soname")" ] || fail "lib/$soname does not link to a file"
outside=$(find "$stage" ! -type d | grep -v "^$p/" || true)
[ -z "$outside" ] || fail "staged install wrote outside DESTDIR/PREFIX: $outside"
same_list() { # same_list FOUND LISTED WHAT
  cmp -s "$1" "$2" || { diff "$2" "$1" >&2 || true; fail "the manifest differs from the $3"; }
}
find "$stage" ! -type d | sed "s|^$stage||" | LC_ALL=C sort >"$tmp/found"
grep -v '/$' "$p/share/attngen/install_manifest.txt" | LC_ALL=C sort >"$tmp/listed"
same_list "$tmp/found" "$tmp/listed" "installed files"
# every directory at or under PREFIX was created by this install (the stage was empty)
find "$p" -type d | sed "s|^$stage||; s|\$|/|" | LC_ALL=C sort >"$tmp/found-dirs"
grep '/$' "$p/share/attngen/install_manifest.txt" | LC_ALL=C sort >"$tmp/listed-dirs"
same_list "$tmp/found-dirs" "$tmp/listed-dirs" "directories the install created"
# shellcheck disable=SC2016 # pkg-config's variable, not the shell's
grep -qx 'prefix=${pcfiledir}/../..' "$p/lib/pkgconfig/attngen.pc" || fail "attngen.pc does not find its prefix from its own place"
# moved (staged) tree: the command finds share/attngen next to itself
(cd / && "$p/bin/attngen" --version) >"$tmp/v" 2>&1 || { cat "$tmp/v" >&2; fail "staged attngen --version"; }
quietly mk uninstall DESTDIR="$stage" PREFIX=/opt/attngen
no_files_left "$stage" "make uninstall (DESTDIR)"
[ ! -e "$p" ] || fail "make uninstall (DESTDIR) left the PREFIX directory that make install created: $(find "$p")"
say "staged install (DESTDIR, $(wc -l <"$tmp/listed" | tr -d ' ') files) and uninstall: ok"

# ---- 2. install into a temporary prefix; the command from anywhere
prefix=$tmp/prefix
mkdir "$prefix"
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
attngen --help | grep -qx "Documentation: $prefix/share/doc/attngen/README.md" ||
  fail "attngen --help does not name $prefix/share/doc/attngen/README.md"
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
needs_shared() { # needs_shared PROGRAM WHAT: true when PROGRAM loads the shared library (by its soname)
  readelf -d "$1" | grep -q "(NEEDED).*\[$soname\]" && return 0
  echo "test-install: $2 program does not load $soname" >&2
  return 1
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
quietly cmake --build "$build" -j "$jobs"
grep -q "attngen: generating attngen_install_test" "$log" || { cat "$log" >&2; fail "the CMake build did not run the generator"; }
[ -f "$build/attngen/install_model/attngen_install_test.c" ] || fail "CMake: no generated attngen_install_test.c"
say "CMake: find_package(attngen $major_minor) + attngen_generate(install_model CONFIG install-test.lua) built:"
run_checks "$build/attn_cmake" CMake
needs_shared "$build/attn_cmake_shared" "CMake attngen::runtime_shared"
if readelf -d "$build/attn_cmake" | grep -q "(NEEDED).*libattngen"; then fail "CMake attngen::runtime program loads libattngen.so"; fi
say "CMake: the same kernels linked to attngen::runtime_shared ($soname, found through the build's rpath):"
run_checks "$build/attn_cmake_shared" "CMake (shared runtime)"
sleep 1
touch "$proj/install-test.lua"
quietly cmake --build "$build" -j "$jobs"
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
generator=$(pkg-config --variable=generator attngen)
[ "$(cd "${generator%/*}" && pwd -P)/attngen" = "$(cd "$prefix/bin" && pwd -P)/attngen" ] ||
  fail "pkg-config generator variable: $generator"
(cd "$pc" && quietly attngen install-test.lua -o gen)
[ -f "$pc/gen/attngen_install_test.c" ] || fail "attngen install-test.lua -o gen wrote no gen/attngen_install_test.c"
pkg_build() { # pkg_build DIR PROGRAM FLAGS...: compile DIR's main.c and generated kernels with FLAGS
  d=$1 program=$2
  shift 2
  (cd "$d" && quietly "$CC" -std=c99 -O2 -Wall -Wextra -Werror -pedantic -Igen main.c gen/attngen_install_test.c \
    "$@" -o "$program")
}
flags=$(pkg-config --cflags --libs attngen | sed "s/ *$//") || fail "pkg-config --cflags --libs attngen"
# shellcheck disable=SC2086 # the flags are words
pkg_build "$pc" attn_pkgconfig $flags
needs_shared "$pc/attn_pkgconfig" "pkg-config --libs"
say "pkg-config: attngen install-test.lua -o gen; $CC ... \$(pkg-config --cflags --libs attngen) = $flags"
say "  (links $soname; run with LD_LIBRARY_PATH=$prefix/lib):"
LD_LIBRARY_PATH=$prefix/lib
export LD_LIBRARY_PATH
run_checks "$pc/attn_pkgconfig" pkg-config
unset LD_LIBRARY_PATH
static_flags=$(pkg-config --static --cflags --libs attngen | sed "s/ *$//") || fail "pkg-config --static --libs attngen"
# shellcheck disable=SC2086 # the flags are words
pkg_build "$pc" attn_static -static $static_flags
if readelf -d "$pc/attn_static" 2>/dev/null | grep -q '(NEEDED)'; then fail "cc -static \$(pkg-config --static ...) linked shared libraries"; fi
say "pkg-config: $CC -static ... \$(pkg-config --static --cflags --libs attngen) = $static_flags:"
run_checks "$pc/attn_static" "pkg-config --static"

# ---- 5. a moved install: attngen.pc finds its prefix from its own place
first=$tmp/reloc-first
moved=$tmp/reloc-moved
quietly mk install PREFIX="$first"
mv "$first" "$moved"
rp=$tmp/reloc-project
mkdir -p "$rp"
cp "$repo/tests/install/main.c" "$rp/"
write_config "$rp/install-test.lua"
(cd "$rp" && quietly "$moved/bin/attngen" install-test.lua -o gen)
PKG_CONFIG_PATH=$moved/lib/pkgconfig
flags=$(pkg-config --cflags --libs attngen | sed "s/ *$//") || fail "pkg-config of the moved install"
case $flags in
  *reloc-first*) fail "the moved attngen.pc still names the old prefix: $flags" ;;
  *"-I$moved/"*"-L$moved/"*) ;;
  *) fail "the moved attngen.pc does not name the new prefix $moved: $flags" ;;
esac
# shellcheck disable=SC2086 # the flags are words
pkg_build "$rp" attn_moved $flags -Wl,-rpath,"$(pkg-config --variable=libdir attngen)"
say "moved install: $CC ... \$(pkg-config --cflags --libs attngen) = $flags:"
run_checks "$rp/attn_moved" "moved install"
rm -rf "$moved"
PKG_CONFIG_PATH=$prefix/lib/pkgconfig

# ---- 6. vendoring: attngen --vendor, then a C99 compiler alone
vendor_build() { # vendor_build DIR WHAT: gcc and clang (at once) compile DIR/*.c with the downstream example; it runs
  for c in gcc clang; do
    "$c" -std=c99 -O2 -Wall -Wextra -Werror -pedantic -I"$1" "$1"/*.c "$repo/examples/downstream/main.c" \
      -lm -pthread -o "$1-$c" >"$1-$c.log" 2>&1 &
    eval "pid_$c=\$!"
  done
  for c in gcc clang; do
    eval "wait \$pid_$c" || { cat "$1-$c.log" >&2; fail "$2: $c does not compile it"; }
    quietly "$1-$c"
    grep -q "all results match" "$log" || { cat "$log" >&2; fail "$2, built by $c: no 'all results match'"; }
  done
  say "vendoring: $2: $(find "$1" -type f | wc -l | tr -d ' ') files, built by gcc and clang with no ISA flags, runs"
}
(cd "$repo" && quietly "$LUA" gen/attngen.lua configs/llama-3-8b.lua --vendor -o "$tmp/vendor-tree")
vendor_build "$tmp/vendor-tree" "attngen --vendor from the source tree"
# the installed command writes the same files, so they build and run as the tree's did
(cd "$repo" && quietly attngen configs/llama-3-8b.lua --vendor -o "$tmp/vendor-installed")
diff -r "$tmp/vendor-tree" "$tmp/vendor-installed" >"$log" 2>&1 || { cat "$log" >&2; fail "the installed attngen vendors other files"; }
say "vendoring: attngen --vendor from $prefix writes the same files"
# a model of fp32 caches only: its vendored generic kernels read fp32 only, and refuse another type by name
(cd "$repo" && quietly attngen configs/gpt2.lua --vendor -o "$tmp/vendor-f32")
grep -q "^ \*   storage types: f32$" "$tmp/vendor-f32/attngen_generic.c" || fail "gpt2's vendored generic kernels are not fp32 only"
quietly "$CC" -std=c99 -O2 -Wall -Wextra -Werror -pedantic -I"$tmp/vendor-f32" "$tmp/vendor-f32"/*.c \
  "$repo/tests/install/vendor_types.c" -lm -pthread -o "$tmp/vendor-f32-types"
quietly "$tmp/vendor-f32-types"
grep -q "all checks passed" "$log" || { cat "$log" >&2; fail "the vendored fp32-only runtime: tests/install/vendor_types.c"; }
say "vendoring: gpt2 (fp32 caches) gets generic kernels for fp32 only ($(wc -l <"$tmp/vendor-f32/attngen_generic.c" | tr -d ' ') lines); an int8 shape is refused by name"

# ---- 7. uninstall
quietly mk uninstall PREFIX="$prefix"
left=$(find "$prefix" -mindepth 1)
if [ ! -d "$prefix" ] || [ -n "$left" ]; then fail "make uninstall did not leave $prefix as it was (empty); left:
$left"; fi
quietly mk uninstall PREFIX="$prefix"
grep -q "nothing to remove" "$log" || fail "a second make uninstall should find nothing to remove"
say "make uninstall: $prefix is empty again, as before the install"
shared=$tmp/shared-prefix
mkdir -p "$shared/bin"
echo "another tool" >"$shared/bin/other-tool"
quietly mk install PREFIX="$shared"
quietly mk uninstall PREFIX="$shared"
left=$(cd "$shared" && find . | LC_ALL=C sort | tr '\n' ' ')
[ "$left" = ". ./bin ./bin/other-tool " ] || fail "make uninstall in a prefix with its own bin/ left: $left"
say "make uninstall: a bin/ that was there before the install stays, with its file"

ok=1
say "all passed in $(($(date +%s) - start)) s"
