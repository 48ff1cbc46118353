#!/bin/sh
# Every collective x datatype x op (where valid), in-place and out-of-place, on 1, 2, 3 and
# 4 real MPI ranks over the MPI backend: the run must exit 0 and every measurement must be
# checked with zero wrong elements.
. "$CC_SRCDIR/tests/tap.sh"
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
tap_done
