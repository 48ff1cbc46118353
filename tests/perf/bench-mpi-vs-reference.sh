#!/bin/sh
# bench-mpi-vs-reference.sh - ccbench's MPI backend against a plain MPI_Allreduce loop
# (tests/perf/ref_allreduce, OSU-style fixed iterations), alternately, 8 B - 64 MiB, on 2
# and 4 local ranks. Writes results/bench-mpi-vs-reference.md.
# Two parts: (1) whole sweeps of each tool alternated REPS times (wall time, spread);
# (2) for each size >= 64 KiB, the two tools alternated SIZE_REPS times on that size alone
# (fixed iterations as the reference), so bursts of noise on this shared VM hit both alike.
#   usage: tests/perf/bench-mpi-vs-reference.sh [BUILD_DIR] (default build/default)
# Run it on an otherwise idle machine: it is a benchmark, not a test.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build/default}
reps=${REPS:-3}
size_reps=${SIZE_REPS:-5}
out=${OUT_MD:-$top/results/bench-mpi-vs-reference.md}
raw=$(mktemp -d)
[ -x "$build/ccbench" ] && [ -x "$build/tests/perf/ref_allreduce" ] || { echo "build first: $build" >&2; exit 2; }
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
launch() { # launch NP cmd...
    np=$1; shift
    if [ "$np" -le "$(nproc)" ]; then
        mpirun -np "$np" --bind-to core "$@"
    else
        OMPI_MCA_mpi_yield_when_idle=1 mpirun -np "$np" --oversubscribe --bind-to none "$@"
    fi
}
now() { date +%s.%N; }
for np in 2 4; do
    for r in $(seq 1 "$reps"); do
        t0=$(now)
        launch $np "$build/tests/perf/ref_allreduce" >"$raw/ref-$np-$r.txt"
        t1=$(now)
        launch $np "$build/ccbench" bench --backend mpi --coll allreduce -b 8 -e 64M \
            --outofplace --precision 2 --quiet --json "$raw/cc-$np-$r.jsonl" >/dev/null
        t2=$(now)
        echo "$t0 $t1 $t2" >"$raw/wall-$np-$r.txt"
        echo "np $np rep $r: reference $(awk "BEGIN{print $t1 - $t0}") s, ccbench $(awk "BEGIN{print $t2 - $t1}") s" >&2
    done
done
for np in 2 4; do
    for r in $(seq 1 "$size_reps"); do
        b=65536
        while [ $b -le 67108864 ]; do
            launch $np "$build/tests/perf/ref_allreduce" $b $b | grep -v '^#' >>"$raw/sref-$np.txt"
            launch $np "$build/ccbench" bench --backend mpi --coll allreduce -b $b -e $b --outofplace \
                -n 100 -w 10 -c 0 --quiet --json "$raw/scc.jsonl" >/dev/null
            grep '"type":"result"' "$raw/scc.jsonl" >>"$raw/scc-$np.jsonl"
            b=$((b * 2))
        done
        echo "np $np size-by-size rep $r done" >&2
    done
done
python3 - "$raw" "$reps" "$out" <<'PY'
import json, os, platform, statistics as st, subprocess, sys
raw, reps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def sh(c):
    try: return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception: return "?"
cpu = sh("lscpu | sed -n 's/^Model name: *//p'") or platform.processor()
mem = sh("free -g | awk '/Mem:/{print $2}'")
mpiv = sh("mpirun --version | head -1")
lines = ["# ccbench MPI backend vs a plain MPI_Allreduce loop", "",
         f"Machine: {cpu}, {os.cpu_count()} CPUs, {mem} GiB, kernel {platform.release()}, {mpiv}.",
         "", "Command: `tests/perf/bench-mpi-vs-reference.sh` (REPS=%d), alternating per repetition:" % reps,
         "- reference: `mpirun -np N tests/perf/ref_allreduce` (OSU-style: 1000 iterations + 200 warm-up up to 8 KiB, 100 + 10 above; barrier after each iteration; average over ranks)",
         "- ccbench: `mpirun -np N ccbench bench --backend mpi --coll allreduce -b 8 -e 64M --outofplace --precision 2 --quiet --json F`",
         "- np 2: `--bind-to core`; np 4 (oversubscribed on 2 cores): `--oversubscribe --bind-to none`, `mpi_yield_when_idle=1`.",
         "- size by size (sizes >= 64 KiB, SIZE_REPS alternations): `ref_allreduce B B` against `ccbench bench -b B -e B --outofplace -n 100 -w 10 -c 0` (the reference's iteration counts).",
         "", "Times are medians over the repetitions of each tool's mean iteration time (µs). "
         "Spread = (max − min) / median over repetitions, per size.", ""]
summary = []
for np in (2, 4):
    ref, cc, wr, wc = {}, {}, [], []
    for r in range(1, reps + 1):
        for l in open(f"{raw}/ref-{np}-{r}.txt"):
            if l.startswith("#"): continue
            b, t = l.split(); ref.setdefault(int(b), []).append(float(t))
        for l in open(f"{raw}/cc-{np}-{r}.jsonl"):
            o = json.loads(l)
            if o.get("type") == "result" and not o.get("na"):
                cc.setdefault(o["bytes"], []).append(o["time_us"])
        t0, t1, t2 = map(float, open(f"{raw}/wall-{np}-{r}.txt").read().split())
        wr.append(t1 - t0); wc.append(t2 - t1)
    lines += [f"## {np} ranks", "", "| size (B) | reference (µs) | ccbench (µs) | ccbench / reference | spread ref | spread ccbench |",
              "|---:|---:|---:|---:|---:|---:|"]
    worst, sr, sc = 0.0, [], []
    for b in sorted(ref):
        if b not in cc: continue
        mr, mc = st.median(ref[b]), st.median(cc[b])
        spr = (max(ref[b]) - min(ref[b])) / mr if mr else 0
        spc = (max(cc[b]) - min(cc[b])) / mc if mc else 0
        sr.append(spr); sc.append(spc)
        ratio = mc / mr
        if b >= 65536: worst = max(worst, abs(ratio - 1))
        lines.append(f"| {b} | {mr:.2f} | {mc:.2f} | {ratio:.3f} | {spr*100:.1f}% | {spc*100:.1f}% |")
    lines += ["", f"Wall time of the whole sweep (median of {reps}): reference {st.median(wr):.1f} s, "
              f"ccbench {st.median(wc):.1f} s (ratio {st.median(wc)/st.median(wr):.2f}).",
              f"Largest |ccbench/reference − 1| at sizes ≥ 64 KiB: {worst*100:.1f}%.",
              f"Median spread over sizes: reference {st.median(sr)*100:.1f}%, ccbench {st.median(sc)*100:.1f}%.", ""]
    summary.append((np, worst, st.median(wc) / st.median(wr), st.median(sr), st.median(sc)))
size_worst = {}
for np in (2, 4):
    ref, cc = {}, {}
    for l in open(f"{raw}/sref-{np}.txt"):
        b, t = l.split(); ref.setdefault(int(b), []).append(float(t))
    for l in open(f"{raw}/scc-{np}.jsonl"):
        o = json.loads(l); cc.setdefault(o["bytes"], []).append(o["time_us"])
    lines += [f"## {np} ranks, size by size (sizes >= 64 KiB)", "",
              "| size (B) | reference (µs) | ccbench (µs) | ccbench / reference | runs |", "|---:|---:|---:|---:|---:|"]
    worst = 0.0
    for b in sorted(ref):
        mr, mc = st.median(ref[b]), st.median(cc.get(b, [float("nan")]))
        worst = max(worst, abs(mc / mr - 1))
        lines.append(f"| {b} | {mr:.2f} | {mc:.2f} | {mc/mr:.3f} | {len(ref[b])} + {len(cc.get(b, []))} |")
    lines += ["", f"Largest |ccbench/reference − 1|: {worst*100:.1f}% (medians of the alternated runs).", ""]
    size_worst[np] = worst
lines += ["## Against the goals", ""]
for np, worst, wall, sr, sc in summary:
    worst = size_worst[np]
    lines.append(f"- {np} ranks: time within ±5% of the reference at every size ≥ 64 KiB: "
                 f"{'yes' if worst <= 0.05 else 'NO'} (worst {worst*100:.1f}%); sweep wall time ≤ half: "
                 f"{'yes' if wall <= 0.5 else 'NO'} ({wall:.2f}); spread no wider: {'yes' if sc <= sr else 'NO'} "
                 f"({sc*100:.1f}% vs {sr*100:.1f}%).")
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
rm -rf "$raw"
