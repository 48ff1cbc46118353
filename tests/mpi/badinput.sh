#!/bin/sh
# Bad input: one clear line naming what is wrong, exit 2, no measurement.
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
command -v mpirun >/dev/null || skip_all "mpirun not installed"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

expect() { # expect NP "needle" args... (VLIMIT=KB: under ulimit -v KB)
    np=$1; needle=$2; shift 2
    if [ "$np" = 0 ]; then
        # AddressSanitizer reserves terabytes of shadow memory, so ulimit -v would stop it
        # before main; there the allocator is told to fail as malloc does under the limit
        (if [ -n "${VLIMIT:-}" ] && [ -n "${ASAN_OPTIONS:-}" ]; then
             ASAN_OPTIONS="$ASAN_OPTIONS:allocator_may_return_null=1:max_allocation_size_mb=$((VLIMIT / 1024))"
             export ASAN_OPTIONS
         elif [ -n "${VLIMIT:-}" ]; then ulimit -v "$VLIMIT"; fi
         exec timeout 120 "$CCBENCH" bench "$@") >"$tmp/out" 2>"$tmp/err"
    else
        timeout 120 $CC_MPIRUN -np "$np" "$CCBENCH" bench "$@" >"$tmp/out" 2>"$tmp/err"
    fi
    rc=$?
    lines=$(grep -c '^ccbench' "$tmp/err")
    [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && grep -q -- "$needle" "$tmp/err" && ! grep -q '^  *[0-9]' "$tmp/out"
    ok $? "np $np $*: exit 2, one line with '$needle' (rc $rc, $lines lines)" "$(cat "$tmp/err")"
}
expect 0 "invalid size '1X'" -b 1X
expect 0 "unknown option '--bogus'" --bogus
expect 0 "needs an integer" -n many
expect 0 "unexpected argument 'extra'" extra
expect 0 "option '--quiet' takes no value" --quiet=no
expect 2 "invalid size '1X'" -b 1X
expect 2 "minimum size 1048576 is larger than maximum size 1024" -b 1M -e 1K
expect 4 "multiple of 16" --coll allgather -b 5 -e 5
expect 3 "multiple of 12" --coll reducescatter -b 20 -e 20
expect 2 "unknown collective 'allreduc'" --coll allreduc
expect 2 "unknown backend 'carrier-pigeon'" --backend carrier-pigeon
expect 2 "unknown datatype 'float8'" -d float8
expect 2 "unknown op 'xor'" -o xor
expect 2 "op 'avg' makes no sense for datatype 'int32'" -o avg -d int32
expect 2 "root 7 is not a rank" --coll broadcast -r 7
# a negative root is refused whatever the collectives (it was accepted without a rooted one)
expect 0 "root -1 is not a rank (ranks count from 0)" -r -1
expect 2 "root -1 is not a rank" --coll allreduce -r -1
expect 2 "cannot write --json file" --json /nonexistent/dir/x.jsonl -b 8 -e 8

# sweeps: a factor barely above 1 or a tiny step over a huge range is refused at once (it used
# to loop for ever, or exhaust memory and print an uninitialised message)
expect 0 "step factor 1.000000000000001 gives more than 10000 sizes from 8 to 64M" -f 1.000000000000001
expect 2 "step factor 1.000000000000001 gives more than 10000 sizes" -f 1.000000000000001
expect 0 "step of 4 bytes gives more than 10000 sizes from 4 to 1T" -f 1 -i 4 -b 4 -e 1T
VLIMIT=3000000 expect 0 "step of 4 bytes gives more than 10000 sizes from 4 to 1T" -f 1 -i 4 -b 4 -e 1T
LC_ALL=C grep -q '[^ -~]' "$tmp/err"; [ $? -eq 1 ]; ok $? "under ulimit -v the message is plain text" "$(cat "$tmp/err")"
# a factor below 1, or a step that a factor above 1 would ignore
expect 0 "step factor -2 is less than 1" -f -2
expect 0 "step bytes 64 apply only with step factor 1, not 2" -i 64
expect 0 "step bytes 64 apply only with step factor 1, not 4" -f 4 -i 64
# a size that fits no element says the rule of that collective
expect 0 "no size from 9 to 9 bytes is a multiple of 4 bytes (the size of one float32 element)" -b 9 -e 9
expect 2 "multiple of 16 bytes (allgather splits the buffer over the ranks: 8-byte float64 elements x 2 ranks)" \
    --coll allgather -d float64 -b 9 -e 9
# buffers that cannot be allocated: exit 2 before measuring, not a fault (8G of float64 is
# 2^30 elements, within MPI's int count; 1T of float32 would be n/a by count, no buffer at all)
VLIMIT=4000000 expect 0 "cannot allocate the 8G buffers of -e 8G" -d float64 -b 8G -e 8G -n 2
# iteration limits
expect 0 "-n 5 is more than --max-iters 2" -b 8 -e 16 -n 5 --max-iters 2
expect 0 "--min-iters 50 is more than --max-iters 10" -b 8 -e 16 --min-iters 50 --max-iters 10
# nothing to measure, empty list items, option ranges
expect 0 "--inplace leaves nothing to measure: no in-place variant of alltoall, sendrecv" \
    --inplace --coll alltoall,sendrecv
expect 0 "--inplace and --outofplace each select one placement only" --inplace --outofplace
expect 0 "invalid op list 'sum,' (an empty item)" -o sum,
expect 0 "invalid collective list 'allreduce,' (an empty item)" --coll allreduce,
expect 0 "--cuda-graph '-3' is out of range" -G -3
expect 0 "--gid-index '-99' is out of range (-1 to 255)" --gid-index -99
expect 0 "--gpu '-5' is out of range (-1 to 1023)" --gpu -5
expect 0 "--tcp-chunk '1T' is out of range (0 to 16M)" --tcp-chunk 1T
# a backend that fails alike on every rank says so once
expect 2 "backend tcp: no interface with an IPv4 or IPv6 address matches --tcp-if '=eth9'" \
    --backend tcp --tcp-if =eth9 -b 8 -e 8

expect 0 "--ib-dev needs a device list" --ib-dev ''
expect 0 "option '-b' (--minbytes) needs a value" -b
# an option of another backend does nothing: said once, and the run goes on
timeout 120 "$CCBENCH" bench -b 8 -e 8 -n 1 -q --ib-dev mlx5_0 --tcp-if lo >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && grep -q "warning: --ib-dev is an option of the verbs backend: not used with --backend mpi" "$tmp/err" &&
    grep -q "warning: --tcp-if is an option of the tcp backend: not used with --backend mpi" "$tmp/err" &&
    [ "$(grep -c warning "$tmp/err")" -eq 2 ]
ok $? "options of other backends named as unused (exit $rc)" "$(cat "$tmp/err")"
timeout 120 "$CCBENCH" bench -b 8 -e 8 -n 1 -q --gpu 0 >"$tmp/out" 2>"$tmp/err"
grep -q "warning: --gpu is an option of the nccl or verbs backend: not used with --backend mpi" "$tmp/err"
ok $? "an option of two backends names both" "$(cat "$tmp/err")"
timeout 120 "$CCBENCH" bench -b 8 -e 8 -n 1 -q --backend verbs --gpu 0 >"$tmp/out" 2>"$tmp/err"
! grep -q "warning: --gpu is an option" "$tmp/err"
ok $? "--gpu with --backend verbs (GPUDirect) is not called unused" "$(cat "$tmp/err")"
# output files: all checked before any is truncated, and before the backend starts
printf 'earlier results\n' >"$tmp/keep.jsonl"
expect 2 "cannot write --csv file '/nonexistent/x.csv'" -b 8 -e 8 --json "$tmp/keep.jsonl" \
    --csv /nonexistent/x.csv
[ "$(cat "$tmp/keep.jsonl")" = "earlier results" ]; ok $? "the existing --json file is left as it was"
expect 2 "are the same file" -b 8 -e 8 --json "$tmp/same.out" --csv "$tmp/./same.out"
[ ! -e "$tmp/same.out" ]; ok $? "and the file it would have created is not left behind"
expect 2 "cannot write --csv file '/nonexistent/x.csv'" --backend tcp -b 8 -e 8 --csv /nonexistent/x.csv
! grep -q "uses interface" "$tmp/err"; ok $? "a bad output path is found before the tcp backend starts" "$(cat "$tmp/err")"
expect 0 "backend tcp: no interface" --backend tcp --tcp-if =eth9 -b 8 -e 8 --json "$tmp/keep.jsonl" \
    --csv "$tmp/new.csv"
[ "$(cat "$tmp/keep.jsonl")" = "earlier results" ] && [ ! -e "$tmp/new.csv" ]
ok $? "a backend that does not start leaves the files alone"
# a FIFO without a reader: refused at once (the open used to wait for a reader for ever)
mkfifo "$tmp/fifo"
timeout 20 "$CCBENCH" bench -b 8 -e 8 -n 1 --json "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q "cannot write --json file '$tmp/fifo': a FIFO with no reader" "$tmp/err"
ok $? "--json to a FIFO without a reader refused at once (exit $rc)" "$(cat "$tmp/err")"
# --json naming the file that stdout is redirected to: written through stdout, the table and
# every JSON line kept (a second descriptor at offset 0 wrote over the other's lines)
timeout 120 "$CCBENCH" bench -b 8 -e 256 -n 1 --json "$tmp/both.txt" >"$tmp/both.txt" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^{"type": *"header"' "$tmp/both.txt" &&
    [ "$(grep -c '"type": *"result"' "$tmp/both.txt")" -ge 6 ] && grep -q '"type": *"summary"' "$tmp/both.txt" &&
    python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]' "$tmp/both.txt" &&
    grep -Eq '^ +256 +' "$tmp/both.txt"
ok $? "--json to stdout's own file: table and JSON both whole (exit $rc)" "$(head -c 600 "$tmp/both.txt")"
# writes that fail (a full disk): one line naming the file, exit 2, no claim of results
expect 2 "cannot write '/dev/full': No space left on device" -b 8 -e 64 -n 2 --json /dev/full
! grep -q "# results: /dev/full" "$tmp/out"; ok $? "no '# results' line for a file not written"
# the header of --json fails: the run stops before measuring, the --csv after it gets its
# own header all the same (one sink failing keeps no other from what the run wrote)
expect 2 "cannot write '/dev/full'" -b 8 -e 64 -n 2 --json /dev/full --csv "$tmp/after.csv"
[ "$(cat "$tmp/after.csv")" = "$(head -1 "$tmp/after.csv")" ] && head -1 "$tmp/after.csv" | grep -q '^collective,backend,' &&
    ! grep -q "# results: /dev/full" "$tmp/out"
ok $? "--json failing at its header: the --csv holds its header line alone" "$(cat "$tmp/after.csv"; grep '^#' "$tmp/out")"
expect 0 "cannot write '/dev/full': No space left on device" -b 8 -e 64 -n 2 -q --csv /dev/full
# an MPMD job whose two apps have different bad sizes: the first rank of each app says so,
# once (no rank enters MPI: a rank waiting in MPI_Init for peers that left can hang mpirun).
# mpirun ends the job when the first app exits, and on a loaded machine that can be before
# the other app has printed: a message missing is retried (up to 3 runs), a message twice or
# a wrong exit status is not
try=0
while :; do
    try=$((try + 1))
    timeout -k 5 60 $CC_MPIRUN -np 1 "$CCBENCH" bench -e 64y -n 2 : -np 2 "$CCBENCH" bench -e 64x -n 2 \
        >"$tmp/out" 2>"$tmp/err"; rc=$?
    nx=$(grep -c "error: --maxbytes: invalid size '64x'" "$tmp/err"); ny=$(grep -c "error: --maxbytes: invalid size '64y'" "$tmp/err")
    [ $rc -ne 0 ] && [ "$nx" -le 1 ] && [ "$ny" -le 1 ] && [ $((nx + ny)) -ge 1 ] || break
    [ "$nx" -eq 1 ] && [ "$ny" -eq 1 ] && break
    [ $try -ge 3 ] && break
done
[ $rc -ne 0 ] && [ "$nx" -eq 1 ] && [ "$ny" -eq 1 ]
ok $? "MPMD: the bad arguments of each app are named once (rc $rc, run $try)" "$(grep -v '^ *$' "$tmp/err" | head -5)"
tap_done
