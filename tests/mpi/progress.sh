#!/bin/sh
# The progress line: on a terminal it shares stdout with the table (so the two stay in
# order through mpirun) and is erased before every row; it never reaches a file, and
# --progress off / CCBENCH_NO_PROGRESS turn it off. `script` (util-linux) provides the
# terminal.
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
command -v mpirun >/dev/null || skip_all "mpirun not installed"
command -v script >/dev/null || skip_all "script (util-linux) not installed"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
esc=$(printf '\033')
bench="$CC_MPIRUN -np 2 $CCBENCH bench --coll allreduce -b 1K -e 64K -f 4 -n 3"

# on a terminal: progress for each of the 4 sizes, each erased before its row
script -qec "$bench" "$tmp/tty" >/dev/null 2>&1
ok $? "bench on a terminal exits 0" "$(tail -5 "$tmp/tty")"
for i in 1 2 3 4; do
    grep -q "\[$i/4\] allreduce" "$tmp/tty" || break
done
[ "$i" = 4 ] && grep -q "\[4/4\] allreduce 64K" "$tmp/tty"; ok $? "a progress line per size ($i of 4)"
rows=$(grep -c '^.*   *65536  *16384  *float32  *sum' "$tmp/tty")
[ "$rows" -eq 1 ]; ok $? "the 64K row is on the terminal ($rows)"
# every progress text is followed by the erase sequence, never directly by table text
tr '\r' '\n' <"$tmp/tty" | grep "ETA" | grep -v "ETA ~*[0-9]*s$" >"$tmp/bad"
[ ! -s "$tmp/bad" ]; ok $? "no row text after a progress line" "$(head -2 "$tmp/bad")"
n=$(tr '\r' '\n' <"$tmp/tty" | grep -c "^${esc}\[K  *\(4096\|16384\|65536\)  ")
[ "$n" -eq 3 ]; ok $? "rows after the first start by erasing the progress line ($n of 3)"

# stdout to a file (under the same terminal): the file is clean, nothing on the terminal
script -qec "$bench >'$tmp/out'" "$tmp/tty2" >/dev/null 2>&1
ok $? "stdout to a file exits 0"
! grep -q "$esc" "$tmp/out" && ! grep -q "ETA" "$tmp/out"; ok $? "no progress or escapes in the file"
[ "$(grep -v '^#' "$tmp/out" | grep -c ' float32 ')" -eq 4 ]; ok $? "4 rows in the file"
! grep -q "ETA" "$tmp/tty2"; ok $? "no progress on the terminal when stdout goes to a file"

# switched off
script -qec "$bench --progress off" "$tmp/tty3" >/dev/null 2>&1
! grep -q "ETA" "$tmp/tty3" && grep -q ' 65536 ' "$tmp/tty3"; ok $? "--progress off"
script -qec "CCBENCH_NO_PROGRESS=1 $bench" "$tmp/tty4" >/dev/null 2>&1
! grep -q "ETA" "$tmp/tty4" && grep -q ' 65536 ' "$tmp/tty4"; ok $? "CCBENCH_NO_PROGRESS=1"

# forced, without a terminal: it goes where stdout goes
$bench --progress on >"$tmp/forced" 2>&1
ok $? "--progress on without a terminal exits 0"
grep -q "\[4/4\] allreduce 64K" "$tmp/forced"; ok $? "--progress on shows it anyway"
$bench >"$tmp/plain" 2>&1
! grep -q "ETA" "$tmp/plain"; ok $? "no terminal, no progress"
tap_done
