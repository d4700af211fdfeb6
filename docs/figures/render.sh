#!/bin/sh
# Renders one figure of each kind from the report tests' golden figure data (made by `speedlab report`
# from the fixtures in tests/reports/fixtures/; the numbers are hand-chosen test data, not measurements).
# Run from the source root:  sh docs/figures/render.sh
set -eu
d=tests/reports/golden/report/devbox/figures
o=docs/figures
gnuplot -e "datafile='$d/entropy_mi-time.dat'; outfile='$o/time_size.png'; xlab='B'" plots/time_size.gp
gnuplot -e "datafile='$d/entropy_mi-speedup.dat'; outfile='$o/speedup.png'; xlab='B'; baseline='naive'" plots/speedup.gp
gnuplot -e "datafile='$d/galaxy-bars.dat'; outfile='$o/bars.png'; subtitle='N=2700'" plots/bars.gp
gnuplot -e "datafile='$d/entropy_mi-roofline.dat'; outfile='$o/roofline.png'; nroofs=2" plots/roofline.gp
gnuplot -e "datafile='$d/mlp-epochs.dat'; outfile='$o/epochs.png'" plots/epochs.gp
gnuplot -e "datafile='$d/mlp-throughput.dat'; outfile='$o/throughput.png'" plots/throughput.gp
gnuplot -e "datafile='$d/galaxy-memory.dat'; outfile='$o/memory.png'" plots/memory.gp
gnuplot -e "datafile='$d/galaxy-cost.dat'; outfile='$o/series.png'; xlab='iteration'; ylab='cost J'" plots/series.gp
