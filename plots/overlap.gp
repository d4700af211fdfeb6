# Epoch time and the compute's wait for data against the prefetch depth, one line per case (seed 003,
# part 2: overlap): depth 0 is the synchronous loop, 1, 2, 4 a loader thread that many batches ahead.
# Two panels sharing the depth axis: epoch time (ms), and the wait as a percentage of the epoch.
# Data: blocks per case (first line = title); columns: depth epoch_s wait_fraction "variant"  (*-overlap.dat)
# Run:  gnuplot -e "datafile='prefetch-overlap.dat'; outfile='o.png'" plots/overlap.gp
if (!exists("datafile")) datafile = 'overlap.dat'
if (!exists("outfile")) outfile = 'overlap.png'
ext = outfile[strlen(outfile)-2:]
if (ext eq 'png') { set terminal pngcairo size 1050,1200 font 'Sans,30' linewidth 3 }
if (ext eq 'pdf') { set terminal pdfcairo size 3.5in,4in font 'Sans,8' linewidth 1.5 }
if (ext eq 'svg') { set terminal svg size 525,600 font 'Sans,10' linewidth 1.5 }
# the case names (params and size) are long: a smaller key font, one name per line
keyfont = ext eq 'png' ? ',20' : ext eq 'pdf' ? ',6' : ',8'
set output outfile
set linetype 5 lc rgb '#a07000'   # gnuplot's default yellow is too faint on paper

stats datafile using 0 nooutput
nb = STATS_blocks
stats datafile using 1 nooutput
set xrange [STATS_min - 0.4 : STATS_max + 0.4]
set xtics 1
set grid xtics ytics lc rgb '#dddddd'
set key at screen 0.02, screen 0.995 left top vertical Left reverse samplen 1.5 noenhanced font keyfont   # case names: plain text, long
set multiplot layout 2,1 margins 0.2,0.96,0.12,0.88 spacing 0,0.07
set ylabel 'epoch time (ms)'
set yrange [0:*]
set format x ''
plot for [i=0:nb-1] datafile index i using 1:(1000*$2) with linespoints pt (i+5) ps 1 dashtype i+1 title columnheader(1)
unset key
set format x '%g'
set xlabel 'loader depth (0: batches made inline)'
set ylabel 'wait (% of epoch)'
set yrange [0:*]
plot for [i=0:nb-1] datafile index i using 1:(100*$3) with linespoints pt (i+5) ps 1 dashtype i+1 title columnheader(1)
unset multiplot
