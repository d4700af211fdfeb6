# Any per-iteration series (e.g. galaxy's cost against conjugate-gradient iteration), one line per variant.
# Data: blocks per variant (first line = title); columns: x y   (*-cost.dat)
# Run:  gnuplot -e "datafile='galaxy-cost.dat'; outfile='c.png'; xlab='iteration'; ylab='cost J'" plots/series.gp
if (!exists("datafile")) datafile = 'series.dat'
if (!exists("outfile")) outfile = 'series.png'
if (!exists("xlab")) xlab = 'iteration'
if (!exists("ylab")) ylab = 'value'
ext = outfile[strlen(outfile)-2:]
if (ext eq 'png') { set terminal pngcairo size 1050,720 font 'Sans,30' linewidth 3 }
if (ext eq 'pdf') { set terminal pdfcairo size 3.5in,2.4in font 'Sans,8' linewidth 1.5 }
if (ext eq 'svg') { set terminal svg size 525,360 font 'Sans,10' linewidth 1.5 }
set output outfile
set linetype 5 lc rgb '#a07000'   # gnuplot's default yellow is too faint on paper

stats datafile using 0 nooutput
# points on every line only when there are few of them
pint = (STATS_records > 30 * STATS_blocks) ? int(STATS_records / (10 * STATS_blocks)) : 1
set xlabel xlab noenhanced
set ylabel ylab noenhanced
set key top right samplen 2 noenhanced   # variant names: plain text, not enhanced-text markup
set grid xtics ytics lc rgb '#dddddd'
plot for [i=0:STATS_blocks-1] datafile index i using 1:2 with linespoints pt (i+5) ps 1 pi pint dashtype i+1 title columnheader(1)
