# fragment of Makefile.am (owned by this part of the tree)
# layout: pure computation (no MPI, no hardware), so it lives in libcccore.
libcccore_a_SOURCES += src/layout/model.c src/layout/model.h src/layout/modelfile.c \
	src/layout/cluster.c src/layout/cluster.h src/layout/fits.c \
	src/layout/layout.c src/layout/layout.h \
	src/layout/eval.c src/layout/eval.h src/layout/memory.c src/layout/steptime.c \
	src/layout/search.c \
	src/layout/gemm.c src/layout/gemm.h \
	src/layout/nccltests.c src/layout/nccltests.h \
	src/layout/osu.c src/layout/osu.h \
	src/layout/megatron.c src/layout/megatron.h \
	src/layout/pplayout.c src/layout/pplayout.h \
	src/layout/report.c src/layout/report.h src/layout/snippets.c

check_PROGRAMS += tests/layout/test_layout
tests_layout_test_layout_SOURCES = tests/layout/test_layout.c
tests_layout_test_layout_LDADD = $(CC_UNIT_LIBS)
TESTS += tests/layout/test_layout tests/layout/cli.sh tests/layout/paper.sh
EXTRA_DIST += tests/layout/cli.sh tests/layout/paper.sh tests/layout/dgx-a100x4.json tests/layout/h100x2-nics.json \
	tests/layout/bad-nogpu.json tests/layout/model-small.json tests/layout/model-badheads.json \
	tests/layout/bench-intra.jsonl tests/layout/bench-inter.jsonl \
	tests/layout/nccl-tests-inter.txt tests/layout/all_gather_perf-8gpu.txt \
	tests/layout/all_reduce_perf-2021.txt tests/layout/nccl-tests-split.txt tests/layout/osu-nccl-2x8.txt \
	tests/layout/hf-llama3-8b.json tests/layout/hf-gpt2.json tests/layout/hf-moe.json tests/layout/hf-qwen3-moe.json tests/layout/hf-glm4-moe.json tests/layout/hf-deepseek-v2-lite.json \
	tests/layout/hf-headdim.json tests/layout/hf-llama2-7b.json tests/layout/hf-falcon-40b.json \
	tests/layout/hf-mpt-7b.json tests/layout/hf-llava.json tests/layout/hf-badtype.json \
	results/layout-heldout.sh results/layout-moe.sh results/layout-fig13-162b.json
dist_doc_DATA += docs/layout.md
