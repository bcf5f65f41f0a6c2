"""Audit inputs as they arrive: compressed whatever their name, histories of snapshots,
directories of per-host folders, damaged archives and bombs, CSV and JSON that went wrong."""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma
import os
import re
import tarfile
import zipfile

import pytest

from audit_samples import AUCTION, LSPCI, auction_listing
from gpuclass.audit import Limits, audit_frame, audit_paths, detect_kind, write_reports
from gpuclass.errors import GpuclassError, InputError, SourceError
from helpers import run_in_process as run
from lspci_samples import GEX44_NN_RESCUE, GEX130_IOMMU_LOOP, SRIOV_NN


def servers(reports):
    return {r.server: r.slices for r in reports}


def feed_bytes(records, array=False):
    doc = records if array else {"server": records}
    return json.dumps(doc, indent=1).encode()


# -- compressed inputs ------------------------------------------------------------

COMPRESSORS = {"gzip": gzip.compress, "xz": lzma.compress, "bz2": bz2.compress}


def zstd(data):
    zstandard = pytest.importorskip("zstandard")
    return zstandard.ZstdCompressor().compress(data)


@pytest.mark.parametrize("how", ["gzip", "xz", "bz2", "zstd"])
@pytest.mark.parametrize("name", ["sb-120000.json.gz", "feed.json", "feed", "dump.xz"])
def test_compressed_inputs_are_known_by_their_bytes(tmp_path, how, name):
    data = feed_bytes(AUCTION, array=True)
    p = tmp_path / name
    p.write_bytes(zstd(data) if how == "zstd" else COMPRESSORS[how](data))
    assert detect_kind(p) == "feed"
    assert servers(audit_paths([p])) == servers(audit_paths([_plain(tmp_path, data)]))


def _plain(tmp_path, data):
    p = tmp_path / "plain.json"
    p.write_bytes(data)
    return p


def test_compressed_lspci_dump_and_csv(tmp_path):
    p = tmp_path / "gex44.txt.gz"
    p.write_bytes(gzip.compress(GEX44_NN_RESCUE.encode()))
    [r] = audit_paths([p])
    assert (r.server, r.slices) == ("gex44", 4)
    c = tmp_path / "ids.csv.xz"
    c.write_bytes(lzma.compress(b"server,vendor,device,class\ns1,10de,27b0,0300\n"))
    assert [(r.server, r.slices) for r in audit_paths([c])] == [("s1", 4)]


def test_a_history_of_snapshots(tmp_path):
    hist = tmp_path / "history"
    hist.mkdir()
    recs = auction_listing(30)
    snapshots = [recs[:20], recs[5:25], recs[10:30]]
    snapshots[2][0] = dict(snapshots[2][0], description=["Intel Xeon", "2x NVIDIA RTX 6000 Ada Generation 48 GB"])
    for hour, snap in zip(("080000", "090000", "100000"), snapshots):
        (hist / f"sb-{hour}.json.gz").write_bytes(gzip.compress(feed_bytes(snap, array=True)))
    every = list(audit_paths([hist]))
    assert len(every) == 60 and len({r.source for r in every}) == 3
    assert not any("duplicate" in p for r in every for p in r.problems)  # the same id in other snapshots
    latest = list(audit_paths([hist], latest=True))
    assert len(latest) == 30 and sum(r.rows for r in latest) == 60
    by_id = {r.server: r for r in latest}
    assert by_id[str(recs[10]["id"])].slices == 8 and by_id[str(recs[10]["id"])].source.endswith("100000.json.gz")
    # the same as an archive of the snapshots
    tar = tmp_path / "history.tar"
    with tarfile.open(tar, "w") as tf:
        for p in sorted(hist.iterdir()):
            tf.add(p, arcname=p.name)
    assert servers(audit_paths([tar], latest=True)) == servers(latest)


# -- directories and archives ---------------------------------------------------------

def make_fleet(root):
    for host, dump in (("host1", LSPCI["gex44-1"]), ("host2", LSPCI["gex130-1"]), ("host3", SRIOV_NN)):
        (root / host).mkdir(parents=True)
        (root / host / "lspci.txt").write_text(dump)
    sys_dev = root / "host1" / "sys" / "bus" / "pci" / "devices" / "0000:01:00.0"
    sys_dev.mkdir(parents=True)
    for attr, value in (("vendor", "0x10de\n"), ("device", "0x27b0\n"), ("class", "0x030000\n")):
        (sys_dev / attr).write_text(value)
    (sys_dev / "config").write_bytes(bytes(range(256)))
    (root / "host2" / "nvidia-smi").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(200))


def test_per_host_folders_name_their_servers_and_other_files_are_skipped(tmp_path):
    fleet = tmp_path / "fleet"
    make_fleet(fleet)
    os.symlink("/etc/passwd", fleet / "host2" / "passwd")
    os.symlink("host3/lspci.txt", fleet / "host4.txt")  # inside: read under its own name
    run_ = audit_paths([fleet])
    got = {r.server: r.slices for r in run_}
    assert got == {"host1": 4, "host2": 8, "host3": 4, "host4": 4}
    skipped = {os.path.relpath(s["input"], fleet): s["reason"] for s in run_.skipped}
    assert "host2/passwd" in skipped and "leaving the directory" in skipped["host2/passwd"]
    assert "binary" in skipped["host2/nvidia-smi"]
    assert "binary" in skipped["host1/sys/bus/pci/devices/0000:01:00.0/config"]
    assert "no lspci output" in skipped["host1/sys/bus/pci/devices/0000:01:00.0/vendor"]
    assert len(skipped) == 6


def test_a_fifo_in_a_directory_is_skipped_never_read(tmp_path):
    d = tmp_path / "dumps"
    d.mkdir()
    (d / "gex44.txt").write_text(LSPCI["gex44-1"])
    os.mkfifo(d / "stuck.txt")
    run_ = audit_paths([d])
    assert servers(run_) == {"gex44": 4}
    assert run_.skipped == [{"input": str(d / "stuck.txt"), "reason": "a FIFO (not read)"}]


def test_cli_reports_skipped_inputs_and_exits_1(tmp_path):
    fleet = tmp_path / "fleet"
    make_fleet(fleet)
    proc = run("audit", fleet, "--format", "json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert len(doc["reports"]) == 3 and len(doc["summary"]["skipped"]) == 5
    assert "skipped" in proc.stderr and "\x7fELF" not in proc.stdout + proc.stderr


def tar_of(path, members, mode="w"):
    with tarfile.open(path, mode) as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


DUMPS = [(f"fleet/{k}/lspci.txt", v.encode()) for k, v in sorted(LSPCI.items()) if k != "broken"]


def test_tar_hard_links_and_special_members(tmp_path):
    p = tmp_path / "fleet.tar"
    with tarfile.open(p, "w") as tf:
        for name, data in DUMPS:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("fleet/gex44-2/lspci.txt")
        link.type, link.linkname = tarfile.LNKTYPE, "fleet/gex44-1/lspci.txt"
        tf.addfile(link)
        sym = tarfile.TarInfo("fleet/gex44-3/lspci.txt")
        sym.type, sym.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(sym)
        fifo = tarfile.TarInfo("fleet/pipe")
        fifo.type = tarfile.FIFOTYPE
        tf.addfile(fifo)
    run_ = audit_paths([p])
    got = servers(run_)
    assert got["gex44-2"] == got["gex44-1"] == 4 and len(got) == len(DUMPS) + 1
    assert {s["reason"] for s in run_.skipped} == {"a symlink to '/etc/passwd' (not followed)",
                                                   "a FIFO (not read)"}


def test_a_damaged_tar_header_is_an_error_naming_the_member(tmp_path):
    p = tar_of(tmp_path / "fleet.tar", DUMPS)
    data = bytearray(p.read_bytes())
    second = 512 + ((len(DUMPS[0][1]) + 511) // 512) * 512
    data[second + 100:second + 108] = b"garbage!"   # the second header's mode field and checksum
    data[second + 148:second + 156] = b"\x00" * 8
    p.write_bytes(bytes(data))
    with pytest.raises(SourceError, match=r"damaged tar header after member 'fleet/ax-plain/lspci.txt'"):
        list(audit_paths([p]))
    p.write_bytes(gzip.compress(bytes(data)))
    with pytest.raises(SourceError, match="fleet/ax-plain/lspci.txt"):
        list(audit_paths([p]))


@pytest.mark.parametrize("how", ["gz", "xz", "bz2"])
def test_a_corrupted_compressed_archive_is_an_error(tmp_path, how):
    raw = tar_of(tmp_path / "x.tar", DUMPS * 20).read_bytes()
    comp = {"gz": gzip.compress, "xz": lzma.compress, "bz2": bz2.compress}[how](raw)
    bad = bytearray(comp)
    for i in range(len(bad) // 2, len(bad) // 2 + 40):
        bad[i] ^= 0x5A
    p = tmp_path / f"fleet.tar.{how}"
    p.write_bytes(bytes(bad))
    with pytest.raises(SourceError):
        list(audit_paths([p]))
    p.write_bytes(comp[: len(comp) * 2 // 3])  # truncated
    with pytest.raises(SourceError):
        list(audit_paths([p]))


def test_a_corrupted_zip_member_is_an_error_naming_it(tmp_path):
    p = tmp_path / "fleet.zip"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in DUMPS:
            zf.writestr(name, data)
    data = bytearray(p.read_bytes())
    with zipfile.ZipFile(p) as zf:
        info = zf.getinfo(DUMPS[2][0])
    start = info.header_offset + 30 + len(info.filename.encode())
    data[start + 10] ^= 0xFF
    p.write_bytes(bytes(data))
    with pytest.raises(SourceError, match=DUMPS[2][0]):
        list(audit_paths([p]))
    (tmp_path / "not.zip").write_bytes(b"PK\x03\x04" + bytes(100))
    with pytest.raises(SourceError, match="zip"):
        list(audit_paths([tmp_path / "not.zip"]))


def _zip_of(path, members, **kw):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, **kw) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return path


@pytest.mark.parametrize("field", ["directory start", "an entry's comment length", "member count"])
def test_a_zip_directory_that_lost_members_is_an_error(tmp_path, field):
    """zipfile reads the directory for as many bytes as the end record says, and stops
    quietly where a damaged length ends it early: the members it lists are counted."""
    p = _zip_of(tmp_path / "fleet.zip", DUMPS)
    data = bytearray(p.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    size_cd = int.from_bytes(data[end + 12:end + 16], "little")
    start = end - size_cd
    if field == "directory start":  # the directory as if it began at its third entry
        third = data.find(b"PK\x01\x02", data.find(b"PK\x01\x02", start + 4) + 4)
        data[end + 12:end + 16] = (end - third).to_bytes(4, "little")
        data[end + 16:end + 20] = third.to_bytes(4, "little")
    elif field == "an entry's comment length":  # the second entry swallows the rest
        second = data.find(b"PK\x01\x02", data.find(b"PK\x01\x02", start) + 4)
        data[second + 32:second + 34] = (end - second).to_bytes(2, "little")
    else:
        data[end + 10] ^= 0x02
    p.write_bytes(bytes(data))
    with zipfile.ZipFile(p) as zf:
        assert len(zf.infolist()) != len(DUMPS) or field == "member count"  # zipfile says nothing
    with pytest.raises(SourceError, match="damaged zip directory: its end record lists"):
        list(audit_paths([p]))


def test_the_zip64_member_count_is_read(tmp_path):
    from gpuclass.audit.ingest.archives import _zip_members_listed

    many = [(f"m{i}", b"") for i in range(0x10000 + 3)]  # past 16 bits: a zip64 end record
    p = _zip_of(tmp_path / "many.zip", many)
    with open(p, "rb") as fh:
        assert _zip_members_listed(fh) == len(many)
    p = _zip_of(tmp_path / "commented.zip", DUMPS)
    with zipfile.ZipFile(p, "a") as zf:
        zf.comment = b"an archive's comment " * 3000  # the end record 63 KB before the end
    with open(p, "rb") as fh:
        assert _zip_members_listed(fh) == len(DUMPS)
    assert servers(audit_paths([p])) == servers(audit_paths([_zip_of(tmp_path / "plain.zip", DUMPS)]))
    with zipfile.ZipFile(p, "a") as zf:  # a comment holding what looks like an end record
        zf.comment = b"PK\x05\x06 looks like an end record" * 3
    with pytest.raises(SourceError, match="zip"):
        list(audit_paths([p]))


def test_archive_bombs_stop_at_the_limits(tmp_path):
    bomb = tmp_path / "feed.json.gz"
    bomb.write_bytes(gzip.compress(b"[" + b" " * (40 << 20) + b"]"))
    with pytest.raises(SourceError, match="expands more than 250 times"):
        list(audit_paths([bomb]))
    tar = tar_of(tmp_path / "fleet.tar", [("a/lspci.txt", b"\n" * (3 << 20)), ("b/lspci.txt", b"\n" * (3 << 20))])
    with pytest.raises(SourceError, match=r"b/lspci.txt: expands past 4194304 bytes"):
        list(audit_paths([tar], limits=Limits(max_expanded=4 << 20)))
    z = tmp_path / "bomb.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("host/lspci.txt", b"0" * (32 << 20))
    with pytest.raises(SourceError, match="bomb.zip:host/lspci.txt: expands more than"):
        list(audit_paths([z]))
    # the same data under generous limits reads
    assert list(audit_paths([z], limits=Limits(max_ratio=1e9))) != []


def test_audit_paths_wants_a_sequence():
    with pytest.raises(TypeError, match=r"audit_paths\(\['feed.json'\]\)"):
        audit_paths("feed.json")


# -- JSON ------------------------------------------------------------------------------

def test_feed_as_a_bare_array_and_as_an_object(tmp_path):
    a, o = tmp_path / "a.json", tmp_path / "o.json"
    a.write_bytes(feed_bytes(AUCTION, array=True))
    o.write_bytes(feed_bytes(AUCTION))
    assert servers(audit_paths([a])) == servers(audit_paths([o])) and len(servers(audit_paths([a]))) == 9


def test_a_resynced_feed_loses_no_record_and_invents_none(tmp_path):
    recs = auction_listing(6)
    parts = [json.dumps(r) for r in recs]
    # record 2 cut short mid-way (its nested objects open), the rest resumes
    parts[2] = parts[2][: parts[2].index('"serverDiskData"') + 30]
    text = "[" + ", ".join(parts) + "]"
    (tmp_path / "f.json").write_text(text)
    reports = list(audit_paths([tmp_path / "f.json"]))
    assert [r.server for r in reports] == [str(recs[i]["id"]) for i in (0, 1)] + [None] + \
        [str(recs[i]["id"]) for i in (3, 4, 5)]
    assert "malformed JSON" in reports[2].problems[0]


@pytest.mark.parametrize("between", ["7", '"text"', "null", "[1, 2]", "true", '"a\\"b:"', "{}"])
def test_a_value_that_is_not_a_record_is_its_own_flagged_row(tmp_path, between):
    """Any JSON value between two records is a row of its own, flagged; neither neighbour
    is lost (a key and a colon after a record's comma is what a record closed early shows)."""
    recs = auction_listing(3)
    (tmp_path / "f.json").write_text(f"[{json.dumps(recs[0])}, {between}, {json.dumps(recs[1])}]")
    reports = list(audit_paths([tmp_path / "f.json"]))
    assert [r.server for r in reports][::2] == [str(recs[0]["id"]), str(recs[1]["id"])]
    assert len(reports) == 3 and reports[1].problems and not reports[0].problems


def test_a_record_closed_early_is_one_flagged_row(tmp_path):
    recs = auction_listing(3)
    cut = json.dumps(recs[1]).replace(', "cpu"', '}, "cpu"', 1)  # a closing brace too soon
    (tmp_path / "f.json").write_text("[" + ", ".join([json.dumps(recs[0]), cut, json.dumps(recs[2])]) + "]")
    reports = list(audit_paths([tmp_path / "f.json"]))
    assert [r.server for r in reports] == [str(recs[0]["id"]), None, str(recs[2]["id"])]
    assert "closing brace" in reports[1].problems[0]


def test_truncated_feed_is_flagged_never_silent(tmp_path):
    text = feed_bytes(auction_listing(5))
    p = tmp_path / "f.json"
    p.write_bytes(text[: len(text) * 3 // 4])
    reports = list(audit_paths([p]))
    assert any(r.problems for r in reports) and len(reports) <= 5
    proc = run("audit", p)
    assert proc.returncode == 1


def test_duplicate_server_ids_are_flagged(tmp_path):
    p = tmp_path / "f.json"
    p.write_bytes(feed_bytes([AUCTION[0], AUCTION[1], AUCTION[0]]))
    reports = list(audit_paths([p]))
    assert [bool(r.problems) for r in reports] == [False, False, True]
    assert "duplicate server id '2130001' (first at row 1)" in reports[2].problems


# -- CSV ---------------------------------------------------------------------------------

def write_csv(path, rows, bom=False):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id", "description", "price"])
    w.writerows(rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + buf.getvalue().encode())
    return path


ROWS = [(r["id"], "\n".join(r["description"]), r["price"]) for r in auction_listing(12)]


def test_csv_with_a_bom(tmp_path):
    p = write_csv(tmp_path / "x.csv", ROWS, bom=True)
    reports = list(audit_paths([p]))
    assert [r.server for r in reports] == [str(r[0]) for r in ROWS] and not any(r.problems for r in reports)


@pytest.mark.parametrize("damage", ['"5 inch', 'Intel "Core', '"', 'x"', '""" GPU - Nvidia GeForce GTX 1080'])
def test_an_unterminated_or_stray_quote_swallows_no_row(tmp_path, damage):
    head = write_csv(tmp_path / "a.csv", ROWS[:3]).read_text()
    tail = write_csv(tmp_path / "b.csv", ROWS[3:]).read_text().split("\n", 1)[1]
    p = tmp_path / "x.csv"
    p.write_text(head + f"9999,{damage},12\n" + tail)
    reports = list(audit_paths([p]))
    ids = [r.server for r in reports]
    for r in ROWS:
        assert str(r[0]) in ids
    assert len(reports) == len(ROWS) + 1


def test_a_quote_in_a_device_table_swallows_no_row_even_where_another_closes_it(tmp_path):
    """A text CSV's quoted field may span lines; a device table's IDs and names never do,
    so a quote there is stray even where a quote lines later would close it: each line
    stays a row of its own (the two with a quote flagged)."""
    lines = ["server,vendor,device,subvendor,subdevice,class"]
    for i in range(12):
        lines += [f"srv{i:02d},8086,a700,8086,7270,0600", f"srv{i:02d},10de,27b0,10de,16fa,030000"]
    lines[5] = lines[5].replace(",8086,", ',"8086,', 1)   # srv02's first row: opens a field
    lines[20] = lines[20].replace("10de,", '10"de,', 1)   # srv09's second: would close it
    p = tmp_path / "ids.csv"
    p.write_text("\n".join(lines) + "\n")
    reports = list(audit_paths([p]))
    # the two rows with a quote are flagged under the server they name (issue 28: they
    # used to lose it and read "row has no server name")
    assert {r.server for r in reports} == {f"srv{i:02d}" for i in range(12)}
    assert sum(r.rows for r in reports) == 24
    flagged = {r.server: "; ".join(r.problems) for r in reports if r.problems}
    assert set(flagged) == {"srv02", "srv09"}
    assert all("stray quote" in t and "no server name" not in t for t in flagged.values())


def test_a_field_larger_than_the_csv_limit_is_a_flagged_row(tmp_path):
    p = write_csv(tmp_path / "x.csv", ROWS[:2] + [("big", "GTX 1080 " * 20000, 1)] + ROWS[2:4])
    reports = list(audit_paths([p]))
    # flagged under the server id its line gives (issue 28: it lost it)
    assert [r.server for r in reports] == [str(ROWS[0][0]), str(ROWS[1][0]), "big", str(ROWS[2][0]),
                                           str(ROWS[3][0])]
    assert "larger than the csv module's limit" in reports[2].problems[0]
    assert re.search(r"at line [0-9]+, field 2 \('description'\)", reports[2].problems[0])


def test_a_semicolon_csv_is_refused_before_any_output(tmp_path):
    good = tmp_path / "a.json"
    good.write_bytes(feed_bytes(AUCTION))
    p = tmp_path / "export.csv"
    p.write_text("id;description;price\n1;GPU - Nvidia GeForce GTX 1080;39\n")
    with pytest.raises(InputError, match="separated by semicolons"):
        audit_paths([good, p])
    proc = run("audit", good, p, "--format", "json")
    assert proc.returncode == 2 and proc.stdout == "" and "semicolons" in proc.stderr


# -- frames and outputs ------------------------------------------------------------------

def test_audit_frame_keeps_index_and_id_dtype_and_counts_each_card():
    pd = pytest.importorskip("pandas")
    recs = auction_listing(40)
    df = pd.DataFrame({"id": [r["id"] for r in recs], "description": [r["description"] for r in recs]},
                      index=pd.Index([f"row-{i}" for i in range(40)], name="key"))
    df = df.iloc[::-1]
    out = audit_frame(df)
    assert out.index.equals(df.index) and out["server"].dtype == df["id"].dtype
    assert (out["server"] == df["id"]).all()
    card_cols = [c for c in out.columns if c.startswith("cards.")]
    assert len(card_cols) == 7
    assert (out[card_cols].sum(axis=1) == out["supported_cards"]).all()
    assert out["supported_cards"].tolist() == [r["expected"] for r in recs[::-1]]
    # a device table: one row per server, under its first row's index
    dev = pd.DataFrame({"server": [10, 10, 11], "vendor": ["10de"] * 3, "device": ["27b0", "22bc", "26b1"],
                        "class": ["0300", "0403", "0302"]}, index=[5, 6, 9])
    out = audit_frame(dev)
    assert out.index.tolist() == [5, 9] and out["server"].dtype == dev["server"].dtype
    assert out["cards.rtx-6000-ada"].tolist() == [0, 1]


def test_audit_frame_arrow_keeps_the_id_type():
    pa = pytest.importorskip("pyarrow")
    t = pa.table({"id": pa.array([7, 8], pa.int32()), "description": ["2x RTX 6000 Ada", "GTX 1080"]})
    out = audit_frame(t)
    assert out.schema.field("server").type == pa.int32() and out.column("cards.gtx-1080").to_pylist() == [0, 1]


def test_ndjson_is_servers_only_and_csv_json_keep_their_fields(tmp_path):
    buf = io.StringIO()
    write_reports(audit_paths([_plain(tmp_path, feed_bytes(AUCTION))]), "ndjson", buf)
    lines = [json.loads(x) for x in buf.getvalue().splitlines()]
    assert len(lines) == len(AUCTION)
    assert set(lines[0]) == {"row", "source", "server", "gpu_capable", "cards", "supported_cards", "slices",
                             "unsupported", "unsupported_gpus", "reason", "problems", "rows", "cpu", "price",
                             "datacenter"}


def test_lspci_dump_with_noise_in_a_directory(tmp_path):
    d = tmp_path / "dumps"
    d.mkdir()
    (d / "gex44.txt").write_text(GEX44_NN_RESCUE)
    (d / "gex130.txt").write_text(GEX130_IOMMU_LOOP)
    got = {r.server: (r.slices, bool(r.problems)) for r in audit_paths([d])}
    assert got == {"gex44": (4, True), "gex130": (8, False)}


def test_every_error_is_typed(tmp_path):
    p = tmp_path / "x.tar.gz"
    p.write_bytes(b"\x1f\x8b" + os.urandom(64))
    with pytest.raises(GpuclassError):
        list(audit_paths([p]))


def test_a_directory_of_archives_and_an_archive_inside_an_archive(tmp_path):
    d = tmp_path / "collected"
    d.mkdir()
    tar_of(d / "dc1.tar.gz", DUMPS[:3], mode="w:gz")
    (d / "gex44-9.txt").write_text(LSPCI["gex44-1"])
    got = servers(audit_paths([d]))
    assert len(got) == 4 and got["gex44-9"] == 4
    outer = tar_of(tmp_path / "outer.tar", [("dc1.tar.gz", (d / "dc1.tar.gz").read_bytes())])
    run_ = audit_paths([outer])
    assert list(run_) == [] and "an archive inside a collection" in run_.skipped[0]["reason"]


def test_editions_of_equal_slices_are_capable_and_flagged():
    from gpuclass.audit import audit_records

    [r] = audit_records([{"id": 1, "description": ["Intel Xeon", "2x NVIDIA RTX PRO 6000 Blackwell 96GB"],
                          "specials": ["GPU"]}])
    assert r.gpu_capable and r.slices == 8 and r.supported_cards == 2
    assert "does not say which edition" in r.problems[0] and "Server Edition" in r.problems[0]
