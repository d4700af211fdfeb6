# Throughput and time per epoch, one line per variant (seed 004's Figure 1 a-b), two panels.
# Data: blocks per variant (first line = title); columns: epoch samples_per_s epoch_s   (*-throughput.dat)
# Run:  gnuplot -e "datafile='mlp-throughput.dat'; outfile='t.png'" plots/throughput.gp
if (!exists("datafile")) datafile = 'throughput.dat'
if (!exists("outfile")) outfile = 'throughput.png'
ext = outfile[strlen(outfile)-2:]
if (ext eq 'png') { set terminal pngcairo size 1050,1000 font 'Sans,30' linewidth 3 }
if (ext eq 'pdf') { set terminal pdfcairo size 3.5in,3.33in font 'Sans,8' linewidth 1.5 }
if (ext eq 'svg') { set terminal svg size 525,500 font 'Sans,10' linewidth 1.5 }
set output outfile
set linetype 5 lc rgb '#a07000'   # gnuplot's default yellow is too faint on paper

stats datafile using 0 nooutput
nb = STATS_blocks
set grid xtics ytics lc rgb '#dddddd'
set logscale y
set format y '10^{%L}'
stats datafile using 1 nooutput
xinc = (STATS_max > 12 ? ceil(STATS_max / 10.0) : 1)
set xtics xinc
set key at screen 0.58, screen 0.995 center top horizontal samplen 1.5 noenhanced   # variant names: plain text, not enhanced-text markup
set multiplot layout 2,1 margins 0.2,0.96,0.15,0.87 spacing 0,0.07
set ylabel 'samples/s'
set format x ''
plot for [i=0:nb-1] datafile index i using 1:2 with linespoints pt (i+5) ps 1 dashtype i+1 title columnheader(1)
set format x '%g'
unset key
set xlabel 'epoch'
set ylabel 'time per epoch (s)'
plot for [i=0:nb-1] datafile index i using 1:3 with linespoints pt (i+5) ps 1 dashtype i+1 title columnheader(1)
unset multiplot
