"""Headless Chromium driven over the Chrome DevTools protocol, on a pipe (no port, no
websocket, no library): ``--remote-debugging-pipe`` reads NUL-terminated JSON commands on
fd 3 and writes responses and events on fd 4.

Used by the browser tests to open a page offline (the network emulated off, no proxy
reachable, every request recorded) and read back what a person would see: console
errors, exceptions, requests, element sizes, a screenshot.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

__all__ = ["find_chromium", "Chromium", "Page"]

_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """``$GPUCLASS_CHROMIUM`` or the first Chromium on ``PATH`` (Debian's package: ``chromium``)."""
    given = os.environ.get("GPUCLASS_CHROMIUM")
    if given:
        return given
    return next((p for p in map(shutil.which, _CANDIDATES) if p), None)


def _above_9(fd: int) -> int:
    """The same pipe end on a descriptor above 9 (close-on-exec, as ``os.pipe`` made it)."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Chromium:
    """One headless browser; :meth:`open` gives a :class:`Page` per URL."""

    def __init__(self, binary: str, profile: Path, timeout: float = 60.0) -> None:
        self.timeout = timeout
        cmd_r, self._cmd_w = os.pipe()
        self._out_r, out_w = os.pipe()
        # the child's ends above fd 9, so that placing them on 3 and 4 clobbers neither
        cmd_r, out_w = (_above_9(fd) for fd in (cmd_r, out_w))
        args = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                f"--user-data-dir={profile}", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-default-apps", "--mute-audio",
                # nothing outside this machine is reachable even if a page asked
                "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
                "about:blank"]
        self.log = profile / "chromium.log"
        # the browser is not ours to instrument: no sanitizer runtime preloaded into it
        # (tools/sanitize.sh preloads ASan/UBSan for the tests' own processes)
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")}
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(["bash", "-c", f'exec "$@" 3<&{cmd_r} 4>&{out_w}', "bash", *args],
                                         pass_fds=(cmd_r, out_w), stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=log, env=env)
        os.close(cmd_r)
        os.close(out_w)
        self._buf = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    # -- the protocol ------------------------------------------------------------------

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._out_r], [], [], left)[0]:
                raise TimeoutError(f"Chromium did not answer; its log: {self.log.read_text(errors='replace')[-2000:]}")
            chunk = os.read(self._out_r, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Chromium closed the pipe; its log: {self.log.read_text(errors='replace')[-2000:]}")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def _send(self, method: str, params: dict[str, Any] | None, session: str | None) -> int:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        return self._next

    def _event(self, got: dict[str, Any]) -> None:
        self.events.append(got)
        if got["method"] == "Page.javascriptDialogOpening":
            # a dialog blocks the page until answered: dismiss it (the event is kept)
            self._send("Page.handleJavaScriptDialog", {"accept": False}, got.get("sessionId"))

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        """Send a command and wait for its answer (events read meanwhile are kept)."""
        wanted = self._send(method, params, session)
        deadline = time.monotonic() + self.timeout
        while True:
            got = self._read(deadline)
            if got.get("id") == wanted:
                if "error" in got:
                    raise RuntimeError(f"{method}: {got['error']}")
                return got.get("result", {})
            if "method" in got:
                self._event(got)

    def wait_event(self, method: str, session: str) -> dict[str, Any]:
        """The first event ``method`` of ``session`` (already read, or read now)."""
        deadline = time.monotonic() + self.timeout
        seen = 0
        while True:
            for e in self.events[seen:]:
                if e["method"] == method and e.get("sessionId") == session:
                    return e
            seen = len(self.events)
            got = self._read(deadline)
            if "method" in got:
                self._event(got)

    def open(self, url: str, width: int = 1100, height: int = 900) -> "Page":
        """A new tab, offline, at ``url`` (loaded: its load event fired)."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=session)
        self.call("Network.emulateNetworkConditions", {"offline": True, "latency": 0,
                                                       "downloadThroughput": -1, "uploadThroughput": -1},
                  session)
        self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                         "deviceScaleFactor": 1, "mobile": False}, session)
        mark = len(self.events)
        self.call("Page.navigate", {"url": url}, session)
        self.wait_event("Page.loadEventFired", session)
        return Page(self, session, mark)

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd_w)
        os.close(self._out_r)


class Page:
    """One open tab: evaluate script, read what it logged and requested, take a screenshot."""

    def __init__(self, browser: Chromium, session: str, mark: int) -> None:
        self.browser = browser
        self.session = session
        self.mark = mark

    def eval(self, expression: str) -> Any:
        res = self.browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                                self.session)
        if "exceptionDetails" in res:
            raise RuntimeError(f"page script failed: {res['exceptionDetails']}")
        return res["result"].get("value")

    def _events(self) -> list[dict[str, Any]]:
        self.eval("0")  # read what arrived so far
        return [e for e in self.browser.events[self.mark:] if e.get("sessionId") == self.session]

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions, log entries of level error (CSP refusals
        among them) and dialogs opened."""
        out = []
        for e in self._events():
            p = e["params"]
            if e["method"] == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
                out.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif e["method"] == "Runtime.exceptionThrown":
                out.append("exception: " + json.dumps(p["exceptionDetails"])[:500])
            elif e["method"] == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.append(f"log ({p['entry'].get('source')}): {p['entry']['text']}")
            elif e["method"] == "Page.javascriptDialogOpening":
                out.append("dialog: " + p.get("message", ""))
        return out

    def requests(self) -> list[str]:
        """URLs the page asked for, itself included (``data:`` URLs left out: they are the
        page's own bytes)."""
        return [e["params"]["request"]["url"] for e in self._events()
                if e["method"] == "Network.requestWillBeSent"
                and not e["params"]["request"]["url"].startswith("data:")]

    def screenshot(self, path: Path) -> Path:
        """The whole page as PNG."""
        height = int(self.eval("Math.ceil(document.documentElement.scrollHeight)"))
        width = int(self.eval("Math.ceil(document.documentElement.clientWidth)"))
        self.browser.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                                 "deviceScaleFactor": 1, "mobile": False},
                          self.session)
        data = self.browser.call("Page.captureScreenshot", {"format": "png"}, self.session)["data"]
        path.write_bytes(base64.b64decode(data))
        return path
