"""A ValidatingAdmissionPolicy's CEL evaluated with cel-python, as the API server evaluates it.

The API server gives the expressions the object as it serializes it (quantities as
strings) and Kubernetes' CEL libraries; of those the policies here use the quantity
library's ``quantity(string)``, ``Quantity.add(Quantity)`` and
``Quantity.isGreaterThan(Quantity)``, which this module binds to the apimachinery
quantity reading that ``gpuclass.k8s.quantity`` implements (and its own tests hold to
apimachinery's).  A validation that does not evaluate to a boolean is an error, which
``failurePolicy: Fail`` makes a refusal.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import celpy
from celpy import celtypes

from gpuclass.k8s.quantity import parse_quantity


class Quantity:
    """A Kubernetes quantity in CEL: an exact value."""

    def __init__(self, value: Fraction) -> None:
        self.value = value


def _quantity(text: Any) -> Quantity:
    if not isinstance(text, str):
        raise TypeError(f"quantity() takes a string, got {type(text).__name__}")
    return Quantity(parse_quantity(str(text)))


def _add(a: Quantity, b: Any) -> Quantity:
    return Quantity(a.value + (b.value if isinstance(b, Quantity) else Fraction(int(b))))


def _greater(a: Quantity, b: Quantity) -> celtypes.BoolType:
    return celtypes.BoolType(a.value > b.value)


FUNCTIONS = {"quantity": _quantity, "add": _add, "isGreaterThan": _greater}


def wire(obj: Any) -> Any:
    """An object as the API server serializes it for admission: quantities are strings."""
    if isinstance(obj, dict):
        return {k: ({r: str(q) for r, q in v.items()} if k in ("limits", "requests") and isinstance(v, dict)
                    else wire(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [wire(v) for v in obj]
    return obj


class Policy:
    """A ValidatingAdmissionPolicy's validations, compiled once."""

    def __init__(self, vap: dict) -> None:
        env = celpy.Environment()
        self.validations = [(v["message"], env.program(env.compile(v["expression"]), functions=FUNCTIONS))
                            for v in vap["spec"]["validations"]]

    def refusals(self, obj: dict) -> list[str]:
        """The messages of the validations ``obj`` fails (empty: admitted)."""
        activation = {"object": celpy.json_to_cel(wire(obj))}
        out = []
        for message, program in self.validations:
            result = program.evaluate(activation)
            if not isinstance(result, celtypes.BoolType):
                raise AssertionError(f"a validation evaluated to {result!r}, not a boolean")
            if not result:
                out.append(message)
        return out
