"""The cluster's view: what a node must carry, pods checked before they run, diagnoses.

- :mod:`~gpuclass.k8s.objects`: Kubernetes objects in (YAML/JSON text, files, dicts,
  client models) and quantities;
- :mod:`~gpuclass.k8s.labels`: node labels, expected GPU capacity, the device plugin's
  time-slicing ConfigMap;
- :mod:`~gpuclass.k8s.pods`: :func:`validate_pod`, one slice per container;
- :mod:`~gpuclass.k8s.diagnose`: why GPU pods do not schedule on a node.

Generated objects are plain dicts ready for the API.
"""
