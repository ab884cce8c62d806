#!/bin/bash
# Draw a clustered bar chart (PNG, gnuplot's cairo terminal) from a CSV with a header line: one
# cluster per row, labelled by column XCOL, one bar per column FIRST ..
# FIRST+N-1 (titled by the header). Used by the benchmarks; also handy to
# redraw a plot from bench/results/*-summary.csv, e.g.
#
#   bench/plot.sh bench/results/exec-summary.csv /tmp/exec.png "exec" ms 2 4 3
#
# Usage: bench/plot.sh CSV OUT.png TITLE YLABEL XCOL FIRST N
set -euo pipefail
[ $# -eq 7 ] || { echo "usage: plot.sh CSV OUT.png TITLE YLABEL XCOL FIRST N" >&2; exit 2; }
csv="$1" out="$2" title="$3" ylabel="$4" xcol="$5" first="$6" n="$7"
series=""
for ((i = 0; i < n; i++)); do
	src="''"
	x=""
	if [ "$i" -eq 0 ]; then
		src="'$csv'"
		x=":xtic($xcol)"
	fi
	series="$series${series:+, }$src using $((first + i))$x title columnheader($((first + i)))"
done
gnuplot <<-GNUPLOT
	set terminal pngcairo size 1000,560 font ',9' background rgb 'white'
	set output '$out'
	set datafile separator ','
	set datafile missing 'NA'
	set title "$title"
	set ylabel "$ylabel"
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.8 border -1
	set key top left
	set yrange [0:*]
	set bmargin 10
	set xtics rotate by 30 right nomirror
	plot $series
GNUPLOT
