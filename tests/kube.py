"""The cluster's own tools, for the tests: ``kubectl patch --local`` and the API's schemas.

``kubectl patch --local`` applies a patch the way the API server does (a JSON merge patch:
``null`` deletes a key) without a cluster.  Where kubectl is missing the test that needs
it is skipped, unless ``GPUCLASS_REQUIRE_KUBECTL=1`` (set by CI, which installs Debian's
``kubernetes-client``) makes that a failure, as ``GPUCLASS_REQUIRE_PCIUTILS`` does for
pciutils.

The schemas are kubernetes-validate's, for the oldest and the newest Kubernetes it ships
(:data:`OLDEST`, :data:`NEWEST`; ``ValidatingAdmissionPolicy`` v1 from 1.30 on).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REQUIRE = "GPUCLASS_REQUIRE_KUBECTL"


def kubectl() -> str:
    """The kubectl on PATH, or a skip (a failure under ``GPUCLASS_REQUIRE_KUBECTL=1``)."""
    path = shutil.which("kubectl")
    if path is None:
        msg = "kubectl is not installed (apt-get install kubernetes-client)"
        if os.environ.get(REQUIRE, "") not in ("", "0"):
            pytest.fail(f"{msg}, but {REQUIRE}=1 requires the kubectl patch checks")
        pytest.skip(msg)
    return path


def patch_local(obj: dict, patch: dict | str) -> dict:
    """``obj`` after ``kubectl patch --local --type merge -p PATCH``, as kubectl prints it."""
    text = patch if isinstance(patch, str) else json.dumps(patch)
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "object.json"
        f.write_text(json.dumps(obj), encoding="utf-8")
        proc = subprocess.run([kubectl(), "patch", "--local", "-f", str(f), "--type", "merge",
                               "-p", text, "-o", "json"], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "KUBECONFIG": os.devnull})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _versions() -> list[str]:
    from kubernetes_validate import utils

    return sorted(set(utils.all_versions()), key=lambda v: tuple(int(x) for x in v.split(".")))


VERSIONS = _versions()
OLDEST, NEWEST = VERSIONS[0], VERSIONS[-1]


def schema_errors(obj: dict, version: str) -> list[str]:
    """What the API's schema of ``version`` (strict: no unknown fields) finds wrong in ``obj``;
    empty when it validates."""
    import kubernetes_validate

    try:
        kubernetes_validate.validate(obj, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        return [str(exc)]
    return []


def has_schema(obj: dict, version: str) -> bool:
    """Whether Kubernetes ``version`` has the kind and apiVersion of ``obj`` at all."""
    import kubernetes_validate

    try:
        kubernetes_validate.validate(obj, version, strict=True)
    except kubernetes_validate.SchemaNotFoundError:
        return False
    except kubernetes_validate.ValidationError:
        return True
    return True
