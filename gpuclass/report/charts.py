"""The report's charts: matplotlib figures rendered to SVG.

Why matplotlib rendering SVG, and not Vega-Lite: the page must open offline, and a
Vega-Lite chart needs its JavaScript runtime (vega, vega-lite, vega-embed: about a
megabyte) embedded in every report and allowed to run; matplotlib draws the chart here,
once, into a vector image that needs no script at all.  Text is drawn as glyph outlines
(``svg.fonttype: path``), so a chart looks the same wherever it is opened, and each chart
is embedded as an ``<img>`` (a ``data:`` URI): an image cannot run script or load
anything, whatever a listing's text puts in its labels.  Listing text never reaches
mathtext (``parse_math=False``: a ``$`` in a server name is a dollar sign).

matplotlib is imported by the functions, never at ``import gpuclass``; it comes with the
``report`` extra.

>>> svg = histogram_svg([10.0, 12.5, 15.0], [3, 1], title="Monthly price per slice", unit="EUR")
>>> svg.startswith("<svg") and "</svg>" in svg
True
"""

from __future__ import annotations

import base64
import io
import os
import sys
import warnings
from collections.abc import Sequence
from contextlib import contextmanager
from typing import Any

from ..errors import InputError, MissingExtraError
from .escape import visible

__all__ = ["price_svg", "histogram_svg", "data_uri", "require", "LABEL_LIMIT"]

LABEL_LIMIT = 42  # characters of a group's name on a chart axis
_BAR, _MARK, _GRID = "#4c72b0", "#c44e52", "#d9d9d9"


def require() -> None:
    """An :class:`~gpuclass.errors.InputError` now, before any input is read, where
    matplotlib is missing."""
    _config_dir()
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("matplotlib", "report", "HTML reports") from exc


def _usable(path: str, levels: int) -> bool:
    """Whether matplotlib can use the folder ``path``, or make it with at most ``levels``
    missing levels (``.config/matplotlib`` in an existing home: never the home itself)."""
    p = path
    while not os.path.lexists(p):
        up = os.path.dirname(p)
        levels -= 1
        if up == p or levels < 0:
            return False
        p = up
    return os.path.isdir(p) and os.access(p, os.W_OK | os.X_OK)


def _config_dir() -> None:
    """Give matplotlib a folder of its own where its default ones cannot be written (a
    ``$HOME`` that does not exist or is not this user's): without one it makes a temporary
    folder and says so on stderr, twice, in every report.  The folder: ``matplotlib`` in
    gpuclass's trusted cache directory (its font list kept for the next report), else a
    private temporary one removed at exit.  ``$MPLCONFIGDIR``, where set, is left as it is,
    and so is a matplotlib already imported."""
    if "matplotlib" in sys.modules or os.environ.get("MPLCONFIGDIR"):
        return
    home = os.path.expanduser("~")
    config, cache = (os.path.join(os.environ.get(var) or os.path.join(home, base), "matplotlib")
                     for var, base in (("XDG_CONFIG_HOME", ".config"), ("XDG_CACHE_HOME", ".cache")))
    if (_usable(config, 1 if os.environ.get("XDG_CONFIG_HOME") else 2)
            and _usable(cache, 1 if os.environ.get("XDG_CACHE_HOME") else 2)):
        return
    from ..cachedir import cache_dir, make_cache_dir, trust_problem

    folder = os.path.join(cache_dir(), "matplotlib")
    try:
        make_cache_dir(cache_dir())
        make_cache_dir(folder)
        trusted = trust_problem(folder) is None and os.access(folder, os.W_OK | os.X_OK)
    except OSError:
        trusted = False
    if not trusted:
        import atexit
        import shutil
        import tempfile

        folder = tempfile.mkdtemp(prefix="gpuclass-matplotlib-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["MPLCONFIGDIR"] = folder


@contextmanager
def _figure(width: float, height: float):
    require()
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    style = {"svg.fonttype": "path", "svg.hashsalt": "gpuclass-report", "font.family": "DejaVu Sans",
             "font.size": 10, "axes.spines.top": False, "axes.spines.right": False}
    with matplotlib.rc_context(style), warnings.catch_warnings():
        # a listing's character missing from the font is drawn as a box, not reported
        warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)
        fig = Figure(figsize=(width, height), layout="constrained")
        FigureCanvasSVG(fig)
        yield fig


def _svg(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue().decode("utf-8")
    return text[text.index("<svg"):]  # the XML declaration and doctype are for files


def price_svg(labels: Sequence[Any], medians: Sequence[float], minimums: Sequence[float], *,
              title: str, unit: str) -> str:
    """Horizontal bars: the median price per slice of each group, a mark at its cheapest."""
    n = len(labels)
    names = [visible("not given" if x is None else x, LABEL_LIMIT) for x in labels]
    with _figure(10.0, 1.3 + 0.32 * max(n, 1)) as fig:
        ax = fig.add_subplot()
        y = list(range(n))
        bars = ax.barh(y, medians, color=_BAR, height=0.6, label="median")
        ax.scatter(minimums, y, marker="D", s=18, color=_MARK, zorder=3, label="cheapest")
        ax.bar_label(bars, labels=[_amount(m) for m in medians], padding=3, fontsize=9)
        ax.set_yticks(y, labels=names, parse_math=False)
        ax.invert_yaxis()
        ax.set_xlabel(f"monthly price per slice ({unit})", parse_math=False)
        ax.set_title(title, loc="left", fontsize=11, parse_math=False)
        ax.grid(axis="x", color=_GRID, linewidth=0.6)
        ax.set_axisbelow(True)
        ax.margins(x=0.15)
        if n:  # above the bars, never over them
            ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=2, fontsize=9, frameon=False)
        return _svg(fig)


def _amount(value: float) -> str:
    """A bar's label, never wider than about 20 characters: ``1,234.50``; past a trillion (a
    listing's price can be any number) ``2.5e+299``, whose 300 digits had left the bars no
    room (matplotlib warned on stderr that the constrained layout collapsed)."""
    return f"{value:,.2f}" if abs(value) < 1e12 else f"{value:.3g}"


def histogram_svg(edges: Sequence[float], counts: Sequence[int], *, title: str, unit: str) -> str:
    """How the GPU-capable servers spread over monthly price per slice."""
    with _figure(10.0, 2.8) as fig:
        ax = fig.add_subplot()
        if len(counts):
            widths = [b - a for a, b in zip(edges[:-1], edges[1:])]
            ax.bar(edges[:-1], counts, width=widths, align="edge", color=_BAR, edgecolor="white",
                   linewidth=0.5)
        ax.set_xlabel(f"monthly price per slice ({unit})", parse_math=False)
        ax.set_ylabel("servers")
        ax.set_title(title, loc="left", fontsize=11, parse_math=False)
        ax.grid(axis="y", color=_GRID, linewidth=0.6)
        ax.set_axisbelow(True)
        return _svg(fig)


def data_uri(svg: str) -> str:
    """An SVG as a ``data:`` URI for an ``<img>``."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
