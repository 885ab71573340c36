# SPDX-License-Identifier: MIT
# bench/peers/plot.gp: attngen ÷ each peer per case, one PNG per thread count (make bench-peers-plot).
# Called as: gnuplot -e "data='build/peers/ratios_1t.dat'; out='build/peers/ratios_1t.png'" bench/peers/plot.gp
# data: a comment line, a header line (case torch ort ov ov-kv ov-pa), then one row per case; NaN = no result.
# Log scale: the ratios span 0.3x to 50x+, and a bar at 0.5x should look as far from 1 as one at 2x.
if (!exists("data")) data = 'build/peers/ratios_1t.dat'
if (!exists("out")) out = 'build/peers/ratios_1t.png'
threads = system(sprintf("echo '%s' | sed 's/.*ratios_\\([0-9]*\\)t.dat/\\1/'", data))

set terminal pngcairo size 1400,640 font ",10"
set output out
set title sprintf("attngen speed relative to each peer, %s thread(s): peer time / attngen time (> 1: attngen faster)", threads)
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y 2
set yrange [0.125:64]
set ytics ("1/8" 0.125, "1/4" 0.25, "1/2" 0.5, "1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32, "64" 64)
set grid ytics
set xtics rotate by -30 scale 0
set key top left horizontal
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2 lc rgb "black" front
set ylabel "peer time / attngen time (median of rounds)"
# only the peers with at least one result (a filtered run, e.g. PEERS_FILTER=prefill, has no ov-kv data); the
# values are the last n fields of a row, n = the header's peers (a case label may hold spaces)
cols = system(sprintf("awk 'NR == 2 { n = NF - 1 } NR > 2 { for (c = 2; c <= n + 1; c++) if ($(NF - n - 1 + c) != \"NaN\") seen[c] = 1 } END { for (c = 2; c <= n + 1; c++) if (c in seen) printf \"%%d \", c }' '%s'", data))
colors = "#ee6f2d #4a90d9 #6ab04c #9b59b6 #e1b12c"
plot for [i = 1:words(cols)] data using int(word(cols, i)):xtic(1) title columnheader(int(word(cols, i))) \
     lc rgb word(colors, int(word(cols, i)) - 1)
