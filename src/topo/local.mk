# fragment of Makefile.am (owned by this part of the tree)
# topo: node probe (hwloc, sysfs, NVML/CUDA by dlopen), topology files, NCCL XML. No MPI.
libcccore_a_SOURCES += src/topo/topo.h src/topo/hw.h src/topo/probe.c \
	src/topo/sysfs.h src/topo/sysfs.c src/topo/gpulib.h src/topo/gpulib.c \
	src/topo/ncclxml.c src/topo/load.c src/topo/cluster.c
