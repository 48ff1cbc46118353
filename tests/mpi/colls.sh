#!/bin/sh
# Every collective x datatype x op (where valid), in-place and out-of-place, on 1, 2, 3 and
# 4 real MPI ranks over the MPI backend (and 16-bit sums and averages on 17 and 66): the run must exit 0 and every measurement must be
# checked with zero wrong elements.
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
command -v mpirun >/dev/null || skip_all "mpirun not installed"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for np in 1 2 3 4; do
    out="$tmp/np$np.jsonl"
    $CC_MPIRUN -np $np "$CCBENCH" bench --backend "${CC_BACKEND:-mpi}" -b 8 -e 64K -f 8 -n 2 -w 1 \
        --coll all -d all -o all --json "$out" -q >"$tmp/log" 2>&1
    ok $? "np $np: all collectives, types and ops exit 0" "$(tail -5 "$tmp/log")"
    total=$(grep -c '"type":"result"' "$out")
    na=$(grep '"type":"result"' "$out" | grep -c '"na"')
    good=$(grep '"type":"result"' "$out" | grep -c '"wrong":0,')
    # 7 collectives; with op: 10 types x 5 ops minus 6 (avg on integers) = 44 pairs
    [ "$total" -gt 1500 ] && [ $((good + na)) -eq "$total" ]
    ok $? "np $np: $good measurements checked with 0 wrong, $na n/a, of $total" ""
    for c in allreduce allgather reducescatter broadcast reduce alltoall sendrecv; do
        n=$(grep '"type":"result"' "$out" | grep "\"collective\":\"$c\"" | grep -c '"wrong":0,')
        [ "$n" -gt 0 ]; ok $? "np $np: $c measured and verified ($n)"
    done
    ip=$(grep '"collective":"allgather"' "$out" | grep '"inplace":true' | grep -c '"wrong":0,')
    [ "$ip" -gt 0 ]; ok $? "np $np: in-place allgather verified ($ip)"
done

# 16-bit sums and averages where a window of ranks gives each element its inputs (averages:
# bfloat16 beyond 4 ranks, float16 beyond 15; sums: bfloat16 beyond 64): MPI's own reduction
# order must check out exactly or within the rounding allowed (tests/unit/test_dtype.c shows
# that a rank left out is caught there)
for np in 17 66; do
    out="$tmp/w$np.jsonl"
    if [ $np = 17 ]; then sel="--coll allreduce,reducescatter,reduce -d float16,bfloat16 -b 8K -e 64K -f 8"
    else sel="--coll allreduce,reduce -d bfloat16 -b 4K -e 4K"; fi
    # at 66 ranks the allreduce and reduce checks are shared out, in rounds of 1000 bytes
    round=0; [ $np = 66 ] && round=1000
    CCBENCH_DEBUG_SHARE_ROUND=$round timeout 300 $CC_MPIRUN -np $np -x CCBENCH_DEBUG_SHARE_ROUND \
        "$CCBENCH" bench --backend "${CC_BACKEND:-mpi}" $sel -o sum,avg \
        -n 2 -w 0 --json "$out" -q >"$tmp/log" 2>&1
    rc=$?
    total=$(grep -c '"type":"result"' "$out"); good=$(grep '"type":"result"' "$out" | grep -c '"wrong":0,')
    [ $rc = 0 ] && [ "$total" -ge 8 ] && [ "$good" = "$total" ]
    ok $? "np $np: 16-bit sums and averages over a window of ranks, $good of $total checked with 0 wrong (exit $rc)" \
        "$(tail -5 "$tmp/log")"
done
tap_done
