#!/bin/sh
# ccbench layout from the command line: runs without mpirun, same answer twice, JSON, the
# topology and results inputs, --explain, and clear one-line errors with exit 2.
. "$CC_SRCDIR/tests/tap.sh"
T="$CC_SRCDIR/tests/layout"
out=$(mktemp -d) || exit 1
# refuse WHAT PATTERN ARGS...: `ccbench layout ARGS` exits 2 with one stderr line matching
refuse() {
    what=$1 pat=$2
    shift 2
    timeout 20 "$CCBENCH" layout "$@" >"$out/rf" 2>"$out/rfe"
    rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$out/rfe")" -eq 1 ] && grep -q -- "$pat" "$out/rfe"
    ok $? "$what: exit 2, one line (got $rc)" "$(cat "$out/rfe")"
}
trap 'rm -rf "$out"' EXIT
# json_edit IN OUT 'PYTHON': OUT is the JSON of IN after the Python statements run on it as c
json_edit() {
    python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); exec(sys.argv[3]); json.dump(c, open(sys.argv[2], "w"))' "$1" "$2" "$3"
}

"$CCBENCH" layout --help >"$out/help" 2>&1
ok $? "layout --help"
grep -q -- "--explain" "$out/help"; ok $? "help lists --explain"

"$CCBENCH" layout -m llama3-70b --gpus 512 --gpu-model h100-sxm --cp-max 4 >"$out/a" 2>"$out/aerr"
ok $? "llama3-70b on 512 H100 (no mpirun)" "$(cat "$out/aerr")"
"$CCBENCH" layout -m llama3-70b --gpus 512 --gpu-model h100-sxm --cp-max 4 >"$out/b" 2>&1
cmp -s "$out/a" "$out/b"; ok $? "same answer twice"
grep -q "^  1  tp=" "$out/a"; ok $? "ranked table printed"
grep -q -- "--tensor-model-parallel-size" "$out/a"; ok $? "Megatron-LM arguments printed"
grep -q "torchrun --nnodes 64 --nproc-per-node 8" "$out/a"; ok $? "torchrun line for 64 nodes"
grep -q '"zero_optimization"' "$out/a"; ok $? "DeepSpeed fragment printed"
grep -q "^  beats " "$out/a"; ok $? "reasons the best wins"
# the layouts within 5% of the best are named as such, with how far behind each is (counted
# over the whole ranking, not only the rows shown)
"$CCBENCH" layout -m llama3-70b --gpus 512 --gpu-model h100-sxm --cp-max 4 -k 10000 >"$out/all" 2>&1
awk '$1 ~ /^[0-9]+$/ && $5 ~ /^[0-9.]+$/ { if (!b) b = $5; else if ($5 <= b * 1.05) n++ }
     END { print n + 0 }' "$out/all" >"$out/near"
n=$(cat "$out/near")
if [ "$n" -gt 0 ]; then
    grep -q "^  $n more within 5% of it (" "$out/a"
else
    ! grep -q "more within 5% of it" "$out/a"
fi
ok $? "layouts within 5% of the best named ($n in the whole ranking)"

"$CCBENCH" layout -m llama3-70b --gpus 512 --gpu-model h100-sxm --json -k 3 >"$out/j" 2>&1
ok $? "--json"
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["top"])==3; assert d["top"][0]["time_s"]["step"]>0; assert d["cluster"]["gpus"]==512; t=d["top"]; assert t[0]["behind_best_pct"]==0 and t[0]["near_best"] is True; assert all(abs(x["behind_best_pct"]-(x["time_s"]["step"]/t[0]["time_s"]["step"]-1)*100)<1e-3 and x["near_best"]==(x["behind_best_pct"]<=5) for x in t)' "$out/j"
    ok $? "JSON parses: 3 layouts, step time, cluster, how far behind the best"
    "$CCBENCH" layout -m llama3-405b --gpus 16384 --gpu-model h100-sxm --json -k 1 >"$out/j405" 2>&1
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t=d["top"][0]["layout"]; assert t["uneven_split"] is True, t; f,mid,l=t["layers_per_stage"]; assert f==l==mid-1 and f+l+mid*(t["pp"]-2)==126, t; assert d["cluster"]["sms"]==132; assert d["habits"]["gemm_waves"] is True and d["habits"]["uneven_pp"] is True; h=d["habits"]; assert h["pp_overlap"] is True and h["tp_overlap"] is False and h["efficiency"]==0.71 and h["efficiency_fp8"]==0.48, h' "$out/j405"
    ok $? "JSON: uneven split, layers per stage one fewer on the first and last, SMs, habits"
    # Megatron-LM's logged throughput: its FLOP count (causal attention, padded vocabulary)
    # over the GPUs and the step; below the MFU numerator's, which counts attention whole
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d["cluster"]
for x in d["top"]:
    mt=x["megatron_log_tflops_per_gpu"]*1e12*c["gpus"]*x["time_s"]["step"]; mfu=x["mfu"]*c["peak_flops"]*c["gpus"]*x["time_s"]["step"]
    assert 0.85*mfu < mt < mfu, (mt, mfu)' "$out/j"
    ok $? "JSON: Megatron-LM's logged TFLOP/s per GPU, below the MFU count"
    # the architecture as costed: a preset (Llama 3) and a spec file (gelu, tied, no flash)
    "$CCBENCH" layout -m "$CC_SRCDIR/tests/layout/model-small.json" --gpus 8 --json -k 1 >"$out/jsmall" 2>&1
    python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["model"]; b=json.load(open(sys.argv[2]))["model"]
assert (a["mlp"], a["flash_attention"], a["tied_embeddings"], a["dropout"], a["rope_theta"], a["qkv_bias"]) == ("swiglu", True, False, False, 500000, False), a
assert (b["mlp"], b["flash_attention"], b["tied_embeddings"], b["dropout"], b["rope_theta"], b["qkv_bias"]) == ("gelu", False, True, True, None, False), b' "$out/j" "$out/jsmall"
    ok $? "JSON: the model's MLP, flash attention, tied embeddings, dropout, rotary base and QKV bias"
else
    skip "JSON parses" "python3 not installed"
    skip "JSON: uneven split" "python3 not installed"
    skip "JSON: Megatron-LM's logged TFLOP/s" "python3 not installed"
    skip "JSON: the model's architecture" "python3 not installed"
fi
"$CCBENCH" layout -m llama3-8b -g 64 -x tp=1,pp=1,mb=1,zero=3 >"$out/mlog" 2>&1 &&
    grep -q "^Megatron-LM's log would show [0-9.]* TFLOP/s/GPU (its count since March 2025: the attention products halved" "$out/mlog"
ok $? "--explain names the throughput Megatron-LM's log would show"

"$CCBENCH" layout -m megatron-1.7b --topology "$T/dgx-a100x4.json" >"$out/t" 2>&1
ok $? "--topology fixture"
grep -q "32 x a100-80g (4 nodes of 8)" "$out/t"; ok $? "topology read: 32 A100 in 4 nodes"
"$CCBENCH" layout -m megatron-1.7b --topology "$T/dgx-a100x4.json" --results "$T/bench-intra.jsonl" >"$out/r" 2>&1
ok $? "--results fixture"
grep -q "fitted from" "$out/r"; ok $? "rates say they are fitted"

"$CCBENCH" layout -m "$T/model-small.json" --gpus 8 --gpu-model a100-80g >"$out/s" 2>&1
ok $? "model spec file" "$(head -3 "$out/s")"

"$CCBENCH" layout -m megatron-1t --gpus 3072 --gpu-model a100-80g -x tp=8,pp=64,dp=6,mb=1,v=2,rc=full >"$out/x" 2>&1
ok $? "--explain a feasible layout"
grep -q "pipeline bubble" "$out/x" && grep -q "feasible yes" "$out/x"; ok $? "breakdown shown"

# --explain says where the layout stands in the search with the same options: its rank is
# its line in the ranked table, its setting's lag behind the first follows from the step times
H18="-m megatron-18.4b -g 256 --gpu-model a100-80g --precision fp16 --grad-reduce fp16 -z 0 --sp off"
"$CCBENCH" layout $H18 --top 10000 >"$out/t18" 2>&1
want=$(awk '$2 ~ /^tp=8,pp=1,dp=32,/ {print $1}' "$out/t18")
best=$(awk '$1 == "1" {print $2, $5}' "$out/t18")
"$CCBENCH" layout $H18 -x tp=8,pp=1,mb=8 >"$out/xv" 2>&1
n=$(awk '$2 ~ /^tp=/ && $1 ~ /^[0-9]+$/' "$out/t18" | wc -l)
grep -q "^         tp=8,pp=1,dp=32 ranks ${want}[a-z]* of $n at its best setting" "$out/xv"
ok $? "--explain: tp=8,pp=1,dp=32 ranks as in the table (${want:-?} of $n)" "$(grep -A3 '^search' "$out/xv")"
grep "^search .* the first: ${best% *}, " "$out/xv" | awk -v f="${best#* }" '{
        v = $NF == "s" ? $(NF - 1) : $NF; exit !(v - f < 0.0006 && f - v < 0.0006) }'
ok $? "--explain: names the search's first, as the table does ($best)" "$(grep '^search' "$out/xv")"
awk -v f="${best#* }" '/^time per step/ {t = $4} /this setting is .* slower than the first/ {
        sub(/%/, "", $4); got = $4 } END { exit !(t > 0 && got != "" && (t / f - 1) * 100 - got < 0.06 && got - (t / f - 1) * 100 < 0.06) }' "$out/xv"
ok $? "--explain: this setting's lag behind the first matches the step times"
first=$(awk '$1 == "1" {print $2}' "$out/t18")
"$CCBENCH" layout $H18 -x "$first" >"$out/xf" 2>&1
grep -q "^         this setting is the first$" "$out/xf" && grep -q " ranks 1st of $n " "$out/xf"
ok $? "--explain of the first layout says so" "$(grep -A3 '^search' "$out/xf")"
"$CCBENCH" layout $H18 -x tp=8,pp=1,mb=8 --json >"$out/xj" 2>&1
sed -n '/^  "search": {/,$p' "$out/xj" >"$out/xjs"
grep -q "^    \"rank\": ${want:-x},$" "$out/xjs" && grep -q "^    \"layouts\": $n,$" "$out/xjs" &&
    grep -q '^    "behind_best_pct": [0-9.]*[1-9][0-9.e+-]*,$' "$out/xjs" &&
    grep -q '^    "is_best": false,$' "$out/xjs"
ok $? "--explain --json: the same rank, layouts and a lag under \"search\"" "$(head -12 "$out/xjs")"
"$CCBENCH" layout $H18 -x tp=8,pp=1,dp=8,cp=2 >"$out/xu" 2>&1
grep -q "^         tp=8,pp=1,dp=8,cp=2 is not ranked: it does not use the cluster's GPUs$" "$out/xu"
ok $? "--explain of a layout smaller than the cluster: not ranked, and why" "$(grep -A2 '^search' "$out/xu")"
"$CCBENCH" layout $H18 -x tp=1,pp=1 >"$out/xu1" 2>&1
"$CCBENCH" layout $H18 -x tp=1,pp=1 --json 2>/dev/null | sed -n '/^  "search": {/,$p' >"$out/xu1j"
grep -q "^         tp=1,pp=1,dp=256 is not ranked: none of its settings fits within the search's limits$" "$out/xu1" &&
    grep -q '^    "rank": null,$' "$out/xu1j" && grep -q '^    "best_setting": null,$' "$out/xu1j"
ok $? "--explain of a layout none of whose settings fits: not ranked, rank null in JSON" "$(grep -A2 '^search' "$out/xu1")"
# a micro-batch beyond --mb-max: outside the search, it may beat the search's first
"$CCBENCH" layout $H18 --mb-max 1 --top 1 >"$out/xm1" 2>&1
f1=$(awk '$1 == "1" {print $5}' "$out/xm1")
"$CCBENCH" layout $H18 --mb-max 1 -x tp=2,pp=4,mb=1,v=10,rc=selective >"$out/xm" 2>&1
awk -v f="$f1" '/^time per step/ {t = $4} /this setting is .* faster than the first: the search.s limits/ {
        sub(/%/, "", $4); got = $4 } END { exit !(t > 0 && t < f && got != "" &&
        (1 - t / f) * 100 - got < 0.06 && got - (1 - t / f) * 100 < 0.06) }' "$out/xm"
ok $? "--explain of a setting outside the search's limits that beats its first says so" \
    "$(grep -A2 '^search' "$out/xm"; grep '^time per step' "$out/xm")"
"$CCBENCH" layout -m llama3-405b --gpus 8 --gpu-model a100-40g -x tp=8 >"$out/xn" 2>&1
grep -q "^search   [0-9]* settings, none to compare with: no layout fits in memory" "$out/xn"
ok $? "--explain when nothing fits: the search says why" "$(grep '^search' "$out/xn")"
"$CCBENCH" layout -m llama3-405b --gpus 8 --gpu-model a100-40g -x tp=8 --json 2>/dev/null |
    sed -n '/^  "search": {/,$p' >"$out/xnj"
grep -q '^    "layouts": 0,$' "$out/xnj" && grep -q '^    "error": "no layout fits in memory' "$out/xnj"
ok $? "--explain --json when nothing fits: layouts 0 and the error" "$(cat "$out/xnj")"

"$CCBENCH" layout -m llama2-7b --gpus 24 --gpu-model a100-80g -x tp=3,pp=1 >"$out/x3" 2>"$out/x3e"
rc=$?; [ $rc -eq 2 ]; ok $? "--explain of an infeasible layout exits 2 (got $rc)"
grep -q "feasible no: tp 3 does not divide the 32 attention heads" "$out/x3"; ok $? "and says why"
grep -q "time per step" "$out/x3"; ok $? "with the full breakdown anyway"

"$CCBENCH" layout -m llama3-405b --gpus 8 --gpu-model a100-40g >"$out/n" 2>"$out/nerr"
rc=$?; [ $rc -eq 2 ]; ok $? "405B on 8 x A100 40GB: exit 2 (got $rc)"
grep -q "no layout fits in memory" "$out/nerr"; ok $? "clear message" "$(cat "$out/nerr")"
grep -q "limit [0-9.]* GB; with [0-9]* such GPUs it fits (first: tp=[0-9]*,pp=[0-9]*,dp=[0-9]*" "$out/nerr"
ok $? "... and the fewest GPUs (doubling) on which it fits" "$(cat "$out/nerr")"
# the table's less obvious keys explained once below it, only those its rows use
"$CCBENCH" layout -m deepseek-v3 -g 256 --gpu-model b200 -k 8 >"$out/key" 2>&1 &&
    grep -q "^  (first/last: the first and last stage's layers; rcl: layers of each model chunk recomputed (rc=block))$" "$out/key" &&
    ! "$CCBENCH" layout -m llama3-8b -g 8 -k 3 2>&1 | grep -q "^  (.*: "
ok $? "a key line for first/last and rcl; none when the rows use neither" "$(grep '^  (' "$out/key")"
# the header's rate across nodes per GPU where there are nodes to cross; the Megatron-FSDP
# note on CUDA_DEVICE_MAX_CONNECTIONS whole, and only before Blackwell
"$CCBENCH" layout -m llama3-70b -g 144 --gpu-model gb200 --gpus-per-node 72 --gpus-per-host 4 -k 1 2>&1 |
    grep -q "across nodes 3330 GB/s per node (46.2 per GPU)$" &&
    "$CCBENCH" layout -m llama3-8b -g 8 -k 1 2>&1 | grep -q "across nodes 370 GB/s per node$" &&
    "$CCBENCH" layout -m llama3-70b -g 64 -x tp=4,pp=1,dp=16,mb=1,sp=1,zero=3,rc=none 2>&1 |
    grep -q "which can slow tensor and context parallelism before Blackwell (Megatron-LM warns of the combination; not costed here)$" &&
    ! "$CCBENCH" layout -m llama3-70b -g 64 --gpu-model b200 -x tp=4,pp=1,dp=16,mb=1,sp=1,zero=3,rc=none 2>&1 |
    grep -q "CUDA_DEVICE_MAX_CONNECTIONS=1 (cleared"
ok $? "rate per GPU across nodes (none on one node); the FSDP note whole on H100, absent on B200"
# with context parallelism the DeepSpeed note on tensor parallelism gives way to the one on cp
! "$CCBENCH" layout -m llama3-8b -g 64 --cp-max 2 -x tp=4,pp=1,dp=8,cp=2,mb=1,sp=1,zero=1,rc=none 2>&1 | grep -q "its mpu"
ok $? "DeepSpeed: no mpu note with cp > 1 (the cp note says what it counts)"
# a batch that leaves most tp x pp x cp out: said, with a batch that keeps them
"$CCBENCH" layout -m llama3-70b -g 144 --gpu-model gb200 --gpus-per-node 72 --gpus-per-host 4 -k 1 >"$out/bn" 2>&1 &&
    grep -q "^# note    dp = GPUs/(tp\*pp\*cp) must divide the global batch 512: 25 of 29 tp x pp x cp left out; --global-batch 576 keeps them all$" "$out/bn" &&
    "$CCBENCH" layout -m llama3-70b -g 144 --gpu-model gb200 --gpus-per-node 72 --gpus-per-host 4 -k 1 --global-batch 576 >"$out/bn2" 2>&1 &&
    ! grep -q "^# note" "$out/bn2" && grep -q "^# searched .* 28 layouts" "$out/bn2" &&
    ! "$CCBENCH" layout -m llama3-70b -g 64 -k 1 2>&1 | grep -q "^# note" &&
    "$CCBENCH" layout -m llama3-70b -g 144 --gpu-model gb200 --gpus-per-node 72 --gpus-per-host 4 -k 1 -j 2>/dev/null |
    python3 -c 'import json, sys; b = json.load(sys.stdin)["batch_note"]; assert b == {"left_out": 25, "of": 29, "keeps_all": 576}, b' &&
    "$CCBENCH" layout -m llama3-70b -g 64 -k 1 -j 2>/dev/null | python3 -c 'import json, sys; assert json.load(sys.stdin)["batch_note"] is None' &&
    "$CCBENCH" layout -m llama3-405b -g 64 -j 2>/dev/null |
    python3 -c 'import json, sys; e = json.load(sys.stdin)["error"]; assert e.startswith("no layout fits in memory") and "; with 128 such GPUs it fits (first: tp=4,pp=1,dp=32," in e, e'
ok $? "batch 512 on 144 GPUs: 25 of 29 left out, said; --global-batch 576 keeps them; JSON batch_note and error" "$(grep -E '^# (note|searched)' "$out/bn" "$out/bn2")"
refuse "405B on 64 H100: fits on 128" "^ccbench: error: model 'llama3-405b' on 64 GPUs: no layout fits in memory: .*; with 128 such GPUs it fits (first: tp=4,pp=1,dp=32," -m llama3-405b -g 64
refuse "one GPU said as one" "^ccbench: error: model 'llama3-70b' on 1 GPU: no layout fits in memory: .*; with 32 such GPUs it fits" -m llama3-70b -g 1
[ "$(wc -l <"$out/nerr")" -eq 1 ]; ok $? "one line"

refuse "a batch of 1e12 sequences" "no valid layout: a step would last over 30 years: 6.74e+09 parameters trained on a batch of 1000000000000 sequences x 4096 tokens is too much" \
    -m llama2-7b --gpus 8 --global-batch 1000000000000
"$CCBENCH" layout -m "$T/model-badheads.json" --gpus 8 >"$out/h" 2>"$out/herr"
rc=$?; [ $rc -eq 2 ] && grep -q "do not divide hidden size" "$out/herr"; ok $? "heads not dividing hidden: exit 2 ($rc)"
"$CCBENCH" layout -m nosuchmodel --gpus 8 >/dev/null 2>"$out/e1"; rc=$?
[ $rc -eq 2 ] && grep -q "unknown model 'nosuchmodel'" "$out/e1"; ok $? "unknown model: exit 2"
"$CCBENCH" layout -m llama2-7b --topology /nonexistent.json >/dev/null 2>"$out/e2"; rc=$?
[ $rc -eq 2 ] && grep -q "cannot read topology '/nonexistent.json'" "$out/e2"; ok $? "missing topology: exit 2"
"$CCBENCH" layout -m llama2-7b --topology "$T/bad-nogpu.json" >/dev/null 2>"$out/e3"; rc=$?
[ $rc -eq 2 ] && grep -q "no GPUs described" "$out/e3"; ok $? "topology without GPUs: exit 2"
"$CCBENCH" layout -m llama2-7b --gpus 8 --gpu-model voodoo >/dev/null 2>"$out/e4"; rc=$?
[ $rc -eq 2 ] && grep -q "unknown --gpu-model 'voodoo'" "$out/e4"; ok $? "unknown GPU: exit 2"
"$CCBENCH" layout -m llama2-7b --gpus 8 --gpu-model a100-80g --precision fp8 >/dev/null 2>"$out/e5"; rc=$?
[ $rc -eq 2 ] && grep -q "has no fp8 peak" "$out/e5"; ok $? "fp8 on A100: exit 2" "$(cat "$out/e5")"
"$CCBENCH" layout -m llama2-7b --gpus 8 --results /nonexistent.jsonl >/dev/null 2>"$out/e6"; rc=$?
[ $rc -eq 2 ] && grep -q "cannot read results" "$out/e6"; ok $? "missing results: exit 2"

# nccl-tests logs as --results: the test's name from the log or the file name
"$CCBENCH" layout -m megatron-1.7b --gpus 16 --gpu-model a100-80g \
    --results "$T/nccl-tests-inter.txt,$T/all_gather_perf-8gpu.txt" >"$out/nt" 2>"$out/nterr"
ok $? "--results with two nccl-tests logs" "$(cat "$out/nterr")"
grep -q "fitted from '.*nccl-tests-inter.txt' (nccl-tests); fitted from '.*all_gather_perf-8gpu.txt' (nccl-tests)" "$out/nt"
ok $? "rates say they come from the nccl-tests logs"
grep -q "not used: 1 nccl-tests run(s) reporting wrong elements" "$out/nterr"
ok $? "a row with wrong elements is named and left out"
# a topology of 2 nodes of 4 A100 with an InfiniBand fabric of unknown rate: the table's rate
# across nodes (185 GB/s for nodes of 8, a NIC per GPU) for nodes of 4 is half
g='{"index": 0, "model": "NVIDIA A100-SXM4-80GB", "memory_bytes": 85899345920}'
printf '{"schema": "ccbench.topology.v1", "name": "t4", "nodes": [{"hostname": "n", "count": 2, "gpus": [%s, %s, %s, %s]}], "fabric": {"kind": "infiniband"}}\n' \
    "$g" "$g" "$g" "$g" >"$out/t4.json"
"$CCBENCH" layout -m llama2-7b --topology "$out/t4.json" >"$out/t4" 2>&1
grep -q "across nodes 92 GB/s per node" "$out/t4"
ok $? "topology of 4-GPU nodes: the table's rate across nodes scaled to 4 NICs" "$(grep rates "$out/t4")"
# a node that is an NVLink domain over several hosts (--gpus-per-host): the log's 2 hosts of
# 8 fit in one 72-GPU domain, so its fit is within a node, not across nodes
"$CCBENCH" layout -m llama3-70b --gpus 144 --gpus-per-node 72 --gpus-per-host 8 --gpu-model b200 \
    --global-batch 576 --results "$T/nccl-tests-inter.txt" >"$out/nvl" 2>&1
grep -q "fit allreduce, 16 ranks within a node:" "$out/nvl" && ! grep -q "fit allreduce, 16 ranks across" "$out/nvl"
ok $? "--gpus-per-host: 2 hosts of one NVLink domain are within a node" "$(grep fit "$out/nvl")"
# ... but hosts of 8 ranks are not this cluster's 4-GPU hosts: the log ran across nodes
"$CCBENCH" layout -m llama3-70b --gpus 144 --gpus-per-node 72 --gpus-per-host 4 --gpu-model b200 \
    --global-batch 576 --results "$T/nccl-tests-inter.txt" >"$out/nvl4" 2>&1
grep -q "fit allreduce, 16 ranks across nodes, 8 per node:" "$out/nvl4" && ! grep -q "fit allreduce, 16 ranks within" "$out/nvl4"
ok $? "--gpus-per-host 4: a log of 2 hosts of 8 stays across nodes" "$(grep fit "$out/nvl4")"
# a log from larger nodes than the cluster's is named
"$CCBENCH" layout -m llama3-8b --gpus 16 --gpus-per-node 4 --gpu-model a100-80g \
    --results "$T/all_gather_perf-8gpu.txt" >/dev/null 2>"$out/big"
grep -q "allgather of 8 ranks within a node ran with 8 ranks in a node, more than the 4 GPUs of this cluster's nodes" "$out/big"
ok $? "a log of 8 ranks in a node on a cluster of 4-GPU nodes: warned" "$(cat "$out/big")"
grep -v "^#  Rank" "$T/all_gather_perf-8gpu.txt" >"$out/nameless.txt"
sed -n '/^# nThread/,$p' "$T/all_gather_perf-8gpu.txt" >"$out/run7.txt"
refuse "nccl-tests log that names no test" "run7.txt': line 16: cannot tell which collective this nccl-tests log measured" -m llama2-7b --gpus 8 --results "$out/run7.txt"
cp "$out/nameless.txt" "$out/all_reduce_perf.txt"
refuse "nccl-tests rows without the Rank lines" "result row before the '#  Rank' lines" -m llama2-7b --gpus 8 --results "$out/all_reduce_perf.txt"
{ cat "$T/all_gather_perf-8gpu.txt"; echo "     1048576        262144     float"; } >"$out/all_gather_cut.txt"
"$CCBENCH" layout -m llama2-7b --gpus 8 --results "$out/all_gather_cut.txt" >/dev/null 2>"$out/e11"; rc=$?
[ $rc -eq 0 ] && grep -q "all_gather_cut.txt': passed over 1 line(s) that start like a result row but do not read as one (the first: line 30" "$out/e11"
ok $? "a cut-off nccl-tests row: passed over, named in a warning" "$(cat "$out/e11")"
sed -e 's/^#  Rank  [1-7] .*//' "$T/all_gather_perf-8gpu.txt" >"$out/all_gather_1gpu.txt"
refuse "a one-GPU nccl-tests log" "nothing to fit (of 11 rows: 11 of one-GPU tests, 0 timed" -m llama2-7b --gpus 8 --results "$out/all_gather_1gpu.txt"
sed -e '/^# *size/s/ time / cputime /g' "$T/all_gather_perf-8gpu.txt" >"$out/all_gather_cpu.txt"
refuse "host CPU times (-C) are not fitted" "11 timed on the host (-C)" -m llama2-7b --gpus 8 --results "$out/all_gather_cpu.txt"
# Open MPI 5 --tag-output ("[1,0]<stdout>: " with a space) and two different unnamed tests
sed -e 's/^/[1,0]<stdout>: /' "$T/all_gather_perf-8gpu.txt" >"$out/all_gather_ompi5.txt"
"$CCBENCH" layout -m llama2-7b --gpus 8 --results "$out/all_gather_ompi5.txt" >"$out/t5" 2>&1
ok $? "mpirun --tag-output lines (Open MPI 5)" "$(tail -2 "$out/t5")"
# every process its own one-GPU test (nccl-tests without MPI=1 under mpirun): refused
sed -e 's/^#  Rank  [0-7] /#  Rank  0 /' "$T/all_gather_perf-8gpu.txt" >"$out/all_gather_solo.txt"
refuse "separate one-GPU runs in one log" "rank 0 listed twice in one test: separate one-GPU runs" -m llama2-7b --gpus 8 --results "$out/all_gather_solo.txt"
# the same test at 8 and then 16 GPUs in a file named after it: both read
awk '/^#  Rank/ { print; r = $0; sub(/Rank  /, "Rank  1", r); sub(/dgx1/, "dgx2", r); more = more r "\n"; next }
     /^#$/ && more != "" { printf "%s", more; more = "" }
     /^ +[0-9]/ { $8 = sprintf("%.2f", $7 * 15 / 16); $12 = sprintf("%.2f", $11 * 15 / 16) }
     { print }' "$T/all_gather_perf-8gpu.txt" >"$out/ag16.txt"
{ cat "$T/all_gather_perf-8gpu.txt"; cat "$out/ag16.txt"; } >"$out/all_gather_8and16.txt"
"$CCBENCH" layout -m llama2-7b --gpus 16 --results "$out/all_gather_8and16.txt" >/dev/null 2>"$out/e31"; rc=$?
[ $rc -eq 0 ] && [ "$(grep -c "Rank  1[0-5] " "$out/all_gather_8and16.txt")" = 6 ] && ! grep -q error "$out/e31"
ok $? "one test at 8 and at 16 GPUs under its file name: read (exit $rc)" "$(cat "$out/e31")"
# nccl-tests 2.13.0-2.13.3: no redop printed for all_gather though the header names it
sed -e '/^ *[0-9]/s/ none / /' "$T/all_gather_perf-8gpu.txt" >"$out/all_gather_2130.txt"
"$CCBENCH" layout -m llama2-7b --gpus 8 --results "$out/all_gather_2130.txt" -j >"$out/o32" 2>"$out/e32"; rc=$?
"$CCBENCH" layout -m llama2-7b --gpus 8 --results "$T/all_gather_perf-8gpu.txt" -j >"$out/o32b" 2>/dev/null
same_fit() { grep -Ev "rates_from|\"from\"" "$1" >"$1.f"; grep -Ev "rates_from|\"from\"" "$2" >"$2.f"; cmp -s "$1.f" "$2.f"; }
[ $rc -eq 0 ] && [ ! -s "$out/e32" ] && same_fit "$out/o32" "$out/o32b"
ok $? "rows without the redop token (nccl-tests 2.13.0): read as with it (exit $rc)" "$(cat "$out/e32")"
# a script's message before the table, and the launchers' other line tags
{ echo "16 GPUs on 2 nodes, NCCL 2.21.5"; sed -e 's/^/[3] /' "$T/all_gather_perf-8gpu.txt"; } >"$out/all_gather_mpich.txt"
"$CCBENCH" layout -m llama2-7b --gpus 8 --results "$out/all_gather_mpich.txt" -j >"$out/o33" 2>"$out/e33"; rc=$?
[ $rc -eq 0 ] && [ ! -s "$out/e33" ] && same_fit "$out/o33" "$out/o32b"
ok $? "MPICH's '[3] ' tags and a script's line before the log: read alike (exit $rc)" "$(cat "$out/e33")"
sed -e 's/^/node-a: /' "$T/all_gather_perf-8gpu.txt" >"$out/all_gather_pdsh.txt"
"$CCBENCH" layout -m llama2-7b --gpus 8 --results "$out/all_gather_pdsh.txt" -j >"$out/o34" 2>"$out/e34"; rc=$?
[ $rc -eq 0 ] && same_fit "$out/o34" "$out/o32b"
ok $? "pdsh's 'host: ' tags: read alike (exit $rc)" "$(cat "$out/e34")"
# reduce rows (an operator and a root) in a file named after broadcast: refused
sed -e '/^ *[0-9]/s/ none  *-1 / sum 0 /' "$T/all_gather_perf-8gpu.txt" >"$out/broadcast_perf.txt"
refuse "reduce rows under a broadcast file name; not misread" "a row with a reduction operator is not broadcast" -m llama2-7b --gpus 8 --results "$out/broadcast_perf.txt"
# rows whose column header is missing: said when nothing else is left
grep -v '^# *size\|^# *(B)' "$T/all_gather_perf-8gpu.txt" >"$out/all_gather_nohdr.txt"
refuse "rows without their column header" "without result rows (lines that look like rows come before any" -m llama2-7b --gpus 8 --results "$out/all_gather_nohdr.txt"
# ccbench results whose check failed are not fitted
# inputs read as something they are not: refused by name
sed -e '/"type": "result"/s/}$/, "wrong": 0.5}/' "$T/bench-intra.jsonl" >"$out/wrongf.jsonl"
refuse "results: a wrong count that is not a whole number" 'line 2: "wrong" must be a count of wrong elements' \
    -m llama3-8b -g 16 -r "$out/wrongf.jsonl"
sed -e '1s/"nnodes": 1/"nnodes": 16/' "$T/bench-intra.jsonl" >"$out/nn16.jsonl"
refuse "results: more nodes than ranks" "line 2: nranks 8 is fewer than the header's 16 nodes" \
    -m llama3-8b -g 16 -r "$out/nn16.jsonl"
sed -e '2s/"nranks": 8/"nranks": 8, "nranks": 9/' "$T/bench-intra.jsonl" >"$out/dupk.jsonl"
refuse "results: a key twice in a line" "line 2: duplicate object key" -m llama3-8b -g 16 -r "$out/dupk.jsonl"
sed 's/^\(#  Rank  3 Group  0 Pid   4003 on\) .*/\1/' "$T/nccl-tests-inter.txt" >"$out/rank3.txt"
refuse "nccl-tests: a Rank line cut short" "line 9: a Rank line without its pid and host" \
    -m llama3-8b -g 16 -r "$out/rank3.txt"
refuse "OSU log @1x1" "@1x1 is one rank" -m llama3-8b -g 16 -r "$T/osu-nccl-2x8.txt@1x1"
# a hex or nan time is not a time: the row is passed over and said so
for bad in 0x16 nan; do
    sed "0,/    22.46 /s//$(printf '%9s' "$bad") /" "$T/nccl-tests-inter.txt" >"$out/t-$bad.txt"
    "$CCBENCH" layout -m llama3-8b -g 16 -r "$out/t-$bad.txt" -k 1 >/dev/null 2>"$out/t-$bad.err"
    ok $? "nccl-tests row with a $bad time: still fitted" "$(cat "$out/t-$bad.err")"
    grep -q "passed over 1 line(s) that start like a result row but do not read as one (the first: line 30" "$out/t-$bad.err"
    ok $? "... the $bad row passed over, with a warning naming line 30" "$(cat "$out/t-$bad.err")"
done
json_edit "$T/dgx-a100x4.json" "$out/pigeon.json" 'c.setdefault("fabric", {})["kind"] = "pigeon"'
refuse "topology: an unknown fabric kind" "fabric: 'kind' must be infiniband, roce, ethernet or none, not 'pigeon'" -m llama3-8b -t "$out/pigeon.json"
json_edit "$T/dgx-a100x4.json" "$out/none8.json" 'c["fabric"]["kind"] = "none"'
refuse "topology: fabric kind none with 8 NICs per node" "fabric: 'kind' none with 8 NICs per node" -m llama3-8b -t "$out/none8.json"
json_edit "$T/dgx-a100x4.json" "$out/bigmem.json" 'c["nodes"][0]["gpus"][0]["memory_bytes"] = 2**62'
refuse "topology: a GPU of 2^62 bytes" "'memory_bytes' 4611686018427387904 is more than a GPU has" -m llama3-8b -t "$out/bigmem.json"
printf '{"model_type":"minicpm3","hidden_act":"silu","hidden_size":2560,"intermediate_size":6400,"num_attention_heads":40,"num_key_value_heads":40,"num_hidden_layers":62,"vocab_size":73448,"q_lora_rank":768,"kv_lora_rank":256}\n' >"$out/mc3.json"
# MiniCPM3's config class defaults its head widths (64 + 32, and hidden / heads for V)
"$CCBENCH" layout -m "$out/mc3.json" -g 8 -k 1 >"$out/mc3d" 2>&1 &&
    grep -q "mla(q 768, kv 256, qk 64+32, v 64)" "$out/mc3d"
ok $? "a MiniCPM3 config without its head widths: its family's defaults" "$(head -1 "$out/mc3d")"
sed 's/"minicpm3"/"custom_mla"/' "$out/mc3.json" >"$out/mc3x.json"
refuse "a latent-attention config of another family without its head widths" 'a latent-attention config ("kv_lora_rank") without "qk_nope_head_dim"' -m "$out/mc3x.json" -g 8
sed 's/"kv_lora_rank":256/"kv_lora_rank":256,"qk_nope_head_dim":64,"qk_rope_head_dim":32,"v_head_dim":64/' "$out/mc3.json" >"$out/mc3w.json"
"$CCBENCH" layout -m "$out/mc3w.json" -g 8 -k 1 >"$out/mc3" 2>&1 &&
    grep -q "mla(q 768, kv 256, qk 64+32, v 64)" "$out/mc3"
ok $? "a dense model with latent attention (MiniCPM3's shape)" "$(head -1 "$out/mc3")"
"$CCBENCH" layout -m "$out/mc3w.json" -g 8 --explain tp=2,pp=1,dp=4,mb=1,sp=0 >"$out/mc3x" 2>&1
[ $? -eq 2 ] && grep -q "latent attention with tp 2 is costed with sequence parallelism only (sp=1)" "$out/mc3x"
ok $? "... tp > 1 without sequence parallelism named as not costed" "$(grep -m1 error "$out/mc3x")"
printf '{"model_type":"minicpm3","hidden_act":"silu","hidden_size":2560,"intermediate_size":6400,"num_attention_heads":40,"num_hidden_layers":62,"vocab_size":73448,"q_lora_rank":768}\n' >"$out/mc3q.json"
refuse "q_lora_rank without kv_lora_rank" '"q_lora_rank" without "kv_lora_rank"' -m "$out/mc3q.json" -g 8
printf '{"name":"x","layers":4,"hidden":1024,"heads":8,"vocab":1000,"seq_len":512,"global_batch":8,"kv_lora_rank":256,"mlp":"gelu"}\n' >"$out/mlag.json"
refuse "spec: latent attention with a gelu MLP" "latent attention (kv_lora_rank 256): it is modelled with the swiglu layer" -m "$out/mlag.json" -g 8
printf '{"name":"x","layers":4,"hidden":1024,"heads":8,"vocab":1000,"seq_len":512,"global_batch":8,"v_head_dim":64}\n' >"$out/mlav.json"
refuse "spec: v_head_dim without latent attention" "are for latent attention, which kv_lora_rank > 0 turns on" -m "$out/mlav.json" -g 8
sed 's/"num_local_experts": *8/"num_local_experts": 1/' "$T/hf-moe.json" >"$out/hf1.json"
refuse "a config with one expert" '"num_local_experts" 1: 0 or absent for a dense model' -m "$out/hf1.json" -g 8
printf '{"preset":"llama3-8b","dropout":null}\n' >"$out/dnull.json"
refuse "spec: a key set to null" '"dropout" is null' -m "$out/dnull.json" -g 8
printf '{"preset":"llama3-8b","topk":2}\n' >"$out/tk.json"
refuse "spec: topk without experts" '"topk" without experts' -m "$out/tk.json" -g 8
printf '{"preset":"llama3-8b","name":""}\n' >"$out/noname.json"
refuse "spec: an empty name" '"name" is empty' -m "$out/noname.json" -g 8
printf '{"preset":"llama3-8b","name":"a\\u0000b"}\n' >"$out/nul.json"
refuse "spec: a NUL in a string" 'a NUL character (\\u0000) in a string' -m "$out/nul.json" -g 8
refuse "-x sp=on" "sp needs an integer from 0 to 1, got 'on'" -m llama3-8b -g 8 -x tp=2,pp=1,dp=4,sp=on
refuse "-x zero=4" "zero needs an integer from 0 to 3, got '4'" -m llama3-8b -g 8 -x tp=2,pp=1,dp=4,zero=4
refuse "--validate-megatron with -x" "--explain does not apply to --validate-megatron" --validate-megatron -x tp=8
refuse "--list-models with --gpus" "--gpus does not apply to --list-models" --list-models -g 8
sed -e '/"type": "result"/s/}$/, "wrong": 7}/' "$T/bench-intra.jsonl" >"$out/wrong.jsonl"
refuse "bench results all with wrong elements" "every measured one reported wrong elements" -m llama2-7b --gpus 8 --results "$out/wrong.jsonl"
# a file saved with CRLF line ends and blank lines between the results
sed -e 's/$/\r/' -e 'a\
\r' "$T/bench-intra.jsonl" >"$out/crlf.jsonl"
"$CCBENCH" layout -m llama2-7b --gpus 8 --results "$out/crlf.jsonl" >"$out/crlf" 2>&1
ok $? "JSON Lines with CRLF and blank CRLF lines read" "$(head -3 "$out/crlf")"
sed -e '3s/}$/, "wrong": 7}/' "$T/bench-intra.jsonl" >"$out/wrong1.jsonl"
"$CCBENCH" layout -m llama2-7b --gpus 8 --results "$out/wrong1.jsonl" >/dev/null 2>"$out/e36"; rc=$?
[ $rc -eq 0 ] && grep -q "not used: 1 measurement(s) reporting wrong elements" "$out/e36"
ok $? "one bench result with wrong elements: left out, warned (exit $rc)" "$(cat "$out/e36")"
{ cat "$T/all_reduce_perf-2021.txt"; sed -n '/^# nThread/,$p' "$T/all_gather_perf-8gpu.txt"; } \
    >"$out/all_reduce_mixed.txt"
"$CCBENCH" layout -m llama2-7b --gpus 16 --results "$out/all_reduce_mixed.txt" >/dev/null 2>"$out/e16"; rc=$?
[ $rc -eq 2 ] && grep -Eq "all_reduce_mixed.txt': line [0-9]+: (a row with no reduction operator is not allreduce|busbw/algbw is [0-9.]+, not allreduce's)" "$out/e16"
ok $? "an all-gather after all-reduces in an unnamed log: exit 2, not misread" "$(cat "$out/e16")"
# results from a pipe (the format is told by content, so the reader cannot rewind a pipe)
mkfifo "$out/fifo"
cat "$T/nccl-tests-inter.txt" >"$out/fifo" &
"$CCBENCH" layout -m megatron-1.7b --gpus 16 --gpu-model a100-80g --results "$out/fifo" >"$out/p1" 2>&1
ok $? "nccl-tests log from a pipe" "$(tail -3 "$out/p1")"
cat "$T/bench-intra.jsonl" >"$out/fifo" &
"$CCBENCH" layout -m megatron-1.7b --gpus 8 --gpu-model a100-80g --results "$out/fifo" >"$out/p2" 2>&1
ok $? "bench JSON Lines from a pipe" "$(tail -3 "$out/p2")"
grep -q "fitted from '.*fifo'" "$out/p2"; ok $? "pipe results are fitted"

"$CCBENCH" layout -m llama3-405b --gpus 16384 --gpu-model h100-sxm \
    -x tp=8,pp=16,v=8,mb=1,sp=1,zero=1,rc=full,split=1 >"$out/u" 2>&1
ok $? "--explain an uneven 16-stage pipeline of 126 layers" "$(head -8 "$out/u")"
grep -q "layers per stage: first 7, middle 8, last 7" "$out/u"; ok $? "stage layers 7/8/7 shown"
grep -q -- "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split --num-layers-per-virtual-pipeline-stage 1" "$out/u"
ok $? "Megatron-LM arguments for the uneven split"
# the Megatron-LM arguments build the model that was costed: a swiglu model without biases,
# a GPT one with them (Megatron's default), SGD when chosen
"$CCBENCH" layout -m llama3-8b -g 8 -x tp=2,pp=1,zero=1 --optimizer sgd >"$out/ma" 2>&1
grep -q -- "--group-query-attention --num-query-groups 8 .*--swiglu --normalization RMSNorm --position-embedding-type rope --disable-bias-linear --attention-dropout 0.0 --hidden-dropout 0.0 --rotary-base 500000 --untie-embeddings-and-output-weights --optimizer sgd --bf16" "$out/ma"
ok $? "Megatron-LM arguments: GQA, swiglu, RMSNorm, rope, no biases, untied, SGD" "$(grep -m1 -- --tensor-model "$out/ma")"
"$CCBENCH" layout -m megatron-1.7b -g 8 -x tp=2,pp=1 >"$out/mg" 2>&1 &&
    ! grep -q -- "--disable-bias-linear\|--optimizer\|--swiglu" "$out/mg"
ok $? "Megatron-LM arguments of a GPT with Adam: biases, LayerNorm and Adam are the defaults"
"$CCBENCH" layout -m llama3-405b --gpus 16384 --gpu-model h100-sxm --uneven-pp 0 \
    -x tp=8,pp=16,v=8,mb=1,sp=1,zero=1,rc=full,split=1 >"$out/u0" 2>&1
ok $? "--uneven-pp 0 limits the search, not --explain"
grep -q "layers per stage: first 7, middle 8, last 7" "$out/u0"; ok $? "explicit split evaluated"
"$CCBENCH" layout -m llama3-405b --gpus 16384 --gpu-model h100-sxm -x tp=8,pp=16 >/dev/null 2>"$out/e8"; rc=$?
[ $rc -eq 2 ] && grep -q "pp 16 does not divide the 126 layers" "$out/e8"; ok $? "pp=16 without split: exit 2, says why"

# overlap habits reach the Megatron-LM arguments; bad values are refused
"$CCBENCH" layout -m llama3-70b --gpus 64 --gpu-model h100-sxm --precision fp8 --global-batch 128 \
    --tp-overlap 1 -x tp=4,pp=4,dp=2,cp=2,mb=1,v=5,sp=1,zero=1,rc=none >"$out/o1" 2>&1
ok $? "--tp-overlap 1 with --explain"
grep -q -- "--context-parallel-size 2 --cp-comm-type allgather --sequence-parallel .*--tp-comm-overlap" "$out/o1" &&
    grep -q "tensor-parallel overlap" "$out/o1"
ok $? "tensor-parallel overlap shown in the habits and the Megatron-LM arguments"
# the DeepSpeed fragment: bucket sizes in elements (25 MiB of fp32 gradients: 6553600; of
# bf16: 13107200), partition_activations only with full recomputation, and with cp > 1 a
# line saying DeepSpeed has no context parallelism
ds() { sed -n '/^DeepSpeed config fragment:/,/^  }/p' "$1" | sed 1d; }
grep -q '^      "reduce_bucket_size": 6553600,$' "$out/o1" &&
    grep -q '^      "allgather_bucket_size": 6553600$' "$out/o1" &&
    ! grep -q '"partition_activations"' "$out/o1" &&
    grep -q "^  # DeepSpeed has no context parallelism: this batch counts the dp = 2 data-parallel ranks (1 x 64 x 2 = 128), DeepSpeed would count dp x cp = 4" "$out/o1"
ok $? "DeepSpeed fragment with fp32 reduction, rc=none and cp=2: buckets in elements, no activation partitioning, no context parallelism said"
"$CCBENCH" layout -m llama2-7b -g 8 --grad-reduce bf16 -x tp=2,zero=1,rc=full >"$out/ds1" 2>&1
"$CCBENCH" layout -m llama2-7b -g 8 -x tp=2,zero=1,rc=none >"$out/ds2" 2>&1
grep -q '^      "reduce_bucket_size": 13107200,$' "$out/ds1" &&
    grep -q '^      "allgather_bucket_size": 13107200$' "$out/ds1" &&
    grep -q '"partition_activations": true' "$out/ds1" && ! grep -q '"activation_checkpointing"' "$out/ds2"
ok $? "DeepSpeed fragment: bf16 buckets of 13107200 elements; activation partitioning only with recomputation"
if command -v python3 >/dev/null 2>&1; then
    ds "$out/ds1" >"$out/ds1.json"; ds "$out/ds2" >"$out/ds2.json"
    python3 -c 'import json,sys; [json.load(open(f)) for f in sys.argv[1:]]' "$out/ds1.json" "$out/ds2.json"
    ok $? "DeepSpeed fragments are JSON"
else
    skip "DeepSpeed fragments are JSON" "python3 not installed"
fi
# ZeRO 2 and 3 are Megatron-FSDP's in the Megatron-LM arguments (the distributed optimizer
# alone is ZeRO 1); Megatron-LM needs CUDA_DEVICE_MAX_CONNECTIONS=1 for tensor parallelism
# except under Megatron-FSDP, which refuses it. llama2-7b at tp=2, ZeRO 3: the gathered unit
# is a layer, (4*4096^2 + 3*4096*11008 + 2*4096) / 2 = 101191680 parameters, two of them live.
"$CCBENCH" layout -m llama2-7b -g 8 -x tp=2,zero=3,rc=none >"$out/z3" 2>&1
grep -q -- "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params --use-distributed-optimizer --ckpt-format fsdp_dtensor" "$out/z3" &&
    grep -q "^  env -u CUDA_DEVICE_MAX_CONNECTIONS torchrun --nnodes 1 " "$out/z3" && ! grep -q "CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun" "$out/z3" &&
    grep -q "^  # ZeRO 3 is Megatron-FSDP's --data-parallel-sharding-strategy optim_grads_params; .*--no-gradient-accumulation-fusion" "$out/z3" &&
    grep -q '^      "stage": 3,$' "$out/z3" && grep -q '^      "stage3_prefetch_bucket_size": 101191680,$' "$out/z3" &&
    grep -q '^      "stage3_max_live_parameters": 202383360$' "$out/z3" && ! grep -q '"allgather_bucket_size"' "$out/z3"
ok $? "ZeRO 3: Megatron-FSDP arguments, an inherited one-connection setting cleared, its note; DeepSpeed stage-3 prefetch of one layer, two live" "$(grep -A1 '^Megatron-LM' "$out/z3" | tail -1)"
"$CCBENCH" layout -m llama2-7b -g 8 --accum-fusion 0 -x tp=2,zero=3,rc=none >"$out/z3f" 2>&1
grep -q -- "--no-gradient-accumulation-fusion" "$out/z3f" && grep -q "^  # ZeRO 3 is Megatron-FSDP's" "$out/z3f" &&
    ! grep -q "this estimate does not assume" "$out/z3f"
ok $? "ZeRO 3 with --accum-fusion 0: the flag given, the note does not call it unassumed"
"$CCBENCH" layout -m llama2-7b -g 8 -x tp=1,zero=2,rc=none,mb=1 >"$out/z2" 2>&1
grep -q -- "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads --use-distributed-optimizer" "$out/z2" &&
    grep -q '^      "allgather_bucket_size": 6553600$' "$out/z2" && grep -q "^  env -u CUDA_DEVICE_MAX_CONNECTIONS torchrun --nnodes 1 " "$out/z2"
ok $? "ZeRO 2: Megatron-FSDP optim_grads; DeepSpeed stage 2 keeps its all-gather bucket"
"$CCBENCH" layout -m llama2-7b -g 8 -x tp=2,zero=1,rc=none >"$out/z1" 2>&1
"$CCBENCH" layout -m llama2-7b -g 8 -x tp=1,zero=1,rc=full >"$out/z1b" 2>&1
grep -q "^  CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nnodes 1 " "$out/z1" && ! grep -q "megatron-fsdp\|Megatron-FSDP" "$out/z1" &&
    grep -q "^  torchrun --nnodes 1 " "$out/z1b"
ok $? "tp=2 with the distributed optimizer: CUDA_DEVICE_MAX_CONNECTIONS=1 in front of torchrun; tp=1: nothing"
"$CCBENCH" layout -m llama2-7b -g 8 --gpu-model b200 -x tp=2,zero=1,rc=none >"$out/zb" 2>&1
grep -q "^  torchrun --nnodes 1 " "$out/zb"
ok $? "tp=2 on B200 (Blackwell): no one-connection setting"
"$CCBENCH" layout -m llama2-7b -g 8 --precision fp8 -x tp=2,zero=1,rc=none >"$out/f8" 2>&1
grep -q "^  # fp8: DeepSpeed's config has no fp8 switch" "$out/f8"
ok $? "fp8: the DeepSpeed fragment says it has no fp8 switch"
if command -v python3 >/dev/null 2>&1; then
    "$CCBENCH" layout -m llama2-7b -g 16 --json -k 3 >"$out/jl" 2>&1 &&
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
t = d["top"]
assert d["cluster"]["memory_bytes"] == 85899345920, d["cluster"]["memory_bytes"]
for i, r in enumerate(t):
    l, ds = r["layout"], r["deepspeed"]
    assert r["torchrun"].split("torchrun --nnodes 2 --nproc-per-node 8 ")[1].endswith(r["megatron_args"]), r["torchrun"]
    assert ds["train_micro_batch_size_per_gpu"] == l["micro_batch"] and ds["gradient_accumulation_steps"] == l["grad_accum"], ds
    assert ds["zero_optimization"]["stage"] == l["zero"] and ds["train_batch_size"] == d["model"]["global_batch"], ds
    assert isinstance(r["megatron_notes"], list) and isinstance(r["deepspeed_notes"], list)
    assert (r["behind_why"] is None) == (i == 0), r["behind_why"]
assert " s " in t[1]["behind_why"], t[1]["behind_why"]
' "$out/jl"
    ok $? "JSON: torchrun, DeepSpeed fragment, notes and why each layout is behind; whole numbers exact"
else
    skip "JSON: torchrun, DeepSpeed fragment, notes" "python3 not installed"
fi
refuse "--grad-reduce fp16 with bf16 training" "16-bit gradients are reduced in bf16" -m llama2-7b -g 8 --grad-reduce fp16
refuse "--grad-reduce bf16 with fp16 training" "16-bit gradients are reduced in fp16" -m megatron-1.7b -g 8 --grad-reduce bf16
# a GPU the table lacks: its peak and memory, and its rates, from the command line
refuse "--gpu-model not in the table, no memory" "a GPU the table lacks needs --peak-tflops and --gpu-mem-gb" \
    -m llama3-8b -g 16 --gpu-model nosuch --peak-tflops 500
refuse "--gpu-model not in the table, no rate across nodes" "no all-reduce rate across nodes for GPU 'nosuch'" \
    -m llama3-8b -g 16 --gpu-model nosuch --peak-tflops 500 --gpu-mem-gb 100 --intra-GBps 300
"$CCBENCH" layout -m llama3-8b -g 16 --gpu-model nosuch --peak-tflops 500 --gpu-mem-gb 100 --intra-GBps 300 \
    --inter-GBps 200 --hbm-GBps 4000 -k 1 >"$out/gx" 2>&1
ok $? "--gpu-model not in the table with its figures given" "$(tail -1 "$out/gx")"
grep -q "^# cluster 16 x nosuch (2 nodes of 8), 100 GB and 500 TFLOP/s (bf16) per GPU" "$out/gx" &&
    grep -q "^#         rates: no table entry for nosuch; --intra-GBps and --inter-GBps given; within a node 300 GB/s, across nodes 200 GB/s per node" "$out/gx"
ok $? "... the header names the GPU, its figures and where the rates come from"
# measured rates are not mixed with the table's unsaid: a collective not measured in a scope
# takes a measured sibling's fit (all-reduce, all-gather and reduce-scatter share the rings),
# so at tp=2 sequence parallelism costs what the all-reduce it replaces does
R="$T/bench-intra.jsonl,$T/bench-inter.jsonl"
"$CCBENCH" layout -m megatron-1.7b --topology "$T/dgx-a100x4.json" --results "$R" -k 1 >"$out/si" 2>&1
grep -q "^#         allgather within a node: not measured, the allreduce fit stands in" "$out/si" &&
    grep -q "^#         reducescatter across nodes: not measured, the allgather fit stands in" "$out/si" &&
    grep -q "^#         sendrecv within a node: not measured, 220 GB/s as above" "$out/si" &&
    grep -q "^#         sendrecv across nodes: not measured, the node's rate from the allreduce fit across whole nodes (50 GB/s), shared by its GPUs" "$out/si" &&
    ! grep -q "allreduce within a node: not measured" "$out/si"
ok $? "--results: the header says which collectives were not measured and what stands in"
"$CCBENCH" layout -m megatron-1.7b --topology "$T/dgx-a100x4.json" --results "$R" -k 1 --json 2>/dev/null |
    tr -d ' \n' | grep -q '{"collective":"sendrecv","scope":"inter","from":"allreduce","node_rate":true}'
ok $? "--results --json: send/recv across nodes takes the node's rate from the all-reduce fit (node_rate true)"
tpc() { "$CCBENCH" layout -m megatron-1.7b --topology "$T/dgx-a100x4.json" --results "$R" --json \
    -x "tp=2,pp=1,dp=16,mb=2,zero=1,rc=none,sp=$1" 2>/dev/null | awk '$1 == "\"tp_comm\":" { sub(/,$/, "", $2); print $2; exit }'; }
a=$(tpc 0) b=$(tpc 1)
awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && b > 0 && b / a > 0.95 && b / a < 1.1) }'
ok $? "tp=2 tensor-parallel time with and without sequence parallelism from the same measured rate ($a s, $b s)"
# --explain of a layout larger than the cluster: its figures on as many GPUs, said
"$CCBENCH" layout -m llama3-70b -g 64 -x tp=8,pp=8,dp=2 >"$out/xl" 2>"$out/xle"; rc=$?
[ $rc -eq 2 ] && grep -q "^feasible no: tp\*pp\*dp\*cp is 128 but the cluster has 64 GPUs (figures for 128 such GPUs)" "$out/xl" &&
    grep -q "^time per step " "$out/xl" && grep -q "is not ranked: it does not use the cluster's GPUs" "$out/xl" &&
    awk '$1 == "tokens/s" { t = $2; g = $3; sub(/^\(/, "", g) } END { exit !(t > 0 && (t / 128 - g) ^ 2 < 0.01) }' "$out/xl"
ok $? "--explain a layout of 128 GPUs on 64: exit 2, its figures for 128 GPUs, per GPU of those 128" "$(cat "$out/xle")"
if command -v python3 >/dev/null 2>&1; then
    "$CCBENCH" layout -m llama3-70b -g 64 -x tp=8,pp=8,dp=2 --json >"$out/xlj" 2>/dev/null
    python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["explain"]; assert e["feasible"] is False and "128 such GPUs" in e["why"] and e["time_s"]["step"] > 0, e; assert "torchrun --nnodes 16 " in e["torchrun"], e["torchrun"]' "$out/xlj"
    ok $? "... and in JSON, its torchrun line for 16 nodes"
else
    skip "... and in JSON" "python3 not installed"
fi
refuse "-x a layout of 16 GPUs on one node, no rate across nodes" "uses 16 GPUs, more than the cluster's 8, and no rate across nodes" \
    -m llama3-8b --gpus 8 --gpu-model foo --peak-tflops 900 --gpu-mem-gb 80 --intra-GBps 300 -x tp=2,dp=8
# why nothing fits, when the reason is not the memory alone
printf '{"name":"h7","layers":8,"hidden":57344,"heads":7,"vocab":32000,"seq_len":2048,"global_batch":64}\n' >"$out/h7.json"
refuse "7 heads, too large for one GPU" "tp could only be 1: no tp from 2 to 8 divides the 7 heads" -m "$out/h7.json" -g 64
refuse "more GPUs than sequences" "the cluster has more GPUs than the layouts can use: the smallest dp = GPUs/(tp\*pp\*cp) is 65536, more than the global batch of 512" \
    -m llama3-8b -g 16777216
refuse "no dp divides the batch" "no dp = GPUs/(tp\*pp\*cp) divides the global batch 1000 (the smallest dp is 6" \
    -m llama3-8b -g 1536 --global-batch 1000
refuse "--bucket 0" "--bucket '0' is out of range (4K to 1024T)" -m llama3-8b -g 8 --bucket 0
# a preset with its shape changed is another model, and says so; the rotary base travels
printf '{"preset": "llama3-8b", "layers": 31}\n' >"$out/l31.json"
"$CCBENCH" layout -m "$out/l31.json" -g 8 -k 1 >"$out/l31" 2>&1
grep -q "^# model   llama3-8b (changed): .* l=31 " "$out/l31" &&
    grep -q "^#         source: .*l31.json: preset llama3-8b with layers changed; the preset: Llama Team 2024" "$out/l31" &&
    grep -q -- "--rotary-base 500000" "$out/l31"
ok $? "a preset with its layers changed is named as changed, the file and key said" "$(head -2 "$out/l31")"
"$CCBENCH" layout -m "$T/hf-llama3-8b.json" -g 8 -k 1 >"$out/rb1" 2>&1
"$CCBENCH" layout -m "$T/hf-llama2-7b.json" -g 8 -k 1 >"$out/rb2" 2>&1
grep -q -- "--hidden-dropout 0.0 --rotary-base 500000 " "$out/rb1" && ! grep -q -- "--rotary-base" "$out/rb2"
ok $? "Hugging Face rope_theta 500000 becomes --rotary-base; Llama 2's default base is left out"
# transformers v5 keeps the rotary base and the trained window in rope_parameters; a dense
# config may name "num_experts": 0
printf '{"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 131072, "num_experts": 0, "rope_parameters": {"rope_theta": 500000.0, "rope_type": "llama3", "original_max_position_embeddings": 8192}}\n' >"$out/hf5.json"
"$CCBENCH" layout -m "$out/hf5.json" -g 8 -k 1 >"$out/hf5" 2>&1
grep -q "^# model .* s=8192," "$out/hf5" && grep -q -- "--rotary-base 500000 " "$out/hf5"
ok $? "transformers v5 rope_parameters: base 500000 and the 8192-token window read" "$(head -2 "$out/hf5")"
printf '{"model_type": "qwen2", "num_hidden_layers": 28, "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064, "max_position_embeddings": 32768, "rope_theta": 1000000.0}\n' >"$out/q2.json"
"$CCBENCH" layout -m "$out/q2.json" -g 8 -k 1 >"$out/q2" 2>&1
grep -q -- "--disable-bias-linear --add-qkv-bias " "$out/q2"
ok $? "Qwen2: the QKV bias it always has is in the Megatron-LM arguments" "$(grep -o -- '--swiglu.*--num-query' "$out/q2" | head -1)"
# ... and in its parameters: Qwen2-7B's published 7,615,616,512
"$CCBENCH" layout -m "$out/q2.json" -g 8 -k 1 -j 2>/dev/null |
    python3 -c 'import json,sys; p=json.load(sys.stdin)["model"]["params"]; assert p == 7615616512, p'
ok $? "Qwen2-7B: 7,615,616,512 parameters with its QKV bias"
printf '{"model_type": "nemotron_h", "num_hidden_layers": 52, "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 131072, "intermediate_size": 21504, "hybrid_override_pattern": "M-M-M*-"}\n' >"$out/nh.json"
refuse "a hybrid Mamba config" "a state-space (Mamba), linear-attention or hybrid config (\"hybrid_override_pattern\")" -m "$out/nh.json" -g 8
printf '{"preset": "llama3-8b", "rope_theta": "big"}\n' >"$out/rbad.json"
refuse "rope_theta not a number" '"rope_theta" must be a number from 1 to 1e12' -m "$out/rbad.json" -g 8
"$CCBENCH" layout -m llama3-70b --gpus 64 --gpu-model h100-sxm --pp-overlap 0 \
    -x tp=8,pp=2,dp=4,mb=1,v=2 >"$out/o2" 2>&1
grep -q "with blocking pipeline sends (--pp-overlap 0) needs pp > 2" "$out/o2"
ok $? "--pp-overlap 0: two-stage interleaving refused, says why"
"$CCBENCH" layout -m llama3-70b --gpus 64 --gpu-model h100-sxm --pp-overlap 0 --precision fp8 \
    -x tp=8,pp=4,dp=2,mb=1,v=5 >"$out/o3" 2>&1
grep -q -- "--num-layers-per-virtual-pipeline-stage 4 .*--no-overlap-p2p-communication" "$out/o3" &&
    grep -q "efficiency 0.71 (fp8 layers 0.48).*blocking pipeline sends" "$out/o3"
ok $? "--pp-overlap 0: Megatron-LM told not to overlap; habits line shows it and the fp8 efficiency"
"$CCBENCH" layout -m llama3-70b --gpus 64 --tp-overlap 2 >/dev/null 2>"$out/e13"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--tp-overlap" "$out/e13"; ok $? "--tp-overlap 2: exit 2" "$(cat "$out/e13")"
"$CCBENCH" layout -m llama3-70b --gpus 64 --fp8-efficiency 0 >/dev/null 2>"$out/e14"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--fp8-efficiency '0' is out of range" "$out/e14"; ok $? "--fp8-efficiency 0: exit 2"

"$CCBENCH" layout --validate-megatron >"$out/v" 2>&1
grep -q "^| megatron-1t | 3072 | 3072 | 8,64,6 | 1 |" "$out/v"; ok $? "Megatron table: 1T row, published layout first"

# a Hugging Face config.json as the model; what it does not say is assumed aloud
"$CCBENCH" layout -m "$T/hf-llama3-8b.json" --gpus 8 --gpu-model h100-sxm --seq-len 4096 \
    --global-batch 64 -k 1 >"$out/hf" 2>&1
ok $? "Hugging Face config.json as the model" "$(head -3 "$out/hf")"
grep -q "^# model   llama: 8.0B parameters, l=32 h=4096 a=32 kv=8 ffn=14336 V=128256 s=4096, batch 64," "$out/hf" &&
    grep -q "Hugging Face config, gated MLP" "$out/hf"
ok $? "config read: shape, --seq-len and --global-batch applied, source line says what was assumed"
"$CCBENCH" layout -m "$T/hf-llama3-8b.json" --gpus 8 --seq-len 4096 -k 1 >"$out/hf2" 2>&1
grep -q "^# model   llama: .* s=4096, batch 1024," "$out/hf2"
ok $? "config read: an assumed batch stays 4M tokens at --seq-len 4096"
# the optimizer's fp32 copy of 16-bit gradients (Megatron-LM, fp16 and bf16 alike): 4 bytes
# by default when gradients are reduced in 16 bits, none when they are reduced in fp32
copy_bytes() { "$CCBENCH" layout -g 8 -x tp=8 --json "$@" 2>/dev/null | awk '$1 == "\"grad_copy_bytes\":" { sub(/,$/, "", $2); print $2 }'; }
c1=$(copy_bytes -m megatron-1.7b) c2=$(copy_bytes -m llama2-7b) c3=$(copy_bytes -m llama2-7b --grad-reduce bf16)
c4=$(copy_bytes -m megatron-1.7b --grad-copy 0)
[ "$c1" = 4 ] && [ "$c2" = 0 ] && [ "$c3" = 4 ] && [ "$c4" = 0 ]
ok $? "fp32 gradient copy: fp16 4, bf16 with fp32 reduction 0, with bf16 reduction 4, --grad-copy 0: 0 ($c1 $c2 $c3 $c4)"
# one batch rule for a spec and the flags: a batch stated in sequences (a spec's global_batch,
# --global-batch) is kept; a preset's batch in tokens follows any new sequence length
printf '{"preset": "llama2-7b", "global_batch": 64}\n' >"$out/b64.json"
"$CCBENCH" layout -m "$out/b64.json" -g 8 --seq-len 2048 -k 1 >"$out/b1" 2>&1
grep -q "^# model   llama2-7b: .* s=2048, batch 64," "$out/b1"
ok $? "spec global_batch 64 kept at --seq-len 2048" "$(head -1 "$out/b1")"
printf '{"preset": "llama3-8b", "seq_len": 4096}\n' >"$out/s4k.json"
"$CCBENCH" layout -m "$out/s4k.json" -g 8 -k 1 >"$out/b2" 2>&1
"$CCBENCH" layout -m llama3-8b -g 8 --seq-len 4096 -k 1 >"$out/b3" 2>&1
grep -q "^# model   llama3-8b: .* s=4096, batch 1024," "$out/b2" &&
    grep -q "^# model   llama3-8b: .* s=4096, batch 1024," "$out/b3"
ok $? "a spec's seq_len rescales a preset's 4M-token batch as --seq-len does" "$(head -1 "$out/b2")"
# a mixture of experts: layouts with expert parallelism, and the arguments that set it
"$CCBENCH" layout -m "$T/hf-moe.json" --gpus 64 --gpu-model h100-sxm -k 3 >"$out/moe" 2>&1 &&
    grep -q "^# model   mixtral: 46.7B parameters (12.9B active), 8 experts of ffn 14336, top 2" "$out/moe" &&
    grep -q "compute/tp/cp/ep/pp/bubble/dp/opt" "$out/moe" &&
    grep -q "^  1  .*,ep=[248] " "$out/moe" &&
    grep -q -- "--num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 14336 --expert-model-parallel-size [248] --expert-tensor-parallel-size 1 --moe-token-dispatcher-type alltoall --moe-grouped-gemm" "$out/moe" &&
    grep -q "routing is costed as balanced" "$out/moe" &&
    grep -q "# experts: these arguments set no load balancing: Megatron-LM's --moe-aux-loss-coeff defaults to 0 (no load-balancing loss); add your model's router settings$" "$out/moe"
ok $? "Mixtral config: ranked with ep, Megatron-LM's expert arguments" "$(grep -E '^  1 ' "$out/moe")"
"$CCBENCH" layout -m "$T/hf-moe.json" --gpus 64 --gpu-model h100-sxm -x tp=1,pp=1,dp=64,mb=1,zero=1,rc=full,ep=8 --json >"$out/moej" 2>&1 &&
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
l = d["explain"]["layout"]
assert l["ep"] == 8 and l["expert_dp"] == 8, l
t = d["explain"]["time_s"]
assert t["ep_comm"] > 0, t
assert d["model"]["experts"] == 8 and d["model"]["topk"] == 2 and d["model"]["moe_ffn"] == 14336, d["model"]
' "$out/moej"
ok $? "--json: layout ep and expert_dp, time_s.ep_comm, model experts" "$(head -c 300 "$out/moej")"
"$CCBENCH" layout -m "$T/hf-moe.json" --gpus 64 --gpu-model h100-sxm -x tp=1,pp=1,dp=64,mb=1,zero=1,rc=full,ep=8 >"$out/moex" 2>&1 &&
    grep -q "^layout   tp=1,pp=1,dp=64,cp=1,mb=1,v=1,sp=0,zero=1,rc=full,ep=8$" "$out/moex" &&
    grep -q "^experts: 1 of the 8 experts of every layer per GPU (ep 8), their gradients reduced over 8 GPUs" "$out/moex" &&
    grep -q "^  expert-parallel all-to-all " "$out/moex"
ok $? "--explain ep=8: the layout line, the experts, the all-to-all" "$(grep -E '^experts' "$out/moex")"
"$CCBENCH" layout -m llama3-8b --gpus 64 -k 1 >"$out/dense" 2>&1 &&
    grep -q "compute/tp/cp/pp/bubble/dp/opt" "$out/dense" && ! grep -q "expert" "$out/dense"
ok $? "a dense model: no expert column or line"
refuse "-x ep=3 on Mixtral" "ep 3 does not divide the 8 experts" -m "$T/hf-moe.json" -g 64 -x tp=1,pp=1,dp=64,ep=3
refuse "-x ep=2 on a dense model" "has no experts" -m llama3-8b -g 64 -x tp=1,pp=1,dp=64,ep=2
refuse "-x ep=0" "ep needs an integer from 1" -m "$T/hf-moe.json" -g 64 -x ep=0
printf '{"model_type":"deepseek_v3","hidden_size":7168,"num_hidden_layers":61,"num_attention_heads":128,"vocab_size":129280,"n_routed_experts":256,"num_experts_per_tok":8,"moe_intermediate_size":2048,"kv_lora_rank":512,"q_lora_rank":1536,"intermediate_size":18432}\n' >"$out/dsv3.json"
refuse "DeepSeek-V3 config with a plain MLP" 'latent attention (kv_lora_rank 512): it is modelled with the swiglu layer' -m "$out/dsv3.json" -g 512
printf '{"model_type":"deepseek_v32","hidden_act":"silu","hidden_size":7168,"num_hidden_layers":61,"num_attention_heads":128,"vocab_size":129280,"n_routed_experts":256,"num_experts_per_tok":8,"moe_intermediate_size":2048,"kv_lora_rank":512,"q_lora_rank":1536,"intermediate_size":18432,"index_topk":2048,"index_n_heads":64}\n' >"$out/dsv32.json"
refuse "DeepSeek-V3.2 config (sparse attention)" 'sparse attention with an indexer ("index_topk": DeepSeek-V3.2, GLM-5) is not modelled' -m "$out/dsv32.json" -g 512
json_edit "$T/hf-glm4-moe.json" "$out/glmlite.json" 'c.pop("first_k_dense_replace"); c["model_type"]="glm4_moe_lite"; c["mlp_layer_types"]=["dense"]*3+["sparse"]*89'
"$CCBENCH" layout -m "$out/glmlite.json" -g 256 --gpu-model h100-sxm -k 1 >"$out/gl" 2>&1 &&
    grep -q "top 8 in 89 of the layers (the others dense)" "$out/gl"
ok $? "mlp_layer_types: 3 dense then sparse read as the first 3 dense" "$(head -1 "$out/gl")"
json_edit "$out/glmlite.json" "$out/glmlite2.json" 'c["mlp_layer_types"]=["dense"]*3+["sparse"]*88+["dense"]'
refuse "mlp_layer_types with a dense last layer" '"mlp_layer_types" places dense and expert layers in a way not modelled' -m "$out/glmlite2.json" -g 256
sed 's/"intermediate_size":18432}/"intermediate_size":18432,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"n_shared_experts":1,"first_k_dense_replace":3,"num_key_value_heads":128,"num_nextn_predict_layers":1,"hidden_act":"silu"}/' "$out/dsv3.json" >"$out/dsv3w.json"
"$CCBENCH" layout -m "$out/dsv3w.json" -g 1024 --gpu-model h100-sxm --seq-len 4096 --global-batch 15360 -k 1 >"$out/dsv3" 2>&1 &&
    "$CCBENCH" layout -m deepseek-v3 -g 1024 --gpu-model h100-sxm -k 1 >"$out/dsv3p" 2>&1 &&
    grep -q "^# model   deepseek_v3: 682.6B parameters (38.2B active), 256 experts of ffn 2048, shared 2048, top 8 in 58 of the layers" "$out/dsv3" &&
    grep -q "^# model   deepseek-v3: 682.6B parameters (38.2B active)" "$out/dsv3p" &&
    "$CCBENCH" layout -m deepseek-v3 -g 1024 --gpu-model h100-sxm -k 1 --mtp 0 >"$out/dsv3n" 2>&1 &&
    grep -q "^# model   deepseek-v3: 671.0B parameters (37.6B active), .* l=61 h=7168" "$out/dsv3n" &&
    [ "$(grep '^  1 ' "$out/dsv3")" = "$(grep '^  1 ' "$out/dsv3p")" ] &&
    grep -q -- "--multi-latent-attention --qk-layernorm --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128" "$out/dsv3p"
ok $? "DeepSeek-V3: its config.json and the preset give 682.6B with MTP (671.0B with --mtp 0), the same first layout and latent-attention arguments" "$(head -1 "$out/dsv3"; grep '^  1 ' "$out/dsv3" "$out/dsv3p")"
printf '{"model_type":"qwen2_moe","hidden_size":2048,"num_hidden_layers":24,"num_attention_heads":16,"num_key_value_heads":16,"vocab_size":151936,"num_experts":60,"num_experts_per_tok":4,"moe_intermediate_size":1408,"shared_expert_intermediate_size":5632,"intermediate_size":5632,"decoder_sparse_step":2}\n' >"$out/mixed.json"
# uneven first and last pipeline stages (Megatron-LM --decoder-first/last-pipeline-num-layers)
"$CCBENCH" layout -m deepseek-v3 -g 1024 --gpu-model h100-sxm --explain tp=4,pp=16,dp=16,mb=1,sp=1,zero=1,rc=none,first=4,last=1,ep=8 >"$out/unev" 2>&1 &&
    grep -q "^micro-batches per step 960 (gradient accumulation), layers per stage: first 4, middle 4, last 1 (uneven first and last stage); the last stage also holds 1 multi-token-prediction layer$" "$out/unev" &&
    grep -q "^layers with experts per stage: first 1 of 4, stage 1 4 of 4, last 1 of 1;" "$out/unev" &&
    grep -q -- "--pipeline-model-parallel-size 16 --decoder-first-pipeline-num-layers 4 --decoder-last-pipeline-num-layers 1 " "$out/unev"
ok $? "DeepSeek-V3 on 16 stages of 4, 4 x 14 and 1 layers: --explain and Megatron-LM's arguments" "$(grep -E "^micro|^layers" "$out/unev")"
"$CCBENCH" layout -m megatron-3.6b -g 4 --gpus-per-node 4 --gpu-model a100-80g --global-batch 8 -x tp=1,pp=4,mb=1,v=2,first=6,last=8,rc=full --json >"$out/unevj" 2>&1 &&
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
e = d["explain"]
lay = e["layout"]
assert lay["first_stage_layers"] == 6 and lay["last_stage_layers"] == 8 and lay["layers_per_stage"] == [6, 8, 8], lay
a = e["megatron_args"]
assert "--decoder-first-pipeline-num-layers 6 --decoder-last-pipeline-num-layers 8 --num-virtual-stages-per-pipeline-rank 2" in a, a
assert "--num-layers-per-virtual-pipeline-stage" not in a, a
' "$out/unevj"
ok $? "interleaved with uneven stages: virtual stages by count, JSON first/last" "$(head -c 300 "$out/unevj")"
# block recomputation on uneven stages: Megatron-LM checkpoints a chunk's layers below rcl,
# so the last stage's chunk of one layer is recomputed whole and holds what rc=full holds
for rc in rc=block,rcl=3 rc=full; do
    "$CCBENCH" layout -m deepseek-v3 --mtp 0 -g 256 --gpu-model b200 -x tp=1,pp=16,dp=16,mb=1,ep=8,first=4,last=1,zero=1,$rc >"$out/ublk-${rc%%,*}" 2>&1
done
grep -q "^feasible yes" "$out/ublk-rc=block" &&
    grep -q "^recomputation: the first 3 layers of each of the 1 model chunk(s) per stage recomputed whole, the others kept; chunks of 4 layers (first stage), 4 layers (middle stages), 1 layer (last stage): all$" "$out/ublk-rc=block" &&
    grep -q -- "--recompute-granularity full --recompute-method block --recompute-num-layers 3 " "$out/ublk-rc=block" &&
    lb=$(sed -n 's/^memory per GPU by stage: .*, last \([0-9.]*\) GB$/\1/p' "$out/ublk-rc=block") &&
    lf=$(sed -n 's/^memory per GPU by stage: .*, last \([0-9.]*\) GB$/\1/p' "$out/ublk-rc=full") &&
    [ -n "$lb" ] && [ "$lb" = "$lf" ] &&
    fb=$(sed -n 's/^memory per GPU by stage: first \([0-9.]*\) GB,.*/\1/p' "$out/ublk-rc=block") &&
    ff=$(sed -n 's/^memory per GPU by stage: first \([0-9.]*\) GB,.*/\1/p' "$out/ublk-rc=full") &&
    awk -v b="$fb" -v f="$ff" 'BEGIN { exit !(b > f) }'
ok $? "rc=block with first=4,last=1: the 1-layer last stage recomputed whole (its memory as with rc=full: $lb GB), the first keeps a layer ($fb GB > $ff GB)" "$(grep -E '^(feasible|recomputation|memory per GPU by)' "$out/ublk-rc=block")"
"$CCBENCH" layout -m deepseek-v3 -g 256 --gpu-model b200 -x tp=1,pp=2,dp=128,mb=1,ep=32,first=31,last=30,zero=1,rc=full >"$out/unev2" 2>&1 &&
    grep -q "^micro-batches per step 120 (gradient accumulation), layers per stage: first 31, last 30 (uneven first and last stage); the last stage also holds 1 multi-token-prediction layer$" "$out/unev2" &&
    { "$CCBENCH" layout -m deepseek-v3 --mtp 0 -g 256 --gpu-model b200 -x tp=1,pp=1,dp=256,mb=1,ep=32,zero=1,rc=full >"$out/unev1" 2>&1; [ $? -le 2 ]; } && # too large for one stage: exit 2, explained
    grep -q "^micro-batches per step 60 (gradient accumulation), layers per stage 61$" "$out/unev1"
ok $? "--explain at pp 2 with first/last: no middle stage named; MTP layers said beside the stages' layers" "$(grep -h '^micro' "$out/unev2" "$out/unev1")"
# selective recomputation's modules (Megatron-Core --recompute-modules)
"$CCBENCH" layout -m deepseek-v3 -g 256 --gpu-model b200 -x tp=1,pp=16,dp=16,mb=1,ep=8,first=4,last=1,zero=1,rc=selective --recompute-modules mla_up_proj,moe_act >"$out/rcm" 2>&1 &&
    "$CCBENCH" layout -m deepseek-v3 -g 256 --gpu-model b200 -x tp=1,pp=16,dp=16,mb=1,ep=8,first=4,last=1,zero=1,rc=selective >"$out/rcm0" 2>&1
grep -q "^recomputation: selective, modules moe_act, mla_up_proj (--recompute-modules)$" "$out/rcm" &&
    grep -q "^recomputation: selective, modules core_attn (--recompute-modules)$" "$out/rcm0" &&
    grep -q -- "--recompute-granularity selective --recompute-modules moe_act mla_up_proj " "$out/rcm" &&
    ! grep -q -- "--recompute-granularity selective --recompute-modules" "$out/rcm0" &&
    a1=$(sed -n 's/.*activations \([0-9.]*\) GB = .*/\1/p' "$out/rcm") &&
    a0=$(sed -n 's/.*activations \([0-9.]*\) GB = .*/\1/p' "$out/rcm0") &&
    awk -v a="$a1" -v b="$a0" 'BEGIN { exit !(a + 30 < b) }'
ok $? "--recompute-modules mla_up_proj,moe_act: said, passed on, and DeepSeek-V3's activations fall ($a0 -> $a1 GB)" "$(grep -E '^(recomputation|memory per GPU \()' "$out/rcm" "$out/rcm0")"
"$CCBENCH" layout -m deepseek-v3 -g 256 --gpu-model b200 -x tp=1,pp=16,dp=16,mb=1,ep=8,first=4,last=1,zero=1,rc=selective --recompute-modules moe -j 2>/dev/null >"$out/rcmj" &&
    python3 -c '
import json, sys
lay = json.load(open(sys.argv[1]))["explain"]["layout"]
assert lay["recompute"] == "selective" and lay["recompute_modules"] == ["moe"], lay
' "$out/rcmj" &&
    "$CCBENCH" layout -m deepseek-v3 -g 256 --gpu-model b200 -x tp=1,pp=16,dp=16,mb=1,ep=8,first=4,last=1,zero=1,rc=full -j 2>/dev/null |
    python3 -c 'import json, sys; assert json.load(sys.stdin)["explain"]["layout"]["recompute_modules"] is None'
ok $? "JSON: recompute_modules [\"moe\"] with selective, null otherwise"
refuse "--recompute-modules with a module not costed" "recompute module 'mhc' is not one of core_attn, layernorm, moe_act" -m deepseek-v3 -g 256 --recompute-modules core_attn,mhc
refuse "--recompute-modules moe_act on a dense model" "model 'llama3-8b': recompute module moe_act has nothing to recompute: the model has no experts" -m llama3-8b -g 8 --recompute-modules moe_act
refuse "--recompute-modules mla_up_proj without latent attention" "recompute module mla_up_proj has nothing to recompute: the model has no latent attention" -m mixtral-8x7b -g 8 --recompute-modules mla_up_proj
printf '{"preset": "deepseek-v3", "recompute": "selective", "recompute_modules": ["mla_up_proj", "moe_act"]}\n' >"$out/rcms.json"
"$CCBENCH" layout -m "$out/rcms.json" -g 256 --gpu-model b200 --recompute model -k 1 >"$out/rcms" 2>&1 &&
    grep -q -- "--recompute-granularity selective --recompute-modules moe_act mla_up_proj " "$out/rcms"
ok $? "spec recompute_modules as a list, with the spec's selective recomputation" "$(grep -o -- '--recompute-granularity [a-z_ -]*' "$out/rcms" | head -1)"
printf '{"preset": "llama3-8b", "recompute_modules": "mlp,bogus"}\n' >"$out/rcmb.json"
refuse "spec recompute_modules with an unknown name" "recompute module 'bogus' is not one of" -m "$out/rcmb.json" -g 8
printf '{"preset": "llama3-8b", "recompute_modules": [1]}\n' >"$out/rcmn.json"
refuse "spec recompute_modules not names" '"recompute_modules" must be a list of module names' -m "$out/rcmn.json" -g 8
refuse "--recompute-modules with --recompute full" "recompute-modules is for selective recomputation (--recompute selective, auto or model), not --recompute full" -m llama3-8b -g 8 --recompute full --recompute-modules mlp
refuse "--recompute-modules empty" "give at least one of core_attn" -m llama3-8b -g 8 --recompute-modules ,
"$CCBENCH" layout -m llama3-8b -g 8 -x tp=4,pp=2,dp=1,mb=1,first=1,last=31,rc=block,rcl=30 >"$out/ublk2" 2>&1 &&
    grep -q "^recomputation: the first 30 layers of each of the 1 model chunk(s) per stage recomputed whole, the others kept; chunks of 1 layer (first stage): all, 31 layers (last stage)$" "$out/ublk2" &&
    "$CCBENCH" layout -m llama3-8b -g 8 -x tp=4,pp=2,dp=1,mb=1,first=1,last=31,rc=block,rcl=30 -j 2>/dev/null |
    python3 -c 'import json, sys; l = json.load(sys.stdin)["explain"]["layout"]; assert l["layers_per_stage"] == [1, None, 31] and l["expert_layers_per_stage"][1] is None, l'
ok $? "rc=block on pp 2 with first 1, last 31: every stage's chunks said; JSON has no middle stage" "$(grep '^recomputation' "$out/ublk2")"
# an explicit pipeline layout (Megatron-Core --pipeline-model-parallel-layout)
PL='Et*4|(t*4|)*14tmL'
G2="-m deepseek-v3 -g 256 --gpu-model gb200 --gpus-per-node 64 --gpus-per-host 4 --precision fp8 --grad-reduce bf16 --global-batch 4096"
"$CCBENCH" layout $G2 --pipeline-layout "$PL" -x tp=1,pp=4,dp=64,mb=1,ep=64,zero=1,rc=none >"$out/pl" 2>&1 &&
    grep -q "^layout   tp=1,pp=4,dp=64,cp=1,mb=1,v=4,sp=0,zero=1,rc=none,ep=64$" "$out/pl" &&
    grep -q "^micro-batches per step 64 (gradient accumulation), layers per stage: first 16, middle 16, last 13 (the explicit pipeline layout; middle: the most); the last stage also holds 1 multi-token-prediction layer$" "$out/pl" &&
    grep -q "^pipeline layout Et\*4|(t\*4|)\*14tmL: chunks (layers) per stage: 0 4,4,4,4; 1 4,4,4,4; 2 4,4,4,4; 3 4,4,4,1$" "$out/pl" &&
    grep -q -- "--pipeline-model-parallel-size 4 --pipeline-model-parallel-layout 'Et\*4|(t\*4|)\*14tmL' --micro-batch-size 1 " "$out/pl" &&
    ! grep -q -- "--num-layers-per-virtual-pipeline-stage" "$out/pl"
ok $? "--pipeline-layout: v from its 16 stages, every stage's chunks, Megatron-LM's argument in place of the virtual-stage ones" "$(grep -E '^(layout|micro|pipeline layout)' "$out/pl")"
"$CCBENCH" layout $G2 --pipeline-layout "$PL" -k 40 --json 2>/dev/null >"$out/plj" &&
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
piped = [t["layout"] for t in d["top"] if t["layout"]["pp"] > 1]
assert piped and all(16 % l["pp"] == 0 and l["interleave"] == 16 // l["pp"] and l["pipeline_layout"] == "Et*4|(t*4|)*14tmL" for l in piped), piped
assert all(t["layout"]["pipeline_layout"] is None for t in d["top"] if t["layout"]["pp"] == 1)
' "$out/plj"
ok $? "the search under --pipeline-layout: every pipeline has pp dividing 16 and v = 16 / pp; JSON names the layout"
# the filled layout (fill=1): NVIDIA's recipe layout for 61 layers, made and searched by ccbench
"$CCBENCH" layout $G2 -x tp=1,pp=4,dp=64,mb=1,ep=64,v=4,fill=1,zero=1,rc=none >"$out/fill" 2>&1 &&
    grep -q "^layout   tp=1,pp=4,dp=64,cp=1,mb=1,v=4,sp=0,zero=1,rc=none,fill=1,ep=64$" "$out/fill" &&
    grep -q "layers per stage: first 16, middle 16, last 13 (the filled pipeline layout; middle: the most); " "$out/fill" &&
    grep -q "^pipeline layout Et\*4|(t\*4|)\*14tmL: chunks (layers) per stage: 0 4,4,4,4; 1 4,4,4,4; 2 4,4,4,4; 3 4,4,4,1$" "$out/fill" &&
    grep -q -- "--pipeline-model-parallel-size 4 --pipeline-model-parallel-layout 'Et\*4|(t\*4|)\*14tmL' --micro-batch-size 1 " "$out/fill" &&
    "$CCBENCH" layout $G2 --pipeline-layout "$PL" -x tp=1,pp=4,dp=64,mb=1,ep=64,zero=1,rc=none -j 2>/dev/null >"$out/fillg" &&
    "$CCBENCH" layout $G2 -x tp=1,pp=4,dp=64,mb=1,ep=64,v=4,fill=1,zero=1,rc=none -j 2>/dev/null |
    python3 -c '
import json, sys
f = json.load(sys.stdin)["explain"]
g = json.load(open(sys.argv[1]))["explain"]
assert f["layout"]["pipeline_layout"] == "Et*4|(t*4|)*14tmL" and f["layout"]["filled_pipeline_layout"] is True
assert g["layout"]["filled_pipeline_layout"] is False
assert f["time_s"] == g["time_s"] and f["memory_bytes"] == g["memory_bytes"], (f["time_s"], g["time_s"])
' "$out/fillg"
ok $? "-x fill=1 on DeepSeek-V3 pp 4, v 4: NVIDIA's Et*4|(t*4|)*14tmL, passed on, costed as --pipeline-layout gives it" "$(grep -E '^(layout|micro|pipeline layout)' "$out/fill")"
"$CCBENCH" layout $G2 -k 40 --json 2>/dev/null | python3 -c '
import json, sys
top = [t["layout"] for t in json.load(sys.stdin)["top"]]
filled = [l for l in top if l["filled_pipeline_layout"]]
assert filled and all(l["interleave"] > 1 and 61 % (l["pp"] * l["interleave"]) and 63 % (l["pp"] * l["interleave"]) and l["pipeline_layout"] for l in filled), filled
assert all(l["pipeline_layout"] is None for l in top if not l["filled_pipeline_layout"])
assert any(l["pp"] == 4 and l["interleave"] == 4 and l["pipeline_layout"] == "Et*4|(t*4|)*14tmL" for l in filled), top
'
ok $? "the search makes filled layouts where neither 61 nor 63 layers divide by pp x v, NVIDIA's pp 4 x v 4 among them"
"$CCBENCH" layout -m llama3-70b -g 64 -k 40 --json 2>/dev/null | python3 -c '
import json, sys
top = [t["layout"] for t in json.load(sys.stdin)["top"]]
bad = [l for l in top if l["filled_pipeline_layout"] and (80 % (l["pp"] * l["interleave"]) == 0 or (l["pp"] > 2 and 82 % (l["pp"] * l["interleave"]) == 0))]
assert top and not bad, bad
'
ok $? "llama3-70b: no filled layout where an even split runs"
"$CCBENCH" layout $G2 -x tp=1,pp=4,dp=64,mb=1,ep=64,v=4,fill=1,zero=1,rc=block,rcl=3 >"$out/fillb" 2>&1 &&
    grep -q "^recomputation: the first 3 layers of each model chunk recomputed whole, the others kept (the filled pipeline layout: a chunk of 3 layers or fewer is recomputed whole)$" "$out/fillb" &&
    grep -q -- "--pipeline-model-parallel-layout 'Et\*4|(t\*4|)\*14tmL' .*--recompute-granularity full --recompute-method block --recompute-num-layers 3 " "$out/fillb" &&
    "$CCBENCH" layout $G2 --pipeline-layout "$PL" --recompute block -k 60 --json 2>/dev/null | python3 -c '
import json, sys
top = [t["layout"] for t in json.load(sys.stdin)["top"]]
piped = [l for l in top if l["pp"] > 1]
assert piped and all(l["recompute"] == "block" and 1 <= l["recompute_layers"] < 4 and l["pipeline_layout"] == "Et*4|(t*4|)*14tmL" for l in piped), top
'
ok $? "-x fill=1,rc=block,rcl=3: every chunk's first 3 recomputed, the last chunk of 1 whole; passed on with the layout; --recompute block searches pipelines under --pipeline-layout" "$(grep '^recomputation' "$out/fillb")"
refuse "-x pp 4 on 61 layers names the filled layout" "pp 4 does not divide the 61 layers (fill=1 places them as Et\*4|(t\*4|)\*14tmL)" $G2 -x tp=1,pp=4,dp=64,v=4,ep=64
refuse "-x pp 16 on 126 layers names the split and the filled layout" "pp 16 does not divide the 126 layers (split=1 makes 8 slots per stage, the embedding and the loss counting as one layer each; fill=1 places them as Et\*8|(t\*8|)\*14t\*6L)" -m llama3-405b -g 1024 -x tp=8,pp=16
refuse "-x pp above the layers: no first/last suggested" "pp 25 does not divide the 24 layers$" -m megatron-1.7b -g 200 -x tp=1,pp=25,dp=8
refuse "-x fill=1 with split=1" "fill=1 and split=1 are two ways to split the pipeline unevenly; give one" $G2 -x tp=1,pp=4,dp=64,v=4,fill=1,split=1
refuse "-x fill=2" "fill needs an integer from 0 to 1, got '2'" $G2 -x tp=1,pp=4,dp=64,fill=2
refuse "-x fill=1 without a pipeline" "fill=1 (a filled pipeline layout) needs pp >= 2" $G2 -x tp=1,pp=1,dp=256,ep=64,fill=1
refuse "-x fill=1 leaving the last stage empty" "fill=1: 31 stages of 2 layers leave none of the 61 for the last (pp x v = 32)" $G2 -x tp=1,pp=8,dp=32,v=4,ep=8,fill=1
refuse "-x fill=1 where pp x v divides the layers" "fill=1: pp x v = 8 divides the 32 layers; the even split is the same layout" -m llama3-8b -g 16 -x tp=1,pp=4,dp=4,v=2,fill=1
refuse "-x fill=1 with --pipeline-layout" "fill=1 and an explicit pipeline layout (--pipeline-layout) do not go together" $G2 --pipeline-layout "$PL" -x tp=1,pp=4,dp=64,mb=1,ep=64,fill=1
"$CCBENCH" layout $G2 -g 192 --pipeline-layout "$PL" -x tp=1,pp=3,dp=64,v=2,fill=1,ep=64 -j 2>/dev/null | python3 -c '
import json, sys
l = json.load(sys.stdin)["explain"]["layout"]
assert l["pipeline_layout"] is None and l["filled_pipeline_layout"] is False, l
'
ok $? "fill=1 with a --pipeline-layout that pp does not divide: refused, and no layout named as followed"
refuse "--pipeline-layout that does not parse" "pipeline layout 'Et\*4|(t\*4|L': a '(' without its ')'" $G2 --pipeline-layout 'Et*4|(t*4|L'
refuse "-x with a pipeline layout of other layers" "the pipeline layout holds 60 transformer layers, the model 61" $G2 --pipeline-layout 'Et*4|(t*4|)*13t*3|tmL' -x tp=1,pp=4,dp=64,mb=1,ep=64
refuse "-x with a pipeline layout and first/last" "first/last and an explicit pipeline layout (--pipeline-layout) do not go together" $G2 --pipeline-layout "$PL" -x tp=1,pp=16,dp=16,mb=1,ep=8,first=4,last=1
refuse "-x pp not dividing the layout's stages" "the pipeline layout's 16 stages are not a multiple of pp 3" -m deepseek-v3 -g 384 --gpu-model gb200 --pipeline-layout "$PL" -x tp=1,pp=3,dp=128,mb=1,ep=64
refuse "--pipeline-layout of 1025 stages" "more than 1024 stages" -m llama3-8b -g 16 --pipeline-layout 'E(|)*1024t*32L'
refuse "--pipeline-layout with a quote inside a repeat of 0" "is not E, t, m, L" -m llama3-8b -g 16 --pipeline-layout "E(';x;')*0t*16|t*16L"
refuse "--pipeline-layout with an empty group" "an empty group '()'" -m llama3-8b -g 16 --pipeline-layout 'E()*3t*16|t*16L'
refuse "--pipeline-layout checked against the model before any pp" "pipeline-layout 'Et|tL': the pipeline layout holds 2 transformer layers, the model 32" -m llama3-8b -g 16 --pipeline-layout 'Et|tL'
refuse "-x v=1 against the layout's v" "v 1: the pipeline layout's 8 stages on pp 4 make v 2" -m llama3-8b -g 16 --pipeline-layout 'E(t*4|)*7t*4L' -x tp=1,pp=4,dp=4,mb=1,v=1
"$CCBENCH" layout -m llama3-8b -g 16 --pipeline-layout 'Et*2|t*14|t*15|tL' -x tp=1,pp=4,dp=4,mb=1,rc=full >"$out/plm" 2>&1 &&
    grep -q "^middle stage costed: stage 2 of 4 (0-based), the middle one with the most layers, with the second stage's layers in flight (the most of any middle stage)$" "$out/plm" &&
    grep -q "^memory per GPU by stage: first [0-9.]* GB, stage 2 [0-9.]* GB, last [0-9.]* GB$" "$out/plm"
ok $? "an explicit layout's middle stages of 14 and 15 layers: the one of 15 costed, and named" "$(grep -E '^(middle|memory)' "$out/plm")"
# a standalone MTP stage: Megatron-LM's own example (docs/user-guide/features/pipeline_parallel_layout.md)
PX='Et*3|(tt|)*29,m|L'
"$CCBENCH" layout $G2 --pipeline-layout "$PX" -x tp=1,pp=16,dp=16,mb=1,ep=8,zero=1,rc=block >"$out/plx" 2>&1 &&
    grep -q "^feasible yes$" "$out/plx" &&
    grep -q "; stage 14 also holds 1 multi-token-prediction layer (a standalone MTP stage; the logits on the last)$" "$out/plx" &&
    grep -q "^memory per GPU by stage: first [0-9.]* GB, second [0-9.]* GB, stage 14 (MTP) [0-9.]* GB, last [0-9.]* GB$" "$out/plx" &&
    grep -q -- "--pipeline-model-parallel-layout 'Et\*3|(tt|)\*29,m|L' " "$out/plx" &&
    "$CCBENCH" layout $G2 --pipeline-layout "$PX" -x tp=1,pp=16,dp=16,mb=1,ep=8,zero=1,rc=block -j 2>/dev/null |
    python3 -c 'import json, sys; e = json.load(sys.stdin)["explain"]; assert e["layout"]["mtp_stage"] == 14 and set(e["memory_bytes"]["stages"]) == {"first", "second", "mtp", "last"}, e["layout"]' &&
    "$CCBENCH" layout $G2 --pipeline-layout "$PL" -x tp=1,pp=4,dp=64,mb=1,ep=64,zero=1,rc=none -j 2>/dev/null |
    python3 -c 'import json, sys; e = json.load(sys.stdin)["explain"]; assert e["layout"]["mtp_stage"] is None and "mtp" not in e["memory_bytes"]["stages"], e["layout"]'
ok $? "--pipeline-layout $PX on pp 16: a standalone MTP stage on rank 14, costed, named, passed on; JSON mtp_stage" "$(grep -E '^(micro|memory per GPU by)' "$out/plx")"
refuse "--pipeline-layout with the MTP layer on the first rank" "the pipeline layout's MTP layers are on the first pipeline rank (ccbench costs them on a later rank)" $G2 --pipeline-layout "$PX" -x tp=1,pp=2,dp=128,mb=1,ep=8
refuse "--pipeline-layout with the MTP layer in a chunk before a rank's last" "MTP layers are in chunk 0 of rank 2, not in a rank's last chunk" $G2 --pipeline-layout 'Et*30|t*31|m|||||L' -x tp=1,pp=4,dp=64,mb=1,ep=8
refuse "--recompute-modules layernorm on a model whose norms are all fused" "recompute module layernorm has nothing to recompute: the model has neither experts nor latent attention" -m llama3-8b -g 16 --recompute-modules layernorm
printf '{"preset": "llama3-8b", "recompute": "full", "recompute_modules": "mlp"}\n' >"$out/rcmf.json"
refuse "spec recompute_modules with the spec's full recomputation under --recompute model" "the spec's recompute_modules) are for selective recomputation, and the layouts here recompute full (--recompute model)" -m "$out/rcmf.json" -g 16 --recompute model
python3 -c 'import json,sys; json.dump({"preset": "llama3-8b", "recompute_modules": ["core_attn"] * 30}, open(sys.argv[1], "w"))' "$out/rcml.json"
refuse "spec recompute_modules too long" '"recompute_modules" is longer than 255 characters' -m "$out/rcml.json" -g 16
# the flex dispatcher (DeepEP, HybridEP) and group-limited routing
GD="-m deepseek-v3 -g 1024 --precision fp8 --global-batch 15360 -x tp=1,pp=16,mb=1,ep=64,zero=1,rc=full,first=4,last=1"
"$CCBENCH" layout $GD --dispatcher deepep >"$out/dd" 2>&1
"$CCBENCH" layout $GD >"$out/da" 2>&1
grep -q "^# habits .*, DeepEP dispatcher," "$out/dd" &&
    grep -q -- "--moe-router-num-groups 8 --moe-router-group-topk 4 --expert-model-parallel-size 64 --expert-tensor-parallel-size 1 --moe-token-dispatcher-type flex --moe-grouped-gemm --moe-flex-dispatcher-backend deepep" "$out/dd" &&
    grep -q -- "--moe-token-dispatcher-type alltoall --moe-grouped-gemm" "$out/da" &&
    grep -q "# experts: the deepep dispatcher is costed by the bytes it moves" "$out/dd" &&
    "$CCBENCH" layout $GD --dispatcher deepep -j 2>/dev/null | python3 -c '
import json, subprocess, sys
d = json.load(sys.stdin)
a = json.loads(subprocess.run(sys.argv[1:], capture_output=True, text=True).stdout)
assert d["habits"]["dispatcher"] == "deepep" and a["habits"]["dispatcher"] == "alltoall"
assert d["model"]["router_groups"] == 8 and d["model"]["router_group_topk"] == 4
td, ta = d["explain"]["time_s"], a["explain"]["time_s"]
assert td["compute"] == ta["compute"] and td["ep_comm"] < 0.5 * ta["ep_comm"], (td, ta)' "$CCBENCH" layout $GD -j
ok $? "--dispatcher deepep: said, passed on as flex with the deepep backend and the router groups; its exchange under half the all-to-all's, compute alike" "$(grep -E 'expert-parallel all-to-all' "$out/dd" "$out/da")"
"$CCBENCH" layout -m deepseek-v3 -g 256 --gpu-model gb200 --gpus-per-node 64 --gpus-per-host 4 --precision fp8 --grad-reduce bf16 --global-batch 4096 --pipeline-layout 'Et*4|(t*4|)*14tmL' --dispatcher deepep -x tp=1,pp=4,dp=64,mb=1,ep=64,zero=1,rc=selective 2>&1 |
    grep -q "DeepEP backend does not run across (only hybridep does): --dispatcher hybridep" &&
    "$CCBENCH" layout -m deepseek-v3 -g 256 --gpu-model gb200 --gpus-per-node 64 --gpus-per-host 4 --precision fp8 --grad-reduce bf16 --global-batch 4096 --pipeline-layout 'Et*4|(t*4|)*14tmL' --dispatcher hybridep -x tp=1,pp=4,dp=64,mb=1,ep=64,zero=1,rc=selective 2>&1 |
    grep -q -- "--moe-token-dispatcher-type flex --moe-grouped-gemm --moe-flex-dispatcher-backend hybridep"
ok $? "--dispatcher deepep across the hosts of an NVL72 domain: a note names hybridep, which is passed on"
refuse "--dispatcher deepep with --moe-pad 1" "--dispatcher deepep does not pad the experts' input to the capacity" -m mixtral-8x7b -g 16 --moe-capacity 1 --moe-pad 1 --dispatcher deepep
refuse "--dispatcher of another name" "unknown --dispatcher 'nccl' (one of alltoall|deepep|hybridep)" -m mixtral-8x7b -g 16 --dispatcher nccl
json_edit "$T/hf-deepseek-v2-lite.json" "$out/hf-groups.json" 'c["n_group"] = 8; c["topk_group"] = 3'
"$CCBENCH" layout -m "$out/hf-groups.json" -g 16 -k 1 -j 2>/dev/null |
    python3 -c 'import json, sys; m = json.load(sys.stdin)["model"]; assert m["router_groups"] == 8 and m["router_group_topk"] == 3, m' &&
    "$CCBENCH" layout -m "$T/hf-deepseek-v2-lite.json" -g 16 -k 1 -j 2>/dev/null |
    python3 -c 'import json, sys; m = json.load(sys.stdin)["model"]; assert m["router_groups"] == 0, m'
ok $? "config.json n_group 8, topk_group 3 read as the router groups; DeepSeek-V2-Lite's n_group 1: none"
printf '{"preset": "deepseek-v3", "router_groups": 0, "router_group_topk": 0}\n' >"$out/rg0.json"
"$CCBENCH" layout -m "$out/rg0.json" -g 256 --gpu-model b200 -k 1 -j 2>/dev/null |
    python3 -c 'import json, sys; m = json.load(sys.stdin)["model"]; assert m["router_groups"] == 0 and m["name"] == "deepseek-v3 (changed)", m'
ok $? "spec router_groups 0 on the deepseek-v3 preset: unlimited routing, the model named changed"
"$CCBENCH" layout -m mixtral-8x7b -g 16 --dispatcher deepep -x tp=2,pp=1,dp=8,mb=1,sp=1,zero=1,rc=full,ep=1 -j 2>/dev/null |
    python3 -c 'import json, sys; a = json.load(sys.stdin)["explain"]["megatron_args"]; assert "--moe-token-dispatcher-type alltoall" in a and "flex" not in a, a'
ok $? "--dispatcher deepep on a layout without expert parallelism: the all-to-all's arguments (Megatron-Core's DeepEP needs ep x etp > 1)"
"$CCBENCH" layout -m mixtral-8x7b -g 64 --gpu-model gb200 --gpus-per-node 64 --gpus-per-host 4 --dispatcher deepep -x tp=4,pp=1,dp=16,mb=1,sp=1,zero=1,rc=full,ep=2,etp=4 2>&1 |
    grep -q "DeepEP backend does not run across (only hybridep does)"
ok $? "--dispatcher deepep, ep 2 x etp 4 over two hosts of an NVL72 domain: the note names hybridep"
for o in "--dispatcher deepep" "--moe-capacity 1.25" "--moe-pad 0" "--moe-pad 1" "--moe-imbalance 1.5" "--ep-overlap 1"; do
    refuse "dense model with $o" "^ccbench: error: ${o%% *} applies to models with experts; model 'llama3-8b' has none$" -m llama3-8b -g 8 $o
done
json_edit "$T/hf-deepseek-v2-lite.json" "$out/hf-nogt.json" 'c["n_group"] = 8; c.pop("topk_group", None)'
refuse "config.json with n_group and no topk_group" '"n_group" 8 needs a "topk_group" from 1 to 8' -m "$out/hf-nogt.json" -g 16
json_edit "$T/hf-deepseek-v2-lite.json" "$out/hf-gt9.json" 'c["n_group"] = 8; c["topk_group"] = 9'
refuse "config.json with topk_group over n_group" '"n_group" 8 needs a "topk_group" from 1 to 8' -m "$out/hf-gt9.json" -g 16
printf '{"preset": "deepseek-v3", "router_groups": 8, "router_group_topk": 8}\n' >"$out/rg8.json"
"$CCBENCH" layout -m "$out/rg8.json" -g 256 --gpu-model b200 -k 1 -j 2>/dev/null |
    python3 -c 'import json, sys; m = json.load(sys.stdin)["model"]; assert m["router_groups"] == 0 and m["router_group_topk"] == 0, m'
ok $? "spec choosing all 8 groups: no limit (router groups 0, nothing passed on)"
json_edit "$T/hf-deepseek-v2-lite.json" "$out/hf-tgonly.json" 'c["topk_group"] = 3; c.pop("n_group", None)'
refuse "config.json with topk_group and no n_group" '"topk_group" 3 without "n_group"' -m "$out/hf-tgonly.json" -g 16
json_edit "$T/hf-deepseek-v2-lite.json" "$out/hf-g7.json" 'c["n_group"] = 7; c["topk_group"] = 3'
refuse "config.json with n_group not dividing the experts" '"n_group" 7 must divide the 64 experts' -m "$out/hf-g7.json" -g 16
printf '{"preset": "deepseek-v3", "router_groups": 2048, "router_group_topk": 1024}\n' >"$out/rg2048.json"
refuse "spec router_groups beyond 1,024" '"router_groups" '"'"'2048'"'"' is out of range (0 to 1024)' -m "$out/rg2048.json" -g 256
refuse "an explicit layout's middle stage over memory named as --explain names it" "needs [0-9.]* GB per GPU on stage 2, more than" -m deepseek-v3 -g 256 --gpu-model b200 --precision fp8 --pipeline-layout 'Et|t|t*59|mL' -x tp=1,pp=4,dp=64,mb=1,ep=8,rc=full
"$CCBENCH" layout -m mixtral-8x7b -g 64 --gpu-model h100-sxm --moe-capacity 0.001 -k 3 -j 2>/dev/null |
    python3 -c 'import json, sys; t = json.load(sys.stdin)["top"]; assert t and all(0 < r["mfu"] < 1 for r in t), [r["mfu"] for r in t]'
ok $? "--moe-capacity 0.001: the dropped tokens' work is not counted as useful, MFU under 100% (it was 284%)"
"$CCBENCH" layout -m deepseek-v3 -g 504 --gpu-model b200 --precision fp8 --pipeline-layout 'Et|(t|)*59,t|m|L' -k 1 -j 2>/dev/null |
    python3 -c 'import json, sys; t = json.load(sys.stdin)["top"]; assert t and t[0]["layout"]["pp"] == 63 and t[0]["layout"]["mtp_stage"] == 61, t[0]["layout"]'
ok $? "an explicit layout of 63 stages for 61 layers (the MTP layer and the loss alone): the search tries pp 63"
printf '{"preset": "llama3-8b", "router_groups": 8}\n' >"$out/rgd.json"
refuse "spec router_groups on a dense model" '"router_groups" without experts' -m "$out/rgd.json" -g 16
printf '{"preset": "deepseek-v3", "router_groups": 6}\n' >"$out/rg6.json"
refuse "spec router_groups not dividing the experts" "the groups must divide the 256 experts" -m "$out/rg6.json" -g 256
# expert tensor parallelism (Megatron-Core --expert-tensor-parallel-size)
"$CCBENCH" layout -m mixtral-8x7b -g 16 -x tp=2,pp=1,dp=8,mb=1,sp=1,zero=1,rc=full,ep=4,etp=2 >"$out/etp" 2>&1 &&
    grep -q "^layout   tp=2,pp=1,dp=8,cp=1,mb=1,v=1,sp=1,zero=1,rc=full,ep=4,etp=2$" "$out/etp" &&
    grep -q "^experts: 2 of the 8 experts of every layer per GPU (ep 4), each split over 2 GPUs (etp 2), their gradients reduced over 2 GPUs;" "$out/etp" &&
    grep -q -- "--expert-model-parallel-size 4 --expert-tensor-parallel-size 2 " "$out/etp" &&
    "$CCBENCH" layout -m mixtral-8x7b -g 16 -x tp=2,pp=1,dp=8,mb=1,sp=1,zero=1,rc=full,ep=4,etp=2 -j 2>/dev/null |
    python3 -c 'import json, sys; l = json.load(sys.stdin)["explain"]["layout"]; assert l["ep"] == 4 and l["etp"] == 2 and l["expert_dp"] == 2, l'
ok $? "-x etp=2: said, passed on as --expert-tensor-parallel-size 2, JSON etp" "$(grep -E '^(layout|experts)' "$out/etp")"
# the flex dispatcher spread over etp alone (ep 1): its notes as at ep > 1, and none on routing
# balance, which does not matter at ep 1
"$CCBENCH" layout -m mixtral-8x7b --gpus 72 --gpus-per-node 72 --gpus-per-host 4 --global-batch 72 --dispatcher deepep -x tp=8,pp=1,dp=9,mb=1,sp=1,zero=1,rc=full,ep=1,etp=8 >"$out/flex1" 2>&1 &&
    grep -q -- "--moe-token-dispatcher-type flex --moe-grouped-gemm --moe-flex-dispatcher-backend deepep" "$out/flex1" &&
    grep -q "DeepEP backend does not run across (only hybridep does)" "$out/flex1" &&
    grep -q "the deepep dispatcher is costed by the bytes it moves" "$out/flex1" &&
    ! grep -q "routing is costed as balanced" "$out/flex1" && grep -q "set no load balancing" "$out/flex1"
ok $? "--dispatcher deepep at ep=1, etp=8: flex passed on with both notes, no note on routing balance" "$(grep '# experts' "$out/flex1" | cut -c1-120)"
# the search tries 2, 4, 8 and tp as etp where they divide tp: Mixtral 8x22B on 64 H100 at tp=4, pp=2 fits only
# with the experts split, and etp=2 is faster than Megatron-Core's default etp = tp = 4
"$CCBENCH" layout -m mixtral-8x22b -g 64 -k 40 >"$out/etps" 2>&1 &&
    grep -q " tp=4,pp=2,dp=8,cp=1,mb=1,v=7,sp=1,zero=1,rc=none,ep=8,etp=2 " "$out/etps" &&
    ! "$CCBENCH" layout -m mixtral-8x22b -g 64 -x tp=4,pp=2,dp=8,mb=1,v=7,sp=1,zero=1,rc=none,ep=8,etp=1 >/dev/null 2>&1 &&
    "$CCBENCH" layout -m mixtral-8x22b -g 64 -x tp=4,pp=2,dp=8,mb=1,v=7,sp=1,zero=1,rc=none,ep=8,etp=2 -j 2>/dev/null >"$out/etp2" &&
    "$CCBENCH" layout -m mixtral-8x22b -g 64 -x tp=4,pp=2,dp=8,mb=1,v=7,sp=1,zero=1,rc=none,ep=8,etp=4 -j 2>/dev/null >"$out/etp4" &&
    python3 -c 'import json, sys; a, b = (json.load(open(f))["explain"]["tokens_per_s"] for f in sys.argv[1:]); assert a > b, (a, b)' "$out/etp2" "$out/etp4"
ok $? "search: etp=2 at tp=4 (etp=1 does not fit, etp=4 is slower)" "$(grep 'tp=4,pp=2,dp=8' "$out/etps")"
# with 384 experts and tp=32 an NVL72-style domain has up to 80 (ep, etp) pairs a layout; the
# search keeps them all (a fixed list of 63 once dropped ep=64 and above here)
printf '{"preset": "qwen3-30b-a3b", "experts": 384}\n' >"$out/q384.json"
"$CCBENCH" layout -m "$out/q384.json" -g 3072 --gpu-model gb200 --gpus-per-node 64 --global-batch 1536 -x tp=32,pp=2,dp=48,mb=1,sp=1,zero=0,rc=full,ep=64 2>&1 |
    grep -q "tp=32,pp=2,dp=48 ranks [0-9]*[a-z]* of [0-9]* at its best setting, .*,ep=64 ("
ok $? "search: 384 experts at tp=32, every ep kept (the best setting of tp=32,pp=2,dp=48 has ep=64)"
refuse "-x ep x etp past an int (it crashed)" "ep 65536 does not divide the 8 experts" -m mixtral-8x7b -g 16 -x tp=1,dp=16,ep=65536,etp=65536
refuse "-x ep x etp past an int with the flex dispatcher" "ep 65536 does not divide the 8 experts" -m mixtral-8x7b -g 16 --dispatcher deepep -x tp=1,dp=16,ep=65536,etp=65536
refuse "-x etp not dividing the experts' ranks" "ep 8 x etp 4 does not divide tp\*cp\*dp = 16" -m mixtral-8x7b -g 16 -x tp=2,pp=1,dp=8,mb=1,sp=1,ep=8,etp=4
refuse "-x rcl as large as the largest chunk" "rcl 4: the largest model chunk here has 4 layers, and block recomputation keeps at least one" -m deepseek-v3 -g 256 --gpu-model b200 -x tp=1,pp=16,dp=16,mb=1,ep=8,first=4,last=1,rc=block,rcl=4
"$CCBENCH" layout -m deepseek-v3 -g 256 --gpu-model b200 --recompute block -k 20 >"$out/ublks" 2>&1 &&
    grep -q '^ *[0-9]*  tp=[0-9]*,pp=16,.*,rc=block,rcl=[0-9]*,first=4,last=1,' "$out/ublks"
ok $? "--recompute block searches the uneven split 4, 14 x 4, 1" "$(grep -E '^ +[0-9]+  ' "$out/ublks" | head -5)"
refuse "-x first/last that leave no middle layers" "first 61 + last 1 leave 0 of the 61 layers for the 14 middle stages" -m deepseek-v3 -g 1024 -x tp=4,pp=16,dp=16,sp=1,zero=1,ep=8,first=61,last=1
printf '{"model_type":"mpt","n_layers":4,"d_model":8192,"n_heads":64,"vocab_size":1000,"expansion_ratio":1024,"num_experts":4,"num_experts_per_tok":2,"n_shared_experts":512}\n' >"$out/shwrap.json"
refuse "shared experts whose size would wrap" "shared expert size (n_shared_experts x the expert size) 4294967296 is more than 100000000" -m "$out/shwrap.json" -g 8
json_edit "$T/hf-deepseek-v2-lite.json" "$out/nolora.json" 'c["kv_lora_rank"]=None'
refuse "latent head widths without kv_lora_rank" '"qk_nope_head_dim" without "kv_lora_rank"' -m "$out/nolora.json" -g 16
json_edit "$T/hf-deepseek-v2-lite.json" "$out/nomis.json" 'c.pop("moe_intermediate_size")'
refuse "dense layers first without moe_intermediate_size" 'dense and expert layers mixed without "moe_intermediate_size"' -m "$out/nomis.json" -g 16
json_edit "$T/hf-deepseek-v2-lite.json" "$out/step0.json" 'c["decoder_sparse_step"]=0'
refuse "decoder_sparse_step 0" '"decoder_sparse_step" 0: every k-th layer needs k of at least 1' -m "$out/step0.json" -g 16
refuse "-x first without last" "first and last (the layers of the first and the last pipeline stage) go together" -m deepseek-v3 -g 1024 -x tp=4,pp=16,first=4
refuse "-x first/last that leave the middle uneven" "do not divide evenly into the 14 middle stages" -m deepseek-v3 -g 1024 --gpu-model h100-sxm --explain tp=4,pp=16,dp=16,mb=1,sp=1,zero=1,first=4,last=2,ep=8
# dense and expert layers mixed: Qwen2-MoE's every 2nd layer with experts
"$CCBENCH" layout -m "$out/mixed.json" -g 64 -k 1 >"$out/mx" 2>&1 &&
    grep -q "top 4 in 12 of the layers (the others dense)" "$out/mx" &&
    grep -q -- "--moe-layer-freq '(\[0\]\*1+\[1\])\*12'" "$out/mx"
ok $? "decoder_sparse_step 2: 12 of 24 layers with experts, Megatron-LM's pattern" "$(head -1 "$out/mx"; grep -o -- "--moe-layer-freq [^ ]*" "$out/mx" | head -1)"
# the first layers dense (GLM-4.5's shape): header, --explain per stage, the pattern as
# Python reads it (what Megatron-LM's --moe-layer-freq evaluates), the JSON
"$CCBENCH" layout -m "$T/hf-glm4-moe.json" -g 256 --gpu-model h100-sxm --seq-len 4096 --global-batch 1024 -k 1 --explain tp=4,pp=4,dp=16,mb=1,ep=16,zero=1,sp=1,rc=none >"$out/glm" 2>&1 &&
    grep -q "^# model   glm4_moe: 356.8B parameters (34.0B active), 160 experts of ffn 1536, shared 1536, top 8 in 89 of the layers (the others dense), l=92+1 mtp .* ffn=12288" "$out/glm" &&
    grep -q "1 multi-token-prediction layer trained (--mtp 0: none)" "$out/glm" &&
    grep -q "^layers with experts per stage: first 20 of 23, stage 1 23 of 23, last 23 of 23; the others dense (MLP of ffn 12288)$" "$out/glm" &&
    grep -q -- "--ffn-hidden-size 12288 .*--add-qkv-bias\|--add-qkv-bias.*--ffn-hidden-size 12288" "$out/glm"
ok $? "GLM-4.5-shaped config: 3 dense layers first, shown per stage" "$(head -1 "$out/glm"; grep "^layers with" "$out/glm")"
"$CCBENCH" layout -m "$T/hf-glm4-moe.json" -g 256 --gpu-model h100-sxm -k 1 --json >"$out/glmj" 2>&1 &&
    python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
m, t = d["model"], d["top"][0]
assert m["first_dense_layers"] == 3 and m["expert_layers"] == 89 and m["moe_layer_step"] == 1, m
pat = re.search(r"--moe-layer-freq \x27([^\x27]*)\x27", t["megatron_args"]).group(1)
p = eval(pat)  # what Megatron-LM does with it
assert p == [0] * 3 + [1] * 89, p
lay = t["layout"]
pp = lay["pp"]
e = lay["expert_layers_per_stage"]
assert len(e) == 3 and e[0] <= lay["layers_per_stage"][0] and (pp < 3) == (lay["middle_stage"] is None), lay
' "$out/glmj"
ok $? "... JSON: dense and expert layer counts, Megatron-LM's pattern evaluates to 3 dense + 89" "$(head -c 300 "$out/glmj")"
sed 's/"decoder_sparse_step":2/"decoder_sparse_step":3/; s/"num_hidden_layers":24/"num_hidden_layers":26/' "$out/mixed.json" >"$out/mixed3.json"
"$CCBENCH" layout -m "$out/mixed3.json" -g 64 -k 1 --json >"$out/mx3" 2>&1 &&
    python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
pat = re.search(r"--moe-layer-freq \x27([^\x27]*)\x27", d["top"][0]["megatron_args"]).group(1)
assert eval(pat) == [1 if (i + 1) % 3 == 0 else 0 for i in range(26)], pat
' "$out/mx3"
ok $? "every 3rd of 26 layers: the pattern evaluates to the layers with experts" "$(grep -o -- "--moe-layer-freq [^ ]*" "$out/mx3" | head -1)"
sed 's/"decoder_sparse_step":2/"decoder_sparse_step":2,"mlp_only_layers":[5]/' "$out/mixed.json" >"$out/mlponly.json"
refuse "mlp_only_layers [5]" '"mlp_only_layers" places dense and expert layers in a way not modelled' -m "$out/mlponly.json" -g 64
printf '{"model_type":"deepseek","hidden_size":2048,"num_hidden_layers":28,"num_attention_heads":16,"vocab_size":102400,"n_routed_experts":64,"num_experts_per_tok":6,"moe_intermediate_size":1408,"intermediate_size":10944,"first_k_dense_replace":1,"moe_layer_freq":2}\n' >"$out/dsfreq.json"
refuse "DeepSeek moe_layer_freq 2" '"moe_layer_freq" places dense and expert layers' -m "$out/dsfreq.json" -g 16
sed 's/"moe_layer_freq":2/"moe_layer_freq":1/; s/"first_k_dense_replace":1/"first_k_dense_replace":28/' "$out/dsfreq.json" >"$out/dsall.json"
refuse "first_k_dense_replace = the layers" "no layer has experts (first_dense_layers 28" -m "$out/dsall.json" -g 16
sed 's/"first_k_dense_replace":1/"first_k_dense_replace":-1/' "$out/dsfreq.json" >"$out/dsneg.json"
refuse "first_k_dense_replace -1" '"first_k_dense_replace" must be a whole number from 0 to 100000' -m "$out/dsneg.json" -g 16
printf '{"model_type":"ernie4_5_moe","hidden_size":2560,"num_hidden_layers":28,"num_attention_heads":20,"num_key_value_heads":4,"vocab_size":103424,"moe_num_experts":64,"moe_k":6,"moe_intermediate_size":1536,"intermediate_size":12288,"moe_num_shared_experts":2,"moe_layer_end_index":20}\n' >"$out/ernie.json"
refuse "ERNIE moe_layer_end_index before the last layer" '"moe_layer_end_index" places dense and expert layers' -m "$out/ernie.json" -g 16
sed 's/"moe_layer_end_index":20/"moe_layer_end_index":27/' "$out/ernie.json" >"$out/ernie27.json"
"$CCBENCH" layout -m "$out/ernie27.json" -g 16 -k 1 >"$out/er" 2>&1 &&
    grep -q "64 experts of ffn 1536, shared 3072, top 6 in 27 of the layers" "$out/er"
ok $? "ERNIE 4.5 config: its default first dense layer, 2 shared experts" "$(head -1 "$out/er")"
printf '{"name":"x","layers":4,"hidden":1024,"heads":8,"vocab":1000,"seq_len":512,"global_batch":8,"first_dense_layers":1}\n' >"$out/fdd.json"
refuse "spec: first_dense_layers without experts" '"first_dense_layers" without experts' -m "$out/fdd.json" -g 8
printf '{"name":"x","layers":4,"hidden":1024,"heads":8,"vocab":1000,"seq_len":512,"global_batch":8,"experts":8,"topk":2,"moe_layer_step":5}\n' >"$out/mls.json"
refuse "spec: moe_layer_step above the layers" "moe_layer_step (every k-th layer with experts) '5' must be from 0 to the 4 layers" -m "$out/mls.json" -g 8
printf '{"name":"x","layers":4,"hidden":1024,"heads":8,"vocab":1000,"seq_len":512,"global_batch":8,"experts":8,"topk":2,"first_dense_layers":2,"moe_layer_step":2}\n' >"$out/mls2.json"
"$CCBENCH" layout -m "$out/mls2.json" -g 8 -k 1 >"$out/m2" 2>&1 &&
    grep -q "top 2 in 1 of the layers (the others dense)" "$out/m2"
ok $? "spec: first 2 dense, then every 2nd: layer 4 alone has experts" "$(head -1 "$out/m2")"
sed 's/"decoder_sparse_step":2/"decoder_sparse_step":1/' "$out/mixed.json" >"$out/qwen2moe.json"
"$CCBENCH" layout -m "$out/qwen2moe.json" -g 16 -k 1 >"$out/q2" 2>&1 &&
    grep -q "60 experts of ffn 1408, shared 5632, top 4" "$out/q2" &&
    grep -q -- "--moe-shared-expert-intermediate-size 5632" "$out/q2" && grep -q -- "--add-qkv-bias" "$out/q2"
ok $? "Qwen2-MoE config: a shared expert and the QKV bias read and passed on" "$(head -1 "$out/q2")"
# a shared expert given as a count of routed-size experts (DeepSeek-MoE) or by its own size
printf '{"model_type":"deepseek","hidden_size":2048,"num_hidden_layers":28,"num_attention_heads":16,"num_key_value_heads":16,"vocab_size":102400,"n_routed_experts":64,"num_experts_per_tok":6,"moe_intermediate_size":1408,"n_shared_experts":2,"intermediate_size":10944,"first_k_dense_replace":0}\n' >"$out/dsmoe.json"
"$CCBENCH" layout -m "$out/dsmoe.json" -g 16 -k 1 >"$out/dsm" 2>&1 &&
    grep -q "64 experts of ffn 1408, shared 2816, top 6" "$out/dsm" &&
    grep -q -- "--moe-shared-expert-intermediate-size 2816" "$out/dsm"
ok $? "DeepSeek-MoE config: n_shared_experts 2 x moe_intermediate_size 1408 read as a 2816 shared expert" "$(head -1 "$out/dsm")"
sed 's/"n_shared_experts":2/"n_shared_experts":0/' "$out/dsmoe.json" >"$out/dsmoe0.json"
"$CCBENCH" layout -m "$out/dsmoe0.json" -g 16 -k 1 >"$out/dsm0" 2>&1 &&
    grep -q "64 experts of ffn 1408, top 6" "$out/dsm0"
ok $? "... n_shared_experts 0: none" "$(head -1 "$out/dsm0")"
sed 's/"n_shared_experts":2/"n_shared_experts":-1/' "$out/dsmoe.json" >"$out/dsmoe-1.json"
refuse "n_shared_experts -1" '"n_shared_experts" must be a whole number from 0 to 1000' -m "$out/dsmoe-1.json" -g 16
sed 's/"n_shared_experts":2/"shared_intermediate_size":1024/' "$out/dsmoe.json" >"$out/gms.json"
"$CCBENCH" layout -m "$out/gms.json" -g 16 -k 1 >"$out/gms" 2>&1 &&
    grep -q "64 experts of ffn 1408, shared 1024, top 6" "$out/gms"
ok $? "shared_intermediate_size (Granite-MoE-shared) read" "$(head -1 "$out/gms")"
# layers of more than one kind are refused by name
printf '{"model_type":"gpt_oss","hidden_size":2880,"num_hidden_layers":2,"num_attention_heads":64,"num_key_value_heads":8,"head_dim":64,"vocab_size":201088,"num_local_experts":32,"num_experts_per_tok":4,"intermediate_size":2880,"layer_types":["sliding_attention","full_attention"]}\n' >"$out/oss.json"
refuse "GPT-OSS config (sliding-window layers)" '"layer_types" has "sliding_attention" layers' -m "$out/oss.json" -g 64
sed 's/"sliding_attention"/"full_attention"/' "$out/oss.json" >"$out/ossfull.json"
"$CCBENCH" layout -m "$out/ossfull.json" -g 64 -k 1 >"$out/ossf" 2>&1
ok $? "layer_types all full_attention: read" "$(head -1 "$out/ossf")"
printf '{"model_type":"qwen3_next","hidden_size":2048,"num_hidden_layers":48,"num_attention_heads":16,"num_key_value_heads":2,"head_dim":256,"vocab_size":151936,"num_experts":512,"num_experts_per_tok":10,"moe_intermediate_size":512,"shared_expert_intermediate_size":512,"intermediate_size":5120,"full_attention_interval":4}\n' >"$out/q3n.json"
refuse "Qwen3-Next config (linear attention)" 'linear-attention or hybrid config ("full_attention_interval")' -m "$out/q3n.json" -g 64
printf '{"model_type":"llama4_text","hidden_size":5120,"num_hidden_layers":48,"num_attention_heads":40,"num_key_value_heads":8,"head_dim":128,"vocab_size":202048,"num_local_experts":16,"num_experts_per_tok":1,"intermediate_size":8192,"interleave_moe_layer_step":1}\n' >"$out/l4.json"
refuse "Llama 4 config" 'model_type "llama4_text": its chunked-attention layers' -m "$out/l4.json" -g 64
printf '{"preset":"qwen3-30b-a3b","experts":0}\n' >"$out/dense0.json"
"$CCBENCH" layout -m "$out/dense0.json" -g 8 -k 1 >"$out/d0" 2>&1 &&
    grep -q "^# model   qwen3-30b-a3b (changed): 3.3B parameters, l=48" "$out/d0" && ! head -1 "$out/d0" | grep -q "expert"
ok $? "a spec's experts 0 makes a preset dense" "$(head -1 "$out/d0")"
printf '{"preset":"llama3-8b","experts":8}\n' >"$out/notopk.json"
refuse "spec with experts and no topk" '"experts" needs "topk"' -m "$out/notopk.json" -g 64
printf '{"preset":"llama3-8b","experts":8,"topk":9}\n' >"$out/bigk.json"
refuse "spec with topk above the experts" "topk '9' must be from 1 to the 8 experts" -m "$out/bigk.json" -g 64
printf '{"preset":"llama3-8b","experts":1,"topk":1}\n' >"$out/one.json"
refuse "spec with one expert" "experts '1': 0 for a dense model, else at least 2" -m "$out/one.json" -g 64
printf '{"preset":"llama3-8b","experts":8,"topk":2,"moe_ffn":4096}\n' >"$out/spec-moe.json"
"$CCBENCH" layout -m "$out/spec-moe.json" -g 64 -k 1 >"$out/sm" 2>&1 &&
    grep -q "^# model   llama3-8b (changed): .*8 experts of ffn 4096, top 2" "$out/sm" &&
    grep -q "experts, topk, moe_ffn changed" "$out/sm"
ok $? "a spec adds experts to a preset: named as changed" "$(head -2 "$out/sm" | tr '\n' ' ')"
# a skewed router: the habits line, the explain line, the JSON; a factor below 1 refused
"$CCBENCH" layout -m mixtral-8x7b -g 64 --gpu-model h100-sxm --moe-imbalance 1.5 -x tp=1,pp=1,dp=64,ep=8,zero=1,rc=full >"$out/sk" 2>&1 &&
    grep -q "^# habits .*, expert routing skewed 1.50x" "$out/sk" &&
    grep -q "^experts: 1 of the 8 experts .*the busiest GPU's experts get 1.50x their balanced share (--moe-imbalance)" "$out/sk"
ok $? "--moe-imbalance 1.5: said in the habits and the experts line" "$(grep -E '^(# habits|experts)' "$out/sk")"
"$CCBENCH" layout -m mixtral-8x7b -g 64 --gpu-model h100-sxm --moe-imbalance 1.5 -k 1 --json >"$out/skj" 2>&1 &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["habits"]["moe_imbalance"] == 1.5, d["habits"]' "$out/skj"
ok $? "... and in the JSON habits"
refuse "--moe-imbalance 0.5" "moe-imbalance" -m mixtral-8x7b -g 64 --moe-imbalance 0.5
# a factor beyond what one rank can take (Mixtral at ep 8: one expert per GPU, at most
# every token once: 8 x 1 / 2 = 4 times its share) is costed at that, and said so
"$CCBENCH" layout -m mixtral-8x7b -g 64 --gpu-model h100-sxm --moe-imbalance 8 -x tp=1,pp=1,dp=64,ep=8,zero=1,rc=full --json >"$out/sk8" 2>&1 &&
    "$CCBENCH" layout -m mixtral-8x7b -g 64 --gpu-model h100-sxm --moe-imbalance 4 -x tp=1,pp=1,dp=64,ep=8,zero=1,rc=full --json >"$out/sk4" 2>&1 &&
    "$CCBENCH" layout -m mixtral-8x7b -g 64 --gpu-model h100-sxm --moe-imbalance 3 -x tp=1,pp=1,dp=64,ep=8,zero=1,rc=full --json >"$out/sk3" 2>&1 &&
    python3 -c '
import json, sys
d8, d4, d3 = (json.load(open(f))["explain"] for f in sys.argv[1:4])
assert d8["layout"]["expert_skew"] == 4 and d3["layout"]["expert_skew"] == 3, (d8["layout"], d3["layout"])
assert d8["time_s"]["step"] == d4["time_s"]["step"] > d3["time_s"]["step"], (d8["time_s"], d3["time_s"])
' "$out/sk8" "$out/sk4" "$out/sk3" &&
    "$CCBENCH" layout -m mixtral-8x7b -g 64 --gpu-model h100-sxm --moe-imbalance 8 -x tp=1,pp=1,dp=64,ep=8,zero=1,rc=full 2>&1 |
    grep -q "^experts: .* get 4.00x their balanced share, all the copies of tokens they can take (--moe-imbalance at its most here, 4.00)$"
ok $? "--moe-imbalance 8 on Mixtral at ep 8: costed as 4, the most one GPU can take, and said so"
# the expert all-to-all overlap: in the habits, the explain text, the JSON and the arguments
"$CCBENCH" layout -m qwen3-30b-a3b -g 16 --gpu-model h100-sxm --ep-overlap 1 -x tp=1,pp=1,dp=16,ep=16,zero=1,rc=none >"$out/epo" 2>&1 &&
    grep -q "^# habits .*, expert all-to-all overlap" "$out/epo" &&
    grep -q "^experts: [0-9.]* s of all-to-all hidden behind other micro-batches' compute (--ep-overlap 1" "$out/epo" &&
    grep -q -- "--overlap-moe-expert-parallel-comm" "$out/epo" &&
    "$CCBENCH" layout -m qwen3-30b-a3b -g 16 --gpu-model h100-sxm --ep-overlap 1 -x tp=1,pp=1,dp=16,ep=16,zero=1,rc=full >"$out/epf" 2>&1 &&
    ! grep -- "--tensor-model-parallel-size" "$out/epf" | grep -q -- "--overlap-moe-expert-parallel-comm" &&
    ! grep -q "s of all-to-all hidden" "$out/epf" &&
    grep -q "experts: --ep-overlap 1 is not costed or passed on for this layout: .* needs no full or block recomputation" "$out/epf"
ok $? "--ep-overlap 1: said, costed and passed on; not with full recomputation" "$(grep -E '^experts' "$out/epo")"
# the overlap's connections: 32 where nothing needs 1; on Hopper with tp > 1 the line keeps 1
# and a note says why; on Blackwell, where tp needs no 1, 32 and no such note
"$CCBENCH" layout -m qwen3-235b-a22b -g 256 --gpu-model h100-sxm --ep-overlap 1 -x tp=2,pp=8,dp=16,v=4,mb=1,sp=1,ep=32,zero=1,rc=none,split=1 >"$out/eph" 2>&1 &&
    grep -q "^  CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun" "$out/eph" &&
    grep -q "# experts: before Blackwell, tensor or context parallelism wants CUDA_DEVICE_MAX_CONNECTIONS=1" "$out/eph" &&
    "$CCBENCH" layout -m qwen3-235b-a22b -g 256 --gpu-model b200 --ep-overlap 1 -x tp=2,pp=8,dp=16,v=4,mb=1,sp=1,ep=32,zero=1,rc=none,split=1 >"$out/epb" 2>&1 &&
    grep -q "^  CUDA_DEVICE_MAX_CONNECTIONS=32 torchrun" "$out/epb" && ! grep -q "before Blackwell" "$out/epb"
ok $? "--ep-overlap 1: CUDA_DEVICE_MAX_CONNECTIONS 1 and a note on H100 with tp=2, 32 and none on B200" "$(grep -E 'torchrun|before Blackwell' "$out/eph" "$out/epb" | cut -c1-160)"
# every token to every expert: the routing's balance cannot matter, and that is said
printf '{"preset":"mixtral-8x7b","topk":8}\n' >"$out/top8.json"
"$CCBENCH" layout -m "$out/top8.json" -g 64 --gpu-model h100-sxm --moe-imbalance 2 -x tp=1,pp=2,dp=32,ep=8,zero=1,rc=full >"$out/t8" 2>&1 &&
    grep -q "^experts: .*every token to every expert: the routing's balance irrelevant$" "$out/t8" &&
    grep -q "# experts: every token goes to all 8 experts (top 8), so every GPU's share is fixed and --moe-imbalance 2.00 changes nothing" "$out/t8" &&
    ! grep -q "at ep = 1" "$out/t8"
ok $? "--moe-imbalance with topk = experts: said to change nothing (not 'at ep = 1')" "$(grep -E 'experts' "$out/t8" | head -3)"
# a large all-to-all share points at the overlap (and at what it needs)
"$CCBENCH" layout -m qwen3-30b-a3b -g 16 --gpu-model h100-sxm -x tp=1,pp=1,dp=16,ep=16,zero=1,rc=full >"$out/eph0" 2>&1 &&
    grep -q "# experts: the all-to-all is [0-9]*% of this step; Megatron-Core's --overlap-moe-expert-parallel-comm can hide part of it .*; it needs no full or block recomputation$" "$out/eph0" &&
    "$CCBENCH" layout -m qwen3-30b-a3b -g 16 --gpu-model h100-sxm -x tp=1,pp=1,dp=16,ep=16,zero=1,rc=none >"$out/eph1" 2>&1 &&
    grep -q "# experts: the all-to-all is [0-9]*% of this step; .*(--ep-overlap 1 costs that at best)$" "$out/eph1" &&
    ! grep -q "the all-to-all is" "$out/epo"
ok $? "a large all-to-all share: a note on the overlap and what it needs; none with --ep-overlap 1" "$(grep -h 'the all-to-all is' "$out/eph0" "$out/eph1")"
# a capacity factor: in the habits, the explain line, the note and Megatron-LM's arguments;
# padding without a capacity refused
"$CCBENCH" layout -m mixtral-8x7b -g 64 --gpu-model h100-sxm --moe-capacity 1.25 --moe-pad 1 -x tp=1,pp=1,dp=64,ep=8,zero=1,rc=full >"$out/cap" 2>&1 &&
    grep -q "^# habits .*, expert capacity 1.25 (padded)$" "$out/cap" &&
    grep -q "^experts: .*every expert's input padded to the capacity factor 1.25, tokens beyond it dropped$" "$out/cap" &&
    grep -q "# experts: capacity factor 1.25: an expert's tokens beyond 1.25 times its balanced share are dropped, and every expert's input is padded" "$out/cap" &&
    grep -q -- "--moe-grouped-gemm --moe-expert-capacity-factor 1.25 --moe-pad-expert-input-to-capacity" "$out/cap" &&
    "$CCBENCH" layout -m mixtral-8x7b -g 64 --gpu-model h100-sxm --moe-capacity 1.25 --moe-pad 1 -x tp=1,pp=1,dp=64,ep=8,zero=1,rc=full --json >"$out/capj" 2>&1 &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); h=d["habits"]; assert h["moe_capacity"] == 1.25 and h["moe_pad"] is True, h; assert d["explain"]["layout"]["expert_skew"] == 1.25' "$out/capj"
ok $? "--moe-capacity 1.25 --moe-pad 1: said, costed and passed on" "$(grep -E 'capacity' "$out/cap" | cut -c1-200)"
refuse "--moe-pad without a capacity" "--moe-pad 1 pads every expert's input to the capacity: give --moe-capacity F" -m mixtral-8x7b -g 64 --moe-pad 1
refuse "--moe-capacity -1" "moe-capacity" -m mixtral-8x7b -g 64 --moe-capacity -1
# at ep 1 every GPU computes all its tokens' routed work: a skewed router costs nothing more
"$CCBENCH" layout -m qwen3-30b-a3b -g 64 --gpu-model h100-sxm --moe-imbalance 1.5 -x tp=1,pp=4,dp=16,ep=1,zero=1,rc=full >"$out/sk1" 2>&1 &&
    "$CCBENCH" layout -m qwen3-30b-a3b -g 64 --gpu-model h100-sxm -x tp=1,pp=4,dp=16,ep=1,zero=1,rc=full >"$out/sk0" 2>&1 &&
    grep -q "^experts: 128 of the 128 experts .*the routing's balance irrelevant at ep 1$" "$out/sk1" &&
    grep "^time per step" "$out/sk0" >"$out/sk0.t" && grep "^time per step" "$out/sk1" >"$out/sk1.t" &&
    cmp -s "$out/sk0.t" "$out/sk1.t"
ok $? "--moe-imbalance 1.5 at ep 1: the same step time, and said so" "$(grep -E '^(experts|time per step)' "$out/sk1" "$out/sk0")"
# the MoE presets: listed with their experts, searched with ep
"$CCBENCH" layout --list-models >"$out/lm" 2>&1 &&
    grep -q "^mixtral-8x7b .* 8 experts of ffn 14336, top 2, 12.9B active$" "$out/lm" &&
    grep -q "^qwen3-235b-a22b .* 128 experts of ffn 1536, top 8, 22.2B active, head_dim 128, QK norm$" "$out/lm"
ok $? "--list-models: the MoE presets with experts, active parameters, head_dim" "$(grep -E 'mixtral|qwen3' "$out/lm")"
"$CCBENCH" layout -m qwen3-30b-a3b -g 16 --gpu-model h100-sxm --precision fp8 -k 1 >"$out/qp" 2>&1 &&
    grep -q "^  1  .*,ep=[0-9]* " "$out/qp" && grep -q -- "--kv-channels 128 --qk-layernorm --num-experts 128" "$out/qp"
ok $? "preset qwen3-30b-a3b searched with expert parallelism" "$(grep -E '^  1 ' "$out/qp")"
# attention of another width than the model (head_dim), QK norm: read, shown, passed on
"$CCBENCH" layout -m "$T/hf-qwen3-moe.json" --gpus 64 --gpu-model h100-sxm -k 1 --json >"$out/q3j" 2>&1 &&
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
m = d["model"]
assert m["head_dim"] == 128 and m["qk_norm"] is True and m["experts"] == 128, m
a = d["top"][0]["megatron_args"]
assert "--kv-channels 128 --qk-layernorm" in a and "--num-experts 128 --moe-router-topk 8" in a, a
' "$out/q3j"
ok $? "Qwen3-MoE config: head_dim and QK norm in the JSON and Megatron-LM's arguments" "$(head -c 300 "$out/q3j")"
"$CCBENCH" layout -m "$T/hf-qwen3-moe.json" --gpus 64 --gpu-model h100-sxm -k 1 >"$out/q3" 2>&1 &&
    grep -q "^# model   qwen3_moe: 30.5B parameters (3.4B active), 128 experts of ffn 768, top 8, l=48 h=2048 a=32 kv=4 hd=128 qk-norm ffn=6144" "$out/q3"
ok $? "... and in the header" "$(head -1 "$out/q3")"
printf '{"preset":"llama3-8b","head_dim":64,"qk_norm":true}\n' >"$out/hd.json"
"$CCBENCH" layout -m "$out/hd.json" -g 8 -k 1 >"$out/hd" 2>&1 &&
    grep -q "^# model   llama3-8b (changed): 7.4B parameters, .*kv=8 hd=64 qk-norm" "$out/hd" &&
    grep -q "head_dim, qk_norm changed" "$out/hd"
ok $? "a spec's head_dim narrows the attention (4096 -> 2048 wide queries)" "$(head -2 "$out/hd" | tr '\n' ' ')"
printf '{"preset":"llama3-8b","head_dim":0}\n' >"$out/hd0.json"
refuse "spec head_dim 0" '"head_dim" '"'"'0'"'"' is out of range (1 to 100000)' -m "$out/hd0.json" -g 8
printf '{"model_type":"gemma2","hidden_size":3584,"num_hidden_layers":42,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":256,"intermediate_size":14336,"vocab_size":256000}\n' >"$out/g2.json"
refuse "Gemma 2 config (sliding-window layers)" 'model_type "gemma2": its sliding-window layers and logit soft-capping are not modelled' -m "$out/g2.json" -g 8

# the 16-bit efficiency was fitted on A100: elsewhere the header says so, once, unless it is set
"$CCBENCH" layout -m llama3-8b --gpus 8 --gpu-model h100-sxm -k 1 >"$out/c1" 2>&1
grep -q "^# caution the 16-bit efficiency 0.71 (the default) was fitted on A100 SXM; .*H100 SXM fit --efficiency 0.58 --attn-efficiency 0.32" "$out/c1"
ok $? "H100 bf16 at the default efficiency: caution line"
"$CCBENCH" layout -m llama3-8b --gpus 8 --gpu-model a100-80g -k 1 >"$out/c2" 2>&1
"$CCBENCH" layout -m llama3-8b --gpus 8 --gpu-model h100-sxm -k 1 --efficiency 0.56 >"$out/c3" 2>&1
"$CCBENCH" layout -m llama3-8b --gpus 8 --gpu-model h100-sxm -k 1 --precision fp8 >"$out/c4" 2>&1
grep -q "^# cluster" "$out/c2" && grep -q "^# cluster" "$out/c3" && grep -q "^# cluster" "$out/c4" &&
    ! grep -q "caution" "$out/c2" "$out/c3" "$out/c4"
ok $? "no caution on A100, with --efficiency set, or for fp8"
"$CCBENCH" layout -m llama3-8b --gpus 8 --gpu-model b200 -k 1 --precision fp8 >"$out/c6" 2>&1
"$CCBENCH" layout -m llama3-8b --gpus 8 --gpu-model b200 -k 1 --precision fp8 --fp8-efficiency 0.4 >"$out/c7" 2>&1
grep -q "^# caution the fp8 efficiency 0.48 (the default) was fitted on NeMo's fp8 runs on H100 SXM, not checked on this GPU" "$out/c6" &&
    grep -q "^# cluster" "$out/c7" && ! grep -q "caution" "$out/c7"
ok $? "fp8 on B200 at the default fp8 efficiency: caution line; none with --fp8-efficiency" "$(grep caution "$out/c6" | cut -c1-120)"
"$CCBENCH" layout -m llama3-8b --gpus 8 --gpu-model a100-80g --peak-tflops 280 -k 1 >"$out/c5" 2>&1
grep -q "^# caution .*at its data-sheet peak, not checked here" "$out/c5"
ok $? "--peak-tflops: the fitted efficiency no longer applies, caution line"

# --attn-efficiency: shown in the habits and JSON, and it slows the attention products only
"$CCBENCH" layout -m llama3-8b --gpus 8 --gpu-model h100-sxm -x tp=1,pp=1,dp=8,mb=1,zero=3 \
    --attn-efficiency 0.3 --json >"$out/a1" 2>&1
"$CCBENCH" layout -m llama3-8b --gpus 8 --gpu-model h100-sxm -x tp=1,pp=1,dp=8,mb=1,zero=3 \
    --json >"$out/a2" 2>&1
t1=$(awk '$1 == "\"compute\":" { sub(/,$/, "", $2); print $2; exit }' "$out/a1")
t2=$(awk '$1 == "\"compute\":" { sub(/,$/, "", $2); print $2; exit }' "$out/a2")
grep -q '"efficiency_attn": 0.3' "$out/a1" && grep -q '"efficiency_attn": 0.71' "$out/a2" &&
    awk -v a="$t1" -v b="$t2" 'BEGIN { exit !(a > b * 1.05) }'
ok $? "--attn-efficiency 0.3: in the JSON habits, compute $t1 s against $t2 s"
"$CCBENCH" layout -m llama3-8b --gpus 8 --attn-efficiency 0.3 -k 1 >"$out/a3" 2>&1 &&
    grep -q "^# habits  efficiency 0.71 (attention 0.30)," "$out/a3"
ok $? "--attn-efficiency in the habits line"

# held-out published runs (results/layout-heldout.md): the script runs; LLM Foundry's FSDP
# runs stay as close as documented, at the defaults on A100 and with the fitted habits on
# both GPUs; the BigScience layouts that ran fit ccbench's memory, and those that ran out of
# memory are refused for memory
sh "$CC_SRCDIR/results/layout-heldout.sh" "$CCBENCH" >"$out/h" 2>"$out/herr"
ok $? "results/layout-heldout.sh runs" "$(cat "$out/herr")"
[ "$(grep -c '^| MPT-.* A100 80GB ' "$out/h")" -eq 39 ] && [ "$(grep -c '^| MPT-.* H100 80GB ' "$out/h")" -eq 39 ]
ok $? "held-out: 39 A100 and 39 H100 LLM Foundry rows"
# within GPU COLUMN LIMIT MIN: every row within LIMIT %, at least MIN of them within 15%
within() {
    awk -F'|' -v g="$1" -v c="$2" -v lim="$3" -v min="$4" '$0 ~ "^\\| MPT-.* " g " 80GB " {
        e = $c; gsub(/[ %+]/, "", e); e += 0; if (e < 0) e = -e
        if (e > lim) bad++; if (e <= 15) in15++; n++ }
        END { exit !(n == 39 && bad == 0 && in15 >= min) }' "$out/h"
}
within A100 10 30 30; ok $? "held-out: A100 at the defaults within 30%, 30 of 39 within 15%"
within A100 12 25 35; ok $? "held-out: A100 fitted within 25%, 35 of 39 within 15%"
within H100 12 22 37; ok $? "held-out: H100 fitted within 22%, 37 of 39 within 15%"
! grep '^| MPT-' "$out/h" | grep -q "(refused)"
ok $? "held-out: every LLM Foundry run fits ccbench's memory estimate"
[ "$(grep -c '^| [0-9].* GB, fits |$' "$out/h")" -eq 17 ]
ok $? "held-out: the 17 BigScience layouts that ran fit in ccbench's memory estimate"
[ "$(grep -c '| out of memory | .* | refused |$' "$out/h")" -eq 3 ]
ok $? "held-out: the three BigScience layouts that ran out of memory are refused for memory"
# Megatron-Core on H100 (the README's weak-scaling table): with the H100 habits fitted on LLM
# Foundry's runs, every row within 11%, and the published layout in the search's top 3 in
# each of the 7 rows whose search ranks more than 3 layouts ("RANK/LAYOUTS")
awk -F'|' '$2 ~ /^ [0-9.]+B $/ && $5 ~ /,48 $/ { n++; e = $11; gsub(/[ %+]/, "", e); e += 0
    if (e < 0) e = -e; if (e > 11) bad++
    split($12, r, "/"); if (r[2] + 0 > 3) { ranked++; if (r[1] + 0 < 1 || r[1] + 0 > 3) bad++ } }
    END { exit !(n == 9 && ranked == 7 && bad == 0) }' "$out/h"
ok $? "held-out: Megatron-Core H100 rows, fitted habits within 11%, the published layout in the top 3 of 7 searches"
# mixture-of-experts runs (results/layout-moe.md): every published layout fits ccbench's
# memory estimate (one only without the 10% margin), the published tp,pp,dp,cp is in the
# search's top 3 in 17 of the 19 rows, and no row is estimated more than 15% slower than it ran
sh "$CC_SRCDIR/results/layout-moe.sh" "$CCBENCH" >"$out/moe-runs" 2>"$out/moe-err"
ok $? "results/layout-moe.sh runs" "$(cat "$out/moe-err")"
awk -F'|' '$2 ~ /^ [0-9]/ { n++; if ($11 ~ /fits/) fit++; if ($11 ~ /over the GPU/) bad++
    split($12, r, " of "); if (r[1] + 0 >= 1 && r[1] + 0 <= 3) top3++
    e = $10; gsub(/[ %+]/, "", e); if (e + 0 < -15) slow++ }
    END { exit !(n == 19 && fit == 18 && bad == 0 && top3 == 17 && slow == 0) }' "$out/moe-runs"
ok $? "MoE runs: 19 rows, 18 fit within the margin and none beyond the GPU, 17 published layouts in the top 3, none estimated >15% slow" "$(cut -d'|' -f3,4,10,11,12 "$out/moe-runs")"
# bad input: exit 2 with one line naming what is wrong, never a crash, a hang or inf/nan
# a Llama config that does not say whether its embeddings are tied: untied, as transformers'
# LlamaConfig defaults (8.0B parameters, as with the key)
sed '/tie_word_embeddings/d' "$T/hf-llama3-8b.json" >"$out/l3-notie.json"
"$CCBENCH" layout -m "$out/l3-notie.json" -g 8 -k 1 >"$out/l3n" 2>&1 && grep -q "^# model   .*: 8.0B parameters" "$out/l3n" &&
    ! grep -q "tied embeddings" "$out/l3n"
ok $? "Llama config without tie_word_embeddings: untied, 8.0B" "$(head -2 "$out/l3n")"
# nodes of 3 GPUs: a data-parallel pair of ranks 2 and 3 straddles two nodes, so its
# reduction crosses them (it was costed as inside one node)
printf '{"layers":6,"hidden":2048,"heads":16,"vocab":50304,"seq_len":2048,"global_batch":16}\n' >"$out/m6.json"
d3=$("$CCBENCH" layout -m "$out/m6.json" -g 6 --gpus-per-node 3 --inter-GBps 0.01 --dp-overlap 0 \
    -x tp=1,pp=3,dp=2,zero=0,rc=none --json | awk '$1 == "\"dp_reduce\":" { sub(/,$/, "", $2); print $2 }')
d6=$("$CCBENCH" layout -m "$out/m6.json" -g 6 --gpus-per-node 6 --inter-GBps 0.01 --dp-overlap 0 \
    -x tp=1,pp=3,dp=2,zero=0,rc=none --json | awk '$1 == "\"dp_reduce\":" { sub(/,$/, "", $2); print $2 }')
awk -v a="${d3:-0}" -v b="${d6:-1}" 'BEGIN { exit !(a > 1000 * b) }'
ok $? "a group straddling two nodes of 3 GPUs is costed across them ($d3 s against $d6 s in one node)"
# a DBRX config keeps its experts under ffn_config, which is not read: refused
printf '{"model_type":"dbrx","d_model":6144,"n_heads":48,"n_layers":40,"vocab_size":100352,"max_seq_len":32768,"attn_config":{"kv_n_heads":8},"ffn_config":{"ffn_hidden_size":10752,"moe_num_experts":16,"moe_top_k":4}}\n' >"$out/dbrx.json"
refuse "DBRX config (experts under ffn_config)" 'experts described in "ffn_config" (DBRX) are not read' -m "$out/dbrx.json" -g 512
# split=1 with two stages is the uniform split, in the layout line and the arguments alike
"$CCBENCH" layout -m llama3-8b -g 64 -x pp=2,split=1,v=2,dp=32,zero=1,rc=full >"$out/sp2" 2>&1 &&
    grep -q "^layout   tp=1,pp=2,dp=32,cp=1,mb=1,v=2,sp=0,zero=1,rc=full$" "$out/sp2" &&
    ! grep -q -- "--account-for-embedding-in-pipeline-split" "$out/sp2"
ok $? "-x pp=2,split=1: shown and argued as the uniform split" "$(grep -E '^layout' "$out/sp2")"
# fp8 with --peak-tflops: the 16-bit work runs at half of it, so MFU stays below 100%
printf '{"layers":8,"hidden":1024,"heads":8,"vocab":1000,"seq_len":131072,"global_batch":64}\n' >"$out/long.json"
"$CCBENCH" layout -m "$out/long.json" -g 64 --precision fp8 --peak-tflops 10 --cp-max 64 -k 1 --json >"$out/fp8p" 2>&1 &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert 0 < d["top"][0]["mfu"] < 1, d["top"][0]["mfu"]' "$out/fp8p"
ok $? "fp8 with --peak-tflops: MFU below 100%" "$(grep -m1 '"mfu"' "$out/fp8p")"
refuse "--json with --list-gpus" "--json applies to a search or --explain" --list-gpus --json
refuse "-x mb=1000001" "mb needs an integer from 1 to 1000000" -m llama3-8b -g 64 -x mb=1000001
# a name or source that is not valid UTF-8 (a Latin-1 file name, a source cut mid-character)
# is made valid, not dropped from the JSON
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; json.dump({"layers":2,"hidden":64,"heads":2,"vocab":100,"seq_len":64,"global_batch":8,"source":"\u00e9"*200}, open(sys.argv[1],"w"), ensure_ascii=False)' "$out/u8.json"
    cp "$out/u8.json" "$out/mod$(printf '\351').json"
    "$CCBENCH" layout -m "$out/mod$(printf '\351').json" -g 8 -k 1 --json >"$out/u8" 2>&1 &&
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); m=d["model"]; assert m["name"].endswith("mod?.json") and len(m["source"]) == 127, m' "$out/u8"
    ok $? "invalid UTF-8 in a model's name or source: made valid, kept in the JSON"
else
    skip "invalid UTF-8 in a model's name or source" "python3 not installed"
fi
refuse "-x tp=65536,pp=65536 (products past 2^31)" "is 4294967296 but the cluster has 64 GPUs" \
    -m llama3-8b -g 64 -x tp=65536,pp=65536
refuse "-x pp=65536,v=65536" "v 65536 is more than the 32 layers" -m llama3-8b -g 64 -x pp=65536,v=65536
refuse "-x dp=65536,cp=65536" "is 4294967296 but" -m llama3-8b -g 64 -x dp=65536,cp=65536,zero=1
# sequence lengths Megatron-LM cannot split: by tp with sequence parallelism, by 2*cp with
# context parallelism (4100 = 4 x 1025)
refuse "-x tp=8,sp=1 at a sequence of 4100" "sequence parallelism needs tp 8 to divide the 4100 tokens" \
    -m llama2-7b -g 8 --seq-len 4100 -x tp=8,sp=1
refuse "-x cp=4 at a sequence of 4100" "cp 4 needs the sequence length 4100 to be a multiple of 2\*cp = 8" \
    -m llama2-7b -g 8 --seq-len 4100 -x tp=2,cp=4,sp=0
# context parallelism exists only inside flash/fused attention: a model without it gets none
refuse "-x cp=2 without flash attention" "cp 2 needs flash or fused attention" \
    -m megatron-39.1b -g 512 --gpu-model a100-80g --cp-max 4 -x tp=8,pp=4,cp=2,dp=8,mb=1
"$CCBENCH" layout -m megatron-39.1b -g 512 --gpu-model a100-80g --cp-max 4 -k 100 >"$out/nfa" 2>&1
ok $? "megatron-39.1b with --cp-max 4: layouts remain" "$(tail -2 "$out/nfa")"
grep -q "^ *1  tp=" "$out/nfa" && ! grep -Eq "^ +[0-9]+  .*,cp=[24]," "$out/nfa"
ok $? "... none of them context-parallel"
"$CCBENCH" layout -m llama2-7b -g 8 --seq-len 4100 --cp-max 4 -k 100 >"$out/s41" 2>&1
ok $? "a sequence of 4100 on 8 GPUs: layouts remain" "$(tail -2 "$out/s41")"
! grep -Eq "^ +[0-9]+  tp=8,.*,sp=1,|^ +[0-9]+  .*,cp=4," "$out/s41"
ok $? "... none with tp=8 and sequence parallelism, none with cp=4"
refuse "-x tp=3 on 8 GPUs: the heads, not the floored dp" "is infeasible: tp 3 does not divide the 32 attention heads" \
    -m llama2-7b -g 8 -x tp=3
refuse "-x with nothing in it" "names nothing" -m llama3-8b -g 64 -x ""
refuse "-x ," "invalid layout list ',' (an empty item)" -m llama3-8b -g 64 -x ,
refuse "-x 'tp= 8'" "tp needs an integer from 1 to 1000000" -m llama3-8b -g 64 -x "tp= 8"
refuse "-x sp=5" "sp needs an integer from 0 to 1, got '5'" -m llama3-8b -g 64 -x sp=5
refuse "-x tp=1,sp=1" "sp=1 (sequence parallelism) needs tp > 1" -m llama3-8b -g 64 -x tp=1,sp=1
printf '{"layers": 4194304, "hidden": 1024, "heads": 1024, "vocab": 1000, "seq_len": 1024, "global_batch": 1024}\n' >"$out/deep.json"
refuse "4,194,304 layers" '"layers" .4194304. is out of range (1 to 100000)' -m "$out/deep.json" -g 1024 --gpus-per-node 1024
printf '{"model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32, "expansion_ratio": 1048577, "vocab_size": 50432, "max_seq_len": 2048}\n' >"$out/mpt.json"
refuse "MPT expansion_ratio past 2^32" "MLP size 4294971392 is more than 100000000" -m "$out/mpt.json" -g 8
printf '{"layers": 12, "hidden": 768, "heads": 12, "vocab": 50304, "seq_len": 1024, "global_batch": 64, "recompute": "auto"}\n' >"$out/rc.json"
refuse "spec recompute auto" '"recompute" is none, selective, full or block' -m "$out/rc.json" -g 8
printf '{"layers": 12, "hidden": 768, "heads": 12, "vocab": 50304, "seq_len": 1024, "global_batch": 64, "kv_head": 4}\n' >"$out/typo.json"
refuse "spec with a misspelt key" 'unknown key "kv_head"' -m "$out/typo.json" -g 8
printf '{"layers": 12, "hidden": 768, "heads": 12, "vocab": 50304, "seq_len": 1024, "global_batch": 64, "flash_attention": 1}\n' >"$out/fa.json"
refuse "spec flash_attention 1" '"flash_attention" must be true or false' -m "$out/fa.json" -g 8
printf '{"layers": 12, "hidden": 768, "heads": 12, "seq_len": 1024, "global_batch": 64}\n' >"$out/novocab.json"
refuse "spec without vocab" '"vocab" is required' -m "$out/novocab.json" -g 8
refuse "a directory as the model" "cannot read model spec '$out': is a directory" -m "$out" -g 8
refuse "a missing model file" "cannot read model spec '/nonexistent/m.json': No such file" -m /nonexistent/m.json -g 8
refuse "--grad-accum that does not divide the batch" "not a multiple of --grad-accum 3" -m llama3-8b -g 64 --grad-accum 3
refuse "--grad-accum no layout meets" "micro-batches per step, but --grad-accum is 512" -m llama3-8b -g 64 --grad-accum 512 --tp-max 1
refuse "--peak-tflops 1e-300" "too small" -m llama3-8b -g 8 --peak-tflops 1e-300
refuse "--inter-GBps 0.001" "too small" -m llama3-8b -g 64 --inter-GBps 0.001
refuse "--bucket 0" "--bucket '0' is out of range" -m llama3-8b -g 8 --bucket 0
refuse "--results ," "invalid --results list ',' (an empty item)" -m llama3-8b -g 8 -r ,
# an empty item is an error in every list (these were skipped)
refuse "--results a,," "invalid --results list '$T/bench-intra.jsonl,,' (an empty item)" \
    -m llama3-8b -g 8 -r "$T/bench-intra.jsonl,,"
refuse "-x tp=8,,pp=2" "invalid layout list 'tp=8,,pp=2' (an empty item)" -m llama3-8b -g 64 -x tp=8,,pp=2
refuse "-g 0x10" "needs an integer" -m llama3-8b -g 0x10
refuse "--gpu-model with --topology" "describe a --gpus cluster" -m llama3-8b -t "$T/dgx-a100x4.json" --gpu-model h100-sxm
if command -v python3 >/dev/null 2>&1; then
    python3 - "$T/dgx-a100x4.json" "$out" <<'PY'
import copy, json, sys
src, out = sys.argv[1], sys.argv[2]
t = json.load(open(src))
u = copy.deepcopy(t)          # a GPU the table lacks, and no rate within a node
for n in u["nodes"]:
    n.pop("expected", None)
    for g in n["gpus"]:
        g["model"] = "Foo 9000"
u["nodes"] = u["nodes"][:1]; u["nodes"][0]["count"] = 1; u.pop("fabric", None)
json.dump(u, open(out + "/unknown.json", "w"))
y = copy.deepcopy(t)          # two GPU models inside one node
y["nodes"][0]["gpus"][3]["model"] = "NVIDIA H100 80GB HBM3"
json.dump(y, open(out + "/mixed-node.json", "w"))
x = copy.deepcopy(t)          # two GPU models
n2 = copy.deepcopy(x["nodes"][0])
for g in n2["gpus"]:
    g["model"] = "NVIDIA A100-SXM4-40GB"
x["nodes"].append(n2)
json.dump(x, open(out + "/mixed.json", "w"))
r = copy.deepcopy(t)          # a rate given as text
r["nodes"][0].setdefault("expected", {})["intra_allreduce_busbw_GBps"] = "fast"
json.dump(r, open(out + "/textrate.json", "w"))
f = copy.deepcopy(t)          # an absurd fabric rate
f.setdefault("fabric", {})["inter_allreduce_busbw_GBps"] = 1e308
json.dump(f, open(out + "/fabric.json", "w"))
PY
    refuse "unknown GPU, no rate within a node" "no all-reduce rate within a node for GPU 'Foo 9000'" \
        -m llama3-8b -t "$out/unknown.json" --peak-tflops 500
    "$CCBENCH" layout -m llama3-8b -t "$out/unknown.json" --peak-tflops 500 --intra-GBps 100 -k 1 >"$out/un" 2>&1 &&
        ! grep -qi "inf\|nan" "$out/un"
    ok $? "the same with --intra-GBps: finite figures"
    refuse "two GPU models in a topology" "GPUs of two models" -m llama3-8b -t "$out/mixed.json"
    refuse "two GPU models inside one node" "GPUs of two models in nodes\[0\]" -m llama3-8b -t "$out/mixed-node.json"
    refuse "a fabric rate of 1e308 GB/s" "not a rate" -m llama3-8b -t "$out/fabric.json"
    refuse "a rate within a node given as text" "intra_allreduce_busbw_GBps must be a rate" \
        -m llama3-8b -t "$out/textrate.json"
else
    skip "unknown GPU, no rate within a node" "python3 not installed"
    skip "the same with --intra-GBps" "python3 not installed"
    skip "two GPU models in a topology" "python3 not installed"
    skip "two GPU models inside one node" "python3 not installed"
    skip "a fabric rate of 1e308 GB/s" "python3 not installed"
    skip "a rate within a node given as text" "python3 not installed"
fi
head -4 "$T/bench-intra.jsonl" >"$out/absurd.jsonl"
echo '{"type": "result", "collective": "allreduce", "backend": "nccl", "nranks": 8, "bytes": 1024, "inplace": false, "time_us": 1e-300}' >>"$out/absurd.jsonl"
refuse "a result in 1e-300 us" "not a measurement (over 1 PB/s" -m megatron-1.7b -t "$T/dgx-a100x4.json" -r "$out/absurd.jsonl"
{ head -1 "$T/bench-intra.jsonl"
  echo '{"type": "result", "collective": "allreduce", "nranks": 8, "bytes": 1024, "time_us": 1e8}'
  echo '{"type": "result", "collective": "allreduce", "nranks": 8, "bytes": 4096, "time_us": 4e8}'; } >"$out/slow.jsonl"
refuse "results at 18 bytes/s" "fits 17.92 bytes/s of bus bandwidth, not a link's" -m megatron-1.7b -t "$T/dgx-a100x4.json" -r "$out/slow.jsonl"
# the fits are shown, in text and JSON; odd result lines, another backend and a second file
# measuring the same group are warned about
"$CCBENCH" layout -m megatron-1.7b -t "$T/dgx-a100x4.json" -r "$T/bench-intra.jsonl" >"$out/fa" 2>&1
grep -q "^#         fit allreduce, 8 ranks within a node: 5.0 us + bus bytes / 100.0 GB/s (9 sizes, '.*bench-intra.jsonl')" "$out/fa"
ok $? "the header lists the fit" "$(grep '^#' "$out/fa")"
"$CCBENCH" layout -m megatron-1.7b -t "$T/dgx-a100x4.json" -r "$T/bench-intra.jsonl" -j >"$out/fj" 2>&1
python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["cluster"]["fits"]; sys.exit(not (len(f) == 1 and f[0]["collective"] == "allreduce" and f[0]["scope"] == "intra" and abs(f[0]["busbw_GBps"] - 100) < 0.01 and abs(f[0]["latency_us"] - 5) < 0.01))' "$out/fj"
ok $? "--json gives the fit under cluster.fits"
{ sed 's/"backend": "nccl"/"backend": "mpi"/' "$T/bench-intra.jsonl"
  echo '{"type": "result", "collective": "allreduc", "nranks": 8, "bytes": 1024, "time_us": 9}'
  echo '{"type": "result", "collective": "allreduce", "nranks": 8.0, "bytes": 1024, "time_us": 9}'; } >"$out/odd.jsonl"
"$CCBENCH" layout -m megatron-1.7b -t "$T/dgx-a100x4.json" -r "$out/odd.jsonl" >/dev/null 2>"$out/oe"; rc=$?
[ $rc -eq 0 ] && grep -q "passed over 2 result line(s) .*(the first: line 13)" "$out/oe" &&
    grep -q "measured with the mpi backend, not nccl: host memory's rates" "$out/oe"
ok $? "odd result lines and a host-memory backend: warned (exit $rc)" "$(cat "$out/oe")"
sed 's/"time_us": \([0-9.]*\)/"time_us": 1\1/' "$T/bench-intra.jsonl" >"$out/slower.jsonl"
"$CCBENCH" layout -m megatron-1.7b -t "$T/dgx-a100x4.json" -r "$T/bench-intra.jsonl,$out/slower.jsonl" >"$out/d1" 2>"$out/de"; rc=$?
[ $rc -eq 0 ] && grep -q "slower.jsonl': allreduce of 8 ranks within a node was already read from '.*bench-intra.jsonl' (100.0 GB/s there" "$out/de" &&
    [ "$(grep -c '^#         fit ' "$out/d1")" -eq 1 ]
ok $? "the same group in a second file: the first kept, warned (exit $rc)" "$(cat "$out/de")"
# a long path of non-ASCII names: the fit names its end in whole characters, in text and JSON
ed=$(printf '\303\251%.0s' $(seq 1 60))
mkdir -p "$out/$ed" && cp "$T/bench-intra.jsonl" "$out/$ed/r.jsonl"
"$CCBENCH" layout -m megatron-1.7b -t "$T/dgx-a100x4.json" -r "$out/$ed/r.jsonl" -j >"$out/fu" 2>&1
python3 -c 'import json,sys; f=json.load(open(sys.argv[1], encoding="utf-8"))["cluster"]["fits"][0]["from"]; sys.exit(not (f.endswith("/r.jsonl") and "\ufffd" not in f and "?" not in f and len(f.encode()) <= 95))' "$out/fu"
ok $? "a fit's file named by its end, whole UTF-8 characters, in the JSON"
python3 - "$T/dgx-a100x4.json" "$out/nofab.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["fabric"] = {"kind": "none"}
json.dump(t, open(sys.argv[2], "w"))
PY
refuse "several nodes with a fabric of kind none" "4 nodes but its fabric has no NICs (kind none)" -m megatron-1.7b -t "$out/nofab.json"
{ echo '{"type": "header", "nnodes": -1}'; sed -n 2,3p "$T/bench-intra.jsonl"; } >"$out/nn.jsonl"
refuse "a header with nnodes -1" "header without a node count" -m megatron-1.7b -t "$T/dgx-a100x4.json" -r "$out/nn.jsonl"
# names from files are printed as one line: a newline or an escape in a model's or a
# topology's name becomes '?', in the header and in messages
printf '{"layers":32,"hidden":4096,"heads":32,"vocab":32000,"seq_len":4096,"global_batch":1024,"name":"evil\\nbest: tp=1\\u001b[31m","source":"x\\ny"}' >"$out/evil.json"
"$CCBENCH" layout -m "$out/evil.json" -g 64 -k 1 >"$out/ev" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q '^# model   evil?best: tp=1?\[31m: ' "$out/ev" && grep -q '^#         source: x?y$' "$out/ev" &&
    [ "$(grep -c '^best: ' "$out/ev")" -eq 1 ] && ! grep -q "$(printf '\033')" "$out/ev"
ok $? "control characters in a model's name and source printed as '?' (exit $rc)" "$(head -3 "$out/ev")"
refuse "a model named with a newline, in a message" "model 'evil?best: tp=1?\[31m' on 3 GPUs" -m "$out/evil.json" -g 3 --uneven-pp 0
python3 - "$T/dgx-a100x4.json" "$out/tname.json" "$out/tgpu.json" "$out/tmix.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["name"] = "rack\n7" + "\u00e9" * 200
json.dump(t, open(sys.argv[2], "w"))
u = json.loads(json.dumps(t))
for n in u["nodes"]:
    for g in n["gpus"]:
        g["model"] = "Foo\nBar" + "\u00e9" * 100
json.dump(u, open(sys.argv[3], "w"))
m = json.loads(json.dumps(t))
m["nodes"] = [json.loads(json.dumps(t["nodes"][0])), json.loads(json.dumps(t["nodes"][0]))]
for g in m["nodes"][0]["gpus"]:
    del g["model"]
json.dump(m, open(sys.argv[4], "w"))
PY
"$CCBENCH" layout -m megatron-1.7b -t "$out/tname.json" -j -k 1 >"$out/tn" 2>&1
python3 -c 'import json,sys; c=json.load(open(sys.argv[1], encoding="utf-8"))["cluster"]; n=c["name"]; sys.exit(not (n.startswith("rack?7\u00e9") and "\ufffd" not in n))' "$out/tn"
ok $? "a topology name cut inside a character and holding a newline: kept in the JSON, one line"
"$CCBENCH" layout -m megatron-1.7b -t "$out/tgpu.json" -j -k 1 --peak-tflops 100 --intra-GBps 100 --inter-GBps 25 >"$out/tg" 2>&1
python3 -c 'import json,sys; c=json.load(open(sys.argv[1], encoding="utf-8"))["cluster"]; sys.exit(not c["gpu"].startswith("Foo?Bar\u00e9"))' "$out/tg"
ok $? "an unknown GPU model's long name: kept in the JSON as one line" "$(head -c 300 "$out/tg")"
refuse "an unknown GPU model with a newline" "unknown GPU model 'Foo?Bar" -m megatron-1.7b -t "$out/tgpu.json"
refuse "a node type without a GPU model beside one with" "the GPUs of nodes\[1\] are '.*' but an earlier node type's name no model" -m megatron-1.7b -t "$out/tmix.json"
printf '{"layers":32,"hidden":4096,"heads":32,"vocab":32000,"seq_len":4096,"global_batch":1024,"name":5}' >"$out/n5.json"
refuse "a model name that is not a string" '"name" must be a string' -m "$out/n5.json" -g 8
# the JSON parser's message quotes the byte it stopped at: a vertical tab there is a '?'
printf '{"layers":32,\v"hidden":4096}' >"$out/vt.json"
refuse "a control character where the JSON parser stops" "cannot read model spec '.*vt.json': line 1 column 14: .*near '?'$" -m "$out/vt.json" -g 8
# a 72-GPU NVLink domain across 4-GPU hosts: one torchrun per host; the rate across nodes
# scales with the GPUs of a node (the table's is 8 GPUs with a NIC each)
"$CCBENCH" layout -m llama3-405b -g 1152 --gpu-model b200 --gpus-per-node 72 --gpus-per-host 4 -k 1 >"$out/nvl" 2>&1
grep -q "^torchrun (run on each of the 288 hosts):" "$out/nvl" && grep -q "torchrun --nnodes 288 --nproc-per-node 4 " "$out/nvl" &&
    grep -q "16 nodes of 72" "$out/nvl" && grep -q "across nodes 3330 GB/s per node" "$out/nvl"
ok $? "NVL72: 16 nodes of 72, 288 hosts of 4 in the torchrun line, 9 x the table's 370 GB/s" "$(grep -E 'rates|torchrun' "$out/nvl" | cut -c1-160)"
"$CCBENCH" layout -m llama3-8b -g 16 --gpu-model h100-sxm --gpus-per-node 4 -k 1 >"$out/gpn4" 2>&1
grep -q "across nodes 185 GB/s per node" "$out/gpn4"; ok $? "4-GPU nodes: half the table's rate across nodes" "$(grep rates "$out/gpn4")"
refuse "--gpus-per-host not dividing the node" "--gpus-per-host 5 does not divide the 72 GPUs per node" -m llama3-8b -g 144 --gpus-per-node 72 --gpus-per-host 5
refuse "--gpus-per-host not dividing a cluster smaller than a node" "--gpus-per-host 4 does not divide the 6 GPUs per node (--gpus is smaller than --gpus-per-node)" \
    -m llama3-8b -g 6 --gpus-per-node 72 --gpus-per-host 4 --gpu-model b200 --global-batch 1020
# the launch lines say what was costed: Megatron's DDP buckets at --bucket (in parameters),
# no dropout for Llama, and notes for what a framework does differently
"$CCBENCH" layout -m llama3-70b -g 64 -x tp=4,pp=4,dp=4,mb=1,v=5,zero=1,rc=full >"$out/bk" 2>&1
grep -q -- "--attention-dropout 0.0 --hidden-dropout 0.0 " "$out/bk" && grep -q -- " --ddp-bucket-size 6553600$" "$out/bk" &&
    grep -q "# --ddp-bucket-size is the estimate's --bucket (25M bytes of 4-byte gradients; Megatron-LM never splits a tensor" "$out/bk" &&
    grep -q "# DeepSpeed's pipeline engine has no interleaved schedule: this estimate's v=5" "$out/bk"
ok $? "Megatron: no dropout, --ddp-bucket-size 25M / 4 bytes; DeepSpeed: no interleaving, said" "$(grep -E '^  #' "$out/bk")"
"$CCBENCH" layout -m llama3-70b -g 64 --bucket 100M --grad-reduce bf16 -x tp=4,pp=4,dp=4,mb=1,zero=1,rc=full >"$out/bk2" 2>&1
grep -q -- " --ddp-bucket-size 52428800$" "$out/bk2" && grep -q "PipelineModule(num_stages=4); tensor parallel 4 comes from Megatron-DeepSpeed" "$out/bk2"
ok $? "--bucket 100M of bf16 gradients: 52428800 parameters" "$(grep -E 'ddp-bucket|PipelineModule' "$out/bk2" | cut -c1-200)"
# without a pipeline the DeepSpeed fragment still says where tensor parallelism comes from (its
# batch counts dp); nothing recomputed, no "(with recomputation)"
"$CCBENCH" layout -m llama3-70b -g 64 -x tp=4,pp=1,dp=16,mb=1,sp=1,zero=3,rc=none >"$out/ds1" 2>&1 &&
    grep -q "# tensor parallel 4 comes from Megatron-DeepSpeed (its mpu, passed to deepspeed.initialize), which makes the data-parallel size dp = 16 that train_batch_size counts; plain DeepSpeed would count all 64 GPUs" "$out/ds1" &&
    grep -q "executed [0-9.]* TFLOP/s per GPU$" "$out/ds1" &&
    "$CCBENCH" layout -m llama3-70b -g 64 -x tp=4,pp=8,dp=2,mb=1,sp=1,zero=1,rc=full 2>&1 |
    grep -q "executed [0-9.]* TFLOP/s per GPU (with recomputation)$"
ok $? "DeepSpeed: tensor parallelism named at pp=1; 'with recomputation' only where it recomputes" "$(grep -E 'comes from|executed' "$out/ds1" | cut -c1-160)"
# DeepSpeed's expert groups live inside the data-parallel ranks: ep must divide dp
"$CCBENCH" layout -m mixtral-8x22b -g 64 -x tp=2,pp=8,dp=4,mb=1,v=1,sp=1,zero=1,rc=none,ep=8 >"$out/ds2" 2>&1 &&
    grep -q "so ep_size must divide dp = 4: ep = 8 .* has no DeepSpeed equivalent" "$out/ds2" &&
    ! grep -q "deepspeed.moe.layer.MoE" "$out/ds2" &&
    "$CCBENCH" layout -m mixtral-8x22b -g 64 -x tp=2,pp=4,dp=8,mb=1,v=7,sp=1,zero=1,rc=block,rcl=1,ep=8 2>&1 |
    grep -q "deepspeed.moe.layer.MoE(num_experts=8, ep_size=8, k=2) in the model code, and the optimizer's parameter groups split with split_params_into_different_moe_groups_for_optimizer"
ok $? "DeepSpeed MoE: ep 8 over dp 4 and tp ranks said to have no equivalent; ep 8 of dp 8 given as ep_size" "$(grep -E 'experts in DeepSpeed' "$out/ds2" | cut -c1-160)"
"$CCBENCH" layout -m llama2-7b -g 16 -x tp=1,pp=2,dp=8,mb=1,zero=1 >"$out/bk3" 2>&1
grep -q "PipelineModule(num_stages=2)$" "$out/bk3"
ok $? "tp=1: no 'tensor parallel 1' in the DeepSpeed note" "$(grep PipelineModule "$out/bk3")"
"$CCBENCH" layout -m llama3-8b -g 64 --cp-max 4 -x tp=1,pp=1,cp=2,dp=32,mb=1,zero=1 >"$out/cpn" 2>&1
grep -q "# context parallelism is costed as an all-gather of K and V not overlapped" "$out/cpn"
ok $? "context parallelism: the costed exchange named beside the Megatron arguments" "$(grep -E '^  #' "$out/cpn")"
"$CCBENCH" layout -m llama3-8b -g 64 --seq-len 65536 --global-batch 64 -k 1 >"$out/hint" 2>&1
grep -q "^# hint    sequences of 65536 tokens with context parallelism off (--cp-max 1): --cp-max 16 lets" "$out/hint" &&
    "$CCBENCH" layout -m llama3-8b -g 64 --seq-len 65536 --global-batch 64 --cp-max 8 -k 1 2>&1 | grep -vq "^# hint"
ok $? "long sequences without --cp-max: a hint, none with it" "$(grep hint "$out/hint")"
"$CCBENCH" layout -m llama3-8b -g 64 --seq-len 65536 --global-batch 64 -x tp=8,pp=1,cp=4,dp=2,mb=1 2>&1 | grep -q "^# hint"
[ $? -ne 0 ]; ok $? "no hint over an explained layout that has context parallelism"
refuse "nothing fits: the hint ends the message" "no layout fits in memory: .*; sequences of 131072 tokens with context parallelism off (--cp-max 1): --cp-max 16 lets" -m llama3-70b -g 16 --seq-len 131072 --global-batch 16
"$CCBENCH" layout -m llama3-8b -g 4 --gpus-per-host 8 -k 1 >"$out/gph" 2>&1
grep -q "^torchrun (run on the 1 node):" "$out/gph"; ok $? "--gpus-per-host beyond a one-node job: accepted" "$(head -2 "$out/gph")"
"$CCBENCH" layout -m llama3-8b -g 64 --gpu-model gh200 --gpus-per-node 1 -k 1 >"$out/gh" 2>&1
grep -q "across nodes 45 GB/s per node" "$out/gh"; ok $? "GH200 nodes of one: its own rate across nodes, not scaled as 8 NICs" "$(grep rates "$out/gh")"
"$CCBENCH" layout -m llama3-8b -g 8 --precision fp8 -k 3 >"$out/f8" 2>&1
grep -q "^# cluster 8 x h100-sxm (1 node of 8)," "$out/f8" && grep -q "^best: .* MFU [0-9.]*% of the fp8 peak, " "$out/f8" &&
    grep -q "(though that one needs less memory)$" "$out/f8"
ok $? "one node said as one; fp8 MFU named as of the fp8 peak; the memory remark names the loser" "$(grep -E 'cluster|best|beats' "$out/f8")"
# dropout as the model says: a gelu spec with dropout 0, Falcon-40B's config (both 0.0), and a
# swiglu spec that keeps it
printf '{"layers":24,"hidden":2048,"heads":16,"vocab":50304,"seq_len":2048,"global_batch":256,"flash_attention":false%s}' "" >"$out/d1.json"
printf '{"layers":24,"hidden":2048,"heads":16,"vocab":50304,"seq_len":2048,"global_batch":256,"flash_attention":false%s}' ',"dropout":0' >"$out/d0.json"
"$CCBENCH" layout -m "$out/d1.json" -g 8 -x tp=1,pp=1,dp=8,mb=1,rc=none,zero=1 >"$out/dr1" 2>&1
"$CCBENCH" layout -m "$out/d0.json" -g 8 -x tp=1,pp=1,dp=8,mb=1,rc=none,zero=1 >"$out/dr0" 2>&1
a1=$(sed -n 's/.*activations \([0-9.]*\) GB.*/\1/p' "$out/dr1"); a0=$(sed -n 's/.*activations \([0-9.]*\) GB.*/\1/p' "$out/dr0")
# per layer s*b*h*(10 + 24) + 5*a*s^2*b against (8 + 24) + 2*a*s^2*b, over 24 layers
want=$(python3 -c "s,h,a,L=2048,2048,16,24; print('%.2f %.2f' % (L*(34*s*h+5*a*s*s)/1e9, L*(32*s*h+2*a*s*s)/1e9))")
[ -n "$a1" ] && [ -n "$a0" ] && python3 -c "import sys; w=[float(x) for x in sys.argv[3].split()]; a1,a0=float(sys.argv[1]),float(sys.argv[2]); sys.exit(not (a1-a0 > 0.9*(w[0]-w[1]) and a1-a0 < 1.1*(w[0]-w[1])))" "$a1" "$a0" "$want" &&
    ! grep -q -- "--hidden-dropout" "$out/dr1" && grep -q -- "--attention-dropout 0.0 --hidden-dropout 0.0" "$out/dr0"
ok $? "a gelu spec with dropout 0: its masks and 3as^2b of scores leave the activations ($a1 -> $a0 GB), the line says 0.0"
"$CCBENCH" layout -m "$T/hf-falcon-40b.json" -g 64 -k 1 >"$out/fal" 2>&1
grep -q -- "--attention-dropout 0.0 --hidden-dropout 0.0" "$out/fal"
ok $? "Falcon-40B's config (dropout 0.0): trained without, said on the Megatron line"
printf '{"preset":"llama3-8b","dropout":0.1}' >"$out/ld.json"
"$CCBENCH" layout -m "$out/ld.json" -g 8 -k 1 >"$out/ld" 2>&1
! grep -q -- "--hidden-dropout" "$out/ld"; ok $? "a swiglu spec with dropout 0.1: Megatron's default left"
printf '{"preset":"llama3-8b","dropout":1.5}' >"$out/lb.json"
refuse "dropout 1.5" '"dropout" must be a probability from 0 to below 1' -m "$out/lb.json" -g 8
refuse "a preset's name without its last letter" "unknown model 'llama3-8' (did you mean llama3-8b? " -m llama3-8 -g 8
refuse "a preset's name with a letter missing" "(did you mean llama2-70b? " -m lama2-70b -g 8
refuse "the beginning of several presets: none suggested" "unknown model 'llama3' (a preset from" -m llama3 -g 8
refuse "a misspelt GPU" "unknown --gpu-model 'b20' (did you mean b200? " -m llama3-8b -g 8 --gpu-model b20
refuse "a hexadecimal number" "--gpu-mem-gb needs a number, got '0x10'" -m llama3-8b -g 8 --gpu-mem-gb 0x10
refuse "a number after a blank" "--gpus needs an integer, got ' 8'" -m llama3-8b --gpus " 8"
# products of --explain's degrees beyond any integer: the infeasible message, no overflow
refuse "--explain with degrees of 1,000,000" "tp\*pp\*dp\*cp is 1e+24 but the cluster has 64 GPUs" -m llama3-8b -g 64 -x tp=1000000,pp=1000000,dp=1000000,cp=1000000
printf '{"layers":8192,"hidden":64,"heads":8,"vocab":1000,"seq_len":16,"global_batch":1024}' >"$out/l8k.json"
refuse "--explain --json of pp x v beyond an int" "pp 524288 does not divide the 8192 layers" -m "$out/l8k.json" -g 8 -x pp=524288,v=8192 --json
# results that cannot be fitted say why
printf '{"type":"header","nnodes":1}\n{"type":"result","collective":"allreduce","nranks":2,"bytes":1024,"time_us":0}\n' >"$out/z.jsonl"
refuse "JSON Lines whose every result has time 0" "no usable \"type\":\"result\" lines: 1 without .* positive bytes and time_us (the first: line 2); 0 reporting wrong elements" -m megatron-1.7b -g 16 -r "$out/z.jsonl"
# many groups of results: read in well under the test's 20 s (grouping is sorted, not
# quadratic), the groups read first kept (written from the largest down, so that the order of
# the group keys is not the order read)
python3 -c '
import sys
f = open(sys.argv[1], "w"); f.write("{\"type\":\"header\",\"nnodes\":1}\n")
for i in range(100000):
    for b, t in ((1024, 5), (1073741824, 10000)):
        f.write("{\"type\":\"result\",\"collective\":\"allreduce\",\"nranks\":%d,\"bytes\":%d,\"time_us\":%d}\n" % (100001 - i, b, t))' "$out/many.jsonl"
timeout 20 "$CCBENCH" layout -m megatron-1.7b -g 16 -r "$out/many.jsonl" >"$out/mg" 2>"$out/mge"; rc=$?
[ $rc -eq 0 ] && grep -q "99968 group(s) not used: ccbench keeps 32 group sizes" "$out/mge" &&
    grep -q "^#         fit allreduce, 100001 ranks within a node: " "$out/mg" &&
    grep -q "^#         fit allreduce, 99970 ranks within a node: " "$out/mg" &&
    [ "$(grep -c "^#         fit allreduce, " "$out/mg")" -eq 32 ]
ok $? "100,000 groups of results: the first 32 read are kept (exit $rc)" "$(cat "$out/mge")"
# OSU Micro-Benchmarks logs as --results, their ranks after the name (FILE@NODESxPER_NODE)
O="$T/osu-nccl-2x8.txt"
"$CCBENCH" layout -m megatron-1.7b --gpus 16 --gpu-model a100-80g --results "$O@2x8" >"$out/osu" 2>"$out/osuerr"
ok $? "--results with an OSU log @2x8" "$(cat "$out/osuerr")"
grep -q "fit allreduce, 16 ranks across nodes, 8 per node: 20.0 us + bus bytes / 50.0 GB/s (14 sizes" "$out/osu"
ok $? "OSU all-reduce: size and time read as nccl-tests' (20 us + bus bytes / 50 GB/s)" "$(grep fit "$out/osu")"
# OSU's all-gather size is one rank's share: read as 1/16 of nccl-tests' size it would fit 2.5
grep -q "fit allgather, 16 ranks across nodes, 8 per node: 15.0 us + bus bytes / 40.0 GB/s" "$out/osu"
ok $? "OSU all-gather: its per-rank size is turned into nccl-tests' size" "$(grep fit "$out/osu")"
grep -q "fitted from '.*osu-nccl-2x8.txt@2x8' (OSU)" "$out/osu" && ! grep -q "fit gather" "$out/osu"
ok $? "rates name the OSU log; the gather test is passed over"
grep -q "not used: 1 OSU row(s) failing validation" "$out/osuerr" && ! grep -q "measured with MPI" "$out/osuerr"
ok $? "a row whose validation failed is named and left out; NCCL's test is not warned about" "$(cat "$out/osuerr")"
"$CCBENCH" layout -m megatron-1.7b --gpus 16 --gpu-model a100-80g --results "$O@1x16" >"$out/osu1" 2>&1
grep -q "fit allreduce, 16 ranks within a node: 20.0 us" "$out/osu1"
ok $? "OSU log @1x16: the fit is within a node" "$(grep fit "$out/osu1")"
sed -e 's/^/[1,0]<stdout>: /' "$O" >"$out/osu-tag.txt"
"$CCBENCH" layout -m megatron-1.7b --gpus 16 --gpu-model a100-80g --results "$out/osu-tag.txt@2x8" >"$out/osut" 2>&1
grep -q "fit allreduce, 16 ranks across nodes, 8 per node: 20.0 us + bus bytes / 50.0 GB/s (14 sizes" "$out/osut"
ok $? "OSU log with mpirun --tag-output tags reads the same" "$(grep fit "$out/osut")"
sed -e 's/OSU NCCL-CUDA /OSU MPI /' "$O" >"$out/osu-host.txt"
"$CCBENCH" layout -m megatron-1.7b --gpus 16 --gpu-model a100-80g --results "$out/osu-host.txt@2x8" >/dev/null 2>"$out/osuh"
grep -q "measured with MPI in host memory, not NCCL" "$out/osuh"
ok $? "OSU's MPI test on host memory is warned about" "$(cat "$out/osuh")"
refuse "OSU log without its ranks" "does not say how many ranks ran it: give them as '.*osu-nccl-2x8.txt@NODESxPER_NODE'" \
    -m megatron-1.7b --gpus 16 --results "$O"
refuse "ranks after an nccl-tests log" "'@2x8' is for OSU Micro-Benchmarks output" \
    -m megatron-1.7b --gpus 16 --results "$T/nccl-tests-inter.txt@2x8"
refuse "malformed ranks after an OSU log" "after '@' give the ranks as NODESxPER_NODE" \
    -m megatron-1.7b --gpus 16 --results "$O@2y8"
refuse "zero ranks after an OSU log" "after '@' give the ranks as NODESxPER_NODE" \
    -m megatron-1.7b --gpus 16 --results "$O@0x8"
printf '# OSU MPI-CUDA Latency Test v7.4\n# Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)\n# Size          Latency (us)\n' >"$out/osu_latency.txt"
awk 'BEGIN { for (s = 1; s <= 67108864; s *= 4) printf "%-10d%18.2f\n", s, 3 + s / 20000 }' >>"$out/osu_latency.txt"
refuse "OSU point-to-point test said to run on 16 ranks" "line 1: an OSU point-to-point latency test runs 2 ranks, not the 16 of @2x8" \
    -m megatron-1.7b --gpus 16 --results "$out/osu_latency.txt@2x8"
"$CCBENCH" layout -m megatron-1.7b --gpus 16 --gpu-model a100-80g --results "$out/osu_latency.txt@2x1" >"$out/osul" 2>"$out/osule"
grep -q "fit sendrecv, 2 ranks across nodes, 1 per node: 3.0 us + bus bytes / 20.0 GB/s" "$out/osul" &&
    grep -q "measured with MPI on GPU memory, not NCCL" "$out/osule"
ok $? "osu_latency @2x1: send/recv of 2 ranks across nodes, MPI on GPU memory warned about" "$(grep fit "$out/osul"; cat "$out/osule")"
sed -e 's/MPI-CUDA Latency/MPI_Put-CUDA Latency/' "$out/osu_latency.txt" >"$out/osu_put.txt"
refuse "a one-sided OSU test only" "OSU output with nothing to fit (1 test(s), 14 row(s): 14 of tests without a ccbench collective" \
    -m megatron-1.7b --gpus 16 --results "$out/osu_put.txt@1x2"
# NVLink domains over several hosts: a group measured over 2 racks of 18 hosts of 4 (144
# ranks, 36 hosts) ran with 72 members per domain, not 4 per host: measured at the rate the
# cluster is given, it changes nothing and is not warned about
awk 'BEGIN { print "{\"type\": \"header\", \"command\": \"bench\", \"nranks\": 144, \"nnodes\": 36, \"backend\": \"nccl\"}"
     for (b = 65536; b <= 1073741824; b *= 4)
         printf "{\"type\": \"result\", \"collective\": \"allreduce\", \"backend\": \"nccl\", \"nranks\": 144, \"bytes\": %d, \"inplace\": false, \"time_us\": %.6f}\n", b, 20 + b * 2 * 143 / 144 / 360e3 }' >"$out/nvl72.jsonl"
nvl="-m llama3-8b --global-batch 576 --dp-overlap 0 --gpus 144 --gpus-per-node 72 --gpus-per-host 4 --gpu-model b200 --intra-GBps 700 --inter-GBps 360 -x tp=8,pp=1,dp=18,mb=1,zero=0"
"$CCBENCH" layout $nvl >"$out/nvla" 2>&1
"$CCBENCH" layout $nvl -r "$out/nvl72.jsonl" >"$out/nvlb" 2>"$out/nvlbe"
a=$(awk '/data-parallel gradient reduction/ { print $4 }' "$out/nvla")
b=$(awk '/data-parallel gradient reduction/ { print $4 }' "$out/nvlb")
grep -q "fit allreduce, 144 ranks across nodes, 72 per node: 20.0 us + bus bytes / 360.0 GB/s" "$out/nvlb" &&
    ! grep -q "expected" "$out/nvlbe" && awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && b / a > 0.95 && b / a < 1.05) }'
ok $? "--gpus-per-host: a group over 2 NVLink domains of 18 hosts has 72 members per node ($a s vs $b s)" "$(grep fit "$out/nvlb"; cat "$out/nvlbe")"
refuse "--gpus-per-host above --gpus-per-node" "--gpus-per-host 16 is more than the 8 GPUs per node" \
    -m llama3-8b --gpus 16 --gpus-per-host 16
# a Grace superchip is not its board GPU's row
"$CCBENCH" layout -m llama3-8b --gpus 8 --gpu-model "NVIDIA GB200" -k 1 >"$out/gb" 2>&1 &&
    grep -q "^# cluster 8 x gb200 (1 node of 8), 200 GB and 2500 TFLOP/s (bf16) per GPU" "$out/gb" &&
    "$CCBENCH" layout -m llama3-8b --gpus 8 --gpu-model "NVIDIA B200" -k 1 2>&1 | grep -q "^# cluster 8 x b200 "
ok $? "GB200 is not read as B200, nor B200 as GB200" "$(grep '^# cluster' "$out/gb")"
# pdsh's tag of a host given by address
sed -e 's/^/10.0.0.1: /' "$T/nccl-tests-inter.txt" >"$out/ip_all_reduce_perf.log"
"$CCBENCH" layout -m megatron-1.7b --gpus 16 --gpu-model a100-80g --results "$out/ip_all_reduce_perf.log" >"$out/ip" 2>&1
grep -q "fit allreduce, 16 ranks across nodes, 8 per node: 20.0 us + bus bytes / 50.0 GB/s" "$out/ip"
ok $? "nccl-tests log tagged by pdsh with an address (10.0.0.1: ) reads" "$(grep -E 'fit|error' "$out/ip")"
# Hugging Face configs: encoder-decoder refused; OPT's "dropout" read
printf '{"model_type": "t5", "is_encoder_decoder": true, "d_model": 2048, "d_ff": 5120, "num_layers": 24, "num_decoder_layers": 24, "num_heads": 32, "vocab_size": 32128}\n' >"$out/t5.json"
refuse "encoder-decoder config" "an encoder-decoder config (T5, BART" -m "$out/t5.json" --gpus 8
printf '{"model_type": "opt", "hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 32, "ffn_dim": 8192, "vocab_size": 50272, "max_position_embeddings": 2048, "activation_function": "relu", "dropout": 0.1, "attention_dropout": 0.0}\n' >"$out/opt.json"
"$CCBENCH" layout -m "$out/opt.json" --gpus 8 -j 2>/dev/null | grep -q '"dropout": true'
ok $? "OPT config: its \"dropout\" key turns dropout on"
# the vocabulary padded as Megatron-LM pads it (128 x tp), or not with --vocab-pad 1
"$CCBENCH" layout -m "$T/hf-gpt2.json" --gpus 8 -x tp=4,pp=1,dp=2 >"$out/vp" 2>&1
grep -q "^vocabulary 50257 padded to 50688 (12672 rows per tp rank)$" "$out/vp" &&
    grep -q "vocabulary padded to 128 x tp" "$out/vp"
ok $? "--explain: GPT-2's 50257 padded to 50688 (128 x 4) at tp=4" "$(grep -i vocab "$out/vp" | cut -c1-200)"
"$CCBENCH" layout -m "$T/hf-gpt2.json" --gpus 8 -x tp=4,pp=1,dp=2 --vocab-pad 1 -j >"$out/vp1" 2>&1
grep -q '"padded_vocab": 50260$' "$out/vp1" && grep -q '"vocab_pad": 1' "$out/vp1" &&
    grep -q -- '--make-vocab-size-divisible-by 1 ' "$out/vp1"
ok $? "--vocab-pad 1: only to a multiple of tp (50260), and Megatron-LM told so" "$(grep -E 'vocab' "$out/vp1" | cut -c1-160)"
refuse "--vocab-pad 0" "vocab-pad" -m llama3-8b --gpus 8 --vocab-pad 0
# block recomputation: the fewest layers per chunk that fit, said in the breakdown, the
# layout, Megatron-LM's arguments and the JSON alike
"$CCBENCH" layout -m llama3-70b -g 64 --gpu-model h100-sxm -x tp=2,pp=1,dp=32,mb=1,zero=3,rc=block >"$out/blk" 2>&1
n=$(sed -n 's/^recomputation: the first \([0-9]*\) of the 80 layers of each of the 1 model chunk(s) per stage recomputed whole, the others kept$/\1/p' "$out/blk")
[ -n "$n" ] && [ "$n" -gt 1 ] && [ "$n" -lt 80 ] && grep -q "^feasible yes" "$out/blk" &&
    grep -q "^layout   tp=2,pp=1,dp=32,cp=1,mb=1,v=1,sp=1,zero=3,rc=block,rcl=$n$" "$out/blk" &&
    grep -q -- "--recompute-granularity full --recompute-method block --recompute-num-layers $n " "$out/blk" &&
    grep -q "^  # block recomputation (the first $n layers of every model chunk, the others kept) is Megatron-LM.s --recompute-method block" "$out/blk"
ok $? "--explain rc=block: the fewest layers that fit ($n), in the layout and the arguments" "$(grep -E '^(recomputation|layout|feasible)' "$out/blk")"
"$CCBENCH" layout -m llama3-70b -g 64 --gpu-model h100-sxm -x tp=2,pp=1,dp=32,mb=1,zero=3,rcl=$((n - 1)) >"$out/blk1" 2>&1
[ $? -eq 2 ] && grep -q "^feasible no: needs .* GB per GPU" "$out/blk1"
ok $? "... one layer fewer (rcl=$((n - 1))) does not fit: exit 2" "$(grep '^feasible' "$out/blk1")"
"$CCBENCH" layout -m llama3-70b -g 64 --gpu-model h100-sxm -x tp=2,pp=1,dp=32,mb=1,zero=3,rc=block -j 2>/dev/null >"$out/blkj"
grep -q '"recompute": "block",' "$out/blkj" && grep -q "\"recompute_layers\": $n," "$out/blkj"
ok $? "JSON: recompute block, recompute_layers $n"
refuse "rcl with rc=full" "rcl (layers recomputed per model chunk) is for rc=block, not rc=full" \
    -m llama3-70b -g 64 --gpu-model h100-sxm -x tp=2,rc=full,rcl=3
"$CCBENCH" layout -m llama3-70b -g 64 --gpu-model h100-sxm --recompute block -k 3 >"$out/blks" 2>&1
[ "$(grep -c '^  [1-3]  tp=.*,rc=block,rcl=[0-9]' "$out/blks")" -eq 3 ] && grep -q "recompute block," "$out/blks"
ok $? "--recompute block: every layout ranked recomputes a block" "$(grep -E '^  [1-3] ' "$out/blks")"
# a group on unevenly filled nodes (10 ranks on 4: 3, 3, 2, 2) is named by its node count
# and its emptiest node, in the header and the JSON
printf '{"type":"header","nranks":10,"nnodes":4}\n' >"$out/uneven.jsonl"
for b in 1024 16384 262144 4194304 67108864; do
    awk -v b=$b 'BEGIN { printf "{\"type\":\"result\",\"collective\":\"allreduce\",\"nranks\":10,\"bytes\":%d,\"time_us\":%.6f}\n", b, 20 + b * 1.8 / 50e9 * 1e6 }'
done >>"$out/uneven.jsonl"
"$CCBENCH" layout -m megatron-1.7b -g 16 --gpu-model a100-80g --results "$out/uneven.jsonl" -k 1 >"$out/unv" 2>&1 &&
    grep -q "^#         fit allreduce, 10 ranks across nodes, 4 nodes, 2 in the emptiest: 20.0 us + bus bytes / 50.0 GB/s" "$out/unv" &&
    "$CCBENCH" layout -m megatron-1.7b -g 16 --gpu-model a100-80g --results "$out/uneven.jsonl" -k 1 --json 2>/dev/null |
    tr -d ' \n' | grep -q '"nranks":10,"per_node":2,"nodes":4,'
ok $? "--results: 10 ranks on 4 nodes fitted as 4 nodes, 2 in the emptiest" "$(grep 'fit ' "$out/unv")"
# --explain of a pipeline lists the memory of the stages evaluated side by side; the fullest
# is the one the breakdown names
"$CCBENCH" layout -m llama3-405b -g 2048 --gpu-model h100-sxm --cp-max 2 -x tp=8,pp=16,cp=2,mb=1,v=2,zero=1,sp=1,rc=none,split=1 >"$out/stg" 2>&1
full=$(sed -n 's/^memory per GPU (second stage): .* = \([0-9.]*\) GB of .*/\1/p' "$out/stg")
grep -q "^memory per GPU by stage: first [0-9.]* GB, second $full GB, last [0-9.]* GB$" "$out/stg" &&
    awk -v f="$full" '/^memory per GPU by stage/ { gsub(/,/, ""); exit !($7 <= f && $13 <= f && $7 > 0 && $13 > 0) }' "$out/stg"
ok $? "--explain: memory by stage, the second the fullest ($full GB)" "$(grep '^memory' "$out/stg")"
# activation offloading: NVIDIA's GB200 recipe for Llama-3 70B (FSDP, micro-batch 2, 40 of 80
# layers offloaded) explained, the search with --offload auto finding it, none over PCIe
G="--gpu-model gb200 --precision fp8 --grad-reduce bf16 --tp-overlap 1 --global-batch 256"
"$CCBENCH" layout -m llama3-70b -g 64 $G --mem-margin 0.05 -x tp=1,pp=1,dp=64,mb=2,zero=3,rc=none,off=40 >"$out/off" 2>&1 &&
    grep -q "^layout   tp=1,pp=1,dp=64,cp=1,mb=2,v=1,sp=0,zero=3,rc=none,off=40$" "$out/off" &&
    grep -q "^activation offload: the first 40 of 80 layers' activations to host memory, [0-9.]* GB per micro-batch each way at 225.0 GB/s (240 GB of host memory per GPU); 0.000 s of the step not hidden behind compute$" "$out/off" &&
    grep -q -- "--cpu-offloading-num-layers 40 " "$out/off" &&
    grep -q "^  # activation offloading (40 layers' activations to host memory) is Megatron-Core's --cpu-offloading-num-layers" "$out/off"
ok $? "--explain off=40: the offload line, Megatron-LM's --cpu-offloading-num-layers, the DeepSpeed note" "$(grep -E '^(layout|feasible|activation)' "$out/off")"
"$CCBENCH" layout -m llama3-70b -g 64 $G --mem-margin 0.05 -x tp=1,pp=1,dp=64,mb=2,zero=3,off=40 -j 2>/dev/null | tr -d ' \n' >"$out/offj"
grep -q '"recompute":"none","recompute_layers":null,"recompute_modules":null,"offload_layers":40,' "$out/offj" && grep -q '"feasible":true,' "$out/offj"
ok $? "JSON: offload_layers; off=N without rc means rc=none"
"$CCBENCH" layout -m llama3-70b -g 64 $G -k 1 >"$out/offs" 2>&1 &&
    grep -q "^  1  tp=1,pp=1,dp=64,cp=1,mb=2,v=1,sp=0,zero=3,rc=none,off=4[0-5] " "$out/offs" &&
    grep -q "recompute auto, activation offload, overlap" "$out/offs"
ok $? "--offload auto on GB200: the search's first is NVIDIA's recipe" "$(grep -E '^  1 ' "$out/offs")"
"$CCBENCH" layout -m llama3-70b -g 64 $G --offload off -k 1 2>&1 | grep -E '^  1 ' >"$out/offn"
grep -q '^  1  tp=' "$out/offn" && ! grep -q ",off=" "$out/offn"
ok $? "--offload off: no offloading" "$(cat "$out/offn")"
"$CCBENCH" layout -m llama3-70b -g 64 --gpu-model h100-sxm --precision fp8 -k 100 >"$out/offh" 2>&1
grep -q '^  1  tp=' "$out/offh" && ! grep -q ',off=' "$out/offh" && ! grep -q "activation offload" "$out/offh"
ok $? "--offload auto over H100's PCIe: none"
refuse "off with a pipeline" "off=8: activation offloading runs without a pipeline and without recomputation" \
    -m llama3-70b -g 64 $G -x tp=8,pp=2,off=8
refuse "nothing fits: host memory named" "limit 135.0 GB, and it offloads .* GB per GPU to host memory, limit 45.0 GB (--host-mem-gb less the margin)" \
    -m llama3-70b -g 64 $G --recompute none --tp-max 1 -z 3 --mb-max 2 --gpu-mem-gb 150 --host-mem-gb 50
"$CCBENCH" layout --list-gpus >"$out/lg" 2>&1 &&
    awk '$1 == "gb200" && $NF == 225 { g = 1 } $1 == "h100-sxm" && $NF == 50 { h = 1 } END { exit !(g && h) }' "$out/lg" &&
    grep -q "host: GB/s to host memory, one direction" "$out/lg"
ok $? "--list-gpus: the host link column (GB200's NVLink-C2C share 225, H100's PCIe 5.0 50)"
refuse "nothing fits over PCIe: --offload on named" "limit 77.3 GB; --offload on would fit tp=2,pp=1,dp=1,cp=1,mb=1,v=1,sp=1,zero=0,rc=none,off=[0-9]*, offloading [0-9]* layers' activations to host memory over PCIe" \
    -m llama3-8b -g 2 --gpu-model h100-sxm --recompute none
tap_done
