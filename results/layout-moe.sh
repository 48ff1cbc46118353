#!/bin/sh
# Mixture-of-experts check of `ccbench layout`: NVIDIA's published pre-training throughputs of
# MoE models (Megatron-Bridge performance summary and its
# archive, docs/performance-summary*.md in NVIDIA-NeMo/Megatron-Bridge; NeMo Framework
# performance summaries 25.02 and 25.04 for Mixtral), each at its published layout with the
# recipe's habits: distributed optimizer (zero=1), no recomputation, 16-bit gradient
# reduction, sequence parallelism with tp > 1, tensor-parallel overlap where the recipe turns
# it on. None of ccbench's constants was fitted on these runs. Prints a Markdown table.
#
# usage: sh results/layout-moe.sh [CCBENCH] [extra ccbench layout options]
set -u
CC=${1:-./ccbench}
[ $# -gt 0 ] && shift
EXTRA="$*"
if ! "$CC" layout --list-gpus >/dev/null 2>&1; then
    echo "layout-moe.sh: '$CC' is not a ccbench binary with the layout command" >&2
    exit 2
fi
command -v python3 >/dev/null || { echo "layout-moe.sh: needs python3 to read the JSON" >&2; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM

# the models as Megatron-Bridge and NeMo build them (Qwen3: QK norm, head_dim 128; the
# Mixtral perf scripts use a 32000-token vocabulary for both sizes)
spec() { # NAME JSON-BODY
    printf '{"name": "%s", "seq_len": 4096, "global_batch": 512, "mlp": "swiglu", "tied_embeddings": false, "recompute": "none", %s}\n' "$1" "$2" >"$tmp/$1.json"
}
spec qwen3-30b-a3b '"layers": 48, "hidden": 2048, "heads": 32, "kv_heads": 4, "head_dim": 128, "qk_norm": true, "ffn": 6144, "experts": 128, "topk": 8, "moe_ffn": 768, "vocab": 151936, "rope_theta": 1000000, "source": "Qwen3-30B-A3B config.json"'
spec qwen3-235b-a22b '"layers": 94, "hidden": 4096, "heads": 64, "kv_heads": 4, "head_dim": 128, "qk_norm": true, "ffn": 12288, "experts": 128, "topk": 8, "moe_ffn": 1536, "vocab": 151936, "rope_theta": 1000000, "source": "Qwen3-235B-A22B config.json"'
spec mixtral-8x7b '"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336, "experts": 8, "topk": 2, "moe_ffn": 14336, "vocab": 32000, "rope_theta": 1000000, "source": "Jiang et al. 2024, arXiv 2401.04088, Table 1"'
spec deepseek-v3 '"preset": "deepseek-v3", "source": "ccbench preset deepseek-v3 (its config.json: latent attention, 3 dense layers, 256 experts of 2048, top 8, a shared expert)"'
spec mixtral-8x22b '"layers": 56, "hidden": 6144, "heads": 48, "kv_heads": 8, "ffn": 16384, "experts": 8, "topk": 2, "moe_ffn": 16384, "vocab": 32000, "rope_theta": 1000000, "source": "Mixtral-8x22B config.json, NeMo perf script vocabulary"'

echo "| release | model | GPUs | precision | batch x seq | layout | published tokens/s/GPU | ccbench | error | ccbench memory per GPU | rank of its tp,pp,dp,cp in the search |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
# row RELEASE MODEL GPU GPUS PREC BATCH SEQ LAYOUT PUBLISHED [options...]
row() {
    rel=$1 m=$2 gpu=$3 n=$4 prec=$5 b=$6 s=$7 lay=$8 pub=$9
    shift 9
    # shellcheck disable=SC2086
    "$CC" layout -m "$tmp/$m.json" -g "$n" --gpu-model "$gpu" --precision "$prec" \
        --global-batch "$b" --seq-len "$s" --grad-reduce bf16 $EXTRA "$@" \
        -x "$lay,zero=1,rc=${RC:-none}" --json >"$tmp/out.json" 2>"$tmp/err"
    python3 - "$tmp/out.json" "$tmp/err" "${TAG:-}$rel" "$m" "$gpu" "$n" "$prec" "$b" "$s" "$lay" "$pub" <<'PY'
import json, sys
o, err, rel, m, gpu, n, prec, b, s, lay, pub = sys.argv[1:]
try:
    j = json.load(open(o))
    d = j["explain"]
except (ValueError, KeyError):
    sys.exit("layout-moe.sh: %s %s: %s" % (m, lay, open(err).read().strip()))
tok = d["tokens_per_s"] / int(n)
mb = d["memory_bytes"]
mem = mb["total"] / 1e9
fits = (", fits" if mb["total"] <= mb["limit"] else
        ", over the margin" if mb["total"] <= j["cluster"]["memory_bytes"] else ", over the GPU")
pub = float(pub)
q = j.get("search") or {}
rank = ("%s of %s" % (q["rank"], q["layouts"]) if q.get("rank") else
        "not ranked" if q else "no search")
print("| %s | %s | %s x %s | %s | %s x %s | %s | %s | %s | %+.1f%% | %.1f GB%s | %s |" % (
    rel, m, n, gpu, prec, b, s, lay, format(int(pub), ","), format(round(tok), ","),
    100 * (tok / pub - 1), mem, fits, rank))
PY
}
# Qwen3 30B-A3B, Megatron-Bridge 25.11 and 26.04.01 (forced balanced routing, no token dropped)
row 25.11 qwen3-30b-a3b h100-sxm 16 fp8 512 4096 tp=1,pp=2,dp=8,v=24,mb=2,ep=8 5275
row 26.04.01 qwen3-30b-a3b h100-sxm 16 fp8 1024 4096 tp=1,pp=1,dp=16,mb=1,ep=16 8960
row 25.11 qwen3-30b-a3b b200 8 fp8 512 4096 tp=1,pp=1,dp=8,mb=1,ep=8 9299
row 26.04.01 qwen3-30b-a3b b200 8 fp8 512 4096 tp=1,pp=1,dp=8,mb=4,ep=8 27136
row 25.11 qwen3-30b-a3b gb200 8 fp8 512 4096 tp=1,pp=1,dp=8,mb=4,ep=8 23766
row 26.04.01 qwen3-30b-a3b gb200 8 fp8 512 4096 tp=1,pp=1,dp=8,mb=4,ep=8 26112
# Qwen3 235B-A22B: 94 layers over 8 stages with the embedding and loss counted as layers
row 25.11 qwen3-235b-a22b h100-sxm 256 fp8 2048 4096 tp=2,pp=8,dp=16,v=4,mb=1,sp=1,ep=32,split=1 1575
row 26.04.01 qwen3-235b-a22b h100-sxm 256 fp8 8192 4096 tp=2,pp=8,dp=16,v=4,mb=1,sp=1,ep=32,split=1 1712
row 25.11 qwen3-235b-a22b b200 64 fp8 1024 4096 tp=1,pp=8,dp=8,v=2,mb=1,ep=8,split=1 3269
row 26.04.01 qwen3-235b-a22b b200 256 fp8 8192 4096 tp=1,pp=8,dp=32,mb=1,ep=8,split=1 3776
row 25.11 qwen3-235b-a22b gb200 256 bf16 8192 4096 tp=1,pp=8,dp=32,v=3,mb=1,ep=32,split=1 4916 --gpus-per-node 64 --gpus-per-host 4
row 26.04.01 qwen3-235b-a22b gb200 256 fp8 8192 4096 tp=1,pp=8,dp=32,v=3,mb=1,ep=32,split=1 5680 --gpus-per-node 64 --gpus-per-host 4
# Mixtral, NeMo 25.02 (B200) and 25.04 (GB200): token dropping at capacity factor 1.0,
# padded (--moe-capacity 1 --moe-pad 1: with balanced routing the same rows as dropless)
row 25.02 mixtral-8x7b b200 64 fp8 256 4096 tp=1,pp=1,dp=64,mb=2,ep=8 15457 --moe-capacity 1 --moe-pad 1
row 25.04 mixtral-8x7b gb200 64 fp8 256 4096 tp=1,pp=1,dp=64,mb=2,ep=8 19275 --gpus-per-node 64 --gpus-per-host 4 --moe-capacity 1 --moe-pad 1
row 25.02 mixtral-8x22b b200 256 fp8 64 65536 tp=2,pp=4,cp=8,dp=4,v=14,mb=1,sp=1,ep=8 2232 --tp-overlap 1 --cp-max 8 --moe-capacity 1 --moe-pad 1
# DeepSeek-V3 on B200, Megatron-Bridge 26.02 and 25.11: 61 layers on 16 stages of 4, 14 x 4
# and 1 (the recipe's layout), the preset's multi-token-prediction layer on the last stage;
# the recipe recomputes the latent up projections (selective, --recompute-modules mla_up_proj)
RC=selective row 26.02 deepseek-v3 b200 256 fp8 4096 4096 tp=1,pp=16,dp=16,mb=1,ep=8,first=4,last=1 2689 --recompute-modules mla_up_proj
RC=selective row 25.11 deepseek-v3 b200 256 fp8 2048 4096 tp=1,pp=16,dp=16,mb=1,ep=8,first=4,last=1 2139 --recompute-modules mla_up_proj
# DeepSeek-V3 on GB200, Megatron-Bridge 26.02 and 26.04.01: pp 4 x v 4 in the recipe's explicit
# layout (16 stages of 4 layers but the last: 1, the MTP layer and the loss), ep 64; the
# recipes recompute the latent up projections (26.02) or the dense MLPs (26.04.01)
RC=selective row 26.02 deepseek-v3 gb200 256 fp8 4096 4096 tp=1,pp=4,dp=64,v=4,mb=1,ep=64 3955 --gpus-per-node 64 --gpus-per-host 4 --pipeline-layout 'Et*4|(t*4|)*14tmL' --recompute-modules mla_up_proj
RC=selective row 26.04.01 deepseek-v3 gb200 256 fp8 4096 4096 tp=1,pp=4,dp=64,v=4,mb=1,ep=64 4256 --gpus-per-node 64 --gpus-per-host 4 --pipeline-layout 'Et*4|(t*4|)*14tmL' --recompute-modules mlp
# the same two H100 runs with the expert all-to-all overlap their recipes turn on
# (--overlap-moe-expert-parallel-comm), costed at best: a table of its own
echo
echo "| with --ep-overlap 1 | model | GPUs | precision | batch x seq | layout | published tokens/s/GPU | ccbench | error | ccbench memory per GPU | rank of its tp,pp,dp,cp in the search |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
TAG="overlap, " row 25.11 qwen3-235b-a22b h100-sxm 256 fp8 2048 4096 tp=2,pp=8,dp=16,v=4,mb=1,sp=1,ep=32,split=1 1575 --ep-overlap 1
TAG="overlap, " row 26.04.01 qwen3-235b-a22b h100-sxm 256 fp8 8192 4096 tp=2,pp=8,dp=16,v=4,mb=1,sp=1,ep=32,split=1 1712 --ep-overlap 1
# the runs whose recipes dispatch with Megatron-Core's flex dispatcher (HybridEP or DeepEP:
# every Qwen3 run but 235B on H100, every DeepSeek-V3 run), costed as it moves the tokens
# (--dispatcher: a copy per GPU, across nodes per node): a table of its own
echo
echo "| with the flex dispatcher | model | GPUs | precision | batch x seq | layout | published tokens/s/GPU | ccbench | error | ccbench memory per GPU | rank of its tp,pp,dp,cp in the search |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
TAG="flex, " row 25.11 qwen3-30b-a3b h100-sxm 16 fp8 512 4096 tp=1,pp=2,dp=8,v=24,mb=2,ep=8 5275 --dispatcher deepep
TAG="flex, " row 26.04.01 qwen3-30b-a3b h100-sxm 16 fp8 1024 4096 tp=1,pp=1,dp=16,mb=1,ep=16 8960 --dispatcher deepep
TAG="flex, " row 25.11 qwen3-30b-a3b b200 8 fp8 512 4096 tp=1,pp=1,dp=8,mb=1,ep=8 9299 --dispatcher deepep
TAG="flex, " row 26.04.01 qwen3-30b-a3b b200 8 fp8 512 4096 tp=1,pp=1,dp=8,mb=4,ep=8 27136 --dispatcher deepep
TAG="flex, " row 25.11 qwen3-30b-a3b gb200 8 fp8 512 4096 tp=1,pp=1,dp=8,mb=4,ep=8 23766 --dispatcher hybridep
TAG="flex, " row 26.04.01 qwen3-30b-a3b gb200 8 fp8 512 4096 tp=1,pp=1,dp=8,mb=4,ep=8 26112 --dispatcher hybridep
TAG="flex, " row 25.11 qwen3-235b-a22b b200 64 fp8 1024 4096 tp=1,pp=8,dp=8,v=2,mb=1,ep=8,split=1 3269 --dispatcher deepep
TAG="flex, " row 26.04.01 qwen3-235b-a22b b200 256 fp8 8192 4096 tp=1,pp=8,dp=32,mb=1,ep=8,split=1 3776 --dispatcher deepep
TAG="flex, " row 25.11 qwen3-235b-a22b gb200 256 bf16 8192 4096 tp=1,pp=8,dp=32,v=3,mb=1,ep=32,split=1 4916 --gpus-per-node 64 --gpus-per-host 4 --dispatcher hybridep
TAG="flex, " row 26.04.01 qwen3-235b-a22b gb200 256 fp8 8192 4096 tp=1,pp=8,dp=32,v=3,mb=1,ep=32,split=1 5680 --gpus-per-node 64 --gpus-per-host 4 --dispatcher hybridep
TAG="flex, " RC=selective row 26.02 deepseek-v3 b200 256 fp8 4096 4096 tp=1,pp=16,dp=16,mb=1,ep=8,first=4,last=1 2689 --recompute-modules mla_up_proj --dispatcher deepep
TAG="flex, " RC=selective row 25.11 deepseek-v3 b200 256 fp8 2048 4096 tp=1,pp=16,dp=16,mb=1,ep=8,first=4,last=1 2139 --recompute-modules mla_up_proj --dispatcher deepep
TAG="flex, " RC=selective row 26.02 deepseek-v3 gb200 256 fp8 4096 4096 tp=1,pp=4,dp=64,v=4,mb=1,ep=64 3955 --gpus-per-node 64 --gpus-per-host 4 --pipeline-layout 'Et*4|(t*4|)*14tmL' --recompute-modules mla_up_proj --dispatcher hybridep
TAG="flex, " RC=selective row 26.04.01 deepseek-v3 gb200 256 fp8 4096 4096 tp=1,pp=4,dp=64,v=4,mb=1,ep=64 4256 --gpus-per-node 64 --gpus-per-host 4 --pipeline-layout 'Et*4|(t*4|)*14tmL' --recompute-modules mlp --dispatcher hybridep
