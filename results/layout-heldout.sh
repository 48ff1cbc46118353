#!/bin/sh
# Held-out checks of `ccbench layout`: published training runs that none of its constants was
# fitted on. Prints the Markdown tables of results/layout-heldout.md.
#
#   1. LLM Foundry's MPT throughput tables: one software stack (PyTorch FSDP with full
#      sharding, flash attention, bf16) measured on A100 80GB and on H100 80GB
#      (mosaicml/llm-foundry scripts/train/benchmarking/README.md at commit 495218376830):
#      every H100 run whose model, sequence length, GPU count and checkpointing the A100
#      table also has, and that A100 run.
#   2. BigScience's measured layouts of one 181B model on 48 nodes of 8 A100 80GB
#      (Megatron-DeepSpeed, fp16, ZeRO-1; bigscience-workshop/bigscience
#      train/tr11-176B-ml/chronicles-prequel.md, tables of 2022-02-25).
#
# usage: sh results/layout-heldout.sh [CCBENCH] [extra ccbench layout options]
#   CCBENCH defaults to ./ccbench; extra options (e.g. --efficiency 0.53) go to every run.
set -u
CC=${1:-./ccbench}
[ $# -gt 0 ] && shift
EXTRA="$*"
if ! "$CC" layout --list-gpus >/dev/null 2>&1; then
    echo "layout-heldout.sh: '$CC' is not a ccbench binary with the layout command" >&2
    exit 2
fi
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM

# model NAME LAYERS HIDDEN HEADS FFN VOCAB MLP TIED FLASH SOURCE: writes $tmp/NAME.json
model() {
    printf '{"name": "%s", "layers": %s, "hidden": %s, "heads": %s, "ffn": %s, "vocab": %s, "seq_len": 2048, "global_batch": 8, "precision": "bf16", "optimizer": "adam", "recompute": "none", "mlp": "%s", "tied_embeddings": %s, "flash_attention": %s, "source": "%s"}\n' \
        "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "${10}" >"$tmp/$1.json"
}
LF="mosaicml/llm-foundry scripts/train/yamls/pretrain"
model mpt-760m 24 1536 12 6144 50368 gelu true true "$LF/mpt-760m.yaml"
model mpt-1b 24 2048 16 8192 50368 gelu true true "$LF/mpt-1b.yaml"
model mpt-3b 32 2560 20 10240 50368 gelu true true "$LF/mpt-3b.yaml"
model mpt-7b 32 4096 32 16384 50368 gelu true true "$LF/mpt-7b.yaml"
model mpt-13b 40 5120 40 20480 50368 gelu true true "$LF/mpt-13b.yaml"
model mpt-30b 48 7168 56 28672 50368 gelu true true "$LF/mpt-30b.yaml"
model mpt-70b 80 8192 64 32768 50368 gelu true true "$LF/mpt-70b.yaml"
model bigscience-181b 72 14336 64 57344 250880 gelu true false \
    "bigscience tr11-176B-ml chronicles-prequel.md: NHIDDEN=14336 NLAYERS=72 NHEADS=64, 250k vocabulary"

# field KEY FILE: the first numeric value of "KEY" in ccbench's JSON
field() {
    awk -v k="\"$1\":" '$1 == k { v = $2; sub(/,$/, "", v); print v; exit }' "$2"
}

# run WHAT OUT ARGS...: ccbench layout --json into OUT (an infeasible layout still has an
# estimate: ccbench exits 2 and says why, and OUT.fit says "refused"); stops the script,
# naming WHAT, when ccbench gave no estimate
run() {
    what=$1 o=$2
    shift 2
    # exit 0: the layout fits (its JSON also holds the search's first, which always does)
    if "$CC" layout "$@" --json >"$o" 2>"$o.err"; then echo fits >"$o.fit"; else echo refused >"$o.fit"; fi
    if [ -z "$(field tokens_per_s "$o")" ]; then
        echo "layout-heldout.sh: $what: $(cat "$o.err")" >&2
        exit 1
    fi
}

# the habits that fit each GPU's rows below (results/layout-heldout.md)
FIT_A100="--attn-efficiency 0.58"
FIT_H100="--efficiency 0.58 --attn-efficiency 0.32"

echo "### LLM Foundry MPT, FSDP full sharding, bf16 (tokens/s per GPU)"
echo
if [ -n "$EXTRA" ]; then with="with \`$EXTRA\`"; else with="its defaults"; fi
echo "ccbench: $with; fitted: A100 \`$FIT_A100\`, H100 \`$FIT_H100\`."
echo
echo "| model | seq | GPUs | micro-batch x accumulation | recompute | GPU | published | ccbench | error | fitted | error | ccbench memory/GPU |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
# model seq GPUs mb ga recompute gpu gradient-reduction published-tokens/s/GPU (FSDP mixed
# precision DEFAULT reduces gradients in fp32, PURE in bf16)
while read -r m s n mb ga rc gpu red ref; do
    set -- -m "$tmp/$m.json" -g "$n" --gpu-model "$gpu" --mem-margin 0 --seq-len "$s" \
        --global-batch $((mb * ga * n)) --grad-reduce "$red" --vocab-pad 1 -x "tp=1,pp=1,dp=$n,mb=$mb,zero=3,rc=$rc"
    if [ "$gpu" = a100-80g ]; then fit=$FIT_A100; else fit=$FIT_H100; fi
    # shellcheck disable=SC2086
    run "$m $s $gpu" "$tmp/out" "$@" $EXTRA
    # shellcheck disable=SC2086
    run "$m $s $gpu, fitted" "$tmp/fit" "$@" $fit
    awk -v m="$m" -v s="$s" -v n="$n" -v mb="$mb" -v ga="$ga" -v rc="$rc" -v g="$gpu" \
        -v ref="$ref" -v t="$(field tokens_per_s "$tmp/out")" -v f="$(field tokens_per_s "$tmp/fit")" \
        -v mem="$(field total "$tmp/out")" -v v="$(cat "$tmp/out.fit")" 'BEGIN {
        gn = g == "a100-80g" ? "A100 80GB" : "H100 80GB"
        t /= n
        f /= n
        printf "| %s | %d | %d | %d x %d | %s | %s | %d | %.0f | %+.1f%% | %.0f | %+.1f%% | %.1f GB%s |\n",
               toupper(m), s, n, mb, ga, rc, gn, ref, t, (t / ref - 1) * 100, f, (f / ref - 1) * 100,
               mem / 1e9, v == "fits" ? "" : " (refused)"
    }'
done <<'EOF'
mpt-760m 512 8 96 2 none a100-80g fp32 29446
mpt-760m 512 8 96 2 none h100-sxm fp32 83749
mpt-760m 1024 8 48 2 none a100-80g fp32 29765
mpt-760m 1024 8 48 2 none h100-sxm fp32 78581
mpt-760m 2048 8 24 2 none a100-80g fp32 32434
mpt-760m 2048 8 24 2 none h100-sxm fp32 63147
mpt-760m 4096 8 12 2 none a100-80g fp32 27351
mpt-760m 4096 8 12 2 none h100-sxm fp32 55459
mpt-760m 8192 8 6 2 none a100-80g fp32 20933
mpt-760m 8192 8 6 2 none h100-sxm fp32 41825
mpt-760m 16384 8 3 2 none a100-80g fp32 14274
mpt-760m 16384 8 3 2 none h100-sxm fp32 27815
mpt-760m 32768 8 1 2 none a100-80g fp32 8802
mpt-760m 32768 8 1 2 none h100-sxm fp32 16291
mpt-1b 512 8 56 4 none a100-80g fp32 23148
mpt-1b 512 8 56 4 none h100-sxm fp32 52275
mpt-1b 1024 8 18 4 none a100-80g fp32 22112
mpt-1b 1024 8 18 4 none h100-sxm fp32 48910
mpt-1b 2048 8 14 4 none a100-80g fp32 20513
mpt-1b 2048 8 14 1 none h100-sxm fp32 45455
mpt-1b 4096 8 7 4 none a100-80g fp32 17807
mpt-1b 4096 8 7 4 none h100-sxm fp32 38535
mpt-1b 8192 8 3 4 none a100-80g fp32 13814
mpt-1b 8192 8 3 4 none h100-sxm fp32 29157
mpt-1b 16384 8 2 4 none a100-80g fp32 9956
mpt-1b 16384 8 2 4 none h100-sxm fp32 19649
mpt-1b 32768 8 1 4 none a100-80g fp32 6275
mpt-1b 32768 8 1 4 none h100-sxm fp32 12025
mpt-1b 65536 8 1 2 full a100-80g fp32 3044
mpt-1b 65536 8 1 2 full h100-sxm fp32 5506
mpt-3b 512 8 40 6 none a100-80g fp32 12127
mpt-3b 512 8 40 6 none h100-sxm fp32 27965
mpt-3b 1024 8 20 6 none a100-80g fp32 11580
mpt-3b 1024 8 20 6 none h100-sxm fp32 27046
mpt-3b 4096 8 5 6 none a100-80g fp32 9457
mpt-3b 4096 8 5 6 none h100-sxm fp32 20964
mpt-3b 8192 8 3 6 none a100-80g fp32 7695
mpt-3b 8192 8 3 6 none h100-sxm fp32 16578
mpt-3b 16384 8 1 6 none a100-80g fp32 5529
mpt-3b 16384 8 1 6 none h100-sxm fp32 11152
mpt-3b 32768 8 3 6 full a100-80g fp32 3029
mpt-3b 32768 8 3 6 full h100-sxm fp32 5873
mpt-3b 65536 8 1 2 full a100-80g fp32 1767
mpt-3b 65536 8 1 2 full h100-sxm fp32 3262
mpt-7b 1024 8 64 2 full a100-80g fp32 4357
mpt-7b 1024 8 64 2 full h100-sxm fp32 10203
mpt-7b 2048 8 6 2 none a100-80g fp32 4641
mpt-7b 2048 8 6 1 none h100-sxm fp32 10643
mpt-7b 4096 8 16 2 full a100-80g fp32 3684
mpt-7b 4096 8 16 2 full h100-sxm fp32 8611
mpt-7b 8192 8 8 2 full a100-80g fp32 3206
mpt-7b 8192 8 8 2 full h100-sxm fp32 6935
mpt-7b 32768 8 2 2 full a100-80g fp32 1672
mpt-7b 32768 8 2 2 full h100-sxm fp32 3318
mpt-7b 65536 8 1 2 full a100-80g fp32 1013
mpt-7b 65536 8 1 2 full h100-sxm fp32 1956
mpt-13b 1024 8 40 3 full a100-80g fp32 2330
mpt-13b 1024 8 40 3 full h100-sxm fp32 5502
mpt-13b 2048 8 2 3 none a100-80g fp32 2262
mpt-13b 2048 8 2 1 none h100-sxm fp32 4792
mpt-13b 4096 8 10 3 full a100-80g fp32 2060
mpt-13b 4096 8 10 3 full h100-sxm fp32 4717
mpt-13b 16384 8 3 3 full a100-80g fp32 1431
mpt-13b 16384 8 3 3 full h100-sxm fp32 2985
mpt-13b 32768 8 1 3 full a100-80g fp32 1016
mpt-13b 32768 8 1 3 full h100-sxm fp32 1976
mpt-30b 1024 8 6 21 full a100-80g fp32 946
mpt-30b 1024 8 6 21 full h100-sxm fp32 2084
mpt-30b 2048 8 3 21 full a100-80g fp32 916
mpt-30b 2048 8 3 21 full h100-sxm fp32 2002
mpt-30b 4096 8 1 21 full a100-80g fp32 814
mpt-30b 4096 8 1 21 full h100-sxm fp32 1802
mpt-30b 8192 8 1 21 full a100-80g fp32 574
mpt-30b 8192 8 1 21 full h100-sxm fp32 1384
mpt-70b 2048 32 2 16 full a100-80g bf16 373
mpt-70b 2048 32 2 16 full h100-sxm fp32 882
mpt-70b 2048 64 8 4 full a100-80g bf16 410
mpt-70b 2048 64 8 4 full h100-sxm fp32 1039
EOF

# BigScience: 4 x 100 Gb/s Omni-Path per node, given at 46 GB/s (92.5% of the line rate, as
# the built-in A100 entry's 185 of 200 GB/s); Megatron-DeepSpeed's pipeline engine: plain
# 1F1B, blocking sends, gradients reduced after the flush, embedding and logits on the first
# and last stage with the transformer layers split evenly
BS="-m $tmp/bigscience-181b.json -g 384 --gpu-model a100-80g --inter-GBps 46 --precision fp16
    --recompute full --grad-reduce fp16 -z 1 --sp off --dp-overlap 2 --accum-fusion 0
    --pp-overlap 0 --pp-scatter 1 --interleave 1 --uneven-pp 0"
# bigscience TP PP DP MB BATCH: one of its layouts into $tmp/out
bigscience() {
    # shellcheck disable=SC2086
    run "bigscience tp=$1 pp=$2 dp=$3 mb=$4" "$tmp/out" $BS $EXTRA --global-batch "$5" \
        -x "tp=$1,pp=$2,dp=$3,mb=$4"
}
echo
echo "### BigScience 181B on 48 nodes of 8 A100 80GB, measured layouts (seconds per step)"
echo
echo "| tp | pp | dp | micro-batch | batch | measured s/step | measured memory | ccbench s/step | error | ccbench memory/GPU |"
echo "|---|---|---|---|---|---|---|---|---|---|"
while read -r tp pp dp mb gbs ref mem; do
    bigscience "$tp" "$pp" "$dp" "$mb" "$gbs"
    awk -v tp="$tp" -v pp="$pp" -v dp="$dp" -v mb="$mb" -v gbs="$gbs" -v ref="$ref" \
        -v mem="$mem" -v st="$(field step "$tmp/out")" -v cm="$(field total "$tmp/out")" \
        -v v="$(cat "$tmp/out.fit")" 'BEGIN {
        printf "| %d | %d | %d | %d | %d | %.2f | %s | %.1f | %+.1f%% | %.1f GB, %s |\n", tp, pp,
               dp, mb, gbs, ref, mem, st, (st / ref - 1) * 100, cm / 1e9, v
    }'
done <<'EOF'
4 12 8 2 2048 110.48 44GB
4 12 8 4 2048 111.89 60GB
4 6 16 2 2048 111.71 57GB
4 6 16 4 2048 117.11 75GB
2 12 16 2 2048 112.50 63GB
2 24 8 1 2048 119.53 44GB
2 24 8 2 2048 122.75 53GB
4 24 4 1 2048 130.60 -
8 8 6 4 2016 113.16 52GB
8 6 8 4 2048 114.11 55GB
8 6 8 6 2016 123.57 66GB
8 4 12 4 2016 114.81 59GB
8 4 12 2 2016 125.52 53GB
8 12 4 4 2048 117.07 49GB
8 12 4 2 2048 128.82 -
8 2 24 2 2016 136.13 76GB
8 2 24 1 2016 145.45 65GB
EOF

echo
echo "Layouts that ran out of memory there, and ccbench's verdict at its default 10% margin:"
echo
echo "| tp | pp | dp | micro-batch | measured | ccbench memory/GPU | ccbench |"
echo "|---|---|---|---|---|---|---|"
while read -r tp pp dp mb gbs; do
    bigscience "$tp" "$pp" "$dp" "$mb" "$gbs"
    v=$(cat "$tmp/out.fit")
    if [ "$v" = refused ] && ! grep -q '"why": ".* GB per GPU' "$tmp/out"; then
        v="refused, not for memory"
    fi
    awk -v tp="$tp" -v pp="$pp" -v dp="$dp" -v mb="$mb" -v cm="$(field total "$tmp/out")" \
        -v v="$v" 'BEGIN {
        printf "| %d | %d | %d | %d | out of memory | %.1f GB | %s |\n", tp, pp, dp, mb, cm / 1e9, v
    }'
done <<'EOF'
2 6 32 2 2048
2 6 32 1 2048
8 1 48 1 2016
EOF

echo
echo "ccbench's own ranking for the BigScience model (same options, batch 2048, top 5):"
echo
# shellcheck disable=SC2086
if ! "$CC" layout $BS $EXTRA --global-batch 2048 -k 5 >"$tmp/rank" 2>"$tmp/rank.err"; then
    echo "layout-heldout.sh: bigscience search: $(cat "$tmp/rank.err")" >&2
    exit 1
fi
echo '```'
sed -n '/^  #  layout/,/^$/p' "$tmp/rank" | sed '/^$/d'
echo '```'

# Megatron-Core on H100 (Megatron-LM README, "New scaling figures on H100 GPUs", commit
# f2e5db402c of 2024-07-15, images/model_table.png): GPT models, vocabulary 131,072 (untied),
# sequence 4,096, FFN 4h (the parameter counts 12lh^2 + 2Vh match the table's sizes), bf16,
# --overlap-grad-reduce --overlap-param-gather (so the distributed optimizer), --tp-comm-overlap
# (so sequence parallelism), pipeline sends overlapped. Not published: micro-batch,
# interleaving, recomputation; ccbench takes its best setting of each published layout, with
# interleaving up to 32 (Megatron-LM allows one layer per virtual stage). TFLOP/s per GPU on
# Megatron-LM's count of the time (whole attention: ccbench's MFU numerator) = MFU x 989.
# mcore NAME LAYERS HIDDEN HEADS: $tmp/NAME.json
mcore() {
    model "$1" "$2" "$3" "$4" $(($3 * 4)) 131072 gelu false true \
        "Megatron-LM README (2024-07-15), H100 weak-scaling table"
}
MC="--gpu-model h100-sxm --seq-len 4096 -z 1 --tp-overlap 1 --uneven-pp 0 --interleave 32"
echo
echo "### Megatron-Core GPT on H100, the README's weak-scaling table (TFLOP/s per GPU)"
echo
echo "ccbench: $with; fitted: \`$FIT_H100\` (LLM Foundry's H100 fit above)."
echo
echo "| model | GPUs | batch | published t,p,d | published TFLOP/s/GPU | ccbench | error | rank / layouts | fitted | error | rank / layouts (fitted) | fitted setting (mb, v) | fitted first choice |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# best WHAT OUT LAYOUT ARGS...: LAYOUT's rank in the search and its best setting (--explain's
# text; its exit status is 2 when LAYOUT at --explain's plain knobs does not fit, which says
# nothing of its best setting), then that setting's estimate (--json) into OUT; "RANK/LAYOUTS"
# in OUT.rank, the search's first layout in OUT.first
best() {
    what=$1 o=$2 lay=$3
    shift 3
    "$CC" layout "$@" -x "$lay" >"$o.txt" 2>"$o.err"
    sed -n 's/^ *tp=[0-9,=a-z]* ranks \([0-9]*\)[a-z]* of \([0-9]*\) at its best setting, \([^ ]*\) (.*/\1\/\2 \3/p' \
        "$o.txt" >"$o.best"
    sed -n 's/^search .* the first: tp=\([0-9]*\),pp=\([0-9]*\),dp=\([0-9]*\),.*/\1,\2,\3/p' \
        "$o.txt" >"$o.first"
    read -r rank setting <"$o.best" || {
        echo "layout-heldout.sh: $what: not ranked: $(cat "$o.err")" >&2
        exit 1
    }
    echo "$rank" >"$o.rank"
    run "$what, best setting" "$o" "$@" -x "$setting"
}
while read -r name l h a tp pp n gbs ref; do
    mcore "$name" "$l" "$h" "$a"
    # shellcheck disable=SC2086
    set -- -m "$tmp/$name.json" -g "$n" --global-batch "$gbs" $MC
    # shellcheck disable=SC2086
    best "$name" "$tmp/out" "tp=$tp,pp=$pp" "$@" $EXTRA
    # shellcheck disable=SC2086
    best "$name, fitted" "$tmp/fit" "tp=$tp,pp=$pp" "$@" $FIT_H100
    awk -v name="$name" -v n="$n" -v gbs="$gbs" -v tp="$tp" -v pp="$pp" -v ref="$ref" \
        -v t="$(field mfu "$tmp/out")" -v f="$(field mfu "$tmp/fit")" \
        -v r="$(cat "$tmp/out.rank")" -v rf="$(cat "$tmp/fit.rank")" \
        -v mb="$(field micro_batch "$tmp/fit")" -v v="$(field interleave "$tmp/fit")" \
        -v first="$(cat "$tmp/fit.first")" 'BEGIN {
        t *= 989; f *= 989
        printf "| %s | %d | %d | %d,%d,%d | %.1f | %.1f | %+.1f%% | %s | %.1f | %+.1f%% | %s | %d, %d | %s |\n",
               name, n, gbs, tp, pp, n / (tp * pp), ref, t, (t / ref - 1) * 100, r, f,
               (f / ref - 1) * 100, rf, mb, v, first
    }'
done <<'EOF'
1.7B 24 2048 16 1 1 48 192 408.8
7.1B 30 4096 32 2 1 96 192 465.9
16B 32 6144 48 4 1 192 192 489.1
32B 48 7168 56 8 1 384 192 459.6
70B 84 8192 64 8 2 768 384 419.7
119B 92 10240 80 8 4 1536 768 420.5
177B 96 12288 96 8 6 2304 1152 432.8
314B 96 16384 128 8 8 3072 1536 474.4
462B 112 18432 144 8 16 6144 3072 459.9
EOF
