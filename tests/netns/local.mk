# fragment of Makefile.am (owned by this part of the tree): the tcp backend, its unit test,
# the tests that run it locally and across network-namespace "hosts", and its docs.
libcccore_a_SOURCES += src/net/ifmatch.c src/net/ifmatch.h src/net/wire.c src/net/wire.h \
	src/net/wdwire.c src/net/wdwire.h src/net/be.h
libccbench_a_SOURCES += src/backend/tcp_conn.c src/backend/tcp_conn.h

check_PROGRAMS += tests/netns/test_tcp_wire
tests_netns_test_tcp_wire_SOURCES = tests/netns/test_tcp_wire.c
tests_netns_test_tcp_wire_LDADD = $(CC_UNIT_LIBS)

# tcp-local.sh needs mpirun and jq; tcp-netns.sh also root, ip, tc and namespaces (else skips);
# tcp-iface.sh root, ip and namespaces
TESTS += tests/netns/test_tcp_wire tests/netns/tcp-local.sh tests/netns/tcp-netns.sh \
	tests/netns/tcp-iface.sh
EXTRA_DIST += tests/netns/cluster.sh tests/netns/tcp-local.sh tests/netns/tcp-netns.sh \
	tests/netns/tcp-iface.sh \
	tests/perf/tcp-netns-bench.sh
dist_doc_DATA += docs/tcp.md docs/netns.md
