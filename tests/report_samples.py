"""Inputs for the fleet report's tests: the sample feed in the repository, and listings
written to attack a page (script tags, attribute breakouts, ``</script>`` inside text,
``javascript:`` URLs, Unicode tricks, mathtext for the charts)."""

from __future__ import annotations

from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "auction-sample_EUR.json"

HOSTILE = [
    "<script>window.__pwned=1</script>",
    '"><img src=x onerror="window.__pwned=1">',
    "' onmouseover='window.__pwned=1' x='",
    "</script><script>window.__pwned=1</script>",
    "</style><script>window.__pwned=1</script>",
    "javascript:window.__pwned=1",
    '<a href="javascript:window.__pwned=1">click</a>',
    "<svg onload=window.__pwned=1>",
    "<!-- --!><script>window.__pwned=1</script>",
    "<![CDATA[ ]]><script>window.__pwned=1</script>",
    "<iframe srcdoc='<script>parent.__pwned=1</script>'>",
    "<meta http-equiv=refresh content='0;url=javascript:window.__pwned=1'>",
    "<base href='javascript:/'>",
    "&lt;script&gt;window.__pwned=1&lt;/script&gt;",   # already-escaped text stays text
    "gex\u202e44 evil",                                   # right-to-left override
    "zero\u200bwidth\u2066isolate\u2069",
    "nul\x00bell\x07esc\x1b[31m",
    "lone \ud800 surrogate",
    "$\\frac{1}{0}$ $$ \\$",                              # mathtext, for matplotlib
    "{{7*7}} ${7*7} #{7*7}",
    "日本のサーバー 🚀",
]


def hostile_feed() -> list[dict]:
    feed = []
    for i, text in enumerate(HOSTILE):
        feed.append({"id": text, "description": [f"GPU - Nvidia GeForce GTX 1080 {text}"], "price": 40 + i,
                     "datacenter": text, "cpu": text, "specials": ["GPU"]})
        feed.append({"id": f"{text}-2", "description": [text, "GPU - Nvidia"], "specials": ["GPU"],
                     "price": 30, "datacenter": text})
    feed.append({"id": "long", "description": ["RTX 4000 SFF Ada Generation"], "price": 200,
                 "datacenter": "x" * 100_000})
    return feed


WIDE_GPUS = (
    "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition 96GB",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition 96GB",
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition 96GB",
    "GPU - Nvidia RTX™ 4000 SFF Ada Generation",
    "NVIDIA RTX 6000 Ada Generation 48 GB",
    "GPU - Nvidia GeForce GTX 1080 Ti",
    "GPU - Nvidia GeForce GTX 1080",
)
WIDE_UNSUPPORTED = ("GPU - Nvidia Quadro RTX 6000", "GPU - Nvidia RTX 4000 Ada Generation", "GPU - Nvidia RTX A6000")


def wide_feed(servers: int = 400) -> list[dict]:
    """A fleet that makes the page as wide as a real one can: the longest card names, servers
    holding two models at once (a group named by both), 60 datacenters with hyphenated and
    spaced names, four-digit monthly prices, hourly prices, and unsupported GPUs."""
    cities = ("FSN1", "NBG1", "HEL1", "ASH-VA", "HIL-OR", "SIN-SG")
    dcs = [f"{cities[i % 6]}-DC{i}" if i % 3 else f"{cities[i % 6]} Tuusula-North Hall {i}" for i in range(60)]
    feed = []
    for i in range(servers):
        gpus = [WIDE_GPUS[i % len(WIDE_GPUS)]]
        if i % 4 == 1:
            gpus.append(WIDE_GPUS[(i // 4) % len(WIDE_GPUS)])
        if i % 9 == 0:
            gpus.append(WIDE_UNSUPPORTED[(i // 9) % len(WIDE_UNSUPPORTED)])
        price = 40.0 + (i * 37) % 9000 + (i % 100) / 100
        row = {"id": 3_000_000 + i, "name": "GEX-wide", "description": ["AMD EPYC 9454P", *gpus],
               "datacenter": dcs[i % len(dcs)], "specials": ["GPU"], "price": price}
        if i % 2:
            row["hourly_price"] = round(price / 730, 4)
        feed.append(row)
    return feed
