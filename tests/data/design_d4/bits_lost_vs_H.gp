reset
set terminal svg size 800,560 font 'sans,12' background rgb 'white'
set output 'bits_lost_vs_H.svg'
set title 'mhaq sweep: bits lost vs number of heads (d=4)'
set xlabel 'H (heads)'
set ylabel 'bits lost = p + log2(error)'
set key inside top left
set grid
set xtics 1
set offsets 0.5, 0.5, 0, 0
plot 'bits_lost_vs_H.dat' using 1:2 with linespoints pt 7 title 'observed (median)', 'bits_lost_vs_H.dat' using 1:3 with linespoints pt 4 dt 2 title 'predicted: log2 kappa_{rms}'
