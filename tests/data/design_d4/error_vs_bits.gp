reset
set terminal svg size 800,560 font 'sans,12' background rgb 'white'
set output 'error_vs_bits.svg'
set title 'mhaq sweep: relative parameter error vs precision (d=4, paper schedule)'
set xlabel 'precision (bits)'
set ylabel 'log10 of max relative error (median over trials)'
set logscale x 2
set key outside right
set grid
plot 'error_vs_bits.dat' index 0 using 1:2 with linespoints title 'H=2', 'error_vs_bits.dat' index 1 using 1:2 with linespoints title 'H=3', 'error_vs_bits.dat' index 2 using 1:2 with linespoints title 'H=4', 'error_vs_bits.dat' index 3 using 1:2 with linespoints title 'H=5', 'error_vs_bits.dat' index 4 using 1:2 with linespoints title 'H=6', 'error_vs_bits.dat' index 5 using 1:2 with linespoints title 'H=7', 'error_vs_bits.dat' index 6 using 1:2 with linespoints title 'H=8'
