#!/usr/bin/env python3
"""Write the reference topologies of this directory (schema ccbench.topology.v1, see
docs/topology.md). The JSON files are committed; edit the numbers here and re-run.
devvm.json is not written here: it is `ccbench probe` run on the development VM."""
import json
import os

GiB = 1 << 30
SRC_NVLINK4 = "NVLink4 (H100/H200 SXM): 18 links, 900 GB/s bidirectional = 450 GB/s per direction (NVIDIA H100 datasheet; shared/REFERENCE.md)"
SRC_NVLINK3 = "NVLink3 (A100 SXM4): 12 links, 600 GB/s bidirectional = 300 GB/s per direction (NVIDIA A100 datasheet)"
SRC_NDR = "NDR InfiniBand 400 Gb/s = 50 GB/s per NIC; 46-49 GB/s measured (NVIDIA/nccl-tests #267, #290)"
SRC_HDR = "HDR InfiniBand 200 Gb/s = 25 GB/s per NIC; DGX-A100 with 8x200G reaches ~192 GB/s all-reduce busbw across nodes (NVIDIA/nccl #812)"
SRC_H100_AR = "8x H100 all_reduce busbw ~365-370 GB/s Ring, ~480 GB/s NVLS (NVIDIA/nccl-tests #212, NVIDIA/nccl #1455)"
SRC_H200_AR = ("8x H200 all_reduce busbw 475 GB/s with NCCL's default algorithm, above what a ring can "
               "reach on NVLink4: NVLS (NVIDIA/nccl-tests #272); Ring as on H100, ~365 GB/s")
SRC_MULTI_H100 = "2 nodes x 8 H100/H200 with 8x400G: ~470-489 GB/s (tree-inflated); 4 nodes: ~366 GB/s (NVIDIA/nccl-tests #309)"


def gpus(n, model, mem, numa_of, sm, links):
    return [{"index": i, "cuda_index": i, "model": model, "pci_bus_id": "", "numa": numa_of(i),
             "memory_bytes": mem, "sm": sm, "pcie": {"gen": 5 if sm >= 90 else 4, "width": 16},
             "nvlink": {"links": links, "up": links, "peers": [{"target": "nvswitch", "count": links, "kind": "nvswitch"}]}}
            for i in range(n)]


def ib_nics(n, rate, numa_of):
    return [{"name": "mlx5_%d" % i, "kind": "ib", "pci_bus_id": "", "numa": numa_of(i), "netdev": "ib%d" % i,
             "rate_gbps": rate,
             "ports": [{"port": 1, "state": "ACTIVE", "rate_gbps": rate, "width": "4X", "link_layer": "InfiniBand"}]}
            for i in range(n)]


def matrix(n, m, f):
    return [[f(i, j) for j in range(m)] for i in range(n)]


def dgx_h100_node(name="dgx-h100", count=1):
    numa = lambda i: i // 4
    return {
        "hostname": name, "count": count,
        "cpu": {"model": "Intel(R) Xeon(R) Platinum 8480C", "vendor": "GenuineIntel", "arch": "x86_64",
                "sockets": 2, "cores": 112, "pus": 224},
        "numa": [{"os_index": k, "cpuset": "", "memory_bytes": 1024 * GiB} for k in range(2)],
        "memory_bytes": 2048 * GiB,
        "gpus": gpus(8, "NVIDIA H100 80GB HBM3", 80 * GiB, numa, 90, 18),
        "nics": ib_nics(8, 400, numa),
        "netdevs": [],
        # each GPU shares a PCIe switch with one NDR NIC; the others of its socket are
        # reached through the CPU's root complex
        "paths": {"gpu_gpu": matrix(8, 8, lambda i, j: "X" if i == j else "NVL"),
                  "gpu_nic": matrix(8, 8, lambda g, n: "PIX" if g == n else "PHB" if g // 4 == n // 4 else "SYS")},
        "expected": {"nvlink_GBps_per_gpu": 450, "intra_allreduce_busbw_GBps": 365,
                     "intra_allreduce_busbw_nvls_GBps": 480, "nic_GBps": 50, "nic_measured_GBps": 46},
    }


def dgx_a100_node(name="dgx-a100", count=1):
    # NPS4 on two AMD EPYC 7742: 8 NUMA nodes; GPU pairs and NIC pairs share PCIe switches
    gpu_numa = [3, 3, 1, 1, 7, 7, 5, 5]
    return {
        "hostname": name, "count": count,
        "cpu": {"model": "AMD EPYC 7742 64-Core Processor", "vendor": "AuthenticAMD", "arch": "x86_64",
                "sockets": 2, "cores": 128, "pus": 256},
        "numa": [{"os_index": k, "cpuset": "", "memory_bytes": 128 * GiB} for k in range(8)],
        "memory_bytes": 1024 * GiB,
        "gpus": gpus(8, "NVIDIA A100-SXM4-80GB", 80 * GiB, lambda i: gpu_numa[i], 80, 12),
        "nics": ib_nics(8, 200, lambda i: gpu_numa[i]),
        "netdevs": [],
        "paths": {"gpu_gpu": matrix(8, 8, lambda i, j: "X" if i == j else "NVL"),
                  "gpu_nic": matrix(8, 8, lambda g, n: "PXB" if g // 2 == n // 2 else "SYS")},
        "expected": {"nvlink_GBps_per_gpu": 300, "intra_allreduce_busbw_GBps": 230, "nic_GBps": 25},
    }


def hgx_h200_node(name="hgx-h200", count=1):
    n = dgx_h100_node(name, count)
    n["cpu"] = {"model": "Intel(R) Xeon(R) Platinum 8568Y+", "vendor": "GenuineIntel", "arch": "x86_64",
                "sockets": 2, "cores": 96, "pus": 192}
    n["gpus"] = gpus(8, "NVIDIA H200", 141 * GiB, lambda i: i // 4, 90, 18)
    n["expected"] = {"nvlink_GBps_per_gpu": 450, "intra_allreduce_busbw_GBps": 365,
                     "intra_allreduce_busbw_nvls_GBps": 475, "nic_GBps": 50, "nic_measured_GBps": 46}
    return n


def cpu_node(name="cpu-2s-100gbe", count=1):
    return {
        "hostname": name, "count": count,
        "cpu": {"model": "AMD EPYC 7763 64-Core Processor", "vendor": "AuthenticAMD", "arch": "x86_64",
                "sockets": 2, "cores": 128, "pus": 256},
        "numa": [{"os_index": k, "cpuset": "", "memory_bytes": 256 * GiB} for k in range(2)],
        "memory_bytes": 512 * GiB,
        "gpus": [],
        "nics": [{"name": "mlx5_0", "kind": "roce", "pci_bus_id": "", "numa": 1, "netdev": "ens1f0",
                  "rate_gbps": 100,
                  "ports": [{"port": 1, "state": "ACTIVE", "rate_gbps": 100, "link_layer": "Ethernet"}]}],
        "netdevs": [{"name": "ens1f0", "speed_mbps": 100000, "mtu": 9000, "state": "up", "addresses": []}],
        "paths": {"gpu_gpu": [], "gpu_nic": []},
        "expected": {"nic_GBps": 12.5},
    }


def topo(name, desc, sources, nodes, fabric):
    return {"schema": "ccbench.topology.v1", "name": name, "description": desc, "sources": sources,
            "nodes": nodes, "fabric": fabric}


def ib_fabric(rate, per_node, inter=None):
    f = {"kind": "infiniband", "nics_per_node": per_node, "rate_gbps_per_nic": rate}
    if inter is not None:
        f["inter_allreduce_busbw_GBps"] = inter
    return f


FILES = {
    "dgx-h100.json": topo("dgx-h100", "NVIDIA DGX H100: 8x H100 SXM5 80GB on NVSwitch (NVLink4), 8x ConnectX-7 NDR 400 Gb/s, 2x Xeon 8480C",
                          [SRC_NVLINK4, SRC_H100_AR, SRC_NDR, "NVIDIA DGX H100 datasheet"],
                          [dgx_h100_node()], ib_fabric(400, 8)),
    "dgx-a100.json": topo("dgx-a100", "NVIDIA DGX A100: 8x A100 SXM4 80GB on NVSwitch (NVLink3), 8x ConnectX-6 HDR 200 Gb/s, 2x EPYC 7742",
                          [SRC_NVLINK3, SRC_HDR, "NVIDIA DGX A100 datasheet",
                           "intra_allreduce_busbw_GBps 230: typical 8x A100 nccl-tests all_reduce (approximate, not from a cited issue)"],
                          [dgx_a100_node()], ib_fabric(200, 8)),
    "hgx-h200.json": topo("hgx-h200", "HGX H200 node: 8x H200 SXM 141 GB on NVSwitch (NVLink4), 8x NDR 400 Gb/s, 2 sockets",
                          [SRC_NVLINK4, SRC_H200_AR, SRC_NDR, "NVIDIA H200 datasheet (141 GB HBM3e)"],
                          [hgx_h200_node()], ib_fabric(400, 8)),
    "cpu-2s-100gbe.json": topo("cpu-2s-100gbe", "2-socket CPU node (2x EPYC 7763), one 100 GbE RoCE NIC",
                               ["100 GbE = 12.5 GB/s line rate"],
                               [cpu_node()], {"kind": "roce", "nics_per_node": 1, "rate_gbps_per_nic": 100}),
    "dgx-a100-2.json": topo("dgx-a100-2", "2x DGX A100 on one HDR InfiniBand rail-optimized fabric",
                            [SRC_NVLINK3, SRC_HDR], [dgx_a100_node(count=2)], ib_fabric(200, 8, 192)),
    "dgx-a100-64.json": topo("dgx-a100-64", "64x DGX A100 (512 GPUs) on a non-blocking HDR InfiniBand fat tree, 8 rails",
                             [SRC_NVLINK3, SRC_HDR], [dgx_a100_node(count=64)], ib_fabric(200, 8, 185)),
    "dgx-h100-4.json": topo("dgx-h100-4", "4x DGX H100 on NDR InfiniBand, 8 rails",
                            [SRC_NVLINK4, SRC_NDR, SRC_MULTI_H100], [dgx_h100_node(count=4)], ib_fabric(400, 8, 366)),
}

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    for name, t in FILES.items():
        with open(os.path.join(here, name), "w") as f:
            json.dump(t, f, indent=1)
            f.write("\n")
