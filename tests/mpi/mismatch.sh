#!/bin/sh
# Ranks given different arguments (MPMD launch) are caught before any measurement, and
# the message names the rank that differs.
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
command -v mpirun >/dev/null || skip_all "mpirun not installed"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
$CC_MPIRUN -np 2 "$CCBENCH" bench -b 8 -e 8 -n 2 : -np 1 "$CCBENCH" bench -b 16 -e 16 -n 2 \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ]; ok $? "exit 2 (got $rc)" "$(cat "$tmp/err")"
grep -q "rank 2 (.*) was given different arguments" "$tmp/err"; ok $? "names rank 2" "$(cat "$tmp/err")"
! grep -q '^  *[0-9]' "$tmp/out"; ok $? "nothing measured"
# a difference past the first few thousand bytes of a long command line is seen too
long=$(i=0; while [ $i -lt 900 ]; do printf -- '-b 8 '; i=$((i + 1)); done)
timeout 120 $CC_MPIRUN -np 1 "$CCBENCH" bench $long -e 8 -n 2 : -np 1 "$CCBENCH" bench $long -e 1K -n 2 \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q "rank 1 (.*) was given different arguments: the same text, as far as its first 3,000 bytes go" "$tmp/err"
ok $? "a difference after 4,500 bytes of arguments: exit 2, rank 1 named (got $rc)" "$(cut -c1-200 "$tmp/err")"
# and a space inside an argument, which the text alone does not show
timeout 120 $CC_MPIRUN -np 1 "$CCBENCH" bench -b 8 -e 8 -n 2 --coll "allreduce,broadcast" : \
    -np 1 "$CCBENCH" bench -b 8 -e 8 -n 2 --coll allreduce,broadcast >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ]; ok $? "the same arguments quoted alike pass (got $rc)" "$(cat "$tmp/err")"
timeout 120 $CC_MPIRUN -np 1 "$CCBENCH" bench -b 8 -e 8 -n 2 "--json=$tmp/a" "--csv=$tmp/b" : \
    -np 1 "$CCBENCH" bench -b 8 -e 8 -n 2 "--json=$tmp/a --csv=$tmp/b" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q "was given different arguments: the same text, spaced differently inside its arguments" "$tmp/err"
ok $? "a space inside one rank's argument: exit 2 (got $rc)" "$(cat "$tmp/err")"
tap_done
