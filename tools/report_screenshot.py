"""Regenerate docs/report.png: the fleet report of the sample feed, as headless Chromium shows it.

    python tools/report_screenshot.py            # needs gpuclass[report], Chromium and Pillow

It runs the command of docs/guides/fleet-report.md (``gpuclass audit
examples/auction-sample_EUR.json --format html -o ...``), opens the page offline in headless Chromium (Debian's ``chromium``, or
``$GPUCLASS_CHROMIUM``), takes the top of it and stores it with a 64-colour palette (the
page is flat colours), well under 300 kB.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = "examples/auction-sample_EUR.json"
OUT = ROOT / "docs" / "report.png"
WIDTH, HEIGHT = 1100, 1500


def chromium() -> str:
    found = os.environ.get("GPUCLASS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        sys.exit("report_screenshot: no Chromium (apt-get install chromium, or set GPUCLASS_CHROMIUM)")
    return found


def main() -> int:
    from PIL import Image

    with tempfile.TemporaryDirectory() as tmp:
        page, shot = Path(tmp) / "report.html", Path(tmp) / "shot.png"
        run = subprocess.run([sys.executable, "-m", "gpuclass", "audit", SAMPLE, "--format", "html", "-o", str(page)],
                             cwd=ROOT, capture_output=True, text=True)
        if run.returncode not in (0, 1):  # 1: the sample has flagged listings, on purpose
            sys.exit(f"report_screenshot: gpuclass audit failed: {run.stderr}")
        subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--user-data-dir={tmp}/profile", "--proxy-server=127.0.0.1:9",
                        "--host-resolver-rules=MAP * ~NOTFOUND", f"--window-size={WIDTH},{HEIGHT}",
                        f"--screenshot={shot}", page.as_uri()],
                       check=True, capture_output=True, timeout=120)
        OUT.parent.mkdir(exist_ok=True)
        with Image.open(shot) as im:
            im.convert("RGB").quantize(colors=64).save(OUT, optimize=True)
    print(f"{OUT.relative_to(ROOT)}: {OUT.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
