"""The torch.distributed executor: the logical workers in torch.distributed processes, gloo
point to point, the master (this, the training process) rank 0.

On one machine the executor starts its host processes itself (``actors`` of them, default one
per worker; worker ``i`` on host ``i mod actors``, as on Ray), forked from a server that has
imported torch once, each joining a two-rank gloo group with the master on 127.0.0.1 (a free
port; the wire and the hosts: ``_torch_host``).  Across machines torchrun starts them: every
rank runs ``gradcode train --backend torch``; rank 0 is the master and the others serve as hosts
(found by torchrun's variables ``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``; the store is
torchrun's).

A round's parameters go to each host once (its workers' tasks and delays with them); every
result carries its round, and one that arrives after its round ended is drained and dropped
unread.  A host process that dies is seen at once (its group's connection closes): its workers
answer DIED in the round it is found in (the next one, if found between rounds), and the host is
restarted at the round after, in a new group.  Processes that torchrun started cannot be
restarted from here: their workers answer DIED for the rest of the run (stragglers), noted once.
"""

from __future__ import annotations

import itertools
import os
import pickle
import queue
import socket
import threading
import time

from ..engine import Outcome, Result
from ._aggregate import HostsAggregate, group_by_host, message_bytes
from ._base import RealTimeExecutor, drain
from ._fork import forkserver
from ._torch_host import Channel, Kind, connect, dumps, loopback_interface, spawned_host

START_S = 120.0        # seconds a host may take to join its group
HEAD_BYTES = 32        # a message's header: four int64
TORCHRUN = ("RANK", "WORLD_SIZE", "MASTER_ADDR")


def under_torchrun() -> bool:
    """Whether torchrun (or a launcher setting its variables) started this process.

    >>> from gradcode.runtime._torch import under_torchrun
    >>> under_torchrun()              # python or pytest started this one
    False
    """
    return all(k in os.environ for k in TORCHRUN)


class Link:
    """The master's side of one host: its group, a sending and a receiving thread, its process
    (on one machine) and the replies to the master's questions."""

    def __init__(self, ex: "TorchExecutor", a: int, prefix: str, process=None):
        self.ex, self.a, self.prefix, self.process = ex, a, prefix, process
        self.alive, self.closing = True, False
        self.outbox: queue.Queue = queue.Queue()
        self.replies: queue.Queue = queue.Queue()
        self.channel: Channel | None = None
        self.up = threading.Event()
        self.threads = [threading.Thread(target=f, daemon=True, name=f"gc-torch-{a}")
                        for f in (self._sending, self._receiving)]
        for t in self.threads:
            t.start()

    def post(self, kind: Kind, round: int = -1, meta=b"", blob=b"") -> None:
        self.outbox.put((kind, round, meta, blob))

    def _sending(self) -> None:
        try:
            self.channel = self.ex.join(self.prefix)
            self.up.set()
            while (item := self.outbox.get()) is not None:
                self.channel.send(*item)
        except Exception as exc:                      # the host is gone (or never came)
            self.ex.lost(self, exc)
        finally:
            self.up.set()

    def _receiving(self) -> None:
        self.up.wait()
        try:
            while self.channel is not None:
                kind, round, meta, blob = self.channel.recv()
                self.ex.received(HEAD_BYTES + len(meta) + len(blob))
                if kind is Kind.BYE:
                    return
                if kind is Kind.REPLY:
                    self.replies.put(pickle.loads(meta))
                else:
                    self.ex.arrived(round, meta)
        except Exception as exc:
            self.ex.lost(self, exc)

    def answer(self, rid: int, timeout: float):
        """The value of the reply to question ``rid`` (earlier, late replies are dropped);
        raises LookupError for a refusal, TimeoutError when none comes."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                got, ok, value = self.replies.get(timeout=max(left, 0.0) if self.alive else 0.1)
            except queue.Empty:
                if left <= 0 or not self.alive:
                    raise TimeoutError(f"torch host {self.a} did not answer") from None
                continue
            if got == 0 and not ok:                   # it could not start
                raise RuntimeError(f"torch host {self.a} could not start: {value}")
            if got == rid:
                if not ok:
                    raise LookupError(value)
                return value

    def stop(self) -> None:
        """Tell the host to stop (the threads end once it has: ``close``)."""
        self.closing = True
        if self.alive:
            self.post(Kind.CLOSE)
        self.outbox.put(None)

    def close(self, timeout: float = 10.0) -> None:
        """Wait (up to ``timeout``) for a host told to stop; kill one that does not.  A host
        that never joined its group is not waited for (the sending thread, still waiting for
        it in gloo, gives up by itself)."""
        if not self.closing:
            self.stop()
        joined = self.up.is_set() and self.channel is not None
        if self.process is not None and not joined:
            self.process.kill()
        for t in self.threads if joined else ():
            t.join(timeout)
        if self.process is not None:
            self.process.join(timeout if self.alive and joined else 0.1)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(timeout)


class TorchExecutor(HostsAggregate, RealTimeExecutor):
    """``engine.Executor`` over torch.distributed processes (module doc)."""
    name = "torch"

    def __init__(self, workers, actors: int | None = None, concurrency: int | None = None,
                 store=None, prefix: str = "gradcode", aggregate: str = "auto"):
        super().__init__(workers.n)
        self.torchrun = store is not None
        hosts = max(1, min(self.n, actors or self.n))
        self.owner = [i % hosts for i in range(self.n)]
        self.workers, self.concurrency = workers.shipped(lambda p: p), concurrency
        self.lock = threading.Lock()
        self.results: queue.Queue = queue.Queue()
        self.open: int | None = None         # the round under way (None between rounds)
        self.pending: dict[int, int] = {}    # worker -> the round it was asked and not answered
        self.dead: set[int] = set()          # hosts whose workers were told DIED
        self.holding: set[int] = set()       # hosts that keep their workers' vectors
        self.mode, self.message_bytes = aggregate, message_bytes(workers)
        self.wire_bytes, self._counting = 0, threading.Lock()
        self.restarts = self.drained = 0
        self.rid = itertools.count(1)
        self.nodes_seen = set()
        self.generation = [0] * hosts
        self.base = prefix
        if store is None:
            store, self.forks = self._local_store(), forkserver()   # torch imported once
        self.store = store
        self.links = [self._start(a) for a in range(hosts)]

    @classmethod
    def from_config(cls, options, workers):
        """On one machine, ``options.actors`` host processes (default one per worker); under
        torchrun (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR`` set) its processes: rank 0 returns
        the master, the other ranks serve as hosts until it closes, then exit."""
        actors, concurrency = getattr(options, "actors", None), getattr(options, "concurrency",
                                                                       None)
        aggregate = getattr(options, "aggregate", "auto")
        if not under_torchrun():
            ex = cls(workers, actors, concurrency, aggregate=aggregate)
            ex.description = (f"torch: {len(ex.links)} gloo processes on 127.0.0.1 hosting "
                              f"{ex.n} workers")
            return ex
        store, rank, world, prefix = torchrun_store()
        if rank > 0:
            serve_torchrun(store, prefix, rank)
            raise SystemExit(0)
        if actors is not None and actors != world - 1:
            raise ValueError(f"actors: under torchrun the hosts are its processes but rank 0, "
                             f"WORLD_SIZE - 1 = {world - 1}, got {actors}")
        if not 1 <= world - 1 <= workers.n:
            raise ValueError(f"backend torch under torchrun: expected 2 to n + 1 = "
                             f"{workers.n + 1} processes, got WORLD_SIZE {world}")
        ex = cls(workers, world - 1, concurrency, store=store, prefix=prefix,
                 aggregate=aggregate)
        ex.description = f"torch: {world - 1} torchrun processes hosting {ex.n} workers"
        return ex

    # -- starting hosts ----------------------------------------------------------------------

    def _local_store(self):
        """A store on a free port of 127.0.0.1 (listening there only, as gloo does)."""
        import torch.distributed as dist
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(128)
        self.addr, self.port = self.listener.getsockname()
        return dist.TCPStore(self.addr, self.port, is_master=True, wait_for_workers=False,
                             master_listen_fd=self.listener.fileno(),
                             timeout=_timedelta(START_S))

    def _start(self, a: int) -> Link:
        """Host ``a``'s link (and, on one machine, its process); it gets its workers first."""
        prefix = f"{self.base}/host{a}/gen{self.generation[a]}/"
        process = None
        if not self.torchrun:
            process = self.forks.Process(target=spawned_host, daemon=True, name=f"gc-host-{a}",
                                         args=(self.addr, self.port, prefix, START_S))
            process.start()
        link = Link(self, a, prefix, process)
        mine = self.mine(a)
        link.post(Kind.INIT, -1, dumps((mine, self.workers.only(mine), self.concurrency),
                                       by_value=True))
        return link

    def join(self, prefix: str) -> Channel:
        """The master's side of the group ``prefix`` (on one machine: gloo on the loopback)."""
        if self.torchrun:
            return connect(self.store, prefix, 0, START_S)
        with _ENV_LOCK:                 # gloo reads where to bind from the environment
            before = os.environ.get("GLOO_SOCKET_IFNAME")
            os.environ["GLOO_SOCKET_IFNAME"] = loopback_interface()
            try:
                return connect(self.store, prefix, 0, START_S)
            finally:
                if before is None:
                    del os.environ["GLOO_SOCKET_IFNAME"]
                else:
                    os.environ["GLOO_SOCKET_IFNAME"] = before

    def mine(self, a: int) -> list[int]:
        return [i for i in range(self.n) if self.owner[i] == a]

    # -- the round ---------------------------------------------------------------------------

    def ping(self, timeout: float = START_S) -> None:
        """Wait until every host has built its workers (start-up is not timed as a round);
        raises RuntimeError naming a host that exits first or does not answer in time."""
        deadline = time.monotonic() + timeout
        for link, rid in self._ask("ping"):
            while True:
                try:
                    self.nodes_seen.add(link.answer(rid, 0.5)[1])
                    break
                except TimeoutError:
                    if link.process is not None and not link.process.is_alive():
                        raise RuntimeError(
                            f"torch host {link.a} exited (code {link.process.exitcode}) before "
                            "it started: a script that trains with backend torch needs the "
                            "guard `if __name__ == \"__main__\":`, as any multiprocessing "
                            "program") from None
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"torch host {link.a} did not start within "
                                           f"{timeout:.0f} s") from None

    def where(self, timeout: float = 10.0) -> dict[str, list[int]]:
        """``{machine: its workers}`` of the hosts answering within ``timeout``."""
        out: dict[str, list[int]] = {}
        for link, rid in self._ask("ping"):
            try:
                _, node = link.answer(rid, timeout)
            except TimeoutError:
                continue
            self.nodes_seen.add(node)
            out.setdefault(node, []).extend(self.mine(link.a))
        return out

    def _ask(self, what: str, args: dict | None = None) -> list:
        """``(link, request id)`` of question ``what`` put to every live host (``args``: host
        -> its argument; only those hosts)."""
        asked = []
        for link in self.links:
            if link.alive and (args is None or link.a in args):
                rid = next(self.rid)
                link.post(Kind.ASK, -1, dumps((rid, what, None if args is None else args[link.a])))
                asked.append((link, rid))
        return asked

    def submit(self, round: int, params, tasks: list, delays, skip=()) -> None:
        """Start the round on every worker not in ``skip``: the parameters pickled once, each
        host sent them with its workers' tasks and delays; the workers of a host found dead
        answer DIED (module doc)."""
        self._restart()
        self.start_clock()
        blob = dumps(params)
        with self.lock:
            self.open = round
            for link in self.links:
                mine = [i for i in self.mine(link.a) if i not in skip]
                if not mine:
                    continue
                if not link.alive:
                    self._died(link.a, mine, round)
                    continue
                self.pending.update((i, round) for i in mine)
                meta = dumps(({i: tasks[i] for i in mine}, {i: float(delays[i]) for i in mine},
                              link.a in self.holding))
                link.post(Kind.RUN, round, meta, blob)

    def _restart(self) -> None:
        """Hosts whose workers were told DIED start again, in new groups (not torchrun's)."""
        for a in sorted(self.dead):
            if self.torchrun:
                continue
            self.dead.discard(a)
            self.links[a].close(timeout=1.0)
            self.generation[a] += 1
            self.links[a] = self._start(a)
            self.restarts += 1
            self.notes.append(f"torch host {a} (workers {self.mine(a)}) died; restarted")

    def _died(self, a: int, workers: list[int], round: int) -> None:
        """Workers ``workers`` of dead host ``a`` answer DIED in ``round`` (lock held)."""
        for i in workers:
            self.pending.pop(i, None)
            self.results.put(Result.without(round, i, Outcome.DIED,
                                            f"torch host {a}'s process died"))
        if a not in self.dead and self.torchrun:
            self.notes.append(f"torch host {a} (workers {self.mine(a)}) died: torchrun's "
                              "processes cannot be restarted from gradcode, so its workers are "
                              "stragglers for the rest of the run")
        self.dead.add(a)

    def lost(self, link: Link, exc: BaseException) -> None:
        """``link``'s host is gone (its group broke): the workers waited on in the round under
        way answer DIED now, else those asked in the next round do."""
        with self.lock:
            if not link.alive or link.closing:
                return
            link.alive = False
            waited = [i for i, r in self.pending.items()
                      if self.owner[i] == link.a and r == self.open]
            if waited:
                self._died(link.a, waited, self.open)

    def arrived(self, round: int, meta) -> None:
        """A result from a receiving thread: queued if its round is under way, else drained
        (a straggler's late result, never unpickled)."""
        with self.lock:
            if round != self.open:
                self.drained += 1
                return
            res = pickle.loads(meta)
            if self.pending.get(res.worker) == round:
                del self.pending[res.worker]
            self.results.put(res)

    def _wait(self, timeout: float, wanted: int) -> list[Result]:
        return drain(self.results, timeout)

    def end_round(self, round: int) -> None:
        with self.lock:
            self.open = None
            for i in [i for i, r in self.pending.items() if r == round]:
                del self.pending[i]
        for link in self.links:
            if link.alive:
                link.post(Kind.END, round)

    # -- questions, faults, the end ----------------------------------------------------------

    def computing(self, timeout: float = 10.0) -> dict[int, int]:
        """``{worker: round}`` of the workers computing now, as their hosts see it."""
        out: dict[int, int] = {}
        for link, rid in self._ask("computing"):
            try:
                out.update(link.answer(rid, timeout))
            except TimeoutError:
                pass
        return out

    def received(self, size: int) -> None:
        """``size`` bytes came in from a host (``wire_bytes``)."""
        with self._counting:
            self.wire_bytes += size

    def combine(self, round: int, weights: dict, wide: bool = False,
                timeout: float = 30.0) -> list:
        """From each host holding some of ``weights``' vectors, in one question, their sum."""
        by_host = group_by_host(weights, self.owner)
        asked = self._ask("combine", {a: (round, terms, wide) for a, terms in by_host.items()})
        if len(asked) < len(by_host):
            raise LookupError("a torch host holding some of the vectors asked for is gone")
        return [([(i, k) for i, k, _ in by_host[link.a]], link.answer(rid, timeout))
                for link, rid in asked]

    def residuals(self, wanted: list, timeout: float = 30.0) -> list:
        """From each host, in one question, its workers' residuals among ``wanted``."""
        by_host: dict[int, list] = {}
        for key in wanted:
            by_host.setdefault(self.owner[key[1]], []).append(key)
        asked = self._ask("residuals", by_host)
        if len(asked) < len(by_host):
            raise LookupError("a torch host holding some of the residuals asked for is gone")
        found = {}
        for link, rid in asked:
            found.update(zip(by_host[link.a], link.answer(rid, timeout)))
        return [found[key] for key in wanted]

    def kill_actor(self, a: int, wait_s: float = 10.0) -> None:
        """Fault injection (one machine): kill host ``a``'s process and wait (up to ``wait_s``)
        until the master has seen it go."""
        link = self.links[a]
        if link.process is None:
            raise ValueError("kill_actor: torchrun's processes are not gradcode's to kill")
        link.process.kill()
        deadline = time.monotonic() + wait_s
        while link.alive and time.monotonic() < deadline:
            time.sleep(0.01)

    def close(self) -> None:
        """Every host told to stop (those that do not, killed); the store closed."""
        for link in self.links:
            link.stop()
        for link in self.links:
            link.close()
        self.links = []
        if not self.torchrun:
            self.listener.close()


_ENV_LOCK = threading.Lock()


def _timedelta(seconds: float):
    from datetime import timedelta
    return timedelta(seconds=seconds)


def torchrun_store():
    """``(store, rank, world size, key prefix)`` of a process torchrun started."""
    import torch.distributed as dist
    store, rank, world = next(dist.rendezvous("env://", timeout=_timedelta(START_S)))
    run = os.environ.get("TORCHELASTIC_RUN_ID", "run")
    attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    return store, rank, world, f"gradcode/{run}/{attempt}"


def serve_torchrun(store, prefix: str, rank: int) -> None:
    """Rank ``rank`` > 0 under torchrun: host ``rank - 1`` until the master closes."""
    from ._torch_host import serve
    serve(connect(store, f"{prefix}/host{rank - 1}/gen0/", 1, START_S))
