#!/bin/sh
# The hidden corruption switch changes one output element on one rank: the check must find
# exactly that element, report it in #wrong and make the exit code non-zero.
. "$CC_SRCDIR/tests/tap.sh"
command -v mpirun >/dev/null || skip_all "mpirun not installed"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for coll in allreduce allgather alltoall; do
    $CC_MPIRUN -np 3 "$CCBENCH" bench --backend "${CC_BACKEND:-mpi}" --coll $coll -b 96 -e 96 -n 3 \
        --outofplace --debug-corrupt 2 --json "$tmp/c.jsonl" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ]; ok $? "$coll: corruption gives exit code 1 (got $rc)" "$(cat "$tmp/err")"
    grep -q '"wrong":1,' "$tmp/c.jsonl"; ok $? "$coll: exactly one wrong element recorded"
    grep -q 'wrong results detected' "$tmp/err"; ok $? "$coll: error line on stderr"
    grep -q 'CORRUPTION' "$tmp/out"; ok $? "$coll: summary flags corruption"
done
# and without the switch the same run is clean
$CC_MPIRUN -np 3 "$CCBENCH" bench --coll allreduce -b 96 -e 96 -n 3 --json "$tmp/c.jsonl" >/dev/null 2>&1
ok $? "clean run exits 0"
tap_done
