#!/bin/sh
# tests/gpu/run.sh - the GPU run, in one command, on a machine with NVIDIA GPUs:
#   build with CUDA and NCCL, run the GPU tests, probe the node (topology JSON and NCCL's
#   topology XML), run the NCCL backend over every collective
#   (one rank per GPU, at least one) and every datatype, the --nccl-path variants and CUDA
#   graphs, then the copy-bandwidth figures (`ccbench gpu`), and write everything with the
#   machine's description into one directory.
#
# usage: tests/gpu/run.sh            (from anywhere; needs mpirun, a C compiler, autotools
#                                     when building from git, the CUDA toolkit and NCCL;
#                                     with NO_BUILD=1 only mpirun and the built tree)
# environment:
#   OUT           output directory (default: results/gpu-<host>-<UTC date>/ in the tree)
#   CUDA_HOME     CUDA toolkit (default /usr/local/cuda); NCCL_HOME: NCCL if not beside CUDA,
#                 in the loader's paths or in Python's nvidia-nccl package
#   BUILD         build directory (default: build-gpu/ in the tree); NO_BUILD=1 reuses it
#   MAXBYTES      largest NCCL size (default 256M: every size is filled and checked on one
#                 CPU core); COPY_BYTES copy size (default 256M)
#   STEP_TIMEOUT  seconds any one step may take (default 240; build and tests 400)
#   D2D_REF_GBPS  device-local copy reference in GB/s of memory traffic (default 4300, what a
#                 plain device copy reaches on an H200); the run reports the ratio and, on an
#                 H200, fails below 85%
# Exit status: 0 all steps passed, 1 a step failed (see SUMMARY.txt), 2 no GPU / build failed.
set -u

src=$(cd "$(dirname "$0")/../.." && pwd)
host=$(hostname -s 2>/dev/null || hostname)
stamp=$(date -u +%Y%m%d-%H%M)
out=${OUT:-$src/results/gpu-$host-$stamp}
build=${BUILD:-$src/build-gpu}
cuda=${CUDA_HOME:-/usr/local/cuda}
maxbytes=${MAXBYTES:-256M}
step_timeout=${STEP_TIMEOUT:-240}
copybytes=${COPY_BYTES:-256M}
ref=${D2D_REF_GBPS:-4300}
jobs=$(nproc 2>/dev/null || echo 4)
failed=0

mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
summary=$out/SUMMARY.txt
: >"$summary"
say() { printf '%s\n' "$*" | tee -a "$summary"; }
step() { # step NAME LOGFILE CMD...: run (at most $limit s), log, record pass/fail
    name=$1 log=$2
    shift 2
    printf '== %s\n' "$name"
    timeout -k 10 "${limit:-$step_timeout}" "$@" >"$out/$log" 2>&1
    rc=$?
    [ "$rc" -eq 124 ] && echo "run.sh: step stopped after ${limit:-$step_timeout} s" >>"$out/$log"
    if [ "$rc" -eq 0 ]; then say "PASS  $name  ($log)"; else
        say "FAIL  $name  (exit $rc, see $log)"
        tail -5 "$out/$log" | sed 's/^/      /'
        failed=1
    fi
    return "$rc"
}

if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export CCBENCH_NO_PROGRESS=1
# ccbench opens libcudart and libnccl by name at run time: a toolkit or NCCL outside the
# loader's configured paths must be on LD_LIBRARY_PATH (passed to every rank with -x)
# NCCL_HOME unset and no libnccl where the loader looks: the NCCL of Python's nvidia-nccl
# package (PyTorch's), if there is one
if [ -z "${NCCL_HOME:-}" ] && ! { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } |
    grep -q 'libnccl\.so\.2 ' &&
    [ ! -e "$cuda/lib64/libnccl.so.2" ]; then
    d=$(python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null)
    [ -n "$d" ] && [ -e "$d/lib/libnccl.so.2" ] && NCCL_HOME=$d
fi
for d in "${NCCL_HOME:+$NCCL_HOME/lib}" "$cuda/lib64" "$cuda/lib"; do
    [ -n "$d" ] && [ -d "$d" ] && LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}

# ---- the machine -------------------------------------------------------------------------
command -v nvidia-smi >/dev/null 2>&1 || { echo "run.sh: nvidia-smi not found: not a GPU machine" >&2; exit 2; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$ngpu" -ge 1 ] || { echo "run.sh: nvidia-smi lists no GPU" >&2; exit 2; }
{
    echo "host: $host"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "kernel: $(uname -srm)"
    echo "source: $(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)"
    echo "gpus: $ngpu"
} >"$out/machine.txt"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
nvidia-smi topo -m >"$out/nvidia-smi-topo.txt" 2>&1
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks.max.memory \
    --format=csv >"$out/gpus.csv" 2>&1
nvidia-smi nvlink --status >"$out/nvlink.txt" 2>&1
gpuname=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
say "# ccbench GPU run on $host: $ngpu x $gpuname, output in $out"

# ---- build ---------------------------------------------------------------------------------
if [ "${NO_BUILD:-0}" != 1 ]; then
    nccl_opt=--with-nccl
    [ -n "${NCCL_HOME:-}" ] && nccl_opt=--with-nccl=$NCCL_HOME
    limit=400
    if [ ! -x "$src/configure" ]; then
        step "autoreconf" build.log sh -c "cd '$src' && autoreconf -fi" || exit 2
    fi
    mkdir -p "$build"
    step "configure with CUDA and NCCL" configure.log \
        sh -c "cd '$build' && '$src/configure' --with-cuda='$cuda' $nccl_opt" || exit 2
    step "build" make.log make -C "$build" -j"$jobs" || exit 2
    limit=
fi
ccbench=$build/ccbench
[ -x "$ccbench" ] || { echo "run.sh: $ccbench not built" >&2; exit 2; }
"$ccbench" version >"$out/versions.txt" 2>&1
mpirun --version 2>&1 | head -1 >>"$out/versions.txt"
cat "$out/versions.txt" | tee -a "$summary"
# a build without them would "pass" every step below by refusing the backend
grep -q '^cuda: built' "$out/versions.txt" && grep -q '^nccl: built' "$out/versions.txt" ||
    { say "FAIL  ccbench was built without CUDA or NCCL (see versions.txt)"; exit 2; }
"$ccbench" backends >"$out/backends.txt" 2>&1
grep -q '^nccl .* usable' "$out/backends.txt" ||
    { say "FAIL  the nccl backend cannot run here: $(grep -A1 '^nccl' "$out/backends.txt" | tail -1)"; exit 2; }
# the GPUs CUDA shows this process (CUDA_VISIBLE_DEVICES, a cgroup), which nvidia-smi's list
# ignores: one rank each
nvis=$("$ccbench" gpu --list 2>/dev/null | grep -c '^# gpu[0-9]')
if [ "$nvis" -ge 1 ] && [ "$nvis" -ne "$ngpu" ]; then
    say "# CUDA shows $nvis of the $ngpu GPUs nvidia-smi lists: $nvis rank(s)"
    ngpu=$nvis
fi

limit=400
if command -v make >/dev/null 2>&1 && [ -f "$build/Makefile" ]; then
    step "GPU tests (unit + end to end)" check.log \
        make -C "$build" check TESTS="tests/gpu/test_gpu_logic tests/gpu/backends.sh"
else
    # a prebuilt tree (NO_BUILD=1) on a machine without make: the two TAP programs run
    # directly, with the environment make check gives them; the step fails on either's exit
    # status or on a "not ok" line
    if [ ! -x "$build/tests/gpu/test_gpu_logic" ]; then
        say "FAIL  GPU tests: $build/tests/gpu/test_gpu_logic not built (make check, or make tests/gpu/test_gpu_logic, in the tree)"
        failed=1
    else
        step "GPU tests (unit + end to end, run directly)" check.log \
            env CCBENCH="$ccbench" CC_SRCDIR="$src" CC_BUILDDIR="$build" CC_OUT_LOG="$out/check.log" sh -c \
            '"$CC_BUILDDIR/tests/gpu/test_gpu_logic"; a=$?; sh "$CC_SRCDIR/tests/gpu/backends.sh"; b=$?
             ! grep -q "^not ok" "$CC_OUT_LOG" && [ $a -eq 0 ] && [ $b -eq 0 ]'
    fi
fi
limit=

# ---- probe: what hwloc, NVML and the CUDA runtime say of this node ---------------------------
step "probe" probe.txt mpirun --bind-to none -x LD_LIBRARY_PATH -np 1 "$ccbench" probe \
    --json "$out/topology.json" --nccl-topo "$out/nccl-topo.xml"

# ---- NCCL backend ----------------------------------------------------------------------------
mpi="mpirun --bind-to none -x LD_LIBRARY_PATH -np $ngpu"
bench() { # bench NAME ARGS...: one bench run into NAME.{txt,jsonl,csv}
    n=$1
    shift
    step "nccl $n" "nccl-$n.txt" $mpi "$ccbench" bench --backend nccl --json "$out/nccl-$n.jsonl" \
        --csv "$out/nccl-$n.csv" "$@"
}
bench all --coll all -b 8 -e "$maxbytes" -f 2
bench graph-allreduce --coll allreduce -b 8 -e 64M -f 4 -G 10
# send/recv and all-to-all build real NCCL plans even on one GPU: graphs of them, and the
# communicator's teardown after its graphs
bench graph-p2p --coll sendrecv,alltoall -b 8 -e 1M -f 8 -G 4
for t in int8 uint8 int32 uint32 int64 uint64 float16 bfloat16 float32 float64; do
    bench "dtype-$t" --coll allreduce,reducescatter,reduce -d "$t" -o max -b 1K -e 16M -f 16 -n 5
done
for o in sum prod min avg; do
    bench "op-$o" --coll allreduce -d float32 -o "$o" -b 1K -e 16M -f 16 -n 5
done
if [ "$ngpu" -gt 1 ]; then
    for p in nvlink shm net-socket; do
        bench "path-$p" --coll allreduce,allgather,alltoall --nccl-path "$p" -b 1K -e 256M -f 4
    done
    if [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
        bench "path-net-ib" --coll allreduce,allgather --nccl-path net-ib -b 1K -e 256M -f 4
    fi
fi

# ---- copy bandwidth --------------------------------------------------------------------------
# the peer-to-peer figures grow with the square of the GPUs (8 GPUs: 140 pairs per engine,
# about a second each over PCIe or staged through the host)
limit=$((step_timeout + 4 * ngpu * ngpu))
step "gpu copy bandwidth" copy.txt "$ccbench" gpu --size "$copybytes" --json "$out/copy.jsonl" \
    --expect-d2d "$ref"
limit=

# ---- summary -----------------------------------------------------------------------------------
say ""
say "# NCCL bus bandwidth at the largest size (from nccl-all.txt):"
grep -E '^# [a-z]+ .*busbw .* GB/s at' "$out/nccl-all.txt" 2>/dev/null | tee -a "$summary"
say ""
say "# device-local copy vs $ref GB/s (memory traffic, read + write):"
grep '^# d2d ratio' "$out/copy.txt" 2>/dev/null | tee -a "$summary"
case $gpuname in
*H200*)
    worst=$(grep '^# d2d ratio' "$out/copy.txt" | sed 's/.*= \([0-9.]*\)%.*/\1/' | sort -n | head -1)
    if [ -z "$worst" ]; then
        say "FAIL  H200 device copy: no d2d figure"
        failed=1
    elif awk "BEGIN { exit !($worst >= 85) }"; then
        say "PASS  H200 device copy: lowest GPU at $worst% of $ref GB/s (>= 85%)"
    else
        say "FAIL  H200 device copy: lowest GPU at $worst% of $ref GB/s (< 85%)"
        failed=1
    fi
    ;;
*) say "(not an H200: the 85% target is not checked, the ratio is for information)" ;;
esac
say ""
say "results: $out"
exit "$failed"
