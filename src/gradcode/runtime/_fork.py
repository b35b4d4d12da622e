"""The one forkserver of the processes gradcode starts on this machine: the torch backend's
hosts and the DataLoader processes of ``loader_workers``.

A forkserver imports its ``preload`` once, and every process it forks starts with those modules
imported: here the user's ``__main__`` (what multiprocessing's default preloads, so that a
Dataset or model class defined there unpickles) and the torch backend's module, with torch.
With the default server a DataLoader process imported torch itself, ~2.5 s of CPU each.  There
is one server per Python process, started by the first to ask, so every caller asks here.
"""

from __future__ import annotations

import multiprocessing

#: what the server imports before it forks
PRELOAD = ["__main__", "gradcode.runtime._torch"]


def forkserver():
    """The forkserver start method, preloading ``PRELOAD`` (module doc)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx
