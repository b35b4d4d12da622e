"""The backends ``train`` can run on: one table, name -> ``Backend``: the executor class
(``module:Class``, imported on first use, so that this table, the validation of a config and
the CLI built from them import neither torch nor ray) and the ``engine.BackendOptions`` it
takes.  A new backend is one file with an ``engine.Executor`` subclass whose
``from_config(options, workers)`` builds it (``workers(i)`` builds logical worker ``i``), and one
line here; ``TrainConfig`` then offers it, refuses the options it does not take, and the
executor contract suite runs it too."""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Backend:
    """A row of ``BACKENDS``: where its executor class is, and the ``BackendOptions`` it takes
    (a run setting any other is refused: ``refused_option``)."""
    executor: str                    # "module:Class"
    takes: tuple[str, ...] = ()


BACKENDS = {
    "local": Backend("gradcode.runtime._local:LocalExecutor", ("concurrency", "device")),
    "ray": Backend("gradcode.runtime._ray:RayExecutor",
                   ("address", "actors", "concurrency", "device", "aggregate")),
    "torch": Backend("gradcode.runtime._torch:TorchExecutor",
                     ("actors", "concurrency", "device", "aggregate")),
    "virtual": Backend("gradcode.engine:VirtualExecutor", ("device",)),
}


def backend(name: str) -> type:
    """The executor class of backend ``name``.

    >>> from gradcode.runtime import BACKENDS, backend
    >>> sorted(BACKENDS)
    ['local', 'ray', 'torch', 'virtual']
    >>> backend("virtual").__name__
    'VirtualExecutor'
    >>> backend("gpu")
    Traceback (most recent call last):
    ...
    ValueError: backend: expected one of local, ray, torch, virtual, got 'gpu'
    """
    if name not in BACKENDS:
        raise ValueError(f"backend: expected one of {', '.join(BACKENDS)}, got {name!r}")
    module, cls = BACKENDS[name].executor.split(":")
    return getattr(importlib.import_module(module), cls)


def refused_option(name: str, options) -> str | None:
    """The first of ``options`` (names of ``BackendOptions`` a run sets) that backend ``name``
    does not take, as the one line that refuses it (None if it takes them all).

    >>> refused_option("virtual", ["concurrency"])
    "concurrency: only with backend local, ray or torch, got backend 'virtual'"
    >>> refused_option("ray", ["actors", "address"]) is None
    True
    >>> refused_option("local", ["aggregate"])
    "aggregate: only with backend ray or torch, got backend 'local'"
    """
    for option in options:
        if option not in BACKENDS[name].takes:
            takers = [b for b, row in BACKENDS.items() if option in row.takes]
            either = ", ".join(takers[:-1]) + " or " + takers[-1] if len(takers) > 1 else takers[0]
            return f"{option}: only with backend {either}, got backend {name!r}"
    return None
