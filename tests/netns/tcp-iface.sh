#!/bin/sh
# tcp backend: which interface and address family the default --tcp-if picks, in a network
# namespace of its own: a host whose only interface besides loopback has a routable IPv6
# address (no IPv4) must publish that address, not 127.0.0.1 (which would send every peer to
# its own host); an IPv4 link-local address is passed over.
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
[ "$(id -u)" = 0 ] || skip_all "needs root (network namespaces)"
command -v ip >/dev/null 2>&1 || skip_all "'ip' not found"
command -v mpirun >/dev/null 2>&1 || skip_all "mpirun not found"
ns=ccif$$
ip netns del "$ns" 2>/dev/null # left by a killed run of an earlier process of this pid
ip netns add "$ns" 2>/dev/null || skip_all "cannot create network namespaces"
trap 'ip netns del "$ns" 2>/dev/null' EXIT
if ! { ip -n "$ns" link set lo up && ip -n "$ns" link add va type veth peer name vb 2>/dev/null &&
       ip -n "$ns" link set va up && ip -n "$ns" link set vb up; }; then
    skip_all "veth not available in this kernel"
fi
if ! ip -n "$ns" addr add fd00:cc:1f::1/64 dev va nodad 2>/dev/null; then
    skip_all "IPv6 is disabled here"
fi

out=$(timeout 120 ip netns exec "$ns" $CC_MPIRUN -np 2 "$CCBENCH" bench --backend tcp -b 8 -e 1K \
    -n 2 -w 1 -q 2>&1)
rc=$?
[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q 'uses interface va (\[fd00:cc:1f::1\]:' &&
    printf '%s\n' "$out" | grep -q 'wrong 0'
ok $? "only a routable IPv6 besides loopback: it is chosen over 127.0.0.1 (exit $rc)" "$out"

# with an IPv4 address on it too, IPv4 comes first (NCCL's order)
ip -n "$ns" addr add 198.18.31.1/24 dev va
out=$(timeout 120 ip netns exec "$ns" $CC_MPIRUN -np 2 "$CCBENCH" bench --backend tcp -b 8 -e 1K \
    -n 2 -w 1 -q 2>&1)
rc=$?
[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q 'uses interface va (198.18.31.1:'
ok $? "IPv4 and IPv6 on it: IPv4 first (exit $rc)" "$out"

# nothing but loopback up: loopback, the one-host case
ip -n "$ns" link set va down
ip -n "$ns" link set vb down
out=$(timeout 120 ip netns exec "$ns" $CC_MPIRUN -np 2 "$CCBENCH" bench --backend tcp -b 8 -e 1K \
    -n 2 -w 1 -q 2>&1)
rc=$?
[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q 'uses interface lo (127.0.0.1:'
ok $? "nothing but loopback up: 127.0.0.1 (exit $rc)" "$out"
# an IPv4 link-local address (169.254/16: a BMC's USB NIC, often the same on every host) is
# passed over by the default --tcp-if though its interface comes first (vb, the pair's first
# made), and taken when --tcp-if names that interface
ip -n "$ns" link set va up
ip -n "$ns" link set vb up
ip -n "$ns" addr flush dev va
ip -n "$ns" addr add 169.254.7.1/16 dev vb
ip -n "$ns" addr add 198.18.32.1/24 dev va
first=$(ip -n "$ns" -o link show | awk -F': ' '$2 ~ /^v[ab]@/ { sub(/@.*/, "", $2); print $2; exit }')
out=$(timeout 120 ip netns exec "$ns" $CC_MPIRUN -np 2 "$CCBENCH" bench --backend tcp -b 8 -e 1K \
    -n 2 -w 1 -q 2>&1)
rc=$?
[ "$first" = vb ] && [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q 'uses interface va (198.18.32.1:'
ok $? "a link-local IPv4 address on the first interface ($first): passed over for the next (exit $rc)" "$out"
out=$(timeout 120 ip netns exec "$ns" $CC_MPIRUN -np 2 "$CCBENCH" bench --backend tcp --tcp-if =vb \
    -b 8 -e 1K -n 2 -w 1 -q 2>&1)
rc=$?
[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q 'uses interface vb (169.254.7.1:'
ok $? "--tcp-if =vb: its link-local address is taken (exit $rc)" "$out"
tap_done
