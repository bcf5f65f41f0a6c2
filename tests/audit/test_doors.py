"""One answer wherever it is asked: the same device table through every door gives the same
answer for every server (its cards and their counts, slices, unsupported GPUs and their
labels, problems, rows, first row).

The fleet (``tests/audit_fleet.py``) exercises every cell rule at once: IDs in every
spelling a table holds (case, ``0x``, ``[10de]``, ASCII and Unicode whitespace around),
classes of four and six digits, a server's rows scattered through the table, rows that name
no server, bad and missing cells, half a subsystem.  Its doors: CSV (plain, gzip, zip, tar),
Parquet (several row groups, text IDs read as dictionaries), pyarrow tables of strings,
large strings and dictionaries, pandas frames of objects and of categoricals,
``audit_table``, ``audit_frame``, ``audit_paths``, ``audit_device_rows``, the command
(``gpuclass audit --format json``), ``gpuclass.dask.audit``; and for a fleet of integer
cells, integer columns and pandas columns mixing integers with text.  What the fleet was
made from is checked too: each server's cards, unsupported GPUs and unreadable rows.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import tarfile
import zipfile

import pytest
from audit_fleet import numeric_fleet, text_fleet

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")

from gpuclass.audit import audit_device_rows, audit_frame, audit_paths, audit_table  # noqa: E402
from gpuclass.policy import compile_policy  # noqa: E402
from gpuclass.policy.nodes import decide_node  # noqa: E402

FIELDS = ("server", "vendor", "device", "subvendor", "subdevice", "class")
COMPILED = compile_policy()
CARDS = tuple(COMPILED.card_ids)


def _key(server, row):
    return server if server is not None else ("no server", row)


def from_reports(reports) -> dict:
    """Each server's answer, from ServerReport objects (or their JSON dicts)."""
    out = {}
    for r in reports:
        d = r if isinstance(r, dict) else r.to_dict()
        cards = tuple(sorted((c["card"], c["count"]) for c in d["cards"]))
        out[_key(d["server"], d["row"])] = (d["gpu_capable"], cards, d["supported_cards"], d["slices"],
                                            tuple(d["unsupported"]), d["unsupported_gpus"], tuple(d["problems"]),
                                            d["rows"], d["row"])
    assert len(out) == len(reports) if isinstance(reports, list) else True
    return out


def from_flat(frame) -> dict:
    """Each server's answer, from audit_frame's flat rows (pandas or Arrow)."""
    rows = frame.to_pylist() if isinstance(frame, pa.Table) else frame.to_dict("records")
    out = {}
    for d in rows:
        server = d["server"] if isinstance(d["server"], str) and d["server"] else None
        cards = tuple(sorted((c, int(d[f"cards.{c}"])) for c in CARDS if int(d[f"cards.{c}"])))
        split = (lambda text: tuple(text.split("; ")) if isinstance(text, str) and text else ())
        out[_key(server, int(d["row"]))] = (d["gpu_capable"] in (True, "True"), cards, int(d["supported_cards"]),
                                            int(d["slices"]), split(d["unsupported"]),
                                            int(d["unsupported_gpus"]), split(d["problems"]), int(d["rows"]),
                                            int(d["row"]))
    return out


def from_table(table) -> dict:
    """Each server's answer as far as a per-server table holds it (no unsupported labels);
    its problems are the rows' problems, then the server's conflicts, as a report lists them."""
    rows = table.to_pylist() if isinstance(table, pa.Table) else table.to_dict("records")
    out = {}
    for d in rows:
        server = d["server"] if isinstance(d["server"], str) else None
        problems = "; ".join(t for t in (d["problems"], d.get("conflicts")) if isinstance(t, str) and t)
        cards = tuple(sorted((c, int(d[f"cards.{c}"])) for c in CARDS if d[f"cards.{c}"]))
        out[_key(server, int(d["row"]))] = (bool(d["gpu_capable"]), cards, int(d["supported_cards"]),
                                            int(d["slices"]), int(d["unsupported_gpus"]),
                                            tuple(problems.split("; ")) if problems else (), int(d["rows"]),
                                            int(d["row"]))
    return out


def without_labels(answers: dict) -> dict:
    return {k: (*v[:4], *v[5:]) for k, v in answers.items()}


def _csv_bytes(rows) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(FIELDS)
    w.writerows([["" if c is None else c for c in r] for r in rows])
    return buf.getvalue().encode()


def _arrow(rows, kind: str = "string"):
    cols = {f: [r[i] for r in rows] for i, f in enumerate(FIELDS)}
    t = pa.table({f: pa.array(v, pa.large_string() if kind == "large" else pa.string()) for f, v in cols.items()})
    if kind == "dictionary":
        t = pa.table({f: t[f].dictionary_encode() if f != "server" else t[f] for f in FIELDS})
    return t


@pytest.fixture(scope="module")
def fleet():
    return text_fleet()


@pytest.fixture(scope="module")
def reference(fleet):
    rows, _ = fleet
    return from_reports(list(audit_table(_arrow(rows))))


def test_the_fleet_reads_as_it_was_made(fleet, reference):
    """The reference door's answers are what each server was made of: every spelling of an
    ID read as its value, every bad row flagged, every server one report."""
    rows, truths = fleet
    named = {k: v for k, v in reference.items() if isinstance(k, str)}
    assert set(named) == set(truths)
    for server, t in truths.items():
        capable, cards, supported, slices, unsupported, n_unsupported, problems, n_rows, _ = named[server]
        assert dict(cards) == t.cards, server
        row_problems = [p for p in problems if not p.startswith("cards conflict")]
        assert n_unsupported == t.unsupported and len(row_problems) == t.bad_rows and n_rows == t.rows, server
        made = decide_node([COMPILED.cards[COMPILED.card_ids.index(c)] for c in t.cards], 4)
        assert len(problems) - len(row_problems) == len(made.conflicts), server
        assert slices == 4 * supported and capable == (supported > 0)
    nameless = [v for k, v in reference.items() if not isinstance(k, str)]
    assert nameless and all(v[6][0] == "row has no server name" and v[7] == 1 for v in nameless)
    assert sum(v[7] for v in reference.values()) == len(rows)


def _file_doors(rows, tmp):
    data = _csv_bytes(rows)
    (tmp / "fleet.csv").write_bytes(data)
    (tmp / "fleet.csv.gz").write_bytes(gzip.compress(data))
    with zipfile.ZipFile(tmp / "fleet.zip", "w") as z:
        z.writestr("inventory/fleet.csv", data)
    with tarfile.open(tmp / "fleet.tar.gz", "w:gz") as t:
        info = tarfile.TarInfo("inventory/fleet.csv")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    pq.write_table(_arrow(rows), tmp / "fleet.parquet", row_group_size=len(rows) // 7 + 1)
    pq.write_table(_arrow(rows, "large"), tmp / "large.parquet", row_group_size=len(rows) // 3 + 1)
    return ["fleet.csv", "fleet.csv.gz", "fleet.zip", "fleet.tar.gz", "fleet.parquet", "large.parquet"]


def test_every_file_door_gives_the_reference_answer(fleet, reference, tmp_path):
    rows, _ = fleet
    for name in _file_doors(rows, tmp_path):
        assert from_reports(list(audit_paths([tmp_path / name]))) == reference, name


@pytest.mark.parametrize("shape", ["string", "large", "dictionary", "pandas", "categorical", "dict"])
def test_every_in_memory_shape_gives_the_reference_answer(fleet, reference, shape):
    rows, _ = fleet
    if shape in ("string", "large", "dictionary"):
        data = _arrow(rows, shape)
    elif shape == "dict":
        data = {f: [r[i] for r in rows] for i, f in enumerate(FIELDS)}
    else:
        data = pd.DataFrame(rows, columns=FIELDS)
        if shape == "categorical":
            data = data.astype({f: "category" for f in FIELDS[1:]})
    assert from_reports(list(audit_table(data))) == reference
    if shape != "dict":
        assert from_flat(audit_frame(data)) == reference
    assert from_table(audit_table(data).table) == without_labels(reference)


def test_the_row_door_gives_the_reference_answer(fleet, reference):
    rows, _ = fleet
    assert from_reports(list(audit_device_rows(rows))) == reference


def test_the_command_gives_the_reference_answer(fleet, reference, tmp_path, capsys):
    from gpuclass.cli.main import main

    rows, _ = fleet
    (tmp_path / "fleet.csv").write_bytes(_csv_bytes(rows))
    assert main(["audit", str(tmp_path / "fleet.csv"), "--format", "json"]) == 1  # some rows are flagged
    assert from_reports(json.loads(capsys.readouterr().out)["reports"]) == reference
    main(["audit", str(tmp_path / "fleet.csv"), "-o", str(tmp_path / "out.parquet")])
    assert from_table(pq.read_table(tmp_path / "out.parquet")) == without_labels(reference)
    main(["audit", str(tmp_path / "fleet.csv"), "-o", str(tmp_path / "out.csv")])
    with open(tmp_path / "out.csv", newline="", encoding="utf-8") as fh:
        assert from_flat(pd.DataFrame(list(csv.DictReader(fh)))) == reference


def test_dask_gives_the_reference_answer(fleet, reference):
    dd = pytest.importorskip("dask.dataframe")
    import dask

    import gpuclass.dask as gdask

    rows, _ = fleet
    df = pd.DataFrame(rows, columns=FIELDS)
    with dask.config.set(scheduler="synchronous"):
        servers = gdask.audit(dd.from_pandas(df, npartitions=5))
        got, gathered = servers.compute(), gdask.gather(servers)
    assert from_table(got) == without_labels(reference)
    assert from_table(gathered) == without_labels(reference)


@pytest.fixture(scope="module")
def numeric():
    return numeric_fleet()


def test_integer_and_mixed_columns_answer_as_their_text(numeric):
    """A fleet of integer cells: integer columns, a pandas column mixing integers with text,
    and the same fleet written as text, give one answer."""
    ints, texts, truths = numeric
    reference = from_reports(list(audit_table(_arrow(texts))))
    named = {k: v for k, v in reference.items() if isinstance(k, str)}
    assert {s: dict(v[1]) for s, v in named.items()} == {s: t.cards for s, t in truths.items()}
    row_problems = {s: [p for p in v[6] if not p.startswith("cards conflict")] for s, v in named.items()}
    assert {s: len(p) for s, p in row_problems.items()} == {s: t.bad_rows for s, t in truths.items()}
    columns = {f: [r[i] for r in ints] for i, f in enumerate(FIELDS)}
    typed = pa.table({f: pa.array(v, pa.string() if f == "server" else pa.int64()) for f, v in columns.items()})
    assert from_reports(list(audit_table(typed))) == reference
    mixed = pd.DataFrame({f: [r[i] if (j + i) % 3 else t[i] for j, (r, t) in enumerate(zip(ints, texts))]
                          for i, f in enumerate(FIELDS)})  # every column: integers and text, by row
    assert mixed["vendor"].dtype == object
    assert from_reports(list(audit_table(mixed))) == reference
    assert from_flat(audit_frame(mixed)) == reference

    assert from_reports(list(audit_device_rows([tuple(r) for r in mixed.itertuples(index=False)]))) == reference


def test_lspci_dumps_of_the_fleet_give_its_answers(fleet, reference, tmp_path):
    """The fleet's readable servers as collected ``lspci -n`` dumps, a file per server: the
    same cards, slices and unsupported GPUs (labels included) as their device rows give."""
    from gpuclass.ids import cell_parts, class_value

    def value(cell, digits):
        _, v, n = cell_parts(cell, digits)
        return v, n

    rows, truths = fleet
    chosen = [s for s, t in truths.items() if not t.bad_rows][:300]
    devices: dict[str, list] = {s: [] for s in chosen}
    for r in rows:
        if r[0] in devices:
            devices[r[0]].append(r)
    d = tmp_path / "dumps"
    d.mkdir()
    for k, server in enumerate(chosen):
        lines = []
        for bus, (_, v, dev, _sv, _sd, c) in enumerate(devices[server], 1):
            cls = class_value(*value(c, 6))
            lines.append(f"{bus:02x}:00.0 {cls >> 8:04x}: {value(v, 4)[0]:04x}:{value(dev, 4)[0]:04x} (rev a1)")
        (d / f"dump-{k:04d}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = {r.server: r for r in audit_paths([d])}
    for k, server in enumerate(chosen):
        r = got[f"dump-{k:04d}"]
        answer = (r.gpu_capable, tuple(sorted((c["card"], c["count"]) for c in r.cards)), r.supported_cards,
                  r.slices, tuple(r.unsupported), r.unsupported_gpus, tuple(r.problems))
        assert answer == reference[server][:7], server  # no row problems; conflicts alike
