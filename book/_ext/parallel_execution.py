"""Sphinx extension: execute the book's chapters side by side before Sphinx reads them one by one.

In its ``cache`` mode myst-nb executes each chapter while Sphinx reads it, one after another: on two
cores the build waits on one kernel at a time (chapter 10's training alone is half the build). Here,
before reading starts (``env-before-read-docs``), every chapter to be read that jupyter-cache does not
hold yet is executed at once, ``book_execution_jobs`` kernels at a time (one per core by default), and
cached under the key the reader then looks up: the notebook myst-nb's own reader makes of the
chapter, with the build's own MyST and myst-nb settings, kernel alias and per-notebook overrides, as
``myst_nb.sphinx_.Parser.parse`` makes it. Reading then finds every chapter executed.

A chapter that fails here is not cached: the reader executes it itself and fails the build with
myst-nb's usual message. After reading (``env-updated``) every chapter executed here must have been
taken from the cache: a warning (an error under ``-W``) names one the reader executed again, which
would mean the two keys differ.
"""

from __future__ import annotations

import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath
from typing import Any

from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
#: env attribute: docname -> the timestamp of the cache record executed here
_EXECUTED = "selfattn_executed_side_by_side"


def _notebook(env, docname: str):
    """(the notebook the reader keys ``docname`` by, the myst-nb settings it executes with), or
    ``None`` when myst-nb would not execute it from the cache."""
    from myst_nb.core.nb_to_tokens import nb_node_to_dict
    from myst_nb.core.read import create_nb_reader

    path = env.doc2path(docname)
    text = Path(path).read_text(encoding="utf-8")
    reader = create_nb_reader(str(path), env.myst_config, env.mystnb_config, text)
    if reader is None:
        return None
    nb = reader.read(text)
    nb_config = env.mystnb_config
    kernel = nb.metadata.get("kernelspec", {}).get("name")
    if kernel is not None:
        for rgx, alias in nb_config.kernel_rgx_aliases.items():
            if re.fullmatch(rgx, kernel):
                nb.metadata["kernelspec"]["name"] = alias
                break
    if nb_config.metadata_key in nb.metadata:
        overrides = nb_node_to_dict(nb.metadata[nb_config.metadata_key])
        overrides.pop("output_folder", None)
        nb_config = nb_config.copy(**overrides)
    if nb_config.execution_mode != "cache" or not any(c.cell_type == "code" for c in nb.cells):
        return None
    posix = PurePosixPath(Path(path).as_posix())
    if any(posix.match(pattern) for pattern in nb_config.execution_excludepatterns):
        return None
    return nb, nb_config, Path(path)


def _run(nb, nb_config, path: Path):
    """Execute ``nb`` in place as myst-nb's cache client does (in the chapter's folder)."""
    from jupyter_cache.executors.utils import single_nb_execution

    cwd = None if nb_config.execution_in_temp else str(path.parent)
    return single_nb_execution(nb, cwd=cwd, allow_errors=nb_config.execution_allow_errors,
                               timeout=nb_config.execution_timeout, meta_override=True)


def _execute_side_by_side(app, env, docnames: list[str]) -> None:
    if env.mystnb_config.execution_mode != "cache":
        return
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(env.mystnb_config.execution_cache_path or ".jupyter_cache")
    jobs = []
    for docname in sorted(docnames):
        found = _notebook(env, docname)
        if found is None:
            continue
        try:
            cache.match_cache_notebook(found[0])
        except KeyError:
            jobs.append((docname, *found))
    setattr(env, _EXECUTED, {})
    if not jobs:
        return
    workers = max(1, min(len(jobs), app.config.book_execution_jobs or os.cpu_count() or 1))
    LOGGER.info(f"executing {len(jobs)} chapters side by side ({workers} kernels at a time)")
    started = time.perf_counter()
    # the longest first (the most code), so that the kernels end together; threads suffice, the work
    # is in the kernels
    jobs.sort(key=lambda job: -sum(len(c.source) for c in job[1].cells if c.cell_type == "code"))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda job: _run(*job[1:]), jobs))
    for (docname, nb, _, path), result in zip(jobs, results, strict=True):
        if result.err is not None:
            LOGGER.info(f"{docname}: failed when executed side by side ({type(result.err).__name__}); "
                        "left to the reader")
            continue
        record = cache.cache_notebook_bundle(CacheBundleIn(nb, str(path), data={"execution_seconds": result.time}),
                                             check_validity=False, overwrite=True)
        getattr(env, _EXECUTED)[docname] = record.created.timestamp()
        LOGGER.info(f"{docname}: executed in {result.time:.2f} s")
    LOGGER.info(f"executed side by side in {time.perf_counter() - started:.2f} s")


def _check_taken_from_the_cache(app, env) -> None:
    from myst_nb.sphinx_ import NbMetadataCollector

    for docname, created in sorted(getattr(env, _EXECUTED, {}).items()):
        data = NbMetadataCollector.get_exec_data(env, docname) or {}
        if data.get("mtime") != created:
            LOGGER.warning(f"{docname}: executed again while read: its key in the execution cache is not the "
                           "one book/_ext/parallel_execution.py cached it under", location=docname)


def setup(app) -> dict[str, Any]:
    app.add_config_value("book_execution_jobs", 0, "env", [int])
    app.connect("env-before-read-docs", _execute_side_by_side)
    app.connect("env-updated", _check_taken_from_the_cache)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
