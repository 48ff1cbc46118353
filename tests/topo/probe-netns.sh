#!/bin/sh
# probe-netns.sh - `ccbench probe` across 3 namespace "hosts" (tests/netns/cluster.sh): one
# probe per host, three nodes merged in host order, every host named, none odd; a host whose
# probe fails is named in the saved file's "missing", exit 3; --nccl-topo with %h is refused
# when two nodes have one name.
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
[ -f "$CC_SRCDIR/tests/netns/cluster.sh" ] || skip_all "tests/netns/cluster.sh not in this tree"
CLUSTER_LIB=1 . "$CC_SRCDIR/tests/netns/cluster.sh"
cl_check || skip_all "$CL_SKIP"
cl_up 3 1gbit || { ok 1 "cluster set-up"; tap_done; exit 1; }
j="$CL_DIR/cluster.json"
cl_mpirun -t 120 "$CCBENCH" probe --no-gpu-libs --json "$j" --nccl-topo "$CL_DIR/nccl-%h.xml" \
    >"$CL_DIR/out" 2>&1
ok $? "probe on 3 hosts" "$(tail -5 "$CL_DIR/out")"
hosts=$(sed -n 's/^      "hostname": "\(.*\)",$/\1/p' "$j" | tr '\n' ' ')
[ "$hosts" = "$(cl_ns 0) $(cl_ns 1) $(cl_ns 2) " ]; ok $? "three nodes, in host order" "$hosts"
grep -q "same as this node: $(cl_ns 1) $(cl_ns 2)" "$CL_DIR/out"
ok $? "summary: identical hosts described once" "$(cat "$CL_DIR/out")"
grep -q "all nodes match the majority" "$CL_DIR/out"; ok $? "no host differs from the majority"
n=$(ls "$CL_DIR"/nccl-*.xml 2>/dev/null | wc -l); [ "$n" = 3 ]
ok $? "--nccl-topo: one file per host (%h)" "$(ls "$CL_DIR")"
"$CCBENCH" probe --topology "$j" -q; ok $? "the merged file loads back"
# %h makes the second host's --nccl-topo file the --json file (a shared directory): that host
# says so, once, and no rank writes anything
bad="$CL_DIR/x-$(cl_ns 1).json"
cl_mpirun -t 120 "$CCBENCH" probe --no-gpu-libs -q --json "$bad" --nccl-topo "$CL_DIR/x-%h.json" \
    >"$CL_DIR/out" 2>&1
rc=$?
[ $rc -ne 0 ] && [ "$(grep -c 'error: --json and --nccl-topo name the same file' "$CL_DIR/out")" -eq 1 ] &&
    ! ls "$CL_DIR"/x-*.json >/dev/null 2>&1
ok $? "--nccl-topo of one host is the --json file: one line, nothing written (rc $rc)" "$(cat "$CL_DIR/out"; ls "$CL_DIR")"

# host 1 probes an export that is no hwloc XML: the other two are saved, host 1 is listed
# under "missing" with the reason, the exit is 3 (a node could not be probed)
: >"$CL_DIR/empty.xml"
bad=$(cl_ns 1) m="$CL_DIR/missing.json"
cl_mpirun -t 120 sh -c 'j=$3; if [ "$(hostname)" = "$1" ]; then set -- --hwloc-xml "$2"; else set --; fi
    exec "$0" probe --no-gpu-libs --json "$j" "$@"' "$CCBENCH" "$bad" "$CL_DIR/empty.xml" "$m" \
    >"$CL_DIR/out2" 2>&1; rc=$?
[ $rc -eq 3 ]; ok $? "a host that cannot be probed: exit 3" "rc=$rc $(tail -5 "$CL_DIR/out2")"
hosts=$(sed '/^  "missing"/,$d' "$m" | sed -n 's/^      "hostname": "\(.*\)",$/\1/p' | tr '\n' ' ')
[ "$hosts" = "$(cl_ns 0) $(cl_ns 2) " ] && grep -q '^  "missing": \[$' "$m" &&
    grep -A3 '^  "missing"' "$m" | grep -q "\"hostname\": \"$bad\"" &&
    grep -A4 '^  "missing"' "$m" | grep -q '"reason": "cannot read hwloc XML .*not an hwloc XML export"'
ok $? "the others saved, the failed host under \"missing\" with the reason" "$hosts $(grep -A5 '"missing"' "$m")"
grep -q "^# not probed: $bad: cannot read hwloc XML" "$CL_DIR/out2" &&
    [ "$(grep -c "cannot probe node '$bad'" "$CL_DIR/out2")" = 1 ]
ok $? "the summary and one error line name the failed host" "$(grep -i 'probe' "$CL_DIR/out2")"
"$CCBENCH" probe --topology "$m" >"$CL_DIR/out3" 2>&1 && grep -q "^# not probed: $bad: " "$CL_DIR/out3"
ok $? "--topology: the file loads, the missing host shown" "$(head -5 "$CL_DIR/out3")"

# every host probes one export, so every node is named dgx-like: %h would give one file for
# three nodes. Refused (exit 2, the name said once), no file written, the topology saved
cl_mpirun -t 120 "$CCBENCH" probe --no-gpu-libs -q --hwloc-xml "$CC_SRCDIR/tests/topo/dgx-like.xml" \
    --sysfs-root "$CC_SRCDIR/tests/topo/sysfs" --json "$CL_DIR/same.json" \
    --nccl-topo "$CL_DIR/same-%h.xml" >"$CL_DIR/out4" 2>&1; rc=$?
[ $rc -eq 2 ] && [ "$(grep -c "two nodes are named 'dgx-like'" "$CL_DIR/out4")" = 1 ] &&
    ! ls "$CL_DIR"/same-* >/dev/null 2>&1 && "$CCBENCH" probe --topology "$CL_DIR/same.json" -q
ok $? "--nccl-topo %h naming two nodes alike: exit 2, refused once, nothing written" \
    "rc=$rc $(grep -v '^ *$' "$CL_DIR/out4" | head -5; ls "$CL_DIR")"
tap_done
