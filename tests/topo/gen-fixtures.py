#!/usr/bin/env python3
"""Write the hwloc XML fixtures of tests/topo (run once; the outputs are committed).

Each fixture is a small hand-made machine in hwloc's XML v2 format: Machine > Package >
NUMANode/Core/PU, and the PCI tree (host bridge > root port > switch ports > devices with
their OS devices). They load with hwloc_topology_set_xml (check: lstopo -i FILE).

  dgx-like.xml     2 sockets; 4 H100 and 3 RDMA NICs behind PCIe switches (one switch two
                   levels deep); NVLink GPU0-GPU1 (12 links) in the NVLinkBandwidth matrix
  dual-socket.xml  2 sockets; one PCIe GPU per socket with no OS device information;
                   a 100 GbE RoCE NIC on socket 1 and a 1 GbE NIC on socket 0
  nogpu.xml        1 socket, 1 NUMA node, a virtio NIC (like the development VM)
  nvswitch.xml     1 socket; 4 H100 on their own root ports, each with 18 NVLinks to an
                   NVSwitch (a PCI device in the heterogeneous NVLinkBandwidth matrix)
"""
import os

GP = [0]
OSDEV_GP = {}  # OS device name -> gp_index, for the distances matrix


def gp():
    GP[0] += 1
    return GP[0]


def cpus(first, n):
    return "0x%08x" % (((1 << n) - 1) << first)


def package(idx, first_pu, npu, numa, mem, vendor, model, fam, modnum, io, ind):
    cs = cpus(first_pu, npu)
    ns = "0x%08x" % (1 << numa)
    a = 'cpuset="%s" complete_cpuset="%s" nodeset="%s" complete_nodeset="%s"' % (cs, cs, ns, ns)
    out = [ind + '<object type="Package" os_index="%d" %s gp_index="%d">' % (idx, a, gp())]
    for k, v in (("CPUVendor", vendor), ("CPUFamilyNumber", fam), ("CPUModelNumber", modnum),
                 ("CPUModel", model)):
        out.append(ind + '  <info name="%s" value="%s"/>' % (k, v))
    out.append(ind + '  <object type="NUMANode" os_index="%d" %s gp_index="%d" local_memory="%d"/>'
               % (numa, a, gp(), mem))
    for c in range(npu):
        pu = first_pu + c
        one = "0x%08x" % (1 << pu)
        b = 'cpuset="%s" complete_cpuset="%s" nodeset="%s" complete_nodeset="%s"' % (one, one, ns, ns)
        out.append(ind + '  <object type="Core" os_index="%d" %s gp_index="%d">' % (pu, b, gp()))
        out.append(ind + '    <object type="PU" os_index="%d" %s gp_index="%d"/>' % (pu, b, gp()))
        out.append(ind + '  </object>')
    out += io(ind + "  ")
    out.append(ind + '</object>')
    return out


def bus(s):
    return s


def hostbridge(dom_range, children, ind):
    out = [ind + '<object type="Bridge" gp_index="%d" bridge_type="0-1" depth="0" bridge_pci="%s">'
           % (gp(), dom_range)]
    for c in children:
        out += c(ind + "  ")
    out.append(ind + '</object>')
    return out


def bridge(busid, rng, depth, children, speed=31.5, ids="[1000:c030] [1000:a064]"):
    def f(ind):
        out = [ind + '<object type="Bridge" gp_index="%d" bridge_type="1-1" depth="%d" bridge_pci="%s" '
               'pci_busid="%s" pci_type="0604 %s 00" pci_link_speed="%.6f">'
               % (gp(), depth, rng, busid, ids, speed)]
        for c in children:
            out += c(ind + "  ")
        out.append(ind + '</object>')
        return out
    return f


def pcidev(busid, cls, ids, osdevs=(), speed=31.5):
    def f(ind):
        out = [ind + '<object type="PCIDev" gp_index="%d" pci_busid="%s" pci_type="%s %s 00" '
               'pci_link_speed="%.6f">' % (gp(), busid, cls, ids, speed)]
        for name, t, infos in osdevs:
            OSDEV_GP[name] = GP[0] + 1
            if infos:
                out.append(ind + '  <object type="OSDev" gp_index="%d" name="%s" osdev_type="%d">'
                           % (gp(), name, t))
                for k, v in infos:
                    out.append(ind + '    <info name="%s" value="%s"/>' % (k, v))
                out.append(ind + '  </object>')
            else:
                out.append(ind + '  <object type="OSDev" gp_index="%d" name="%s" osdev_type="%d"/>'
                           % (gp(), name, t))
        out.append(ind + '</object>')
        return out
    return f


H100 = "[10de:2330] [10de:16c1]"
CX7 = "[15b3:1021] [15b3:0041]"


def h100(busid, i):
    return pcidev(busid, "0302", H100, [
        ("cuda%d" % i, 5, [("CoProcType", "CUDA"), ("Backend", "CUDA"), ("GPUVendor", "NVIDIA Corporation"),
                           ("GPUModel", "NVIDIA H100 80GB HBM3"), ("CUDAGlobalMemorySize", "83189248"),
                           ("CUDAMultiProcessors", "132")]),
        ("nvml%d" % i, 1, [("Backend", "NVML"), ("GPUVendor", "NVIDIA Corporation"),
                           ("GPUModel", "NVIDIA H100 80GB HBM3")])])


def cx7(busid, ib, net, ids=CX7, cls="0207"):
    return pcidev(busid, cls, ids, [(ib, 3, [("NodeGUID", "0c42:a103:0000:00%s" % busid[5:7])]),
                                       (net, 2, [("Address", "00:00:00:00:00:%s" % busid[5:7])])])


def topology(machine_cs, machine_ns, host, body, tail=()):
    a = ('cpuset="%s" complete_cpuset="%s" allowed_cpuset="%s" nodeset="%s" complete_nodeset="%s" '
         'allowed_nodeset="%s"' % (machine_cs, machine_cs, machine_cs, machine_ns, machine_ns, machine_ns))
    out = ['<?xml version="1.0" encoding="UTF-8"?>', '<!DOCTYPE topology SYSTEM "hwloc2.dtd">',
           '<topology version="2.0">',
           '  <object type="Machine" os_index="0" %s gp_index="%d">' % (a, gp()),
           '    <info name="HostName" value="%s"/>' % host,
           '    <info name="Architecture" value="x86_64"/>']
    out += body("    ")
    out.append('  </object>')
    out += tail
    out.append('</topology>')
    return "\n".join(out) + "\n"


def dgx_like():
    GP[0] = 0
    gpus = {}

    def io0(ind):
        return hostbridge("0000:[00-0f]", [
            bridge("0000:00:01.0", "0000:[01-07]", 1, [
                bridge("0000:01:00.0", "0000:[02-07]", 2, [
                    bridge("0000:02:00.0", "0000:[03-03]", 3, [h100("0000:03:00.0", 0)]),
                    bridge("0000:02:01.0", "0000:[04-04]", 3, [cx7("0000:04:00.0", "mlx5_0", "ib0")]),
                    bridge("0000:02:02.0", "0000:[05-07]", 3, [
                        bridge("0000:05:00.0", "0000:[06-07]", 4, [
                            bridge("0000:06:00.0", "0000:[07-07]", 5, [h100("0000:07:00.0", 1)])])])])])],
            ind)

    def io1(ind):
        return hostbridge("0000:[80-8f]", [
            bridge("0000:80:01.0", "0000:[81-84]", 1, [
                bridge("0000:81:00.0", "0000:[82-84]", 2, [
                    bridge("0000:82:00.0", "0000:[83-83]", 3, [h100("0000:83:00.0", 2)]),
                    bridge("0000:82:01.0", "0000:[84-84]", 3, [cx7("0000:84:00.0", "mlx5_1", "ib1")])])]),
            bridge("0000:80:02.0", "0000:[88-88]", 1, [h100("0000:88:00.0", 3)]),
            bridge("0000:80:03.0", "0000:[89-89]", 1, [cx7("0000:89:00.0", "mlx5_2", "eth2")])],
            ind)

    def body(ind):
        return (package(0, 0, 2, 0, 512 << 30, "GenuineIntel", "Intel(R) Xeon(R) Platinum 8480C", 6, 143, io0, ind)
                + package(1, 2, 2, 1, 512 << 30, "GenuineIntel", "Intel(R) Xeon(R) Platinum 8480C", 6, 143, io1, ind))
    def tail():
        # NVLinkBandwidth in MB/s as hwloc's NVML backend records it: 12 links (300 GB/s)
        # between GPU0 and GPU1; GPU2 and GPU3 have none (their path is PCIe, PHB).
        idx = " ".join(str(OSDEV_GP["nvml%d" % i]) for i in range(4))
        m = [0] * 16
        m[0 * 4 + 1] = m[1 * 4 + 0] = 300000
        vals = " ".join(str(x) for x in m)
        return ['  <distances2 type="OSDev" nbobjs="4" kind="9" name="NVLinkBandwidth" indexing="gp">',
                '    <indexes length="%d">%s</indexes>' % (len(idx), idx),
                '    <u64values length="%d">%s</u64values>' % (len(vals), vals),
                '  </distances2>']
    xml = topology("0x0000000f", "0x00000003", "dgx-like", body)
    return xml.replace("</topology>\n", "\n".join(tail()) + "\n</topology>\n")


def dual_socket():
    GP[0] = 0
    a100 = "[10de:20b5] [10de:1533]"

    def io0(ind):
        return hostbridge("0000:[00-3f]", [
            bridge("0000:00:02.0", "0000:[17-17]", 1, [pcidev("0000:17:00.0", "0302", a100)]),
            bridge("0000:00:03.0", "0000:[18-18]", 1, [
                pcidev("0000:18:00.0", "0200", "[8086:1521] [8086:0001]", [("eno1", 2, [])], speed=0.5)]),
            bridge("0000:00:04.0", "0000:[19-19]", 1, [
                pcidev("0000:19:00.0", "0108", "[144d:a80a] [144d:a801]", [("nvme0n1", 0, [("Size", "3750738264"), ("Model", "SAMSUNG MZQL23T8HCLS")])],
                speed=7.88)])],
            ind)

    def io1(ind):
        return hostbridge("0000:[80-bf]", [
            bridge("0000:80:02.0", "0000:[98-98]", 1, [pcidev("0000:98:00.0", "0302", a100)]),
            bridge("0000:80:03.0", "0000:[99-99]", 1, [
                cx7("0000:99:00.0", "mlx5_3", "ens1f0", ids="[15b3:1017] [15b3:0007]", cls="0200")])],
            ind)

    def body(ind):
        return (package(0, 0, 4, 0, 256 << 30, "AuthenticAMD", "AMD EPYC 7763 64-Core Processor", 25, 1, io0, ind)
                + package(1, 4, 4, 1, 256 << 30, "AuthenticAMD", "AMD EPYC 7763 64-Core Processor", 25, 1, io1, ind))
    return topology("0x000000ff", "0x00000003", "dual-socket", body)


def nogpu():
    GP[0] = 0

    def io(ind):
        return hostbridge("0000:[00-00]", [
            pcidev("0000:00:02.0", "0180", "[1af4:1042] [1af4:1042]", [("vda", 0, [])], speed=0),
            pcidev("0000:00:03.0", "0200", "[1af4:1041] [1af4:1041]",
                   [("eth0", 2, [("Address", "02:fc:00:00:00:01")])], speed=0)], ind)

    def body(ind):
        return package(0, 0, 2, 0, 4 << 30, "AuthenticAMD", "AMD EPYC", 25, 1, io, ind)
    return topology("0x00000003", "0x00000001", "nogpu", body)


def nvswitch():
    GP[0] = 0

    def io(ind):
        kids = [bridge("0000:00:%02x.0" % (i + 1), "0000:[%02x-%02x]" % (0x10 * (i + 1), 0x10 * (i + 1)), 1,
                       [h100("0000:%02x:00.0" % (0x10 * (i + 1)), i)]) for i in range(4)]
        kids.append(bridge("0000:00:08.0", "0000:[80-80]", 1,
                           [pcidev("0000:80:00.0", "0680", "[10de:22a3] [10de:1796]")]))
        return hostbridge("0000:[00-ff]", kids, ind)

    def body(ind):
        return package(0, 0, 2, 0, 64 << 30, "GenuineIntel", "Intel(R) Xeon(R) Platinum 8480C", 6, 143, io, ind)
    xml = topology("0x00000003", "0x00000001", "nvswitch", body)
    # the NVSwitch's gp_index: the last PCIDev written
    sw_gp = int(xml.split('pci_busid="0000:80:00.0"')[0].rsplit('gp_index="', 1)[1].split('"')[0])
    # 18 links of 25 GB/s (MB/s here) between each GPU and the switch, as hwloc's NVML
    # backend records them: a heterogeneous matrix (GPU OS devices and a PCI device)
    idx = " ".join(["OSDev:%d" % OSDEV_GP["nvml%d" % i] for i in range(4)] + ["PCIDev:%d" % sw_gp])
    m = [0] * 25
    for i in range(4):
        m[i * 5 + 4] = m[4 * 5 + i] = 450000
    vals = " ".join(str(x) for x in m)
    tail = ['  <distances2hetero nbobjs="5" kind="25" name="NVLinkBandwidth">',
            '    <indexes length="%d">%s</indexes>' % (len(idx), idx),
            '    <u64values length="%d">%s</u64values>' % (len(vals), vals),
            '  </distances2hetero>']
    return xml.replace("</topology>\n", "\n".join(tail) + "\n</topology>\n")


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    for name, fn in (("dgx-like.xml", dgx_like), ("dual-socket.xml", dual_socket), ("nogpu.xml", nogpu),
                     ("nvswitch.xml", nvswitch)):
        with open(os.path.join(here, name), "w") as f:
            f.write(fn())
