# Bars with error bars: mean per variant ± standard deviation; by default time per repetition (seed 002's
# Figure 2.6), or any quantity named by ylab (seed 004's Figure 1 d: average throughput).
# Data: one row per variant: "name" mean std          (*-bars.dat: seconds; *-throughput-bars.dat: samples/s)
# Run:  gnuplot -e "datafile='galaxy-bars.dat'; outfile='b.png'" plots/bars.gp
# Optional: subtitle='N=2700'; ylab='samples/s'; labfmt='%.0f' (the value labels' format, default %.3g)
if (!exists("datafile")) datafile = 'bars.dat'
if (!exists("outfile")) outfile = 'bars.png'
if (!exists("subtitle")) subtitle = ''
if (!exists("ylab")) ylab = 'time per repetition (s)'
if (!exists("labfmt")) labfmt = '%.3g'
ext = outfile[strlen(outfile)-2:]
if (ext eq 'png') { set terminal pngcairo size 1050,720 font 'Sans,30' linewidth 3 }
if (ext eq 'pdf') { set terminal pdfcairo size 3.5in,2.4in font 'Sans,8' linewidth 1.5 }
if (ext eq 'svg') { set terminal svg size 525,360 font 'Sans,10' linewidth 1.5 }
set output outfile
set linetype 5 lc rgb '#a07000'   # gnuplot's default yellow is too faint on paper

stats datafile using ($2+$3) nooutput
set style fill solid 0.6 border -1
set boxwidth 0.6
set yrange [0:STATS_max * 1.18]   # room for the value labels
set xrange [-0.6:STATS_records-0.4]
set ylabel ylab noenhanced
# names come from the data (variants, galaxy's max_iter): plain text, not enhanced-text markup
set xlabel 'variant'.(strlen(subtitle) ? ' ('.subtitle.')' : '') noenhanced
set xtics noenhanced
set grid ytics lc rgb '#dddddd'
set bars 2
unset key
plot datafile using 0:2:3:xtic(1) with boxerrorbars lc rgb '#4477aa' notitle, \
     '' using 0:($2+$3):(sprintf(labfmt, $2)) with labels offset 0,0.8 notitle
