#!/bin/sh
# SPDX-License-Identifier: MIT
# Generator tests: every bad config gives its message (file, field, reason), exit status 2, no traceback and
# no files; good configs give byte-identical output under lua5.4 and luajit and across runs.
set -u
cd "$(dirname "$0")/.."
LUAS="${LUA:-lua5.4} ${LUAJIT:-luajit}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# 1. bad configs, under both interpreters
for cfg in tests/bad_configs/*.lua; do
  expect=$(sed -n 's/^-- expect: //p' "$cfg")
  for lua in $LUAS; do
    out="$tmp/bad-$lua"
    rm -rf "$out"
    mkdir -p "$out"
    echo "precious" > "$out/keep.txt"
    $lua gen/attngen.lua "$cfg" -o "$out" 2> "$tmp/err" > /dev/null
    st=$?
    err=$(cat "$tmp/err")
    if [ $st -ne 2 ]; then bad "$cfg ($lua): exit $st, expected 2"; continue; fi
    case $err in
      *"$cfg: "*"$expect"*) ;;
      *) bad "$cfg ($lua): message '$err' lacks '$cfg: ... $expect'"; continue ;;
    esac
    case $err in *traceback*|*internal*) bad "$cfg ($lua): traceback in '$err'"; continue ;; esac
    if [ "$(ls "$out")" != "keep.txt" ] || [ "$(cat "$out/keep.txt")" != "precious" ]; then
      bad "$cfg ($lua): output directory changed: $(ls "$out")"; continue
    fi
    ok
  done
done

# 2. bad command lines
check_cli() { # expected-substring args...
  want=$1; shift
  for lua in $LUAS; do
    rm -rf "$tmp/cli"
    $lua gen/attngen.lua "$@" -o "$tmp/cli" 2> "$tmp/err" > /dev/null
    st=$?
    if [ $st -eq 0 ]; then bad "cli $* ($lua): succeeded"; continue; fi
    if ! grep -qF -- "$want" "$tmp/err"; then bad "cli $* ($lua): '$(cat "$tmp/err")' lacks '$want'"; continue; fi
    if grep -q traceback "$tmp/err"; then bad "cli $* ($lua): traceback"; continue; fi
    if [ -n "$(ls "$tmp/cli" 2>/dev/null)" ]; then bad "cli $* ($lua): wrote files"; continue; fi
    ok
  done
}
check_cli "flag '--heads' (field 'heads'): must be a number" --heads abc --kv-heads 1 --head-dim 64
check_cli "field 'head_dim': missing" --heads 8 --kv-heads 8
check_cli "field 'masks': must be a non-empty list" --heads 8 --kv-heads 8 --head-dim 64
check_cli "flag '--kv-heads' (field 'kv_heads'): heads (7) must be a multiple of kv_heads (2)" --heads 7 --kv-heads 2 --head-dim 64 --mask causal
check_cli "configs/nope.lua: cannot open the file" configs/nope.lua
for lua in $LUAS; do
  if $lua gen/attngen.lua --heads 8 --kv-heads 8 --head-dim 64 --mask causal 2> "$tmp/err" >/dev/null; then
    bad "missing -o accepted ($lua)"
  elif grep -q "field '-o': an output directory is required" "$tmp/err"; then ok; else bad "missing -o: $(cat "$tmp/err")"; fi
  if $lua gen/attngen.lua --help | grep -q "Usage: attngen"; then ok; else bad "--help ($lua)"; fi
  if $lua gen/attngen.lua --help | grep -qx "Documentation: README.md"; then ok; else bad "--help names no README.md ($lua)"; fi
  # no arguments at all: the usage on stderr, a failure status, nothing on stdout
  $lua gen/attngen.lua > "$tmp/out" 2> "$tmp/err"
  st=$?
  if [ $st -eq 2 ] && grep -q "^Usage: attngen" "$tmp/err" && [ ! -s "$tmp/out" ]; then ok
  else bad "no arguments ($lua): exit $st, stderr: $(head -n 2 "$tmp/err")"; fi
done

# 2b. every user error is ONE line "attngen: error: ...", exit status 2, no files
one_line() { # expected-substring args...  (runs with its own -o when the args give none)
  want=$1; shift
  for lua in $LUAS; do
    $lua gen/attngen.lua "$@" 2> "$tmp/err" > /dev/null
    st=$?
    lines=$(wc -l < "$tmp/err")
    if [ $st -ne 2 ]; then bad "cli $* ($lua): exit $st, expected 2"; continue; fi
    if [ "$lines" -ne 1 ]; then bad "cli $* ($lua): $lines lines of error: $(cat "$tmp/err")"; continue; fi
    if ! grep -q "^attngen: error: " "$tmp/err"; then bad "cli $* ($lua): '$(cat "$tmp/err")' is not 'attngen: error: ...'"; continue; fi
    if ! grep -qF -- "$want" "$tmp/err"; then bad "cli $* ($lua): '$(cat "$tmp/err")' lacks '$want'"; continue; fi
    ok
  done
}
one_line "unknown option '--bogus'" --bogus -o "$tmp/cli"
one_line "option '--heads' requires an argument" configs/gpt2.lua -o "$tmp/cli" --heads
# a negative number after a numeric flag is its value, refused by the flag's own rule
one_line "flag '--scale' (field 'scale'): must be a positive normal float (1.17549435e-38 .. 3.40282347e+38), got -1" configs/gpt2.lua --scale -1 -o "$tmp/cli"
one_line "flag '--scale' (field 'scale'): must be a positive normal float (1.17549435e-38 .. 3.40282347e+38), got -0.5" configs/gpt2.lua --scale -.5 -o "$tmp/cli"
one_line "flag '--heads' (field 'heads'): must be an integer in 1..1024, got -4" configs/gpt2.lua --heads -4 -o "$tmp/cli"
one_line "flag '--head-dim' (field 'head_dim'): must be an integer in 1..512, got -64" configs/gpt2.lua --head-dim -64 -o "$tmp/cli"
one_line "command line: flag '--mask' (field 'masks'): entry 1 is \"causl\"" configs/gpt2.lua --mask causl -o "$tmp/cli"
one_line "flag '--scale' (field 'scale'): must be a positive normal float" configs/gpt2.lua --scale 1e39 -o "$tmp/cli"
one_line "cannot create directory /dev/null" configs/gpt2.lua -o /dev/null/sub
one_line "flag '--name' (field 'name'): must be lowercase" --name "$(printf 'two\nlines')" --heads 8 --kv-heads 8 --head-dim 64 --mask causal -o "$tmp/cli"
one_line "one config file at a time" configs/gpt2.lua configs/bert-base.lua -o "$tmp/cli"

# 2c. all or nothing: when one target cannot be written, the others keep their old bytes and no temporary is left
for lua in $LUAS; do
  out="$tmp/aon-$lua"
  mkdir -p "$out/attngen_gpt2.c"
  echo keep > "$out/attngen_gpt2.c/x"
  echo "old header" > "$out/attngen_gpt2.h"
  $lua gen/attngen.lua configs/gpt2.lua -o "$out" 2> "$tmp/err" > /dev/null
  st=$?
  if [ $st -ne 2 ] || [ "$(cat "$out/attngen_gpt2.h")" != "old header" ] || [ "$(ls "$out" | wc -l)" -ne 2 ]; then
    bad "all-or-nothing ($lua): exit $st, files: $(ls "$out"), header: $(head -c 40 "$out/attngen_gpt2.h")"
  else ok; fi
done

# 2d. a name in the spec without an implementation is a one-line generation error (never a traceback or C error)
spec_case() { # expected-substring lua-snippet-appended-to-spec config-args...
  want=$1; snippet=$2; shift 2
  rm -rf "$tmp/specgen" && mkdir -p "$tmp/specgen" && cp -r gen templates "$tmp/specgen/"
  sed -i "s|^return spec\$|$snippet\nreturn spec|" "$tmp/specgen/gen/spec.lua"
  for lua in $LUAS; do
    $lua "$tmp/specgen/gen/attngen.lua" "$@" -o "$tmp/specout" 2> "$tmp/err" > /dev/null
    st=$?
    if [ $st -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -qF -- "$want" "$tmp/err" && [ ! -e "$tmp/specout" ]; then ok
    else bad "spec without implementation ($lua, $want): exit $st: $(cat "$tmp/err")"; fi
  done
}
spec_case "spec: isa 'sve' has no vocabulary (gen/isa/sve.lua)" \
  'table.insert(spec.isas, 1, { name = "sve", id = 4, doc = "x", detect = "attngen_cpu_has_sve" }); spec.isa.sve = spec.isas[1]' \
  --heads 8 --kv-heads 8 --head-dim 64 --mask causal --isa sve
spec_case "spec: mask feature 'window' (mask 'sliding') is not implemented by templates/kernel.c.tpl" \
  'table.insert(spec.mask_features, { name = "window", bit = 4, doc = "x" }); spec.mask_feature.window = spec.mask_features[3]; table.insert(spec.masks, { name = "sliding", id = 5, features = { "causal", "window" } }); spec.mask.sliding = spec.masks[6]' \
  --heads 8 --kv-heads 8 --head-dim 64 --mask sliding --isa scalar

# 2e. --list names every kernel the config produces (and writes nothing); --version names the table ABI
for lua in $LUAS; do
  n=$($lua gen/attngen.lua configs/llama-3-8b.lua --list | grep -c '^attn_h32_kv8_d128_')
  # 2 masks x 2 phases x 4 ISAs x 4 cache types (f32, f16, bf16, int8)
  if [ "$n" -eq 64 ] && $lua gen/attngen.lua configs/llama-3-8b.lua --list | grep -q 'causal_padding_decode_int8__neon *neon *decode *causal_padding *int8 *[0-9][0-9]*$'; then ok
  else bad "--list ($lua): $n kernels listed"; fi
  if $lua gen/attngen.lua --version | grep -q '^attngen [0-9.]* (table ABI [0-9]*)$'; then ok; else bad "--version ($lua)"; fi
done

# 2f. tuned plans (config field `tuned`, tools/tune/tune.lua): the kernels change, byte-identically under both
# interpreters; a bad value is one line naming the sub-field, exit 2, no files; `--tune --write` on a copy of a small
# test config records a block that loads and generates (short timing budget, nothing about speed is asserted)
tuned_cfg() { # extra fields
  printf 'return { name = "t-tune", heads = 8, kv_heads = 2, head_dim = 64, masks = { "causal" }, phases = { "prefill", "decode" }, isas = { "avx2", "scalar" }%s }\n' "$1"
}
tuned_cfg "" > "$tmp/untuned.lua"
tuned_cfg ', tuned = { avx2 = { prefill = { rv = 2, kb = 6, keys = 32 }, decode = { rb = 1, kb = 8 } } }' > "$tmp/tuned.lua"
for lua in $LUAS; do
  $lua gen/attngen.lua "$tmp/untuned.lua" -o "$tmp/tuned/$lua/untuned" || bad "untuned config ($lua)"
  $lua gen/attngen.lua "$tmp/tuned.lua" -o "$tmp/tuned/$lua/tuned" || bad "tuned config ($lua)"
  if cmp -s "$tmp/tuned/$lua/untuned/attngen_t_tune.c" "$tmp/tuned/$lua/tuned/attngen_t_tune.c"; then bad "tuned = untuned ($lua)"
  elif grep -q 'avx2 = { prefill = { rv = 2, kb = 6, keys = 32 }, decode = { rb = 1, kb = 8 } },' "$tmp/tuned/$lua/tuned/attngen_t_tune.c"; then ok
  else bad "tuned stamp ($lua)"; fi
done
if diff -r $(for l in $LUAS; do echo "$tmp/tuned/$l"; done) > /dev/null; then ok; else bad "tuned output differs between interpreters"; fi
# a decode block's own knobs are the fp32 cache's: another type keeps the vocabulary's blocking unless the block's
# by_dtype names it (each kernel's comment says its blocking and whether the config's `tuned` set it)
tuned_cfg ', kv_dtype = { "f32", "int8" }' > "$tmp/typed-none.lua"
tuned_cfg ', kv_dtype = { "f32", "int8" }, tuned = { avx2 = { decode = { rb = 1, kb = 8 } } }' > "$tmp/typed-f32.lua"
tuned_cfg ', kv_dtype = { "f32", "int8" }, tuned = { avx2 = { decode = { rb = 1, kb = 8, by_dtype = { int8 = { rb = 2, kb = 2 } } } } }' > "$tmp/typed-both.lua"
for c in typed-none typed-f32 typed-both; do
  ${LUA:-lua5.4} gen/attngen.lua "$tmp/$c.lua" -o "$tmp/typed/$c" || bad "$c config"
  for t in "" int8_; do
    grep "^/\* attn_h8_kv2_d64_causal_decode_${t}_avx2: " "$tmp/typed/$c/attngen_t_tune.c" > "$tmp/typed/$c.${t:-f32}" || bad "$c: no ${t:-f32} decode comment"
  done
done
if grep -q 'Q·Kᵀ as 1x8 dot products.*(blocking from the config' "$tmp/typed/typed-f32.f32" &&
   cmp -s "$tmp/typed/typed-none.int8_" "$tmp/typed/typed-f32.int8_" &&
   ! grep -q 'blocking from the config' "$tmp/typed/typed-f32.int8_" &&
   grep -q 'Q·Kᵀ as 1x8 dot products.*(blocking from the config' "$tmp/typed/typed-both.f32" &&
   grep -q 'Q·Kᵀ as 2x2 dot products.*(blocking from the config' "$tmp/typed/typed-both.int8_" &&
   grep -qF 'avx2 = { decode = { rb = 1, kb = 8, by_dtype = { int8 = { rb = 2, kb = 2 } } } },' "$tmp/typed/typed-both/attngen_t_tune.c"; then ok
else bad "tuned by storage type: $(cat "$tmp"/typed/*.f32 "$tmp"/typed/*.int8_)"; fi
bad_tuned() { # expected-substring tuned-value [other fields]
  tuned_cfg "${3:-}, tuned = $2" > "$tmp/badtuned.lua"
  for lua in $LUAS; do
    rm -rf "$tmp/tuned-bad"
    $lua gen/attngen.lua "$tmp/badtuned.lua" -o "$tmp/tuned-bad" 2> "$tmp/err" > /dev/null
    st=$?
    if [ $st -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -qF -- "attngen: error: $tmp/badtuned.lua: $1" "$tmp/err" &&
       [ ! -e "$tmp/tuned-bad" ]; then ok
    else bad "tuned = $2 ($lua): exit $st: $(cat "$tmp/err")"; fi
  done
}
bad_tuned "field 'tuned': must be a table" '"fast"'
bad_tuned "field 'tuned.avx3': unknown field (known: avx512, avx2, neon, scalar)" '{ avx3 = {} }'
bad_tuned "field 'tuned.avx2.decode.foo': unknown field" '{ avx2 = { decode = { foo = 1 } } }'
bad_tuned "field 'tuned.avx2.decode.rb': must be an integer in 1..8" '{ avx2 = { decode = { rb = 9 } } }'
bad_tuned "field 'tuned.avx2.prefill.rv': must be an integer in 1..8" '{ avx2 = { prefill = { rv = 1.5 } } }'
bad_tuned "field 'tuned.avx2.prefill.keys': must be a multiple of 8" '{ avx2 = { prefill = { keys = 12 } } }'
bad_tuned "field 'tuned.avx2.decode.rb': the Q·Kᵀ block needs rb*kb + min(rb, kb) = 20 vector registers" '{ avx2 = { decode = { rb = 4, kb = 4 } } }'
bad_tuned "field 'tuned.avx2.prefill.pvv': the P·V block needs pr*pvv + pvv = 21 vector registers" '{ avx2 = { prefill = { pvv = 3 } } }'
i8=', kv_dtype = { "f32", "int8" }'
bad_tuned "field 'tuned.avx2.decode.by_dtype': must be a table" '{ avx2 = { decode = { by_dtype = 1 } } }' "$i8"
bad_tuned "field 'tuned.avx2.decode.by_dtype.f16': unknown field (known: int8)" '{ avx2 = { decode = { by_dtype = { f16 = { rb = 1 } } } } }' "$i8"
bad_tuned "field 'tuned.avx2.decode.by_dtype.f32': the fp32 cache's knobs are the block's own fields" '{ avx2 = { decode = { by_dtype = { f32 = { rb = 1 } } } } }' "$i8"
bad_tuned "field 'tuned.avx2.decode.by_dtype': the config's kv_dtype lists no storage type but f32" '{ avx2 = { decode = { by_dtype = { int8 = { rb = 1 } } } } }'
bad_tuned "field 'tuned.avx2.decode.by_dtype.int8.kb': must be an integer in 1..16" '{ avx2 = { decode = { by_dtype = { int8 = { kb = 0 } } } } }' "$i8"
bad_tuned "field 'tuned.avx2.decode.by_dtype.int8.rb': the Q·Kᵀ block needs rb*kb + min(rb, kb) = 20 vector registers" '{ avx2 = { decode = { by_dtype = { int8 = { rb = 4, kb = 4 } } } } }' "$i8"
bad_tuned "field 'tuned.avx2.decode': its own knobs are the fp32 cache's and the config's kv_dtype has no f32: put them in tuned.avx2.decode.by_dtype.int8" '{ avx2 = { decode = { rb = 1 } } }' ', kv_dtype = { "int8" }'
bad_tuned "field 'tuned.avx2.prefill.by_dtype': unknown field" '{ avx2 = { prefill = { by_dtype = {} } } }' "$i8"
other_isa=neon; grep -qw avx2 /proc/cpuinfo 2>/dev/null || other_isa=avx2
one_line "field '--write': only with --tune" configs/gpt2.lua --write -o "$tmp/cli"
one_line "field '--tune': takes the shape from the config file and writes no kernels: drop -o" configs/gpt2.lua --tune -o "$tmp/cli"
one_line "flag '--tune-seconds': must be a number of seconds" configs/gpt2.lua --tune --tune-seconds abc
one_line "flag '--isa': this machine's best ISA is" configs/gpt2.lua --tune --isa $other_isa
cp tests/configs/t-tail-h2-d17.lua "$tmp/tune-me.lua"
if ${LUA:-lua5.4} gen/attngen.lua "$tmp/tune-me.lua" --tune --tune-seconds 1 --write > "$tmp/tune.out" 2> "$tmp/tune.err" &&
   [ "$(grep -c -e '-- attngen tune: begin$' -e '-- attngen tune: end$' "$tmp/tune-me.lua")" -eq 2 ] &&
   grep -q -- '-- [a-z0-9]*: tuned on .*speed vs the default plan: prefill' "$tmp/tune-me.lua" &&
   grep -Eq -- 'decode [a-z_]*, q_len 1, kv_len [0-9]+, K/V from memory \(([2-9]|[1-9][0-9]+) copies' "$tmp/tune-me.lua" &&
   grep -q 'speed vs default' "$tmp/tune.out"; then ok
else bad "--tune --write: $(tail -n 3 "$tmp/tune.err") $(cat "$tmp/tune-me.lua")"; fi
# the second run (the other interpreter, decode only, an fp32 and an int8 cache) replaces the block instead of
# adding one, and times decode once per storage type
sed -i 's/phases   = { "prefill", "decode" }/phases   = { "decode" }, kv_dtype = { "f32", "int8" }/' "$tmp/tune-me.lua"
second=$(echo $LUAS | cut -d' ' -f2)
if $second gen/attngen.lua "$tmp/tune-me.lua" --tune --tune-seconds 1 --write > "$tmp/tune.out" 2> "$tmp/tune.err" &&
   [ "$(grep -c -e '-- attngen tune: begin$' -e '-- attngen tune: end$' "$tmp/tune-me.lua")" -eq 2 ] &&
   ! grep -q 'prefill' "$tmp/tune.out" && grep -q '^decode f32: ' "$tmp/tune.out" && grep -q '^decode int8: ' "$tmp/tune.out" &&
   grep -Eq -- 'decode int8 [a-z_]*, q_len 1, kv_len [0-9]+, int8 K/V from memory' "$tmp/tune-me.lua"; then ok
else bad "--tune --write again ($second): $(tail -n 3 "$tmp/tune.err")"; fi
for lua in $LUAS; do
  if $lua gen/attngen.lua "$tmp/tune-me.lua" -o "$tmp/tune-gen/$lua" 2> "$tmp/err"; then ok; else bad "tuned copy does not generate ($lua): $(cat "$tmp/err")"; fi
done
if diff -r $(for l in $LUAS; do echo "$tmp/tune-gen/$l"; done) > /dev/null; then ok; else bad "tuned copy: output differs between interpreters"; fi

# 2g. the stamp names the config path as it was given (shell-quoted, and with no C comment delimiter, when it is
# not a plain path)
mkdir -p "$tmp/odd*" && cp configs/gpt2.lua "$tmp/odd*/gpt2.lua"
for lua in $LUAS; do
  $lua gen/attngen.lua ./configs/gpt2.lua -o "$tmp/stamp/$lua"
  if sed -n 2p "$tmp/stamp/$lua/attngen_gpt2.c" | grep -qx ' \*   attngen \./configs/gpt2\.lua -o DIR'; then ok
  else bad "stamp of ./configs/gpt2.lua ($lua): $(sed -n 2p "$tmp/stamp/$lua/attngen_gpt2.c")"; fi
  $lua gen/attngen.lua "$tmp/odd*/gpt2.lua" -o "$tmp/stamp-odd/$lua"
  line=$(sed -n 2p "$tmp/stamp-odd/$lua/attngen_gpt2.c")
  if [ "$line" = " *   attngen '$tmp/odd*''/gpt2.lua' -o DIR" ]; then ok; else bad "stamp of an odd path ($lua): $line"; fi
done

# 2h. --vendor: the model's files and every .c/.h of runtime/ and generated/runtime/, byte for byte, nothing else,
# except the generic kernels: those of the model's storage types (gpt2: f32), as `--runtime --kv-dtype f32` writes them
for lua in $LUAS; do
  v="$tmp/vendor-$lua"
  $lua gen/attngen.lua configs/gpt2.lua --vendor -o "$v" 2> "$tmp/err" || bad "--vendor ($lua): $(cat "$tmp/err")"
  expected=$( (cd runtime && ls ./*.[ch]; cd ../generated/runtime && ls ./*.[ch]; echo ./attngen_gpt2.c; echo ./attngen_gpt2.h) |
    sed 's|^\./||' | LC_ALL=C sort)
  if [ "$(cd "$v" && ls | LC_ALL=C sort)" = "$expected" ]; then ok; else bad "--vendor ($lua) wrote: $(ls "$v")"; fi
  same=1
  for f in runtime/*.[ch] generated/runtime/attngen_spec.h generated/gpt2/*; do cmp -s "$f" "$v/${f##*/}" || same=0; done
  if [ $same = 1 ]; then ok; else bad "--vendor ($lua): a file differs from its source"; fi
  $lua gen/attngen.lua --runtime --kv-dtype f32 -o "$tmp/runtime-f32-$lua" 2> "$tmp/err" || bad "--runtime --kv-dtype f32 ($lua): $(cat "$tmp/err")"
  if cmp -s "$tmp/runtime-f32-$lua/attngen_generic.c" "$v/attngen_generic.c"; then ok; else bad "--vendor ($lua): its generic kernels are not --runtime --kv-dtype f32's"; fi
done

# 2h'. --runtime --kv-dtype: generic kernels for the listed types and f32 (whose prefill code every type runs), in
# spec order, stamped with the command; the types left out have no kernel; a bad list is refused, writing nothing
for lua in $LUAS; do
  r="$tmp/runtime-int8-$lua"
  $lua gen/attngen.lua --runtime --kv-dtype int8,f16 -o "$r" 2> "$tmp/err" || bad "--runtime --kv-dtype int8,f16 ($lua): $(cat "$tmp/err")"
  if [ "$(sed -n 2p "$r/attngen_generic.c")" = " *   attngen --runtime --kv-dtype f32,f16,int8 -o DIR" ] &&
     grep -q "^ \*   storage types: f32, f16, int8$" "$r/attngen_generic.c"; then ok; else bad "--runtime --kv-dtype ($lua): stamp $(sed -n 2p "$r/attngen_generic.c")"; fi
  names=$(grep -o '"attn_generic_[a-z0-9_]*"' "$r/attngen_generic.c" | LC_ALL=C sort -u | tr '\n' ' ')
  want=""
  for isa in avx2 avx512 neon scalar; do for t in "" _f16 _int8; do for ph in decode prefill; do
    want="$want\"attn_generic_$ph${t}__$isa\" "
  done; done; done
  want=$(printf '%s' "$want" | tr ' ' '\n' | LC_ALL=C sort | tr '\n' ' ')
  if [ "$names" = "$want" ]; then ok; else bad "--runtime --kv-dtype int8,f16 ($lua) lists: $names"; fi
  if cmp -s "$r/attngen_spec.h" generated/runtime/attngen_spec.h; then ok; else bad "--runtime --kv-dtype ($lua): attngen_spec.h differs"; fi
done
one_line "flag '--kv-dtype' (field 'kv_dtype'): entry 2 is \"fp8\"; allowed: f32, f16" --runtime --kv-dtype f16,fp8 -o "$tmp/cli"
one_line "field '--runtime': writes the generic kernels, of no config" configs/gpt2.lua --runtime -o "$tmp/cli"
if [ ! -e "$tmp/cli" ]; then ok; else bad "a refused --runtime wrote $(ls "$tmp/cli")"; fi
one_line "--vendor: the model's attngen_generic.c has the name of a runtime file" configs/gpt2.lua --name generic --vendor -o "$tmp/cli"
one_line "field '--vendor': writes one model with the runtime: not with --runtime" --runtime --vendor -o "$tmp/cli"
if [ ! -e "$tmp/cli" ]; then ok; else bad "a refused --vendor wrote $(ls "$tmp/cli")"; fi

# 2i. a flag per field a kind of layer may set (--rope, --window, --sink-tokens, --softcap, --sinks, --alibi, --scale)
# generates what the config field of its name does: the same files but for the stamp's command line, and that command
# line regenerates the flags' files byte for byte
flag_cfg() { # extra fields
  printf 'return { name = "t-flag", heads = 6, kv_heads = 2, head_dim = 40, masks = { "causal", "causal_padding" }, phases = { "prefill", "decode" }, isas = { "avx2", "scalar" }%s }\n' "$1"
}
FLAG_SHAPE="--name t-flag --heads 6 --kv-heads 2 --head-dim 40 --mask causal,causal_padding --phase prefill,decode --isa avx2,scalar"
flag_same() { # config-fields kernel-name-part flags...
  fields=$1; part=$2; shift 2
  flag_cfg ", $fields" > "$tmp/flag.lua"
  for lua in $LUAS; do
    rm -rf "$tmp/flag-cfg" "$tmp/flag-cli" "$tmp/flag-again"
    if ! $lua gen/attngen.lua "$tmp/flag.lua" -o "$tmp/flag-cfg" 2> "$tmp/err" ||
       ! $lua gen/attngen.lua $FLAG_SHAPE "$@" -o "$tmp/flag-cli" 2>> "$tmp/err"; then
      bad "flags $* ($lua): $(cat "$tmp/err")"; continue
    fi
    differ=""
    for f in "$tmp/flag-cfg"/*; do
      sed 2d "$f" > "$tmp/flag-a"; sed 2d "$tmp/flag-cli/${f##*/}" > "$tmp/flag-b" 2> /dev/null
      cmp -s "$tmp/flag-a" "$tmp/flag-b" || differ="$differ ${f##*/}"
    done
    cmd=$(sed -n '2s/^ \*   attngen \(.*\) -o DIR$/\1/p' "$tmp/flag-cli/attngen_t_flag.c")
    eval "$lua gen/attngen.lua $cmd -o \"\$tmp/flag-again\"" 2> "$tmp/err"
    if [ -n "$differ" ]; then bad "flags $* ($lua): differ from config { $fields }:$differ"
    elif ! grep -q "^  X(attn_h6_kv2_d40_causal${part}_prefill__avx2, " "$tmp/flag-cli/attngen_t_flag.h"; then
      bad "flags $* ($lua): no kernel attn_h6_kv2_d40_causal${part}_prefill__avx2"
    elif ! diff -r "$tmp/flag-cli" "$tmp/flag-again" > /dev/null; then bad "flags $* ($lua): the stamp's command '$cmd' differs"
    else ok; fi
  done
}
flag_same 'window = 20' _window --window 20
flag_same 'window = 20, sink_tokens = 4' _window --window 20 --sink-tokens 4
flag_same 'softcap = 30.5' _softcap --softcap 30.5
flag_same 'sinks = true' _sinks --sinks true
flag_same 'alibi = true' _alibi --alibi true
flag_same 'alibi = { max_bias = 6 }' _alibi --alibi max_bias=6
flag_same 'window = 4096, softcap = 50, alibi = {}' _window_softcap_alibi --softcap 50 --alibi max_bias=8 --window 4096
flag_same 'scale = 0.125' "" --scale 0.125
flag_same 'rope = { style = "interleaved", theta = 10000, rotary_dim = 32 }' "" --rope style=interleaved,theta=10000,rotary_dim=32
flag_same 'rope = { style = "half", theta = 150000, scaling = { type = "yarn", factor = 32, original_max_position_embeddings = 4096, truncate = false } }' "" \
  --rope "style=half, theta=150000, scaling.type=yarn, scaling.factor=32, scaling.original_max_position_embeddings=4096, scaling.truncate=false"
# a bad value: the config path's rule and message, naming the flag; exit status 2, one line, nothing written
flag_refused() { # expected-substring flags...
  want=$1; shift
  for lua in $LUAS; do
    rm -rf "$tmp/flag-bad"
    $lua gen/attngen.lua $FLAG_SHAPE "$@" -o "$tmp/flag-bad" 2> "$tmp/err" > /dev/null
    st=$?
    if [ $st -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -qF -- "attngen: error: command line: $want" "$tmp/err" &&
       [ ! -e "$tmp/flag-bad" ]; then ok
    else bad "flags $* ($lua): exit $st: $(cat "$tmp/err")"; fi
  done
}
flag_refused "flag '--window' (field 'window'): must be an integer in 1..1073741824, got 0" --window 0
flag_refused "flag '--window' (field 'window'): must be an integer in 1..1073741824, got -3" --window -3
flag_refused "flag '--window' (field 'window'): must be an integer in 1..1073741824, got \"4k\"" --window 4k
flag_refused "flag '--window' (field 'window'): needs masks with the causal feature (causal, causal_padding), and masks lists \"none\"" --window 8 --mask none
flag_refused "flag '--sink-tokens' (field 'sink_tokens'): needs 'window' (it is part of that feature)" --sink-tokens 4
flag_refused "flag '--sink-tokens' (field 'sink_tokens'): must be an integer in 0..1073741824, got 1.5" --window 8 --sink-tokens 1.5
flag_refused "flag '--softcap' (field 'softcap'): must be a positive finite number, got 0" --softcap 0
flag_refused "flag '--softcap' (field 'softcap'): must be a positive finite number, got \"inf\"" --softcap inf
flag_refused "flag '--sinks' (field 'sinks'): must be true (the logits come at run time, attngen_args.sinks), got \"yes\"" --sinks yes
flag_refused "flag '--alibi' (field 'alibi'): must be true or { max_bias = b }, got 8" --alibi 8
flag_refused "flag '--alibi' (field 'alibi'): max_bias must be a positive finite number, got a table" --alibi max_bias=-1
flag_refused "flag '--alibi' (field 'alibi'): has unknown field slope (known: max_bias)" --alibi slope=1
flag_refused "flag '--rope' (field 'rope'): must be a table { style = ..., theta = ..., rotary_dim = ..., scaling = ... }, got \"half\"" --rope half
flag_refused "flag '--rope' (field 'rope'): must be field=value pairs separated by commas (e.g. style=half,theta=10000), got \"style=half,,theta=3\"" --rope style=half,,theta=3
flag_refused "flag '--rope' (field 'rope'): theta is set twice" --rope style=half,theta=3,theta=4
flag_refused "flag '--rope' (field 'rope.theta'): must be a finite number > 1 (the base of the frequencies), got 1" --rope style=half,theta=1
flag_refused "flag '--rope' (field 'rope.rotary_dim'): must be an even integer in 2..40 (head_dim), got 41" --rope style=half,theta=1e4,rotary_dim=41
flag_refused "flag '--rope' (field 'rope.bogus'): unknown field (known: style, theta, rotary_dim, scaling)" --rope style=half,theta=1e4,bogus=1
flag_refused "flag '--rope' (field 'rope.scaling.type'): \"dynamic\" is not supported yet" --rope style=half,theta=1e4,scaling.type=dynamic,scaling.factor=2
flag_refused "flag '--rope' (field 'rope.scaling.factor'): missing (yarn scaling needs factor, original_max_position_embeddings)" --rope style=half,theta=1e4,scaling.type=yarn

# 3. identical output under both interpreters and across runs (the three passes over the configs run at once)
cfgs=$(ls configs/*.lua tests/configs/*.lua)
mkdir -p "$tmp/same"
gen_all() { # gen_all LUA DIR: every config into DIR/<name>; a failing config's name and messages into DIR.failed
  : > "$2.failed"
  for cfg in $cfgs; do
    $1 gen/attngen.lua "$cfg" -o "$2/$(basename "$cfg" .lua)" > "$2.out" 2>&1 || { echo "$cfg:"; cat "$2.out"; } >> "$2.failed"
  done
}
for lua in $LUAS; do gen_all "$lua" "$tmp/same/$lua" & done
gen_all "${LUA:-lua5.4}" "$tmp/same/again"
wait
for dir in $LUAS again; do
  if [ -s "$tmp/same/$dir.failed" ]; then bad "generation failed ($dir):"; cat "$tmp/same/$dir.failed"; else ok; fi
done
first=$(echo $LUAS | cut -d' ' -f1)
second=$(echo $LUAS | cut -d' ' -f2)
for cfg in $cfgs; do
  name=$(basename "$cfg" .lua)
  if diff -r "$tmp/same/$first/$name" "$tmp/same/$second/$name" > /dev/null; then ok; else bad "$cfg: $first and $second differ"; fi
  if diff -r "$tmp/same/$first/$name" "$tmp/same/again/$name" > /dev/null; then ok; else bad "$cfg: two runs differ"; fi
done
for lua in $LUAS; do
  $lua gen/attngen.lua --heads 14 --kv-heads 2 --head-dim 72 --mask causal,cross --phase decode -o "$tmp/flags/$lua"
  $lua gen/attngen.lua --runtime -o "$tmp/generic/$lua"
done
if diff -r $(for l in $LUAS; do echo "$tmp/flags/$l"; done) > /dev/null; then ok; else bad "flags-only output differs"; fi
if diff -r $(for l in $LUAS; do echo "$tmp/generic/$l"; done) > /dev/null; then ok; else bad "generic output differs"; fi

# 4. stamp: version, config echo and "DO NOT EDIT" in every generated file
for f in generated/*/*.c generated/*/*.h; do
  if head -3 "$f" | grep -q "generated by attngen [0-9.]*\. DO NOT EDIT"; then ok; else bad "$f: no stamp"; fi
  if head -4 "$f" | grep -q "SPDX-License-Identifier: MIT"; then ok; else bad "$f: no SPDX licence line in its stamp"; fi
done
# every hand-written source file carries its licence line too (vendored files keep it)
for f in $(git ls-files 'gen/*' 'runtime/*' 'templates/*' 'tests/*.c' 'tests/*.h' 'tests/*.sh' 'tests/*.lua' \
           'bench/*.c' 'bench/*.py' 'bench/*.mk' 'examples/*.c' 'tools/*.sh' 'tools/tune/*' Makefile '*.mk' ':!tests/bad_configs/*' 2>/dev/null); do
  if head -3 "$f" | grep -q "SPDX-License-Identifier: MIT"; then ok; else bad "$f: no SPDX licence line"; fi
done

# 5. fuzz: malformed configs and command lines, each interpreter running the fuzz and the generator.
# Exit 0 with exactly the two stamped files, or exit 2 with one 'attngen: error:' line and no files.
# FUZZ_SEED, FUZZ_CASES, FUZZ_ONLY, ...: see tests/fuzz_config.lua.
# Both interpreters' fuzz runs at once, each printed whole when done.
for lua in $LUAS; do
  { $lua tests/fuzz_config.lua "$lua" > "$tmp/fuzz-$lua.log" 2>&1; echo $? > "$tmp/fuzz-$lua.status"; } &
done
wait
for lua in $LUAS; do
  cat "$tmp/fuzz-$lua.log"
  if [ "$(cat "$tmp/fuzz-$lua.status")" = 0 ]; then ok; else bad "config fuzz ($lua): see its FAIL lines above"; fi
done

echo "generator: $pass passed, $fail failed"
[ $fail -eq 0 ]
