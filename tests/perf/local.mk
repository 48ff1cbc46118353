# perf: reference programs for the benchmarks under tests/perf (built with `make`, never
# run by `make check`: figures belong in results/, see the scripts)
noinst_PROGRAMS = tests/perf/ref_allreduce
tests_perf_ref_allreduce_SOURCES = tests/perf/ref_allreduce.c
tests_perf_ref_allreduce_LDADD = $(MPI_LIBS)
EXTRA_DIST += tests/perf/bench-mpi-vs-reference.sh tests/perf/check-cost.sh
noinst_PROGRAMS += tests/perf/harness_vs_loop
tests_perf_harness_vs_loop_SOURCES = tests/perf/harness_vs_loop.c
tests_perf_harness_vs_loop_LDADD = $(CC_LIBS_ALL)
