#!/bin/sh
# The hidden corruption switch changes one output element on one rank: the check must find
# exactly that element, report it in #wrong and make the exit code non-zero.
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
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
# allreduce and reduce are checked in shares, rank k checking share k of every output (from
# count x ranks = 2^22 on; CCBENCH_DEBUG_SHARE_ROUND shares every check): the element is
# still found once, on the root of a reduce too, and in rounds smaller than a message
# (several types and operators: a misplaced share would be wrong everywhere). The first
# element is in rank 0's share of the first round, the last one (CCBENCH_DEBUG_CORRUPT_LAST)
# in rank 4's share of the last round.
B="--backend ${CC_BACKEND:-mpi}"
for coll in allreduce reduce; do
    for at in first last; do
        last=0; [ $at = last ] && last=1
        for round in 67108864 64; do
            CCBENCH_DEBUG_CORRUPT_LAST=$last CCBENCH_DEBUG_SHARE_ROUND=$round $CC_MPIRUN -np 5 \
                -x CCBENCH_DEBUG_CORRUPT_LAST -x CCBENCH_DEBUG_SHARE_ROUND "$CCBENCH" bench $B \
                --coll $coll --root 3 -b 1000 -e 1000 -n 2 --outofplace --debug-corrupt 3 \
                --json "$tmp/c.jsonl" >"$tmp/out" 2>"$tmp/err"
            rc=$?
            [ $rc -eq 1 ] && grep -q '"wrong":1,' "$tmp/c.jsonl"
            ok $? "$coll at 5 ranks, shared in rounds of $round bytes: the $at element corrupted on rank 3 is counted once (exit $rc)" \
                "$(cat "$tmp/err" "$tmp/c.jsonl")"
        done
    done
    CCBENCH_DEBUG_SHARE_ROUND=64 $CC_MPIRUN -np 5 -x CCBENCH_DEBUG_SHARE_ROUND "$CCBENCH" bench $B \
        --coll $coll --root 3 -d int8,int64,bfloat16,float64 -o sum,prod,max -b 8 -e 1000 -f 3 \
        -n 2 --json "$tmp/c.jsonl" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] && ! grep -q '"wrong":[1-9]' "$tmp/c.jsonl" && grep -q '"wrong":0,' "$tmp/c.jsonl"
    ok $? "$coll at 5 ranks in 64-byte rounds, 4 types x 3 operators, 8 B to 1000 B: clean" \
        "$(cat "$tmp/err")"
done
# a round size given to one rank only: the ranks agree on the smallest, no mismatched exchange
timeout 60 $CC_MPIRUN -np 1 env CCBENCH_DEBUG_SHARE_ROUND=64 CCBENCH_DEBUG_CORRUPT_LAST=1 \
    "$CCBENCH" bench $B --coll allreduce -b 1000 -e 1000 -n 2 --outofplace --debug-corrupt 0 \
    --json "$tmp/c.jsonl" : -np 3 "$CCBENCH" bench $B --coll allreduce -b 1000 -e 1000 -n 2 \
    --outofplace --debug-corrupt 0 --json "$tmp/c.jsonl" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -q '"wrong":1,' "$tmp/c.jsonl"
ok $? "round size set on one rank of four: same exchanges everywhere, the element found (exit $rc)" \
    "$(cat "$tmp/err")"
# and without the switch the same run is clean
$CC_MPIRUN -np 3 "$CCBENCH" bench --coll allreduce -b 96 -e 96 -n 3 --json "$tmp/c.jsonl" >/dev/null 2>&1
ok $? "clean run exits 0"
tap_done
