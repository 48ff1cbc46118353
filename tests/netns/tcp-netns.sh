#!/bin/sh
# tcp backend across 4 namespace hosts (tests/netns/cluster.sh): every collective checked; a
# foreign connection with a bad token is rejected while a bench runs and during start-up, over
# IPv4 and IPv6; a link cut in the middle
# of an all-reduce is reported within the deadline, naming the host, with a non-zero exit and
# the sizes measured before the cut kept; with the MPI backend, the watchdog names the host
# cut off.
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
CLUSTER_LIB=1 . "$CC_SRCDIR/tests/netns/cluster.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not found (needed to read the JSON results)"
cl_check || skip_all "$CL_SKIP"
cl_up 4 1gbit || { ok 1 "cluster set-up"; tap_done; exit 1; }
tmp=$CL_DIR
measured() { jq -s '[.[] | select(.type == "result" and (has("na") | not))] | length' "$1"; }
wrong() { jq -s '[.[] | select(.type == "result" and (has("na") | not)) | .wrong] | add' "$1"; }

# 1. every collective over 4 hosts, 2 streams per peer
j="$tmp/all.json"
cl_mpirun -t 300 "$CCBENCH" bench --backend tcp --coll all -b 8 -e 4M -f 64 -n 2 -w 1 -q \
    --tcp-streams 2 --json "$j" >"$tmp/out" 2>&1
rc=$?; n=$(measured "$j" 2>/dev/null); w=$(wrong "$j" 2>/dev/null)
[ "$rc" = 0 ] && [ "${n:-0}" -ge 30 ] && [ "$w" = 0 ] &&
    [ "$(head -1 "$j" | jq -r .tcp_interface)" = eth0 ]
ok $? "4 hosts: every collective, $n measurements, wrong ${w:-?}, on eth0, exit $rc" "$(tail -5 "$tmp/out")"

# listen_port ADDR ("198.18.0.1" or "[fd00:cc:18::1]"): rank 0's listening port on ADDR, in $port
listen_port() {
    port=$(ip netns exec "$(cl_ns 0)" ss -Htlnp 2>/dev/null | grep '"ccbench"' |
        awk -v a="$1:" 'index($4, a) == 1 { print substr($4, length(a) + 1); exit }')
    [ -n "$port" ]
}
# send_bad_token HOST ADDR PORT: from host HOST, a well-formed hello with a wrong token
send_bad_token() {
    hello_bad='CCBT\000\001\000\000\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377'
    ip netns exec "$(cl_ns "$1")" timeout 10 bash -c "exec 3<>/dev/tcp/$2/$3 &&
        printf '$hello_bad' >&3 && printf '%024d' 0 >&3 && sleep 1" 2>/dev/null
}
# send_junk HOST ADDR PORT: from host HOST, something that is not a hello
send_junk() {
    ip netns exec "$(cl_ns "$1")" timeout 10 bash -c "exec 3<>/dev/tcp/$2/$3 &&
        printf 'GET / HTTP/1.0\r\n\r\n%030d' 0 >&3 && sleep 1" 2>/dev/null
}

# stopped_rank N: the pid of the stopped ccbench in host N's namespace, in $rs
stopped_rank() {
    for p in $(ip netns pids "$(cl_ns "$1")"); do
        [ "$(cat /proc/$p/comm 2>/dev/null)" = ccbench ] &&
            [ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" = T ] && { rs=$p; return 0; }
    done
    return 1
}

# 2. strangers while a bench runs: a bad token and a malformed hello sent to rank 0's port.
# Rank 2 stops itself in its 50th collective (hidden --debug-stop), so rank 0 is inside a
# collective, waiting, for as long as the strangers take, however slow this machine is;
# rank 2 continues once both rejections are logged.
j="$tmp/token.json"
cl_mpirun -t 300 "$CCBENCH" bench --backend tcp -b 1M -e 1M -n 60 -w 1 -q --timeout 60 \
    --debug-stop 2 --json "$j" >"$tmp/out" 2>&1 &
bench=$!
rs=""
if wait_for 60 stopped_rank 2 && wait_for 10 listen_port "$(cl_ip 0)"; then
    send_bad_token 1 "$(cl_ip 0)" "$port"
    send_junk 3 "$(cl_ip 0)" "$port"
    wait_for 20 grep -q "malformed handshake" "$tmp/out"
    ok 0 "strangers connected to rank 0's port $port during the run"
else
    ok 1 "rank 2 stopped itself mid-run and rank 0 listens" "$(tail -5 "$tmp/out")"
fi
[ -n "$rs" ] && kill -CONT "$rs"
wait $bench; rc=$?
n=$(measured "$j" 2>/dev/null); w=$(wrong "$j" 2>/dev/null)
[ "$rc" = 0 ] && [ "${n:-0}" -ge 2 ] && [ "$w" = 0 ]
ok $? "the bench completes correctly despite them (wrong ${w:-?}, exit $rc)" "$(tail -5 "$tmp/out")"
grep -q "rejected connection from $(cl_ip 1):[0-9]*: bad token" "$tmp/out"
ok $? "the bad token is rejected and logged" "$(grep -i reject "$tmp/out")"
grep -q "rejected connection from $(cl_ip 3):[0-9]*: malformed handshake" "$tmp/out"
ok $? "the malformed hello is rejected and logged" "$(grep -i reject "$tmp/out")"

# 2a. strangers during start-up: rank 1 stops itself before it connects (hidden
# --debug-stop-startup), so rank 0 is still waiting for its hellos when a bad token (from
# host 2) and a malformed hello (from host 3) reach rank 0's port; then rank 1 continues and
# the job starts and runs correctly
j="$tmp/startup.json"
cl_mpirun -t 120 "$CCBENCH" bench --backend tcp -b 8 -e 1K -n 2 -w 1 -q --timeout 60 \
    --debug-stop-startup 1 --json "$j" >"$tmp/out" 2>&1 &
bench=$!
rs=""
if wait_for 30 stopped_rank 1 && wait_for 10 listen_port "$(cl_ip 0)"; then
    send_bad_token 2 "$(cl_ip 0)" "$port"
    send_junk 3 "$(cl_ip 0)" "$port"
    ok 0 "start-up: strangers reached rank 0's port $port while rank 1 was stopped"
else
    ok 1 "start-up: rank 1 stopped itself and rank 0 listens" "$(tail -5 "$tmp/out")"
fi
[ -n "$rs" ] && kill -CONT "$rs"
wait $bench; rc=$?
n=$(measured "$j" 2>/dev/null); w=$(wrong "$j" 2>/dev/null)
[ "$rc" = 0 ] && [ "${n:-0}" -ge 2 ] && [ "$w" = 0 ] &&
    grep -q "rejected connection from $(cl_ip 2):[0-9]*: bad token" "$tmp/out" &&
    grep -q "rejected connection from $(cl_ip 3):[0-9]*: malformed handshake" "$tmp/out"
ok $? "start-up: both rejected and logged, then the job runs (wrong ${w:-?}, exit $rc)" \
    "$(grep -i -e reject -e error "$tmp/out")"
lr=$(grep -n "rejected connection from $(cl_ip 2)" "$tmp/out" | head -1 | cut -d: -f1)
lu=$(grep -n "uses interface" "$tmp/out" | head -1 | cut -d: -f1)
[ -n "$lr" ] && [ -n "$lu" ] && [ "$lr" -lt "$lu" ]
ok $? "start-up: the rejection came before start-up finished (line ${lr:-?} < ${lu:-?})" "$(cat "$tmp/out")"

# 2b. the same over IPv6 (unique-local addresses on the same links): every collective, and a
# stranger with a bad token named by its IPv6 address
if [ "$CL_IPV6" = 1 ]; then
    j="$tmp/v6.json"
    cl_mpirun -t 300 "$CCBENCH" bench --backend tcp --tcp-family ipv6 --coll all -b 8 -e 4M -f 64 \
        -n 20 -w 1 -q --timeout 60 --debug-stop 2 --json "$j" >"$tmp/out" 2>&1 &
    bench=$!
    rs=""
    if wait_for 60 stopped_rank 2 && wait_for 10 listen_port "[$(cl_ip6 0)]"; then
        send_bad_token 1 "$(cl_ip6 0)" "$port"
        wait_for 20 grep -q "bad token" "$tmp/out"
        ok 0 "IPv6: a stranger connected to rank 0's [$(cl_ip6 0)]:$port"
    else
        ok 1 "IPv6: rank 2 stopped itself mid-run and rank 0 listens on $(cl_ip6 0)" "$(tail -5 "$tmp/out")"
    fi
    [ -n "$rs" ] && kill -CONT "$rs"
    wait $bench; rc=$?
    n=$(measured "$j" 2>/dev/null); w=$(wrong "$j" 2>/dev/null)
    addrs=$(head -1 "$j" | jq -r '[.tcp_ranks[].listen | sub(":[0-9]+$"; "")] | join(",")' 2>/dev/null)
    [ "$rc" = 0 ] && [ "${n:-0}" -ge 30 ] && [ "$w" = 0 ] &&
        [ "$addrs" = "[$(cl_ip6 0)],[$(cl_ip6 1)],[$(cl_ip6 2)],[$(cl_ip6 3)]" ]
    ok $? "IPv6: every collective over 4 hosts, $n measurements, wrong ${w:-?}, listening on $addrs" \
        "$(tail -5 "$tmp/out")"
    grep -q "rejected connection from \[$(cl_ip6 1)\]:[0-9]*: bad token" "$tmp/out"
    ok $? "IPv6: the bad token is rejected, named by its IPv6 address" "$(grep -i reject "$tmp/out")"
else
    skip "IPv6 across hosts" "the kernel refused an IPv6 address (no IPv6 here)"
    skip "IPv6 strangers" "the kernel refused an IPv6 address (no IPv6 here)"
    skip "IPv6 rejection" "the kernel refused an IPv6 address (no IPv6 here)"
fi

# 3. cut host 2's link during a 64M all-reduce (deadline 5 s)
j="$tmp/cut.json"
t_start=$(date +%s)
cl_mpirun -t 120 "$CCBENCH" bench --backend tcp -b 4M -e 64M -f 4 -n 10 -w 1 -q --timeout 5 \
    --json "$j" >"$tmp/out" 2>&1 &
bench=$!
tx2() { ip netns exec "$(cl_ns 2)" cat /sys/class/net/eth0/statistics/tx_bytes; }
past() { [ "$(tx2)" -gt "$1" ]; }
if wait_for 60 grep -q '"bytes":16777216' "$j" && tx0=$(tx2) &&
    wait_for 30 past $((tx0 + 150000000)); then
    # host 2 has sent 150 MB since the 16M row: inside the 64M all-reduces (the harness's
    # own MPI calls between iterations take a few milliseconds of each 0.85 s iteration)
    cl_cut 2
    t_cut=$(date +%s.%N)
    if wait_for 30 grep -q "error.*$(cl_ns 2)" "$tmp/out"; then
        t_err=$(date +%s.%N)
        lag=$(echo "$t_err - $t_cut" | bc)
        [ "$(echo "$lag <= 10" | bc)" = 1 ]
        ok $? "the cut is reported after $lag s (deadline 5 s, bound 10 s)" "$(grep error "$tmp/out")"
    else
        ok 1 "the cut is reported naming $(cl_ns 2)" "$(tail -10 "$tmp/out")"
    fi
    cl_restore 2 # let mpirun reach the host's daemon to finish the abort
else
    ok 1 "the bench reached 64M before the cut" "$(tail -5 "$tmp/out")"
fi
wait_for 40 sh -c "! kill -0 $bench 2>/dev/null"
alive=$?
[ $alive = 0 ] || kill $bench 2>/dev/null
wait $bench; rc=$?
t_end=$(date +%s)
[ $alive = 0 ] && [ "$rc" = 3 ]
ok $? "the run exits with status 3 on its own ($rc after $((t_end - t_start)) s)" "$(tail -10 "$tmp/out")"
grep "error" "$tmp/out" | grep -q "allreduce of 64M bytes" && grep "error" "$tmp/out" | grep -q "$(cl_ip 2):"
ok $? "the error names the collective, the size and the host's address" "$(grep error "$tmp/out")"
# the ranks that name the cut host say it is gone (its host silent, or the connection lost),
# none that it still answers
grep "error: tcp:" "$tmp/out" | grep "rank 2 (" | grep -Eq "its host has acknowledged nothing for [0-9.]* s \(host or link down\)|lost connection to rank 2" &&
    ! grep "error: tcp:" "$tmp/out" | grep "rank 2 (" | grep -q "still acknowledges"
ok $? "the peers of the cut host say its host or link is down" "$(grep error "$tmp/out")"
[ "$(jq -s '[.[] | select(.type == "result" and .wrong == 0) | .bytes] | unique | join(",")' "$j" 2>/dev/null)" = '"4194304,16777216"' ]
ok $? "the sizes measured before the cut are kept in the JSON" "$(cat "$j" | cut -c1-200)"
# 4. the watchdog's verdict across hosts: the MPI backend (no deadline of its own) over the 4
# hosts, host 2's link cut in the middle of a sweep. Rank 0's watchdog asks the other hosts'
# watchdogs at their published addresses (not loopback): hosts 1 and 3 answer, host 2 does not
j="$tmp/wd.json"
# (the first sizes may take a minute to come on a loaded 2-core machine under ASan: start-up of
# 4 ranks over the namespaces, 3000 iterations each; a quiet machine takes seconds)
cl_mpirun -t 240 "$CCBENCH" bench -b 8 -e 1M -n 2999 -q --timeout 1 --json "$j" \
    >"$tmp/out" 2>&1 &
bench=$!
if wait_for 150 grep -q '"bytes":16,' "$j"; then
    cl_cut 2
    wait_for 30 grep -q "likely culprit" "$tmp/out"
    grep -q "watchdog: likely culprit: rank 2 ($(cl_ns 2)) no longer answers the watchdog (it answered at start-up): stopped, dead, or the host is down; 3 of 4 ranks wait in " "$tmp/out"
    ok $? "a host cut off: rank 0's watchdog names rank 2 on $(cl_ns 2); ranks 1 and 3 answered from their hosts" "$(grep watchdog "$tmp/out")"
    cl_restore 2 # let mpirun reach the host's daemon to finish the abort
else
    ok 1 "the MPI bench measured before the cut" "$(tail -5 "$tmp/out")"
fi
wait_for 40 sh -c "! kill -0 $bench 2>/dev/null" || kill $bench 2>/dev/null
wait $bench; rc=$?
[ "$rc" = 3 ]; ok $? "the run ends with the watchdog's status 3 ($rc)" "$(tail -5 "$tmp/out")"

# 5. a host with nothing but loopback: the default interface choice falls back to lo
lo_ns="${CL_P}lo"
ip netns del "$lo_ns" 2>/dev/null
if ip netns add "$lo_ns" 2>/dev/null; then
    ip -n "$lo_ns" link set lo up
    timeout 60 ip netns exec "$lo_ns" $CC_MPIRUN -np 2 "$CCBENCH" bench --backend tcp -b 1K -e 1K \
        -n 2 -q --json "$tmp/lo.json" >"$tmp/out" 2>&1
    rc=$?
    pids=$(ip netns pids "$lo_ns"); [ -n "$pids" ] && kill -9 $pids
    ip netns del "$lo_ns"
    [ "$rc" = 0 ] && grep -q "uses interface lo (127.0.0.1:[0-9]*).*(default choice)" "$tmp/out" &&
        [ "$(wrong "$tmp/lo.json")" = 0 ]
    ok $? "only loopback up: the default falls back to lo and says so (exit $rc)" "$(tail -5 "$tmp/out")"
else
    ok 1 "namespace for the loopback-only test"
fi

# 6. a long transfer that keeps moving is not a hang: at 60 Mbit/s a 64 MiB all-reduce over 4
# hosts moves 96 MiB per rank, about 13 s, longer than the watchdog's 1.5 x --timeout + 5 s =
# 8 s; the tcp backend tells the watchdog it progresses, so the run completes. (--timeout 2,
# not 1: with 1 the test failed once, exit 3, under the sanitizers on a 2-core machine loaded
# by other jobs; the backend's own stall limit is --timeout without a byte, which a rank
# starved of CPU can reach.)
for i in 0 1 2 3; do cl_rate $i 60mbit; done
j="$tmp/long.json"
cl_mpirun -t 180 "$CCBENCH" bench --backend tcp --coll allreduce -b 64M -e 64M -n 1 -w 0 -q \
    --timeout 2 --json "$j" >"$tmp/out" 2>&1
rc=$?
t=$(jq -s '[.[] | select(.type == "result" and .inplace == false) | .time_us] | first' "$j" 2>/dev/null)
[ "$rc" = 0 ] && [ "$(wrong "$j")" = 0 ] && awk -v t="${t:-0}" 'BEGIN { exit !(t > 8e6) }'
ok $? "a 64 MiB all-reduce at 60 Mbit/s (${t:-?} us) outlasts the watchdog's 8 s and completes (exit $rc)" \
    "$(grep -E 'error|watchdog' "$tmp/out" | head -4)"
for i in 0 1 2 3; do cl_rate $i 1gbit; done

# 7. a host whose only link the default --tcp-if excludes (named docker0 here) in a job over 4
# hosts: refused at start-up, naming the host, instead of publishing its loopback address,
# which the other hosts would take for their own
h3=$(cl_ns 3)
ip -n "$h3" link set eth0 down && ip -n "$h3" link set eth0 name docker0 &&
    ip -n "$h3" link set docker0 up && ip -n "$h3" addr replace "$(cl_ip 3)/24" dev docker0
cl_mpirun -t 120 "$CCBENCH" bench --backend tcp -b 8 -e 8 -n 2 -q --timeout 20 >"$tmp/out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "backend tcp on rank 3 ($h3): no interface with an IPv4 or IPv6 address matches --tcp-if '^docker,lo' (up and running: .*); loopback cannot reach the job's other hosts" "$tmp/out"
ok $? "a host with no interface but one the default excludes: refused, named, exit $rc" "$(grep error "$tmp/out" | head -3)"
# 8. an address every host has (a BMC's USB NIC, 169.254.0.2 on each host's bmc0): with
# --tcp-if =bmc0 each rank would connect to its own host; refused at start-up, naming the
# address, the interface and a rank of another host that has it too
for i in 0 1 2 3; do
    h=$(cl_ns $i)
    ip -n "$h" link add bmc0 type veth peer name bmc1 && ip -n "$h" link set bmc0 up &&
        ip -n "$h" link set bmc1 up && ip -n "$h" addr add 169.254.0.2/16 dev bmc0
done
cl_mpirun -t 120 "$CCBENCH" bench --backend tcp --tcp-if =bmc0 -b 8 -e 8 -n 2 -q --timeout 20 \
    >"$tmp/out" 2>&1
rc=$?
[ "$rc" != 0 ] && grep -q "rank [0-9] on .* publishes this host's address 169.254.0.2 (interface bmc0) as well" "$tmp/out"
ok $? "the same address on every host: refused at start-up, named, exit $rc" "$(grep error "$tmp/out" | head -3)"
tap_done
