"""``lspci -n`` / ``-nn``, with the detail lines of ``-v`` / ``-k`` where present.

>>> t = parse_lspci_n("01:00.0 0300: 10de:1b80 (rev a1)\\n\\tSubsystem: 1458:3702\\n"
...                   "\\tKernel driver in use: nvidia\\n")
>>> hex(t.subdevice[0]), t.driver[0], int(t.revision[0])
('0x3702', 'nvidia', 161)
"""

from __future__ import annotations

import re

from ...devices import DeviceTable
from .columns import ADDR, ADDR_ONLY, H2, H4, Rows, set_address

__all__ = ["parse_lspci_n"]

_N = re.compile(
    rf"^{ADDR} (?:((?:[^:\n]|:(?! ))*?) \[)?({H4})\]?: (?:(.*?) \[)?({H4}):({H4})\]?"
    rf"(?: \(rev ({H2})\))?(?: \(prog-if ({H2})(?: \[[^\]]*\])?\))?[ \t\r]*$"
)
# The IDs at the end of a Subsystem value; the name is what precedes " [" (searching
# for a lazy name group first was quadratic in the line length).
_SUB_IDS = re.compile(rf"({H4}):({H4})\]?\s*$")



def parse_lspci_n(text: str, source: str = "lspci -n") -> DeviceTable:
    """``lspci -n`` / ``-nn`` text, with the detail lines of ``-v`` / ``-k`` where present.

    >>> t = parse_lspci_n("01:00.0 0300: 10de:1b80 (rev a1)\\n\\tSubsystem: 1458:3702\\n"
    ...                   "\\tKernel driver in use: nvidia\\n")
    >>> hex(t.subdevice[0]), t.driver[0], int(t.revision[0])
    ('0x3702', 'nvidia', 161)
    """
    rows = Rows()
    rec: dict | None = None
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        if line[0] in " \t":
            if rec is None or "problems" in rec:
                continue
            key, _, value = line.strip().partition(": ")
            if key == "Subsystem":
                m = _SUB_IDS.search(value)
                if m:
                    at = m.start()
                    rec.update(subvendor=int(m.group(1), 16), subdevice=int(m.group(2), 16),
                               has_subsystem=True,
                               subvendor_text=value[:at - 2] if value[at - 2:at] == " [" else None)
            elif key == "Kernel driver in use":
                rec["driver"] = value.strip() or None
            elif key == "NUMA node" and re.fullmatch(r"-?[0-9]+", value.strip()):
                rec["numa_node"] = max(int(value), -1)
            elif key == "IOMMU group" and re.fullmatch(r"[0-9]+", value.strip()):
                rec["iommu_group"] = int(value)
            continue
        if rec is not None:
            rows.add(rec)
        m = _N.match(line)
        if m is None:
            rec = {"problems": f"{source}:{lineno}: "
                               + ("no numeric IDs (collect with lspci -nn)" if ADDR_ONLY.match(line)
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
        rows.add(rec)
    return rows.table(source, ("class_text", "device_text", "subvendor_text"))
