#!/bin/sh
# GPU and RDMA paths end to end. Without a GPU driver or an RDMA device (this is the
# behaviour under test, not a skip) each must exit 2 with one error line saying why; where the
# hardware is present each must succeed. Bad options must be refused either way.
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
command -v mpirun >/dev/null 2>&1 || skip_all "mpirun not found"

has_gpu=0
if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then has_gpu=1; fi
has_rdma=0
if [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then has_rdma=1; fi
built() { "$CCBENCH" version | grep -q "^$1: built"; }
diag "GPU driver present: $has_gpu, RDMA device present: $has_rdma"

# expect_fail NAME REGEX CMD...: exit 2 and exactly one ccbench error line matching REGEX
expect_fail() {
    name=$1 re=$2
    shift 2
    out=$("$@" 2>&1)
    rc=$?
    errs=$(printf '%s\n' "$out" | grep -c '^ccbench.*error:')
    if [ "$rc" -eq 2 ] && [ "$errs" -eq 1 ] && printf '%s\n' "$out" | grep '^ccbench.*error:' | grep -Eq "$re"; then
        ok 0 "$name: exit 2, one line: $(printf '%s\n' "$out" | grep '^ccbench.*error:' | sed 's/^.*error: //' | cut -c1-90)"
    else
        ok 1 "$name: want exit 2 and one error line matching '$re'" "rc=$rc error lines=$errs
$out"
    fi
}
expect_ok() {
    name=$1
    shift
    out=$("$@" 2>&1)
    rc=$?
    ok "$rc" "$name" "$out"
}

MPI1="$CC_MPIRUN -np 1 $CCBENCH"

# --- nccl -------------------------------------------------------------------------------------
if ! built nccl; then
    expect_fail "nccl without NCCL headers" "not built into this binary" $MPI1 bench --backend nccl -e 1K
elif [ "$has_gpu" = 0 ]; then
    expect_fail "nccl without a GPU driver" "no CUDA driver found \(libcuda\.so\.1 not loadable\)|no CUDA device" \
        $MPI1 bench --backend nccl -e 1K
else
    expect_ok "nccl np1: every collective, checked" $MPI1 bench --backend nccl --coll all -b 8 -e 1M -n 5 -w 1
    expect_ok "nccl np1 with CUDA graphs" $MPI1 bench --backend nccl --coll allreduce -e 1M -n 5 -w 1 -G 4
fi
expect_fail "nccl: bad --nccl-path refused" "unknown --nccl-path 'bogus'|not built|no CUDA" \
    $MPI1 bench --backend nccl --nccl-path bogus -e 1K

# --- verbs ------------------------------------------------------------------------------------
if ! built verbs; then
    expect_fail "verbs without verbs headers" "not built into this binary" $MPI1 bench --backend verbs -e 1K
elif [ "$has_rdma" = 0 ]; then
    expect_fail "verbs without an RDMA device" "no RDMA device" $MPI1 bench --backend verbs -e 1K
else
    out=$($MPI1 bench --backend verbs --coll sendrecv,allreduce,allgather -e 1M -n 5 -w 1 2>&1)
    rc=$?
    if [ "$rc" -eq 2 ] && printf '%s\n' "$out" | grep -q 'is DOWN'; then
        skip "verbs np1 loopback" "$(printf '%s\n' "$out" | grep -o 'port [^ ]* is DOWN' | head -1)"
    else
        ok "$rc" "verbs np1 loopback: sendrecv, allreduce, allgather" "$out"
    fi
fi
expect_fail "verbs: bad --ib-dev port refused" "bad port 'x'|not built" \
    $MPI1 bench --backend verbs --ib-dev mlx5_0:x -e 1K
if built verbs && [ "$has_rdma" = 1 ]; then
    expect_fail "verbs: unknown device" "no RDMA device matches '=nosuchdev0'" \
        $MPI1 bench --backend verbs --ib-dev =nosuchdev0 -e 1K
fi

# --- gpu copy bandwidth -------------------------------------------------------------------------
if ! built cuda; then
    expect_fail "gpu without CUDA headers" "not built into this binary" "$CCBENCH" gpu
elif [ "$has_gpu" = 0 ]; then
    expect_fail "gpu without a GPU driver" "no CUDA driver found \(libcuda\.so\.1 not loadable\)|no CUDA device" \
        "$CCBENCH" gpu
else
    expect_ok "gpu: every copy figure" "$CCBENCH" gpu -b 64M -n 3 -r 2
fi
expect_fail "gpu: unknown test refused" "unknown copy test 'nosuch'" "$CCBENCH" gpu --tests nosuch
# lists as everywhere: an empty item is an error, and a long list is read to its end (it was
# cut at 255 characters, dropping what followed)
expect_fail "gpu: an empty item in --tests refused" "invalid copy test list 'h2d,' \(an empty item\)" \
    "$CCBENCH" gpu --tests h2d,
expect_fail "gpu: --tests ',p2p' refused" "an empty item" "$CCBENCH" gpu --tests ,p2p
long=$(printf 'h2d,%.0s' $(seq 1 70))nosuch
expect_fail "gpu: a --tests list of ${#long} characters is read to its end" "unknown copy test 'nosuch'" \
    "$CCBENCH" gpu --tests "$long"
expect_fail "gpu: size not a multiple of 16 refused" "multiple of 16" "$CCBENCH" gpu --size 100
tap_done
