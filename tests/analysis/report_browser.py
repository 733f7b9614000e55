#!/usr/bin/python3
"""Open a collplot report in headless Chromium, check it as a reader sees it, screenshot it.

  report_browser.py REPORT.html [--screenshot PNG] [--scale S] [--width PX] [--timeout S]

Fails (exit 1, one line per problem) on
  - a broken image: an <img> not complete or with naturalWidth 0 once the page has loaded
    (lazy images are made eager first), a corrupt data: URI included;
  - a broken link: a local href/src (relative or file:) whose file does not exist, an in-page
    #anchor no element has as id (or <a name>), a remote src (the report must be
    self-contained: it is opened offline); remote <a href> links are counted, not followed;
  - a browser console message of level SEVERE or WARNING (console.error/warn, failed loads,
    uncaught exceptions: Chromium's browser log), and JS errors caught on the page itself
    (window 'error' and 'unhandledrejection', installed before the page's own scripts run).
Writes a full-page PNG screenshot (default: REPORT's folder, REPORT's stem + .png) either way.
Exit 0: no problem (one summary line); 2: usage or input error (no report, no Chromium).
Chromium runs as root in a container: --headless=new --no-sandbox --disable-gpu
--disable-dev-shm-usage. Debian packages: chromium chromium-driver python3-selenium.
"""
from __future__ import annotations

import argparse
import base64
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

CHROMIUM = os.environ.get("COLLBENCH_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("COLLBENCH_CHROMEDRIVER", "/usr/bin/chromedriver")
FAILING_LEVELS = ("SEVERE", "WARNING")

# Installed before any of the page's scripts: records what a reader's console would show as
# errors, including failed resource loads (the capture phase sees <img>/<script> errors).
COLLECT_ERRORS_JS = r"""
window.__cbErrors = [];
window.addEventListener('error', function (e) {
  var t = e.target;
  if (t && t !== window && t.tagName) {
    var what = t.getAttribute('src') || t.getAttribute('href') || '';
    window.__cbErrors.push('failed to load <' + t.tagName.toLowerCase() + '> ' + what.slice(0, 100));
  } else {
    window.__cbErrors.push('JS error: ' + (e.message || 'error') + ' at ' + (e.filename || '?') + ':' + (e.lineno || 0));
  }
}, true);
window.addEventListener('unhandledrejection', function (e) {
  window.__cbErrors.push('JS error: unhandled promise rejection: ' + String(e.reason));
});
"""

# Lazy images below the fold are never fetched by a headless viewport: make them eager and
# wait until every image has settled (loaded or failed), bounded by the script timeout.
SETTLE_IMAGES_JS = r"""
const done = arguments[arguments.length - 1];
const imgs = Array.from(document.images);
imgs.forEach(i => { if (i.loading === 'lazy') i.loading = 'eager'; });
Promise.all(imgs.map(i => i.complete ? null : new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); })))
  .then(() => done(true));
"""

INVENTORY_JS = r"""
const describe = i => {
  const a = i.closest('a'), src = i.getAttribute('src') || '';
  const parts = [src.startsWith('data:') ? 'embedded ' + src.slice(0, Math.max(0, src.indexOf(','))) : 'src ' + src.slice(0, 100)];
  if (i.alt) parts.push('alt "' + i.alt.slice(0, 60) + '"');
  if (a) parts.push('in link ' + a.getAttribute('href'));
  return parts.join(', ');
};
const refs = [];
for (const e of document.querySelectorAll('[href],[src]'))
  for (const a of ['href', 'src'])
    if (e.hasAttribute(a)) refs.push([e.tagName.toLowerCase(), a, e.getAttribute(a)]);
const ids = Array.from(document.querySelectorAll('[id]'), e => e.id)
  .concat(Array.from(document.querySelectorAll('a[name]'), e => e.getAttribute('name')));
return {
  images: Array.from(document.images, i => [describe(i), i.complete, i.naturalWidth]),
  refs: refs, ids: ids, errors: window.__cbErrors || ['error collector not installed'],
  title: document.title,
};
"""


@dataclass
class Outcome:
    report: Path
    problems: list[str] = field(default_factory=list)
    images: int = 0
    local_links: int = 0
    anchors: int = 0
    remote_links: int = 0
    console: list[str] = field(default_factory=list)  # every browser log entry, level first
    screenshot: Path | None = None
    shot_size: tuple[int, int] = (0, 0)
    title: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        shot = f"; screenshot {self.screenshot} ({self.shot_size[0]}x{self.shot_size[1]})" if self.screenshot else ""
        return (f"{self.report}: {'OK' if self.ok else f'{len(self.problems)} problem(s)'} in headless Chromium: "
                f"{self.images} images, {self.local_links} local links, {self.anchors} in-page anchors, "
                f"{self.remote_links} remote links (not followed), {len(self.console)} console messages{shot}")


class InputError(Exception):
    """Usage or input error: exit 2."""


def check_ref(tag: str, attr: str, value: str, report: Path, ids: set[str], out: Outcome) -> None:
    v = value.strip()
    where = f"<{tag} {attr}={value[:100]!r}>"
    if not v:
        out.problems.append(f"broken link: {where}: empty")
        return
    parts = urlsplit(v)
    scheme = parts.scheme.lower()
    if scheme == "data":
        return  # an embedded image is checked by the browser (naturalWidth)
    if scheme in ("http", "https") or v.startswith("//"):
        if attr == "src" or tag == "link":
            out.problems.append(f"remote resource: {where}: the report must be self-contained (it is read offline)")
        else:
            out.remote_links += 1
        return
    if scheme in ("mailto", "tel"):
        return
    if scheme not in ("", "file"):
        out.problems.append(f"broken link: {where}: scheme '{scheme}' does not open from a file")
        return
    frag = unquote(parts.fragment)
    if not parts.path:  # in-page: "#anchor" ("#" alone is the top of the page)
        out.anchors += 1
        if frag and frag not in ids:
            out.problems.append(f"broken anchor: {where}: no element with id '{frag}'")
        return
    out.local_links += 1
    path = Path(url2pathname(parts.path)) if scheme == "file" else Path(unquote(parts.path))
    target = path if path.is_absolute() else report.parent / path
    if not target.exists():
        out.problems.append(f"broken link: {where}: {target} does not exist")
    elif frag and target.resolve() == report.resolve() and frag not in ids:
        out.problems.append(f"broken anchor: {where}: no element with id '{frag}'")


class Browser:
    """One headless Chromium (chromedriver) for any number of checks."""

    def __init__(self, width: int = 1280, timeout: float = 60) -> None:
        for exe, pkg in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
            if not os.access(exe, os.X_OK):
                raise InputError(f"{exe} not found: apt-get install {pkg} (scripts/deps.sh installs it)")
        try:
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
        except ImportError as e:
            raise InputError(f"selenium not importable ({e}): apt-get install python3-selenium") from e
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  f"--window-size={width},900", "--hide-scrollbars", "--no-first-run"):
            opts.add_argument(a)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
        self.driver.set_page_load_timeout(timeout)
        self.driver.set_script_timeout(timeout)
        self.version = self.driver.capabilities.get("browserVersion", "?")

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.driver.quit()

    def check(self, report: Path, screenshot: Path | None = None, scale: float = 1.0) -> Outcome:
        report = Path(report).resolve()
        if not report.is_file():
            raise InputError(f"no such report: {report}")
        out = Outcome(report)
        d = self.driver
        d.get_log("browser")  # drop what an earlier check left
        script = d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": COLLECT_ERRORS_JS})
        try:
            d.get(report.as_uri())
            d.execute_async_script(SETTLE_IMAGES_JS)
            inv = d.execute_script(INVENTORY_JS)
        finally:
            d.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]})
        out.title = inv["title"]
        for what, complete, width in inv["images"]:
            out.images += 1
            if not complete or not width:
                out.problems.append(f"broken image: {what} (complete={str(complete).lower()}, naturalWidth={width})")
        ids = set(inv["ids"])
        for tag, attr, value in inv["refs"]:
            check_ref(tag, attr, value, report, ids, out)
        out.problems += inv["errors"]
        if screenshot is not None:
            out.screenshot, out.shot_size = screenshot, self._screenshot(screenshot, scale)
        # Last: the screenshot's full-page layout may load or run more.
        for e in d.get_log("browser"):
            line = f"{e['level']} {e.get('source', '?')}: {e['message'][:300]}"
            out.console.append(line)
            if e["level"] in FAILING_LEVELS:
                out.problems.append(f"console {line}")
        return out

    def _screenshot(self, path: Path, scale: float) -> tuple[int, int]:
        size = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
        w, h = int(size["width"]), int(size["height"])
        shot = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": w, "height": h, "scale": scale}})
        data = base64.b64decode(shot["data"])
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)  # an interrupted run never leaves half a PNG
        return round(w * scale), round(h * scale)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="report_browser.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("report", type=Path, help="the report.html to open")
    ap.add_argument("--screenshot", type=Path, help="full-page PNG (default: next to the report, <stem>.png)")
    ap.add_argument("--scale", type=float, default=1.0, help="screenshot scale (default 1; 0.5 halves both sides)")
    ap.add_argument("--width", type=int, default=1280, help="window width in CSS pixels (default 1280)")
    ap.add_argument("--timeout", type=float, default=60, help="page load/script bound in seconds (default 60)")
    a = ap.parse_args(argv)
    if not 0 < a.scale <= 4 or a.width < 200 or a.timeout <= 0:
        print("report_browser.py: --scale must be in (0, 4], --width >= 200, --timeout > 0", file=sys.stderr)
        return 2
    shot = a.screenshot or a.report.with_suffix(".png")
    try:
        if not a.report.is_file():
            raise InputError(f"no such report: {a.report}")
        with Browser(a.width, a.timeout) as b:
            out = b.check(a.report, shot, a.scale)
    except InputError as e:
        print(f"report_browser.py: {e}", file=sys.stderr)
        return 2
    for p in out.problems:
        print(f"report_browser.py: {out.report.name}: {p}", file=sys.stderr)
    print(f"report_browser.py: Chromium {b.version}: {out.summary()}")
    return 0 if out.ok else 1


if __name__ == "__main__":
    sys.exit(main())
