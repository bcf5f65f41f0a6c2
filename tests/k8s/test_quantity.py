"""Kubernetes quantities against apimachinery's own test table (resource/quantity_test.go:
TestQuantityParse and its invalid list), and what a pod's nvidia.com/gpu makes of them."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuclass.errors import QuantityError
from gpuclass.k8s.pods import validate_pod
from gpuclass.k8s.quantity import MAX_ALLOWED, parse_quantity


def dec(i: int, exponent: int) -> Fraction:
    """apimachinery's decQuantity(i, exponent): i * 10**exponent."""
    return Fraction(i) * Fraction(10) ** exponent


# TestQuantityParse: input -> expected amount
APIMACHINERY = [
    ("0", dec(0, 0)), ("0n", dec(0, 0)), ("0u", dec(0, 0)), ("0m", dec(0, 0)), ("0Ki", dec(0, 0)),
    ("0k", dec(0, 0)), ("0Mi", dec(0, 0)), ("0M", dec(0, 0)), ("0Gi", dec(0, 0)), ("0G", dec(0, 0)),
    ("0Ti", dec(0, 0)), ("0T", dec(0, 0)),
    ("1", dec(1, 0)),
    ("1Ki", dec(1024, 0)), ("8Ki", dec(8 * 1024, 0)), ("7Mi", dec(7 * 1024**2, 0)),
    ("6Gi", dec(6 * 1024**3, 0)), ("5Ti", dec(5 * 1024**4, 0)), ("4Pi", dec(4 * 1024**5, 0)),
    ("3Ei", dec(3 * 1024**6, 0)), ("10Ti", dec(10 * 1024**4, 0)), ("100Ti", dec(100 * 1024**4, 0)),
    ("5n", dec(5, -9)), ("4u", dec(4, -6)), ("3m", dec(3, -3)), ("9", dec(9, 0)), ("8k", dec(8, 3)),
    ("50k", dec(5, 4)), ("7M", dec(7, 6)), ("6G", dec(6, 9)), ("5T", dec(5, 12)), ("40T", dec(4, 13)),
    ("300T", dec(3, 14)), ("2P", dec(2, 15)), ("1E", dec(1, 18)),
    ("1E-3", dec(1, -3)), ("1e3", dec(1, 3)), ("1E6", dec(1, 6)), ("1e9", dec(1, 9)),
    ("1E12", dec(1, 12)), ("1e15", dec(1, 15)), ("1E18", dec(1, 18)),
    ("1e14", dec(1, 14)), ("1e13", dec(1, 13)), ("100.035k", dec(100035, 0)),
    ("0.001", dec(1, -3)), ("0.0005k", dec(5, -1)), ("0.005", dec(5, -3)), ("0.05", dec(5, -2)),
    ("0.5", dec(5, -1)), ("0.00050k", dec(5, -1)), ("0.00500", dec(5, -3)), ("0.05000", dec(5, -2)),
    ("0.50000", dec(5, -1)), ("0.5e0", dec(5, -1)), ("0.5e-1", dec(5, -2)), ("0.5e-2", dec(5, -3)),
    ("10.035M", dec(10035, 3)),
    ("1.2e3", dec(12, 2)), ("1.3E+6", dec(13, 5)), ("1.40e9", dec(14, 8)), ("1.53E12", dec(153, 10)),
    ("1.6e15", dec(16, 14)), ("1.7E18", dec(17, 17)),
    ("9.01", dec(901, -2)), ("8.1k", dec(81, 2)), ("7.123456M", dec(7123456, 0)),
    ("6.987654321G", dec(6987654321, 0)), ("5.444T", dec(5444, 9)), ("40.1T", dec(401, 11)),
    ("300.2T", dec(3002, 11)), ("2.5P", dec(25, 14)), ("1.01E", dec(101, 16)),
    ("3.001n", dec(4, -9)), ("1.1E-9", dec(2, -9)), ("0.0000000001", dec(1, -9)),
    ("0.0000000005", dec(1, -9)), ("0.00000000050", dec(1, -9)), ("0.5e-9", dec(1, -9)),
    ("0.9n", dec(1, -9)), ("0.00000012345", dec(124, -9)), ("0.00000012354", dec(124, -9)),
    ("9Ei", Fraction(MAX_ALLOWED)), ("9223372036854775807Ki", Fraction(MAX_ALLOWED)),
    ("12E", dec(12, 18)),
    ("100.035Ki", dec(10243584, -2)), ("0.5Mi", dec(512 * 1024, 0)), ("0.05Gi", dec(536870912, -1)),
    ("0.025Ti", dec(274877906944, -1)),
    ("0.000000000001Ki", dec(2, -9)), (".001", dec(1, -3)), (".0001k", dec(100, -3)),
    ("1.", dec(1, 0)), ("1.G", dec(1, 9)),
]
# the invalid list of TestQuantityParse (whitespace inside the text: gpuclass strips the ends,
# as the API server's JSON decoding does, so " 1" and "1 " are tested below as stripped)
INVALID = ["1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-",
           "1e4294967297", "", "1K", "1 1", "1e", "Ki1", "1Kii", "++1"]


@pytest.mark.parametrize("text, value", APIMACHINERY)
def test_apimachinery_table(text, value):
    assert parse_quantity(text) == value
    # ... and signed, as the Go test also checks every row
    assert parse_quantity("-" + text) == -value
    assert parse_quantity("+" + text) == value


@pytest.mark.parametrize("text", INVALID)
def test_apimachinery_invalid(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_quirks_apimachinery_accepts_too():
    # parseQuantityString's table: "." and "-." are zero; a bare sign reads as zero as well
    assert parse_quantity(".") == parse_quantity("-.") == parse_quantity("+") == 0
    # exponents in the 32-bit range are taken, beyond it refused
    assert parse_quantity("1e-2147483647") == dec(1, -9)
    with pytest.raises(QuantityError, match="32-bit"):
        parse_quantity("1e-2147483648")
    assert parse_quantity(" 2\n") == 2  # JSON decoding trims


def test_numbers_read_like_their_text():
    assert parse_quantity(4) == 4 and parse_quantity(0.5) == dec(5, -1) and parse_quantity(1e-10) == dec(1, -9)
    for bad in (True, None, [1], float("nan"), float("inf")):
        with pytest.raises(QuantityError):
            parse_quantity(bad)


@given(st.integers(min_value=-(10**18), max_value=10**18), st.sampled_from(
    ["", "k", "M", "G", "Ki", "Mi", "Gi", "e3", "E-2"]))
def test_integer_with_suffix_is_exact(n, suffix):
    scale = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30,
             "e3": 10**3, "E-2": Fraction(1, 100)}[suffix]
    expected = n * scale
    if suffix.endswith("i") and abs(expected) > MAX_ALLOWED:
        expected = MAX_ALLOWED if expected > 0 else -MAX_ALLOWED
    assert parse_quantity(f"{n}{suffix}") == expected


def _limit(value):
    return validate_pod({"kind": "Pod", "spec": {"containers": [
        {"name": "a", "resources": {"limits": {"nvidia.com/gpu": value}}}]}})


@pytest.mark.parametrize("value", ["500m", 0.5, "1.5", "1500m", "0.1n", "1e-1"])
def test_a_fractional_gpu_request_is_invalid_and_says_why(value):
    v = _limit(value)
    assert not v.valid and len(v.errors) == 1
    assert "must be an integer" in v.errors[0]
    assert "whole slices" in v.errors[0] and "cannot be split" in v.errors[0]


@pytest.mark.parametrize("value, slices", [("1", 1), ("1.", 1), ("1000m", 1), ("1e0", 1), ("+1", 1),
                                           ("0.001k", 1), (".001k", 1), ("0", 0), ("1Ki", 1024),
                                           ("1Ei", 2**60)])
def test_whole_quantities_in_any_form(value, slices):
    v = _limit(value)
    assert v.containers[0].slices == slices
    assert v.valid is (slices <= 1)
    if slices > 1:
        assert v.errors == ['spec.containers[0] (a): invalid allocation request for "nvidia.com/gpu": '
                            f"invalid request: maximum request size for shared resources is 1; found {slices}"]


def test_a_malformed_request_names_the_reason():
    v = _limit("1K")
    assert v.errors == ['spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "1K": '
                        "not a Kubernetes quantity (unknown suffix 'K' (decimal suffixes are n u m k "
                        "M G T P E, binary ones Ki Mi Gi Ti Pi Ei))"]
