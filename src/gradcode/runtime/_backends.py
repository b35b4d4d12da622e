"""The backends ``train`` can run on: one table, name -> the executor class (``module:Class``,
imported on first use, so that this table, and the CLI built from it, import neither torch nor
ray).  A new backend is one file with an ``engine.Executor`` subclass that has
``from_config(cfg, workers) -> (executor, one-line description)`` (``workers(i)`` builds logical
worker ``i``) and one line here; the executor contract suite then runs it too."""

from __future__ import annotations

import importlib

BACKENDS = {
    "local": "gradcode.runtime._local:LocalExecutor",
    "ray": "gradcode.runtime._ray:RayExecutor",
    "virtual": "gradcode.engine._virtual:VirtualExecutor",
}


def backend(name: str) -> type:
    """The executor class of backend ``name``.

    >>> from gradcode.runtime import BACKENDS, backend
    >>> sorted(BACKENDS)
    ['local', 'ray', 'virtual']
    >>> backend("virtual").__name__
    'VirtualExecutor'
    >>> backend("gpu")
    Traceback (most recent call last):
    ...
    ValueError: backend: expected one of local, ray, virtual, got 'gpu'
    """
    if name not in BACKENDS:
        raise ValueError(f"backend: expected one of {', '.join(BACKENDS)}, got {name!r}")
    module, cls = BACKENDS[name].split(":")
    return getattr(importlib.import_module(module), cls)
