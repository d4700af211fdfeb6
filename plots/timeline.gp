# Timeline of a traced run (speedlab run --trace, PROF_TRACE): one row per thread, regions as coloured
# bars over time, nested regions drawn in thinner bars stacked above their parents (depth 0 at the
# bottom of the row), colours as in NVTX (the trace's speedlab.colors).
# Data: blocks per region name (first line = the name); columns: t0_s t1_s row depth
#       (*-timeline.dat, written by speedlab report from a trace.json)
# Run:  gnuplot -e "datafile='run-timeline.dat'; outfile='t.png'; colors='#76757d #699947'; rows='main thread-1'; maxdepth=3" plots/timeline.gp
# Optional: colors (one per block, in block order; default gnuplot's), rows (thread names, row 0 first),
#           maxdepth (deepest depth in the data, default 4), subtitle
if (!exists("datafile")) datafile = 'timeline.dat'
if (!exists("outfile")) outfile = 'timeline.png'
if (!exists("colors")) colors = ''
if (!exists("rows")) rows = ''
if (!exists("maxdepth")) maxdepth = 4
if (!exists("subtitle")) subtitle = ''
ext = outfile[strlen(outfile)-2:]
if (ext eq 'png') { set terminal pngcairo size 1600,720 font 'Sans,20' linewidth 2 }
if (ext eq 'pdf') { set terminal pdfcairo size 7in,3.2in font 'Sans,8' linewidth 1 }
if (ext eq 'svg') { set terminal svg size 1000,450 font 'Sans,10' linewidth 1 }
set output outfile

stats datafile using 3 nooutput
nrows = STATS_max + 1
# each row is 0.8 high; its depths share it, the deeper the higher
band = 0.8 / (maxdepth + 1)
ylo(row, depth) = row - 0.4 + depth * band
set yrange [-0.6:nrows - 0.4]
set ytics () noenhanced
if (words(rows) > 0) { do for [i=1:words(rows)] { set ytics add (word(rows, i) i - 1) } }
set xlabel 'time since the trace started (s)'.(strlen(subtitle) ? ' ('.subtitle.')' : '') noenhanced
set grid xtics lc rgb '#dddddd'
set style fill solid 1.0 noborder
# region names are user strings: plain text in the key
set key outside right top vertical noenhanced samplen 1 spacing 1.1
col(i) = (words(colors) >= i + 1) ? word(colors, i + 1) : ''
plot for [i=0:STATS_blocks-1] datafile index i \
     using (($1 + $2) / 2):(ylo($3, $4) + band / 2):(($2 - $1) / 2):(band / 2 * 0.9) \
     with boxxyerror lc rgb (strlen(col(i)) ? col(i) : '#808080') title columnheader(1)
