# The cost curve of warden-controller (bench/controller_curve.sh):
#   gnuplot -e "dat='...'; before='...' (or ''); out='...'"
set terminal pngcairo size 1200,420 font ",10"
set output out
set multiplot layout 1,3
set logscale x
set xrange [700:14000]
set xtics (1000, 3000, 10000)
set xlabel "Etcds (12 components each)"
set key top left box opaque
set grid
set title "RSS (MiB)"
if (strlen(before) > 0) {
    plot dat using 1:3 with linespoints title "through the load", \
         dat using 1:4 with linespoints title "restarted, synced", \
         before using 1:3 with linespoints dashtype 3 title "before: through the load", \
         before using 1:4 with linespoints dashtype 3 title "before: restarted", \
         160 with lines dashtype 2 title "target at 10,000"
} else {
    plot dat using 1:3 with linespoints title "through the load", \
         dat using 1:4 with linespoints title "restarted, synced", \
         160 with lines dashtype 2 title "target at 10,000"
}
set title "initial sync / LIST of the same objects"
set yrange [0:*]
if (strlen(before) > 0) {
    plot dat using 1:8 with linespoints title "sync / LIST (same run)", \
         before using 1:8 with linespoints dashtype 3 title "before", \
         1.5 with lines dashtype 2 title "target"
} else {
    plot dat using 1:8 with linespoints title "sync / LIST (same run)", \
         1.5 with lines dashtype 2 title "target"
}
set title "hibernation latencies / one curl PATCH"
set logscale y
set yrange [*:*]
plot dat using 1:11 with linespoints title "annotation -> ports cut", \
     dat using 1:13 with linespoints title "task Succeeded -> scale", \
     2 with lines dashtype 2 title "target"
unset multiplot
