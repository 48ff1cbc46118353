#!/bin/sh
# check-cost.sh - what checking an allreduce costs, for two builds of ccbench run alternately
# (e.g. before and after a change to the checker). For each rank count, each build runs the
# same fixed-iteration allreduce row with -c 0 and with -c CHECKS; the check's cost is the
# difference of the rows' wall times (JSON "wall_s") divided by CHECKS. Median of REPS.
#   usage: tests/perf/check-cost.sh OLD_BUILD_DIR NEW_BUILD_DIR > results/FILE.md
#   env:   NPS (default "2 4 8 16"), SIZE (8M), DTYPE (float64), CHECKS (4), REPS (3)
# Run it on an otherwise idle machine: it is a benchmark, not a test. With more ranks than
# cores the ranks share the cores, so a figure is the work of all ranks, not of one.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 OLD_BUILD_DIR NEW_BUILD_DIR" >&2; exit 2; }
old=$1/ccbench new=$2/ccbench
for b in "$old" "$new"; do [ -x "$b" ] || { echo "no ccbench at $b" >&2; exit 2; }; done
nps=${NPS:-2 4 8 16} size=${SIZE:-8M} dtype=${DTYPE:-float64} checks=${CHECKS:-4}
reps=${REPS:-3}
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
row() { # row BINARY NP CHECKS -> wall_s of the row
    OMPI_MCA_mpi_yield_when_idle=1 mpirun -np "$2" --oversubscribe --bind-to none "$1" bench \
        --coll allreduce -d "$dtype" -b "$size" -e "$size" -n 2 -w 1 -c "$3" --outofplace \
        -q --json "$tmp/r.jsonl" >/dev/null 2>&1 || { echo "run failed: $*" >&2; exit 1; }
    grep '"type":"result"' "$tmp/r.jsonl" | head -1 | sed 's/.*"wall_s":\([0-9.e+-]*\).*/\1/'
}
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
echo "$(uname -sr); load average before: $(cut -d' ' -f1-3 /proc/loadavg)."
echo "Command per cell: mpirun -np NP --oversubscribe --bind-to none ccbench bench --coll allreduce"
echo "-d $dtype -b $size -e $size -n 2 -w 1 --outofplace -c C; check cost = (wall_s at C=$checks"
echo "- wall_s at C=0) / $checks, median of $reps alternated runs."
echo
echo "| ranks | old: s per check | new: s per check | old / new |"
echo "|---|---|---|---|"
for np in $nps; do
    : >"$tmp/o" ; : >"$tmp/n"
    for r in $(seq 1 "$reps"); do
        for b in old new; do
            eval bin=\$$b
            w0=$(row "$bin" "$np" 0)
            w1=$(row "$bin" "$np" "$checks")
            awk -v a="$w0" -v b="$w1" -v c="$checks" 'BEGIN {printf "%.4f\n", (b - a) / c}' >>"$tmp/${b%"${b#?}"}"
        done
    done
    o=$(median <"$tmp/o") n=$(median <"$tmp/n")
    awk -v np="$np" -v o="$o" -v n="$n" \
        'BEGIN {printf "| %d | %.3f | %.3f | %s |\n", np, o, n, (n > 0 ? sprintf("%.1f", o / n) : "-")}'
done
