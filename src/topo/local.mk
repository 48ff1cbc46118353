# fragment of Makefile.am (owned by this part of the tree)
# topo: node probe (hwloc, sysfs, NVML/CUDA by dlopen), topology files, NCCL XML. No MPI.
libcccore_a_SOURCES += src/topo/topo.h src/topo/hw.h src/topo/hw.c src/topo/probe.c \
	src/topo/sysfs.h src/topo/sysfs.c src/topo/gpulib.h src/topo/gpulib.c \
	src/topo/ncclxml.c src/topo/load.c src/topo/cluster.c

# tests: fixtures (hwloc XML, fake /sys, golden JSON/XML, bad files) live in tests/topo
check_PROGRAMS += tests/topo/test_topo
tests_topo_test_topo_SOURCES = tests/topo/test_topo.c
tests_topo_test_topo_LDADD = $(CC_UNIT_LIBS)
# the gather of the node descriptions (src/rte): an MPI singleton
check_PROGRAMS += tests/topo/test_gather
tests_topo_test_gather_SOURCES = tests/topo/test_gather.c
tests_topo_test_gather_LDADD = $(CC_LIBS_ALL)
# NVLink counting against a stand-in NVML library (built as a shared object)
check_PROGRAMS += tests/topo/test_gpulib tests/topo/fake_nvml.so
tests_topo_test_gpulib_SOURCES = tests/topo/test_gpulib.c
tests_topo_test_gpulib_LDADD = $(CC_UNIT_LIBS)
tests_topo_fake_nvml_so_SOURCES = tests/topo/fake_nvml.c
tests_topo_fake_nvml_so_CFLAGS = $(AM_CFLAGS) -fPIC
tests_topo_fake_nvml_so_LDFLAGS = -shared
TESTS += tests/topo/test_topo tests/topo/test_gather tests/topo/gpulib.sh tests/topo/probe.sh tests/topo/probe-netns.sh tests/topo/probe-input.sh
EXTRA_DIST += tests/topo/sysfs tests/topo/golden tests/topo/bad tests/topo/gen-fixtures.py \
	tests/topo/dgx-like.xml tests/topo/dual-socket.xml tests/topo/nogpu.xml tests/topo/nvswitch.xml tests/topo/nvlink-cpu.xml tests/topo/probe.sh tests/topo/probe-netns.sh \
	tests/topo/probe-input.sh tests/topo/gpulib.sh
dist_doc_DATA += docs/topology.md
