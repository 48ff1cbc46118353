# fragment of Makefile.am (owned by this part of the tree): GPU and RDMA tests.
check_PROGRAMS += tests/gpu/test_gpu_logic
tests_gpu_test_gpu_logic_SOURCES = tests/gpu/test_gpu_logic.c
tests_gpu_test_gpu_logic_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_gpu_test_gpu_logic_LDADD = $(CC_UNIT_LIBS)
TESTS += tests/gpu/test_gpu_logic tests/gpu/backends.sh
EXTRA_DIST += tests/gpu/backends.sh tests/gpu/run.sh tests/gpu/fake-sysfs
