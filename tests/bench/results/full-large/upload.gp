set terminal png size 900,500
set output 'tests/bench/results/full-large/upload.png'
set title 'GeoDrive transfer benchmark: upload (MB/s, higher is better)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel 'MB/s'
set key top left
plot for [c=2:5] 'tests/bench/results/full-large/upload.dat' using c:xtic(1) title columnheader