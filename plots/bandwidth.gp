# Copy bandwidth against transfer size, log-x, one line per variant (seed 003, part 5: pageable and
# pinned, host to device and back; the curve CUDA's bandwidthTest and nvbandwidth report).
# Data: blocks (two blank lines apart), one per variant; first line of a block = its title (quoted);
#       columns: bytes wall_gb_per_s device_gb_per_s      (written by `speedlab report` as *-bandwidth.dat)
# Run:  gnuplot -e "datafile='h2d-bandwidth.dat'; outfile='b.png'" plots/bandwidth.gp
#       outfile's extension picks the terminal: .png (pngcairo), .pdf (pdfcairo), .svg
# Optional: col=3 plots the device's own time (CUDA events) instead of the host's wall time (col=2).
if (!exists("datafile")) datafile = 'bandwidth.dat'
if (!exists("outfile")) outfile = 'bandwidth.png'
if (!exists("col")) col = 2
ext = outfile[strlen(outfile)-2:]
if (ext eq 'png') { set terminal pngcairo size 1050,720 font 'Sans,30' linewidth 3 }
if (ext eq 'pdf') { set terminal pdfcairo size 3.5in,2.4in font 'Sans,8' linewidth 1.5 }
if (ext eq 'svg') { set terminal svg size 525,360 font 'Sans,10' linewidth 1.5 }
set output outfile
set linetype 5 lc rgb '#a07000'   # gnuplot's default yellow is too faint on paper

stats datafile using 0 nooutput
set logscale x 2
set xtics ('1 KiB' 2**10, '16 KiB' 2**14, '256 KiB' 2**18, '4 MiB' 2**22, '64 MiB' 2**26, '1 GiB' 2**30)
set xlabel 'transfer size (log scale)'
set ylabel (col == 3 ? 'GB/s (device time)' : 'GB/s (host wall time)')
set yrange [0:*]
set key outside top center horizontal samplen 1 width -2 maxrows 2 noenhanced
set grid xtics ytics lc rgb '#dddddd'
set offsets graph 0.04, graph 0.04, graph 0.1, 0
plot for [i=0:STATS_blocks-1] datafile index i using 1:col with linespoints pt (i+5) ps 1 dashtype i+1 title columnheader(1)
