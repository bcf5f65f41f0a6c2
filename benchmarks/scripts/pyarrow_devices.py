"""What an Arrow user writes to audit a Parquet device table: read, classify, group, write.

Usage: python pyarrow_devices.py DEVICES.parquet OUT.parquet
"""

import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ALLOWED = {"gtx-1080": "1b80", "gtx-1080-ti": "1b06", "rtx-4000-sff-ada": "27b0", "rtx-6000-ada": "26b1",
           "rtx-pro-6000-blackwell-workstation": "2bb1", "rtx-pro-6000-blackwell-max-q": "2bb4",
           "rtx-pro-6000-blackwell-server": "2bb5"}

t = pq.read_table(sys.argv[1], columns=["server", "vendor", "device", "class"])
gpu = pc.is_in(pc.utf8_slice_codeunits(t["class"], 0, 4), value_set=pa.array(["0300", "0302"]))
nvidia_gpu = pc.and_(gpu, pc.equal(t["vendor"], "10de"))
cols = {"server": t["server"]}
supported = None
for card, device in ALLOWED.items():
    hit = pc.and_(nvidia_gpu, pc.equal(t["device"], device))
    cols[card] = hit
    supported = hit if supported is None else pc.or_(supported, hit)
cols["supported"] = supported
cols["unsupported"] = pc.and_(nvidia_gpu, pc.invert(supported))
per_server = pa.table(cols).group_by("server").aggregate(
    [(c, "sum") for c in (*ALLOWED, "supported", "unsupported")])
per_server = per_server.append_column("slices", pc.multiply(per_server["supported_sum"], 4))
pq.write_table(per_server, sys.argv[2])
