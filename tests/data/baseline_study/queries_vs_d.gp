reset
set terminal svg size 800,560 font 'sans,12' background rgb 'white'
set output 'queries_vs_d.svg'
set title 'queries against d (H = 2, orthogonal-subspace models)'
set xlabel 'd'
set ylabel 'queries'
set logscale y
set key inside top left
set grid
set xtics 1
plot 'queries_vs_d.dat' using 1:2 with linespoints pt 7 title 'mhaq paper (4Hd^2-2H+1)', \
     '' using 1:3 with linespoints pt 5 title 'mhaq lean (1+2H(d^2+d-1))', \
     '' using 1:4 with linespoints pt 9 title 'single-head baseline (d^2+d; wrong for H = 2)', \
     '' using 1:5 with linespoints pt 11 title 'orthogonal baseline, known bases (sum k^2+k)'
