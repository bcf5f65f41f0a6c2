"""A user's script over gpuclass's documented API: ``mypy --strict`` must pass on it.

It is type-checked, not run, by ``tests/test_types.py`` (and by CI), to show that type
checkers see the real types behind the lazily imported public names.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import gpuclass


def database_names() -> list[str | None]:
    db: gpuclass.PciDatabase = gpuclass.default_database()
    name: str | None = db.device_name(0x10DE, 0x27B0)
    sub: str | None = db.subsystem_name(0x10DE, 0x1E30, 0x10DE, 0x12BA)
    cls: str | None = db.class_name(0x03, 0x02)
    idx = db.device_index(np.array([0x10DE], np.uint16), np.array([0x2BB5], np.uint16))
    names: list[str | None] = db.names("device", idx)
    vector: list[str | None] = db.subsystem_names([0x10DE], [0x1E30], [0x10DE], [0x12BA])
    return [name, sub, cls, *names, *vector, *db.class_names([0x037F00])]


def provision(root: str) -> dict[str, str]:
    report: gpuclass.HardwareReport = gpuclass.inspect(root)
    plan: gpuclass.InstallPlan = gpuclass.plan(report)
    print(plan.model_dump_json())
    labels: dict[str, str] = gpuclass.node_labels(report)
    return labels


def classify_machine(root: str) -> int:
    table: gpuclass.DeviceTable = gpuclass.scan_sysfs(root)
    result = gpuclass.classify_table(table)
    summary = result.summary()
    dumped: gpuclass.DeviceTable = gpuclass.parse_lspci(table.to_lspci_text("-nnmm -D"))
    return len(dumped) + int(summary.node(0).slices)


def audit(paths: list[Path]) -> int:
    capable = 0
    for report in gpuclass.audit_paths(paths):
        server: gpuclass.ServerReport = report
        capable += int(server.gpu_capable)
    return capable


def device_table(columns: dict[str, list[str]]) -> int:
    audited: gpuclass.AuditTable = gpuclass.audit_table(columns)
    rows: int = audited.to_pandas().shape[0]
    flat_rows: int = audited.flat().num_rows
    return rows + flat_rows + len(audited)


def validate(pod: str) -> bool:
    verdict: gpuclass.PodValidation = gpuclass.validate_pod(pod)
    return verdict.valid


def lenient(path: str) -> list[gpuclass.SkippedLine]:
    try:
        db = gpuclass.PciDatabase.load(path, strict=False)
    except gpuclass.PciIdsError as exc:
        print(exc.filename, exc.line, exc.reason)
        return []
    return db.skipped + db.flagged
