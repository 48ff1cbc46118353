# perf: reference programs for the benchmarks under tests/perf (built with `make`, never
# run by `make check`: figures belong in results/, see the scripts)
noinst_PROGRAMS = tests/perf/ref_allreduce
tests_perf_ref_allreduce_SOURCES = tests/perf/ref_allreduce.c
tests_perf_ref_allreduce_LDADD = $(MPI_LIBS)
EXTRA_DIST += tests/perf/bench-mpi-vs-reference.sh
