"""No silent default workspace (issue 28 §2): below the commands and hooks, every function of
``autograder/`` is handed its :class:`~autograder.workspace.Workspace` (or its course root).

A parameter that takes a workspace, or the course root a ``Workspace`` holds, has no default: a
caller that forgets it fails at once instead of grading in the process's default folders."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import autograder

#: modules not imported here: nbgrader's and JupyterHub's configuration files need ``get_config()``
#: from traitlets (their apps exec them); the hub's spawner needs JupyterHub (in the hub's environments)
NOT_IMPORTED = {"autograder.nbgrader_config", "autograder.hub.jupyterhub_config", "autograder.hub.spawner"}


def _modules() -> list:
    names = [m.name for m in pkgutil.walk_packages(autograder.__path__, "autograder.")]
    return [importlib.import_module(n) for n in ["autograder", *names] if n not in NOT_IMPORTED]


def _callables(module) -> list[tuple[str, object]]:
    """(qualified name, callable) of every function and class defined in ``module`` and their methods."""
    out = []
    for name, obj in vars(module).items():
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            out.append((f"{module.__name__}.{name}", obj))
        elif inspect.isclass(obj):
            out.append((f"{module.__name__}.{name}", obj))
            out += [(f"{module.__name__}.{name}.{m}", f) for m, f in vars(obj).items() if inspect.isfunction(f)]
    return out


def _takes_a_workspace(p: inspect.Parameter) -> bool:
    """A parameter typed as a workspace or a course root (``course``, ``course_root``: a path)."""
    note = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", str(p.annotation))
    return "Workspace" in note or (p.name in {"course", "course_root"} and "Path" in note)


def test_no_function_of_the_grader_defaults_its_workspace():
    modules = _modules()
    assert len(modules) > 40  # every module was walked
    defaulted, looked_at = [], 0
    for module in modules:
        for where, obj in _callables(module):
            try:
                sig = inspect.signature(obj)
            except (TypeError, ValueError):
                continue
            for p in sig.parameters.values():
                if _takes_a_workspace(p):
                    looked_at += 1
                    if p.default is not inspect.Parameter.empty:
                        defaulted.append(f"{where}({p.name}={p.default!r})")
    assert looked_at > 60, looked_at  # the walk did reach the functions that take one
    assert defaulted == [], "parameters defaulting to a workspace: " + ", ".join(defaulted)
