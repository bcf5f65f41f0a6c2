"""What a polars user writes to audit a Parquet device table: a lazy query, Parquet to Parquet.

Tuned as polars' users write it: ``scan_parquet`` (projection pushdown reads only the four
columns the plan names), the GPU test computed once per row (``with_columns``), each count a
filtered ``sum`` in one ``group_by().agg()``, and ``sink_parquet`` (the streaming engine)
writing the result.  polars runs on all cores (its default).  The columns are gpuclass's
per-server columns under the default policy that this plan computes too.

A CSV device table (a path ending in ``.csv``) is scanned with every column as text
(``scan_csv(..., infer_schema=False)``: the IDs are hex text, and inference would read a
class such as ``0300`` as the number 300), the same plan over it.

Usage: python polars_devices.py DEVICES.parquet|DEVICES.csv OUT.parquet
"""

import sys

import polars as pl

ALLOWED = {"gtx-1080": "1b80", "gtx-1080-ti": "1b06", "rtx-4000-sff-ada": "27b0", "rtx-6000-ada": "26b1",
           "rtx-pro-6000-blackwell-workstation": "2bb1", "rtx-pro-6000-blackwell-max-q": "2bb4",
           "rtx-pro-6000-blackwell-server": "2bb5"}


def plan(lf: "pl.LazyFrame") -> "pl.LazyFrame":
    """The per-server plan over a LazyFrame of device rows."""
    cls = pl.col("class")
    gpu = (pl.col("vendor") == "10de") & (cls.str.starts_with("0300") | cls.str.starts_with("0302"))
    dev, g = pl.col("device"), pl.col("_gpu")
    allowed = dev.is_in(list(ALLOWED.values()))
    return (
        lf.select("server", "device", gpu.alias("_gpu"))
        .group_by("server")
        .agg((g & allowed).sum().cast(pl.Int32).alias("supported_cards"),
             (g & ~allowed).sum().cast(pl.Int32).alias("unsupported_gpus"),
             *[(g & (dev == d)).sum().cast(pl.Int32).alias(f"cards.{c}") for c, d in ALLOWED.items()],
             pl.len().alias("rows"))
        .with_columns((pl.col("supported_cards") > 0).alias("gpu_capable"),
                      (4 * pl.col("supported_cards")).alias("slices"))
    )


if __name__ == "__main__":
    src = sys.argv[1]
    scan = pl.scan_csv(src, infer_schema=False) if src.endswith(".csv") else pl.scan_parquet(src)
    plan(scan).sink_parquet(sys.argv[2])
