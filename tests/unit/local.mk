# unit tests: no MPI, no hardware
CC_UNIT_TESTS = tests/unit/test_size tests/unit/test_opt tests/unit/test_stats \
	tests/unit/test_dtype tests/unit/test_coll tests/unit/test_report tests/unit/test_wdwire
check_PROGRAMS += $(CC_UNIT_TESTS)
TESTS += $(CC_UNIT_TESTS)
tests_unit_test_size_LDADD = $(CC_UNIT_LIBS)
tests_unit_test_opt_LDADD = $(CC_UNIT_LIBS)
tests_unit_test_stats_LDADD = $(CC_UNIT_LIBS)
tests_unit_test_dtype_LDADD = $(CC_UNIT_LIBS)
tests_unit_test_coll_LDADD = $(CC_UNIT_LIBS)
tests_unit_test_report_LDADD = $(CC_UNIT_LIBS)
tests_unit_test_wdwire_LDADD = $(CC_UNIT_LIBS)
