#!/bin/sh
# probe.sh - `ccbench probe` end to end: on this machine without and with mpirun (one probe
# per node), on the hwloc XML fixtures with --nccl-topo, --topology on every file of
# topologies/, and bad input (exit 2, one line naming the file and the place).
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
S="$CC_SRCDIR/tests/topo"

# this machine, no mpirun (MPI singleton)
"$CCBENCH" probe --no-gpu-libs --json "$T/here.json" >"$T/here.out" 2>&1
ok $? "probe this machine (singleton)" "$(cat "$T/here.out")"
# hostnames in a saved topology, one per line (no JSON tool needed)
hosts() { sed -n 's/^      "hostname": "\(.*\)",$/\1/p' "$1"; }
"$CCBENCH" probe --topology "$T/here.json" >"$T/back.out" 2>&1
ok $? "saved topology loads back" "$(cat "$T/back.out")"
grep -q "^# topology 'probed': 1 node(s)" "$T/back.out" && [ "$(hosts "$T/here.json")" = "$(hostname)" ]
ok $? "singleton: one node, named by this host" "$(hosts "$T/here.json")"

# default file name: <out>/topology-<UTC time>.json
"$CCBENCH" probe --no-gpu-libs -q --out "$T/res" >/dev/null 2>&1
ls "$T/res" | grep -Eq '^topology-[0-9]{8}-[0-9]{6}\.json$'; ok $? "saved under --out with a timestamp" "$(ls "$T/res")"

# two ranks on one node: one probe, one node
if command -v mpirun >/dev/null 2>&1; then
    timeout 120 $CC_MPIRUN -np 2 "$CCBENCH" probe --no-gpu-libs --json "$T/np2.json" >"$T/np2.out" 2>&1
    ok $? "mpirun -np 2 probe" "$(tail -5 "$T/np2.out")"
    n=$(hosts "$T/np2.json" | wc -l)
    [ "$n" = 1 ]; ok $? "np2 on one host: one node (one probe per node)" "$(hosts "$T/np2.json")"
    c=$(grep -c '^node ' "$T/np2.out"); [ "$c" = 1 ]; ok $? "np2: summary shows one node" "$(cat "$T/np2.out")"
else
    skip "mpirun -np 2 probe" "no mpirun"
fi

# fixture with --nccl-topo, %h expanded to the host name
"$CCBENCH" probe --hwloc-xml "$S/dgx-like.xml" --sysfs-root "$S/sysfs" --no-gpu-libs \
    --json "$T/dgx.json" --nccl-topo "$T/nccl-%h.xml" >"$T/dgx.out" 2>&1
ok $? "probe the DGX-like fixture" "$(cat "$T/dgx.out")"
cmp -s "$T/nccl-dgx-like.xml" "$S/golden/dgx-like.nccl.xml"
ok $? "--nccl-topo FILE (%h) matches the expected XML" "$(diff "$T/nccl-dgx-like.xml" "$S/golden/dgx-like.nccl.xml" 2>&1 | head -5)"

# the same fixture with a sysfs laid out as the kernel's (devices under their ports, reached
# through links): GPU 0000:03:00.0 (Gen5 x16) behind a port that runs Gen4 x8 is written at
# the port's link, as NCCL reads it; NIC 0000:89:00.0 is an SR-IOV VF (no net of its own);
# GPU 0000:88:00.0 says NUMA node 0 in sysfs (hwloc had it on node 1)
Y=$T/sysfs-tree
cp -R "$S/sysfs" "$Y" && chmod -R u+w "$Y"
port=$Y/sys/devices/pci0000:00/0000:01:00.0
mkdir -p "$port" && mv "$Y/sys/bus/pci/devices/0000:03:00.0" "$port/" &&
    ln -s ../../../devices/pci0000:00/0000:01:00.0/0000:03:00.0 "$Y/sys/bus/pci/devices/0000:03:00.0" &&
    printf '16.0 GT/s PCIe\n' >"$port/max_link_speed" && printf '8\n' >"$port/max_link_width"
mkdir -p "$Y/sys/bus/pci/devices/0000:89:00.0/physfn" "$Y/sys/bus/pci/devices/0000:88:00.0"
printf '0x020700\n' >"$Y/sys/bus/pci/devices/0000:89:00.0/physfn/class"
printf '0\n' >"$Y/sys/bus/pci/devices/0000:88:00.0/numa_node"
"$CCBENCH" probe --hwloc-xml "$S/dgx-like.xml" --sysfs-root "$Y" --no-gpu-libs \
    --json "$T/tree.json" --nccl-topo "$T/tree.xml" >"$T/tree.out" 2>&1
ok $? "probe the fixture over a sysfs tree" "$(cat "$T/tree.out")"
grep -q 'busid="0000:03:00.0" .* link_speed="16.0 GT/s PCIe" link_width="8"' "$T/tree.xml"
ok $? "--nccl-topo: a device's link is capped by its port's" "$(grep 0000:03:00.0 "$T/tree.xml")"
! grep -q 'mlx5_2' "$T/tree.xml" && [ "$(grep -c '<net ' "$T/tree.xml")" = 2 ]
ok $? "--nccl-topo: an SR-IOV VF gets no net" "$(grep '<net ' "$T/tree.xml")"
awk '/<cpu numaid="0"/ { c = 0 } /<cpu numaid="1"/ { c = 1 } /busid="0000:88:00.0"/ { print c }' "$T/tree.xml" | grep -qx 0
ok $? "--nccl-topo: a device sits under the NUMA node sysfs gives it" "$(grep -n 'cpu numaid\|0000:88' "$T/tree.xml")"
awk '/"pci_bus_id": "0000:88:00.0"/ { f = 1 } f && /"numa":/ { print $2; exit }' "$T/tree.json" | grep -qx '0,'
ok $? "probe JSON: the GPU's NUMA node is the one sysfs gives it too, as in the XML" \
    "$(grep -A3 '"pci_bus_id": "0000:88:00.0"' "$T/tree.json")"
# ... and the path classes follow it: GPU3 (0000:88:00.0) meets GPU0 on node 0 through the
# CPU (PHB), GPU2 on node 1 across sockets (SYS), as NCCL will see them (hwloc's locality
# said the opposite)
python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["nodes"][0]["paths"]["gpu_gpu"]; sys.exit(not (g[3][0] == g[0][3] == "PHB" and g[3][2] == "SYS"))' "$T/tree.json"
ok $? "path classes between NUMA nodes follow sysfs numa_node, as the XML does" \
    "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["nodes"][0]["paths"]["gpu_gpu"])' "$T/tree.json")"
! grep -Eq ' (dev|rank|gdr|affinity|guid|speed|port|maxconn|latency)=' "$T/tree.xml"
ok $? "--nccl-topo: nothing NCCL detects better is written (dev, rank, gdr, affinity, net details)"
grep -q '^  GPU1 .*NVL .* PXB' "$T/dgx.out"; ok $? "summary prints the affinity matrix" "$(cat "$T/dgx.out")"

leaks_checked # --topology reads a file: no MPI
# every reference topology validates and summarizes
for f in "$CC_SRCDIR"/topologies/*.json; do
    "$CCBENCH" probe --topology "$f" >"$T/t.out" 2>&1
    ok $? "--topology $(basename "$f") loads" "$(cat "$T/t.out")"
done
"$CCBENCH" probe --topology "$CC_SRCDIR/topologies/dgx-a100-64.json" | grep -q "64 node(s)"
ok $? "dgx-a100-64 has 64 nodes"

# bad input: exit 2, the file and the place in one line
"$CCBENCH" probe --topology "$S/bad/malformed.json" >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ]; ok $? "malformed topology: exit 2" "rc=$rc"
grep -q "cannot read topology '$S/bad/malformed.json': line 4 column 36" "$T/bad.out"
ok $? "malformed topology: error names file, line and column" "$(cat "$T/bad.out")"
[ "$(wc -l <"$T/bad.out")" -eq 1 ]; ok $? "malformed topology: one line"
"$CCBENCH" probe --topology "$S/bad/bad-class.json" >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "nodes\[0\].paths.gpu_gpu\[1\]\[0\]: 'NVLINK'" "$T/bad.out"
ok $? "invalid topology: exit 2 and the JSON place" "rc=$rc $(cat "$T/bad.out")"
# a GPU's counts: integers, -1 when unknown, as many links up as there are at most
for c in 'nvlink.links="many"|nvlink: .links. must be an integer' 'nvlink.up=-7|nvlink: .up. must be >= 0' \
    'nvlink.up=13|nvlink: .up. (13) is more than .links. (12)' 'pcie="x"|gpus\[0\]: .pcie. must be an object' \
    'pcie.width=-2|pcie: .width. must be >= 0' 'numa=-7|gpus\[0\]: .numa. must be >= 0' 'sm=1.5|gpus\[0\]: .sm. must be an integer' \
    'nvlink.peers=[{"kind":"x"}]|peers\[0\]: .kind. must be gpu, nvswitch or unknown'; do
    edit=${c%%|*} want=${c#*|}
    python3 - "$CC_SRCDIR/topologies/dgx-a100.json" "$T/g.json" "$edit" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
g = t["nodes"][0]["gpus"][0]
key, val = sys.argv[3].split("=", 1)
*path, last = key.split(".")
for k in path:
    g = g[k]
g[last] = json.loads(val)
json.dump(t, open(sys.argv[2], "w"))
PY
    "$CCBENCH" probe --topology "$T/g.json" >"$T/bad.out" 2>&1; rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$T/bad.out")" -eq 1 ] && grep -q "$want" "$T/bad.out"
    ok $? "a GPU's $edit: exit 2, one line naming it" "rc=$rc $(cat "$T/bad.out")"
done
"$CCBENCH" probe --topology "$T/nonexistent.json" >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ]; ok $? "missing topology: exit 2" "rc=$rc $(cat "$T/bad.out")"
"$CCBENCH" probe --bogus >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ]; ok $? "unknown option: exit 2" "rc=$rc $(cat "$T/bad.out")"
uses_mpi
"$CCBENCH" probe --hwloc-xml "$S/bad/malformed.json" --json "$T/x.json" >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "cannot probe node '.*': cannot read hwloc XML '$S/bad/malformed.json'" "$T/bad.out"
ok $? "unreadable hwloc XML: exit 2, the node and the file named" "rc=$rc $(cat "$T/bad.out")"
"$CCBENCH" probe --topology "$CC_SRCDIR/topologies/dgx-h100.json" --nccl-topo "$T/n.xml" >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "cannot be combined with --nccl-topo" "$T/bad.out"
ok $? "--topology with --nccl-topo: exit 2" "rc=$rc $(cat "$T/bad.out")"
# an --nccl-topo file that cannot be written: the topology is saved all the same, the error
# names the file and the reason, exit 2 (an output that cannot be written, as for bench)
"$CCBENCH" probe --hwloc-xml "$S/dgx-like.xml" --sysfs-root "$S/sysfs" --no-gpu-libs -q \
    --json "$T/keep.json" --nccl-topo /dev/full >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "cannot write NCCL topology '/dev/full': No space left on device" "$T/bad.out" &&
    "$CCBENCH" probe --topology "$T/keep.json" -q && ! grep -q nccl_topo_error "$T/keep.json"
ok $? "--nccl-topo unwritable: topology kept, XML error named, exit 2" "rc=$rc $(cat "$T/bad.out")"
"$CCBENCH" probe --nccl-topo '' >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q -- "--nccl-topo needs a file name" "$T/bad.out"
ok $? "--nccl-topo '': exit 2" "rc=$rc $(cat "$T/bad.out")"
"$CCBENCH" probe --hwloc-xml "$S/dgx-like.xml" --sysfs-root "$S/sysfs" --no-gpu-libs -q \
    --json /dev/full >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "cannot write topology '/dev/full': No space left on device" "$T/bad.out"
ok $? "unwritable --json: exit 2, the reason given" "rc=$rc $(cat "$T/bad.out")"
if command -v mpirun >/dev/null 2>&1; then
    timeout 120 $CC_MPIRUN -np 2 "$CCBENCH" probe --bogus >"$T/bad.out" 2>&1; rc=$?
    [ $rc -eq 2 ] && [ "$(grep -c "unknown option '--bogus'" "$T/bad.out")" -eq 1 ]
    ok $? "a bad option under mpirun: said once (exit $rc)" "$(cat "$T/bad.out")"
    timeout 120 $CC_MPIRUN -np 2 "$CCBENCH" probe --help >"$T/h.out" 2>&1; rc=$?
    [ $rc -eq 0 ] && [ "$(grep -c '^usage:' "$T/h.out")" -eq 1 ]
    ok $? "--help under mpirun: printed once (exit $rc)" "$(grep usage "$T/h.out")"
else
    skip "a bad option under mpirun" "no mpirun"
    skip "--help under mpirun" "no mpirun"
fi
"$CCBENCH" probe --no-gpu-libs --out /proc/nonexistent/x >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "cannot create results directory '/proc/nonexistent/x'" "$T/bad.out"
ok $? "unwritable results directory: exit 2, named" "rc=$rc $(cat "$T/bad.out")"
# --topology with options only a probe uses; --json and --nccl-topo on one file; a long path
"$CCBENCH" probe --topology "$T/keep.json" --json "$T/never.json" >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ] && [ ! -e "$T/never.json" ] && grep -q -- "--json has nothing to do then" "$T/bad.out"
ok $? "--topology with --json: exit 2, nothing written" "rc=$rc $(cat "$T/bad.out")"
"$CCBENCH" probe --hwloc-xml "$S/dgx-like.xml" --sysfs-root "$S/sysfs" --no-gpu-libs -q \
    --json "$T/one.out" --nccl-topo "$T/one.out" >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "name the same file" "$T/bad.out"
ok $? "--json and --nccl-topo naming one file: exit 2" "rc=$rc $(cat "$T/bad.out")"
# the same file by another spelling, existing or not, or once %h is expanded: refused before
# anything is written (the XML used to be written, then overwritten by the topology, exit 0)
same() { # same NAME JSON NCCL_TOPO [probe options]: exit 2, one line, neither file written
    name=$1 j=$2 x=$3
    shift 3
    "$CCBENCH" probe --no-gpu-libs -q "$@" --json "$j" --nccl-topo "$x" >"$T/bad.out" 2>&1; rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$T/bad.out")" -eq 1 ] && [ ! -e "$j" ] &&
        grep -q "^ccbench .*error: --json and --nccl-topo name the same file '/.*'$" "$T/bad.out"
    ok $? "$name: exit 2, one line, nothing written" "rc=$rc $(cat "$T/bad.out"; ls "$T")"
}
same "--json F --nccl-topo DIR/./F, F not there" "$T/new.json" "$T/./new.json"
same "--nccl-topo with %h expanding to the --json file" "$T/t-$(hostname).json" "$T/t-%h.json"
same "%h named by an --hwloc-xml file" "$T/n-dgx-like.xml" "$T/n-%h.xml" \
    --hwloc-xml "$S/dgx-like.xml" --sysfs-root "$S/sysfs"
mkdir "$T/real" && ln -s "$T/real" "$T/link"
same "a directory reached through a link" "$T/link/s.json" "$T/real/../real/s.json"
ln -s "$T/target.json" "$T/dangling.json"
same "--json a link to the --nccl-topo file, which does not exist yet" "$T/dangling.json" "$T/target.json"
printf 'kept\n' >"$T/real/kept.json"
"$CCBENCH" probe --no-gpu-libs -q --json "$T/link/kept.json" --nccl-topo "$T/real/kept.json" >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ] && [ "$(cat "$T/real/kept.json")" = kept ]
ok $? "an existing file named both ways is left as it was" "rc=$rc $(cat "$T/bad.out")"
if command -v mpirun >/dev/null 2>&1; then
    timeout 120 $CC_MPIRUN -np 2 "$CCBENCH" probe --no-gpu-libs -q --json "$T/mp.json" \
        --nccl-topo "$T/./mp.json" >"$T/bad.out" 2>&1; rc=$?
    [ $rc -ne 0 ] && [ ! -e "$T/mp.json" ] && [ "$(grep -c '^ccbench.*error:' "$T/bad.out")" -eq 1 ]
    ok $? "under mpirun: every rank stops, one line, nothing written (rc $rc)" "$(cat "$T/bad.out")"
else
    skip "under mpirun: the same file refused" "no mpirun"
fi
# --json /dev/stdout into a redirected file: the topology and the summary share stdout
"$CCBENCH" probe --hwloc-xml "$S/dgx-like.xml" --sysfs-root "$S/sysfs" --no-gpu-libs \
    --json /dev/stdout >"$T/stdout.txt" 2>/dev/null; rc=$?
[ $rc -eq 0 ] && grep -q '^  "schema": "ccbench.topology.v1",$' "$T/stdout.txt" &&
    grep -q '^node dgx-like' "$T/stdout.txt"
ok $? "--json /dev/stdout redirected to a file: topology and summary both kept (rc $rc)" "$(head -3 "$T/stdout.txt")"
# other names of the file: hard links see the topology, a link not yet pointing at a file
# creates its target and stays a link, a loop of links is refused, stdout by another name
# keeps the summary after the topology, the group of a replaced file is kept
PX="--hwloc-xml $S/dgx-like.xml --sysfs-root $S/sysfs --no-gpu-libs"
printf 'old\n' >"$T/h1" && ln "$T/h1" "$T/h2"
"$CCBENCH" probe $PX -q --json "$T/h1" >/dev/null 2>&1 && grep -q '"schema"' "$T/h2"
ok $? "--json FILE with a hard link: both names hold the topology"
ln -s "$T/tgt.json" "$T/dl"
"$CCBENCH" probe $PX -q --json "$T/dl" >/dev/null 2>&1 && [ -L "$T/dl" ] && grep -q '"schema"' "$T/tgt.json"
ok $? "--json LINK to a file not there yet: the target written, the link kept"
ln -s "$T/loopb" "$T/loopa" && ln -s "$T/loopa" "$T/loopb"
"$CCBENCH" probe $PX -q --json "$T/loopa" >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ] && [ -L "$T/loopa" ] && grep -q "symbolic links" "$T/bad.out"
ok $? "--json on a loop of links: refused, the links left (rc $rc)" "$(cat "$T/bad.out")"
"$CCBENCH" probe $PX --json /dev/fd/1 >"$T/fd1.txt" 2>/dev/null; rc=$?
[ $rc -eq 0 ] && grep -q '^  "schema": "ccbench.topology.v1",$' "$T/fd1.txt" && grep -q '^node dgx-like' "$T/fd1.txt"
ok $? "--json /dev/fd/1 redirected to a file: topology and summary both kept (rc $rc)"
if [ "$(id -u)" = 0 ] && getent group nogroup >/dev/null 2>&1; then
    printf 'x\n' >"$T/grp.json" && chgrp nogroup "$T/grp.json" && chmod 664 "$T/grp.json"
    "$CCBENCH" probe $PX -q --json "$T/grp.json" >/dev/null 2>&1 &&
        [ "$(stat -c '%G %a' "$T/grp.json")" = "nogroup 664" ] && grep -q '"schema"' "$T/grp.json"
    ok $? "a replaced file keeps its group and mode"
else
    skip "a replaced file keeps its group and mode" "needs root and the group nogroup"
fi
# as user nobody, with a copy of ccbench and the fixtures it can reach (a build under /root
# is out of its reach)
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && chmod 755 "$T" &&
    cp -r "$S/dgx-like.xml" "$S/sysfs" "$CCBENCH" "$T/" && chmod -R a+rX "$T" &&
    as_nobody "$T/ccbench" --version >/dev/null 2>&1; then
    # another user's file in a sticky directory: written in place (a new file could not be
    # renamed over it); a file this user may not write: refused and left as it was
    mkdir "$T/sticky" && chmod 1777 "$T/sticky" &&
        printf 'old\n' >"$T/sticky/s.json" && chmod 666 "$T/sticky/s.json"
    as_nobody "$T/ccbench" probe --hwloc-xml "$T/dgx-like.xml" \
        --sysfs-root "$T/sysfs" --no-gpu-libs -q --json "$T/sticky/s.json" >"$T/bad.out" 2>&1; rc=$?
    [ $rc -eq 0 ] && grep -q '"schema": "ccbench.topology.v1"' "$T/sticky/s.json" &&
        [ "$(stat -c %U "$T/sticky/s.json")" = root ]
    ok $? "root's file in a sticky directory, written by nobody: in place, owner kept (rc $rc)" "$(cat "$T/bad.out")"
    mkdir "$T/wp" && chmod 777 "$T/wp" && printf 'keep\n' >"$T/wp/p.json" &&
        chown nobody "$T/wp/p.json" && chmod 444 "$T/wp/p.json"
    as_nobody "$T/ccbench" probe --hwloc-xml "$T/dgx-like.xml" \
        --sysfs-root "$T/sysfs" --no-gpu-libs -q --json "$T/wp/p.json" >"$T/bad.out" 2>&1; rc=$?
    [ $rc -eq 2 ] && [ "$(cat "$T/wp/p.json")" = keep ] && grep -q "Permission denied" "$T/bad.out"
    ok $? "a read-only file of one's own: refused, left as it was (rc $rc)" "$(cat "$T/bad.out")"
else
    skip "root's file in a sticky directory, written by nobody" "needs root and setpriv"
    skip "a read-only file of one's own" "needs root and setpriv"
fi
long=$(printf 'd%.0s' $(seq 1 4100))
"$CCBENCH" probe --no-gpu-libs -q --json "$T/$long.json" >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q -- "--json: a path of .* characters is longer than" "$T/bad.out"
ok $? "a --json path too long: exit 2, said so (no file under a cut name)" "rc=$rc $(head -c 200 "$T/bad.out")"
"$CCBENCH" probe --no-gpu-libs -q --hwloc-xml "$T/nonexistent.xml" >"$T/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "cannot read hwloc XML '$T/nonexistent.xml': No such file or directory" "$T/bad.out"
ok $? "a missing --hwloc-xml: exit 2 with the reason" "rc=$rc $(cat "$T/bad.out")"
# with RDMA NICs up, a 1 GbE management port is not what a NIC is expected to move; with
# the RDMA port down (as the fixture has mlx5_3), the Ethernet port that is up is
Y=$T/sysfs-roce-up
cp -R "$S/sysfs" "$Y" && chmod -R u+w "$Y" && printf '4: ACTIVE\n' >"$Y/sys/class/infiniband/mlx5_3/ports/1/state"
"$CCBENCH" probe --hwloc-xml "$S/dual-socket.xml" --sysfs-root "$Y" --no-gpu-libs -q \
    --json "$T/ds.json" >"$T/bad.out" 2>&1
grep -q '"nic_GBps": 12.5' "$T/ds.json"
ok $? "expected.nic_GBps from the RoCE NIC up (12.5), not the management port" "$(grep nic_GBps "$T/ds.json")"
"$CCBENCH" probe --hwloc-xml "$S/dual-socket.xml" --sysfs-root "$S/sysfs" --no-gpu-libs -q \
    --json "$T/ds-down.json" >"$T/bad.out" 2>&1
grep -q '"nic_GBps": 0.125' "$T/ds-down.json"
ok $? "expected.nic_GBps with the RoCE port down: the Ethernet port up (0.125)" "$(grep nic_GBps "$T/ds-down.json")"
# text from the machine is escaped in NCCL's XML (a vendor string with & " <)
sed 's/value="GenuineIntel"/value="Intel \&amp; \&quot;Co\&lt;"/' "$S/dgx-like.xml" >"$T/esc.xml"
"$CCBENCH" probe --hwloc-xml "$T/esc.xml" --sysfs-root "$S/sysfs" --no-gpu-libs -q \
    --json "$T/esc.json" --nccl-topo "$T/esc-%h.xml" >"$T/bad.out" 2>&1
grep -q 'vendor="Intel &amp; &quot;Co&lt;"' "$T"/esc-*.xml
ok $? "NCCL XML attributes escaped" "$(grep -o 'vendor="[^"]*"' "$T"/esc-*.xml | head -1)"
# two probes saving into one directory in the same second each keep their file
"$CCBENCH" probe --hwloc-xml "$S/dgx-like.xml" --sysfs-root "$S/sysfs" --no-gpu-libs -q --out "$T/two" --name first &&
    "$CCBENCH" probe --hwloc-xml "$S/dgx-like.xml" --sysfs-root "$S/sysfs" --no-gpu-libs -q --out "$T/two" --name second
ok $? "two probes into one --out directory"
[ "$(ls "$T/two" | wc -l)" -eq 2 ] && grep -q '"name": "first"' "$T"/two/*.json && grep -q '"name": "second"' "$T"/two/*.json
ok $? "each keeps its own file" "$(ls "$T/two")"
tap_done
