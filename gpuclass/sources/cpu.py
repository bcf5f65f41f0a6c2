"""CPU facts from ``/proc/cpuinfo`` and the root: can this machine run VM-isolated pods?

The secure (Kata) runtime needs hardware virtualization: the ``vmx`` (Intel)
or ``svm`` (AMD) flag on bare metal.  Inside a VM the ``hypervisor`` flag is
set; a VM may still offer ``/dev/kvm`` through nested or paravirtualized KVM,
and that is *not* hardware virtualization for this platform (this is what a
cloud VM, and the machine that builds gpuclass, looks like).

>>> facts = parse_cpuinfo("vendor_id\\t: GenuineIntel\\nmodel name\\t: Intel(R) Core(TM) i5-13500\\n"
...                       "flags\\t\\t: fpu vme vmx ept\\n")
>>> facts.vendor, facts.vmx, facts.hardware_virtualization
('GenuineIntel', True, True)
"""

from __future__ import annotations

import errno
import os
import stat

from ..inputs import kind_of, lstat_beneath, read_beneath

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:  # without importing typing (nor dataclasses: ast, inspect): plan's start
    from ..lazy import NamedTuple

__all__ = ["CpuFacts", "parse_cpuinfo", "cpu_facts"]


class CpuFacts(NamedTuple):
    """What the provisioner needs to know about the CPU (a named tuple, immutable:
    ``facts._replace(kvm_device=True)`` gives a changed copy).

    ``kvm_device`` is ``None`` when not checked (text-only input); ``problems``
    says what was found where a file of the machine should be and was not (a
    ``dev/kvm`` that is a symlink or a regular file, not the device).
    """

    vendor: str | None = None
    model_name: str | None = None
    family: int | None = None
    model: int | None = None
    logical_cpus: int = 0
    flags: frozenset[str] = frozenset()
    kvm_device: bool | None = None
    problems: tuple[str, ...] = ()

    @property
    def vmx(self) -> bool:
        return "vmx" in self.flags

    @property
    def svm(self) -> bool:
        return "svm" in self.flags

    @property
    def hypervisor(self) -> bool:
        """Running under a hypervisor (the CPUID bit Linux shows as ``hypervisor``)."""
        return "hypervisor" in self.flags

    @property
    def hardware_virtualization(self) -> bool:
        """vmx or svm on bare metal: what ``runtimeClassName: secure`` needs."""
        return (self.vmx or self.svm) and not self.hypervisor

    @property
    def nested_kvm(self) -> bool:
        """/dev/kvm inside a VM: nested or paravirtualized, not hardware virtualization."""
        return bool(self.kvm_device) and self.hypervisor

    def reason(self) -> str:
        """One line on why the secure runtime can or cannot run here.

        >>> CpuFacts(flags=frozenset({"hypervisor"}), kvm_device=True).reason()
        'no hardware virtualization: running under a hypervisor (/dev/kvm is nested or paravirtualized KVM)'
        """
        ext = "vmx" if self.vmx else "svm" if self.svm else None
        if self.hardware_virtualization:
            kvm = "" if self.kvm_device is not False else " (/dev/kvm absent: kvm module not loaded)"
            return f"hardware virtualization: {ext} on bare metal{kvm}"
        if self.hypervisor:
            tail = " (/dev/kvm is nested or paravirtualized KVM)" if self.kvm_device else ""
            what = f"{ext} is exposed by" if ext else "running under"
            return f"no hardware virtualization: {what} a hypervisor{tail}"
        return "no hardware virtualization: the CPU shows neither vmx nor svm"

    def to_dict(self) -> dict:
        return {
            "vendor": self.vendor, "model_name": self.model_name, "family": self.family,
            "model": self.model, "logical_cpus": self.logical_cpus, "vmx": self.vmx,
            "svm": self.svm, "hypervisor": self.hypervisor, "kvm_device": self.kvm_device,
            "hardware_virtualization": self.hardware_virtualization, "reason": self.reason(),
            "problems": list(self.problems),
        }


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value, 0) if value.lower().startswith("0x") else int(value)
    except ValueError:
        return None


def parse_cpuinfo(text: str) -> CpuFacts:
    """Facts from ``/proc/cpuinfo`` text (x86; on other architectures the flags are
    the ``Features`` line and vendor/model stay None where absent).

    Flags are those every listed processor has, so one odd core cannot claim vmx.
    """
    blocks: list[dict[str, str]] = []
    cur: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if cur:
                blocks.append(cur)
                cur = {}
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key == "processor" and "processor" in cur:
            blocks.append(cur)
            cur = {}
        cur.setdefault(key, value.strip())
    if cur:
        blocks.append(cur)
    cpus = [b for b in blocks if "processor" in b] or blocks
    if not cpus:
        return CpuFacts()
    flag_sets = [frozenset(b.get("flags", b.get("features", "")).split()) for b in cpus]
    flags = frozenset.intersection(*flag_sets)
    first = cpus[0]
    return CpuFacts(
        vendor=first.get("vendor_id") or first.get("cpu implementer"),
        model_name=first.get("model name"),
        family=_int(first.get("cpu family")),
        model=_int(first.get("model")),
        logical_cpus=sum(1 for b in blocks if "processor" in b),
        flags=flags,
    )


def _kvm(root: str) -> tuple[bool, tuple[str, ...]]:
    """Whether ``dev/kvm`` under ``root`` is a character device: looked at (``lstat``,
    inside the root), never opened or followed."""
    where = os.path.join(root, "dev", "kvm")
    try:
        st = lstat_beneath(root, "dev/kvm")
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:  # dev is not a directory: no device there
            return False, (f"{os.path.join(root, 'dev')}: not a directory",)
        why = ("leads outside the root (not followed)" if exc.errno == errno.EXDEV
               else exc.strerror or str(exc))
        return False, (f"{where}: {why}",)
    if st is None:
        return False, ()
    if stat.S_ISCHR(st.st_mode):
        return True, ()
    return False, (f"{where}: is {kind_of(st.st_mode)}, not the kvm device (not followed)",)


def cpu_facts(root: str | os.PathLike = "/") -> CpuFacts:
    """Facts for the machine at ``root``: its ``proc/cpuinfo`` and ``dev/kvm``.

    Both are looked up inside ``root`` only (a symlink out of it is never
    followed); ``proc/cpuinfo`` must be a regular file of at most
    ``LIMITS["cpuinfo"]`` bytes, else a :class:`SourceError` says what it is;
    ``dev/kvm`` must be a character device, and anything else there is a
    problem in ``problems``, never opened.
    """
    root_s = os.fspath(root)
    text = read_beneath(root_s, "proc/cpuinfo", "cpuinfo").decode("utf-8", errors="replace")
    facts = parse_cpuinfo(text)
    kvm, problems = _kvm(root_s)
    return facts._replace(kvm_device=kvm, problems=problems)
