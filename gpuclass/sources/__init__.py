"""Hardware sources: every way a machine's PCI devices reach gpuclass, as one DeviceTable.

- :mod:`~gpuclass.sources.sysfs`: ``<root>/sys/bus/pci/devices`` (the live machine or a
  mounted one), read by the native core;
- :mod:`~gpuclass.sources.lspci`: collected ``lspci`` output, one module per text form,
  and the writer back to text;
- :mod:`~gpuclass.sources.modalias`: ``pci:v...`` modalias strings;
- :mod:`~gpuclass.sources.cpu`: ``proc/cpuinfo`` and ``dev/kvm``, for the secure runtime.

A device a source cannot read is a flagged row, never a dropped one.
"""
