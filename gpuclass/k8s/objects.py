"""Reading Kubernetes objects: YAML/JSON text, dicts, files, client models; quantities.

The controller takes objects the way people have them at hand: the output of
``kubectl get -o yaml`` (one object, or a ``List``), a manifest file, a dict, a
model of the official ``kubernetes`` client (``V1Pod``, ``V1NodeList``, ...) or
such a model's ``to_dict()`` (snake_case keys such as ``init_containers``).
Everything becomes a plain dict in the API's own (camelCase) form here, lists are
unpacked by :func:`as_objects`, and anything unreadable becomes a
:class:`~gpuclass.errors.ManifestError` with the file and, for YAML, the line.
Quantities are read by :mod:`gpuclass.k8s.quantity`.

>>> parse_quantity("2"), parse_quantity("1500m"), parse_quantity("1k")
(Fraction(2, 1), Fraction(3, 2), Fraction(1000, 1))
>>> as_object("kind: Node\\nmetadata: {name: n1}\\n")["metadata"]
{'name': 'n1'}
>>> pod = {"api_version": "v1", "kind": "Pod", "metadata": None,
...        "spec": {"init_containers": [{"name": "i"}], "containers": []}}
>>> as_object(pod)["spec"]          # a client model's to_dict()
{'initContainers': [{'name': 'i'}], 'containers': []}
"""

from __future__ import annotations

import os

from ..documents import DocumentError, iter_json_lines, iter_yaml, load_json, looks_like_json
from ..errors import ManifestError, SourceError
from ..inputs import input_name, read_input
from .quantity import MAX_QUANTITY_CHARS, parse_quantity, quantity_text

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: a command's YAML output imports no typing
    from typing import Any

__all__ = ["load_documents", "read_documents", "read_text", "check_shape", "as_object", "as_objects",
           "wire_form", "parse_quantity", "quantity_text", "dig", "meta_str", "dump_yaml",
           "MAX_QUANTITY_CHARS"]


def _manifest_error(exc: DocumentError, source: str | None, doc: int | None = None) -> ManifestError:
    where = exc.where
    if exc.line is not None and not where.startswith("line "):
        where = f"{where} (line {exc.line})" if where else f"line {exc.line}"
    if doc is not None:
        where = f"document {doc}" + (f": {where}" if where else "")
    return ManifestError(where, exc.reason, source)


def _parsed(text: str | bytes) -> list[Any]:
    """Every document of the text, or a DocumentError in the place of a bad one.

    JSON (one document, or one per line) is read by the json module, which is
    fast; anything else, and JSON that does not parse (a YAML flow mapping
    starts with ``{`` too), as YAML.
    """
    if looks_like_json(text):
        try:
            return [load_json(text)]
        except DocumentError as exc:
            if "Extra data" in exc.reason:  # one JSON value per line (NDJSON)
                return list(iter_json_lines(text))
            if "malformed JSON" not in exc.reason:
                return [exc]
    return list(iter_yaml(text))


def load_documents(text: str | bytes, source: str | None = None) -> list[Any]:
    """Every document of a YAML, JSON or NDJSON stream; empty documents are dropped.

    Anything unreadable or past a bound (see :mod:`gpuclass.documents`) is a
    :class:`ManifestError` naming the field, the line and the document.
    """
    docs = _parsed(text)
    many = len(docs) > 1
    for i, doc in enumerate(docs):
        if isinstance(doc, DocumentError):
            raise _manifest_error(doc, source, i + 1 if many else None)
    return [d for d in docs if d is not None]


def read_text(path: str | os.PathLike) -> tuple[str, str]:
    """``(text, source name)`` of a file (``-``: standard input): a regular file of at most
    ``LIMITS["manifest"]`` bytes, UTF-8 (a BOM dropped); else a :class:`ManifestError`."""
    name = input_name(path)
    try:
        data = read_input(path, "manifest")
    except SourceError as exc:
        raise ManifestError("", exc.reason, name) from None
    try:
        return data.decode("utf-8-sig"), name
    except UnicodeDecodeError as exc:
        raise ManifestError("", f"not UTF-8 text ({exc.reason} at byte {exc.start})", name) from None


def check_shape(doc: Any) -> tuple[str, str] | None:
    """``(field path, reason)`` where a Kubernetes object has the wrong shape, or None.

    The fields every object shares must have their types: the object and its
    ``metadata``, ``spec`` and ``status`` are mappings, ``apiVersion``, ``kind``
    and ``metadata``'s names strings, labels and annotations maps of strings.

    >>> check_shape({"kind": "Pod", "metadata": {"labels": {"a": 1}}})
    ('metadata.labels.a', 'expected a string, got int')
    """
    if not isinstance(doc, dict):
        return "", f"expected an object (a mapping), got {type(doc).__name__}"
    for key in ("apiVersion", "kind"):
        if doc.get(key) is not None and not isinstance(doc[key], str):
            return key, f"expected a string, got {type(doc[key]).__name__}"
    for key in ("metadata", "spec", "status"):
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            return key, f"expected a mapping, got {type(doc[key]).__name__}"
    meta = doc.get("metadata") or {}
    for key in ("name", "namespace", "generateName", "uid", "resourceVersion"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            return f"metadata.{key}", f"expected a string, got {type(meta[key]).__name__}"
    for key in ("labels", "annotations"):
        values = meta.get(key)
        if values is None:
            continue
        if not isinstance(values, dict):
            return f"metadata.{key}", f"expected a mapping, got {type(values).__name__}"
        for k, v in values.items():
            if not isinstance(k, str):
                return f"metadata.{key}", f"keys must be strings, found {type(k).__name__}"
            if v is not None and not isinstance(v, str):
                return f"metadata.{key}.{k}", f"expected a string, got {type(v).__name__}"
    return None


def read_documents(path: str | os.PathLike, *, keep_errors: bool = False) -> tuple[list[Any], str]:
    """``(documents, source name)`` of a file (``-``: standard input); a ``List`` (or
    ``NodeList``, ``PodList``, ...) is unpacked, and every object is in wire form
    (:func:`wire_form`).

    The file is a regular file of at most ``LIMITS["manifest"]`` bytes.  Each
    document (each item of a list) must read and have the shape of a
    Kubernetes object (:func:`check_shape`); a bad one is a
    :class:`ManifestError` naming the document and the field.  With
    ``keep_errors`` that error takes the bad document's place and the others
    are still returned (one bad document never loses the rest).
    """
    text, name = read_text(path)
    docs = [d for d in _parsed(text) if d is not None]
    many = len(docs) > 1
    out: list[Any] = []
    for i, doc in enumerate(docs):
        if isinstance(doc, DocumentError):
            err = _manifest_error(doc, name, i + 1 if many else None)
            if not keep_errors:
                raise err
            out.append(err)
            continue
        doc = wire_form(doc)
        listed, prefix = _list_items(doc), "items"
        kind = doc.get("kind") if isinstance(doc, dict) else None
        if listed is not None:
            checked = [(item, check_shape(item)) for item in listed]
        elif isinstance(kind, str) and kind.endswith("List"):  # a list whose items are not one
            checked = [(doc, ("items", f"expected a list, got {type(doc.get('items')).__name__}"))]
            prefix = ""
        else:
            checked, prefix = [(doc, check_shape(doc))], ""
        for j, (item, bad) in enumerate(checked):
            if bad is not None:
                where = ".".join(p for p in (f"{prefix}[{j}]" if prefix else "", bad[0]) if p)
                if many:
                    where = f"document {i + 1}" + (f": {where}" if where else "")
                item = ManifestError(where, bad[1], name)
                if not keep_errors:
                    raise item
            out.append(item)
    return out, name


# snake_case attribute names of the kubernetes client whose wire name is not their plain
# camelCase (its models' attribute_map; tests/k8s check this table against the client)
_IRREGULAR = {
    "_continue": "continue", "_except": "except", "_exec": "exec", "_from": "from", "_not": "not",
    "api_server_id": "apiServerID", "boot_id": "bootID", "client_cidr": "clientCIDR",
    "client_ip": "clientIP", "cluster_ip": "clusterIP", "cluster_ips": "clusterIPs",
    "container_id": "containerID", "dataset_uuid": "datasetUUID", "disk_uri": "diskURI",
    "downward_api": "downwardAPI", "external_id": "externalID", "external_ips": "externalIPs",
    "host_ip": "hostIP", "host_ipc": "hostIPC", "host_ips": "hostIPs", "host_pid": "hostPID",
    "image_id": "imageID", "insecure_skip_tls_verify": "insecureSkipTLSVerify",
    "load_balancer_ip": "loadBalancerIP", "machine_id": "machineID", "node_id": "nodeID",
    "node_uid": "nodeUID", "pd_id": "pdID", "pod_cidr": "podCIDR", "pod_cidrs": "podCIDRs",
    "pod_ip": "podIP", "pod_ips": "podIPs", "pod_uid": "podUID", "provider_id": "providerID",
    "resource_id": "resourceID", "scale_io": "scaleIO", "service_account_uid": "serviceAccountUID",
    "set_hostname_as_fqdn": "setHostnameAsFQDN", "share_id": "shareID",
    "storage_policy_id": "storagePolicyID", "system_uuid": "systemUUID",
    "target_wwns": "targetWWNs", "volume_id": "volumeID",
}
# Fields whose value is a map with keys of the user's (label keys, resource names, ...):
# their keys are data, never attribute names.
_FREE_MAPS = frozenset({
    "labels", "annotations", "capacity", "allocatable", "limits", "requests", "node_selector",
    "data", "binary_data", "string_data", "match_labels", "overhead", "allocated_resources",
    "allocated_resource_statuses", "volume_attributes", "options", "user_annotations",
    "parameters", "hard", "used",
})
# the one field whose wire name depends on where it is: a Node's kubelet endpoint's "Port"
_IN_PARENT = {("kubelet_endpoint", "port"): "Port"}


def _camel(key: str, parent: str | None = None) -> str:
    if (parent, key) in _IN_PARENT:
        return _IN_PARENT[(parent, key)]
    if key in _IRREGULAR:
        return _IRREGULAR[key]
    head, *rest = key.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _from_snake(value: Any, free: bool = False, parent: str | None = None) -> Any:
    """A client model's ``to_dict()`` in the API's wire form (what the API server sends)."""
    import datetime

    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, list):
        return [_from_snake(v, parent=parent) for v in value]
    if not isinstance(value, dict):
        return value
    if free:
        return {k: _from_snake(v) for k, v in value.items()}
    out = {}
    for k, v in value.items():
        if v is None or not isinstance(k, str):  # the client leaves unset fields as None
            continue
        # a Service's selector is a plain map, a workload's a LabelSelector
        plain = k in _FREE_MAPS or (k == "selector" and isinstance(v, dict)
                                    and not {"match_labels", "match_expressions"} & set(v))
        out[_camel(k, parent)] = _from_snake(v, plain, k)
    return out


def _is_client_model(obj: Any) -> bool:
    return hasattr(obj, "openapi_types") and hasattr(obj, "attribute_map") and hasattr(obj, "to_dict")


def wire_form(obj: Any) -> Any:
    """An object in the API's own form: a client model serialized, a ``to_dict()`` (snake_case
    keys) renamed; anything else as it is.

    >>> wire_form({"api_version": "v1", "kind": "Pod", "metadata": {"labels": {"a_b": "c"}}})
    {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'labels': {'a_b': 'c'}}}
    """
    if _is_client_model(obj):
        from kubernetes.client import ApiClient  # only where a client model was given

        return ApiClient().sanitize_for_serialization(obj)
    # the API never sends an underscore in a field name; to_dict() always does (api_version,
    # init_containers, ...), so one such top-level key marks its output
    if isinstance(obj, dict) and any(isinstance(k, str) and "_" in k for k in obj):
        return _from_snake(obj)
    return obj


def _list_items(obj: Any) -> list | None:
    """The items of a ``List``, ``NodeList``, ``PodList``, ... (with the item kind filled in)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("items"), list):
        return None
    kind = obj.get("kind")
    if kind is not None and not (isinstance(kind, str) and kind.endswith("List")):
        return None
    if kind is None and set(obj) - {"items", "metadata", "apiVersion"}:
        return None
    item_kind = kind[: -len("List")] if isinstance(kind, str) and kind != "List" else None
    out = []
    for item in obj["items"]:
        item = wire_form(item)
        # the API server leaves kind and apiVersion out of a typed list's items
        if item_kind and isinstance(item, dict) and item.get("kind") is None:
            item = {"kind": item_kind, **item}
        out.append(item)
    return out


def as_objects(obj: Any, source: str | None = None) -> list[Any]:
    """Every object of ``obj``: one object, a list of them, a ``List``/``NodeList``/``PodList``
    (as dict, YAML/JSON text, a path or a client model), lists unpacked, in wire form.

    >>> [n["metadata"]["name"] for n in as_objects({"kind": "NodeList", "items": [
    ...     {"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]})]
    ['a', 'b']
    """
    if isinstance(obj, str) and "\n" not in obj and os.path.isfile(obj):
        from pathlib import Path

        obj = Path(obj)  # a file name rather than YAML text
    if isinstance(obj, os.PathLike):
        docs, source = read_documents(obj)
    elif isinstance(obj, (str, bytes)):
        docs = load_documents(obj, source)
    elif isinstance(obj, (list, tuple)):
        docs = list(obj)
    else:
        docs = [obj]
    out: list[Any] = []
    for doc in docs:
        doc = wire_form(doc)
        items = _list_items(doc)
        out.extend([doc] if items is None else items)
    return out


def as_object(obj: Any, source: str | None = None, what: str = "object") -> dict:
    """One Kubernetes object as a dict: from a dict, YAML/JSON text, a path, a client model or
    its ``to_dict()``; a list or ``List`` of exactly one object gives that object."""
    if source is None and (isinstance(obj, os.PathLike) or (
            isinstance(obj, str) and "\n" not in obj and os.path.isfile(obj))):
        source = os.fspath(obj)
    docs = as_objects(obj, source)
    if len(docs) != 1:
        raise ManifestError("", f"expected one {what}, found {len(docs)} objects", source)
    doc = docs[0]
    if not isinstance(doc, dict):
        raise ManifestError("", f"expected a {what} (a mapping), got {type(doc).__name__}", source)
    return doc


def dig(obj: dict, path: str, default: Any = None) -> Any:
    """``obj["a"]["b"]`` for ``"a.b"``; ``default`` where a level is missing or not a mapping.

    >>> dig({"a": {"b": 1}}, "a.b"), dig({"a": None}, "a.b", 0)
    (1, 0)
    """
    cur: Any = obj
    for key in path.split("."):
        if not isinstance(cur, dict) or key not in cur:
            return default
        cur = cur[key]
    return default if cur is None else cur


def dump_yaml(obj: Any) -> str:
    """YAML for people and ``kubectl apply``: keys in order, multi-line strings as ``|`` blocks.

    >>> print(dump_yaml({"data": {"f": "a: 1\\nb: 2\\n"}}), end="")
    data:
      f: |
        a: 1
        b: 2
    """
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper, value):
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False)


def meta_str(meta: dict, key: str, source: str | None) -> str | None:
    """``metadata.<key>`` when it is a string (or absent); anything else is a ManifestError."""
    value = meta.get(key)
    if value is not None and not isinstance(value, str):
        raise ManifestError(f"metadata.{key}", f"expected a string, got {type(value).__name__}", source)
    return value
