#!/bin/sh
# Renders the example figures in docs/figures/ (docs/figures/README.md lists them). Run from the
# source root:  sh docs/figures/render.sh
#
# Two sources of figure data, both written by `speedlab report`:
#   t: the report tests' golden figure data, from the hand-made fixtures in tests/reports/fixtures/
#      (hand-chosen test data, not measurements);
#   r: the results page of the main job on a 2-vCPU Zen 3 machine at AVX2, rendered from its records in
#      docs/results/zen3-avx2/results/ (measured).
set -eu
t=tests/reports/golden
r=docs/results/zen3-avx2/report/vm-avx2/figures
o=docs/figures
# test data
gnuplot -e "datafile='$t/report/devbox/figures/entropy_mi-time.dat'; outfile='$o/time_size.png'; xlab='B'" plots/time_size.gp
gnuplot -e "datafile='$t/report/devbox/figures/entropy_mi-speedup.dat'; outfile='$o/speedup.png'; xlab='B'; baseline='naive'" plots/speedup.gp
gnuplot -e "datafile='$t/report/devbox/figures/galaxy-bars.dat'; outfile='$o/bars.png'; subtitle='N=2700'" plots/bars.gp
gnuplot -e "datafile='$t/report/devbox/figures/entropy_mi-roofline.dat'; outfile='$o/roofline.png'; nroofs=2" plots/roofline.gp
gnuplot -e "datafile='$t/report/devbox/figures/mlp-epochs.dat'; outfile='$o/epochs.png'" plots/epochs.gp
gnuplot -e "datafile='$t/report/devbox/figures/mlp-throughput.dat'; outfile='$o/throughput.png'" plots/throughput.gp
gnuplot -e "datafile='$t/report/devbox/figures/galaxy-memory.dat'; outfile='$o/memory.png'" plots/memory.gp
gnuplot -e "datafile='$t/report/devbox/figures/galaxy-cost.dat'; outfile='$o/series.png'; xlab='iteration'; ylab='cost J'" plots/series.gp
gnuplot -e "datafile='$t/gpu_path/gpubox/figures/h2d-bandwidth.dat'; outfile='$o/bandwidth.png'" plots/bandwidth.gp
# measured
gnuplot -e "datafile='$r/prefetch-throughput-bars.dat'; outfile='$o/throughput-bars.png'; subtitle='batch=64'; ylab='samples/s (mean over epochs)'; labfmt='%.0f'" plots/bars.gp
gnuplot -e "datafile='$r/pipeline-loading.dat'; outfile='$o/loading.png'; ylab='images/s'; labfmt='%.3g'" plots/bars.gp
gnuplot -e "datafile='$r/mlp-sweep.dat'; outfile='$o/batch.png'; xlab='batch'" plots/batch.gp
gnuplot -e "datafile='$r/prefetch-overlap.dat'; outfile='$o/overlap.png'" plots/overlap.gp
gnuplot -e "datafile='$r/precision-precision.dat'; outfile='$o/precision.png'" plots/precision.gp
