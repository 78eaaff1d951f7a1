"""Serve the built site on loopback and drive it in Debian's headless Chromium.

The network is cut in Chromium itself (:data:`CHROMIUM_ARGS`: every request but one to loopback goes
to a proxy that does not exist, and fails), and every request that leaves the site's own origin is
recorded (:func:`attach_recorders`), so a test sees exactly which outside servers a page would have
contacted. Requests are watched, not intercepted: interception would turn off Chromium's cache, and
the site's pages are read in one browser profile (:class:`SiteBrowser`) whose cache of the site's
scripts makes each further page load cost half the CPU of a load in a fresh one.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import sys
import threading
import time
import warnings
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))
from local_ports import port_block  # noqa: E402

CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # The network cut: every request goes to a proxy on a port nothing listens on, and fails; Chromium
    # sends loopback (127.0.0.0/8, localhost, [::1]) direct, never through a proxy.
    "--proxy-server=http://127.0.0.1:9",
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    #: Where the paths answered with an error go (set per server by :func:`serve`).
    misses: list[str] | None = None

    def log_message(self, format, *args):
        pass

    def send_error(self, code, message=None, explain=None):
        if self.misses is not None:
            self.misses.append(f"{code} {self.path}")
        try:
            super().send_error(code, message, explain)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the browser went on (a redirect, a closed page) before the answer


@contextmanager
def serve(directory: Path = SITE, misses: list[str] | None = None) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (free port); yields the base URL. Every request answered with
    an error is appended to ``misses`` ("404 /favicon.ico"), including those the browser makes on its
    own, which no page event shows."""
    if not (directory / "index.html").exists():
        raise FileNotFoundError(f"no built site at {directory}: run `make book` first")
    handler = functools.partial(type("_Handler", (_QuietHandler,), {"misses": misses}), directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def free_port(size: int = 1) -> int:
    """The first of ``size`` consecutive TCP ports that nothing listens on now, for servers a test
    starts: below the ephemeral range, so that no browser or port-0 server of a test running beside
    it takes one before the server binds it (``scripts/local_ports.py``)."""
    return port_block(size)


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise FileNotFoundError("chromium not found: run scripts/install-system-deps.sh (Debian package chromium)")
    return path


class SiteBrowser:
    """Headless Chromium with one browser profile for every page a test module opens: the pages share
    the HTTP cache and compiled scripts, and nothing else (each page starts with an empty local
    storage, as in a fresh browser)."""

    #: Run before the page's own scripts on the first document of each page: what earlier pages
    #: stored (the theme a reader chose) is gone, as it would be for a new reader.
    FRESH_STORAGE = ("if (!sessionStorage.getItem('__fresh_tab')) { localStorage.clear(); "
                     "sessionStorage.setItem('__fresh_tab', '1'); }")

    def __init__(self, context, misses: list[str] | None = None) -> None:
        self.context = context
        #: Every request the site's server answered with an error ("404 /favicon.ico"), in order.
        self.misses: list[str] = [] if misses is None else misses

    #: What the site stores when a reader picks the dark theme (pydata-sphinx-theme's two keys).
    DARK_STORAGE = "localStorage.setItem('theme', 'dark'); localStorage.setItem('mode', 'dark');"

    def new_page(self, viewport: dict[str, int] | None = None, dark: bool = False):
        """A new page (tab) shown at ``viewport`` (CSS px; default 1280 × 720), light, or dark as for a
        reader whose system prefers dark and who picked the dark theme."""
        page = self.context.new_page()
        page.add_init_script(self.FRESH_STORAGE)
        if dark:
            page.add_init_script(self.DARK_STORAGE)
        if viewport is not None:
            page.set_viewport_size(viewport)
        page.emulate_media(color_scheme="dark" if dark else "light")
        return page


_DRIVER: list = []


#: the process ids of the Node process :func:`driver` started
_DRIVER_PIDS: list[int] = []


def _children() -> set[int]:
    """This process's child processes."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == os.getpid():
                found.add(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _is_driver(pid: int) -> bool:
    """Whether ``pid`` runs Playwright's driver (not another child this process started meanwhile)."""
    try:
        return b"run-driver" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


#: when this process's driver ended under it, and the test running then (:func:`_watch`)
_ENDED: list[str] = []
#: the thread watching the current driver
_WATCHERS: list[threading.Thread] = []


def _watch(pids: list[int]) -> None:
    """Note in :data:`_ENDED` the moment the driver ``pids`` ends while it is still this process's
    driver, with the test then running (``PYTEST_CURRENT_TEST``): where to look for what ended it."""
    while _DRIVER_PIDS == pids and all(_running(pid) for pid in pids):
        time.sleep(0.5)
    if _DRIVER_PIDS == pids and _DRIVER:
        _ENDED.append(f"at {time.strftime('%H:%M:%S')}, during {os.environ.get('PYTEST_CURRENT_TEST', 'no test')}")


@contextmanager
def driver() -> Iterator:
    """This process's Playwright (sync API), started on first use and kept until the test session ends
    (:func:`stop_driver`, called by tests/conftest.py): the sync API allows one at a time per process,
    and the session's shared site browser (``site_browser`` in tests/conftest.py) holds it while
    other files start browsers of their own."""
    if _DRIVER and not all(_running(pid) for pid in _DRIVER_PIDS):
        # its Node process was ended under it (once per make test, until a test that stood in for the hub
        # ended the hub's children, this process's driver among them): a new one is started, so one lost
        # driver fails no later test, and a warning (the run's summary shows it) says when it ended and
        # which test of this process was running then
        for watcher in _WATCHERS:
            watcher.join(timeout=2)  # it notes the end within half a second
        when = _ENDED[-1] if _ENDED else "when is not known"
        warnings.warn(f"browser_support: this process's Playwright driver (process {_DRIVER_PIDS}) had ended "
                      f"({when}); starting a new one", stacklevel=3)
        try:
            _DRIVER.pop().stop()
        except Exception:
            _DRIVER.clear()
    if not _DRIVER:
        from playwright.sync_api import sync_playwright

        # its API requests (page.request) resolve *.localhost to loopback, as Chromium does (the hub's hosts)
        before = os.environ.get("NODE_OPTIONS")
        os.environ["NODE_OPTIONS"] = f"{before or ''} --require {Path(__file__).with_name('localhost_resolves.cjs')}"
        try:
            before_start = _children()
            _DRIVER.append(sync_playwright().start())
            _DRIVER_PIDS[:] = sorted(p for p in _children() - before_start if _is_driver(p))
            _WATCHERS[:] = [threading.Thread(target=_watch, args=(list(_DRIVER_PIDS),), daemon=True)]
            _WATCHERS[0].start()
        finally:
            if before is None:
                del os.environ["NODE_OPTIONS"]
            else:
                os.environ["NODE_OPTIONS"] = before
    yield _DRIVER[0]


def stop_driver() -> None:
    """Stop this process's Playwright, if :func:`driver` started it."""
    while _DRIVER:
        _DRIVER.pop().stop()


@contextmanager
def served_browser(directory: Path = SITE) -> Iterator[tuple[str, SiteBrowser]]:
    """Serve ``directory`` on loopback and launch headless Chromium with a profile of its own (removed
    at the end); yields (base URL, browser)."""
    import tempfile

    misses: list[str] = []
    with serve(directory, misses) as base, driver() as pw, tempfile.TemporaryDirectory() as profile:
        context = pw.chromium.launch_persistent_context(profile, executable_path=chromium_path(),
                                                        args=CHROMIUM_ARGS, headless=True)
        try:
            yield base, SiteBrowser(context, misses)
        finally:
            context.close()


#: True once a page has loaded, every widget view of the page has been drawn (its output holds a
#: ``.widget-subarea``) and every image has arrived.
DRAWN_JS = """() => document.readyState === 'complete'
  && Array.from(document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]'))
       .every(s => s.parentElement.querySelector('.widget-subarea'))
  && Array.from(document.images).every(i => i.complete)"""

#: Resolves once MathJax has typeset everything queued (the page's math and the widgets' labels: each
#: typeset chains onto ``MathJax.startup.promise``), the fonts have loaded, and two frames were painted.
SETTLED_JS = """async () => {
  for (let seen = null; window.MathJax && MathJax.startup && MathJax.startup.promise
       && MathJax.startup.promise !== seen; ) { seen = MathJax.startup.promise; await seen; }
  await document.fonts.ready;
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
}"""


def settle(page) -> None:
    """Wait until what a reader sees of ``page`` is complete: its widgets drawn, its images arrived,
    its math and the widgets' labels typeset, its fonts loaded, two frames painted (rather than
    waiting for the network to go quiet and then for a fixed time)."""
    page.wait_for_function(DRAWN_JS, timeout=15000)
    page.evaluate(SETTLED_JS)


def open_settled(page, url: str) -> None:
    """Go to ``url`` and :func:`settle` it."""
    page.goto(url, wait_until="load")
    settle(page)


class PageLoads:
    """What one load of each page measured, by key (the page, and the width and theme it is shown at):
    every test that reads a page the same way reads its part of a single load (tests/conftest.py keeps a
    page's tests on one xdist worker). A load that failed, or a part that raised, is raised again in each
    test that reads it."""

    def __init__(self) -> None:
        self._found: dict[Hashable, dict[str, object] | Exception] = {}

    def part(self, key: Hashable, load: Callable[[], dict[str, object]], name: str) -> Any:
        """Part ``name`` of what ``load()`` measured for ``key``; ``load`` runs the first time ``key`` is
        asked for (:func:`measured` makes its parts)."""
        if key not in self._found:
            try:
                self._found[key] = load()
            except Exception as exc:  # the page did not load: each of its tests says why
                self._found[key] = exc
        found = self._found[key]
        value = found if isinstance(found, Exception) else found[name]
        if isinstance(value, Exception):
            raise value
        return value


def measured(page, parts: dict[str, Callable[[Any], object]]) -> dict[str, object]:
    """Each of ``parts`` run on ``page``, in order (those that only read the page first, whatever moves its
    widgets last): its name -> what it returned, or the exception it raised (:meth:`PageLoads.part` raises it
    in the test that reads that part alone)."""
    found: dict[str, object] = {}
    for name, measure in parts.items():
        try:
            found[name] = measure(page)
        except Exception as exc:
            found[name] = exc
    return found


#: axe-core, installed by ``npm ci`` (``make setup``), and the impacts a page must not have.
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")
#: every impact axe-core reports: the pages the grader writes itself (the class report, the feedback) have none
EVERY_IMPACT = ("minor", "moderate", *SERIOUS)
AXE_JS = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                      nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
}"""


def axe_violations(page, impacts: tuple[str, ...] = SERIOUS) -> list[dict]:
    """The violations of ``impacts`` (serious and critical unless told) axe-core finds on ``page``
    (injected from node_modules)."""
    assert AXE.exists(), f"{AXE.relative_to(ROOT)} missing: run `npm ci` (make setup does)"
    page.add_script_tag(path=str(AXE))
    return [v for v in page.evaluate(AXE_JS) if v["impact"] in impacts]


@contextmanager
def opened(base: str, browser: SiteBrowser, rel: str, dark: bool, then=None) -> Iterator:
    """``rel`` opened in the light or dark theme and settled (:func:`open_settled`: its widgets drawn,
    its math typeset), then ``then(page)`` done; nothing outside ``base`` is loaded (the network is
    cut). The page is closed after the block."""
    page = browser.new_page(dark=dark)
    try:
        open_settled(page, base + rel)
        if then is not None:
            then(page)
        yield page
    finally:
        page.close()


def audit(base: str, browser: SiteBrowser, rel: str, dark: bool,
          impacts: tuple[str, ...] = SERIOUS) -> tuple[str, list[dict]]:
    """The theme ``rel`` shows and axe-core's violations of ``impacts`` on it; nothing outside ``base`` is
    loaded."""
    with opened(base, browser, rel, dark) as page:
        return page.evaluate("document.documentElement.dataset.theme || ''"), axe_violations(page, impacts)


@dataclass
class PageReport:
    """What one page load did."""

    url: str
    outside_requests: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)


def attach_recorders(page, base: str, report: PageReport) -> None:
    """Record requests outside ``base`` (the network cut of :data:`CHROMIUM_ARGS` makes them fail),
    console errors and failed responses."""

    def request(r):
        if not r.url.startswith((base, "data:")):
            report.outside_requests.append(r.url)

    page.on("request", request)
    def console(message):
        if message.type == "error":
            where = message.location.get("url") if message.location else ""
            report.console_errors.append(f"{message.text} ({where})" if where else message.text)

    page.on("console", console)
    page.on("pageerror", lambda e: report.console_errors.append(f"uncaught: {e}"))
    page.on(
        "response",
        lambda resp: resp.status >= 400 and report.failed_requests.append(f"{resp.status} {resp.url}"),
    )


@contextmanager
def formgrader_server(root: Path, env: dict[str, str], log: Path, token: str) -> Iterator[str]:
    """Formgrader (``jupyter server``) on 127.0.0.1, started as ``make formgrader`` starts it
    (:mod:`autograder.formgrader`: the course config, MathJax from the server itself); yields
    its base URL once it answers, and stops it (and anything it started) at the end."""
    import os
    import signal
    import subprocess
    import time
    import urllib.request

    from autograder import formgrader

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with open(log, "w") as out:
        server = subprocess.Popen(formgrader.command("server", root=root, port=port, token=token),
                                  cwd=ROOT / "autograder", env=formgrader.environment(env), stdout=out,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                    break
                except OSError:
                    assert server.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
                    time.sleep(0.3)
            yield base
        finally:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGTERM)
                try:
                    server.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(server.pid, signal.SIGKILL)
                    server.wait()
