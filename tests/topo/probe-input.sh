#!/bin/sh
# probe-input.sh - `ccbench probe` on awkward input, through edited copies of the hwloc XML
# fixtures: text that is not valid UTF-8 or is cut inside a character, objects hwloc left
# unnamed, a cpuset that allows part of the machine, bus ids against NUMA order, an export
# probed without a sysfs tree, an SR-IOV VF, facts hwloc does not give (unknown is -1); a
# topology that names nodes a probe could not describe; outputs that cannot be written whole. Every node is described whole or fails
# with a message; none is dropped or shrunk in silence.
. "$CC_SRCDIR/tests/tap.sh"
uses_mpi
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
S="$CC_SRCDIR/tests/topo"
# probe FIXTURE NAME [ccbench options]: probe an edited fixture into $T/NAME.json, keep the
# exit status in $rc and the output in $T/NAME.out
probe() {
    x=$1 n=$2
    shift 2
    "$CCBENCH" probe --hwloc-xml "$x" --sysfs-root "$S/sysfs" --no-gpu-libs -q --json "$T/$n.json" \
        "$@" >"$T/$n.out" 2>&1
    rc=$?
}
# summary NAME: the saved topology summarized into $T/NAME.sum
summary() { "$CCBENCH" probe --topology "$T/$1.json" >"$T/$1.sum" 2>&1; }

# a GPU model of 94 bytes and a 2-byte character: the 96-byte field cut it in two (the GPU
# was dropped from the JSON, then the probe crashed)
a94=$(printf 'A%.0s' $(seq 1 94))
sed "0,/value=\"NVIDIA H100 80GB HBM3\"/s//value=\"${a94}é\"/" "$S/dgx-like.xml" >"$T/u8.xml"
probe "$T/u8.xml" u8; summary u8
[ $rc -eq 0 ] && grep -q '^  GPUs: 4$' "$T/u8.sum" && grep -q "GPU0 0000:03:00.0 $a94," "$T/u8.sum"
ok $? "a GPU model cut at its last whole character: 4 GPUs, exit 0" "rc=$rc $(cat "$T/u8.out" "$T/u8.sum" | head -12)"

# a host name of 72 bytes ending in a 2-byte character (the buffer holds 71 and a NUL)
h62=$(printf 'h%.0s' $(seq 1 70))
sed "s/value=\"dgx-like\"/value=\"${h62}é\"/" "$S/dgx-like.xml" >"$T/host.xml"
probe "$T/host.xml" host
[ $rc -eq 0 ] && grep -q "\"hostname\": \"$h62\"" "$T/host.json"
ok $? "a long host name cut at its last whole character, exit 0" "rc=$rc $(cat "$T/host.out")"

# an RDMA device hwloc did not name: still a NIC
sed 's/ name="mlx5_0" osdev_type="3"/ osdev_type="3"/' "$S/dgx-like.xml" >"$T/noname.xml"
probe "$T/noname.xml" noname; summary noname
[ $rc -eq 0 ] && grep -q '^  NICs: 3$' "$T/noname.sum" && grep -q '^    ?  *ib   0000:04:00.0' "$T/noname.sum"
ok $? "an unnamed RDMA device is a NIC named '?', exit 0" "rc=$rc $(cat "$T/noname.out" "$T/noname.sum" | head -20)"

# a Latin-1 CPU model (hwloc's own XML reader takes it as it is): '?' for the byte
sed "s/value=\"Intel(R) Xeon(R) Platinum 8480C\"/value=\"Intel$(printf '\256') Xeon\"/" "$S/dgx-like.xml" >"$T/l1.xml"
HWLOC_LIBXML_IMPORT=0 probe "$T/l1.xml" l1
[ $rc -eq 0 ] && grep -q '"model": "Intel? Xeon"' "$T/l1.json" && grep -q '"cores": 4' "$T/l1.json"
ok $? "a Latin-1 CPU model: the cpu object kept, the byte as '?'" "rc=$rc $(cat "$T/l1.out"; grep -A3 '"cpu"' "$T/l1.json")"

# a Latin-1 CPU vendor in the NCCL XML: valid UTF-8 there too
sed "s/value=\"GenuineIntel\"/value=\"Genuine$(printf '\256')Intel\"/" "$S/dgx-like.xml" >"$T/l1v.xml"
HWLOC_LIBXML_IMPORT=0 probe "$T/l1v.xml" l1v --nccl-topo "$T/l1v-nccl.xml"
[ $rc -eq 0 ] && grep -q 'vendor="Genuine?Intel"' "$T/l1v-nccl.xml" && grep -q '"vendor": "Genuine?Intel"' "$T/l1v.json"
ok $? "a Latin-1 CPU vendor: '?' for the byte in the JSON and the NCCL XML" "rc=$rc $(cat "$T/l1v.out"; grep -m1 '<cpu' "$T/l1v-nccl.xml")"

# an --hwloc-xml path that is not UTF-8: the node fails with its message, not in silence
bad="$T/$(printf 'x\377').xml"
"$CCBENCH" probe --hwloc-xml "$bad" --no-gpu-libs -q --json "$T/badpath.json" >"$T/badpath.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "cannot probe node '.*': cannot read hwloc XML '.*': No such file or directory" "$T/badpath.out"
ok $? "a missing --hwloc-xml whose name is not UTF-8: exit 2, the reason given" "rc=$rc $(cat "$T/badpath.out")"

# a cgroup / Slurm cpuset: the export allows 2 of 4 PUs and NUMA node 0 of 2; the probe still
# describes the whole machine (cores, NUMA nodes, memory, device NUMA, path classes)
probe "$S/dgx-like.xml" whole; summary whole
sed '0,/allowed_cpuset="0x0000000f"/s//allowed_cpuset="0x00000003"/; 0,/allowed_nodeset="0x00000003"/s//allowed_nodeset="0x00000001"/' \
    "$S/dgx-like.xml" >"$T/cg.xml"
grep -q 'allowed_cpuset="0x00000003".*allowed_nodeset="0x00000001"' "$T/cg.xml"
ok $? "fixture restricted to PUs 0-1 and NUMA node 0" "$(grep -m1 Machine "$T/cg.xml")"
probe "$T/cg.xml" cg; summary cg
[ $rc -eq 0 ] && grep -q ', 4 cores, 4 PUs, 2 NUMA node(s), 1024.0 GiB$' "$T/cg.sum" &&
    grep -q '^    GPU3 0000:88:00.0 .*, NUMA 1, nearest NIC mlx5_1 (PHB)$' "$T/cg.sum"
ok $? "a restricted cpuset: the whole machine described" "rc=$rc $(head -12 "$T/cg.sum")"
sed 1,3d "$T/cg.sum" >"$T/cg.tail"; sed 1,3d "$T/whole.sum" >"$T/whole.tail"
cmp -s "$T/cg.tail" "$T/whole.tail"; ok $? "a restricted cpuset: the same summary as unrestricted" \
    "$(diff "$T/cg.tail" "$T/whole.tail")"

# bus ids against the tree's order: the first NUMA node's devices on buses 0x8x, the second's
# on 0x0x. GPUs and NICs are numbered by bus id (nvidia-smi, CUDA_DEVICE_ORDER=PCI_BUS_ID),
# and the path matrices follow that order
sed -e 's/\(busid="0000:\)0/\1@/' -e 's/\(busid="0000:\)8/\10/' -e 's/\(busid="0000:\)@/\18/' \
    -e 's/\(bridge_pci="0000:\[\)0\(.-\)0/\1@\2@/' -e 's/\(bridge_pci="0000:\[\)8\(.-\)8/\10\20/' \
    -e 's/\(bridge_pci="0000:\[\)@\(.-\)@/\18\28/' "$S/dgx-like.xml" >"$T/swap.xml"
probe "$T/swap.xml" swap; summary swap
[ $rc -eq 0 ] && [ "$(sed -n 's/^    GPU\([0-9]\) \([0-9a-f:.]*\) .*/\1 \2/p' "$T/swap.sum" | tr '\n' ' ')" = \
    "0 0000:03:00.0 1 0000:08:00.0 2 0000:83:00.0 3 0000:87:00.0 " ] &&
    [ "$(awk '/^          "index": / { i = $2 } /^          "pci_bus_id": / && i != "" { print i $2; i = "" }' \
        "$T/swap.json" | tr -d '"' | tr '\n' ' ')" = "0,0000:03:00.0, 1,0000:08:00.0, 2,0000:83:00.0, 3,0000:87:00.0, " ]
ok $? "GPUs numbered in PCI bus id order" "rc=$rc $(grep '^    GPU' "$T/swap.sum")"
[ "$(sed -n 's/^    \(mlx5_[0-9]\) .* \(0000:[0-9a-f:.]*\) .*/\1 \2/p' "$T/swap.sum" | tr '\n' ' ')" = \
    "mlx5_1 0000:04:00.0 mlx5_2 0000:09:00.0 mlx5_0 0000:84:00.0 " ]
ok $? "NICs listed in PCI bus id order" "$(grep '^    mlx5' "$T/swap.sum")"
grep -q '^  GPU0           X     PHB     SYS     SYS     PIX     PHB     SYS  1$' "$T/swap.sum" &&
    grep -q '^  GPU3         SYS     SYS     NVL       X     SYS     SYS     PXB  0$' "$T/swap.sum"
ok $? "path matrices in the same order" "$(grep -A5 affinity "$T/swap.sum")"

# --hwloc-xml without --sysfs-root: nothing comes from this machine's /sys (it has at least
# /sys/class/net/lo): no netdevs, NIC ports and PCIe links unknown
"$CCBENCH" probe --hwloc-xml "$S/dgx-like.xml" --no-gpu-libs -q --json "$T/nosys.json" >"$T/nosys.out" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q '"netdevs": \[\]' "$T/nosys.json" && [ "$(grep -c '"ports": \[\]' "$T/nosys.json")" = 3 ] &&
    [ "$(grep -c '"gen": -1' "$T/nosys.json")" = 4 ] && ! grep -q '"rate_gbps": [1-9]' "$T/nosys.json"
ok $? "--hwloc-xml without --sysfs-root: no sysfs read, its values unknown" \
    "rc=$rc $(cat "$T/nosys.out"; grep -A3 '"netdevs"\|"gen"' "$T/nosys.json" | head -20)"

# a saved topology with a node that could not be probed: shown, and layout warns
sed '2a\  "missing": [{"hostname": "dgx-9", "reason": "cannot load topology"}],' \
    "$CC_SRCDIR/topologies/dgx-a100-2.json" >"$T/missing.json"
"$CCBENCH" probe --topology "$T/missing.json" >"$T/missing.out" 2>&1 &&
    grep -q '^# not probed: dgx-9: cannot load topology$' "$T/missing.out"
ok $? "--topology: a node listed as missing is shown" "$(head -5 "$T/missing.out")"
"$CCBENCH" layout -m megatron-1.7b --topology "$T/missing.json" >"$T/lay.out" 2>"$T/lay.err" &&
    grep -q "warning: topology '$T/missing.json': 1 node(s) could not be probed" "$T/lay.err"
ok $? "layout --topology: warns of the node missing" "$(cat "$T/lay.err")"

# an SR-IOV virtual function (mlx5_2 at 0000:89:00.0 has a physfn): no NIC of its own, in
# the JSON as in the NCCL XML
Y=$T/sysfs-vf
cp -R "$S/sysfs" "$Y" && chmod -R u+w "$Y" && mkdir -p "$Y/sys/bus/pci/devices/0000:89:00.0/physfn" &&
    printf '0x020700\n' >"$Y/sys/bus/pci/devices/0000:89:00.0/physfn/class"
"$CCBENCH" probe --hwloc-xml "$S/dgx-like.xml" --sysfs-root "$Y" --no-gpu-libs -q --json "$T/vf.json" \
    --nccl-topo "$T/vf.xml" >"$T/vf.out" 2>&1; rc=$?
summary vf
[ $rc -eq 0 ] && grep -q '^  NICs: 2$' "$T/vf.sum" && ! grep -q mlx5_2 "$T/vf.sum" "$T/vf.xml" &&
    grep -q '^  GPU0 .*PIX     SYS  0$' "$T/vf.sum" && grep -q 'netdevs: .*eth2(' "$T/vf.sum"
ok $? "an SR-IOV VF is no NIC (JSON, matrix, NCCL XML); its interface stays a netdev" \
    "rc=$rc $(cat "$T/vf.out"; sed -n '/NICs/,$p' "$T/vf.sum")"
# the same VF with a physfn link (as sysfs has it): its PF 0000:84:00.0 is mlx5_1, a NIC of
# the node, so the VF is a slice of it; a PF the node does not list as a NIC (a container given
# only VFs: here the bridge 0000:01:00.0) leaves the VF as a NIC of its own
for pf in 0000:84:00.0 0000:01:00.0; do
    Y=$T/sysfs-vf-$pf
    cp -R "$S/sysfs" "$Y" && chmod -R u+w "$Y" && mkdir -p "$Y/sys/bus/pci/devices/$pf" &&
        printf '0x020700\n' >"$Y/sys/bus/pci/devices/$pf/class" &&
        mkdir -p "$Y/sys/bus/pci/devices/0000:89:00.0" &&
        ln -s "../$pf" "$Y/sys/bus/pci/devices/0000:89:00.0/physfn"
    "$CCBENCH" probe --hwloc-xml "$S/dgx-like.xml" --sysfs-root "$Y" --no-gpu-libs -q \
        --json "$T/vf-$pf.json" >"$T/vf.out" 2>&1; rc=$?
    n=$(grep -c '"name": "mlx5_[0-9]"' "$T/vf-$pf.json")
    if [ $pf = 0000:84:00.0 ]; then want=2; else want=3; fi
    [ $rc -eq 0 ] && [ "$n" = $want ]
    ok $? "a VF whose PF is $pf: $want RDMA NICs (got $n)" "$(cat "$T/vf.out")"
done

# a NUMA node with NICs but no GPU (dual-socket.xml with its second GPU made an NVMe device):
# NCCL completes a <cpu>'s identity only from a GPU, so that <cpu> is written only when the
# identity is whole; without the CPU vendor it is left out (NCCL finds the net itself)
sed 's/pci_busid="0000:98:00.0" pci_type="0302 /pci_busid="0000:98:00.0" pci_type="0108 /' \
    "$S/dual-socket.xml" >"$T/nicnuma.xml"
sed '/name="CPUVendor"/d' "$T/nicnuma.xml" >"$T/nicnuma-novendor.xml"
for v in nicnuma nicnuma-novendor; do
    "$CCBENCH" probe --hwloc-xml "$T/$v.xml" --sysfs-root "$S/sysfs" --no-gpu-libs -q \
        --json "$T/$v.json" --nccl-topo "$T/$v-nccl.xml" >"$T/$v.out" 2>&1 || echo "probe $v failed" >>"$T/$v.out"
done
grep -q '<cpu numaid="1" arch="x86_64" vendor="AuthenticAMD"' "$T/nicnuma-nccl.xml" &&
    grep -q '<net name="mlx5_3"/>' "$T/nicnuma-nccl.xml" &&
    ! grep -q 'numaid="1"' "$T/nicnuma-novendor-nccl.xml" && ! grep -q 'mlx5_3' "$T/nicnuma-novendor-nccl.xml" &&
    grep -q '<cpu numaid="0" arch="x86_64" familyid="25"' "$T/nicnuma-novendor-nccl.xml"
ok $? "a <cpu> with nets but no GPU: written with a whole CPU identity, left out without the vendor" \
    "$(cat "$T/nicnuma.out" "$T/nicnuma-novendor.out" "$T/nicnuma-novendor-nccl.xml")"

# what hwloc does not say is -1, not 0: no NVLink matrix (and no NVML) leaves NVLinks unknown,
# no CPU family or model number, no caches; a known zero stays 0 (GPU2 in the matrix, no link)
sed -e '/<distances2/,/<\/distances2>/d' -e '/name="CPUFamilyNumber"/d' -e '/name="CPUModelNumber"/d' \
    "$S/dgx-like.xml" >"$T/unknown.xml"
probe "$T/unknown.xml" unknown --nccl-topo "$T/unknown-nccl.xml"; summary unknown
[ $rc -eq 0 ] && [ "$(grep -c '"links": -1,' "$T/unknown.json")" = 4 ] &&
    [ "$(grep -c '"up": -1,' "$T/unknown.json")" = 4 ] && grep -q '"family": -1,' "$T/unknown.json" &&
    grep -q '"model_number": -1,' "$T/unknown.json" && [ "$(grep -c '"bytes": -1,' "$T/unknown.json")" = 2 ]
ok $? "unknown NVLinks, CPU family/model and cache sizes are -1" "rc=$rc $(cat "$T/unknown.out"; grep -A3 '"nvlink"\|"family"\|"l[23]"' "$T/unknown.json" | head -30)"
grep -q '^    GPU0 0000:03:00.0 NVIDIA H100 80GB HBM3, 79 GiB, NUMA 0, PCIe Gen5 x16, nearest NIC mlx5_0 (PIX)$' "$T/unknown.sum" &&
    ! grep -q 'familyid\|modelid\|<nvlink' "$T/unknown-nccl.xml" && grep -q '<cpu numaid="0" arch="x86_64" vendor="GenuineIntel">' "$T/unknown-nccl.xml"
ok $? "unknowns: the summary and the NCCL XML leave them out" "$(grep GPU0 "$T/unknown.sum"; grep '<cpu' "$T/unknown-nccl.xml")"
probe "$S/dgx-like.xml" known
[ "$(grep -c '"links": 0,' "$T/known.json")" = 2 ] && grep -q '"family": 6,' "$T/known.json"
ok $? "a known zero stays 0 (GPUs in the NVLink matrix without a link)" "$(grep -A2 '"nvlink"' "$T/known.json")"

# an NCCL XML the writer refuses (33 more GPUs right under one host bridge: more than 32
# children under one <cpu>) leaves no file, and an old one as it was; no temporary file stays
i=0
while [ $i -lt 33 ]; do
    printf '        <object type="PCIDev" gp_index="%d" pci_busid="0000:80:%02x.0" pci_type="0302 [10de:2330] [10de:16c1] 00"/>\n' \
        $((1000 + i)) $((i + 4))
    i=$((i + 1))
done >"$T/gpus.txt"
sed '/bridge_pci="0000:\[80-8f\]"/r '"$T/gpus.txt" "$S/dgx-like.xml" >"$T/wide.xml"
mkdir "$T/out" && echo old >"$T/out/old.xml"
probe "$T/wide.xml" wide1 --nccl-topo "$T/out/new.xml"; rc1=$rc
probe "$T/wide.xml" wide2 --nccl-topo "$T/out/old.xml"
[ $rc1 -eq 2 ] && [ $rc -eq 2 ] && grep -q "36 children under one" "$T/wide2.out" &&
    [ "$(ls -A "$T/out")" = old.xml ] && [ "$(cat "$T/out/old.xml")" = old ]
ok $? "a refused NCCL XML: no file written, an old one kept, no temporary file" \
    "rc=$rc1,$rc $(cat "$T/wide2.out"; ls -la "$T/out")"

# a full disk (a 64 kB tmpfs, filled): --json and --nccl-topo keep the old files whole, exit 2
cat >"$T/full.sh" <<'EOS'
# full.sh DIR CCBENCH SRCDIR, in a mount namespace of its own
mount -t tmpfs -o size=64k none "$1" || exit 77
echo old >"$1/old.json" && echo old >"$1/old.xml" && dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null
"$2" probe --hwloc-xml "$3/dgx-like.xml" --sysfs-root "$3/sysfs" --no-gpu-libs -q \
    --json "$1/old.json" --nccl-topo "$1/old.xml"
echo "rc=$?"
ls -A "$1" | tr '\n' ' '; echo
cat "$1/old.json" "$1/old.xml"
EOS
mkdir "$T/full"
urc=77
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1; then
    unshare -m sh "$T/full.sh" "$T/full" "$CCBENCH" "$S" >"$T/full.out" 2>&1; urc=$?
fi
if [ $urc -eq 77 ] || grep -q '^unshare: ' "$T/full.out"; then
    skip "a full disk: old files kept whole" "needs root, unshare -m and tmpfs"
else
    grep -q '^rc=2$' "$T/full.out" && grep -q "cannot write topology '$T/full/old.json': No space left on device" "$T/full.out" &&
        grep -q '^fill old.json old.xml $' "$T/full.out" && [ "$(grep -c '^old$' "$T/full.out")" = 2 ]
    ok $? "a full disk: --json and --nccl-topo fail, the old files kept whole, exit 2" "$(cat "$T/full.out")"
fi
# NVLinks counted from hwloc's matrix at the rate per link of the hwloc that made it: 2.9.0
# wrote 50,000 MB/s per NVLink 3 or 4 link (others 25,000), and no GPU has more than 18 links
# (the H100 fixture's 18 links read as 36 at 900,000 MB/s, its expected rate as 900 GB/s)
sed 's/<info name="HostName" value="dgx-like"\/>/&<info name="hwlocVersion" value="2.9.0"\/>/' \
    "$S/dgx-like.xml" >"$T/h290.xml"
probe "$T/h290.xml" h290 -q; summary h290
[ $rc -eq 0 ] && grep -q '^    GPU0 .*NVLink 6/6 up' "$T/h290.sum"
ok $? "hwloc 2.9.0's matrix: 300,000 MB/s between two GPUs is 6 links" "$(grep -E 'GPU0|expected' "$T/h290.sum")"
probe "$S/dgx-like.xml" h2x -q; summary h2x
[ $rc -eq 0 ] && grep -q '^    GPU0 .*NVLink 12/12 up' "$T/h2x.sum"
ok $? "another hwloc's matrix: the same 300,000 MB/s is 12 links" "$(grep -E 'GPU0' "$T/h2x.sum")"
sed 's/ 450000/ 900000/g' "$S/nvswitch.xml" >"$T/nv9.xml"
probe "$T/nv9.xml" nv9 -q; summary nv9
[ $rc -eq 0 ] && [ "$(grep -c 'NVLink 18/18 up' "$T/nv9.sum")" -eq 4 ] && grep -q 'nvlink_GBps_per_gpu=900$' "$T/nv9.sum"
ok $? "900,000 MB/s to the NVSwitches: 18 links of 50 GB/s (no GPU has 36), 900 GB/s expected" "$(grep -E 'GPU0|expected' "$T/nv9.sum")"
# a package with HBM beside its DRAM (a memory-only NUMA node): its devices sit under the
# DRAM node, not under the machine's first node (an export gives no sysfs numa_node)
python3 - "$S/dgx-like.xml" "$T/hbm.xml" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
s = s.replace('nodeset="0x00000003"', 'nodeset="0x00000007"').replace('nodeset="0x00000002"', 'nodeset="0x00000006"')
m = re.search(r'( *)<object type="NUMANode" os_index="1"[^\n]*\n', s)
s = s[:m.end()] + m.group(1) + '<object type="NUMANode" os_index="2" cpuset="0x0000000c" complete_cpuset="0x0000000c" nodeset="0x00000004" complete_nodeset="0x00000004" gp_index="900" local_memory="68719476736" subtype="HBM"/>\n' + s[m.end():]
open(sys.argv[2], "w").write(s)
PY
"$CCBENCH" probe --hwloc-xml "$T/hbm.xml" --no-gpu-libs -q --json "$T/hbm.json" --nccl-topo "$T/hbm.nccl.xml" >"$T/hbm.out" 2>&1
rc=$?
[ $rc -eq 0 ] && awk '/<cpu numaid="0"/ { c = 0 } /<cpu numaid="1"/ { c = 1 } /busid="0000:8[38]:00.0"/ { print c }' "$T/hbm.nccl.xml" | sort -u | grep -qx 1 &&
    python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["nodes"][0]; g=[x["numa"] for x in n["gpus"]]; p=n["paths"]["gpu_gpu"]; sys.exit(not (g == [0, 0, 1, 1] and p[2][3] == "PHB" and p[0][2] == "SYS"))' "$T/hbm.json"
ok $? "HBM beside DRAM in a package: its GPUs on the DRAM node (JSON, XML, path classes)" "$(cat "$T/hbm.out"; grep -n 'cpu numaid\|busid="0000:8' "$T/hbm.nccl.xml")"
# Broadcom switches NCCL flattens: a second-level PEX switch is merged into the first, so
# GPU1 and mlx5_0 (under switch 05:00.0 below 01:00.0) are PIX, not PXB: Gen4 (0xc010, any
# level), Gen5 (0xc030, subsystem 0x0XXX on top, 0x1XXX below); other subsystems keep PXB
sed 's/\[1000:c030\] \[1000:a064\]/[1000:c010] [1000:a064]/g' "$S/dgx-like.xml" >"$T/bcm4.xml"
sed -e 's/\[1000:c030\] \[1000:a064\]/[1000:c030] [1000:0064]/g' \
    -e '/pci_busid="0000:0[56]:00.0"/s/\[1000:0064\]/[1000:1064]/' "$S/dgx-like.xml" >"$T/bcm5.xml"
sed 's/\[1000:c030\] \[1000:a064\]/[1000:c030] [1000:1064]/g' "$S/dgx-like.xml" >"$T/bcm5x.xml"
for c in bcm4:PIX bcm5:PIX bcm5x:PXB; do
    f=${c%:*} want=${c#*:}
    probe "$T/$f.xml" "$f"
    python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["nodes"][0]; sys.exit(not (n["paths"]["gpu_nic"][1][0] == sys.argv[2] and n["paths"]["gpu_nic"][0][0] == "PIX"))' "$T/$f.json" "$want"
    ok $? "switches $f: GPU1 to mlx5_0 is $want" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["nodes"][0]["paths"]["gpu_nic"])' "$T/$f.json" 2>&1)"
done
tap_done
