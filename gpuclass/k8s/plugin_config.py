"""An existing NVIDIA device plugin config checked as the plugin reads it, against the policy.

The plugin (``api/config/v1``, read with ``sigs.k8s.io/yaml``) is lenient where a typo
is costly: YAML becomes JSON and Go's ``encoding/json`` fills the config, dropping any key
it does not know and matching the outer keys (``version``, ``flags``, ``sharing``,
``timeSlicing``) without regard to case; inside ``timeSlicing`` and each of its
``resources`` the plugin looks keys up itself, by exact case.  So
``failRequestGreaterThanOne``, ``FailRequestsGreaterThanOne`` or ``sharng:`` start a
plugin that silently refuses nothing, or shares nothing.  :func:`check_device_plugin_config`
finds every such problem, one :class:`ConfigFinding` each:

- keys the plugin drops (unknown, or miscased where case matters), values of the wrong
  type (the plugin does not start), ``version`` other than ``v1``;
- no time-slicing (``sharing.timeSlicing``), MPS instead, no ``resources``, a resource
  without ``name`` or ``replicas``, ``replicas`` below 2 or other than the policy's, time-slicing
  of a resource other than ``nvidia.com/gpu``, ``renameByDefault: true`` (the resource moves
  to ``nvidia.com/gpu.shared``, which no pod of the platform requests), ``devices`` and
  ``rename`` the plugin ignores;
- ``failRequestsGreaterThanOne`` absent (the plugin then allows any request) or other than
  the policy's ``fail_requests_greater_than_one``;
- in a ConfigMap of several configs: the default key (the Helm chart's ``config.default``,
  else the config-manager's fallbacks ``named``: a key ``default``, ``single``: the only
  key) and a key for every ``nvidia.com/device-plugin.config`` value the policy's nodes
  carry.

>>> [(f.path, f.code) for f in check_device_plugin_config(
...     "version: v1\\nsharing:\\n  timeSlicing:\\n    FailRequestsGreaterThanOne: true\\n"
...     "    resources:\\n    - name: nvidia.com/gpu\\n      replicas: 4\\n")]
[('sharing.timeSlicing.FailRequestsGreaterThanOne', 'miscased-key')]
>>> check_device_plugin_config(device_plugin_configmap())
[]
"""

from __future__ import annotations

import difflib
import os
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from ..constants import DEVICE_PLUGIN_CONFIG_LABEL, DEVICE_PLUGIN_DEFAULT_CONFIG, GPU_RESOURCE, GPU_RESOURCE_SHARED
from ..errors import ManifestError
from ..policy.nodes import config_name
from .labels import device_plugin_configmap
from .objects import load_documents, read_text, wire_form

if TYPE_CHECKING:
    from ..policy import PolicyArg

__all__ = ["ConfigFinding", "check_device_plugin_config", "CONFIG_KEYS"]

Code = Literal["unreadable", "unknown-key", "miscased-key", "type", "version", "no-time-slicing",
               "mps", "no-resources", "resource-name", "replicas", "devices", "rename",
               "rename-by-default", "fail-requests", "ignored-resources", "default-key",
               "config-label", "no-configs"]


class ConfigFinding(BaseModel):
    """One problem of a device plugin config: where (``sharing.timeSlicing.resources[0]``,
    prefixed ``data[KEY].`` in a ConfigMap), what, and what the plugin does with it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    path: str
    code: Code
    message: str


# The plugin's config keys by level (api/config/v1): "fold" levels go through encoding/json
# (case-insensitive), "exact" ones through the plugin's own lookups.
_FLAGS = ("migStrategy", "failOnInitError", "mpsRoot", "nvidiaDriverRoot", "nvidiaDevRoot",
          "gdrcopyEnabled", "gdsEnabled", "mofedEnabled", "useNodeFeatureAPI",
          "deviceDiscoveryStrategy", "plugin", "gfd")
CONFIG_KEYS = {
    "": ("fold", ("version", "flags", "resources", "sharing", "imex")),
    "flags": ("fold", _FLAGS),
    "flags.plugin": ("fold", ("passDeviceSpecs", "deviceListStrategy", "deviceIDStrategy",
                              "cdiAnnotationPrefix", "nvidiaCTKPath", "containerDriverRoot",
                              "sharedDevicesAllocationPolicy")),
    "flags.gfd": ("fold", ("oneshot", "noTimestamp", "sleepInterval", "outputFile", "machineTypeFile")),
    "resources": ("fold", ("gpus", "mig")),
    "sharing": ("fold", ("timeSlicing", "mps")),
    "imex": ("fold", ("channelIDs", "required")),
    "sharing.timeSlicing": ("exact", ("renameByDefault", "failRequestsGreaterThanOne", "resources")),
    "sharing.timeSlicing.resources[]": ("exact", ("name", "rename", "devices", "replicas")),
}
_MIG_STRATEGIES = ("none", "single", "mixed")
# what the plugin does when a key is absent, said where a dropped key was meant as it
_ABSENT = {
    "sharing": f"no time-slicing: each card is advertised once ({GPU_RESOURCE}: 1 per card)",
    "timeSlicing": f"no time-slicing: each card is advertised once ({GPU_RESOURCE}: 1 per card)",
    "failRequestsGreaterThanOne": "a container asking for 2 or more slices gets them",
    "resources": "the plugin does not start ('no resources specified')",
    "replicas": "the plugin does not start ('no replicas specified')",
    "name": "the plugin does not start ('no resource name specified')",
    "renameByDefault": "the resource keeps its name",
}


class _Check:
    """The findings of one config document (``where`` prefixes their paths)."""

    def __init__(self, where: str, out: list[ConfigFinding]) -> None:
        self.where, self.out = where, out
        self.meant: set[str] = set()  # paths of known keys a dropped key was meant as

    def missing(self, path: str) -> bool:
        """Whether the absence of ``path`` is a problem of its own: not when a dropped key
        (already reported) was meant as it."""
        return path not in self.meant

    def add(self, path: str, code: Code, message: str) -> None:
        full = ".".join(p for p in (self.where, path) if p)
        self.out.append(ConfigFinding(path=full, code=code, message=message))

    def keys(self, obj: dict, path: str, level: str) -> dict[str, Any]:
        """``obj``'s values by the plugin's names, each key the plugin drops reported."""
        how, known = CONFIG_KEYS[level]
        folded = {k.lower(): k for k in known}
        got: dict[str, Any] = {}
        for key, value in obj.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and key in known:
                got[key] = value
            elif isinstance(key, str) and key.lower() in folded:
                if how == "fold":  # encoding/json matches it anyway
                    got[folded[key.lower()]] = value
                else:
                    meant = folded[key.lower()]
                    self.meant.add(f"{path}.{meant}" if path else meant)
                    self.add(where, "miscased-key",
                             f"the plugin looks up {meant!r} here by exact case and drops "
                             f"{key!r}: it reads the config as if {meant!r} were absent"
                             + (f" ({_ABSENT[meant]})" if meant in _ABSENT else ""))
            else:
                near = difflib.get_close_matches(str(key), known, n=1, cutoff=0.75)
                hint = ""
                if near:
                    self.meant.add(f"{path}.{near[0]}" if path else near[0])
                    hint = (f" (meant as {near[0]!r}? the config reads as if that were absent"
                            + (f": {_ABSENT[near[0]]})" if near[0] in _ABSENT else ")"))
                self.add(where, "unknown-key",
                         f"unknown key {key!r}: the plugin drops it{hint}; known here: "
                         + ", ".join(known))
        return got

    def mapping(self, value: Any, path: str) -> dict | None:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.add(path, "type", f"expected a mapping, got {type(value).__name__}: the plugin "
                                   "does not start (unmarshal error)")
            return None
        return value

    def typed(self, value: Any, kind: type, path: str) -> bool:
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return True
        self.add(path, "type", f"expected {_KINDS[kind]}, got {value!r}: the plugin does not "
                               "start (unmarshal error)")
        return False


_KINDS = {str: "a string", bool: "true or false", int: "an integer"}


def _config(doc: Any, check: _Check, replicas: int | None, fail: bool) -> None:
    """One config file's problems (``replicas``, ``fail``: what the policy gives its nodes)."""
    top = check.mapping(doc, "")
    if top is None:
        return
    cfg = check.keys(top, "", "")
    version = cfg.get("version")
    if version is not None and check.typed(version, str, "version") and version != "v1":
        check.add("version", "version", f"version {version!r}: the plugin knows only v1 and does "
                                        "not start ('unknown version')")
    flags = check.mapping(cfg.get("flags"), "flags")
    if flags:
        got = check.keys(flags, "flags", "flags")
        for sub in ("plugin", "gfd"):
            inner = check.mapping(got.get(sub), f"flags.{sub}")
            if inner:
                check.keys(inner, f"flags.{sub}", f"flags.{sub}")
        mig = got.get("migStrategy")
        if mig is not None and check.typed(mig, str, "flags.migStrategy") and mig not in _MIG_STRATEGIES:
            check.add("flags.migStrategy", "type", f"migStrategy {mig!r}: the plugin knows "
                                                   + ", ".join(_MIG_STRATEGIES))
    resources = check.mapping(cfg.get("resources"), "resources")
    if resources and check.keys(resources, "resources", "resources"):
        check.add("resources", "ignored-resources",
                  "the plugin ignores custom resources here ('Customizing the resources field is "
                  f"not yet supported'): it advertises {GPU_RESOURCE}")
    imex = check.mapping(cfg.get("imex"), "imex")
    if imex:
        check.keys(imex, "imex", "imex")
    sharing = check.mapping(cfg.get("sharing"), "sharing")
    if sharing is None:
        return
    sharing = check.keys(sharing, "sharing", "sharing")
    if sharing.get("mps") is not None:
        check.add("sharing.mps", "mps", "MPS sharing replaces time-slicing (the plugin uses mps "
                                        "when set): the platform time-slices its cards")
    ts = sharing.get("timeSlicing")
    if ts is None:
        if check.missing("sharing") and check.missing("sharing.timeSlicing"):
            check.add("sharing.timeSlicing" if "sharing" in cfg else "sharing", "no-time-slicing",
                      f"no time-slicing: the plugin advertises each card once ({GPU_RESOURCE}: 1 "
                      f"per card, not {replicas or 'several'})")
        return
    ts = check.mapping(ts, "sharing.timeSlicing")
    if ts is None:
        return
    _time_slicing(check.keys(ts, "sharing.timeSlicing", "sharing.timeSlicing"), check, replicas, fail)


def _time_slicing(ts: dict, check: _Check, replicas: int | None, fail: bool) -> None:
    base = "sharing.timeSlicing"
    rename = ts.get("renameByDefault", False)
    if check.typed(rename, bool, f"{base}.renameByDefault") and rename:
        check.add(f"{base}.renameByDefault", "rename-by-default",
                  f"renameByDefault: true moves the resource to {GPU_RESOURCE_SHARED}: the "
                  f"platform's pods request {GPU_RESOURCE} and stay Pending")
    frgto = ts.get("failRequestsGreaterThanOne")
    if frgto is None:
        if fail and check.missing(f"{base}.failRequestsGreaterThanOne"):
            check.add(f"{base}.failRequestsGreaterThanOne", "fail-requests",
                      "failRequestsGreaterThanOne is absent: the plugin then hands a container "
                      f"asking for 2 or more {GPU_RESOURCE} that many slices (maybe of one card); "
                      "the policy refuses them: set it to true")
    elif check.typed(frgto, bool, f"{base}.failRequestsGreaterThanOne") and frgto is not fail:
        check.add(f"{base}.failRequestsGreaterThanOne", "fail-requests",
                  f"failRequestsGreaterThanOne: {str(frgto).lower()}, the policy's "
                  f"fail_requests_greater_than_one is {str(fail).lower()}")
    items = ts.get("resources")
    if not items:
        check.add(f"{base}.resources", "no-resources",
                  "no resources: the plugin does not start ('no resources specified')")
        return
    if not isinstance(items, list):
        check.add(f"{base}.resources", "type", "expected a list: the plugin does not start")
        return
    gpu = False
    for i, item in enumerate(items):
        where = f"{base}.resources[{i}]"
        r = check.mapping(item, where)
        if r is None:
            continue
        r = check.keys(r, where, "sharing.timeSlicing.resources[]")
        name = r.get("name")
        if name is None and not check.missing(f"{where}.name"):
            gpu = True  # the dropped key is reported
        elif name is None:
            check.add(f"{where}.name", "resource-name", "no name: the plugin does not start "
                                                        "('no resource name specified')")
            gpu = True  # said once: the plugin stops there
        elif check.typed(name, str, f"{where}.name"):
            full = name if name.startswith("nvidia.com/") else f"nvidia.com/{name}"
            if full == GPU_RESOURCE:
                gpu = True
            else:
                check.add(f"{where}.name", "resource-name",
                          f"{full} is not the resource the platform's cards give ({GPU_RESOURCE})")
        count = r.get("replicas")
        if count is None and not check.missing(f"{where}.replicas"):
            pass  # the dropped key is reported
        elif count is None:
            check.add(f"{where}.replicas", "replicas", "no replicas: the plugin does not start "
                                                       "('no replicas specified')")
        elif check.typed(count, int, f"{where}.replicas"):
            if count < 2:
                check.add(f"{where}.replicas", "replicas",
                          f"replicas {count}: the plugin does not start ('number of replicas "
                          "must be >= 2')")
            elif replicas is not None and count != replicas:
                check.add(f"{where}.replicas", "replicas",
                          f"replicas {count}: the policy gives the nodes of this config {replicas} "
                          "slices per card")
        if r.get("devices", "all") != "all":
            check.add(f"{where}.devices", "devices", "the plugin ignores a device selection and "
                                                     "time-slices every GPU ('devices: all')")
        if r.get("rename") is not None:
            check.add(f"{where}.rename", "rename", "the plugin ignores rename: the resource keeps "
                                                   "its name (or .shared with renameByDefault)")
    if not gpu:
        check.add(f"{base}.resources", "resource-name",
                  f"no resource is {GPU_RESOURCE}: its cards are not time-sliced (1 per card)")


def _texts(config: Any, source: str | None) -> tuple[list[Any], str | None]:
    """The documents of ``config``: a path (``-``: stdin), YAML/JSON text, a dict or a client model."""
    if isinstance(config, os.PathLike) or (
            isinstance(config, str) and "\n" not in config and os.path.isfile(config)):
        text, source = read_text(config)
        return load_documents(text, source), source
    if isinstance(config, (str, bytes)):
        return load_documents(config, source), source
    if isinstance(config, dict):
        return [config], source
    return [wire_form(config)], source


def check_device_plugin_config(config: Any, *, policy: PolicyArg = None, default_key: str | None = None,
                               source: str | None = None) -> list[ConfigFinding]:
    """Every problem of a device plugin config, as the plugin and its config-manager read it.

    ``config`` is one config file or a ConfigMap of configs (what ``gpuclass labels
    --configmap`` makes, or the Helm chart's ``config.name``), as a path, YAML/JSON text, a
    dict or a client ``V1ConfigMap``.  ``policy`` (default: the platform's) says what the
    configs must give: its ``slices_per_card`` under the default key, ``N`` under
    ``replicas-N``, and ``fail_requests_greater_than_one``; ``default_key`` is the chart's
    ``config.default`` where one is set.  An empty list: nothing to fix.  Text that does not
    read at all is a :class:`~gpuclass.errors.ManifestError`.
    """
    from ..policy import compile_policy

    compiled = compile_policy(policy)
    fail = compiled.fail_requests_greater_than_one
    docs, source = _texts(config, source)
    out: list[ConfigFinding] = []
    if len(docs) != 1:
        raise ManifestError("", f"expected one config or ConfigMap, found {len(docs)} documents", source)
    (doc,) = docs
    if not (isinstance(doc, dict) and doc.get("kind") == "ConfigMap"):
        _config(doc, _Check("", out), compiled.slices_per_card, fail)
        return out
    data = doc.get("data") or {}
    if not isinstance(data, dict) or not data:
        out.append(ConfigFinding(path="data", code="no-configs", message=(
            "no configs: the config-manager finds no configuration files and the plugin does not start")))
        return out
    labelled = sorted({config_name(c["slices"]) for c in compiled.cards
                       if c["slices"] != compiled.slices_per_card})
    per_key = {config_name(c["slices"]): c["slices"] for c in compiled.cards}
    default = _default_key(data, default_key, out)
    for key in labelled:
        if key not in data:
            out.append(ConfigFinding(path="data", code="config-label", message=(
                f"no key {key!r}, which the nodes of the policy's cards with {per_key[key]} slices "
                f"select ({DEVICE_PLUGIN_CONFIG_LABEL}={key}): the config-manager fails there "
                f"('specified config {key} does not exist')")))
    for key, text in data.items():
        check = _Check(f"data[{key}]", out)
        try:
            (parsed,) = load_documents(text, source) if isinstance(text, str) else [None]
        except (ManifestError, ValueError) as exc:
            check.add("", "unreadable", f"does not read as one YAML document ({exc}): the plugin "
                                        "does not start on the nodes that select it")
            continue
        _config(parsed, check, _replicas_of(key, default, compiled.slices_per_card), fail)
    return out


def _replicas_of(key: str, default: str | None, slices_per_card: int) -> int | None:
    """The replicas a config must give: the policy's default under the default key, ``N``
    under ``replicas-N`` (the key gpuclass gives the nodes of cards with their own slices);
    None (any count the plugin takes) under any other key."""
    if key == default:
        return slices_per_card
    match = re.fullmatch(r"replicas-([0-9]{1,6})", key)
    return int(match.group(1)) if match else None


def _default_key(data: dict, default_key: str | None, out: list[ConfigFinding]) -> str | None:
    """The key a node without the config label gets, with a finding where there is none."""
    if default_key is not None:
        if default_key not in data:
            out.append(ConfigFinding(path="data", code="default-key", message=(
                f"config.default names {default_key!r}, which the ConfigMap lacks: the "
                "config-manager fails on every node without the label ('specified config does "
                "not exist')")))
            return None
        return default_key
    if DEVICE_PLUGIN_DEFAULT_CONFIG in data:
        return DEVICE_PLUGIN_DEFAULT_CONFIG
    if len(data) == 1:
        return next(iter(data))  # the "single" fallback
    out.append(ConfigFinding(path="data", code="default-key", message=(
        f"{len(data)} configs and none named {DEVICE_PLUGIN_DEFAULT_CONFIG!r}: with the Helm chart's "
        "config.default unset and its fallbacks (named, single), the config-manager fails on every "
        "node without the label ('no config was set, no default was provided, and all fallbacks "
        f"failed'); name the default key {DEVICE_PLUGIN_DEFAULT_CONFIG!r} or set config.default")))
    return None
