# fragment of Makefile.am (owned by this part of the tree): GPU and RDMA tests.
check_PROGRAMS += tests/gpu/test_gpu_logic
tests_gpu_test_gpu_logic_SOURCES = tests/gpu/test_gpu_logic.c
tests_gpu_test_gpu_logic_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_gpu_test_gpu_logic_LDADD = $(CC_UNIT_LIBS)
TESTS += tests/gpu/test_gpu_logic tests/gpu/backends.sh
EXTRA_DIST += tests/gpu/backends.sh tests/gpu/run.sh tests/gpu/fake-sysfs

# A fake CUDA driver/runtime and one-rank NCCL (tests/gpu/fake/fakegpu.c), loaded in place of
# the real libraries by tests/gpu/fake.sh to exercise the nccl backend and `ccbench gpu`
# end to end on machines without a GPU.
if HAVE_NCCL
check_PROGRAMS += tests/gpu/fake/libfakegpu.so
tests_gpu_fake_libfakegpu_so_SOURCES = tests/gpu/fake/fakegpu.c
tests_gpu_fake_libfakegpu_so_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden
tests_gpu_fake_libfakegpu_so_LDFLAGS = -shared
endif
TESTS += tests/gpu/fake.sh
EXTRA_DIST += tests/gpu/fake.sh

# A fake libibverbs (tests/gpu/fake/fakeibv.c: RC queue pairs between processes of one host)
# for tests/gpu/fake-verbs.sh: the verbs backend with several ranks and no RDMA device.
if HAVE_VERBS
check_PROGRAMS += tests/gpu/fake/libfakeibv.so
tests_gpu_fake_libfakeibv_so_SOURCES = tests/gpu/fake/fakeibv.c
tests_gpu_fake_libfakeibv_so_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden
tests_gpu_fake_libfakeibv_so_LDFLAGS = -shared
endif
TESTS += tests/gpu/fake-verbs.sh
EXTRA_DIST += tests/gpu/fake-verbs.sh
