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

A second test opens every page with display math at once, each in an iframe
1280 px wide, and fails when an equation is wider than the column holding it
(MathJax does not break long formulas: such an equation is clipped or scrolls).

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
      // display equations wider than the column that holds them: [source, overflow px]
      wide: Array.from(document.querySelectorAll('mjx-container[display="true"]')).map(
        (c) => {
          const math = c.querySelector("mjx-math") || c;
          const column = c.parentElement.getBoundingClientRect();
          const r = math.getBoundingClientRect();
          const tex = (c.parentElement.getAttribute("data-tex") ||
                       c.nextElementSibling?.textContent || c.textContent || "");
          return [tex.slice(0, 80), Math.round(Math.max(r.right - column.right,
                                                        column.left - r.left))];
        }).filter((w) => w[1] > 1),
      column: Math.round((document.querySelector("main article, main") ||
                          document.body).getBoundingClientRect().width),
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
    url: str,
    profile: Path,
    *mode: str,
    height: int = 1600,
    width: int = 1280,
    budget: int = 30000,
    timeout: int = 180,
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
        f"--window-size={width},{height}",
        f"--virtual-time-budget={budget}",
        *mode,
        url,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


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
    # At 1280 px every display equation fits the column it sits in: nothing is
    # clipped or needs a scroll bar (MathJax does not break lines by itself).
    assert report["wide"] == [], (
        f"{name}: equations wider than the {report['column']} px column at 1280 px: "
        f"{report['wide']}"
    )
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


# A page of iframes, 1280 px wide each, one per page of the site with display
# math: each iframe gets the probe above; once all have reported (or 150 s have
# passed) the page writes their reports into <pre id="equations-probe">.  One
# browser for all the pages keeps the test short.  The page returns as soon as all
# have reported; 40 s were too few with the test command's second worker busy on
# the other core at a load of 8 (most pages had not reported).
EQUATIONS_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>equations at 1280 px</title></head>
<body style="margin: 0">
<script>
const pages = %s;
const frames = pages.map((page) => {
  const frame = document.createElement("iframe");
  frame.src = page;
  frame.width = "1280";
  frame.height = "900";
  frame.style.display = "block";
  document.body.appendChild(frame);
  return frame;
});
const started = Date.now();
const timer = setInterval(function () {
  const reports = frames.map((frame) => {
    const pre = frame.contentDocument && frame.contentDocument.getElementById("site-probe");
    return pre ? JSON.parse(pre.textContent) : null;
  });
  if (reports.every((r) => r !== null) || Date.now() - started > 150000) {
    clearInterval(timer);
    const out = document.createElement("pre");
    out.id = "equations-probe";
    out.textContent = JSON.stringify(pages.map((page, i) => [page, reports[i]]));
    document.body.appendChild(out);
  }
}, 250);
</script>
</body></html>
"""


@pytest.mark.skipif(BROWSER is None, reason="needs Chromium (apt-get install chromium)")
def test_display_equations_fit_the_page_at_1280px(site, tmp_path):
    """No display equation of any page is wider than its column in a 1280 px window.

    MathJax does not break long formulas; one wider than the text column is
    clipped or scrolls.  Every page with display math is opened at once, each in
    an iframe 1280 px wide, and each equation's typeset width is compared with
    the column that holds it.
    """
    base, _ = site
    html_dir = built_site()
    with_math = sorted(
        str(p.relative_to(html_dir))
        for p in html_dir.rglob("*.html")
        if "_static" not in p.parts
        and "_modules" not in p.parts
        and 'div class="math notranslate nohighlight"' in p.read_text(encoding="utf-8")
    )
    assert "derivation.html" in with_math and len(with_math) >= 10, with_math
    # The pages of PAGES are checked by test_page_renders_offline.
    skip = set(PAGES.values())
    pages = [page for page in with_math if page not in skip]
    (html_dir / "__equations__.html").write_text(
        EQUATIONS_PAGE % json.dumps(pages), encoding="utf-8"
    )
    proc = _chromium(
        base + "__equations__.html",
        tmp_path / "profile",
        "--dump-dom",
        height=1000,
        width=1300,
        budget=170000,
        timeout=400,
    )
    found = re.search(r'<pre id="equations-probe"[^>]*>(.*?)</pre>', proc.stdout, re.S)
    assert found, f"no report (Chromium said: {proc.stderr[-2000:]})"
    reports = json.loads(html.unescape(found.group(1)))
    missing = [page for page, report in reports if report is None]
    assert missing == [], f"pages that did not report: {missing}"
    untypeset = [page for page, report in reports if report["mjx"] == 0]
    assert untypeset == [], f"pages whose math was not typeset: {untypeset}"
    wide = {page: report["wide"] for page, report in reports if report["wide"]}
    assert wide == {}, f"equations wider than their column at 1280 px: {wide}"
