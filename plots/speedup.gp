# Speedup over the baseline variant against size, one line per variant (log x, log y).
# Data: blocks per variant (first line = title); columns: size speedup   (*-speedup.dat)
# Run:  gnuplot -e "datafile='entropy_mi-speedup.dat'; outfile='s.png'" plots/speedup.gp
# Optional: xlab='B'; baseline='naive'
if (!exists("datafile")) datafile = 'speedup.dat'
if (!exists("outfile")) outfile = 'speedup.png'
if (!exists("xlab")) xlab = 'size'
if (!exists("baseline")) baseline = 'baseline'
ext = outfile[strlen(outfile)-2:]
if (ext eq 'png') { set terminal pngcairo size 1050,720 font 'Sans,30' linewidth 3 }
if (ext eq 'pdf') { set terminal pdfcairo size 3.5in,2.4in font 'Sans,8' linewidth 1.5 }
if (ext eq 'svg') { set terminal svg size 525,360 font 'Sans,10' linewidth 1.5 }
set output outfile
set linetype 5 lc rgb '#a07000'   # gnuplot's default yellow is too faint on paper

stats datafile using 0 nooutput
set logscale xy
set xlabel xlab.' (log scale)' noenhanced   # names (sizes, the baseline) are plain text
set ylabel 'speedup over '.baseline.' (×)' noenhanced
set key outside top center horizontal samplen 1 width -2 maxrows 2 noenhanced   # variant names: plain text, not enhanced-text markup
set grid xtics ytics lc rgb '#dddddd'
set autoscale fix
set offsets graph 0.08, graph 0.08, graph 0.1, graph 0.1
plot for [i=0:STATS_blocks-1] datafile index i using 1:2:xtic(1) with linespoints pt (i+5) ps 1 dashtype i+1 title columnheader(1), \
     1 with lines dt 2 lc rgb '#888888' notitle
