#!/bin/sh
# ccbench layout against the orderings that Narayanan et al. (SC'21, arXiv 2104.04473) state in
# their experiments on 64 and 96 A100 GPUs, with the 2021 Megatron-LM habits of
# results/layout-megatron.md. Only orders are asserted (the paper states them in words; its
# plotted values were not re-read), and each configuration is evaluated with -x, so these
# checks hold the cost model itself, not the search.
. "$CC_SRCDIR/tests/tap.sh"
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
HAB="--gpu-model a100-80g --precision fp16 --grad-reduce fp16 --grad-copy 4 -z 0 --sp off
     --dp-overlap 2 --accum-fusion 0 --uneven-pp 0 --pp-overlap 0 --pp-scatter 1 --recompute full --tp-max 32"
# The 5.9B GPT of Figures 14 and 15: 32 layers, 32 heads, hidden 3840.
echo '{"name":"sc21-5.9b","layers":32,"hidden":3840,"heads":32,"vocab":51200,"seq_len":2048,
 "global_batch":32,"precision":"fp16","flash_attention":false,"tied_embeddings":true}' >"$out/m59"
M161="$CC_SRCDIR/results/layout-fig13-162b.json"

# tf MODEL GPUS BATCH LAYOUT: TFLOP/s per GPU executed (with recomputation) as predicted
tf() {
    # shellcheck disable=SC2086
    "$CCBENCH" layout -m "$1" --gpus "$2" --global-batch "$3" $HAB -x "$4" 2>"$out/err" |
        sed -n 's/.*executed \([0-9.]*\) TFLOP.*/\1/p'
}
# row TAG MODEL GPUS BATCH LAYOUTS...: the predictions in order, space separated
row() {
    mdl=$2 g=$3 b=$4
    shift 4
    r=
    for l in "$@"; do
        v=$(tf "$mdl" "$g" "$b" "$l")
        [ -n "$v" ] || v=X
        r="$r $v"
    done
    echo "$r"
}
# decreasing "a b c ...": every value below the one before it
decreasing() {
    echo "$1" | awk '{ for (i = 1; i <= NF; i++) if ($i !~ /^-?[0-9.]+$/) exit 1
                       for (i = 2; i <= NF; i++) if (!($i < $(i - 1))) exit 1; exit NF < 2 }'
}

# Figure 14: pipeline against data parallelism, t=1, micro-batch 1: "the throughput decreases
# as the pipeline-parallel size increases", at every batch size.
for b in 32 128 512; do
    r=$(row pp "$out/m59" 64 "$b" tp=1,pp=2,dp=32,mb=1 tp=1,pp=4,dp=16,mb=1 tp=1,pp=8,dp=8,mb=1 \
        tp=1,pp=16,dp=4,mb=1 tp=1,pp=32,dp=2,mb=1)
    decreasing "$r"; ok $? "Figure 14, batch $b: throughput falls as p grows (p=2..32:$r)" "$(cat "$out/err")"
done
# Figure 15: tensor against data parallelism, p=1, micro-batch 1: the same with t.
for b in 32 128 512; do
    r=$(row tp "$out/m59" 64 "$b" tp=2,pp=1,dp=32,mb=1 tp=4,pp=1,dp=16,mb=1 tp=8,pp=1,dp=8,mb=1 \
        tp=16,pp=1,dp=4,mb=1 tp=32,pp=1,dp=2,mb=1)
    decreasing "$r"; ok $? "Figure 15, batch $b: throughput falls as t grows (t=2..32:$r)" "$(cat "$out/err")"
done
# Figure 13: tensor against pipeline parallelism for the 161B GPT on 64 GPUs, micro-batch 1:
# (t,p) = (8,8) is the best at both batch sizes.
for b in 32 128; do
    r=$(row tvp "$M161" 64 "$b" tp=2,pp=32,dp=1,mb=1 tp=4,pp=16,dp=1,mb=1 tp=8,pp=8,dp=1,mb=1 \
        tp=16,pp=4,dp=1,mb=1 tp=32,pp=2,dp=1,mb=1)
    echo "$r" | awk '{ for (i = 1; i <= NF; i++) if ($i !~ /^[0-9.]+$/) exit 1
                       for (i = 1; i <= NF; i++) if (i != 3 && !($i < $3)) exit 1; exit NF != 5 }'
    ok $? "Figure 13, batch $b: (8,8) is the best (t=2..32:$r)" "$(cat "$out/err")"
done
# Figure 12: GPT-3 175B on 96 GPUs, t=8, p=12, micro-batch 1: the interleaved schedule (two
# layers per model chunk, v=4) is faster than 1F1B, and the gap closes as the batch grows.
gaps=
for b in 12 24 36 48 60; do
    plain=$(tf gpt3-175b 96 "$b" tp=8,pp=12,dp=1,mb=1,v=1)
    inter=$(tf gpt3-175b 96 "$b" tp=8,pp=12,dp=1,mb=1,v=4)
    gap=$(awk -v a="${plain:-0}" -v c="${inter:-0}" 'BEGIN { if (a > 0) printf "%.4f", c / a - 1 }')
    gaps="$gaps ${gap:-X}"
done
echo "$gaps" | awk '{ for (i = 1; i <= NF; i++) if ($i !~ /^[0-9.]+$/ || !($i > 0)) exit 1
                     exit NF != 5 }'
ok $? "Figure 12: interleaving beats 1F1B at batches 12-60 (gains:$gaps)" "$(cat "$out/err")"
decreasing "$gaps"; ok $? "Figure 12: its gain shrinks as the batch grows"
tap_done
