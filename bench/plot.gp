# SPDX-License-Identifier: MIT
# bench/plot.gp: plots of build/bench/results.csv (written by bench/bench.c).
#   gnuplot -e "dir='build/bench'" bench/plot.gp
# Writes dir/prefill_d128.png (h32/kv8/d128), dir/prefill_d64.png (h12/kv12/d64), dir/decode.png.
# Series come from the 1-thread rows: "specialized" = a generated specialized kernel ran, "generic" = the
# generic kernel (attngen_select_generic on AVX2), "naive" = the plain C triple loop of bench/naive.c (small
# sizes only). A case whose model table has no specialized kernel has no "specialized" point: its row in
# results.csv says "fallback", the generic series shows what ran, and the plot says so. The x axis spans the
# lengths that were measured (a quick run measures one: its plots say so).

if (!exists("dir")) dir = "build/bench"
csv = dir."/results.csv"
mcsv = dir."/machine.csv"

set datafile separator ","

# results.csv columns
C_PHASE = 3; C_MASK = 4; C_HEADS = 5; C_KVH = 6; C_D = 7; C_Q = 8; C_KV = 9
C_VARIANT = 11; C_THREADS = 15; C_STATUS = 17; C_GFLOPS = 19; C_GBS = 21

# machine.csv: mode,fma_gflops_1core,read_gbs_1thread,read_gbs_2threads,buffer_mib,repeats
stats mcsv using 2 nooutput
peak = STATS_max
stats mcsv using 3 nooutput
bw1 = STATS_max

# The 1-thread "ok" rows of phase ph, shape h/kvh/d, mask m ("" = any), variant var, as an awk-filtered
# data source (filtering in awk keeps each series' points consecutive, so its line is drawn unbroken).
src(ph, h, kvh, d, m, var) = sprintf("< awk -F, 'NR > 1 && $%d == \"%s\" && $%d == %d && $%d == %d && $%d == %d && ($%d == \"%s\" || \"%s\" == \"\") && $%d == \"%s\" && $%d == 1 && $%d == \"ok\"' '%s'", \
    C_PHASE, ph, C_HEADS, h, C_KVH, kvh, C_D, d, C_MASK, m, m, C_VARIANT, var, C_THREADS, C_STATUS, csv)
# number of rows such a source has
count(ph, h, kvh, d, m, var) = int(system(src(ph, h, kvh, d, m, var)[3:]." | wc -l"))
# "lo hi": the smallest and largest value of column col over the 1-thread "ok" rows of phase ph and, when
# h > 0, shape h/kvh/d ("0 0" when there is none)
span(ph, h, kvh, d, col) = system(sprintf("awk -F, 'NR > 1 && $%d == \"%s\" && (%d == 0 || ($%d == %d && $%d == %d && $%d == %d)) && $%d == 1 && $%d == \"ok\" { v = $%d + 0; if (n++ == 0) lo = hi = v; if (v < lo) lo = v; if (v > hi) hi = v } END { print (n ? lo \" \" hi : \"0 0\") }' '%s'", \
    C_PHASE, ph, h, C_HEADS, h, C_KVH, kvh, C_D, d, C_THREADS, C_STATUS, col, csv))

set terminal pngcairo size 1000,650 enhanced font "sans,11"
set key outside right top box opaque spacing 1.2
set grid xtics ytics mytics
set logscale x 2
set logscale y 10
set format y "%g"
set style line 1 lc rgb "#1f77b4" lw 2.5 pt 7 ps 1.4
set style line 2 lc rgb "#1f77b4" lw 2.5 pt 6 ps 1.4 dt 2
set style line 3 lc rgb "#ff7f0e" lw 2.5 pt 5 ps 1.3
set style line 4 lc rgb "#ff7f0e" lw 2.5 pt 4 ps 1.3 dt 2
set style line 5 lc rgb "#555555" lw 2.5 pt 9 ps 1.5
set style line 6 lc rgb "#555555" lw 2.5 pt 8 ps 1.5 dt 2
set style line 9 lc rgb "#d62728" lw 1.5 dt 3

# ---- prefill: GFLOP/s against S --------------------------------------------------------------------
PH = "prefill"
set ylabel "useful GFLOP/s, 1 thread (causal counts visible pairs only)"
set xtics ("128" 128, "256" 256, "512" 512, "1024" 1024, "2048" 2048)
set yrange [0.5:peak*2]

do for [cfg = 1:2] {
  if (cfg == 1) { H = 32; KVH = 8; D = 128; out = dir."/prefill_d128.png" } \
  else          { H = 12; KVH = 12; D = 64; out = dir."/prefill_d64.png" }
  set output out
  naive = count(PH, H, KVH, D, "", "naive") > 0 ? " vs naive C" : ""
  set title sprintf("attngen prefill h%d/kv%d/d%d, fp32: specialized vs generic%s (log-log)", H, KVH, D, naive) noenhanced
  # x axis: the measured lengths (one length, as in a quick run: one octave either side, and a note)
  r = span(PH, H, KVH, D, C_Q); lo = real(word(r, 1)); hi = real(word(r, 2))
  if (lo <= 0) { set xrange [100:2600] } else { if (lo == hi) { set xrange [lo/2:hi*2] } else { set xrange [lo/1.4:hi*1.4] } }
  if (lo > 0 && lo == hi) {
    set xlabel "sequence length S = q_len = kv_len (batch 1); one length measured (make bench: 128 to 2048)" noenhanced
  } else { set xlabel "sequence length S (q_len = kv_len, batch 1)" noenhanced }
  # the note names only masks whose case ran and fell back to the generic kernel
  missing = ""
  if (count(PH, H, KVH, D, "causal", "fallback") > 0) { missing = missing." causal" }
  if (count(PH, H, KVH, D, "none", "fallback") > 0) { missing = missing." none" }
  if (strlen(missing) > 0) {
    set label 2 "no specialized kernel generated for mask:".missing."\n(attngen_select ran generic)" \
        at graph 0.98, graph 0.06 right front tc rgb "#444444" noenhanced
  } else { unset label 2 }
  plot peak title sprintf("FMA peak, 1 core (%.0f GFLOP/s)", peak) ls 9, \
       src(PH, H, KVH, D, "causal", "special") using C_Q:C_GFLOPS with linespoints ls 1 title "specialized, causal", \
       src(PH, H, KVH, D, "none", "special") using C_Q:C_GFLOPS with linespoints ls 2 title "specialized, none", \
       src(PH, H, KVH, D, "causal", "generic") using C_Q:C_GFLOPS with linespoints ls 3 title "generic, causal", \
       src(PH, H, KVH, D, "none", "generic") using C_Q:C_GFLOPS with linespoints ls 4 title "generic, none", \
       src(PH, H, KVH, D, "causal", "naive") using C_Q:C_GFLOPS with linespoints ls 5 title "naive C, causal", \
       src(PH, H, KVH, D, "none", "naive") using C_Q:C_GFLOPS with linespoints ls 6 title "naive C, none"
  unset output
}
unset label 2

# ---- decode: GB/s against kv_len -------------------------------------------------------------------
PH = "decode"
set output dir."/decode.png"
set title "attngen decode, q_len 1, fp32: K+V bytes read once per call (warm up to 1/4 of the last-level cache, cold above: results.csv kv_state)" noenhanced
set ylabel "GB/s, 1 thread (2*kv_len*kv_heads*d*4 bytes / time)" noenhanced
r = span(PH, 0, 0, 0, C_KV); lo = real(word(r, 1)); hi = real(word(r, 2))
if (lo <= 0) { set xrange [400:21000] } else { if (lo == hi) { set xrange [lo/2:hi*2] } else { set xrange [lo/1.3:hi*1.3] } }
if (lo > 0 && lo == hi) {
  set xlabel "kv_len (batch 1); one length measured (make bench: 512 to 16384)" noenhanced
} else { set xlabel "kv_len (batch 1)" noenhanced }
set xtics ("512" 512, "1024" 1024, "2048" 2048, "4096" 4096, "8192" 8192, "16384" 16384)
set autoscale y
set yrange [0.2:*]
# GQA h32/kv8/d128 in blue/orange/grey solid, MHA h12/kv12/d64 dashed; specialized or not, what select ran
# is in "special" or (when the table lacks a kernel) "fallback"
plot bw1 title sprintf("read bandwidth, 1 thread (%.1f GB/s)", bw1) ls 9, \
     src("decode", 32, 8, 128, "", "special") using C_KV:C_GBS with linespoints ls 1 title "specialized, GQA h32/kv8/d128", \
     src("decode", 12, 12, 64, "", "special") using C_KV:C_GBS with linespoints ls 2 title "specialized, MHA h12/kv12/d64", \
     src("decode", 32, 8, 128, "", "generic") using C_KV:C_GBS with linespoints ls 3 title "generic, GQA h32/kv8/d128", \
     src("decode", 12, 12, 64, "", "generic") using C_KV:C_GBS with linespoints ls 4 title "generic, MHA h12/kv12/d64", \
     src("decode", 32, 8, 128, "", "naive") using C_KV:C_GBS with linespoints ls 5 title "naive C, GQA h32/kv8/d128", \
     src("decode", 12, 12, 64, "", "naive") using C_KV:C_GBS with linespoints ls 6 title "naive C, MHA h12/kv12/d64"
unset output
