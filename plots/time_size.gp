# Time against size, log-log, one line per variant, error bars = interquartile range.
# Data: blocks (two blank lines apart), one per variant; first line of a block = its title (quoted);
#       columns: size median_s p25_s p75_s       (written by `speedlab report` as *-time.dat)
# Run:  gnuplot -e "datafile='entropy_mi-time.dat'; outfile='t.png'" plots/time_size.gp
#       outfile's extension picks the terminal: .png (pngcairo), .pdf (pdfcairo), .svg
# Optional: xlab='B'  (the swept parameter's name)
if (!exists("datafile")) datafile = 'time.dat'
if (!exists("outfile")) outfile = 'time.png'
if (!exists("xlab")) xlab = 'size'
ext = outfile[strlen(outfile)-2:]
if (ext eq 'png') { set terminal pngcairo size 1050,720 font 'Sans,30' linewidth 3 }
if (ext eq 'pdf') { set terminal pdfcairo size 3.5in,2.4in font 'Sans,8' linewidth 1.5 }
if (ext eq 'svg') { set terminal svg size 525,360 font 'Sans,10' linewidth 1.5 }
set output outfile
set linetype 5 lc rgb '#a07000'   # gnuplot's default yellow is too faint on paper

stats datafile using 0 nooutput
set logscale xy
set format y '10^{%L}'
set xlabel xlab.' (log scale)' noenhanced   # a size name is plain text
set ylabel 'time per repetition (s)'
set key outside top center horizontal samplen 1 width -2 maxrows 2 noenhanced   # variant names: plain text, not enhanced-text markup
set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set bars small
set autoscale fix
set offsets graph 0.08, graph 0.08, graph 0.1, graph 0.1
plot for [i=0:STATS_blocks-1] datafile index i using 1:2:3:4:xtic(1) with yerrorlines pt (i+5) ps 1 dashtype i+1 title columnheader(1)
