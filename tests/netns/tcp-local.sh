#!/bin/sh
# tcp backend on one host (no namespaces): every collective x every datatype with 2-4 ranks,
# every reduction op with a non-zero root and several streams, each result checked by the
# harness (#wrong in the JSON output) and the exit status asserted.
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
command -v mpirun >/dev/null 2>&1 || skip_all "mpirun not found"
command -v jq >/dev/null 2>&1 || skip_all "jq not found (needed to read the JSON results)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ccb-tcp-local.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

measured() { jq -s '[.[] | select(.type == "result" and (has("na") | not))] | length' "$1"; }
wrong() { jq -s '[.[] | select(.type == "result" and (has("na") | not)) | .wrong] | add' "$1"; }
colls() { jq -s '[.[] | select(.type == "result" and (has("na") | not)) | .collective] | unique | length' "$1"; }

for np in 2 3 4; do
    for d in int8 uint8 int32 uint32 int64 uint64 float16 bfloat16 float32 float64; do
        j="$tmp/np$np-$d.json"
        timeout 300 $CC_MPIRUN -np $np "$CCBENCH" bench --backend tcp --coll all -d $d \
            -b 8 -e 256K -f 8 -n 2 -w 1 -q --tcp-chunk 4K --json "$j" >"$tmp/out" 2>&1
        rc=$?
        n=$(measured "$j" 2>/dev/null); w=$(wrong "$j" 2>/dev/null); c=$(colls "$j" 2>/dev/null)
        [ "$rc" = 0 ] && [ "${n:-0}" -ge 60 ] && [ "$w" = 0 ] && [ "$c" = 7 ]
        ok $? "np $np $d: all collectives, $n measurements, wrong ${w:-?}, exit $rc" "$(tail -5 "$tmp/out")"
    done
done

# every op, a root that is not 0, 3 streams with small chunks so stripes wrap many times
for op in sum prod min max avg; do
    j="$tmp/op-$op.json"
    timeout 300 $CC_MPIRUN -np 3 "$CCBENCH" bench --backend tcp \
        --coll allreduce,reducescatter,reduce,broadcast -o $op -d float32 -r 2 \
        -b 8 -e 1M -f 16 -n 2 -w 1 -q --tcp-streams 3 --tcp-chunk 4K --json "$j" >"$tmp/out" 2>&1
    rc=$?
    n=$(measured "$j" 2>/dev/null); w=$(wrong "$j" 2>/dev/null)
    [ "$rc" = 0 ] && [ "${n:-0}" -ge 30 ] && [ "$w" = 0 ]
    ok $? "np 3 op $op root 2, 3 streams: $n measurements, wrong ${w:-?}, exit $rc" "$(tail -5 "$tmp/out")"
done

# more connections than the 16 strangers start-up reads at once arrive together (ranks x
# --tcp-streams): every one is adopted, none evicted
for cfg in "2 64" "3 17"; do
    set -- $cfg
    j="$tmp/streams$2.json"
    timeout 120 $CC_MPIRUN -np $1 "$CCBENCH" bench --backend tcp -b 8 -e 64 -n 2 -w 1 -q \
        --tcp-streams $2 --json "$j" >"$tmp/out" 2>&1
    rc=$?; n=$(measured "$j" 2>/dev/null); w=$(wrong "$j" 2>/dev/null)
    [ "$rc" = 0 ] && [ "${n:-0}" -ge 8 ] && [ "$w" = 0 ] && ! grep -q "too many connections" "$tmp/out"
    ok $? "np $1, --tcp-streams $2: start-up adopts every stream ($n measurements, exit $rc)" \
        "$(tail -5 "$tmp/out")"
done

# out of file descriptors (rank 0 accepts 2 x 16 sockets under ulimit -n 50): said at once,
# with what to do, instead of a listener spinning until the deadline blames a peer
t0=$(date +%s)
timeout 120 sh -c "ulimit -n 50 && $CC_MPIRUN -np 3 $CCBENCH bench --backend tcp -b 8 -e 64 -n 2 -w 1 \
    -q --tcp-streams 16 --timeout 60" >"$tmp/out" 2>&1
rc=$?; t1=$(date +%s)
[ "$rc" -ne 0 ] && [ $((t1 - t0)) -lt 30 ] && ! grep -q "timed out after" "$tmp/out" &&
    grep -Eq "cannot accept the connections of higher ranks: Too many open files \(raise ulimit -n|cannot create a socket: Too many open files" "$tmp/out"
ok $? "ulimit -n too low for the streams: named within $((t1 - t0)) s (exit $rc)" "$(grep -E 'error|warn' "$tmp/out" | head -4)"

# ranks of binaries with different default chunk sizes (simulated by a test variable: the
# arguments are compared across ranks, the environment is not) would exchange misplaced
# bytes; the start-up agreement refuses them with exit 2 before any data moves
timeout 120 $CC_MPIRUN -np 1 "$CCBENCH" bench --backend tcp -b 8 -e 64 -n 2 -q : \
    -np 1 env CCBENCH_DEBUG_TCP_DEFAULT_CHUNK=8192 "$CCBENCH" bench --backend tcp -b 8 -e 64 -n 2 -q \
    >"$tmp/out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "the ranks cut data into different chunks (8192 and 524288 bytes: ccbench binaries of different versions?)" "$tmp/out"
ok $? "ranks with different default chunks: refused at start-up, exit $rc" "$(grep error "$tmp/out")"
# ... and so are ranks with different default stream counts, whose hellos the other side
# would refuse until the deadline
t0=$(date +%s)
timeout 120 $CC_MPIRUN -np 1 "$CCBENCH" bench --backend tcp -b 8 -e 64 -n 2 -q --timeout 30 : \
    -np 1 env CCBENCH_DEBUG_TCP_DEFAULT_STREAMS=2 "$CCBENCH" bench --backend tcp -b 8 -e 64 -n 2 -q \
    --timeout 30 >"$tmp/out" 2>&1
rc=$?
t1=$(date +%s)
[ "$rc" = 2 ] && [ $((t1 - t0)) -lt 25 ] &&
    grep -q "the ranks open different numbers of streams per peer (1 and 2: ccbench binaries of different versions?)" "$tmp/out"
ok $? "ranks with different default stream counts: refused at start-up in $((t1 - t0)) s, exit $rc" "$(grep error "$tmp/out")"

# one rank that cannot allocate its staging window (2 GiB: 64 streams x 2 x 16M) under a
# memory limit the other rank does not have: the start-up agreement says so at once with what
# to lower, exit 3 (the ranks used to end up in different MPI calls and hang). Under
# AddressSanitizer, which reserves terabytes, the allocator is capped instead of ulimit -v
if [ -n "${ASAN_OPTIONS:-}" ]; then
    pre= lim="env ASAN_OPTIONS=$ASAN_OPTIONS:allocator_may_return_null=1:max_allocation_size_mb=1024"
else
    pre="ulimit -v 1500000;" lim=
fi
t0=$(date +%s)
timeout 120 $CC_MPIRUN -np 1 "$CCBENCH" bench --backend tcp -b 8 -e 8 -n 2 -q --tcp-streams 64 \
    --tcp-chunk 16M --timeout 60 : -np 1 sh -c "$pre exec $lim $CCBENCH bench \
    --backend tcp -b 8 -e 8 -n 2 -q --tcp-streams 64 --tcp-chunk 16M --timeout 60" >"$tmp/out" 2>&1
rc=$?; t1=$(date +%s)
[ "$rc" = 3 ] && [ $((t1 - t0)) -lt 30 ] &&
    grep -q "backend tcp on rank 1 (.*): cannot allocate the 2147483648-byte staging window (lower --tcp-chunk or --tcp-streams)" "$tmp/out"
ok $? "rank 1 out of memory at start-up: named at once ($((t1 - t0)) s, exit $rc)" "$(grep -E 'error' "$tmp/out" | head -4)"

# a rank that gives up at start-up after connecting to the lower ranks: the ranks waiting for
# it hear of it over MPI at once, not at their 60 s deadline, and say who. Rank 0 raises the
# alarm itself; rank 1's notice reaches rank 2 through a rank 0 that has finished its own
# connections (it keeps passing notices on until every rank is done)
for who in 0 1; do
    t0=$(date +%s)
    timeout 120 $CC_MPIRUN -np 3 "$CCBENCH" bench --backend tcp -b 8 -e 64 -n 2 -w 1 -q \
        --timeout 60 --debug-fail-startup $who >"$tmp/out" 2>&1
    rc=$?; t1=$(date +%s)
    [ "$rc" = 3 ] && [ $((t1 - t0)) -lt 30 ] &&
        grep -Eq "backend tcp on rank [0-9]+ \([^)]*\)( and [0-9]+ more)?: stopped waiting: rank $who \(.*\) gave up during start-up" "$tmp/out" &&
        grep -q "backend tcp on rank $who (.*): gave up on purpose" "$tmp/out"
    ok $? "rank $who giving up at start-up: rank 2 stops waiting at once and names it ($((t1 - t0)) s, exit $rc)" \
        "$(grep -E 'error' "$tmp/out" | head -4)"
done

# 17 ranks: 16-bit sums and averages where a window of ranks gives each element its inputs
# (averages: bfloat16 beyond 4 ranks, float16 beyond 15), reduced by tcp's own code
j="$tmp/w17.json"
timeout 300 $CC_MPIRUN -np 17 "$CCBENCH" bench --backend tcp --coll allreduce,reducescatter,reduce \
    -d float16,bfloat16 -o sum,avg -b 8K -e 64K -f 8 -n 2 -w 0 -q --json "$j" >"$tmp/out" 2>&1
rc=$?; n=$(measured "$j" 2>/dev/null); w=$(wrong "$j" 2>/dev/null)
[ "$rc" = 0 ] && [ "${n:-0}" -ge 24 ] && [ "$w" = 0 ]
ok $? "np 17: 16-bit sums and averages over a window of ranks, $n measurements, wrong ${w:-?}, exit $rc" \
    "$(tail -5 "$tmp/out")"

# one rank: every collective is a local copy
j="$tmp/np1.json"
timeout 120 $CC_MPIRUN -np 1 "$CCBENCH" bench --backend tcp --coll all -b 8 -e 64K -f 8 -n 2 -w 1 \
    -q --json "$j" >"$tmp/out" 2>&1
rc=$?; n=$(measured "$j" 2>/dev/null); w=$(wrong "$j" 2>/dev/null)
[ "$rc" = 0 ] && [ "${n:-0}" -ge 20 ] && [ "$w" = 0 ]
ok $? "np 1: $n measurements, wrong ${w:-?}, exit $rc" "$(tail -5 "$tmp/out")"

# the checker can fail: a corrupted element on rank 1 is counted and the exit status is 1
j="$tmp/corrupt.json"
timeout 120 $CC_MPIRUN -np 2 "$CCBENCH" bench --backend tcp --coll allreduce -b 1K -e 1K -n 2 -w 1 \
    -q --debug-corrupt 1 --json "$j" >"$tmp/out" 2>&1
rc=$?; w=$(wrong "$j" 2>/dev/null)
[ "$rc" = 1 ] && [ "${w:-0}" -gt 0 ]
ok $? "a corrupted result is reported (wrong ${w:-?}, exit $rc)" "$(tail -5 "$tmp/out")"

# the chosen interface is said on rank 0 and in the JSON header
j="$tmp/if.json"
timeout 120 $CC_MPIRUN -np 2 "$CCBENCH" bench --backend tcp --tcp-if =lo -b 8 -e 8 -n 2 -w 1 \
    -q --json "$j" >"$tmp/out" 2>&1
rc=$?
[ "$rc" = 0 ] && grep -q "uses interface lo (127" "$tmp/out" &&
    [ "$(head -1 "$j" | jq -r '.tcp_interface + " " + (.tcp_ranks | length | tostring)')" = "lo 2" ]
ok $? "--tcp-if =lo is used and reported (exit $rc)" "$(cat "$tmp/out")"

# an interface list that matches nothing is a clean usage error
timeout 120 $CC_MPIRUN -np 2 "$CCBENCH" bench --backend tcp --tcp-if =nosuchif0 -b 8 -e 8 -n 1 \
    >"$tmp/out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "no interface with an IPv4 or IPv6 address matches --tcp-if '=nosuchif0'" "$tmp/out"
ok $? "--tcp-if matching nothing: one-line error, exit 2 (got $rc)" "$(cat "$tmp/out")"

# IPv6 on loopback (::1): every collective, chosen by --tcp-family or NCCL_SOCKET_FAMILY
listens() { head -1 "$1" | jq -r '[.tcp_ranks[].listen | sub(":[0-9]+$"; "")] | unique | join(",")'; }
if ip -6 addr show dev lo 2>/dev/null | grep -q "inet6 ::1/"; then
    j="$tmp/v6.json"
    timeout 300 $CC_MPIRUN -np 3 "$CCBENCH" bench --backend tcp --tcp-if =lo --tcp-family ipv6 \
        --coll all -b 8 -e 256K -f 8 -n 2 -w 1 -q --tcp-streams 2 --json "$j" >"$tmp/out" 2>&1
    rc=$?; n=$(measured "$j" 2>/dev/null); w=$(wrong "$j" 2>/dev/null); a=$(listens "$j" 2>/dev/null)
    [ "$rc" = 0 ] && [ "${n:-0}" -ge 60 ] && [ "$w" = 0 ] && [ "$a" = "[::1]" ] &&
        grep -q "uses interface lo (\[::1\]:[0-9]*)" "$tmp/out"
    ok $? "IPv6 --tcp-family ipv6: every collective over [::1], $n measurements, wrong ${w:-?}, exit $rc" \
        "$(tail -5 "$tmp/out")"
    j="$tmp/v6env.json"
    NCCL_SOCKET_FAMILY=AF_INET6 timeout 120 $CC_MPIRUN -x NCCL_SOCKET_FAMILY -np 2 "$CCBENCH" bench \
        --backend tcp --tcp-if =lo -b 8 -e 1K -n 2 -w 1 -q --json "$j" >"$tmp/out" 2>&1
    rc=$?; a=$(listens "$j" 2>/dev/null)
    [ "$rc" = 0 ] && [ "$a" = "[::1]" ]; ok $? "NCCL_SOCKET_FAMILY=AF_INET6 picks ::1 ($a, exit $rc)"
    j="$tmp/v4over.json"
    NCCL_SOCKET_FAMILY=AF_INET6 timeout 120 $CC_MPIRUN -x NCCL_SOCKET_FAMILY -np 2 "$CCBENCH" bench \
        --backend tcp --tcp-if =lo --tcp-family ipv4 -b 8 -e 1K -n 2 -w 1 -q --json "$j" >"$tmp/out" 2>&1
    rc=$?; a=$(listens "$j" 2>/dev/null)
    [ "$rc" = 0 ] && [ "$a" = "127.0.0.1" ]; ok $? "--tcp-family ipv4 wins over the variable ($a, exit $rc)"
else
    skip "IPv6 over ::1" "loopback has no ::1 (IPv6 is disabled here)"
    skip "NCCL_SOCKET_FAMILY=AF_INET6" "loopback has no ::1 (IPv6 is disabled here)"
    skip "--tcp-family ipv4 over the variable" "loopback has no ::1 (IPv6 is disabled here)"
fi
NCCL_SOCKET_FAMILY=AF_UNIX timeout 120 $CC_MPIRUN -x NCCL_SOCKET_FAMILY -np 2 "$CCBENCH" bench \
    --backend tcp -b 8 -e 8 -n 1 >"$tmp/out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "NCCL_SOCKET_FAMILY 'AF_UNIX' is neither AF_INET nor AF_INET6" "$tmp/out"
ok $? "a bad NCCL_SOCKET_FAMILY: one-line error, exit 2 (got $rc)" "$(cat "$tmp/out")"

# a peer that hangs mid-all-reduce (stopped, so its sockets stay open and mpirun sees nothing
# wrong) is named by the others within the deadline, and the run ends with status 3. The
# hidden --debug-stop 2 makes rank 2 stop itself (SIGSTOP) at the start of its 50th tcp
# collective, so the stop always lands inside tcp traffic (a stop sent from outside could land
# in the harness's own MPI calls, which have no tcp deadline: the watchdog then ends the run
# later, without naming the peer).
t0=$(date +%s)
timeout 120 $CC_MPIRUN -np 3 "$CCBENCH" bench --backend tcp -b 1M -e 1M -n 1000 -w 1 -q --timeout 5 \
    --iter-barrier 0 --debug-stop 2 >"$tmp/out" 2>&1
rc=$?
t1=$(date +%s)
victim=$(rank_pid 2 "ccbench bench --backend tcp -b 1M -e 1M -n 1000 .*--debug-stop 2") &&
    kill -KILL "$victim" 2>/dev/null
[ "$rc" = 3 ] && [ $((t1 - t0)) -le 30 ] &&
    grep -a "error: tcp:" "$tmp/out" | grep "allreduce of 1M bytes" | grep -q "rank 2 ("
ok $? "a stopped rank is named by its peers (exit $rc after $((t1 - t0)) s)" "$(grep -a error "$tmp/out")"
# its host's kernel still acknowledges: the message says the rank, not the link, is stuck
grep -a "error: tcp:" "$tmp/out" | grep -q "rank 2 (.*its host still acknowledges (.* s ago), so rank 2 itself is stuck"
ok $? "the peers say the stopped rank's host still answers" "$(grep -a error "$tmp/out")"

# with a 0.5 s deadline no probe has been answered after the last data yet (the first
# keepalive comes after 1 s, the first window probe's answer within 250 ms of the last data):
# the stall is named, and nothing is claimed about the stopped rank's host
timeout 60 $CC_MPIRUN -np 2 "$CCBENCH" bench --backend tcp -b 1M -e 1M -n 1000 -w 1 -q --timeout 0.5 \
    --iter-barrier 0 --debug-stop 1 >"$tmp/out" 2>&1
rc=$?
victim=$(rank_pid 1 "ccbench bench --backend tcp -b 1M -e 1M -n 1000 .*--debug-stop 1") &&
    kill -KILL "$victim" 2>/dev/null
[ "$rc" = 3 ] && grep -a "error: tcp: timed out after 0.5 s" "$tmp/out" | grep -q "rank 1 (" &&
    ! grep -a "error: tcp:" "$tmp/out" | grep -q "acknowledge"
ok $? "a 0.5 s deadline: the stopped rank is named, its host neither cleared nor blamed (exit $rc)" "$(grep -a error "$tmp/out")"

# a rank that stops reading for longer than half the deadline (stopped from outside for 5.5 s
# of an 8 s deadline, in the middle of 64M all-reduces): its peer's data waits in a closed
# receive window, which the kernel's user timeout would cut off as a lost connection if it
# were shorter than the deadline; the run goes on when the rank comes back
timeout 120 $CC_MPIRUN -np 2 "$CCBENCH" bench --backend tcp -b 64M -e 64M -n 150 -w 1 -q \
    --timeout 8 --iter-barrier 0 >"$tmp/out" 2>&1 &
bench=$!
paused=1
if wait_for 30 rank_pid 1 "ccbench bench --backend tcp -b 64M -e 64M -n 150" >/dev/null &&
    late=$(rank_pid 1 "ccbench bench --backend tcp -b 64M -e 64M -n 150"); then
    sleep 2
    kill -STOP "$late" && sleep 5.5 && kill -CONT "$late" && paused=0
fi
wait $bench
rc=$?
[ "$paused" = 0 ] && [ "$rc" = 0 ] && grep -aq "^# allreduce float32 sum .* wrong 0$" "$tmp/out"
ok $? "a rank that reads nothing for 5.5 s of an 8 s deadline is not lost (exit $rc)" "$(grep -a 'error\|allreduce' "$tmp/out")"

# a rank that stops during start-up: the others' agreement after their own start-up deadline
# is watched too, so the job ends (exit 3) naming the stopped rank, never hangs (whichever
# rank's watchdog speaks first: rank 1 in its start-up, or rank 0 with its own reason)
t0=$(date +%s)
timeout 120 $CC_MPIRUN -np 2 "$CCBENCH" bench --backend tcp --debug-stop-startup 1 --timeout 2 \
    -e 1K -q >"$tmp/out" 2>&1
rc=$?
t1=$(date +%s)
[ "$rc" = 3 ] && [ $((t1 - t0)) -le 60 ] &&
    grep -aEq "watchdog: rank (1 \(.*\) made no progress for [0-9]* s in backend initialization|0 \(.*\) made no progress for [0-9]* s in agreeing that the backend started on every rank \(here it did not: .*rank 1)" "$tmp/out"
ok $? "a rank stopped at start-up: the watchdog ends the job (exit $rc after $((t1 - t0)) s)" "$(grep -a error "$tmp/out")"

# three checked runs of a large reduce with a short deadline: the root checks the previous
# run for longer than tcp's connection check allows a silent peer; the ranks meet before each
# checked run, so the busy root is not taken for a lost one
timeout 120 $CC_MPIRUN -np 2 "$CCBENCH" bench --backend tcp --coll reduce -d int8 -b 32M -e 32M -c 3 \
    -n 1 -w 0 --outofplace --timeout 1 -q >"$tmp/out" 2>&1
rc=$?
[ "$rc" = 0 ] && grep -aq "^# reduce int8 sum .* wrong 0$" "$tmp/out"
ok $? "a root checking a 32M reduce three times is no lost peer (exit $rc)" "$(grep -a 'error\|reduce' "$tmp/out")"

tap_done
