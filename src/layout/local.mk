# fragment of Makefile.am (owned by this part of the tree)
# layout: pure computation (no MPI, no hardware), so it lives in libcccore.
libcccore_a_SOURCES += src/layout/model.c src/layout/model.h \
	src/layout/cluster.c src/layout/cluster.h \
	src/layout/layout.c src/layout/layout.h \
	src/layout/megatron.c src/layout/megatron.h \
	src/layout/report.c src/layout/report.h
