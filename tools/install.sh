#!/bin/sh
# SPDX-License-Identifier: MIT
# tools/install.sh: the work behind `make install` and `make uninstall` (install.mk calls it).
#
#   PREFIX=/usr/local DESTDIR= LIB=build/install/libattngen.a SHLIB=build/install/libattngen.so.0.2.0 \
#     SONAME=libattngen.so.0.2 RUNTIME_SRC="..." RUNTIME_HDR="..." sh tools/install.sh install
#   PREFIX=/usr/local DESTDIR= sh tools/install.sh uninstall
#
# install   writes the files below under $DESTDIR$PREFIX and lists each one (its path without DESTDIR) in
#           share/attngen/install_manifest.txt, then each directory it had to create (those lines end in /).
#           A previous install found there is removed first, so files that a newer attngen no longer installs
#           do not linger.
#             bin/attngen                          generator command (packaging/attngen.sh.in)
#             share/attngen/gen/, templates/       the generator's Lua modules and templates
#             share/attngen/tools/tune/            the tuning tool behind `attngen --tune`
#             share/attngen/runtime/               $RUNTIME_SRC and $RUNTIME_HDR, flat, for vendoring
#             lib/libattngen.a                     $LIB: the runtime and the generic kernels
#             lib/libattngen.so.<version>          $SHLIB, the same as a shared library; the links $SONAME -> it
#                                                  and libattngen.so -> $SONAME
#             include/attngen/                     $RUNTIME_HDR
#             lib/pkgconfig/attngen.pc             packaging/attngen.pc.in
#             lib/cmake/attngen/attngenConfig.cmake, attngenConfigVersion.cmake
#             share/doc/attngen/                   README.md, CHANGELOG.md, LICENSE, docs/*.md
# uninstall removes exactly the files in the manifest (after checking that each lies under $PREFIX), then the
#           directories it lists, deepest first, each only once empty: a directory that existed before the
#           install (bin, lib, ... of a shared prefix) is not listed, so it stays. A manifest without directory
#           lines (written by an older attngen) removes the directories only attngen uses (share/attngen/...,
#           include/attngen, lib/cmake/attngen) once empty.
# Run from the top of the attngen tree. Plain POSIX sh.
set -eu

mode=${1:-}
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
LUA=${LUA:-lua5.4}

die() {
  echo "$mode: $*" >&2
  exit 1
}

case $mode in
  install | uninstall) ;;
  *)
    echo "usage: tools/install.sh install|uninstall  (see the comment at its top)" >&2
    exit 2
    ;;
esac
case $PREFIX in
  /*) ;;
  *) die "PREFIX must be an absolute path (got '$PREFIX')" ;;
esac
# the paths end up in sed replacements, a pkg-config file, CMake and make: keep them plain
case $PREFIX$DESTDIR in
  *[!A-Za-z0-9/._+-]*) die "PREFIX and DESTDIR may only contain letters, digits and / . _ + - (got '$DESTDIR' '$PREFIX')" ;;
esac
PREFIX=$(printf '%s\n' "$PREFIX" | sed 's|//*|/|g; s|\(.\)/$|\1|')

share=$PREFIX/share/attngen
manifest=$share/install_manifest.txt

# owned DIR: true for the directories only attngen uses: what uninstall removes once they are empty when the
# manifest does not list the directories
owned() {
  case $1 in
    "$share" | "$share"/* | "$PREFIX/include/attngen" | "$PREFIX/lib/cmake/attngen") return 0 ;;
  esac
  return 1
}

remove_listed() { # remove_listed MANIFEST: the files it lists, then its directories left empty
  # check every line before removing anything
  while IFS= read -r f; do
    [ -n "$f" ] || continue
    case $f in
      "$PREFIX"/*) ;;
      *) die "$DESTDIR$1 lists '$f', which is not under PREFIX $PREFIX: refusing to remove anything" ;;
    esac
    case $f in
      *'/../'* | *'/./'* | */..) die "$DESTDIR$1 lists '$f': refusing a path with . or .. (removed nothing)" ;;
    esac
  done <"$DESTDIR$1"
  dirs=""
  listed=$(grep -c '/$' "$DESTDIR$1" || true)
  while IFS= read -r f; do
    case $f in
      '') ;;
      */) dirs="$dirs
${f%/}" ;;
      *)
        [ "$f" = "$1" ] || rm -f "$DESTDIR$f"
        d=${f%/*}
        while [ "$listed" = 0 ] && owned "$d"; do
          dirs="$dirs
$d"
          d=${d%/*}
        done
        ;;
    esac
  done <"$DESTDIR$1"
  rm -f "$DESTDIR$1"
  # deepest first; a directory that still holds something (not ours) stays
  printf '%s\n' "$dirs" | awk 'NF { print length($0), $0 }' | sort -rn | cut -d' ' -f2- | uniq |
    while IFS= read -r d; do rmdir "$DESTDIR$d" 2>/dev/null || true; done
}

if [ "$mode" = uninstall ]; then
  if [ ! -f "$DESTDIR$manifest" ]; then
    echo "uninstall: no attngen install under $DESTDIR$PREFIX (no $DESTDIR$manifest): nothing to remove"
    exit 0
  fi
  n=$(grep -c '[^/]$' "$DESTDIR$manifest" || true)
  remove_listed "$manifest"
  echo "uninstall: removed the $n files of attngen from $DESTDIR$PREFIX"
  exit 0
fi

# ---- install
[ -f gen/attngen.lua ] || die "run from the top of the attngen tree"
: "${LIB:?LIB (the static library to install) is not set}"
: "${SHLIB:?SHLIB (the shared library to install) is not set}"
: "${SONAME:?SONAME (the soname of the shared library) is not set}"
: "${RUNTIME_SRC:?RUNTIME_SRC is not set}"
: "${RUNTIME_HDR:?RUNTIME_HDR is not set}"
[ -f "$LIB" ] || die "$LIB does not exist"
[ -f "$SHLIB" ] || die "$SHLIB does not exist"

# The version: gen/version.lua returns a string (or a table with a string or major/minor/patch fields).
version=$("$LUA" -e '
  local v = dofile("gen/version.lua")
  if type(v) == "table" then
    v = v.string or v.version or (v.major and string.format("%d.%d.%d", v.major, v.minor or 0, v.patch or 0))
  end
  io.write(type(v) == "string" and v or "")' 2>/dev/null) || version=""
if [ -z "$version" ]; then
  version=$(sed -n 's/^[^"]*return[^"]*"\([0-9][^"]*\)".*/\1/p' gen/version.lua | head -n 1)
fi
case $version in
  [0-9]*.[0-9]*) ;;
  *) die "cannot read the version from gen/version.lua (got '$version')" ;;
esac
case $SHLIB in
  */libattngen.so."$version") ;;
  *) die "$SHLIB is not libattngen.so.$version (gen/version.lua changed since it was built?)" ;;
esac

if [ -f "$DESTDIR$manifest" ]; then
  echo "install: replacing the attngen already installed under $DESTDIR$PREFIX"
  remove_listed "$manifest"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/attngen-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
list=$tmp/manifest

make_dir() { # make_dir DIR: mkdir -p $DESTDIR/DIR, recording each directory it creates at or under PREFIX
  [ ! -d "$DESTDIR$1" ] || return 0
  case $1 in
    "$PREFIX"/*) make_dir "${1%/*}" ;;
    *) mkdir -p "$DESTDIR${1%/*}" ;;
  esac
  mkdir "$DESTDIR$1"
  printf '%s/\n' "$1" >>"$tmp/dirs"
}
put() { # put MODE SOURCE DEST: copy SOURCE to $DESTDIR/DEST (DEST absolute, under PREFIX), record DEST
  make_dir "${3%/*}"
  rm -f "$DESTDIR$3"
  cp "$2" "$DESTDIR$3"
  chmod "$1" "$DESTDIR$3"
  printf '%s\n' "$3" >>"$list"
}
link() { # link TARGET DEST: the symbolic link DEST -> TARGET (a name in DEST's directory), record DEST
  make_dir "${2%/*}"
  rm -f "$DESTDIR$2"
  ln -s "$1" "$DESTDIR$2"
  printf '%s\n' "$2" >>"$list"
}
render() { # render TEMPLATE OUT: fill in @VERSION@, @PREFIX@, @DATADIR@, @SONAME@
  sed -e "s|@VERSION@|$version|g" -e "s|@PREFIX@|$PREFIX|g" -e "s|@DATADIR@|$share|g" -e "s|@SONAME@|$SONAME|g" \
    "$1" >"$2"
}

# the generator: every file of gen/, templates/ and tools/tune/ (its --tune), no hidden files, editor backups or
# temporaries
find gen templates tools/tune -type f ! -name '.*' ! -name '*~' ! -name '*.tmp' ! -name '*.orig' ! -name '*.rej' \
  ! -name '*.swp' | LC_ALL=C sort >"$tmp/genfiles"
while IFS= read -r f; do put 644 "$f" "$share/$f"; done <"$tmp/genfiles"
render packaging/attngen.sh.in "$tmp/attngen"
put 755 "$tmp/attngen" "$PREFIX/bin/attngen"

# the runtime: library, headers, and the sources for vendoring
put 644 "$LIB" "$PREFIX/lib/libattngen.a"
put 755 "$SHLIB" "$PREFIX/lib/${SHLIB##*/}"
link "${SHLIB##*/}" "$PREFIX/lib/$SONAME"
link "$SONAME" "$PREFIX/lib/libattngen.so"
for f in $RUNTIME_HDR; do put 644 "$f" "$PREFIX/include/attngen/${f##*/}"; done
for f in $RUNTIME_SRC $RUNTIME_HDR; do put 644 "$f" "$share/runtime/${f##*/}"; done

# the documentation, laid out as in the source tree so that README.md's links to docs/ work
doc=$PREFIX/share/doc/attngen
for f in README.md CHANGELOG.md LICENSE docs/*.md; do put 644 "$f" "$doc/$f"; done

# packages
render packaging/attngen.pc.in "$tmp/attngen.pc"
put 644 "$tmp/attngen.pc" "$PREFIX/lib/pkgconfig/attngen.pc"
render packaging/attngenConfig.cmake.in "$tmp/attngenConfig.cmake"
put 644 "$tmp/attngenConfig.cmake" "$PREFIX/lib/cmake/attngen/attngenConfig.cmake"
render packaging/attngenConfigVersion.cmake.in "$tmp/attngenConfigVersion.cmake"
put 644 "$tmp/attngenConfigVersion.cmake" "$PREFIX/lib/cmake/attngen/attngenConfigVersion.cmake"

printf '%s\n' "$manifest" >>"$list"
make_dir "$share"
[ ! -f "$tmp/dirs" ] || cat "$tmp/dirs" >>"$list"
cp "$list" "$DESTDIR$manifest"
chmod 644 "$DESTDIR$manifest"
echo "install: attngen $version, $(grep -c '[^/]$' "$list") files under $DESTDIR$PREFIX (list: $DESTDIR$manifest)"
