"""What a scripter writes to audit an auction feed: json.load, one compiled regex, a CSV.

The names of the allowlisted cards, spacing and hyphens optional, a count before them
("2x"), editions told apart by what follows; one pass of one regex per server.

Usage: python regex_listings.py FEED.json OUT.csv
"""

import csv
import json
import re
import sys

CARDS = [("gtx-1080-ti", r"GTX[\s-]*1080[\s-]*Ti"), ("gtx-1080", r"GTX[\s-]*1080"),
         ("rtx-4000-sff-ada", r"RTX[\s-]*4000[\s-]*SFF[\s-]*Ada"), ("rtx-6000-ada", r"RTX[\s-]*6000[\s-]*Ada"),
         ("rtx-pro-6000-blackwell-max-q", r"RTX[\s-]*PRO[\s-]*6000[\s-]*Blackwell[\s-]*Max[\s-]*Q"),
         ("rtx-pro-6000-blackwell-server", r"RTX[\s-]*PRO[\s-]*6000[\s-]*Blackwell[\s-]*Server"),
         ("rtx-pro-6000-blackwell-workstation", r"RTX[\s-]*PRO[\s-]*6000[\s-]*Blackwell")]
NAME = re.compile(r"(?:\b([0-9]+)\s*x\s*)?\b(?:" + "|".join(f"({p})" for _, p in CARDS) + r")\b", re.IGNORECASE)

with open(sys.argv[1], encoding="utf-8") as fh:
    feed = json.load(fh)
with open(sys.argv[2], "w", newline="", encoding="utf-8") as out:
    w = csv.writer(out)
    w.writerow(["server", "cards", "supported_cards", "slices", "price", "datacenter"])
    for server in feed["server"]:
        found: dict[str, int] = {}
        for m in NAME.finditer("\n".join(server.get("description") or [])):
            card = CARDS[next(i for i, g in enumerate(m.groups()[1:]) if g)][0]
            found[card] = found.get(card, 0) + int(m.group(1) or 1)
        n = sum(found.values())
        w.writerow([server.get("id"), "; ".join(f"{c} x{k}" for c, k in found.items()), n, 4 * n,
                    server.get("price"), server.get("datacenter")])
