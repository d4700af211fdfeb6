# Reduced precision (seed 003, part 4): per variant and storage type, epoch time (mean ± std over the
# repetitions) and final test accuracy after the same epochs, two bar panels side by side.
# Data: one row per variant: "variant" epoch_s epoch_s_std test_acc_percent "storage"   (*-precision.dat)
# Run:  gnuplot -e "datafile='precision-precision.dat'; outfile='p.png'" plots/precision.gp
if (!exists("datafile")) datafile = 'precision.dat'
if (!exists("outfile")) outfile = 'precision.png'
ext = outfile[strlen(outfile)-2:]
if (ext eq 'png') { set terminal pngcairo size 1600,760 font 'Sans,22' linewidth 3 }
if (ext eq 'pdf') { set terminal pdfcairo size 5in,2.6in font 'Sans,8' linewidth 1.5 }
if (ext eq 'svg') { set terminal svg size 700,360 font 'Sans,10' linewidth 1.5 }
set output outfile

stats datafile using ($2+$3) nooutput
tmax = STATS_max
n = STATS_records
stats datafile using 4 nooutput
amin = STATS_min
amax = STATS_max
set style fill solid 0.6 border -1
set boxwidth 0.6
set xrange [-0.6:n-0.4]
set xtics noenhanced                 # variant names: plain text
set grid ytics lc rgb '#dddddd'
set bars 2
unset key
set multiplot
set lmargin 11
set size 0.5,1
set origin 0,0
set yrange [0:tmax * 1.2]            # room for the value labels
set ylabel 'epoch time (s)'
plot datafile using 0:2:3:xtic(1) with boxerrorbars lc rgb '#4477aa' notitle, \
     '' using 0:($2+$3):(sprintf('%.3g', $2)) with labels offset 0,0.8 notitle
# accuracy: a zoomed axis (the rows differ by tenths of a point), labelled with the values
lo = floor(amin - 2)
set yrange [lo:amax + (amax - lo) * 0.15 + 0.5]
set ylabel 'final test accuracy (%)'
set origin 0.5,0
plot datafile using 0:4:xtic(1) with boxes lc rgb '#aa7744' notitle, \
     '' using 0:4:(sprintf('%.2f', $4)) with labels offset 0,0.8 notitle
unset multiplot
