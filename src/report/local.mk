# report: output formats (no MPI)
libcccore_a_SOURCES += src/bench/result.h src/report/report.h src/report/summary.c \
	src/report/text.c src/report/jsonl.c src/report/csv.c src/report/outfile.c src/report/outfile.h
