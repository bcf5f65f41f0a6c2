"""The cluster's view: what a node must carry, pods checked before they run, diagnoses.

- :mod:`~gpuclass.k8s.objects`: Kubernetes objects in (YAML/JSON text, files, dicts,
  lists, client models and their ``to_dict()``);
- :mod:`~gpuclass.k8s.quantity`: quantities, read as apimachinery reads them;
- :mod:`~gpuclass.k8s.labels`: node labels, expected GPU capacity, the device plugin's
  time-slicing ConfigMap (from the policy), GPU Feature Discovery's product names;
- :mod:`~gpuclass.k8s.pods`: :func:`validate_pod`, one slice per container;
- :mod:`~gpuclass.k8s.diagnose`: why GPU pods do not schedule on a node (or on each of many).

Generated objects are plain dicts ready for the API.
"""
