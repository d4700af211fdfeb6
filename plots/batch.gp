# Throughput and final test accuracy against batch size, one line per variant (seed 003, part 3): the
# lecture's batch-size trade-off, measured. Two panels sharing a log2 x axis.
# Data: blocks per variant (first line = title); columns: size samples_per_s test_acc epoch_s   (*-sweep.dat)
# Run:  gnuplot -e "datafile='mlp-sweep.dat'; outfile='b.png'" plots/batch.gp
if (!exists("datafile")) datafile = 'sweep.dat'
if (!exists("outfile")) outfile = 'sweep.png'
if (!exists("xlab")) xlab = 'batch'
ext = outfile[strlen(outfile)-2:]
if (ext eq 'png') { set terminal pngcairo size 1050,1000 font 'Sans,30' linewidth 3 }
if (ext eq 'pdf') { set terminal pdfcairo size 3.5in,3.33in font 'Sans,8' linewidth 1.5 }
if (ext eq 'svg') { set terminal svg size 525,500 font 'Sans,10' linewidth 1.5 }
set output outfile
set linetype 5 lc rgb '#a07000'   # gnuplot's default yellow is too faint on paper

stats datafile using 0 nooutput
nb = STATS_blocks
set grid xtics ytics lc rgb '#dddddd'
stats datafile using 1 nooutput
xmin = STATS_min
xmax = STATS_max
set logscale x 2                  # batch sizes are powers of two: one tic per doubling
set xrange [xmin / 1.3 : xmax * 1.3]
set xtics xmin, 2, xmax           # multiplicative on a log axis: the sizes themselves
set logscale y                    # variants may differ by orders of magnitude
set format y '%.0s%c'             # 100k, not 100000: leaves room for the axis label
set key at screen 0.58, screen 0.995 center top horizontal samplen 1.5 noenhanced   # variant names: plain text
set multiplot layout 2,1 margins 0.2,0.96,0.15,0.87 spacing 0,0.07
set ylabel 'samples/s'
set format x ''
plot for [i=0:nb-1] datafile index i using 1:2 with linespoints pt (i+5) ps 1 dashtype i+1 title columnheader(1)
set format x '%g'
unset key
set xlabel xlab noenhanced
unset logscale y
set format y '%g'
set ylabel 'test accuracy (%)'
plot for [i=0:nb-1] datafile index i using 1:(100*$3) with linespoints pt (i+5) ps 1 dashtype i+1 title columnheader(1)
unset multiplot
