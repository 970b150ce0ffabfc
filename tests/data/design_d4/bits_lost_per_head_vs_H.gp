reset
set terminal svg size 800,560 font 'sans,12' background rgb 'white'
set output 'bits_lost_per_head_vs_H.svg'
set title 'mhaq sweep: bits lost per head by query design (d=4, median over trials)'
set xlabel 'H (heads)'
set ylabel 'log2(kappa_{rms}) / H'
set key inside bottom right
set grid
set xtics 1
set yrange [0:*]
set offsets 0.5, 0.5, 0, 0
plot 'bits_lost_per_head_vs_H.dat' index 0 using 1:2 with linespoints pt 7 title 'paper', 'bits_lost_per_head_vs_H.dat' index 1 using 1:2 with linespoints pt 8 title 'scaled', 'bits_lost_per_head_vs_H.dat' index 2 using 1:2 with linespoints pt 9 title 'tuned'
