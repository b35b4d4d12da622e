"""The torch backend's wire and its host processes (``_torch.TorchExecutor`` is the master).

Master (rank 0) and each host (rank 1) share a process group of their own, two ranks of gloo
over TCP (``Channel``): a host that dies breaks its own group only, and a restarted one joins a
new group (a fresh key prefix in the same store).  A message is a header, ``int64 [kind, round,
n1, n2]`` on a fixed tag, then up to two byte parts (a pickle, and an opaque blob such as the
round's parameters) tagged with the message's round (``OTHER`` where it has none).  One thread
sends on each side, in order, and one receives; a receiver reads every message (a straggler's
late result is read and dropped there by its round, never unpickled into a later round).

A host serves the logical workers it is given (``INIT``), as the local executor's threads do
(the same ``Dispatcher``): a ``RUN`` of round ``r`` starts its workers' calls (a worker still
computing an earlier round answers BUSY; an injected delay is a wait on the round's event, so
``END`` cancels it), at most ``concurrency`` of them computing at once (``WorkerStates`` marks
who computes); a cancelled call sends nothing.  Hosts trust the master: messages are pickles
(as torch.distributed's own object collectives are), so the processes belong on one machine or
a trusted network.
"""

from __future__ import annotations

import enum
import io
import os
import pickle
import queue
import socket
import threading

import torch

from ..engine import Outcome
from ._aggregate import Held
from ._base import Dispatcher

HEADER = 1 << 30       # the tag of every header
OTHER = HEADER + 1     # the tag of the parts of a message that belongs to no round


class Kind(enum.IntEnum):
    INIT = 1           # master -> host: (indices, workers, concurrency)
    RUN = 2            # (tasks, delays, hold) of the host's workers; blob: the parameters
    END = 3            # the round is over
    ASK = 4            # (request id, what, argument): ping, computing, residuals, combine
    CLOSE = 5
    RESULT = 6         # host -> master: a worker's Result of the round
    REPLY = 7          # (request id, ok, value)
    BYE = 8


def dumps(obj, by_value: bool = False) -> memoryview:
    """``obj`` pickled into a writable buffer (a tensor is made over it without a copy);
    ``by_value``: with cloudpickle where installed (Ray's dependency), so that the classes of
    the user's model defined in a notebook or a script travel by value, as on Ray.

    >>> from gradcode.runtime._torch_host import dumps
    >>> pickle.loads(dumps({"round": 3}))
    {'round': 3}
    """
    buf = io.BytesIO()
    (_by_value() if by_value else pickle).dump(obj, buf, protocol=pickle.HIGHEST_PROTOCOL)
    return buf.getbuffer()


def _by_value():
    """cloudpickle where installed, else pickle."""
    try:
        import cloudpickle
    except ImportError:
        return pickle
    return cloudpickle


class Channel:
    """One side of a two-rank gloo group: ``send`` and ``recv`` whole messages (module doc)."""

    def __init__(self, group, peer: int):
        self.group, self.peer = group, peer

    def send(self, kind: Kind, round: int, meta=b"", blob=b"") -> None:
        tag = round if round >= 0 else OTHER
        head = torch.tensor([int(kind), round, len(meta), len(blob)], dtype=torch.int64)
        self.group.send([head], self.peer, HEADER).wait()
        for part in (meta, blob):
            if len(part):
                self.group.send([torch.frombuffer(part, dtype=torch.uint8)], self.peer,
                                tag).wait()

    def recv(self):
        """``(kind, round, meta bytes, blob bytes)`` of the next message (blocks)."""
        head = torch.zeros(4, dtype=torch.int64)
        self.group.recv([head], self.peer, HEADER).wait()
        kind, round, n1, n2 = (int(x) for x in head)
        tag = round if round >= 0 else OTHER
        parts = []
        for size in (n1, n2):
            part = torch.empty(size, dtype=torch.uint8)
            if size:
                self.group.recv([part], self.peer, tag).wait()
            parts.append(part.numpy())
        return Kind(kind), round, parts[0], parts[1]


def connect(store, prefix: str, rank: int, timeout: float):
    """The two-rank gloo group of ``prefix`` in ``store`` (blocks until both ranks joined)."""
    from datetime import timedelta

    import torch.distributed as dist
    group = dist.ProcessGroupGloo(dist.PrefixStore(prefix, store), rank, 2,
                                  timedelta(seconds=timeout))
    return Channel(group, 1 - rank)


def loopback_interface() -> str:
    """The name of this machine's loopback interface (gloo binds to it on one machine)."""
    names = [name for _, name in socket.if_nameindex()] if hasattr(socket, "if_nameindex") else []
    return next((n for n in names if n.startswith("lo")), "lo")


def spawned_host(addr: str, port: int, prefix: str, timeout: float) -> None:
    """A host process that the master started (one machine): join its group, then serve."""
    import torch.distributed as dist
    os.environ["GLOO_SOCKET_IFNAME"] = loopback_interface()
    store = dist.TCPStore(addr, port, is_master=False, timeout=_seconds(timeout))
    serve(connect(store, prefix, 1, timeout))


def _seconds(timeout: float):
    from datetime import timedelta
    return timedelta(seconds=timeout)


def serve(channel: Channel) -> None:
    """Serve the master's messages until ``CLOSE`` or the master is gone."""
    torch.set_num_threads(1)
    try:
        kind, _, meta, _ = channel.recv()
        try:
            host = Host(channel, *pickle.loads(meta))
        except Exception as exc:           # e.g. the model's class cannot be imported here
            channel.send(Kind.REPLY, -1, dumps((0, False, f"{type(exc).__name__}: {exc}")))
            return
        host.serve()
    except RuntimeError:                   # the master's process is gone: nothing to serve
        return


class Host:
    """The logical workers ``indices`` of one host process (module doc)."""

    def __init__(self, channel: Channel, indices, workers, concurrency):
        from ._worker import concurrency_for, map_large_buffers
        map_large_buffers()
        self.channel = channel
        k = concurrency_for(workers, len(indices), concurrency)
        made = workers.landed(lambda p: p).sharing(k)
        self.workers = {i: made(i) for i in indices}
        self.dispatch = Dispatcher(self.workers, k, self._deliver)
        self.states = self.dispatch.states
        # vectors kept here, notices sent (aggregate)
        self.held, self.hold = Held(getattr(workers, "dtype", None)), False
        self.outbox: queue.Queue = queue.Queue()
        self.sender = threading.Thread(target=self._send, daemon=True, name="gc-send")
        self.sender.start()

    def serve(self) -> None:
        try:
            while True:
                kind, round, meta, blob = self.channel.recv()
                if kind is Kind.RUN:
                    self.run(round, pickle.loads(blob), *pickle.loads(meta))
                elif kind is Kind.END:
                    self.end(round)
                elif kind is Kind.ASK:
                    self.ask(*pickle.loads(meta))
                elif kind is Kind.CLOSE:
                    break
        finally:
            self.close()

    def _send(self) -> None:
        while True:
            item = self.outbox.get()
            if item is None:
                return
            try:
                self.channel.send(*item)
            except RuntimeError:           # the master is gone
                return

    def run(self, round: int, params, tasks: dict, delays: dict, hold: bool = False) -> None:
        """Start ``round`` on this host's workers named in ``tasks`` (module doc); ``hold``:
        their vectors stay here and notices go to the master (``Held``)."""
        self.states.end(round - 1)         # the master starts a round once the last one ended
        self.held.start(round)
        self.hold = hold
        self.dispatch.submit(round, params, tasks, delays, sorted(tasks))

    def _deliver(self, res) -> None:
        if res.status is not Outcome.CANCELLED:     # a cancelled call sends nothing
            self._result(self.held.notice(res) if self.hold else res)

    def _result(self, res) -> None:
        self.outbox.put((Kind.RESULT, res.round, dumps(res)))

    def end(self, round: int) -> None:
        self.dispatch.end(round)

    def ask(self, rid: int, what: str, arg) -> None:
        """Answer the master's question ``what`` (ping, computing, residuals) as ``REPLY``."""
        if what == "residuals":                  # computed again on the computing threads
            self.dispatch.computers.submit(self._residuals, rid, arg)
            return
        if what == "combine":                    # a few axpys: here, not behind the workers
            try:
                out = (rid, True, self.held.combine(*arg))
            except LookupError as exc:
                out = (rid, False, str(exc))
            self.outbox.put((Kind.REPLY, -1, dumps(out)))
            return
        value = (os.getpid(), socket.gethostname()) if what == "ping" else self.states.computing()
        self.outbox.put((Kind.REPLY, -1, dumps((rid, True, value))))

    def _residuals(self, rid: int, wanted) -> None:
        torch.set_num_threads(1)
        try:
            out = (rid, True, [self.workers[i].residual(r, k) for r, i, k in wanted])
        except LookupError as exc:
            out = (rid, False, str(exc))
        self.outbox.put((Kind.REPLY, -1, dumps(out)))

    def close(self) -> None:
        self.dispatch.close()
        self.outbox.put((Kind.BYE, -1))
        self.outbox.put(None)
        self.sender.join(timeout=10)
