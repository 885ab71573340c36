#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes docs/size_table.md: one markdown table row per generated/<model>/ directory with the number of
# kernels, the size of the generated .c (lines, bytes), how long `$CC -O2 -c` takes on it (wall seconds)
# and the object's .text size; a last row does the same for generated/runtime/attngen_generic.c (the generic
# kernels; generated/runtime/ is the generated part of the runtime, not a model, so the model loop skips it).
#
#   tools/size_table.sh [OUT]        (default OUT: docs/size_table.md; "-" prints to stdout)
#   CC=clang tools/size_table.sh     (default CC: cc)
#
# Run by `make size-table`. Compile times depend on the machine and its load; sizes do not.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:-docs/size_table.md}
cc=${CC:-cc}
cflags=${SIZE_TABLE_CFLAGS:--O2}

command -v "$cc" >/dev/null 2>&1 || { echo "size_table: compiler '$cc' not found" >&2; exit 1; }
command -v size >/dev/null 2>&1 || { echo "size_table: 'size' (binutils) not found" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

now() { date +%s.%N; }

# text_bytes OBJ: sum of every .text* section (.text, .text.unlikely, .text.startup, ...)
text_bytes() {
  size -A "$1" | awk '$1 ~ /^\.text/ { t += $2 } END { print t + 0 }'
}

# row LABEL C_FILE KERNELS INCLUDE_DIR
row() {
  label=$1 src=$2 kernels=$3 inc=$4
  lines=$(wc -l <"$src" | tr -d ' ')
  bytes=$(wc -c <"$src" | tr -d ' ')
  obj=$tmp/$(basename "$src" .c).o
  t0=$(now)
  # shellcheck disable=SC2086 # cflags may hold several flags
  if ! "$cc" $cflags -Iruntime -Igenerated/runtime -I"$inc" -c "$src" -o "$obj" 2>"$tmp/err"; then
    echo "size_table: $cc failed on $src:" >&2
    cat "$tmp/err" >&2
    exit 1
  fi
  t1=$(now)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  text=$(text_bytes "$obj")
  printf '| %s | %s | %s | %s | %s | %s |\n' "$label" "$kernels" "$lines" "$bytes" "$secs" "$text"
}

body=$tmp/body.md
: >"$body"
found=0
for dir in generated/*/; do
  [ -d "$dir" ] || continue
  model=$(basename "$dir")
  [ "$model" = runtime ] && continue # generated/runtime/: the generic kernels, the last row
  cname=$(printf '%s' "$model" | tr '-' '_')
  src=$dir/attngen_$cname.c
  hdr=$dir/attngen_$cname.h
  [ -f "$src" ] || { echo "size_table: skipping $dir (no attngen_$cname.c)" >&2; continue; }
  # One X(...) line per kernel in the header's X-macro list.
  kernels=$(grep -c '^[[:space:]]*X([[:space:]]*attn_' "$hdr" 2>/dev/null || true)
  row "$model" "$src" "${kernels:-0}" "$dir" >>"$body"
  found=$((found + 1))
done
[ "$found" -gt 0 ] || { echo "size_table: no generated/<model>/ directories" >&2; exit 1; }
if [ -f generated/runtime/attngen_generic.c ]; then
  row "*generic (generated/runtime/attngen_generic.c)*" generated/runtime/attngen_generic.c "-" generated/runtime >>"$body"
fi

ccver=$("$cc" --version 2>/dev/null | head -n 1)
{
  echo "<!-- Written by tools/size_table.sh (make size-table); do not edit by hand. -->"
  echo "| model | kernels | .c lines | .c bytes | \`$cc $cflags -c\` (s) | .text bytes |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  cat "$body"
  echo
  echo "Compiler: $ccver, on $(uname -m). Compile time is the wall-clock time of one compile on the"
  echo "machine that wrote this file and varies with the machine and its load; the sizes do not."
} >"$tmp/table.md"

if [ "$out" = "-" ]; then
  cat "$tmp/table.md"
else
  mkdir -p "$(dirname "$out")"
  cp "$tmp/table.md" "$out"
  echo "size_table: wrote $out ($found models)" >&2
fi
