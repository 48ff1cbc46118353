#!/usr/bin/env python3
"""Feed `ccbench layout`'s launch snippets to the tools they are written for.

For each case below, ccbench prints (--json) the Megatron-LM arguments, the torchrun line
and the DeepSpeed config fragment of one layout; this script then
  - parses and validates the Megatron-LM arguments with Megatron-LM's own parse_args and
    validate_args (world size = the layout's GPUs) and checks that what Megatron-LM derived
    (tp, pp, dp, cp, virtual stages, sequence parallel, micro-batches, distributed optimizer,
    FSDP strategy, recomputation, precision, model shape) is the layout ccbench costed;
  - computes the FLOPs behind the "throughput per GPU" of Megatron-LM's log with Megatron-LM's
    own num_floating_point_operations and compares ccbench's megatron_log_tflops_per_gpu;
  - parses the torchrun line with torchrun's own argument parser (nodes x GPUs = the GPUs,
    the script's arguments = the Megatron-LM arguments);
  - builds DeepSpeed's DeepSpeedConfig from the fragment, with the layout's data-parallel
    size, and checks the batch, micro-batch, accumulation, precision and ZeRO stage it reads.

No GPU is used: torch.cuda's device queries are answered as for the case's GPU (compute
capability 8.0 for A100, 9.0 for H100), because validate_args asks for them.

Usage: python layout-snippets.py CCBENCH MEGATRON_LM_DIR   (results/layout-snippets.md)
Exit status: 0 when every check passed, 1 otherwise.
"""
import io
import json
import os
import shlex
import subprocess
import sys
import types
import typing
import contextlib
import tempfile

if len(sys.argv) != 3:
    sys.exit("usage: layout-snippets.py CCBENCH MEGATRON_LM_DIR")
CCBENCH, MLM = os.path.abspath(sys.argv[1]), sys.argv[2]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # model files named from it
TMP = tempfile.mkdtemp(prefix="layout-snippets-")
sys.path.insert(0, MLM)
if not hasattr(typing, "override"):  # Megatron-LM imports it (Python 3.12); a no-op before
    typing.override = lambda f: f

import torch  # noqa: E402

ARCH = [9]
torch.cuda.is_available = lambda: True
torch.cuda.device_count = lambda: 8
torch.cuda.get_device_capability = lambda *a, **k: (ARCH[0], 0)
torch.cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(
    major=ARCH[0], minor=0, name="stand-in", total_memory=80 << 30, multi_processor_count=108)

with contextlib.redirect_stderr(io.StringIO()):
    from megatron.training.arguments import parse_args, validate_args  # noqa: E402
    from megatron.training.training import num_floating_point_operations  # noqa: E402
    from megatron.core.tokenizers.utils.build_tokenizer import vocab_size_with_padding  # noqa: E402
from torch.distributed.run import get_args_parser  # noqa: E402

try:
    from deepspeed.runtime.config import DeepSpeedConfig  # noqa: E402
    import deepspeed.runtime.config as dsconfig
    import deepspeed
    DS_VERSION = deepspeed.__version__
except ImportError:
    DeepSpeedConfig, DS_VERSION = None, None

PAPER = ["--gpu-model", "a100-80g", "--precision", "fp16", "--grad-reduce", "fp16",
         "--grad-copy", "4", "-z", "0", "--sp", "off", "--dp-overlap", "2", "--accum-fusion",
         "0", "--uneven-pp", "0", "--pp-overlap", "0", "--pp-scatter", "1", "--recompute", "full"]

# (what the case exercises, ccbench layout arguments, A100 (8) or H100 (9))
CASES = [
    ("Table 1 row, 2021 habits, no pipeline", ["-m", "megatron-18.4b", "-g", "256"] + PAPER +
     ["-x", "tp=8,pp=1,mb=8"], 8),
    ("Table 1 row, interleaved, blocking sends", ["-m", "megatron-76.1b", "-g", "1024"] + PAPER +
     ["-x", "tp=8,pp=4,mb=2,v=3"], 8),
    ("fp16 with gradients reduced in fp32", ["-m", "gpt3-175b", "-g", "1024", "--precision",
     "fp16", "--grad-reduce", "fp32", "-x", "tp=8,pp=16,mb=1,v=6,zero=1"], 9),
    ("search's first: Megatron-FSDP (ZeRO 3), sequence parallel",
     ["-m", "llama3-70b", "-g", "64"], 9),
    ("ZeRO 2, fp8, tp overlap", ["-m", "llama3-8b", "-g", "16", "--precision", "fp8",
     "--tp-overlap", "1", "-x", "tp=2,pp=1,mb=1,zero=2,sp=1,rc=selective"], 9),
    ("context parallel, uneven split, interleaved, distributed optimizer",
     ["-m", "llama3-405b", "-g", "2048", "--cp-max", "2",
      "-x", "tp=8,pp=16,cp=2,mb=1,v=2,zero=1,sp=1,rc=none,split=1"], 9),
    ("bf16 gradients reduced in bf16, DDP buckets, SGD", ["-m", "llama2-7b", "-g", "32",
     "--grad-reduce", "bf16", "--optimizer", "sgd", "-x", "tp=2,pp=1,mb=2,zero=0,rc=full"], 9),
    ("full recomputation, pipeline without interleaving, GQA", ["-m", "llama2-70b", "-g", "128",
     "-x", "tp=8,pp=4,mb=1,v=1,zero=1,sp=1,rc=full"], 9),
    ("search's first: block recomputation of the fewest layers per chunk that fit, interleaved",
     ["-m", "llama3-405b", "-g", "8192", "--global-batch", "2048"], 9),
    ("search's first on GB200: Megatron-FSDP with activation offloading (NVIDIA's recipe)",
     ["-m", "llama3-70b", "-g", "64", "--gpu-model", "gb200", "--precision", "fp8",
      "--grad-reduce", "bf16", "--tp-overlap", "1", "--global-batch", "256"], 10),
    ("Hugging Face config (Llama 3 8B), pipeline split evenly", ["-m",
     "tests/layout/hf-llama3-8b.json", "-g", "32", "--uneven-pp", "0",
     "-x", "tp=4,pp=2,mb=1,zero=1,sp=1"], 9),
    ("Hugging Face config (Qwen2.5 7B shape): QKV bias, untied embeddings, rotary base 1e6",
     ["-m", "QWEN2", "-g", "16", "-x", "tp=4,pp=1,mb=1,zero=1,sp=1"], 9),
    ("mixture of experts, search's first: Mixtral 8x7B with expert parallelism",
     ["-m", "mixtral-8x7b", "-g", "64"], 9),
    ("Hugging Face Qwen3-MoE config: head_dim, QK norm, 128 experts over 16 GPUs",
     ["-m", "tests/layout/hf-qwen3-moe.json", "-g", "16", "--seq-len", "4096",
      "-x", "tp=1,pp=1,mb=1,ep=16,zero=1,rc=selective"], 9),
    ("experts across nodes, all-to-all overlap, interleaved, tp=2 (NVIDIA's Qwen3 235B H100 recipe)",
     ["-m", "qwen3-235b-a22b", "-g", "256", "--precision", "fp8", "--global-batch", "2048",
      "--grad-reduce", "bf16", "--ep-overlap", "1",
      "-x", "tp=2,pp=8,mb=1,v=4,ep=32,zero=1,sp=1,rc=none,split=1"], 9),
    ("experts with token dropping: capacity factor 1, padded (NeMo's Mixtral 8x7B on B200)",
     ["-m", "mixtral-8x7b", "-g", "64", "--gpu-model", "b200", "--precision", "fp8",
      "--global-batch", "256", "--seq-len", "4096", "--grad-reduce", "bf16",
      "--moe-capacity", "1", "--moe-pad", "1", "-x", "tp=1,pp=1,mb=2,ep=8,zero=1,rc=none"], 10),
    ("dense layers first, then experts, pipeline of 4 (GLM-4.5-shaped config.json)",
     ["-m", "tests/layout/hf-glm4-moe.json", "-g", "256", "--seq-len", "4096", "--global-batch",
      "1024", "-x", "tp=4,pp=4,mb=1,ep=16,zero=1,sp=1,rc=none"], 9),
    ("latent attention, 3 dense layers first (DeepSeek-V3 preset), tp=8",
     ["-m", "deepseek-v3", "-g", "1024", "-x", "tp=8,pp=1,mb=1,ep=128,zero=1,sp=1,rc=full"], 9),
    ("uneven first and last stage: DeepSeek-V3 on 16 stages of 4, 14 x 4 and 1 layers (NVIDIA's "
     "split), as the search ranks it first on 1024 H100",
     ["-m", "deepseek-v3", "-g", "1024", "--gpu-model", "h100-sxm",
      "-x", "tp=4,pp=16,mb=1,ep=8,zero=1,sp=1,rc=none,first=4,last=1"], 9),
    ("uneven first and last stage, interleaved: 30 layers as 6, 8, 8, 8 in chunks of 3 and 4",
     ["-m", "megatron-3.6b", "-g", "4", "--gpus-per-node", "4", "--gpu-model", "a100-80g",
      "--global-batch", "8", "-x", "tp=1,pp=4,mb=1,v=2,first=6,last=8,rc=full"], 8),
    ("latent attention without compressed queries, a dense first layer, pipeline of 3 "
     "(DeepSeek-V2-Lite-shaped config.json)",
     ["-m", "tests/layout/hf-deepseek-v2-lite.json", "-g", "12", "--gpus-per-node", "4", "-x",
      "tp=2,pp=3,mb=1,ep=4,zero=1,sp=1,rc=selective"], 9),
    ("explicit pipeline layout and recompute modules: DeepSeek-V3 on 256 GB200, pp 4 x v 4 "
     "(NVIDIA's interleaved recipe's layout), the up projections recomputed",
     ["-m", "deepseek-v3", "-g", "256", "--gpu-model", "gb200", "--gpus-per-node", "64",
      "--gpus-per-host", "4", "--precision", "fp8", "--grad-reduce", "bf16", "--global-batch",
      "4096", "--pipeline-layout", "Et*4|(t*4|)*14tmL", "--recompute-modules", "mla_up_proj",
      "-x", "tp=1,pp=4,mb=1,ep=64,zero=1,rc=selective"], 10),
    ("standalone MTP stage: Megatron-LM's own example layout for DeepSeek-V3, pp 16 x v 2, "
     "the MTP layer on rank 14, the loss alone on rank 15 (256 B200)",
     ["-m", "deepseek-v3", "-g", "256", "--gpu-model", "b200", "--precision", "fp8",
      "--global-batch", "4096", "--pipeline-layout", "Et*3|(tt|)*29,m|L",
      "-x", "tp=1,pp=16,mb=1,ep=8,zero=1,rc=block"], 10),
    ("DeepEP dispatcher and node-limited routing: DeepSeek-V3 on 1024 H100, ep 64 over 8 "
     "nodes, 8 groups of experts, 4 per token",
     ["-m", "deepseek-v3", "-g", "1024", "--precision", "fp8", "--global-batch", "15360",
      "--dispatcher", "deepep", "-x", "tp=1,pp=16,mb=1,ep=64,zero=1,rc=full,first=4,last=1"], 9),
    ("filled pipeline layout made by ccbench (fill=1): DeepSeek-V3 on 256 GB200, pp 8 x v 2 "
     "(Et*4|(t*4|)*14tmL, the layout NVIDIA's recipe map gives pp 8 x v 2), 2 layers of each "
     "chunk recomputed",
     ["-m", "deepseek-v3", "-g", "256", "--gpu-model", "gb200", "--gpus-per-node", "64",
      "--gpus-per-host", "4", "--precision", "fp8", "--grad-reduce", "bf16", "--global-batch",
      "4096", "-x", "tp=2,pp=8,mb=1,v=2,ep=8,sp=1,fill=1,zero=1,rc=block,rcl=2"], 10),
    ("expert tensor parallelism: Mixtral 8x7B's experts each split over tp=2",
     ["-m", "mixtral-8x7b", "-g", "16", "-x", "tp=2,pp=1,mb=1,ep=4,etp=2,zero=1,sp=1,rc=full"], 9),
    ("expert tensor parallelism below tp, as the search tries it: Mixtral 8x22B at tp=4, etp=2",
     ["-m", "mixtral-8x22b", "-g", "64", "-x",
      "tp=4,pp=2,mb=1,v=7,ep=8,etp=2,zero=1,sp=1,rc=none"], 9),
    ("recompute modules of an expert layer (Qwen3-MoE config.json), tp=2",
     ["-m", "tests/layout/hf-qwen3-moe.json", "-g", "16", "--seq-len", "4096",
      "--recompute-modules", "moe_act,layernorm,core_attn",
      "-x", "tp=2,pp=2,mb=1,ep=4,zero=1,sp=1,rc=selective"], 9),
]

# a Qwen2 config.json (Qwen2.5-7B's shape and keys), written for the case above
QWEN2 = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_act": "silu",
         "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
         "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 32768,
         "rope_theta": 1000000.0, "tie_word_embeddings": False, "vocab_size": 152064,
         "attention_dropout": 0.0, "torch_dtype": "bfloat16"}

failures = 0


def check(case, what, got, want):
    global failures
    if got != want:
        failures += 1
        print(f"  FAIL {what}: Megatron-LM/torchrun/DeepSpeed read {got!r}, ccbench costed {want!r}")


def megatron(case, args, gpus, arch, prefix):
    ARCH[0] = arch
    # the torchrun line's environment: set, cleared, or left as it is
    os.environ.pop("CUDA_DEVICE_MAX_CONNECTIONS", None)
    if prefix.startswith("CUDA_DEVICE_MAX_CONNECTIONS="):
        os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = prefix.split("=", 1)[1].split()[0]
    os.environ.update(WORLD_SIZE=str(gpus), RANK="0", LOCAL_RANK="0")
    sys.argv = ["pretrain_gpt.py"] + shlex.split(args) + [
        "--mock-data", "--tokenizer-type", "NullTokenizer", "--vocab-size", "32000"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        a = parse_args()
        validate_args(a)
    # what Megatron-LM warns about the arguments (not about this machine's missing packages)
    for line in sorted(set(out.getvalue().splitlines())):
        if "Warning:" in line and "not installed" not in line and "absl" not in line \
                and "transformer-engine>=" not in line:
            print("  Megatron-LM warns:", line.split("Warning:", 1)[1].strip()[:300])
    return a


def run_case(name, cl, arch):
    shown = ["qwen2-config.json" if x == "QWEN2" else x for x in cl]
    if "QWEN2" in cl:
        path = os.path.join(TMP, "qwen2-config.json")
        with open(path, "w") as f:
            json.dump(QWEN2, f)
        cl = [path if x == "QWEN2" else x for x in cl]
    r = subprocess.run([CCBENCH, "layout", "--json"] + cl, capture_output=True, text=True,
                       cwd=REPO)
    if r.returncode != 0:
        print(f"  FAIL ccbench exited {r.returncode}: {r.stderr.strip()}")
        return 1
    d = json.loads(r.stdout)
    e = d["explain"] if "explain" in d else d["top"][0]
    lay, gpus = e["layout"], d["cluster"]["gpus"]
    m = d["model"]
    print(f"- {name}: `ccbench layout {' '.join(shown)}`")
    print(f"  layout tp={lay['tp']} pp={lay['pp']} dp={lay['dp']} cp={lay['cp']} "
          + (f"ep={lay['ep']} " if m["experts"] else "") +
          f"mb={lay['micro_batch']} v={lay['interleave']} sp={int(lay['sequence_parallel'])} "
          f"zero={lay['zero']} rc={lay['recompute']}"
          + (f" rcl={lay['recompute_layers']}" if lay["recompute_layers"] else "")
          + (f" off={lay['offload_layers']}" if lay["offload_layers"] else "")
          + f", {gpus} GPUs")
    before = failures
    try:
        a = megatron(name, e["megatron_args"], gpus, arch, e["torchrun"].split("torchrun", 1)[0])
    except SystemExit as x:  # argparse's error exit
        print(f"  FAIL Megatron-LM's parse_args refused the arguments (exit {x.code})")
        return 1
    except AssertionError as x:
        print(f"  FAIL Megatron-LM's validate_args: {x}")
        return 1
    check(name, "tensor-parallel size", a.tensor_model_parallel_size, lay["tp"])
    check(name, "pipeline-parallel size", a.pipeline_model_parallel_size, lay["pp"])
    check(name, "data-parallel size", a.data_parallel_size, lay["dp"])
    check(name, "context-parallel size", a.context_parallel_size, lay["cp"])
    check(name, "virtual stages", a.virtual_pipeline_model_parallel_size or 1,
          lay["interleave"])
    # uneven first and last stages, and the embedding/loss split
    check(name, "first stage's layers", a.decoder_first_pipeline_num_layers,
          lay["first_stage_layers"])
    check(name, "last stage's layers", a.decoder_last_pipeline_num_layers,
          lay["last_stage_layers"])
    check(name, "embedding and loss in the pipeline split",
          bool(a.account_for_embedding_in_pipeline_split) and
          bool(a.account_for_loss_in_pipeline_split), bool(lay["uneven_split"]))
    check(name, "sequence parallel", bool(a.sequence_parallel), bool(lay["sequence_parallel"]))
    check(name, "micro-batch", a.micro_batch_size, lay["micro_batch"])
    check(name, "global batch", a.global_batch_size, m["global_batch"])
    check(name, "micro-batches per step", a.global_batch_size //
          (a.micro_batch_size * a.data_parallel_size), lay["grad_accum"])
    check(name, "distributed optimizer", bool(a.use_distributed_optimizer), lay["zero"] >= 1)
    fsdp = {2: "optim_grads", 3: "optim_grads_params"}.get(lay["zero"])
    check(name, "Megatron-FSDP", bool(getattr(a, "use_megatron_fsdp", False)), fsdp is not None)
    if fsdp:
        check(name, "FSDP sharding", a.data_parallel_sharding_strategy, fsdp)
    rc = lay["recompute"]
    check(name, "recomputation", a.recompute_granularity,
          None if rc == "none" else "full" if rc == "block" else rc)
    if rc == "selective":  # Megatron-Core's default set is core_attn alone
        check(name, "recompute modules", sorted(a.recompute_modules or ["core_attn"]),
              sorted(lay["recompute_modules"]))
    # an explicit pipeline layout: Megatron-Core's own parse and checks, and the layers it
    # gives the first and last pipeline ranks
    check(name, "pipeline layout", a.pipeline_model_parallel_layout, lay["pipeline_layout"])
    if lay["pipeline_layout"]:
        from megatron.core.transformer.pipeline_parallel_layer_layout import \
            PipelineParallelLayerLayout
        from megatron.core.transformer.enums import LayerType
        pl = PipelineParallelLayerLayout(lay["pipeline_layout"], lay["pp"])
        check(name, "MTP standalone (Megatron-Core's layout check)",
              bool(pl.validate_layer_layout(m["layers"], m["mtp_layers"] or None)),
              lay["mtp_stage"] is not None)
        if m["mtp_layers"]:  # the rank whose chunks hold the MTP layers
            mtp_ranks = [r for r in range(lay["pp"])
                         if any(LayerType.mtp in stage for stage in pl.layout[r])]
            check(name, "pipeline rank of the MTP layers (Megatron-Core's layout)", mtp_ranks,
                  [lay["pp"] - 1 if lay["mtp_stage"] is None else lay["mtp_stage"]])
        # its layout[pp rank][virtual stage] (get_num_layers_to_build reads the virtual stage
        # from the process groups, which are not set up here)
        per_rank = [sum(stage.count(LayerType.decoder) for stage in pl.layout[r])
                    for r in range(lay["pp"])]
        check(name, "layers of the first and last pipeline rank (Megatron-Core's count)",
              [per_rank[0], per_rank[-1]],
              [lay["layers_per_stage"][0], lay["layers_per_stage"][2]])
    check(name, "recompute method", a.recompute_method,
          "block" if rc == "block" else "uniform" if rc == "full" else None)
    if rc == "block":  # Megatron-Core: the first N layers of each model chunk's block
        check(name, "layers recomputed per model chunk", a.recompute_num_layers,
              lay["recompute_layers"])
    check(name, "layers' activations offloaded", getattr(a, "cpu_offloading_num_layers", 0) or 0,
          lay["offload_layers"])
    check(name, "CPU offloading", bool(getattr(a, "cpu_offloading", False)),
          lay["offload_layers"] > 0)
    check(name, "layers", a.num_layers, m["layers"])
    check(name, "hidden", a.hidden_size, m["hidden"])
    check(name, "heads", a.num_attention_heads, m["heads"])
    check(name, "query groups", a.num_query_groups if a.group_query_attention else a.num_attention_heads,
          m["kv_heads"])
    check(name, "FFN", a.ffn_hidden_size, m["ffn"])
    if m["head_dim"]:
        check(name, "kv channels (head_dim)", a.kv_channels, m["head_dim"])
    check(name, "multi-token-prediction layers", a.mtp_num_layers or 0, m["mtp_layers"])
    mla = m["kv_lora_rank"] > 0
    # with latent attention --qk-layernorm builds its two latent norms
    check(name, "QK norm", bool(a.qk_layernorm), m["qk_norm"] or mla)
    check(name, "latent attention", bool(a.multi_latent_attention), mla)
    if mla:
        check(name, "q lora rank", a.q_lora_rank, m["q_lora_rank"] or None)
        check(name, "kv lora rank", a.kv_lora_rank, m["kv_lora_rank"])
        check(name, "qk head dim", a.qk_head_dim, m["qk_nope_head_dim"])
        check(name, "qk rope head dim", a.qk_pos_emb_head_dim, m["qk_rope_head_dim"])
        check(name, "v head dim", a.v_head_dim, m["v_head_dim"])
    if m["experts"]:
        # which layers have experts: the first first_dense_layers dense, then every
        # moe_layer_step-th counted from 1 (1 when every layer has experts)
        k = m["moe_layer_step"]
        pattern = [1 if i >= m["first_dense_layers"] and (i + 1) % k == 0 else 0
                   for i in range(m["layers"])]
        got = a.moe_layer_freq
        if isinstance(got, int):
            got = [1 if i % got == 0 else 0 for i in range(a.num_layers)]
        check(name, "layers with experts", got, pattern)  # experts whole on each GPU (expert tensor parallelism 1)
        check(name, "experts", a.num_experts, m["experts"])
        check(name, "experts per token", a.moe_router_topk, m["topk"])
        check(name, "expert FFN", a.moe_ffn_hidden_size, m["moe_ffn"])
        check(name, "shared expert", a.moe_shared_expert_intermediate_size or 0, m["shared_ffn"])
        check(name, "expert-parallel size", a.expert_model_parallel_size, lay["ep"])
        check(name, "expert tensor-parallel size", a.expert_tensor_parallel_size, lay["etp"])
        disp = d["habits"]["dispatcher"]
        check(name, "token dispatcher", a.moe_token_dispatcher_type,
              "alltoall" if disp == "alltoall" else "flex")
        if disp != "alltoall":
            check(name, "flex dispatcher backend", a.moe_flex_dispatcher_backend, disp)
        check(name, "router groups (group-limited routing)",
              [a.moe_router_num_groups or 0, a.moe_router_group_topk or 0],
              [m["router_groups"], m["router_group_topk"]])
        check(name, "grouped GEMM", bool(a.moe_grouped_gemm), True)
        check(name, "expert all-to-all overlap", bool(a.overlap_moe_expert_parallel_comm),
              e["time_s"]["ep_comm_hidden"] > 0)
        hb0 = d["habits"]
        check(name, "expert capacity factor", a.moe_expert_capacity_factor,
              hb0["moe_capacity"] if hb0["moe_capacity"] > 0 else None)
        check(name, "expert input padded to capacity", bool(a.moe_pad_expert_input_to_capacity),
              hb0["moe_pad"])
    else:
        check(name, "experts", a.num_experts, None)
    check(name, "sequence", a.seq_length, m["seq_len"])
    prec = m["precision"]
    check(name, "fp16", bool(a.fp16), prec == "fp16")
    check(name, "bf16", bool(a.bf16), prec in ("bf16", "fp8"))
    check(name, "fp8", a.fp8, "hybrid" if prec == "fp8" else None)
    check(name, "optimizer", a.optimizer, m["optimizer"])
    # the architecture as costed
    swiglu = m["mlp"] == "swiglu"
    check(name, "SwiGLU", bool(a.swiglu), swiglu)
    check(name, "normalization", a.normalization, "RMSNorm" if swiglu else "LayerNorm")
    check(name, "position embedding", a.position_embedding_type,
          "rope" if swiglu else "learned_absolute")
    check(name, "linear-layer biases", bool(a.add_bias_linear), not swiglu)
    if swiglu:
        check(name, "QKV bias", bool(a.add_qkv_bias), m["qkv_bias"])
        check(name, "rotary base", a.rotary_base, m["rope_theta"])
    check(name, "dropout", (a.attention_dropout, a.hidden_dropout),
          (0.1, 0.1) if m["dropout"] else (0.0, 0.0))
    check(name, "untied embeddings", bool(a.untie_embeddings_and_output_weights),
          not m["tied_embeddings"])
    # the habits as costed
    hb = d["habits"]
    dp_ov = hb["dp_overlap"] == 1 or (hb["dp_overlap"] == 2 and lay["pp"] == 1)
    dp_ov = dp_ov and lay["dp"] * lay["cp"] > 1
    check(name, "gradient reduction overlapped", bool(a.overlap_grad_reduce), dp_ov)
    check(name, "weight all-gather overlapped", bool(a.overlap_param_gather),
          dp_ov and lay["zero"] >= 1)
    if dp_ov and lay["zero"] <= 1:
        check(name, "DDP bucket (parameters)", a.ddp_bucket_size,
              hb["bucket_bytes"] // hb["grad_reduce_bytes"])
    check(name, "gradients reduced in fp32", bool(a.accumulate_allreduce_grads_in_fp32),
          hb["grad_reduce_bytes"] == 4)
    check(name, "gradients reduced in bf16", bool(a.grad_reduce_in_bf16),
          hb["grad_reduce_bytes"] == 2 and prec != "fp16")
    check(name, "gradient accumulation fusion", bool(a.gradient_accumulation_fusion),
          hb["accum_fusion"])
    check(name, "tensor-parallel overlap", bool(a.tp_comm_overlap),
          hb["tp_overlap"] and lay["sequence_parallel"] and lay["tp"] > 1)
    if lay["interleave"] > 1:
        check(name, "overlapped pipeline sends", bool(a.overlap_p2p_comm), hb["pp_overlap"])
    if lay["cp"] > 1:
        cpt = a.cp_comm_type
        check(name, "context-parallel exchange", set(cpt) if isinstance(cpt, list) else {cpt},
              {"allgather"})
    # the throughput Megatron-LM's log prints: its FLOP count over GPUs x step time
    a.padded_vocab_size = vocab_size_with_padding(m["vocab"], a, logging_enabled=False)
    flops = num_floating_point_operations(a, m["global_batch"])
    mine = e["megatron_log_tflops_per_gpu"] * 1e12 * gpus * e["time_s"]["step"]
    check(name, "Megatron-LM's logged FLOPs within 1e-9", abs(mine / flops - 1) < 1e-9, True)
    print(f"  Megatron-LM's log: {e['megatron_log_tflops_per_gpu']:.1f} TFLOP/s/GPU; ccbench's MFU "
          f"numerator is {e['mfu'] * d['cluster']['peak_flops'] * gpus * e['time_s']['step'] / flops:.3f}x "
          "its FLOP count")

    t = get_args_parser().parse_args(shlex.split(e["torchrun"].split("torchrun", 1)[1]))
    check(name, "torchrun nodes x GPUs", int(t.nnodes) * int(t.nproc_per_node), gpus)
    check(name, "torchrun script", t.training_script, "pretrain_gpt.py")
    check(name, "torchrun script arguments", t.training_script_args,
          shlex.split(e["megatron_args"]))

    ds_state = None
    if DeepSpeedConfig is not None:
        ds = e["deepspeed"]
        # DeepSpeed has no context parallelism: its data-parallel ranks are dp x cp
        mpu = types.SimpleNamespace(get_data_parallel_world_size=lambda: lay["dp"] * lay["cp"],
                                    get_model_parallel_world_size=lambda: lay["tp"] * lay["pp"],
                                    get_sequence_parallel_world_size=lambda: 1)
        out = io.StringIO()
        dsconfig.dist.get_rank = lambda *a, **k: 0  # no process group: rank 0 of the mpu's
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                c = DeepSpeedConfig(ds, mpu=mpu)
        except AssertionError as x:
            # with cp > 1 DeepSpeed must refuse the batch arithmetic, as the note says
            if lay["cp"] > 1 and "train_batch_size is not equal to" in str(x) and any(
                    "DeepSpeed has no context parallelism" in t for t in e["deepspeed_notes"]):
                ds_state = "DeepSpeedConfig refused it, as its note says (no context parallelism)"
            else:
                print(f"  FAIL DeepSpeedConfig: {x}")
                return 1
        else:
            ds_state = "DeepSpeedConfig"
            if lay["cp"] > 1:
                check(name, "DeepSpeed refuses cp > 1", "accepted", "refused")
            check(name, "DeepSpeed batch", c.train_batch_size, m["global_batch"])
            check(name, "DeepSpeed micro-batch", c.train_micro_batch_size_per_gpu,
                  lay["micro_batch"])
            check(name, "DeepSpeed accumulation", c.gradient_accumulation_steps,
                  lay["grad_accum"])
            check(name, "DeepSpeed ZeRO stage", c.zero_optimization_stage, lay["zero"])
            check(name, "DeepSpeed fp16", bool(c.float16_config.enabled), prec == "fp16")
            check(name, "DeepSpeed bf16", bool(c.bfloat16_config.enabled), prec != "fp16")
    if failures == before:
        print("  ok: Megatron-LM parse_args + validate_args, torchrun, "
              + (ds_state if DeepSpeedConfig else "(DeepSpeed not installed)"))
    return 0


bad = 0
for name, cl, arch in CASES:
    bad += run_case(name, cl, arch)

# Memory per GPU beside Megatron-LM's own estimate (megatron/training/
# theoretical_memory_usage.py: bf16 weights, fp32 main gradients and weights, Adam; the
# distributed optimizer; activations by Korthikanti et al.'s Table 2 for sequence parallel with
# selective recomputation, else its "without SP" variant, which assumes no recomputation and
# adds 5%). Only where it applies: bf16, Adam, ZeRO 0-1, no full recomputation.
from megatron.training import theoretical_memory_usage as tmu  # noqa: E402

MEMORY = [
    ["-m", "gpt3-175b", "-g", "512", "-x", "tp=8,pp=8,mb=1,zero=1,sp=1,rc=selective"],
    ["-m", "gpt3-175b", "-g", "512", "-x", "tp=8,pp=8,mb=1,v=3,zero=1,sp=1,rc=selective"],
    ["-m", "gpt3-175b", "-g", "256", "-x", "tp=8,pp=16,mb=2,zero=0,sp=1,rc=selective"],
    ["-m", "llama3-8b", "-g", "16", "-x", "tp=2,pp=1,mb=1,zero=1,sp=1,rc=selective"],
    ["-m", "llama3-8b", "-g", "16", "-x", "tp=2,pp=2,mb=1,zero=0,sp=1,rc=selective"],
    ["-m", "llama2-13b", "-g", "32", "-x", "tp=4,pp=2,mb=1,zero=1,sp=1,rc=selective"],
    ["-m", "llama2-70b", "-g", "128", "-x", "tp=8,pp=4,mb=1,v=5,zero=1,sp=1,rc=selective"],
    ["-m", "llama2-7b", "-g", "16", "-x", "tp=2,pp=1,mb=1,zero=1,sp=0,rc=none"],
    ["-m", "llama2-7b", "-g", "16", "-x", "tp=1,pp=2,mb=1,zero=1,sp=0,rc=none"],
    # experts: their state over the expert data-parallel ranks, the router and norms whole
    # on every tp rank (the estimator's activations have no experts: not compared)
    ["-m", "mixtral-8x7b", "-g", "64", "-x", "tp=4,pp=1,mb=1,ep=8,zero=1,sp=1,rc=selective"],
    ["-m", "tests/layout/hf-qwen3-moe.json", "-g", "16", "-x",
     "tp=1,pp=1,mb=1,ep=16,zero=1,rc=selective", "--seq-len", "4096"],
    # a dense layer first and latent attention (the estimator splits the latent down
    # projections by tp, which Megatron-Core holds whole: compared at tp=1)
    ["-m", "tests/layout/hf-deepseek-v2-lite.json", "-g", "16", "-x",
     "tp=1,pp=1,mb=1,ep=16,zero=1,rc=selective"],
]
GiB = float(1 << 30)
print("\n| model, GPUs, layout | weights + gradients + optimizer: ccbench | Megatron-LM | "
      "difference | activations: ccbench | Megatron-LM | difference |")
print("|---|---|---|---|---|---|---|")
for cl in MEMORY:
    r = subprocess.run([CCBENCH, "layout", "--json"] + cl, capture_output=True, text=True,
                       cwd=REPO)
    d = json.loads(r.stdout)
    e, m = d["explain"], d["model"]
    lay, mem = e["layout"], e["memory_bytes"]
    a = megatron("", e["megatron_args"], d["cluster"]["gpus"], 9,
                 e["torchrun"].split("torchrun", 1)[0])
    a.padded_vocab_size = vocab_size_with_padding(m["vocab"], a, logging_enabled=False)
    with contextlib.redirect_stdout(io.StringIO()):
        wo = tmu.compute_weight_and_optimizer_memory(a)
        act = (tmu.compute_activation_memory(a, lay["grad_accum"])
               if a.sequence_parallel and a.recompute_granularity == "selective"
               else tmu.compute_activation_memory_without_sp(a, lay["grad_accum"]))
    cw = mem["weights"] + mem["gradients"] + mem["optimizer"]
    # the estimator counts no learned position embedding, which Megatron-LM's model holds
    # whole on every tp rank of the first stage (a plain nn.Embedding) and ccbench counts so:
    # the comparison adds it to the estimator's figure
    if a.position_embedding_type == "learned_absolute":
        bpp = 6 + 12 / a.data_parallel_size if a.use_distributed_optimizer else 18
        wo += a.max_position_embeddings * a.hidden_size * bpp
    moe = bool(m["experts"])
    print(f"| {cl[1]}, {cl[3]}, {cl[5]} | {cw / GiB:.2f} GiB | {wo / GiB:.2f} GiB | "
          f"{cw / wo - 1:+.1%} | {mem['activations'] / GiB:.2f} GiB | "
          + ("(no experts in its formula) | |" if moe else
             f"{act / GiB:.2f} GiB | {mem['activations'] / act - 1:+.1%} |"))
    # the same bytes per parameter: weights, gradients and optimizer state must agree; so
    # must the activations of a GPT shape (the formula both take from the same paper)
    check("memory", f"{cl[1]} weights+gradients+optimizer within 0.25%",
          abs(cw / wo - 1) < 0.0025, True)
    if m["name"].startswith("gpt3") and a.sequence_parallel:
        check("memory", f"{cl[1]} activations within 0.5%",
              abs(mem["activations"] / act - 1) < 0.005, True)
print(f"\n{len(CASES)} cases; {failures + bad} failed checks; torch {torch.__version__}, "
      f"DeepSpeed {DS_VERSION or 'not installed'}")
sys.exit(1 if failures + bad else 0)
