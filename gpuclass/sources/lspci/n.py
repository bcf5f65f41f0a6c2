"""``lspci -n`` / ``-nn``, with the detail lines of ``-v`` / ``-k`` / ``-vvv`` where present.

From ``-vvv`` output the SR-IOV capability of a physical function is read: the
function is flagged ``FLAG_PF`` (with its total and enabled VF counts), and the
functions of this dump at the routing IDs of its virtual functions (``VF offset``
and ``stride`` from the function's own) are flagged ``FLAG_VF``.

>>> t = parse_lspci_n("01:00.0 0300: 10de:1b80 (rev a1)\\n\\tSubsystem: 1458:3702\\n"
...                   "\\tKernel driver in use: nvidia\\n")
>>> hex(t.subdevice[0]), t.driver[0], int(t.revision[0])
('0x3702', 'nvidia', 161)
"""

from __future__ import annotations

import re

from ...constants import FLAG_PF, FLAG_VF
from ...devices import DeviceTable
from .columns import ADDR, ADDR_ONLY, H2, H4, Rows, dec_field, range_problem, set_address

__all__ = ["parse_lspci_n"]

_N = re.compile(
    rf"^{ADDR} (?:((?:[^:\n]|:(?! ))*?) \[)?({H4})\]?: (?:(.*?) \[)?({H4}):({H4})\]?"
    rf"(?: ?\(rev ({H2})\))?(?: ?\(prog-if ({H2})(?: \[[^\]]*\])?\))?[ \t\r]*$"
)
# What a line that is not one holds, for a message that says what is missing.
_CLASS = re.compile(rf"^{ADDR} (?:[^:\n]*\[{H4}\]|{H4}): ")
_PAIR = re.compile(rf"\b{H4}:{H4}\b")
_SRIOV_COUNTS = re.compile(r"Total VFs: ([0-9]{1,5}), Number of VFs: ([0-9]{1,5})")
_SRIOV_OFFSET = re.compile(r"VF offset: ([0-9]{1,5}), stride: ([0-9]{1,5})")
# The IDs at the end of a Subsystem value; the name is what precedes " [" (searching
# for a lazy name group first was quadratic in the line length).
_SUB_IDS = re.compile(rf"({H4}):({H4})\]?\s*$")



def _reason(line: str) -> str:
    """What an unreadable ``-n`` device line lacks, in words."""
    has_class, has_pair = _CLASS.match(line) is not None, _PAIR.search(line) is not None
    if not has_class and not has_pair:
        return "no numeric class code and no vendor:device IDs (collect with lspci -nn)"
    if not has_pair:
        return "no numeric vendor:device IDs (collect with lspci -nn)"
    if not has_class:
        return "no numeric class code before the ':' (collect with lspci -nn)"
    return "malformed lspci -n line (unexpected text around the IDs)"


def _detail(rec: dict, key: str, value: str, where: str) -> None:
    if key == "Subsystem":
        m = _SUB_IDS.search(value)
        if m:
            at = m.start()
            rec.update(subvendor=int(m.group(1), 16), subdevice=int(m.group(2), 16), has_subsystem=True,
                       subvendor_text=value[:at - 2] if value[at - 2:at] == " [" else None)
    elif key == "Kernel driver in use":
        rec["driver"] = value.strip() or None
    elif key in ("NUMA node", "IOMMU group"):
        number = dec_field(value)
        if number is None:  # past an int32: unknown, and the device flagged (as by sysfs)
            rec.setdefault("_range", []).append(range_problem(where, key, value))
            number = -1
        rec["numa_node" if key == "NUMA node" else "iommu_group"] = number
    elif key == "Capabilities" and "(SR-IOV)" in value:
        rec["_sriov"] = True
    elif rec.get("_sriov"):
        line = f"{key}: {value}"
        m = _SRIOV_COUNTS.search(line)
        if m:
            rec["sriov_totalvfs"], rec["sriov_numvfs"] = int(m.group(1)), int(m.group(2))
            rec["flags"] = rec.get("flags", 0) | FLAG_PF
        m = _SRIOV_OFFSET.search(line)
        if m:
            rec["_vf"] = (int(m.group(1)), int(m.group(2)))


def _add(rows: Rows, rec: dict) -> None:
    """Add a device; a detail past an int32 flags it, unless something worse already has."""
    ranges = rec.pop("_range", None)
    if ranges and "problems" not in rec:
        rec["problems"] = "; ".join(ranges)
    rows.add(rec)


def _mark_vfs(rows: Rows) -> None:
    """Flag the functions at the routing IDs of each physical function's virtual functions."""
    cols = rows.cols
    pfs = [i for i, v in enumerate(rows.vf) if v is not None]
    if not pfs:
        return
    where = {(d, b, s, f): i for i, (d, b, s, f) in
             enumerate(zip(cols["domain"], cols["bus"], cols["slot"], cols["function"]))}
    for i in pfs:
        offset, stride = rows.vf[i]
        n = cols["sriov_numvfs"][i] or 0
        rid = (cols["bus"][i] << 8) | (cols["slot"][i] << 3) | cols["function"][i]
        for k in range(min(n, 65536)):
            vf = rid + offset + k * stride
            j = where.get((cols["domain"][i], vf >> 8 & 0xFF, vf >> 3 & 0x1F, vf & 7))
            if j is not None and j != i:
                cols["flags"][j] = (cols["flags"][j] or 0) | FLAG_VF


def parse_lspci_n(text: str, source: str = "lspci -n", first_line: int = 1) -> DeviceTable:
    """``lspci -n`` / ``-nn`` text, with the detail lines of ``-v`` / ``-k`` where present.

    >>> t = parse_lspci_n("01:00.0 0300: 10de:1b80 (rev a1)\\n\\tSubsystem: 1458:3702\\n"
    ...                   "\\tKernel driver in use: nvidia\\n")
    >>> hex(t.subdevice[0]), t.driver[0], int(t.revision[0])
    ('0x3702', 'nvidia', 161)
    """
    rows = Rows()
    rec: dict | None = None
    for lineno, line in enumerate(text.split("\n"), first_line):
        if not line.strip():
            continue
        if line[0] in " \t":
            if rec is None:  # a detail line with no device line before it
                rows.add({"problems": f"{source}:{lineno}: not lspci output (skipped): {line.strip()[:120]!r}"})
                continue
            if "problems" in rec:
                continue
            key, _, value = line.strip().partition(": ")
            _detail(rec, key, value, f"{source}:{lineno}")
            continue
        if rec is not None:
            _add(rows, rec)
        m = _N.match(line)
        if m is None:
            rec = {"problems": f"{source}:{lineno}: "
                               + (_reason(line) if ADDR_ONLY.match(line)
                                  else "not an lspci -n line") + f": {line.strip()[:120]!r}"}
            am = ADDR_ONLY.match(line)
            if am:
                set_address(rec, am.group(0))
            continue
        d, b, s, f, cls_t, cls, vd_t, v, dv, rev, prog = m.groups()
        rec = {"domain": int(d, 16) if d else 0, "bus": int(b, 16), "slot": int(s, 16),
               "function": int(f), "class_code": (int(cls, 16) << 8) | (int(prog, 16) if prog else 0),
               "vendor": int(v, 16), "device": int(dv, 16), "revision": int(rev, 16) if rev else 0,
               "class_text": cls_t, "device_text": vd_t}
    if rec is not None:
        _add(rows, rec)
    _mark_vfs(rows)
    return rows.table(source, ("class_text", "device_text", "subvendor_text"))
