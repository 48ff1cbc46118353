#!/bin/sh
# The nccl backend and `ccbench gpu` end to end against a fake CUDA driver, runtime and
# one-rank NCCL (tests/gpu/fake/fakegpu.c): device choice, buffers, every collective and
# datatype through the harness's checking, CUDA-event timing, CUDA-graph replay, --nccl-path
# in the results header, the refusals (no GPU for a rank, two ranks on one GPU), every copy
# figure, the P2P matrix, and the detection of a copy kernel that writes nothing.
# It proves the plumbing, not real GPU behaviour (see tests/gpu/run.sh for that).
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
lib=$CC_BUILDDIR/tests/gpu/fake/libfakegpu.so
[ -f "$lib" ] || skip_all "built without CUDA/NCCL headers: no fake GPU library"
command -v mpirun >/dev/null 2>&1 || skip_all "mpirun not found"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in libcuda.so.1 libcudart.so.13 libcudart.so.12 libnccl.so.2; do ln -s "$lib" "$dir/$n"; done
export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" CCBENCH_NO_PROGRESS=1
unset FAKEGPU_DEVICES FAKEGPU_NO_PEER FAKEGPU_BROKEN_KERNEL
MPI="$CC_MPIRUN -x LD_LIBRARY_PATH -x FAKEGPU_DEVICES"
FAKEGPU_DEVICES=2
export FAKEGPU_DEVICES

# run and has: tests/tap.sh

run "version loads the fake libraries" 0 "$CCBENCH" version
has "version: 2 GPUs" "here: 2 GPU\(s\)"
has "version: NCCL 2.28.9" "here: NCCL 2\.28\.9"
# a CUDA 13 runtime under a driver for CUDA 12: the next runtime is used
run "version: runtime too new for the driver, the next one used" 0 env FAKEGPU_OLD_DRIVER=1 "$CCBENCH" version
has "version: libcudart.so.12 used" "here: 2 GPU\(s\), libcudart\.so\.12"
run "backends: nccl usable with the fake libraries" 0 "$CCBENCH" backends
has "backends: nccl usable, GPUs and version named" "^nccl +built +device +usable" 
has "backends: nccl here line" "here: 2 GPU\(s\), NCCL 2\.28\.9"
FAKEGPU_DEVICES=0 run "backends: no GPU visible" 0 "$CCBENCH" backends
has "backends: nccl not usable without a GPU" "^nccl +built +device +no "
has "backends: the reason" "here: no CUDA device"

j=$dir/all.jsonl
run "nccl: every collective, both placements, checked" 0 \
    $MPI -np 1 "$CCBENCH" bench --backend nccl --coll all -b 8 -e 256K -n 3 -w 1 --json "$j"
has "header: NCCL version actually loaded" '"nccl_version": *"2\.28\.9"' "$j"
has "header: GPU of rank 0" '"name": *"Fake GPU 0"' "$j"
has "header: every rank's GPU" '"gpu_pci_bus_ids": *\[ *"0000:10:00\.0" *\]' "$j"
has "header: timed with CUDA events" '"timing_clock": *"CUDA events' "$j"
for c in allreduce allgather reducescatter broadcast reduce alltoall sendrecv; do
    has "nccl: $c measured with no wrong element" "\"collective\": *\"$c\".*\"wrong\": *0" "$j"
done
for t in int8 uint8 int32 uint64 float16 bfloat16 float64; do
    run "nccl: datatype $t" 0 $MPI -np 1 "$CCBENCH" bench --backend nccl --coll allreduce,reducescatter \
        -d "$t" -o max -e 64K -n 2 -w 1
done
run "nccl: avg" 0 $MPI -np 1 "$CCBENCH" bench --backend nccl -d float32 -o avg -e 64K -n 2 -w 1

j=$dir/graph.jsonl
run "nccl: CUDA graph of 4 launches" 0 \
    $MPI -np 1 "$CCBENCH" bench --backend nccl --coll allreduce,sendrecv -e 64K -n 3 -w 1 -G 4 --json "$j"
has "header: graph launches" '"cuda_graph_launches": *4' "$j"
# the communicator goes after its graphs (real NCCL's destroy waits for every graph using it;
# the fake exits 97 instead of hanging)
run "nccl: -G tears down graphs before the communicator" 0 \
    $MPI -np 1 "$CCBENCH" bench --backend nccl --coll alltoall -e 4K -n 2 -w 1 -G 2
# timed launches on device memory move through the buffers (nccl-tests' convention), so that
# a size that fits in the GPU's cache is not timed from it: 1K of a 1M buffer has 1024 slots,
# 1K apart, the 1M size one; a graph's launches take a slot each
rot() { # rot FILE COUNT: distinct send addresses for that count; span and spacing checked
    awk -v n="$2" '$2 == n { print $1 }' "$1" | sort -u >"$1.u"
    lo=; hi=; bad=0
    while read -r x; do
        v=$((x))
        [ -z "$lo" ] && lo=$v
        [ $(((v - lo) % 1024)) -ne 0 ] && bad=1
        hi=$v
    done <"$1.u"
    echo "$(wc -l <"$1.u") $((${hi:-0} - ${lo:-0})) $bad"
}
a=$dir/addrs
run "nccl: eager launches, 1K and 1M" 0 $MPI -x FAKEGPU_ADDRS="$a" -np 1 "$CCBENCH" bench \
    --backend nccl --coll allreduce -b 1K -e 1M -f 1024 -n 8 -w 2
set -- $(rot "$a" 256)
[ "$1" -ge 10 ] && [ "$2" -lt 1048576 ] && [ "$3" -eq 0 ]
ok $? "nccl: 1K launches at >= 10 slots of the 1M buffer, 1K apart" "slots $1, span $2, misplaced $3"
set -- $(rot "$a" 262144)
[ "$1" -eq 1 ]
ok $? "nccl: the largest size at one place" "addresses $1"
a=$dir/addrs-graph
run "nccl: graph of 4 launches, 1K and 1M" 0 $MPI -x FAKEGPU_ADDRS="$a" -np 1 "$CCBENCH" bench \
    --backend nccl --coll allreduce -b 1K -e 1M -f 1024 -n 3 -w 1 -G 4
set -- $(rot "$a" 256)
[ "$1" -ge 4 ] && [ "$3" -eq 0 ]
ok $? "nccl: a graph's 4 launches at 4 slots" "slots $1, misplaced $3"
n=$(grep -c '^capture' "$a")
[ "$n" -eq 4 ]
ok $? "nccl: one capture per size and placement (2 x 2), replayed after" "captures $n"
# a stream that never finishes (a stuck peer) gives up after --timeout, aborting the
# communicator, instead of blocking until the watchdog
run "nccl: a stuck stream ends after --timeout" 3 \
    $MPI -x FAKEGPU_HANG=1 -np 1 "$CCBENCH" bench --backend nccl -e 1K -n 2 -w 1 --timeout 1
has "nccl: says the operations are still running" "operations still running after 1 s \(--timeout\).*communicator aborted"
# a graph of 8 launches that never finishes: the wait has 8 x --timeout (8 s), and tells the
# watchdog (1.5 x 1 + 5 = 6.5 s from the last sign of life) it is alive until then, so the
# backend's own clean abort ends the run, not the watchdog
run "nccl: a stuck graph ends after its launches' --timeout" 3 \
    $MPI -x FAKEGPU_HANG_GRAPH=1 -np 1 "$CCBENCH" bench --backend nccl -e 1K -n 2 -w 1 -G 8 --timeout 1
has "nccl: the graph's deadline, not the watchdog" "operations still running after 8 s \(--timeout\).*communicator aborted"
# an error NCCL reports asynchronously (a peer gone, a network error) is named, not waited on
run "nccl: an asynchronous NCCL error ends the run" 3 \
    $MPI -x FAKEGPU_ASYNC_ERROR=1 -np 1 "$CCBENCH" bench --backend nccl -e 1K -n 2 -w 1
has "nccl: names NCCL's error" "NCCL asynchronous operation \(communicator aborted\) failed on rank 0"

j=$dir/path.jsonl
run "nccl: --nccl-path net-socket" 0 \
    $MPI -np 1 "$CCBENCH" bench --backend nccl -e 1K -n 2 --nccl-path net-socket --gpu 1 --json "$j"
has "header: path recorded" '"nccl_path": *"net-socket"' "$j"
has "header: NCCL_NET=Socket in effect" '"NCCL_NET": *"Socket"' "$j"
has "header: NCCL_IB_DISABLE=1 in effect" '"NCCL_IB_DISABLE": *"1"' "$j"
has "header: --gpu 1 used" '"device": *1' "$j"

run "nccl: --gpu beyond the GPUs refused" 2 $MPI -np 1 "$CCBENCH" bench --backend nccl --gpu 5 -e 1K
has "nccl: says which GPU" "--gpu 5 does not exist"
run "nccl: two ranks on one GPU refused" 2 $MPI -np 2 "$CCBENCH" bench --backend nccl --gpu 0 -e 1K
has "nccl: names the shared GPU" "ranks 0 and 1 share GPU 0000:10:00\.0"
# more ranks than GPUs: local rank modulo the GPUs visible, so two ranks meet on one GPU
FAKEGPU_DEVICES=1 run "nccl: more ranks than GPUs refused" 2 $MPI -np 2 "$CCBENCH" bench --backend nccl -e 1K
has "nccl: says which ranks share the GPU" "ranks 0 and 1 share GPU 0000:10:00\.0"
# each rank seeing one GPU of its own (CUDA_VISIBLE_DEVICES per rank): local rank 1 takes
# its only GPU (the fake gives both the same bus id unless told: FAKEGPU_BUS_BASE); both get
# as far as NCCL's init, which the one-rank fake refuses
run "nccl: a GPU of its own per rank, each seeing one" 3 $CC_MPIRUN -x LD_LIBRARY_PATH \
    -np 1 env FAKEGPU_DEVICES=1 "$CCBENCH" bench --backend nccl -e 1K -n 2 -w 1 : \
    -np 1 env FAKEGPU_DEVICES=1 FAKEGPU_BUS_BASE=32 "$CCBENCH" bench --backend nccl -e 1K -n 2 -w 1
printf '%s\n' "$out" | grep -q 'ncclCommInitRank on GPU 0000:10:00\.0' &&
    printf '%s\n' "$out" | grep -q 'ncclCommInitRank on GPU 0000:20:00\.0' &&
    ! printf '%s\n' "$out" | grep -q 'share GPU\|no GPU'
ok $? "nccl: rank 0 on 0000:10:00.0, rank 1 on its own 0000:20:00.0, as far as NCCL's init" "$out"
# one rank that fails alone: its reason, once, without rank 0's "another rank could not"
run "nccl: one rank without a GPU" 2 $CC_MPIRUN -x LD_LIBRARY_PATH \
    -np 1 env FAKEGPU_DEVICES=1 "$CCBENCH" bench --backend nccl -e 1K : \
    -np 1 env FAKEGPU_DEVICES=0 "$CCBENCH" bench --backend nccl -e 1K
has "nccl: the failing rank named" "on rank 1 .*no CUDA device"
n=$(printf '%s\n' "$out" | grep -c 'error:')
[ "$n" -eq 1 ]
ok $? "nccl: one error line, the failing rank's (not rank 0's 'another rank could not')" "$out"

# ---- ccbench gpu ---------------------------------------------------------------------------
leaks_checked # `ccbench gpu` never starts MPI
j=$dir/copy.jsonl
run "gpu: every copy figure on 2 GPUs" 0 "$CCBENCH" gpu -b 1M -n 2 -r 3 --json "$j" --expect-d2d 100
n=$(grep -c '"type": *"gpu_copy"' "$j")
[ "$n" -eq 26 ]
ok $? "gpu: 26 figures (4 per-GPU tests x 2 engines x 2 GPUs, 2 p2p x 2 engines x 2 pairs, bidir x 2)" "got $n"
has "gpu: header lists the GPUs" '"pci_bus_id": *"0000:11:00\.0"' "$j"
[ "$(grep -Ec '"test": *"h2d".*"host_numa": *(null|[0-9]+)' "$j")" = 4 ] && ! grep '"test": *"d2d"' "$j" | grep -q host_numa
ok $? "gpu: host copies carry host_numa (the placement itself needs a real GPU's sysfs node)"
has "gpu: p2p matrix printed" "# p2p-read sm matrix"
has "gpu: d2d shows memory traffic" "^d2d +sm +gpu1 +gpu1 .*memory traffic"
has "gpu: d2d ratio for each GPU" "# d2d ratio gpu1: .*% of 100 GB/s"
FAKEGPU_NO_PEER=1 run "gpu: without peer access" 0 "$CCBENCH" gpu -b 64K -n 1 -r 1 --tests p2p
has "gpu: kernel p2p n/a without peer access" "p2p-write +sm +gpu0 +gpu1 +n/a: no peer access"
has "gpu: copy-engine p2p marked staged" "p2p-write +ce +gpu0 +gpu1 .*staged"
# peer access one way only (too many peers, ACS on one side): both directions at once is
# half direct, and says so; by kernel it needs both ways
FAKEGPU_PEER_ONE_WAY=1 run "gpu: peer access one way" 0 "$CCBENCH" gpu -b 64K -n 1 -r 1 \
    --tests p2p-bidir --json "$dir/oneway.jsonl"
has "gpu: bidir marked one way" "p2p-bidir +ce +gpu0 +gpu1 .*peer access one way: the other staged"
has "gpu: bidir by kernel n/a" "p2p-bidir +sm +gpu0 +gpu1 +n/a: no peer access"
has "gpu: JSON says one way" '"peer_access": *false.*"peer_access_one_way": *true' "$dir/oneway.jsonl"
# a CUDA 11 runtime: cudaSetDevice does not make the device's context current, so a kernel
# launched on GPU 1 right after work on GPU 0 would be GPU 0's context's; each launch makes
# its own GPU's context current first (the fake refuses a function of another context)
FAKEGPU_LAZY_CTX=1 run "gpu: kernel copies on 2 GPUs with CUDA 11's lazy contexts" 0 \
    "$CCBENCH" gpu -b 64K -n 1 -r 1 --tests d2d,p2p,p2p-bidir --engine sm
has "gpu: p2p by kernel measured on both GPUs" "p2p-bidir +sm +gpu0 +gpu1 +[0-9]"
FAKEGPU_BROKEN_KERNEL=1 run "gpu: a kernel that copies nothing is caught" 1 \
    "$CCBENCH" gpu -b 64K -n 1 -r 1 --tests d2d --engine sm
has "gpu: says the data is wrong" "copied wrong data"
run "gpu: a kernel that copies everything 16 bytes late is caught" 1 \
    env FAKEGPU_SHIFTED_KERNEL=1 "$CCBENCH" gpu -b 64K -n 1 -r 1 --tests d2d --engine sm
has "gpu: the shifted copy named" "d2d sm copy 0->0 copied wrong data"
run "gpu: a GPU listed twice refused" 2 "$CCBENCH" gpu -D 0,0
run "gpu: a missing GPU refused" 2 "$CCBENCH" gpu -D 7
has "gpu: names the missing GPU" "GPU 7 does not exist"
# -D is checked before --json is opened (it used to truncate the file first)
printf 'earlier results\n' >"$dir/keep.jsonl"
run "gpu: a missing GPU refused with --json" 2 "$CCBENCH" gpu -D 0,7 --json "$dir/keep.jsonl"
has "gpu: names the missing GPU" "^ccbench: error: GPU 7 does not exist \(2 visible\)$"
[ "$(printf '%s\n' "$out" | grep -c 'error:')" -eq 1 ]; ok $? "gpu: the missing GPU said once" "$out"
[ "$(cat "$dir/keep.jsonl")" = "earlier results" ]; ok $? "gpu: the existing --json file is left as it was"
# a --json write that fails: one line naming the file, exit 2 (the failure was ignored, exit 0)
run "gpu: --json /dev/full" 2 "$CCBENCH" gpu -b 64K -n 1 -r 1 --tests d2d --json /dev/full
has "gpu: names the file and the reason" "cannot write '/dev/full': No space left on device"
[ "$(printf '%s\n' "$out" | grep -c 'error:')" -eq 1 ]; ok $? "gpu: --json /dev/full said once" "$out"
# peer-to-peer copies need two GPUs: alone, refused; among other tests, left out and said
run "gpu: p2p tests with one GPU selected refused" 2 "$CCBENCH" gpu -D 0 -t p2p
has "gpu: says why" "^ccbench: error: the peer-to-peer tests need two GPUs; 1 selected by --devices$"
FAKEGPU_DEVICES=1 run "gpu: every test on one GPU: p2p left out" 0 "$CCBENCH" gpu -b 64K -n 1 -r 1
has "gpu: the p2p tests named as left out" "peer-to-peer tests left out: 1 GPU visible"
has "gpu: the other tests ran" "^d2d +sm +gpu0 +gpu0 "
# a size no larger than the L2 is said to be timed partly from the cache; a larger one is not
FAKEGPU_L2=1048576 run "gpu: 64K copies with 1M of L2" 0 "$CCBENCH" gpu -b 64K -n 1 -r 1 -t d2d
has "gpu: the cache named" "warning: --size 64K is no larger than gpu0's 1M of L2: copies of the same buffers are timed partly from the cache"
FAKEGPU_L2=1048576 run "gpu: 4M copies with 1M of L2" 0 "$CCBENCH" gpu -b 4M -n 1 -r 1 -t d2d
printf '%s\n' "$out" | grep -q 'of L2'
[ $? -ne 0 ]; ok $? "gpu: no cache warning above the L2" "$out"
FAKEGPU_L2=1048576 run "gpu: host copies of 64K" 0 "$CCBENCH" gpu -b 64K -n 1 -r 1 -t h2d
printf '%s\n' "$out" | grep -q 'of L2'
[ $? -ne 0 ]; ok $? "gpu: no cache warning for host copies" "$out"
# --json naming the file stdout is redirected to: written through stdout, nothing overwritten
"$CCBENCH" gpu -b 64K -n 1 -r 1 -t h2d,d2d --json "$dir/same.txt" >"$dir/same.txt" 2>"$dir/same.err"
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '"type": *"gpu_copy"' "$dir/same.txt")" -eq 8 ] &&
    grep -q '"type": *"header"' "$dir/same.txt" && grep -Eq "^d2d +sm +gpu1 +gpu1 " "$dir/same.txt" &&
    python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]' "$dir/same.txt"
ok $? "gpu: --json to stdout's own file keeps the table and every JSON line (exit $rc)" "$(head -5 "$dir/same.txt")"
mkfifo "$dir/fifo"
run "gpu: --json to a FIFO without a reader refused at once" 2 timeout 20 "$CCBENCH" gpu -b 64K -n 1 -r 1 -t d2d --json "$dir/fifo"
has "gpu: says so" "cannot write --json file '.*fifo': a FIFO with no reader"
tap_done
