"""The built site, read in a real browser with no network.

The test builds the documentation, serves it from this machine and opens every
page of it (all but the highlighted sources of ``_modules/``, which hold no
prose) in one headless Chromium, which may reach nothing but the local server:
a page of iframes, 1280 px wide each, one per page.  A small script, added to
every page as it is served, waits for MathJax and then writes what it found
into the page; the page of iframes gathers the reports and Chromium prints them
(``--dump-dom``).  For every page:

* no ``\\(``, ``\\[`` or ``$$`` is left in the text outside code and the math
  elements, and every formula of the math elements is read by MathJax's TeX
  parser without an error;
* every display equation is typeset, and none is wider than the column holding
  it (MathJax does not break long formulas: such an equation is clipped or
  scrolls);
* every image has loaded (``naturalWidth > 0``), and a notebook chapter has its
  figures;
* everything the page loaded, or asks for in a ``src`` or a stylesheet's
  ``href``, comes from the local server.

Laying out a formula is what costs (about 17 ms each; the site has some 2,600):
the pages of ``PAGES`` (a page of prose, an API page and a chapter) are typeset
whole, as a reader's browser does, and every typeset formula counted; on the
other pages MathJax lays out the display equations (their width is the check)
and parses each inline formula without laying it out (``MathJax.tex2mml``): the
same checks, with a quarter less of the browser's CPU (58 s instead of 78 s for
the site's 64 pages, measured on one machine at one load).

Two more pages in the same run are copies of a built page with a fault of each
kind planted in them, one typeset whole and one the other way, and the probe
must find every fault in both: the checks above can fail.

Screenshots of the derivation, an API page and a chapter, for a person to look
at, are taken only when asked: ``SCRATCHNET_SCREENSHOTS=1 python -m pytest -s
tests/test_site.py`` writes them into a temporary folder
(``scratchnet-screenshots-*``, kept) and prints their paths.  The tests are
skipped where Chromium is not installed; ``.ci/run`` installs Debian's
``chromium``.
"""

from __future__ import annotations

import functools
import html
import io
import json
import os
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
needs_browser = pytest.mark.skipif(
    BROWSER is None, reason="needs Chromium (apt-get install chromium)"
)

# The pages of the screenshots, each tall enough to show a figure of the
# chapter, a "Taught in" line; each must also hold at least 5 typeset formulas.
PAGES = {
    "derivation": "derivation.html",
    "api-losses": "api/losses.html",
    "notebook-03": "notebooks/03_bayes_posterior_gaussians.html",
}
HEIGHTS = {"derivation": 1600, "api-losses": 3200, "notebook-03": 4400}

# Added before </body> of every page served: once MathJax is done, write a
# report into a <pre id="site-probe">.  With ``startup.typeset`` off (the pages
# not in PAGES, see _Handler), the probe typesets the display equations itself
# and parses each inline formula with MathJax.tex2mml.
PROBE = """
<script>
document.addEventListener("DOMContentLoaded", function () {
  for (const img of document.images) { img.loading = "eager"; }
});
window.addEventListener("load", function () {
  const whole = !(window.MathJax && MathJax.config && MathJax.config.startup &&
                  MathJax.config.startup.typeset === false);
  const errors = [];
  function tex(el) {
    return el.textContent.trim().replace(/^\\\\[([]/, "").replace(/\\\\[)\\]]$/, "");
  }
  function parse() {
    if (whole) { return Promise.resolve(); }
    for (const el of document.querySelectorAll("span.math")) {
      let mml = "<merror>";
      try { mml = MathJax.tex2mml(tex(el), {display: false}); } catch (e) { }
      if (mml.includes("<merror")) { errors.push(tex(el).slice(0, 80)); }
    }
    return MathJax.typesetPromise(Array.from(document.querySelectorAll("div.math")));
  }
  function report() {
    const main = (document.querySelector("main") || document.body).cloneNode(true);
    const skip = "pre, code, script, style, mjx-container" + (whole ? "" : ", span.math");
    for (const el of main.querySelectorAll(skip)) { el.remove(); }
    const text = main.textContent;
    const typeset = window.MathJax && MathJax.startup && MathJax.startup.document;
    for (const item of (typeset ? typeset.math : [])) {
      if (item.typesetRoot && item.typesetRoot.querySelector("mjx-merror")) {
        errors.push(item.math.trim().slice(0, 80));
      }
    }
    const asked = Array.from(document.querySelectorAll(
      "script[src], img[src], iframe[src], source[src], link[rel~=stylesheet][href]"
    )).map((el) => el.src || el.href);
    const out = {
      whole: whole,
      mjx: document.querySelectorAll("mjx-container").length,
      display: document.querySelectorAll("div.math").length,
      inline: document.querySelectorAll("span.math").length,
      errors: errors,
      raw: ["\\\\(", "\\\\[", "$$"].filter((d) => text.includes(d)),
      images: Array.from(document.images).map(
        (img) => [img.getAttribute("src"), img.complete ? img.naturalWidth : -1]),
      resources: performance.getEntriesByType("resource").map((e) => e.name)
        .concat(asked),
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
  if (started) { MathJax.startup.promise.then(parse).then(report, report); } else { report(); }
});
</script>
"""

# MathJax's configuration as Sphinx writes it into a page, and the same with
# the page-load typesetting turned off (the probe's own way, above).
MATHJAX_CONFIG = b"window.MathJax = {"
PARSED_ONLY = b'window.MathJax = {"startup": {"typeset": false}, '


# Pages served at the site's root but never written into the built site, which
# tests/test_docs.py reads too: {name: HTML}.
IN_MEMORY: dict = {}


class _Handler(SimpleHTTPRequestHandler):
    """Serve the built site, with the probe added to every HTML page."""

    def log_message(self, *args):  # keep pytest's output clean
        pass

    def send_head(self):
        name = self.path.split("?")[0].lstrip("/")
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if name in IN_MEMORY:
            body = IN_MEMORY[name]
        elif path.suffix == ".html" and path.is_file():
            body = path.read_bytes()
        else:
            return super().send_head()
        body = body.replace(b"</body>", PROBE.encode() + b"</body>")
        if name not in TYPESET_WHOLE:
            body = body.replace(MATHJAX_CONFIG, PARSED_ONLY, 1)
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
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def screenshots():
    """The screenshots' folder, kept after the run: made only when they are asked for."""
    return Path(tempfile.mkdtemp(prefix="scratchnet-screenshots-"))


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


# A page of iframes, 1280 px wide each, one per page of the site, at most
# AT_ONCE loading at a time (the later ones then find MathJax, its fonts and the
# theme in the browser's cache): each iframe gets the probe above, and is removed
# once its report is read (a page left open keeps costing the browser: about a
# tenth of its CPU); once all have reported (or DEADLINE_MS of the browser's
# virtual time have passed) the page writes their reports into
# <pre id="site-probes">.  One browser for all the
# pages keeps the test short; a short deadline (40 s) left most pages without a
# report with the test command's second worker busy on the other core at a load
# of 8.
AT_ONCE, DEADLINE_MS = 6, 600_000
FRAMES_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>every page at 1280 px</title></head>
<body style="margin: 0">
<script>
const pages = %s, atOnce = %d, deadline = %d;
const frames = [], reports = [];
function open() {
  const frame = document.createElement("iframe");
  frame.src = pages[frames.length];
  frame.width = "1280";
  frame.height = "900";
  frame.style.display = "block";
  document.body.appendChild(frame);
  frames.push(frame);
  reports.push(null);
}
function read(i) {
  const frame = frames[i];
  const pre = frame.contentDocument && frame.contentDocument.getElementById("site-probe");
  if (pre) {
    reports[i] = JSON.parse(pre.textContent);
    frame.remove();
  }
}
const started = Date.now();
const timer = setInterval(function () {
  frames.forEach((frame, i) => { if (reports[i] === null) { read(i); } });
  const loading = reports.filter((r) => r === null).length;
  for (let i = loading; i < atOnce && frames.length < pages.length; i++) { open(); }
  const done = frames.length === pages.length && reports.every((r) => r !== null);
  if (done || Date.now() - started > deadline) {
    clearInterval(timer);
    const out = document.createElement("pre");
    out.id = "site-probes";
    out.textContent = JSON.stringify(pages.map((page, i) => [page, reports[i] || null]));
    document.body.appendChild(out);
  }
}, 100);
</script>
</body></html>
"""

# The pages with planted faults: copies of a built page with display math, with
# an unmatched \( (as a :math: role left raw leaves one), an inline formula that
# is not valid TeX, a display equation far wider than any column, and an image
# from outside the site; one is typeset whole (as PAGES), the other as the rest.
PLANTED = "__planted__.html"
PLANTED_WHOLE = "__planted_whole__.html"
PLANTED_PAGES = (PLANTED, PLANTED_WHOLE)
PLANTED_FAULTS = (
    '<p>A formula cut in half: \\(x^2 and never closed.</p>\n'
    '<p>A bracket left open: <span class="math notranslate nohighlight">'
    '\\(\\left( x\\)</span>.</p>\n'
    '<div class="math notranslate nohighlight">\\['
    + " + ".join(f"x_{{{i}}}" for i in range(200))
    + '\\]</div>\n'
    '<img src="http://planted.invalid/figure.png" alt="planted">\n'
)

# The pages MathJax typesets whole when they load, as in a reader's browser
# (every formula laid out); the others get the probe's cheaper reading.
TYPESET_WHOLE = {*PAGES.values(), PLANTED_WHOLE}


def _planted(html_dir: Path, source: str) -> bytes:
    """A copy of the built page ``source`` with ``PLANTED_FAULTS`` in it."""
    text = (html_dir / source).read_text(encoding="utf-8")
    assert "</main>" in text, f"{source} has no <main>"
    return text.replace("</main>", PLANTED_FAULTS + "</main>", 1).encode()


def _pages(html_dir: Path) -> list:
    """Every page of the site but the highlighted sources (``_modules/``)."""
    return sorted(
        str(p.relative_to(html_dir))
        for p in html_dir.rglob("*.html")
        if not {"_static", "_modules", "_sources", "_images"} & set(p.parts)
    )


def _has_math(html_dir: Path, page: str) -> bool:
    return 'class="math notranslate nohighlight"' in (html_dir / page).read_text(
        encoding="utf-8"
    )


@pytest.fixture(scope="module")
def reports(site, tmp_path_factory):
    """``{page: report}`` of every page and of the planted pages, from one Chromium run."""
    base = site
    html_dir = built_site()
    pages = _pages(html_dir)
    assert "derivation.html" in pages and len(pages) >= 40, pages
    for planted in PLANTED_PAGES:
        IN_MEMORY[planted] = _planted(html_dir, "conventions.html")
    IN_MEMORY["__frames__.html"] = (
        FRAMES_PAGE % (json.dumps([*pages, *PLANTED_PAGES]), AT_ONCE, DEADLINE_MS)
    ).encode()
    proc = _chromium(
        base + "__frames__.html",
        tmp_path_factory.mktemp("chromium") / "profile",
        "--dump-dom",
        height=1000,
        width=1300,
        budget=DEADLINE_MS + 20_000,
        timeout=540,
    )
    found = re.search(r'<pre id="site-probes"[^>]*>(.*?)</pre>', proc.stdout, re.S)
    assert found, f"no report (Chromium said: {proc.stderr[-2000:]})"
    found = dict(json.loads(html.unescape(found.group(1))))
    missing = [page for page, report in found.items() if report is None]
    assert missing == [], f"pages that did not report: {missing}"
    return found


def _outside(report: dict, base: str) -> list:
    return sorted({r for r in report["resources"] if not r.startswith(base)})


def _typeset(report: dict) -> list:
    """What the report says of the page's math that is wrong."""
    problems = []
    if report["raw"]:
        problems.append(f"math left untypeset: {report['raw']}")
    if report["errors"]:
        problems.append(f"formulas MathJax cannot read: {report['errors']}")
    wanted = report["display"] + (report["inline"] if report["whole"] else 0)
    if report["mjx"] < wanted:
        problems.append(f"{report['mjx']} formulas typeset of {wanted}")
    return problems


@needs_browser
def test_every_page_renders_offline(site, reports):
    """On every page: the math typeset, every image loaded, nothing from outside."""
    base = site
    html_dir = built_site()
    problems = []
    for page, report in reports.items():
        if page in PLANTED_PAGES:
            continue
        if _has_math(html_dir, page):  # typeset as asked (a page without math has no MathJax)
            assert report["whole"] == (page in TYPESET_WHOLE), page
        problems += [f"{page}: {problem}" for problem in _typeset(report)]
        broken = [src for src, width in report["images"] if not width or width < 0]
        if broken:
            problems.append(f"{page}: images that did not load: {broken}")
        if _outside(report, base):
            problems.append(f"{page}: resources from outside the site: {_outside(report, base)}")
        if _has_math(html_dir, page):
            if report["mjx"] + report["inline"] == 0:
                problems.append(f"{page}: its math was not found")
            if not any("mathjax" in r for r in report["resources"]):
                problems.append(f"{page}: MathJax was not loaded")
        if page.startswith("notebooks/") and not report["images"]:
            problems.append(f"{page}: a notebook chapter without its figures")
    assert problems == [], "\n".join(problems)
    for name, page in PAGES.items():
        assert reports[page]["mjx"] >= 5, f"{name}: only {reports[page]['mjx']} typeset formulas"


@needs_browser
def test_display_equations_fit_the_page_at_1280px(reports):
    """No display equation of any page is wider than its column in a 1280 px window.

    MathJax does not break long formulas; one wider than the text column is
    clipped or scrolls.  Each equation's typeset width is compared with the
    column that holds it.
    """
    wide = {
        page: r["wide"]
        for page, r in reports.items()
        if r["wide"] and page not in PLANTED_PAGES
    }
    assert wide == {}, f"equations wider than their column at 1280 px: {wide}"


@needs_browser
@pytest.mark.parametrize("planted", PLANTED_PAGES)
def test_the_probe_finds_each_planted_fault(site, reports, planted):
    """A copy of a page with a fault of each kind fails every check above."""
    base = site
    report = reports[planted]
    assert report["whole"] == (planted == PLANTED_WHOLE)
    assert report["mjx"] > 0, "the planted page's math was not typeset at all"
    assert report["raw"] == ["\\("], report["raw"]
    assert report["errors"] == ["\\left( x"], report["errors"]
    # the page copied has no wide equation (test above): the one found is planted
    assert len(report["wide"]) == 1 + len(reports["conventions.html"]["wide"]), report["wide"]
    broken = [src for src, width in report["images"] if not width or width < 0]
    assert broken == ["http://planted.invalid/figure.png"], report["images"]
    assert _outside(report, base) == ["http://planted.invalid/figure.png"]
    assert _typeset({**report, "raw": [], "errors": []}) == []


@needs_browser
@pytest.mark.skipif(
    os.environ.get("SCRATCHNET_SCREENSHOTS") != "1",
    reason="screenshots for a person: set SCRATCHNET_SCREENSHOTS=1 (and pytest -s)",
)
@pytest.mark.parametrize("name", PAGES)
def test_screenshot(site, screenshots, name, tmp_path):
    shot = screenshots / f"{name}.png"
    _chromium(site + PAGES[name], tmp_path / "shot", f"--screenshot={shot}",
              height=HEIGHTS[name])
    assert shot.is_file() and shot.stat().st_size > 10_000, "no screenshot"
    print(f"screenshot: {shot}")
