"""Benchmarks of the book: cold and cached builds, page weight of the fresh build, widget switching latency."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


#: Targets for the weight of the built site (MB; compressed = gzip, what a server sends).
SITE_TARGET_MB = 20.0
CHAPTER_TARGET_GZIP_MB = 1.5
#: CPU seconds chapter 10's English runs may take on one core (every seed, both models, the small slice).
TEXT_SECTION_TARGET_S = 60.0

_TEXT_RUN = """
import json, resource
from selfattn import text_layer
text_layer.english_experiment()
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"cpu_s": use.ru_utime + use.ru_stime}))
"""


def text_section_cpu() -> float:
    """CPU seconds of chapter 10's ``english_experiment`` in a fresh process with one BLAS thread (the
    import of NumPy and the package included), as the book's kernel runs it."""
    env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _TEXT_RUN], cwd=ROOT, env={**os.environ, **env}, check=True,
                         capture_output=True, text=True).stdout
    return float(json.loads(out.strip().splitlines()[-1])["cpu_s"])


def build_times(weigh: bool = True) -> dict[str, float]:
    """Seconds for a cold build (empty execution cache) and a rebuild with nothing changed,
    both into a scratch folder so the working build is left alone; with ``weigh``, also the
    size of that fresh site and the heaviest chapter page (see :mod:`benchmarks.site_weight`)."""
    jb = Path(sys.executable).parent / "jupyter-book"
    out = Path(tempfile.mkdtemp(prefix="book-bench-"))
    cmd = [str(jb), "build", str(ROOT), "--path-output", str(out), "--all", "-W", "-n", "--keep-going", "-q"]
    try:
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        cached = time.perf_counter() - t0
        result = {"cold_s": cold, "cached_s": cached}
        if weigh:
            result.update(site_weight(out / "_build" / "html"))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return result


def site_weight(site: Path) -> dict[str, float]:
    """Size of the whole site and the heaviest chapter page as loaded in Chromium (MB)."""
    from .site_weight import page_weights, site_bytes

    chapters = sorted(p.relative_to(site).as_posix() for p in (site / "book").glob("*.html"))
    pages = page_weights(site, chapters)
    worst = max(pages, key=lambda rel: pages[rel]["gzip"])
    return {
        "site_MB": site_bytes(site) / 1e6,
        "chapter_page": worst,
        "chapter_raw_MB": pages[worst]["raw"] / 1e6,
        "chapter_gzip_MB": pages[worst]["gzip"] / 1e6,
        "chapter_requests": pages[worst]["requests"],
    }


def widget_latency(n: int = 200) -> dict[str, float]:
    """Kernel-side latency from a control change to the new frame being selected (the observer
    path JupyterLab runs), and the one-off cost of drawing one frame, on a widget built as the
    book's pages build it (every frame up front)."""
    from selfattn.plots import new_figure, weights_bar
    from selfattn.widgets import draw_up_front, figure_frame, slider_frames

    def frame(tau: float):
        fig, (ax,) = new_figure(5, 2.8)
        weights_bar(ax, ["a", "b", "c", "d"], np.full(4, 0.25), title=f"{tau}")
        return figure_frame(fig, alt=f"frame {tau}")

    values = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    previous = draw_up_front()  # as on the book's pages: every frame drawn when the widget is built
    try:
        t0 = time.perf_counter()
        box = slider_frames(values, frame, "t")
        render = (time.perf_counter() - t0) / len(values)
    finally:
        draw_up_front(previous)
    slider, stack = box.children
    lat = []
    for i in range(n):
        k = (i + 1) % len(values)
        t0 = time.perf_counter()
        slider.index = k
        assert stack.selected_index == k
        lat.append(time.perf_counter() - t0)
    return {"median_ms": 1e3 * statistics.median(lat), "frame_render_ms": 1e3 * render}
