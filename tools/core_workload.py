"""The native core's workloads, for memory checkers (tools/valgrind.sh) and sanitizers.

Every entry point of the compiled core with good and bad input: the pci.ids
tokenizer (strict, lenient, every error code, empty and huge-line input),
KeyIndex over every key dtype, the matcher with and without slot linking, the
rollup, the sysfs scan of a fixture machine, the compiled cache written, mapped
and looked up, and lspci/modalias tables classified.  Exits non-zero if the
compiled core is not the one in use.

    python tools/core_workload.py [--small]
"""

from __future__ import annotations

import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from gpuclass import PciDatabase, _native  # noqa: E402
from gpuclass.classify import classify, classify_table, compile_policy  # noqa: E402
from gpuclass.errors import GpuclassError  # noqa: E402
from gpuclass.db.locate import bundled_path  # noqa: E402

core = _native.core


def expect_error(fn, *args):
    try:
        fn(*args)
    except GpuclassError:
        return
    raise SystemExit(f"expected a typed error from {fn.__name__}{args!r:.80}")


def main(small: bool) -> None:
    if not core.IS_COMPILED:
        raise SystemExit(f"compiled core not loaded: {_native.COMPILED_IMPORT_ERROR}")
    data = bundled_path().read_bytes()
    if small:
        data = data[: 400_000].rsplit(b"\n", 1)[0] + b"\n"
    tables, _ = core.parse_pci_ids(data)
    core.parse_pci_ids(data, False)
    bad = [b"10de  NVIDIA\n\t1b8g  x\n", b"\t1234  device first\n", b"10de\n", b"10de  x\n\t\t\t1234  x\n",
           b"10de  a\n10de  b\n", b"C 0g  x\n", b"S 10de\n", b"10de  \xff\xfe\n", b"10de  a\x00b\n",
           b"10de  " + b"x" * 5000 + b"\n", b"", b"\n\n\n", b"10de  a\r\n\t1234  b \r\n", b"\t\t"]
    for b in bad:
        try:
            core.parse_pci_ids(b)
        except GpuclassError:
            pass
        core.parse_pci_ids(b, False)
    rng = np.random.default_rng(0)
    for name in ("vendor", "device", "subsys", "gensub", "class", "subclass", "progif"):
        keys = tables[f"{name}_keys"]
        idx = core.KeyIndex(keys)
        q = np.concatenate([keys, rng.integers(0, np.iinfo(keys.dtype).max, 5000, dtype=keys.dtype, endpoint=True)])
        for dt in (np.uint8, np.uint16, np.uint32, np.uint64, np.int64, np.int32):
            try:
                idx.lookup(q.astype(dt))
            except GpuclassError:  # negative after the cast
                pass
        if len(keys):
            idx.find(int(keys[0]))
        idx.find(-1)
        idx.find(2 ** 64 - 1)
    core.KeyIndex(np.zeros(0, np.uint32)).lookup(np.arange(10, dtype=np.uint32))
    expect_error(core.KeyIndex, np.array([3, 1], np.uint32))
    expect_error(core.KeyIndex, np.array([1.5]))

    policy = compile_policy(None)
    n = 20_000 if small else 200_000
    v = rng.choice(np.array([0x10DE, 0x8086, 0x1002], np.uint16), n)
    d = rng.choice(np.array([0x1B80, 0x27B0, 0x2BB5, 0x1E30, 0x22BC, 0x1234], np.uint16), n)
    sv = rng.integers(0, 0x10000, n).astype(np.uint16)
    sd = rng.integers(0, 0x10000, n).astype(np.uint16)
    c = rng.choice(np.array([0x030000, 0x030200, 0x040300, 0x0C0330, 0x020000], np.uint32), n)
    flags = rng.integers(0, 16, n).astype(np.uint32)
    group = np.sort(rng.integers(0, n // 8, n)).astype(np.int64)
    bus = rng.integers(0, 256, n).astype(np.uint8)
    slot = rng.integers(0, 32, n).astype(np.uint8)
    has = rng.random(n) < 0.8
    st, card, sl = core.match_devices(policy.tables, v, d, sv, sd, c, has, flags)
    core.match_devices(policy.tables, v, d, None, None, c)
    core.match_devices(policy.tables, v, d, sv, sd, c, has, flags, group, np.zeros(n, np.uint32), bus, slot)
    core.match_devices(policy.tables, v[:0], d[:0], None, None, c[:0])
    core.rollup(st, card, sl, group, int(group.max()) + 1)
    core.rollup(st, card, sl)
    expect_error(core.match_devices, policy.tables, v, d[:-1], None, None, c)
    expect_error(core.rollup, st, card, sl, group, 1)
    r = classify(v, d, sv, sd, c, has_subsystem=has, group=group, policy=policy)
    r.summary()

    import fakesys
    from gpuclass.sources.lspci import parse_lspci
    from gpuclass.sources.modalias import parse_modaliases
    from gpuclass.sources.sysfs import scan_sysfs

    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "root")
        fakesys.write_tree(root, fakesys.generated(300, seed=5))
        fakesys.write_tree(os.path.join(tmp, "broken"), fakesys.broken())
        scan_sysfs(os.path.join(tmp, "broken"))
        t = scan_sysfs(root)
        classify_table(t, policy)
        classify_table(parse_lspci(t.take(np.flatnonzero(~t.invalid_mask() & t.has_address_mask()))
                                   .to_lspci_text("-nnmm -D")), policy)
        classify_table(parse_modaliases(["pci:v000010DEd000027B0sv000010DEsd000016FAbc03sc00i00", "x"]), policy)

        db = PciDatabase.from_bytes(data)
        path = db.save_compiled(os.path.join(tmp, "c.gpcdb"))
        db2 = PciDatabase.load_compiled(path)
        q = db.arrays()["device_keys"]
        names = db2.names("device", db2.device_index((q >> 16).astype(np.uint16), (q & 0xFFFF).astype(np.uint16)))
        assert names == db.names("device", db.device_index((q >> 16).astype(np.uint16), (q & 0xFFFF).astype(np.uint16)))
        db2.subsystem_name(0x10DE, 0x1E30, 0x10DE, 0x12BA)
        raw = open(path, "rb").read()
        with open(path, "wb") as fh:
            fh.write(raw[:-100] + bytes(100))
        try:
            PciDatabase.load_compiled(path, verify=True)
        except GpuclassError:
            pass
    print("core workload ok")


if __name__ == "__main__":
    main("--small" in sys.argv)
