# Training loss and test accuracy per epoch, one line per variant (two panels, side by side).
# Data: blocks per variant (first line = title); columns: epoch train_loss test_acc   (*-epochs.dat)
#       test_acc as a fraction (0..1) is shown in percent.
# Run:  gnuplot -e "datafile='mlp-epochs.dat'; outfile='e.png'" plots/epochs.gp
if (!exists("datafile")) datafile = 'epochs.dat'
if (!exists("outfile")) outfile = 'epochs.png'
ext = outfile[strlen(outfile)-2:]
if (ext eq 'png') { set terminal pngcairo size 1050,1000 font 'Sans,30' linewidth 3 }
if (ext eq 'pdf') { set terminal pdfcairo size 3.5in,3.33in font 'Sans,8' linewidth 1.5 }
if (ext eq 'svg') { set terminal svg size 525,500 font 'Sans,10' linewidth 1.5 }
set output outfile
set linetype 5 lc rgb '#a07000'   # gnuplot's default yellow is too faint on paper

stats datafile using 0 nooutput
nb = STATS_blocks
stats datafile using 3 nooutput
pct = (STATS_max <= 1.0) ? 100.0 : 1.0
set grid xtics ytics lc rgb '#dddddd'
set xlabel 'epoch'
stats datafile using 1 nooutput
xinc = (STATS_max > 12 ? ceil(STATS_max / 10.0) : 1)
set xtics xinc
set key at screen 0.58, screen 0.995 center top horizontal samplen 1.5 noenhanced   # variant names: plain text, not enhanced-text markup
set multiplot layout 2,1 margins 0.2,0.96,0.15,0.87 spacing 0,0.07
set ylabel 'training loss'
set format x ''
unset xlabel
plot for [i=0:nb-1] datafile index i using 1:2 with linespoints pt (i+5) ps 1 dashtype i+1 title columnheader(1)
set format x '%g'
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
unset key
plot for [i=0:nb-1] datafile index i using 1:($3*pct) with linespoints pt (i+5) ps 1 dashtype i+1 title columnheader(1)
unset multiplot
