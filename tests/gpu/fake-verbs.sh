#!/bin/sh
# The verbs backend end to end against a fake libibverbs (tests/gpu/fake/fakeibv.c) whose
# RDMA writes go between the processes of this host: device/port/GID selection and their
# errors, QP records over MPI, striped writes over several QPs with many outstanding, the
# ready handshake of sendrecv, and the ring allreduce/allgather with credits, with 1 to 4
# ranks, checked by the harness. It proves the protocol logic, not a NIC's behaviour.
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
lib=$CC_BUILDDIR/tests/gpu/fake/libfakeibv.so
[ -f "$lib" ] || skip_all "built without verbs headers: no fake verbs library"
command -v mpirun >/dev/null 2>&1 || skip_all "mpirun not found"
[ "$(cat /proc/sys/kernel/pid_max 2>/dev/null || echo 99999999)" -le 65536 ] ||
    skip_all "the fake gives each process the LID of its pid: pid_max is above 65536"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ln -s "$lib" "$dir/libibverbs.so.1"
export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" CCBENCH_NO_PROGRESS=1
unset NCCL_IB_HCA FAKEIBV_DEVICES FAKEIBV_PORT_DOWN
MPI="$CC_MPIRUN -x LD_LIBRARY_PATH"

# run and has: tests/tap.sh

# can this container write into another process (process_vm_writev)?
out=$($MPI -np 2 "$CCBENCH" bench --backend verbs --coll sendrecv -b 8 -e 8 -n 1 -w 0 2>&1)
if printf '%s\n' "$out" | grep -q 'ibv_post_send'; then
    skip_all "process_vm_writev is not permitted here (the fake needs it)"
fi

j=$dir/np1.jsonl
run "np1 loopback: sendrecv, allreduce, allgather" 0 \
    $MPI -np 1 "$CCBENCH" bench --backend verbs --coll sendrecv,allreduce,allgather -e 64K -n 3 -w 1 --json "$j"
has "header: device and port" '"rdma_device": *"fake0".*"rdma_port": *1' "$j"
has "header: link layer" '"rdma_link_layer": *"InfiniBand"' "$j"
has "header: host memory" '"rdma_memory": *"host"' "$j"
for np in 2 3 4; do
    j=$dir/np$np.jsonl
    run "np$np: sendrecv, allreduce, allgather over 3 QPs, 8 B to 4 MiB, checked" 0 \
        $MPI -np $np "$CCBENCH" bench --backend verbs --coll sendrecv,allreduce,allgather \
        --ib-qps 3 -b 8 -e 4M -f 8 -n 4 -w 1 --json "$j"
    for c in sendrecv allreduce allgather; do
        has "np$np: $c without wrong elements" "\"collective\": *\"$c\".*\"wrong\": *0" "$j"
    done
done
run "np3: int32 max allreduce" 0 $MPI -np 3 "$CCBENCH" bench --backend verbs -d int32 -o max -e 1M -n 3 -w 1
run "np3: float16 sum allreduce" 0 $MPI -np 3 "$CCBENCH" bench --backend verbs -d float16 -e 256K -n 3 -w 1
run "np2: float64 avg allreduce" 0 $MPI -np 2 "$CCBENCH" bench --backend verbs -d float64 -o avg -e 256K -n 3 -w 1
run "np2: other collectives reported n/a" 0 $MPI -np 2 "$CCBENCH" bench --backend verbs --coll broadcast -e 1K -n 2
has "np2: n/a says why" "n/a|allreduce, allgather and sendrecv only"
run "np2: --debug-corrupt is caught as wrong results" 1 \
    $MPI -np 2 "$CCBENCH" bench --backend verbs --coll allreduce -e 64K -n 2 --debug-corrupt 1
run "--ib-dev fake0:1 selects it" 0 $MPI -np 1 "$CCBENCH" bench --backend verbs --ib-dev fake0:1 -e 1K -n 2

run "backends: verbs usable on the fake device" 0 "$CCBENCH" backends
has "backends: verbs usable, port named" "^verbs +built +host +usable"
has "backends: the port bench would use" "here: port fake0:1 \(InfiniBand\)"
run "backends: no device" 0 env FAKEIBV_DEVICES=0 "$CCBENCH" backends
has "backends: verbs not usable, why" "^verbs +built +host +no "
has "backends: no device named" "here: no RDMA device on "
run "backends: port down" 0 env FAKEIBV_PORT_DOWN=1 "$CCBENCH" backends
has "backends: port down named" "here: port fake0:1 is DOWN"

FAKEIBV_DEVICES=0 run "no device" 2 $MPI -x FAKEIBV_DEVICES=0 -np 1 "$CCBENCH" bench --backend verbs -e 1K
has "no device: one reason" "error: backend verbs: no RDMA device on "
run "port down" 2 $MPI -x FAKEIBV_PORT_DOWN=1 -np 1 "$CCBENCH" bench --backend verbs -e 1K
has "port down: names the port" "port fake0:1 is DOWN"
run "exact name that does not exist" 2 $MPI -np 1 "$CCBENCH" bench --backend verbs --ib-dev =fake -e 1K
has "lists the devices there are" "no RDMA device matches '=fake' on .* \(devices: fake0\)"
run "excluded device" 2 $MPI -np 1 "$CCBENCH" bench --backend verbs --ib-dev '^fake0' -e 1K
run "NCCL_IB_HCA used without --ib-dev" 2 $MPI -x NCCL_IB_HCA=mlx5 -np 1 "$CCBENCH" bench --backend verbs -e 1K
has "NCCL_IB_HCA named" "no RDMA device matches 'mlx5'"
run "NCCL_IB_GID_INDEX used without --gid-index" 2 $MPI -x NCCL_IB_GID_INDEX=3 -np 1 "$CCBENCH" bench --backend verbs -e 1K
has "NCCL_IB_GID_INDEX: the index tried named" "cannot read GID 3 of port fake0:1"
run "NCCL_IB_GID_INDEX=-1 (NCCL's automatic choice) accepted" 0 $MPI -x NCCL_IB_GID_INDEX=-1 -np 1 "$CCBENCH" bench --backend verbs -e 1K -n 2
run "NCCL_IB_TC out of range refused" 2 $MPI -x NCCL_IB_TC=256 -np 1 "$CCBENCH" bench --backend verbs -e 1K
has "NCCL_IB_TC: one line naming it" "NCCL_IB_TC='256' is not an integer from 0 to 255"
run "NCCL_IB_SL not a number refused" 2 $MPI -x NCCL_IB_SL=high -np 1 "$CCBENCH" bench --backend verbs -e 1K
has "NCCL_IB_SL: one line naming it" "NCCL_IB_SL='high' is not an integer from 0 to 15"
j=$dir/tc.jsonl
run "NCCL_IB_TC and NCCL_IB_SL applied" 0 $MPI -x NCCL_IB_TC=106 -x NCCL_IB_SL=3 -np 2 "$CCBENCH" bench \
    --backend verbs --coll sendrecv -e 64K -n 2 -w 1 --json "$j"
has "header: traffic class and service level" '"rdma_traffic_class": *106.*"rdma_service_level": *3' "$j"
# the service level reaches the queue pairs (the fake refuses RTR without it)
run "NCCL_IB_SL reaches the queue pairs" 0 $MPI -x NCCL_IB_SL=3 -x FAKEIBV_EXPECT_SL=3 -np 2 "$CCBENCH" bench \
    --backend verbs --coll sendrecv -e 1K -n 2 -w 1
run "without NCCL_IB_SL the fake's check refuses (the check can fail)" 3 $MPI -x FAKEIBV_EXPECT_SL=3 -np 2 \
    "$CCBENCH" bench --backend verbs --coll sendrecv -e 1K -n 2 -w 1
has "without NCCL_IB_SL: the queue pair connect is what fails" "cannot connect queue pair 0 of fake0:1"
# RoCE: the global route carries the GID index and traffic class asked for (the fake refuses
# RTR otherwise), and the header says so; without NCCL_IB_TC the fake's check refuses
j=$dir/roce.jsonl
run "RoCE: GID index 3 and traffic class 106 reach the queue pairs, checked" 0 $MPI -x FAKEIBV_ROCE=1 \
    -x FAKEIBV_EXPECT_GID=3 -x FAKEIBV_EXPECT_TC=106 -x NCCL_IB_TC=106 -x NCCL_IB_GID_INDEX=3 -np 2 \
    "$CCBENCH" bench --backend verbs --coll sendrecv,allreduce -e 64K -n 2 -w 1 --json "$j"
has "RoCE: header" '"rdma_link_layer": *"Ethernet \(RoCE\)".*"rdma_gid_index": *3.*"rdma_traffic_class": *106' "$j"
has "RoCE: no wrong elements" '"collective": *"allreduce".*"wrong": *0' "$j"
run "RoCE without NCCL_IB_TC: the fake's traffic-class check refuses (the check can fail)" 3 \
    $MPI -x FAKEIBV_ROCE=1 -x FAKEIBV_EXPECT_TC=106 -x NCCL_IB_GID_INDEX=3 -np 2 \
    "$CCBENCH" bench --backend verbs --coll sendrecv -e 1K -n 2 -w 1
has "RoCE without NCCL_IB_TC: the queue pair connect is what fails" "cannot connect queue pair 0 of fake0:1"
# RoCE without a GID index: the fake's port has no sysfs GID table here, so no routable GID:
# refused at start-up, naming the port
run "RoCE port without a routable GID: refused" 2 $MPI -x FAKEIBV_ROCE=1 -np 1 "$CCBENCH" bench \
    --backend verbs -e 1K
has "RoCE port without a routable GID: named" "no usable RDMA port on .*: cannot read GID table of fake0:1"
# neighbours on different fabrics (one rank's port InfiniBand, the other's RoCE): named at
# start-up instead of a queue pair that will not connect
run "InfiniBand and RoCE neighbours: refused" 2 $CC_MPIRUN -np 1 env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" \
    FAKEIBV_ROCE=1 NCCL_IB_GID_INDEX=3 "$CCBENCH" bench --backend verbs --coll sendrecv -e 1K : \
    -np 1 env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" "$CCBENCH" bench --backend verbs --coll sendrecv -e 1K
has "InfiniBand and RoCE neighbours: named" "rank 1's RDMA port is InfiniBand, this rank's fake0:1 is Ethernet \\(RoCE\\): the ranks need ports on one fabric"
# NCCL's ACK timeout and retry count: honoured, in the header, refused out of range
j=$dir/timeout.jsonl
run "NCCL_IB_TIMEOUT and NCCL_IB_RETRY_CNT honoured" 0 $MPI -x NCCL_IB_TIMEOUT=22 -x NCCL_IB_RETRY_CNT=5 \
    -np 2 "$CCBENCH" bench --backend verbs --coll sendrecv -e 1K -n 2 -w 1 --json "$j"
has "header: ACK timeout and retry count" '"rdma_ib_timeout": *22, *"rdma_ib_retry_cnt": *5' "$j"
run "NCCL_IB_TIMEOUT out of range" 2 $MPI -x NCCL_IB_TIMEOUT=40 -np 1 "$CCBENCH" bench --backend verbs -e 1K
has "NCCL_IB_TIMEOUT out of range: named" "NCCL_IB_TIMEOUT='40' is not an integer from 1 to 31"
run "bad --gid-index" 2 $MPI -np 1 "$CCBENCH" bench --backend verbs --gid-index 3 -e 1K
has "gid index named" "cannot read GID 3 of port fake0:1"
if command -v setpriv >/dev/null 2>&1 && setpriv --bounding-set=-ipc_lock true 2>/dev/null; then
    run "memlock limit too low" 2 setpriv --bounding-set=-ipc_lock sh -c \
        "ulimit -l 64 && $MPI -np 1 $CCBENCH bench --backend verbs -e 1M"
    has "memlock: says what to do" "memlock limit 64 KiB is too low for RDMA registration.*ulimit -l"
else
    skip "memlock limit too low" "cannot drop CAP_IPC_LOCK here (setpriv)"
fi
tap_done
