# Resident memory over time, one line per variant (seed 002's Figure 2.1).
# Data: blocks per variant (first line = title); columns: t_s rss_mib   (*-memory.dat)
# Run:  gnuplot -e "datafile='galaxy-memory.dat'; outfile='m.png'" plots/memory.gp
if (!exists("datafile")) datafile = 'memory.dat'
if (!exists("outfile")) outfile = 'memory.png'
ext = outfile[strlen(outfile)-2:]
if (ext eq 'png') { set terminal pngcairo size 1050,720 font 'Sans,30' linewidth 3 }
if (ext eq 'pdf') { set terminal pdfcairo size 3.5in,2.4in font 'Sans,8' linewidth 1.5 }
if (ext eq 'svg') { set terminal svg size 525,360 font 'Sans,10' linewidth 1.5 }
set output outfile
set linetype 5 lc rgb '#a07000'   # gnuplot's default yellow is too faint on paper

stats datafile using 0 nooutput
set xlabel 'time since the case started (s)'
set ylabel 'resident memory (MiB)'
# below the plot, not on the curves; variant names are plain text, not enhanced-text markup
set key outside bottom center horizontal samplen 2 noenhanced
set grid xtics ytics lc rgb '#dddddd'
# y autoscales from the data (from 0, a few MiB of change on a 50 MiB base read as flat lines), with
# a margin so the lowest and highest steps stay off the border
set offsets 0, 0, graph 0.05, graph 0.05
plot for [i=0:STATS_blocks-1] datafile index i using 1:2 with steps dashtype i+1 title columnheader(1)
