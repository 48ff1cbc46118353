# bench: the measurement harness (needs the rte, so it lives in libccbench)
libccbench_a_SOURCES += src/bench/harness.c src/bench/harness.h
