"""The allowlist policy: default contents, files in three formats, validation with field paths."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gpuclass.classify import compile_policy
from gpuclass.errors import PolicyError
from gpuclass.policy import Policy, format_for, load_policy

PLATFORM = {  # the platform allowlist, as DESIGN.md states it
    0x1B80: "gtx-1080",
    0x1B06: "gtx-1080-ti",
    0x27B0: "rtx-4000-sff-ada",
    0x26B1: "rtx-6000-ada",
    0x2BB1: "rtx-pro-6000-blackwell-workstation",
    0x2BB4: "rtx-pro-6000-blackwell-max-q",
    0x2BB5: "rtx-pro-6000-blackwell-server",
}


def card(id_="x", device="2dff", **extra):
    c = {"id": id_, "name": id_.upper(), "family": "blackwell", "kernel_module": "open",
         "match": [{"vendor": "10de", "device": device}]}
    c.update(extra)
    return c


def error_of(data, fmt="json") -> PolicyError:
    text = json.dumps(data) if fmt == "json" and not isinstance(data, str) else data
    with pytest.raises(PolicyError) as info:
        Policy.loads(text, fmt)
    return info.value


def test_default_is_the_platform_allowlist_exactly():
    p = Policy.default()
    rules = {(r.vendor, r.device, r.subvendor, r.subdevice): c.id for c in p.cards for r in c.match}
    assert rules == {(0x10DE, d, None, None): cid for d, cid in PLATFORM.items()}
    assert p.slices_per_card == 4
    assert p.fail_requests_greater_than_one is True
    assert p.gpu_classes == [0x0300, 0x0302]
    assert p.deny == []
    assert {c.id: (c.family, c.kernel_module) for c in p.cards} == {
        "gtx-1080": ("pascal", "proprietary"), "gtx-1080-ti": ("pascal", "proprietary"),
        "rtx-4000-sff-ada": ("ada-lovelace", "open"), "rtx-6000-ada": ("ada-lovelace", "open"),
        "rtx-pro-6000-blackwell-workstation": ("blackwell", "open"),
        "rtx-pro-6000-blackwell-max-q": ("blackwell", "open"),
        "rtx-pro-6000-blackwell-server": ("blackwell", "open"),
    }
    assert all(c.aliases for c in p.cards)
    assert load_policy() == p


def test_default_compiles_the_same_with_and_without_pydantic():
    a, b = compile_policy(None), compile_policy(Policy.default())
    for x, y in zip(a.tables, b.tables):
        assert np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
    assert a.card_ids == b.card_ids


@pytest.mark.parametrize("fmt", ["json", "yaml", "toml"])
def test_round_trip_through_files(tmp_path, fmt):
    p = Policy.default().model_copy(update={
        "cards": Policy.default().cards + [Policy.model_validate({"cards": [card(
            "quadro-rtx-6000", "1e30", family="turing",
            match=[{"vendor": "10de", "device": "1e30", "subvendor": "10de", "subdevice": "12ba"}],
            slices=8)]}).cards[0]],
        "deny": Policy.model_validate({"deny": [
            {"vendor": "10de", "device": "1b80", "subvendor": "1028", "subdevice": "07c0",
             "reason": "laptop part"}]}).deny})
    path = p.save(tmp_path / f"policy.{fmt}")
    assert Policy.load(path) == p
    assert load_policy(path) == p
    text = path.read_text()
    assert "1e30" in text and "12ba" in text


def test_yaml_quoted_ids_are_hex_and_counts_stay_numbers():
    p = Policy.loads("gpu_classes: ['0300', \"0302\"]\ngpu_vendors: [10de]\nslices_per_card: 8\n", "yaml")
    assert p.gpu_classes == [0x0300, 0x0302]   # not octal 192
    assert p.gpu_vendors == [0x10DE]           # not a number in any reading: text
    assert p.slices_per_card == 8


@pytest.mark.parametrize("field, text", [
    ("gpu_classes[0]", "gpu_classes: [0300]\n"),
    ("gpu_vendors[0]", "gpu_vendors: [4318]\n"),
    ("cards[0].match[0].device", "cards:\n- {id: a, name: A, family: ada-lovelace, kernel_module: open,\n"
                                 "   match: [{vendor: 10de, device: 2684}]}\n"),
    ("deny[0].subdevice", "deny:\n- {vendor: 10de, device: 1e30, subvendor: 10de, subdevice: 129_0}\n"),
])
def test_yaml_bare_numbers_are_refused_as_in_json_and_toml(field, text):
    """``device: 2684`` in YAML is a number to a reader (is it hex 2684 or decimal?): refused
    naming the field, as JSON's and TOML's numbers are; ``policy show`` writes IDs quoted."""
    err = error_of(text, "yaml")
    assert err.path == field and "quoted hex" in err.reason
    assert Policy.loads(Policy.loads(text.replace("0300", "'0300'").replace("4318", "'10de'")
                                     .replace("2684", "'2684'").replace("129_0", "'1290'"), "yaml")
                        .dumps("yaml"), "yaml")


def test_policy_show_quotes_every_id_and_reads_back():
    text = Policy.default().dumps("yaml")
    for line in text.splitlines():
        key, _, value = line.strip().lstrip("- ").partition(": ")
        if key in ("vendor", "device", "subvendor", "subdevice") or (not _ and line.strip().startswith("- ")
                                                                      and key[:1].isdigit()):
            assert (value or key)[0] == "'", line
    assert Policy.loads(text, "yaml") == Policy.default()


@pytest.mark.parametrize("typo, family", [("blackwel", "blackwell"), ("ada", "ada-lovelace"),
                                          ("Pascal", "pascal"), ("lovelace", "ada-lovelace")])
def test_an_unknown_family_is_refused_with_the_family_it_misspells(typo, family):
    for fmt, text in (("yaml", f"cards:\n- {{id: a, name: A, family: {typo}, kernel_module: open,\n"
                               "   match: [{vendor: '10de', device: '2b85'}]}\n"),
                      ("json", json.dumps({"cards": [card(family=typo)]}))):
        err = error_of(text, fmt)
        assert err.path == "cards[0].family" and f"'{typo}'" in err.reason, err
        assert f"did you mean '{family}'" in err.reason or family in err.reason


@pytest.mark.parametrize("typo, field, at", [
    ("kernel_modul", "kernel_module", "cards[0]"), ("familly", "family", "cards[0]"),
    ("slice_per_card", "slices_per_card", ""), ("venodr", "vendor", "cards[0].match[0]"),
])
def test_a_misspelled_key_is_the_first_problem_and_names_the_key_it_misspells(typo, field, at):
    data = {"cards": [card()]}
    target = data if not at else data["cards"][0] if at == "cards[0]" else data["cards"][0]["match"][0]
    if field in target:
        target[typo] = target.pop(field)
    else:
        target[typo] = 4
    err = error_of(json.dumps(data), "json")
    assert err.path == (f"{at}.{typo}" if at else typo)
    assert f"unknown field '{typo}'" in err.reason and f"did you mean '{field}'" in err.reason
    assert not any("required" in r for p, r in err.errors if p.endswith(field))


def test_ids_accept_0x_prefix_and_ints_from_python():
    p = Policy.model_validate({"cards": [card(match=[{"vendor": 0x10DE, "device": "0x2DFF"}])]})
    assert p.cards[0].match[0].key == (0x10DE, 0x2DFF, None, None)


@pytest.mark.parametrize("data, path, words", [
    ({"cards": [card(match=[{"vendor": "10dg", "device": "1"}])]}, "cards[0].match[0].vendor", "bad hex"),
    ({"cards": [card(match=[{"vendor": "10de", "device": "12345"}])]}, "cards[0].match[0].device", "bad hex"),
    ({"cards": [card(match=[{"vendor": 4318, "device": "1"}])]}, "cards[0].match[0].vendor", "quoted hex"),
    ({"cards": [card("a", "1"), card("a", "2")]}, "cards[1].id", "duplicate card id"),
    ({"cards": [card("a", "1"), card("b", "0x0001")]}, "cards[1].match[0]", "duplicates cards[0].match[0]"),
    ({"cards": [card("a", "1")], "deny": [{"vendor": "10de", "device": "1"}]}, "deny[0]", "duplicates"),
    ({"cards": [card("a", "1", aliases=["RTX X"]), card("b", "2", aliases=["rtx  x"])]},
     "cards[1].aliases[0]", "already names a"),
    ({"slices_per_card": 1}, "slices_per_card", "greater than or equal to 2"),
    ({"cards": [card(slices=1)]}, "cards[0].slices", "greater than or equal to 2"),
    ({"bogus": 1}, "bogus", "unknown field"),
    ({"cards": [card(colour="green")]}, "cards[0].colour", "unknown field"),
    ({"cards": [card(family="pascal")]}, "cards[0].kernel_module", "open kernel modules"),
    ({"cards": [card(match=[{"vendor": "10de", "device": "1", "subvendor": "10de"}])]},
     "cards[0].match[0]", "go together"),
    ({"cards": [card(match=[])]}, "cards[0].match", "at least 1"),
    ({"cards": [card(id_="Bad Id")]}, "cards[0].id", "pattern"),
    ({"gpu_classes": ["0300", "0300"]}, "gpu_classes[1]", "duplicate"),
    ({"version": 2}, "version", "less than or equal to 1"),
])
def test_invalid_policies_name_the_field(data, path, words):
    err = error_of(data)
    assert err.path == path, str(err)
    assert words in err.reason
    assert str(err).startswith(f"{path}: ")
    assert isinstance(err, ValueError)


def test_several_errors_are_all_kept():
    err = error_of({"slices_per_card": 0, "bogus": 1})
    assert {p for p, _ in err.errors} == {"slices_per_card", "bogus"}
    assert "(and 1 more)" in str(err)


@pytest.mark.parametrize("fmt, text", [
    ("json", "{"), ("yaml", "x: ["), ("toml", "a = "), ("json", "[1, 2]"),
])
def test_syntax_errors_and_non_mappings(fmt, text):
    err = error_of(text, fmt)
    assert err.path == ""


def test_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "p.toml"
    bad.write_text('slices_per_card = 1\n')
    with pytest.raises(PolicyError, match=r"p\.toml: slices_per_card: "):
        Policy.load(bad)
    with pytest.raises(PolicyError, match="cannot read"):
        Policy.load(tmp_path / "missing.json")
    with pytest.raises(PolicyError, match="cannot tell the format"):
        format_for("policy.ini")
    with pytest.raises(PolicyError, match="unknown policy format"):
        Policy.default().dumps("xml")


def test_toml_ints_are_refused_not_guessed():
    err = error_of('[[cards]]\nid = "a"\nname = "A"\nfamily = "ada-lovelace"\n'
                   'kernel_module = "open"\n[[cards.match]]\nvendor = "10de"\ndevice = 2684\n', "toml")
    assert err.path == "cards[0].match[0].device"


def test_most_specific_rule_wins_and_deny_rules():
    p = Policy.model_validate({
        "cards": [card("quadro-rtx", "1e30"),
                  card("quadro-rtx-6000", "1e30",
                       match=[{"vendor": "10de", "device": "1e30", "subvendor": "10de", "subdevice": "12ba"}])],
        "deny": [{"vendor": "10de", "device": "1e30", "subvendor": "10de", "subdevice": "129e",
                  "reason": "RTX 8000 is not offered"}],
    })
    assert p.match(0x10DE, 0x1E30, 0x10DE, 0x12BA).card.id == "quadro-rtx-6000"
    denied = p.match(0x10DE, 0x1E30, 0x10DE, 0x129E)
    assert denied.card is None and denied.path == "deny[0]"
    assert p.match(0x10DE, 0x1E30).card.id == "quadro-rtx"
    assert p.match(0x10DE, 0x1E30, 0x1028, 0x1234).card.id == "quadro-rtx"
    assert p.match(0x10DE, 0x1E31) is None


def test_policy_json_schema():
    schema = Policy.model_json_schema()
    assert "cards" in schema["properties"]
    assert schema["$defs"]["MatchRule"]["properties"]["vendor"]["type"] == "string"
