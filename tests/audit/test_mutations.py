"""Damaged inputs of every kind: truncated, bytes flipped, quotes inserted, lines doubled or
dropped.  Every record comes out exactly once (flagged where damaged), or the run stops with
a typed error: never a clean run with rows missing or invented."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import tarfile
import tempfile
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit_samples import LSPCI, auction_listing
from gpuclass.audit import audit_paths
from gpuclass.errors import GpuclassError
from lspci_samples import GEX44_NN_RESCUE, GEX44_NNK_FLAT, GEX130_IOMMU_LOOP, SRIOV_NN, VMM

RECORDS = auction_listing(24, seed=5)
MUTATION = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("flip"), st.floats(0, 1), st.integers(1, 255)),
    st.tuples(st.just("quote"), st.floats(0, 1)),
    st.tuples(st.just("dup"), st.floats(0, 1)),
    st.tuples(st.just("drop"), st.floats(0, 1)),
)
MUTATIONS = st.lists(MUTATION, min_size=1, max_size=3)
SETTINGS = settings(max_examples=int(os.environ.get("GPUCLASS_MUTATIONS", "40")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def mutate(data: bytes, ops) -> bytes:
    for op in ops:
        if not data:
            break
        at = min(int(op[1] * len(data)), len(data) - 1)
        if op[0] == "truncate":
            data = data[:at]
        elif op[0] == "flip":
            data = data[:at] + bytes([data[at] ^ op[2]]) + data[at + 1:]
        elif op[0] == "quote":
            data = data[:at] + b'"' + data[at:]
        else:
            lines = data.split(b"\n")
            i = min(int(op[1] * len(lines)), len(lines) - 1)
            if op[0] == "dup":
                lines.insert(i, lines[i])
            else:
                del lines[i]
            data = b"\n".join(lines)
    return data


def audit(data: bytes, name: str):
    """(reports, skipped), or None for a typed error; anything else fails the test."""
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, name)
        with open(p, "wb") as fh:
            fh.write(data)
        try:
            run = audit_paths([p])
            return list(run), run.skipped
        except GpuclassError:
            return None


# -- feeds --------------------------------------------------------------------------

@SETTINGS
@given(MUTATIONS, st.booleans())
def test_feed(ops, array):
    doc = [dict(r) for r in RECORDS] if array else {"server": [dict(r) for r in RECORDS]}
    data = mutate(json.dumps(doc, indent=1).encode(), ops)
    got = audit(data, "auction.json")
    if got is None:
        return
    reports, _ = got
    try:  # undecodable bytes read as U+FFFD, as every text input's
        parsed = json.loads(data.decode("utf-8", "replace").lstrip("\ufeff"))
    except ValueError:
        parsed = None
    items = parsed if isinstance(parsed, list) else parsed.get("server") if isinstance(parsed, dict) else None
    if isinstance(items, list):
        assert len(reports) == len(items)   # intact JSON: one report per record, exactly
    else:  # damaged: never a clean run, and no clean row that was not a record
        assert any(r.problems for r in reports)
        assert sum(not r.problems for r in reports) <= len(RECORDS)


@SETTINGS
@given(MUTATIONS)
def test_ndjson(ops):
    data = mutate("\n".join(json.dumps(r) for r in RECORDS).encode() + b"\n", ops)
    got = audit(data, "feed.ndjson")
    assert got is not None
    reports, _ = got
    lines = [x for x in data.decode("utf-8", "replace").split("\n") if x.strip()]
    assert len(reports) == len(lines)
    for line, r in zip(lines, reports):
        try:
            ok = isinstance(json.loads(line), dict)
        except ValueError:
            ok = False
        if not ok:
            assert r.problems


@SETTINGS
@given(MUTATIONS)
def test_compressed_feed(ops):
    raw = json.dumps(RECORDS).encode()
    got = audit(mutate(gzip.compress(raw), ops), "sb-120000.json.gz")
    if got is not None:  # gzip's CRC catches what it can; what reads is every record or flagged
        reports, _ = got
        assert len(reports) == len(RECORDS) or any(r.problems for r in reports)


# -- CSV ------------------------------------------------------------------------------

def csv_bytes(rows, header):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue().encode()


def clean_lines(text: str) -> list[str]:
    """Data lines outside any quote a line before them left open."""
    out, parity = [], 0
    for line in text.split("\n")[1:]:
        odd = line.count('"') % 2
        if parity == 0 and not odd and line.strip():
            out.append(line)
        parity ^= odd
    return out


def check_csv(data: bytes, header: list[str], reports) -> None:
    """None invented (rows out <= data lines); none swallowed (the id of every line no quote
    left open before it is a report's)."""
    text = data.decode("utf-8", "replace").lstrip("\ufeff")
    data_lines = [x for x in text.split("\n")[1:] if x.strip()]
    assert sum(r.rows for r in reports) <= len(data_lines)
    if text.split("\n", 1)[0] != ",".join(header):
        return  # a damaged header names other columns: the count above is what holds
    servers = {r.server for r in reports}
    for line in clean_lines(text):
        try:
            cells = next(csv.reader([line]))
        except csv.Error:  # a bare carriage return: a flagged row, its id unread
            continue
        if len(cells) == len(header) and cells[0]:
            assert cells[0] in servers, line


@SETTINGS
@given(MUTATIONS)
def test_text_csv(ops):
    header = ["id", "description", "price"]
    rows = [(r["id"], " / ".join(r["description"]), r["price"]) for r in RECORDS]
    data = mutate(csv_bytes(rows, header), ops)
    got = audit(data, "listings.csv")
    if got is not None:
        check_csv(data, header, got[0])


@SETTINGS
@given(MUTATIONS)
def test_device_csv(ops):
    header = ["server", "vendor", "device", "subvendor", "subdevice", "class"]
    rows = []
    for i in range(20):
        rows += [(f"srv{i:03d}", "8086", "a700", "8086", "7270", "0600"),
                 (f"srv{i:03d}", "10de", ("27b0", "26b1", "1e30")[i % 3], "10de", "16fa", "030000")]
    data = mutate(csv_bytes(rows, header), ops)
    got = audit(data, "ids.csv")
    if got is not None:
        check_csv(data, header, got[0])


def _parquet_bytes() -> bytes:
    """40 device rows of 20 servers as Parquet, in row groups of 8."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    servers = [f"srv{i // 2:03d}" for i in range(40)]
    table = pa.table({"server": servers, "vendor": ["10de", "8086"] * 20, "device": ["27b0", "a700"] * 20,
                      "class": ["0300", "0600"] * 20})
    buf = io.BytesIO()
    pq.write_table(table, buf, row_group_size=8)
    return buf.getvalue()


@settings(max_examples=int(os.environ.get("GPUCLASS_MUTATIONS", "40")) // 2, deadline=None)
@given(st.lists(st.tuples(st.just("flip"), st.floats(0, 1), st.integers(1, 255)), min_size=1, max_size=3)
       | st.tuples(st.tuples(st.just("truncate"), st.floats(0, 1))).map(list))
def test_parquet(ops):
    got = audit(mutate(_parquet_bytes(), ops), "ids.parquet")
    if got is not None:  # what reads whole gives every row, once
        reports, _ = got
        assert sum(r.rows for r in reports) == 40 or any(r.problems for r in reports)


@pytest.mark.parametrize("mask", [0x01, 0x40])
def test_every_footer_byte_flipped_keeps_every_row_or_says_why(tmp_path, mask):
    """A damaged Parquet footer (a row group's count made negative or wrong, which pyarrow
    reads as it is, giving fewer rows) never loses rows silently: every byte of the footer
    flipped in turn gives all 40 rows or a typed error."""
    data = _parquet_bytes()
    footer = int.from_bytes(data[-8:-4], "little")
    path = tmp_path / "ids.parquet"
    lost = []
    for at in range(len(data) - 8 - footer, len(data) - 8):
        damaged = bytearray(data)
        damaged[at] ^= mask
        path.write_bytes(bytes(damaged))
        try:
            rows = sum(r.rows for r in audit_paths([str(path)]))
        except GpuclassError:
            continue
        if rows != 40:
            lost.append((at, rows))
    assert not lost


# -- lspci dumps and their collections -----------------------------------------------

DUMPS = {"gex44-rescue": GEX44_NN_RESCUE, "gex130-iommu": GEX130_IOMMU_LOOP, "gex44-flat": GEX44_NNK_FLAT,
         "vgpu": SRIOV_NN, "vmm": VMM, **{k: v for k, v in LSPCI.items() if k != "broken"}}


@SETTINGS
@given(MUTATIONS, st.sampled_from(sorted(DUMPS)))
def test_lspci_dump(ops, which):
    data = mutate(DUMPS[which].encode(), ops)
    got = audit(data, f"{which}.txt")
    if got is None:
        return
    reports, _ = got
    assert len(reports) == 1 and reports[0].server == which  # one dump, one server, always


@pytest.mark.parametrize("which", sorted(DUMPS))
@pytest.mark.parametrize("first", [b"[", b"{"])
def test_a_dump_whose_first_line_opens_like_json_is_still_a_dump(which, first):
    """A dump's first byte damaged into ``[`` or ``{`` (its first record's only: a
    one-device -vmm dump's Slot line) is still one dump of one server, never a feed."""
    text = DUMPS[which].encode()
    one = text.split(b"\n\n")[0] if which == "vmm" else text
    got = audit(first + one[1:], f"{which}.txt")
    assert got is not None
    reports, _ = got
    assert len(reports) == 1 and reports[0].server == which
    assert not any(p.startswith("malformed JSON") for p in reports[0].problems)


def tar_bytes(mode="w"):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, text in sorted(DUMPS.items()):
            data = text.encode()
            info = tarfile.TarInfo(f"fleet/{name}/lspci.txt")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zip_bytes():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in sorted(DUMPS.items()):
            zf.writestr(f"fleet/{name}/lspci.txt", text)
    return buf.getvalue()


ARCHIVES = {"fleet.tar": tar_bytes(), "fleet.tar.gz": tar_bytes("w:gz"), "fleet.tar.xz": tar_bytes("w:xz"),
            "fleet.zip": zip_bytes()}


@SETTINGS
@given(MUTATIONS, st.sampled_from(sorted(ARCHIVES)))
def test_archive(ops, name):
    got = audit(mutate(ARCHIVES[name], ops), name)
    if got is None:
        return
    reports, skipped = got
    if len(reports) + len(skipped) == len(DUMPS):
        # every member is a server, or skipped and reported; the names are the folders
        assert {r.server for r in reports} <= set(DUMPS)
    else:  # so damaged that it is no archive any more: what is read is flagged
        assert reports and all(r.problems for r in reports)


@pytest.mark.parametrize("zeros", [0, 44, 511])
def test_a_tar_cut_anywhere_keeps_every_member_or_says_why(zeros):
    """A tar cut short at any block boundary, then ``zeros`` zero bytes (less than the one
    whole zero block that ends an archive), gives every member or a typed error: tarfile
    itself ends quietly where a header is missing (found by the mutation test: a cut 44
    bytes into zeros where the next member's header was lost two members without a word)."""
    whole = ARCHIVES["fleet.tar"]
    for cut in range(512, len(whole), 512):
        got = audit(whole[:cut] + b"\0" * zeros, "fleet.tar")
        if got is not None:
            reports, skipped = got
            assert len(reports) + len(skipped) == len(DUMPS), cut
    # the archive padded out with zeros past its end blocks reads whole
    assert audit(whole + b"\0" * 512, "fleet.tar") is not None


@pytest.mark.parametrize("name", sorted(ARCHIVES))
def test_archives_read_whole(name):
    reports, skipped = audit(ARCHIVES[name], name)
    assert {r.server for r in reports} == set(DUMPS) and skipped == []
    assert sum(r.slices for r in reports) == 4 + 8 + 4 + 4 + 4 + 4 + 8 + 4  # ws-rtx4000ada, ax-plain: 0
