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
