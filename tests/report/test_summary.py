"""Fleet figures: price per slice, grouping, missing and unreadable prices, currencies as given,
mixed and card-less servers, look-alikes, bounded lists; checked against a pandas oracle."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from audit_samples import AUCTION, LSPCI
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuclass.audit import (
    AuditSummary,
    ServerReport,
    audit_lspci_dumps,
    audit_paths,
    audit_records,
    audit_table,
)
from gpuclass.audit.render import finish
from gpuclass.errors import InputError
from gpuclass.report import fleet_summary
from gpuclass.report.prices import read_price, source_currency

GTX = {"card": "gtx-1080", "name": "GeForce GTX 1080"}
ADA = {"card": "rtx-4000-sff-ada", "name": "RTX 4000 SFF Ada Generation"}
RTX6 = {"card": "rtx-6000-ada", "name": "RTX 6000 Ada Generation"}


def server(row, cards=(), price=None, dc=None, source="feed_EUR.json", unsupported=(), problems=(),
           hourly=None, **extra):
    """A report as the auditors make it (``finish`` fills gpu_capable, slices, reason)."""
    r = ServerReport(row, source, f"s{row}", problems=list(problems))
    r.cards = [{**c, "count": n, "slices": 4 * n, "source": "text", "evidence": ""} for c, n in cards]
    r.unsupported = list(unsupported)
    r.unsupported_gpus = sum(int(u.split("x ", 1)[0]) for u in unsupported)
    if price is not None:
        r.extra["price"] = price
    if hourly is not None:
        r.extra["hourly_price"] = hourly
    if dc is not None:
        r.extra["datacenter"] = dc
    r.extra.update(extra)
    return finish(r)


def rows(table, *cols):
    return [tuple(r[c] for c in cols) for r in table.to_pylist()]


def test_price_per_slice_and_grouping_by_model_and_datacenter():
    s = fleet_summary([
        server(1, [(GTX, 1)], 40, "FSN1-DC14"),
        server(2, [(GTX, 1)], 48.0, "FSN1-DC14"),
        server(3, [(GTX, 2)], 72, "NBG1-DC3"),            # 8 slices: 9.0 per slice
        server(4, [(RTX6, 2)], 1600, "NBG1-DC3"),
        server(5, [(GTX, 1)], "44.00", None),              # a CSV cell; no datacenter
    ])
    assert rows(s.by_model, "currency", "model", "servers", "slices", "min_monthly_per_slice",
                "median_monthly_per_slice", "max_monthly_per_slice", "pooled_monthly_per_slice") == [
        ("EUR", "GeForce GTX 1080", 4, 20, 9.0, 10.5, 12.0, (40 + 48 + 72 + 44) / 20),
        ("EUR", "RTX 6000 Ada Generation", 1, 8, 200.0, 200.0, 200.0, 200.0),
    ]
    assert rows(s.by_datacenter, "datacenter", "servers", "median_monthly_per_slice") == [
        ("FSN1-DC14", 2, 11.0), (None, 1, 11.0), ("NBG1-DC3", 2, (9.0 + 200.0) / 2)]
    assert rows(s.cheapest, "server", "slices", "monthly", "monthly_per_slice") == [
        ("s3", 8, 72.0, 9.0), ("s1", 4, 40.0, 10.0), ("s5", 4, 44.0, 11.0), ("s2", 4, 48.0, 12.0),
        ("s4", 8, 1600.0, 200.0)]
    edges, counts = s.histograms["EUR"]
    assert counts.sum() == 5 and edges[0] == 9.0 and edges[-1] == 200.0


def test_missing_and_unreadable_prices_are_counted_and_left_out():
    s = fleet_summary([
        server(1, [(GTX, 1)], 40),
        server(2, [(GTX, 1)]),                    # capable, no price
        server(3, [(GTX, 1)], ""),                # an empty CSV cell is no price
        server(4, [(GTX, 1)], "39,00"),           # decimal comma: not guessed at
        server(5, [(GTX, 1)], True),
        server(6, [(GTX, 1)], -5),
        server(7, [(GTX, 1)], float("nan")),
        server(8, [(GTX, 1)], {"amount": 40}),
        server(9, [], None),                      # no GPU, no price
        server(10, [], "€40"),                    # no GPU, unreadable price: still reported
        server(11, [(GTX, 1)], 44, hourly="0.06 EUR"),
    ])
    assert s.priced == 2 and s.capable_unpriced == 7 and s.unpriced == 3 and s.bad_prices == 7
    assert rows(s.by_model, "servers", "min_monthly_per_slice", "hourly_servers") == [(2, 10.0, 0)]
    assert [(r["row"], r["field"]) for r in s.bad_price_rows] == [
        (4, "price"), (5, "price"), (6, "price"), (7, "price"), (8, "price"), (10, "price"),
        (11, "hourly_price")]
    assert "'39,00' is not a plain number" in s.bad_price_rows[0]["problem"]
    assert s.headline()["capable_unpriced"] == 7


def test_currencies_only_as_given_never_mixed():
    reports = [
        server(1, [(GTX, 1)], 40, source="feeds/live_data_sb_EUR.json"),
        server(2, [(GTX, 1)], 48, source="feeds/live_data_sb_USD.json"),
        server(3, [(GTX, 1)], 36, source="listings.csv"),             # no currency stated
        server(4, [(GTX, 1)], 44, source="feeds/live_data_sb_EUR.json"),
        server(5, [(GTX, 1)], 30, source="servers_GEX.json"),          # not an ISO 4217 code
    ]
    s = fleet_summary(reports)
    assert s.currencies == {"EUR": 2, "USD": 1, None: 2}
    assert rows(s.by_model, "currency", "servers", "min_monthly_per_slice", "max_monthly_per_slice") == [
        ("EUR", 2, 10.0, 11.0), ("USD", 1, 12.0, 12.0), (None, 2, 7.5, 9.0)]
    assert rows(s.cheapest, "currency", "server") == [
        ("EUR", "s1"), ("EUR", "s4"), ("USD", "s2"), (None, "s5"), (None, "s3")]
    assert set(s.histograms) == {"EUR", "USD", None}
    # given explicitly: for every source, or per source
    assert fleet_summary(reports, currency="CHF").currencies == {"CHF": 5}
    per = fleet_summary(reports, currency={"listings.csv": "EUR"})
    assert per.currencies == {None: 4, "EUR": 1}


@pytest.mark.parametrize("name,code", [
    ("live_data_sb_EUR.json", "EUR"), ("/x/y/auction-USD.ndjson", "USD"), ("a_EUR.json.gz", "EUR"),
    ("auction.json", None), ("EUR.json", None), ("feed_eur.json", None), ("feed_GEX.json", None),
    ("feed_EURO.json", None), ("C:\\feeds\\sb_CHF.json", "CHF"), ("<EUR>.json", None)])
def test_source_currency(name, code):
    assert source_currency(name) == code


@pytest.mark.parametrize("value,amount", [
    (39, 39.0), (39.5, 39.5), ("39.50", 39.5), (" 7 ", 7.0), (0, 0.0), (np.float64(2.5), 2.5),
    (None, None), ("", None), ("1e3", None), ("1,234.00", None), ("inf", None), (float("inf"), None),
    (-1, None), (False, None), ([40], None), ("٣٩", None)])
def test_read_price(value, amount):
    got, problem = read_price(value)
    assert got == amount
    assert (problem is None) == (amount is not None or value in (None, ""))


def test_mixed_card_servers_are_a_group_of_their_own():
    s = fleet_summary([
        server(1, [(GTX, 1), (ADA, 1)], 240, "FSN1-DC1"),
        server(2, [(GTX, 1)], 40, "FSN1-DC1"),
    ], currency="EUR")
    assert rows(s.by_model, "model", "servers", "slices", "min_monthly_per_slice") == [
        ("GeForce GTX 1080", 1, 4, 10.0), ("GeForce GTX 1080 + RTX 4000 SFF Ada Generation", 1, 8, 30.0)]
    assert s.cheapest.column("cards").to_pylist() == [
        "1x GeForce GTX 1080", "1x GeForce GTX 1080, 1x RTX 4000 SFF Ada Generation"]
    assert s.headline()["cards"] == {"GeForce GTX 1080": 2, "RTX 4000 SFF Ada Generation": 1}


def test_unsupported_cards_add_no_slices_and_card_less_servers_no_price_figures():
    s = fleet_summary([
        server(1, [(GTX, 1)], 100, unsupported=["2x Quadro P4000 (10de:1bb1)"]),   # mixed
        server(2, [], 119, unsupported=["1x Quadro RTX 6000 (10de:1e30)"]),        # unsupported only
        server(3, [], 37),                                                        # no GPU at all
        server(4, [], 49, problems=["specials list GPU but no card name is recognisable"]),
    ], currency="EUR")
    assert rows(s.by_model, "model", "servers", "slices", "min_monthly_per_slice") == [
        ("GeForce GTX 1080", 1, 4, 25.0)]
    assert s.cheapest.column("unsupported_gpus").to_pylist() == [2]
    assert s.priced == 1 and s.capable_unpriced == 0
    h = s.headline()
    assert (h["servers"], h["gpu_capable"], h["slices"], h["unsupported_gpus"], h["servers_with_unsupported"],
            h["flagged"]) == (4, 1, 4, 3, 2, 1)
    assert rows(s.unsupported, "gpu", "gpus", "servers") == [
        ("Quadro P4000 (10de:1bb1)", 2, 1), ("Quadro RTX 6000 (10de:1e30)", 1, 1)]


def test_no_priced_server_gives_empty_tables_of_the_same_shape():
    s = fleet_summary([server(1, [(GTX, 1)]), server(2, [])])
    assert s.by_model.num_rows == s.by_datacenter.num_rows == s.cheapest.num_rows == 0
    assert s.by_model.column_names[:2] == ["currency", "model"]
    assert s.currencies == {} and s.capable_unpriced == 1
    empty = fleet_summary([])
    assert empty.totals.servers == 0 and empty.unsupported.num_rows == 0 and empty.flagged.num_rows == 0


def test_hourly_prices_where_given():
    s = fleet_summary([
        server(1, [(GTX, 1)], 40, hourly=0.064),
        server(2, [(GTX, 1)], 44, hourly="0.072"),
        server(3, [(GTX, 1)], 48),                 # no hourly price: monthly figures only
    ], currency="EUR")
    [g] = s.by_model.to_pylist()
    assert g["servers"] == 3 and g["hourly_servers"] == 2
    assert g["min_hourly_per_slice"] == pytest.approx(0.016)
    assert g["median_hourly_per_slice"] == pytest.approx((0.016 + 0.018) / 2)
    assert s.cheapest.column("hourly_per_slice").to_pylist()[:3] == [pytest.approx(0.016),
                                                                      pytest.approx(0.018), None]


def test_cheapest_keeps_the_top_n_per_currency_ties_in_row_order():
    reports = [server(i, [(GTX, 1)], p) for i, p in enumerate([60, 40, 52, 40, 44, 80, 40], 1)]
    s = fleet_summary(reports, currency="EUR", top=3)
    assert rows(s.cheapest, "row", "monthly") == [(2, 40.0), (4, 40.0), (7, 40.0)]
    assert fleet_summary(reports, currency="EUR", top=0).cheapest.num_rows == 0
    with pytest.raises(InputError):
        fleet_summary(reports, top=-1)


def test_flagged_rows_are_kept_up_to_a_bound_and_all_counted():
    reports = [server(i, [], problems=[f"row {i}: vendor 'zz' is not a hex ID"]) for i in range(1, 51)]
    s = fleet_summary(reports, keep_flagged=10)
    assert s.totals.flagged == 50 and s.flagged.num_rows == 10
    assert s.flagged.column("row").to_pylist() == list(range(1, 11))
    assert s.flagged.column("problems")[0].as_py() == "row 1: vendor 'zz' is not a hex ID"


def test_look_alikes_named_from_listing_text_and_from_ids():
    feed = [{"id": 1, "description": ["GPU - Nvidia Quadro RTX 6000"]},
            {"id": 2, "description": ["GPU - Nvidia RTX 4000 Ada Generation"]},
            {"id": 3, "description": ["RTX 6000 Ada Laptop GPU"]},       # known by name only
            {"id": 4, "description": ["GPU - Nvidia GeForce GTX 1070"]},
            {"id": 5, "description": ["2x Quadro RTX 6000"]}]
    s = fleet_summary(audit_records(feed))
    got = {r["gpu"]: (r["gpus"], r["servers"], r["look_alike_of"]) for r in s.unsupported.to_pylist()}
    assert got == {  # named as every report names them (pcinames.unsupported_label: pci.ids)
        "TU102GL [Quadro RTX 6000/8000] (10de:1e30)": (3, 2, "RTX 6000 Ada Generation"),
        "AD104GL [RTX 4000 Ada Generation] (10de:27b2)": (1, 1, "RTX 4000 SFF Ada Generation"),
        "RTX 6000 Ada Laptop GPU": (1, 1, "RTX 6000 Ada Generation"),
        "GP104 [GeForce GTX 1070] (10de:1b81)": (1, 1, None)}
    # the device-table path: the same names
    t = audit_table(pa.table({"server": ["q", "w"], "vendor": ["10de", "10de"], "device": ["1e30", "27b2"],
                              "class": ["0300", "0300"]}))
    u = fleet_summary(t).unsupported.to_pylist()
    assert [(r["gpu"], r["look_alike_card"]) for r in u] == [
        ("AD104GL [RTX 4000 Ada Generation] (10de:27b2)", "rtx-4000-sff-ada"),
        ("TU102GL [Quadro RTX 6000/8000] (10de:1e30)", "rtx-6000-ada")]


def test_a_custom_policy_names_look_alikes_of_its_own_cards():
    import copy

    from gpuclass.policy.default import DEFAULT_POLICY

    data = copy.deepcopy(DEFAULT_POLICY)
    data["cards"] = [c for c in data["cards"] if c["id"] == "gtx-1080"]
    [row] = fleet_summary([server(1, [], unsupported=["1x GeForce GTX 1080 Ti (10de:1b06)"])],
                          policy=data).unsupported.to_pylist()
    assert row["look_alike_card"] == "gtx-1080"


def test_headline_agrees_with_the_audit_totals(tmp_path):
    feed = tmp_path / "live_data_sb_EUR.json"
    feed.write_text(json.dumps({"server": AUCTION}))
    totals = AuditSummary()
    for r in audit_paths([feed]):
        totals.add(r)
    s = fleet_summary(audit_paths([feed]))
    assert s.totals.to_dict() == totals.to_dict()
    assert s.currencies == {"EUR": 6}           # 6 capable listings, all priced
    lspci = fleet_summary(audit_lspci_dumps(LSPCI.items()))
    assert lspci.totals.gpu_capable == 3 and lspci.currencies == {}


def test_reports_only():
    with pytest.raises(InputError, match="ServerReport"):
        fleet_summary([{"server": "a"}])


# -- against pandas: the same figures, computed as a notebook would -------------------------

_report = st.tuples(
    st.sampled_from([[(GTX, 1)], [(GTX, 2)], [(ADA, 1)], [(GTX, 1), (ADA, 1)], [(RTX6, 2)], []]),
    st.one_of(st.none(), st.integers(0, 2000), st.floats(0, 2000, allow_nan=False)),
    st.sampled_from([None, "FSN1-DC14", "NBG1-DC3", "HEL1-DC2"]),
    st.sampled_from(["a_EUR.json", "b_USD.json", "c.json"]),
    st.one_of(st.none(), st.floats(0, 5, allow_nan=False)))


@settings(max_examples=60, deadline=None)
@given(st.lists(_report, max_size=40))
def test_group_figures_equal_a_pandas_groupby(spec):
    reports = [server(i, cards, price, dc, source, hourly=hourly)
               for i, (cards, price, dc, source, hourly) in enumerate(spec, 1)]
    s = fleet_summary(reports)
    df = pd.DataFrame([{"currency": source_currency(r.source), "datacenter": r.extra.get("datacenter"),
                        "model": " + ".join(c["name"] for c in r.cards), "slices": r.slices,
                        "price": float(r.extra["price"]), "hourly": r.extra.get("hourly_price")}
                       for r in reports if r.gpu_capable and r.extra.get("price") is not None])
    for what, table in (("model", s.by_model), ("datacenter", s.by_datacenter)):
        got = {(r["currency"], r[what]): r for r in table.to_pylist()}
        if df.empty:
            assert not got
            continue
        df["pps"] = df["price"] / df["slices"]
        df["hps"] = df["hourly"].astype(float) / df["slices"]
        g = df.groupby(["currency", what], dropna=False)
        want = g.agg(servers=("pps", "size"), slices=("slices", "sum"), lo=("pps", "min"), med=("pps", "median"),
                     hi=("pps", "max"), price=("price", "sum"), hourly_n=("hps", "count"),
                     hlo=("hps", "min"), hmed=("hps", "median"))
        assert len(got) == len(want)
        for (cur, key), w in want.iterrows():
            r = got[(None if pd.isna(cur) else cur, None if pd.isna(key) else key)]
            assert (r["servers"], r["slices"], r["hourly_servers"]) == (w.servers, w.slices, w.hourly_n)
            for mine, theirs in ((r["min_monthly_per_slice"], w.lo), (r["median_monthly_per_slice"], w.med),
                                 (r["max_monthly_per_slice"], w.hi),
                                 (r["pooled_monthly_per_slice"], w.price / w.slices),
                                 (r["min_hourly_per_slice"], w.hlo), (r["median_hourly_per_slice"], w.hmed)):
                if math.isnan(theirs):
                    assert mine is None     # no hourly price in the group: null, not a number
                else:
                    assert mine == pytest.approx(theirs)
    # and the cheapest servers are the cheapest
    for cur in s.currencies:
        mine = [r["monthly_per_slice"] for r in s.cheapest.to_pylist() if r["currency"] == cur]
        sub = df[df["currency"].isna()] if cur is None else df[df["currency"] == cur]
        assert mine == pytest.approx(sorted(sub["pps"])[:50])
