#!/bin/sh
# The watchdog names the rank holding the job up, not only the rank that waited longest:
# the firing rank asks every rank's watchdog over UDP what it is doing. Two cases with real
# ranks: one stopped (SIGSTOP) inside a collective, one busy in host work outside any.
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
command -v mpirun >/dev/null || skip_all "mpirun not installed"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# 4 ranks, rank 2 stopped in the middle of the sweep: rank 0's watchdog (0.5 x 1.5 + 5 s)
# names rank 2, which answered at start-up and no longer does, and not itself
timeout -k 5 60 $CC_MPIRUN -np 4 "$CCBENCH" bench -b 8 -e 1M -n 2999 --timeout 0.5 \
    --json "$tmp/s.jsonl" >"$tmp/sout" 2>&1 &
pid=$!
wait_rows "$tmp/s.jsonl" 3
victim=$(rank_pid 2 "$tmp/s.jsonl")
[ -n "$victim" ]; ok $? "found rank 2 of the running job"
[ -n "$victim" ] && kill -STOP "$victim" || kill "$pid"
wait $pid; rc=$?
[ -n "$victim" ] && kill -KILL "$victim" 2>/dev/null
[ $rc -eq 3 ] && grep -q 'watchdog: rank 0 ([^)]*) made no progress' "$tmp/sout"
ok $? "stopped rank: rank 0's watchdog ends the run (exit $rc)" "$(grep watchdog "$tmp/sout")"
grep -q 'watchdog: likely culprit: rank 2 ([^)]*) no longer answers the watchdog (it answered at start-up): stopped, dead, or the host is down; 3 of 4 ranks wait in ' "$tmp/sout"
ok $? "stopped rank: rank 2 named, the three others waiting" "$(grep watchdog "$tmp/sout")"
grep 'likely culprit' "$tmp/sout" | head -1 | grep -q ':0: error: watchdog: likely culprit: rank 2 '
ok $? "rank 0's verdict comes first (the other ranks wait 3 s before theirs)" "$(grep 'likely culprit' "$tmp/sout")"

# 3 ranks, rank 1 stays in host work when it checks its first result: the others wait for it
# in the check's exchange; rank 1 is named as between operations, after that measurement
timeout -k 5 60 $CC_MPIRUN -np 3 "$CCBENCH" bench -b 8 -e 64 -n 5 --timeout 0.5 --debug-busy 1 \
    >"$tmp/bout" 2>&1
rc=$?
[ $rc -eq 3 ] && grep -q 'watchdog: rank 0 ([^)]*) made no progress' "$tmp/bout"
ok $? "busy rank: the watchdog ends the run (exit $rc)" "$(grep watchdog "$tmp/bout")"
grep -q 'watchdog: likely culprit: rank 1 ([^)]*) is between operations (host work) for [0-9]* s, after allreduce 8 out-of-place (float32, backend mpi); 2 of 3 ranks wait in allreduce 8 out-of-place' "$tmp/bout"
ok $? "busy rank: rank 1 named, in host work after the measurement the others wait in" \
    "$(grep watchdog "$tmp/bout")"
tap_done
