"""What an Arrow user writes to audit a Parquet device table: read, classify, group, write.

Tuned: the ID columns are read as dictionaries and each test runs once per distinct value
(on each row group's dictionary), then is looked up by the indices (pyarrow's string
kernels take no dictionaries).  Read as plain strings, the same script took about a fifth
longer on the benchmark's 5M rows, with the same output.

Usage: python pyarrow_devices.py DEVICES.parquet OUT.parquet
"""

import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ALLOWED = {"gtx-1080": "1b80", "gtx-1080-ti": "1b06", "rtx-4000-sff-ada": "27b0", "rtx-6000-ada": "26b1",
           "rtx-pro-6000-blackwell-workstation": "2bb1", "rtx-pro-6000-blackwell-max-q": "2bb4",
           "rtx-pro-6000-blackwell-server": "2bb5"}

t = pq.read_table(sys.argv[1], columns=["server", "vendor", "device", "class"],
                  read_dictionary=["vendor", "device", "class"])


def per_value(column, test):
    """``test`` applied to each chunk's dictionary once, then looked up by the indices."""
    return pa.chunked_array([test(c.dictionary).take(c.indices) for c in column.chunks], pa.bool_())


gpu = per_value(t["class"], lambda d: pc.is_in(pc.utf8_slice_codeunits(d, 0, 4),
                                                value_set=pa.array(["0300", "0302"])))
nvidia_gpu = pc.and_(gpu, per_value(t["vendor"], lambda d: pc.equal(d, "10de")))
cols = {"server": t["server"]}
supported = None
for card, device in ALLOWED.items():
    hit = pc.and_(nvidia_gpu, per_value(t["device"], lambda d: pc.equal(d, device)))
    cols[card] = hit
    supported = hit if supported is None else pc.or_(supported, hit)
cols["supported"] = supported
cols["unsupported"] = pc.and_(nvidia_gpu, pc.invert(supported))
per_server = pa.table(cols).group_by("server").aggregate(
    [(c, "sum") for c in (*ALLOWED, "supported", "unsupported")])
per_server = per_server.append_column("slices", pc.multiply(per_server["supported_sum"], 4))
pq.write_table(per_server, sys.argv[2])
