"""The built site, read in a real browser with no network.

The test builds the documentation, serves it from this machine and opens the
derivation, an API page and a notebook chapter in headless Chromium, which may
reach nothing but the local server.  A small script, added to every page as it
is served, waits for MathJax to typeset the page and then writes what it found
into the page, which Chromium prints (``--dump-dom``):

* every ``\\(``, ``\\[`` and ``$$`` of the text has been typeset: none is left
  outside code, and MathJax's ``mjx-container`` elements are there;
* every image has loaded (``naturalWidth > 0``);
* every resource the page loaded came from the local server.

It also takes a screenshot of each page into a temporary folder
(``scratchnet-screenshots-*``, kept; the paths are printed with ``pytest -s``),
for a person to look at.  It is skipped where
Chromium is not installed; ``.ci/run`` installs Debian's ``chromium``.
"""

from __future__ import annotations

import functools
import html
import io
import json
import re
import shutil
import subprocess
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from _site import built_site

pytest.importorskip("sphinx")
pytest.importorskip("myst_nb")

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")
BROWSER = next((shutil.which(name) for name in BROWSERS if shutil.which(name)), None)

PAGES = {
    "derivation": "derivation.html",
    "api-losses": "api/losses.html",
    "notebook-03": "notebooks/03_bayes_posterior_gaussians.html",
}
# Screenshots tall enough to show a figure of the chapter, a "Taught in" line.
HEIGHTS = {"derivation": 1600, "api-losses": 3200, "notebook-03": 4400}

# Added before </body> of every page served: once MathJax is done, write a
# report into a <pre id="site-probe"> for --dump-dom to print.
PROBE = """
<script>
document.addEventListener("DOMContentLoaded", function () {
  for (const img of document.images) { img.loading = "eager"; }
});
window.addEventListener("load", function () {
  function report() {
    const main = (document.querySelector("main") || document.body).cloneNode(true);
    for (const el of main.querySelectorAll("pre, code, script, style, mjx-container")) {
      el.remove();
    }
    const text = main.textContent;
    const out = {
      mjx: document.querySelectorAll("mjx-container").length,
      raw: ["\\\\(", "\\\\[", "$$"].filter((d) => text.includes(d)),
      images: Array.from(document.images).map(
        (img) => [img.getAttribute("src"), img.complete ? img.naturalWidth : -1]),
      resources: performance.getEntriesByType("resource").map((e) => e.name),
    };
    const pre = document.createElement("pre");
    pre.id = "site-probe";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  const started = window.MathJax && MathJax.startup && MathJax.startup.promise;
  if (started) { MathJax.startup.promise.then(report, report); } else { report(); }
});
</script>
"""


class _Handler(SimpleHTTPRequestHandler):
    """Serve the built site, with the probe added to every HTML page."""

    def log_message(self, *args):  # keep pytest's output clean
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if path.suffix != ".html" or not path.is_file():
            return super().send_head()
        body = path.read_bytes().replace(b"</body>", PROBE.encode() + b"</body>")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


@pytest.fixture(scope="module")
def site():
    """The built site (``tests/_site.py``), served on a free local port."""
    html = built_site()
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(html))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    shots = Path(tempfile.mkdtemp(prefix="scratchnet-screenshots-"))
    yield f"http://127.0.0.1:{server.server_port}/", shots
    server.shutdown()
    server.server_close()


def _chromium(
    url: str, profile: Path, *mode: str, height: int = 1600
) -> subprocess.CompletedProcess:
    """Run headless Chromium on ``url``: no network beyond this machine."""
    cmd = [
        BROWSER,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-dev-shm-usage",
        # every host name but the local server's fails to resolve
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        f"--user-data-dir={profile}",
        f"--window-size=1280,{height}",
        "--virtual-time-budget=30000",
        *mode,
        url,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


@pytest.mark.skipif(BROWSER is None, reason="needs Chromium (apt-get install chromium)")
@pytest.mark.parametrize("name", PAGES)
def test_page_renders_offline(site, name, tmp_path):
    base, shots = site
    url = base + PAGES[name]
    for attempt in range(2):  # a loaded machine may starve the first browser
        proc = _chromium(url, tmp_path / f"profile-{attempt}", "--dump-dom")
        found = re.search(r'<pre id="site-probe"[^>]*>(.*?)</pre>', proc.stdout, re.S)
        if found:
            break
    assert found, f"no report from the page (Chromium said: {proc.stderr[-2000:]})"
    report = json.loads(html.unescape(found.group(1)))

    assert report["raw"] == [], f"{name}: math left untypeset: {report['raw']}"
    assert report["mjx"] >= 5, f"{name}: only {report['mjx']} typeset formulas"
    broken = [src for src, width in report["images"] if not width or width < 0]
    assert broken == [], f"{name}: images that did not load: {broken}"
    outside = [r for r in report["resources"] if not r.startswith(base)]
    assert outside == [], f"{name}: resources from outside the site: {outside}"
    assert any("mathjax" in r for r in report["resources"]), "MathJax was not loaded"
    if name.startswith("notebook"):
        assert report["images"], "a notebook chapter without its figures"

    shot = shots / f"{name}.png"
    _chromium(url, tmp_path / "shot", f"--screenshot={shot}", height=HEIGHTS[name])
    assert shot.is_file() and shot.stat().st_size > 10_000, "no screenshot"
    print(f"screenshot: {shot}")
