"""What the matcher's property tests draw from: small ID pools (so that random devices hit
random rules often), random rules, and random device inputs with their optional columns."""

from __future__ import annotations

from hypothesis import strategies as st

VENDORS = [0x10DE, 0x1002, 0x8086, 0x0000, 0xFFFF]
DEVICES = [0x0000, 0x1B80, 0x1E30, 0x27B0, 0xFFFF, 0x0001]
SUBS = [0x0000, 0x10DE, 0x12BA, 0xFFFF]
CLASSES = [0x030000, 0x030200, 0x038000, 0x040300, 0x0C0330, 0x0C8000, 0x020000, 0xFFFFFF, 0]


def draw_rule(draw, n_cards: int) -> tuple:
    """One ``(vendor, device, subvendor, subdevice, card)`` rule; the subsystem may be None."""
    v, d = draw(st.sampled_from(VENDORS)), draw(st.sampled_from(DEVICES))
    sub = draw(st.one_of(st.none(), st.tuples(st.sampled_from(SUBS), st.sampled_from(SUBS))))
    return (v, d, *(sub or (None, None)), draw(st.integers(-1, n_cards - 1)))


def draw_classes_and_vendors(draw, n_cards: int) -> tuple[list, list, list, list]:
    """The card slices, GPU classes, companion classes and GPU vendors of a policy."""
    slices = draw(st.lists(st.integers(0, 0xFFFF), min_size=n_cards, max_size=n_cards))
    gpu_classes = draw(st.lists(st.sampled_from([0x0300, 0x0302, 0x0380, 0xFFFF]), unique=True))
    companions = draw(st.lists(st.sampled_from([0x0403, 0x0C03, 0x0C80, 0x0300]), unique=True))
    vendors = draw(st.lists(st.sampled_from(VENDORS), unique=True, max_size=3))
    return slices, gpu_classes, companions, vendors


def draw_devices(draw) -> tuple[dict, dict]:
    """Valid inputs (what a source's DeviceTable holds) as lists: the ID columns, and the
    optional ones that were drawn (``has_subsystem``, ``flags``, the address, ``group``)."""
    n = draw(st.integers(0, 40))
    col = lambda pool: draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))  # noqa: E731
    args = dict(vendor=col(VENDORS), device=col(DEVICES), subvendor=col(SUBS), subdevice=col(SUBS),
                class_code=col(CLASSES))
    kw: dict = {}
    if draw(st.booleans()):
        kw["has_subsystem"] = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if not draw(st.booleans()):
        args["subvendor"] = args["subdevice"] = None
        kw.pop("has_subsystem", None)
    if draw(st.booleans()):
        kw["flags"] = col([0, 1, 2, 4, 8, 9, 0xFFFFFFFF])
    if draw(st.booleans()):
        kw["domain"], kw["bus"], kw["slot"] = col([0, 1, 0x10000]), col([0, 1, 255]), col([0, 1, 31])
        if draw(st.booleans()):
            kw["group"] = col([0, 1, -5, 2**40])
    return args, kw
