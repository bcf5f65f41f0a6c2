"""Types reach users: the stubs list what the package has, ``mypy --strict`` on a user's
script (``tests/typing/user_script.py``) sees real types and rejects names that do not exist,
and a controller's script over the Kubernetes helpers (``tests/typing/k8s_script.py``) passes
``mypy --strict`` and pyright's strict mode: the helpers return TypedDicts and models."""

from __future__ import annotations

import ast
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import gpuclass
from gpuclass._native import twin

HERE = Path(__file__).resolve().parent
PACKAGE = Path(gpuclass.__file__).resolve().parent


def _stub(name: str) -> ast.Module:
    return ast.parse((PACKAGE / name).read_text(encoding="utf-8"))


def test_package_stub_names_every_lazy_public_name():
    """``__init__.pyi`` imports each name of ``gpuclass.__all__`` from the module that serves it."""
    stub = {a.asname or a.name: "gpuclass." + (node.module or "")
            for node in _stub("__init__.pyi").body if isinstance(node, ast.ImportFrom) for a in node.names}
    assert stub == gpuclass._LAZY
    declared = {n.target.id for n in _stub("__init__.pyi").body if isinstance(n, ast.AnnAssign)}
    assert set(gpuclass.__all__) - set(stub) == {"__version__"} <= declared


def test_core_stub_matches_the_core():
    """``_core.pyi`` declares the core's names with the twin's parameters (both cores share them)."""
    tree = _stub("_core.pyi")
    funcs = {n.name: [a.arg for a in n.args.args] for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    consts = {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    assert set(funcs) | set(classes) | consts == set(twin.__all__)
    for name, params in funcs.items():
        assert params == list(inspect.signature(getattr(twin, name)).parameters), name
    for name, node in classes.items():
        methods = {m.name for m in node.body if isinstance(m, ast.FunctionDef)}
        public = {m for m in vars(getattr(twin, name)) if not m.startswith("_") or m in ("__init__", "__len__")}
        assert methods >= {m for m in public if callable(getattr(getattr(twin, name), m))}, name


NEGATIVE = """\
import gpuclass

gpuclass.does_not_exist()
reveal_type(gpuclass.default_database())
reveal_type(gpuclass.inspect("/"))
reveal_type(gpuclass.audit_paths)
reveal_type(gpuclass.default_database().class_names([0x030200]))
gpuclass.inspect("/", policy=42, db=object())
gpuclass.classify([0x10DE], [0x2BB5], policy=1.5)
gpuclass.validate_pod({}, policy=["gtx-1080"])
gpuclass.audit_paths(["a.csv"], policy=b"policy.yaml")
"""

# what a wrong type given to a public name must be rejected with (line of NEGATIVE, argument)
WRONG_TYPES = [(8, "policy", "inspect", "int"), (8, "db", "inspect", "object"),
               (9, "policy", "classify", "float"), (10, "policy", "validate_pod", "list[str]"),
               (11, "policy", "audit_paths", "bytes")]


def _mypy(tmp_path: Path, *files: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if not {"site-packages", "dist-packages"} & set(PACKAGE.parent.parts):
        # a source checkout or an editable install: point mypy at the package itself
        env["MYPYPATH"] = str(PACKAGE.parent)
    # imported modules are read, not judged: what counts is what the user's code sees
    cmd = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
           "--cache-dir", str(tmp_path / "cache"), *map(str, files)]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


def test_mypy_strict_on_a_user_script(tmp_path):
    neg = tmp_path / "negative.py"
    neg.write_text(NEGATIVE)
    proc = _mypy(tmp_path, HERE / "typing" / "user_script.py", HERE / "typing" / "k8s_script.py", neg)
    lines = proc.stdout.splitlines()
    assert not [ln for ln in lines if "_script.py" in ln], proc.stdout
    errors = [ln for ln in lines if "error:" in ln]
    assert 'Module has no attribute "does_not_exist"' in errors[0], proc.stdout
    wrong = [(int(ln.split(":")[1]), ln) for ln in errors[1:]]
    assert len(wrong) == len(WRONG_TYPES), proc.stdout
    for (line, arg, func, typ), (got, text) in zip(WRONG_TYPES, wrong):
        assert got == line and f'Argument "{arg}" to "{func}" has incompatible type "{typ}"' in text, text
    revealed = [ln.split("Revealed type is ", 1)[1] for ln in lines if "Revealed type is" in ln]
    assert revealed[0] == '"gpuclass.db.database.PciDatabase"'
    assert revealed[1] == '"gpuclass.provisioner.HardwareReport"'
    assert "gpuclass.audit.run.AuditRun" in revealed[2]  # an iterator of ServerReport
    assert revealed[3] in ('"list[str | None]"', '"builtins.list[builtins.str | None]"')


PYRIGHT_NEGATIVE = """\
import gpuclass

report = gpuclass.HardwareReport.example(None)
print(gpuclass.labels_patch(report)["metadata"]["labelz"])
print(gpuclass.device_plugin_config()["sharing"]["timeSlicing"]["replicas"])
"""


def _pyright(tmp_path: Path, *files: Path) -> subprocess.CompletedProcess:
    config: dict = {"typeCheckingMode": "strict", "pythonVersion": "3.10"}
    if not {"site-packages", "dist-packages"} & set(PACKAGE.parent.parts):
        config["extraPaths"] = [str(PACKAGE.parent)]  # a checkout or an editable install
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
    cmd = [sys.executable, "-m", "pyright", "--pythonpath", sys.executable,
           "-p", str(tmp_path / "pyrightconfig.json"), *map(str, files)]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=300)


def test_pyright_strict_on_a_controllers_script(tmp_path):
    proc = _pyright(tmp_path, HERE / "typing" / "k8s_script.py")
    assert proc.returncode == 0 and "0 errors" in proc.stdout, proc.stdout + proc.stderr
    neg = tmp_path / "negative.py"
    neg.write_text(PYRIGHT_NEGATIVE)
    proc = _pyright(tmp_path, neg)
    items = [ln for ln in proc.stdout.splitlines() if "Could not access item in TypedDict" in ln]
    assert [ln.split("negative.py:")[1].split(":")[0] for ln in items] == ["4", "5"], proc.stdout
    assert '"labelz" is not a defined key in "PatchMeta"' in proc.stdout
    assert '"replicas" is not a defined key in "TimeSlicing"' in proc.stdout
