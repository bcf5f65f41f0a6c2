"""The cluster's view: what a node must carry, pods checked before they run, diagnoses.

- :mod:`~gpuclass.k8s.objects`: Kubernetes objects in (YAML/JSON text, files, dicts,
  lists, client models and their ``to_dict()``);
- :mod:`~gpuclass.k8s.quantity`: quantities, read as apimachinery reads them;
- :mod:`~gpuclass.k8s.labels`: node labels (the node decision of
  :mod:`gpuclass.policy.nodes`), the Node patch, expected GPU capacity, the device plugin's
  time-slicing ConfigMap (from the policy), GPU Feature Discovery's product names;
- :mod:`~gpuclass.k8s.publish`: the same labels for node-feature-discovery (a feature
  file, a ``NodeFeature``) and the ``HetznerBareMetalHost`` patch of the GPU pool;
- :mod:`~gpuclass.k8s.plugin_config`: a deployed device plugin config checked as the
  plugin reads it;
- :mod:`~gpuclass.k8s.pods`: :func:`validate_pod`, one slice per container;
- :mod:`~gpuclass.k8s.admission`: the same rule at the API server (a
  ``ValidatingAdmissionPolicy``) and a webhook's ``AdmissionReview`` answer;
- :mod:`~gpuclass.k8s.diagnose` (reading a Node in :mod:`~gpuclass.k8s.nodefacts`): why
  GPU pods do not schedule on a node (or on each of many).

Generated objects are plain dicts ready for the API; :mod:`~gpuclass.k8s.types` gives type
checkers their shapes.
"""
