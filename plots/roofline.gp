# Roofline: achieved GFLOP/s against arithmetic intensity, under the calibrated roofs.
# Data: the first `nroofs` blocks are roofs (AI, bound GFLOP/s), then one block per variant (AI, GFLOP/s,
#       size); every block's first line is its title.   (*-roofline.dat)
# Run:  gnuplot -e "datafile='entropy_mi-roofline.dat'; outfile='r.png'; nroofs=2" plots/roofline.gp
if (!exists("datafile")) datafile = 'roofline.dat'
if (!exists("outfile")) outfile = 'roofline.png'
if (!exists("nroofs")) nroofs = 1
ext = outfile[strlen(outfile)-2:]
if (ext eq 'png') { set terminal pngcairo size 1050,840 font 'Sans,30' linewidth 3 }
if (ext eq 'pdf') { set terminal pdfcairo size 3.5in,2.8in font 'Sans,8' linewidth 1.5 }
if (ext eq 'svg') { set terminal svg size 525,420 font 'Sans,10' linewidth 1.5 }
set output outfile
set linetype 5 lc rgb '#a07000'   # gnuplot's default yellow is too faint on paper

stats datafile using 0 nooutput
set logscale xy
set xlabel 'arithmetic intensity (flop/byte)'
set ylabel 'GFLOP/s'
set key outside top center horizontal samplen 1 width -2 maxrows 2 noenhanced   # variant names: plain text, not enhanced-text markup
set grid xtics ytics lc rgb '#dddddd'
plot for [i=0:nroofs-1] datafile index i using 1:2 with lines lw 2 lc rgb '#444444' dashtype i+1 title columnheader(1), \
     for [i=nroofs:STATS_blocks-1] datafile index i using 1:2 with points pt (i+5) ps 1.5 title columnheader(1)
