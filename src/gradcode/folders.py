"""Output folders owned by one run at a time.

``with FolderLock(folder):`` -- the block's process owns ``folder`` (which must exist): a lock file
(``.gradcode.lock``, naming the process and the machine) is created in it, and a second run into
the same folder is refused with one line naming the folder and the process that holds it, so
that two runs never interleave their rows.  A lock left by a process that is gone (killed, the
machine restarted) is taken over.  The lock is re-entrant within a process (the CLI takes it
before clearing ``--overwrite``'s outputs, then ``train`` takes it again) and removed when the
outermost block ends.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

LOCK = ".gradcode.lock"


class FolderLock:
    """``with FolderLock(folder, flag="out"):`` -- own ``folder`` for the block (module
    docstring); ``flag`` names the parameter in the refusal.

    >>> with FolderLock(".") as lock:
    ...     with FolderLock("."):                   # re-entrant within this process
    ...         lock.path.name, lock.path.exists()
    ('.gradcode.lock', True)
    >>> lock.path.exists()                          # removed when the outermost block ends
    False

    A lock held by a run on another machine refuses the folder:

    >>> _ = lock.path.write_text("4242 another-host")
    >>> with FolderLock(".", flag="out"):
    ...     pass
    Traceback (most recent call last):
    ValueError: out: '.' is in use by another run (process 4242 on another-host); wait for it ...
    """

    def __init__(self, folder, flag: str = "out"):
        self.folder, self.flag = Path(folder), flag
        self.path = self.folder / LOCK
        self._mine = False

    def __enter__(self):
        me = f"{os.getpid()} {socket.gethostname()}"
        mine = self.folder / f"{LOCK}.{os.getpid()}"
        mine.write_text(me)                       # linked into place whole: never seen empty
        try:
            self._take(me, mine)
        finally:
            mine.unlink()
        return self

    def _take(self, me: str, mine: Path) -> None:
        while True:
            try:
                os.link(mine, self.path)
            except FileExistsError:
                holder = _read(self.path)
                if holder == me:
                    return                        # this process holds it already (re-entrant)
                if holder is not None and _alive(holder):
                    pid, host = holder.split(" ", 1)
                    raise ValueError(f"{self.flag}: {str(self.folder)!r} is in use by another run "
                                     f"(process {pid} on {host}); wait for it to end or choose "
                                     "another folder")
                try:                              # a stale lock: its process is gone
                    self.path.unlink()
                except FileNotFoundError:
                    pass
                continue
            self._mine = True
            return

    def __exit__(self, *exc):
        if self._mine:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
            self._mine = False


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except (FileNotFoundError, UnicodeDecodeError):
        return None


def _alive(holder: str) -> bool:
    """Whether the process named ``"PID HOST"`` runs (another machine's: assumed so)."""
    pid, _, host = holder.partition(" ")
    if host != socket.gethostname():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:              # another user's process
        return True
    except ValueError:                   # not a lock gradcode wrote: taken over
        return False
    return True
