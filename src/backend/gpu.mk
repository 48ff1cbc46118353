# fragment of Makefile.am (owned by this part of the tree): GPU and RDMA backends.
# Pure logic (no MPI, CUDA or verbs needed; unit-tested) goes to libcccore.
libcccore_a_SOURCES += \
	src/gpu/nccl_path.c src/gpu/nccl_path.h \
	src/gpu/ib_select.c src/gpu/ib_select.h \
	src/gpu/qp_wire.c src/gpu/qp_wire.h
# Run-time loaders (dlopen; headers only at build time) and the GPU copy benchmark.
libccbench_a_SOURCES += \
	src/gpu/dl_once.h \
	src/gpu/cuda_dl.c src/gpu/cuda_dl.h \
	src/gpu/nccl_dl.c src/gpu/nccl_dl.h \
	src/gpu/verbs_dl.c src/gpu/verbs_dl.h \
	src/gpu/copybw.c src/gpu/copybw.h
