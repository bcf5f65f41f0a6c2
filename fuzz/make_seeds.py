"""Write the seed corpora (``fuzz/corpus/<target>/``) from the test fixtures.

Run from the repository root: ``python fuzz/make_seeds.py``.  The seeds are
small on purpose (a few KiB each) and kept in the repository; what a fuzzing
campaign finds grows in ``fuzz/work/`` (ignored), and inputs that found a bug
are copied into ``fuzz/corpus/<target>/`` as ``regress-*`` seeds.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import lzma
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import fakemachine  # noqa: E402
import fakesys  # noqa: E402

from gpuclass import PciDatabase  # noqa: E402
from gpuclass.sources.lspci import LSPCI_FORMATS  # noqa: E402
from gpuclass.db.locate import bundled_path  # noqa: E402
from gpuclass.policy import Policy  # noqa: E402

CORPUS = os.path.join(HERE, "corpus")


def small_pci_ids() -> bytes:
    """The header, NVIDIA's first devices with subsystems, a generic block and classes."""
    lines = bundled_path().read_bytes().split(b"\n")
    head = lines[:30]
    nv = lines.index(next(x for x in lines if x.startswith(b"10de  ")))
    body = lines[nv:nv + 120]
    c = lines.index(next(x for x in lines if x.startswith(b"C 00  ")))
    classes = lines[c:c + 60]
    return b"\n".join(head + [b"8086  Intel Corporation", b"\t0d57  Host bridge"] + body
                      + [b"S 10de", b"\t0000  Generic NVIDIA subsystem"] + classes) + b"\n"


def put(target: str, name: str, data: bytes | str) -> None:
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"seed-{name}"), "wb") as fh:
        fh.write(data)


def tree_lang(devices) -> bytes:
    """A fixture machine in fuzz_targets.build_tree's line language."""
    out = []
    for d in devices:
        out.append(f"@{d.address}")
        out.append(f"vendor=0x{d.vendor:04x}")
        out.append(f"device=0x{d.device:04x}")
        out.append(f"class=0x{d.class_code:06x}")
        if d.subvendor is not None:
            out.append(f"subsystem_vendor=0x{d.subvendor:04x}")
            out.append(f"subsystem_device=0x{d.subdevice:04x}")
        out.append(f"revision=0x{d.revision:02x}")
        if d.numa_node is not None:
            out.append(f"numa_node={d.numa_node}")
        if d.driver:
            out.append(f"driver->../../../bus/pci/drivers/{d.driver}")
        if d.iommu_group is not None:
            out.append(f"iommu_group->../../../kernel/iommu_groups/{d.iommu_group}")
        if d.sriov_totalvfs is not None:
            out.append(f"sriov_totalvfs={d.sriov_totalvfs}")
        if d.physfn:
            out.append(f"physfn->../{d.physfn}")
        for k, v in d.raw.items():
            if isinstance(v, (str, bytes)):
                v = v.encode() if isinstance(v, str) else v
                out.append(k + ":" + v.decode("utf-8", "replace").replace("\n", "\\n"))
    return ("\n".join(out) + "\n").encode()


def pod_text() -> str:
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
            "  - name: a\n    resources: {limits: {nvidia.com/gpu: 1}}\n")


def main() -> None:
    ids = small_pci_ids()
    put("pciids", "small", ids)
    put("pciids", "bad-lines", b"10de  NVIDIA\n\t1b8g  bad hex\n\t\t10de 1234  sub before device\n"
                              b"C 03  Display\n\t00  VGA\n\t\t00  VGA controller\nS 10de\n\t0001  x\n"
                              b"10de  duplicate\n")
    for mode, comp in ((1, gzip.compress), (2, lzma.compress), (3, bz2.compress)):
        put("pciids_compressed", f"archive-{mode}", bytes([mode]) + comp(ids[:3000]))
        put("pciids_compressed", f"text-{mode}", bytes([mode]) + ids[:2000])
        put("pciids_compressed", f"damaged-{mode}", bytes([mode + 4]) + ids[:1500])
    put("pciids_compressed", "raw", b"\0" + ids[:2000])

    path = os.path.join(CORPUS, "..", "work", "seed.gpcdb")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    PciDatabase.from_bytes(ids[:4000].rsplit(b"\n", 1)[0] + b"\n").save_compiled(path)
    with open(path, "rb") as fh:
        put("cache", "small", fh.read())
    os.unlink(path)

    put("cache_content", "clean", b"")
    put("cache_content", "names", bytes([0, 3, 0xFF, 0, 4, 0xC3]))
    put("cache_content", "offsets", bytes([2, 0, 200, 1, 1, 0]))
    put("cache_content", "meta", bytes(64) + b'{"sha256": [1], "source": {"a": [[[]]]}}')
    put("cache_content", "misaligned", bytes([4]) + bytes(63))

    put("documents", "yaml", "a: &x [1, {b: 2}]\nc: *x\nd: {<<: {e: 3}, f: 0x1f}\n---\n- !!str 5\n")
    put("documents", "json", json.dumps({"kind": "Pod", "spec": {"containers": [{"name": "a"}]}}))
    put("documents", "ndjson", '{"a": 1}\n{"b": [2, 3]}\n')
    put("documents", "laughs", "a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\nd: [*c, *c, *c]\n")
    put("documents", "deep", "[" * 120 + "]" * 120)
    put("documents", "bigint", "a: " + "9" * 4400 + "\n")
    put("manifest_file", "pods", pod_text() + "---\nkind: Pod\nmetadata: []\n")
    put("manifest_file", "list", json.dumps({"kind": "List", "items": [{"kind": "Node", "metadata": {
        "name": "n", "labels": {"a": "b"}}}, [1]]}))

    for i, v in enumerate([b"0x10de\n", b"0x030000\n", b"0xa1\n", b"-1\n", b"0\n", b"16\n",
                           b"0000:01:00.0", b"10000:e1:1f.7", b"0x\n", b"0x10de0\n"]):
        put("sysfs_values", str(i), v)

    machines = {"gex44": fakesys.gex44(), "gex130": fakesys.gex130(), "sriov": fakesys.sriov_server(),
                "broken": fakesys.broken(), "wide": fakesys.wide_domains()}
    for name, devs in machines.items():
        put("sysfs_tree", name, tree_lang(devs))
    put("sysfs_tree", "containment", b"@0000:01:00.0\nvendor=0x10de\ndevice=0x27b0\nclass=0x030000\n"
                                     b"numa_node|\nrevision%\nsriov_totalvfs=99999999999\n"
                                     b"@0000:02:00.0!up\nvendor=0x10de\n@0000:03:00.0!back\nvendor=0x10de\n"
                                     b"@0000:04:00.0\nvendor|\ndevice=0x27b0\nclass=0x030000\n"
                                     b"iommu_group->../../g/99999999999\n")
    put("sysfs_tree", "hostile", b"@0000:01:00.0\nvendor=0x10de\ndevice=0x27b0\nclass*1024\n"
                                 b"@0000:02:00.0!loop\n@0000:03:00.0!gone\n@0000:04:00.0!out\n"
                                 b"@0000:05:00.0\nvendor->vendor\ndevice/\nclass:0x030000")

    for name, devs in machines.items():
        table = fakesys.expected(devs)
        good = table.take([i for i in range(len(table)) if table.problems[i] is None
                           and table.function[i] != 0xFF])
        for k, fmt in enumerate(LSPCI_FORMATS):
            code = {"-nnmm": 1, "-nnmm -D": 1, "-vmm -nn": 2, "-vmm -nn -D": 2, "-n": 3}[fmt]
            put("lspci", f"{name}-{k}", bytes([code]) + good.to_lspci_text(fmt).encode())
    put("lspci", "nn-verbose", b"\x03" + b"01:00.0 VGA compatible controller [0300]: NVIDIA Corporation "
        b"Device [10de:2bb1] (rev a1) (prog-if 00 [VGA controller])\n\tSubsystem: NVIDIA Corporation "
        b"Device [10de:204b]\n\tKernel driver in use: nvidia\n\tNUMA node: 0\n\tIOMMU group: 12\n")
    put("lspci", "nmm", b"\x01" + b'01:00.0 "0300" "10de" "2bb1" -ra1 "10de" "204b"\n')

    put("modalias", "lines", "pci:v000010DEd000027B0sv000010DEsd000016FAbc03sc00i00\n"
                             "0000:01:00.1 pci:v000010DEd000022BCsv000010DEsd000016FAbc04sc03i00\n"
                             "pci:v*d*sv*sd*bc03sc*i*\n")
    for kind, (text, _) in fakemachine.CPUS.items():
        put("cpuinfo", kind, text)
    put("cpuinfo", "arm", "processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n\n")

    policy = Policy.default()
    for k, fmt in enumerate(("json", "yaml", "toml")):
        put("policy", f"default-{fmt}", bytes([k]) + policy.dumps(fmt).encode())
    put("policy", "small", b"\x00" + json.dumps({"slices_per_card": 2, "cards": [
        {"id": "x", "name": "X", "family": "ada", "match": [{"vendor": "10de", "device": "27b0"}]}]}).encode())

    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\nspec:\n  initContainers:\n"
           "  - name: side\n    restartPolicy: Always\n    resources: {limits: {nvidia.com/gpu: 1}}\n"
           "  containers:\n  - name: a\n    resources:\n      requests: {nvidia.com/gpu: '1'}\n"
           "      limits: {nvidia.com/gpu: '1'}\n  - name: b\n    resources: {limits: {nvidia.com/gpu: 2}}\n")
    put("pod", "pod", pod)
    put("pod", "deployment", "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
                             "      - name: a\n        resources: {limits: {nvidia.com/gpu: 1500m}}\n")
    put("pod", "json", json.dumps({"kind": "Job", "spec": {"template": {"spec": {"containers": [
        {"name": "a", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]}}}}))
    put("node", "unhealthy", "kind: Node\nmetadata:\n  name: gpu-1\n  labels: {autopilot.syself.com/gpu: 'true',"
                             " nvidia.com/gpu.count: '2', nvidia.com/gpu.product: RTX-4000}\n"
                             "status:\n  capacity: {nvidia.com/gpu: '4'}\n  allocatable: {nvidia.com/gpu: '0'}\n")
    put("node", "plain", json.dumps({"kind": "Node", "metadata": {"name": "n"}, "status": {}}))
    for i, q in enumerate(["1", "1500m", "2Ki", "1e3", "-0.5", ".5", "1E-2", "+7"]):
        put("quantity", str(i), q)

    put("match", "rows", bytes(range(256)) * 2)
    put("keyindex", "u32", bytes([2, 1]) + bytes(range(64)))
    put("keyindex", "u64", bytes([3, 0]) + bytes(range(128)))

    feed = {"server": [{"id": 1, "description": ["1x GeForce GTX 1080", "64 GB RAM"], "cpu": "i7"},
                       {"id": 2, "description": ["RTX 4000 SFF Ada Generation"], "price": 184}]}
    put("audit", "feed", b"\x00" + json.dumps(feed).encode())
    put("audit", "ndjson", b"\x01" + b"\n".join(json.dumps(s).encode() for s in feed["server"]))
    put("audit", "csv", b"\x02" + b"server,description\n1,2x RTX 6000 Ada\n2,no gpu\n")
    put("audit", "table-csv", b"\x03" + b"server,vendor,device,class\nh1,10de,27b0,030000\nh2,10de,1e30,030000\n")
    put("audit", "lspci", b"\x04" + b'01:00.0 "VGA compatible controller [0300]" "NVIDIA Corporation [10de]" '
                                    b'"Device [2bb1]" -ra1 -p00 "NVIDIA Corporation [10de]" "Device [204b]"\n')

    total = 0
    for root, _, files in os.walk(CORPUS):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    print(f"seeds written to {CORPUS}: {total} bytes, sha256 of names "
          f"{hashlib.sha256(repr(sorted(os.listdir(CORPUS))).encode()).hexdigest()[:12]}")


if __name__ == "__main__":
    main()
