"""The Ray executor: a few async actors, each hosting several logical workers.

Measured on 2-core machines: ``ray.init`` 4-7 s, each actor ~0.6 s and ~0.3 GB once it imports
torch, so n logical workers share ``actors`` processes.  Injected delays are awaited sleeps
(cancellable with ``ray.cancel``); the gradient runs in the actor's thread pool, at most
``concurrency`` at once on as many shared model replicas (``default_concurrency``: one on a GPU,
the cores on a CPU).  Every call carries its round and the master drops stale results.  A local
instance listens on 127.0.0.1 only and keeps Ray's token authentication (on by default for local
clusters since Ray 2.59).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time

from ..engine import Outcome, Result
from ._aggregate import Held, HostsAggregate, group_by_host, message_bytes
from ._base import RealTimeExecutor, WorkerStates, busy, cancelled, compute

RAY_VERSION = "2.60.0"


def init_ray(address: str | None = None, num_cpus: int | None = None) -> str:
    """Start (or join) Ray quietly; returns a one-line summary.  Raises ValueError if the
    address cannot be reached."""
    if address is not None:
        _check_reachable(address)
    if address is None:
        # a single-machine instance: every Ray server binds to the loopback interface
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    import ray
    from ray._private import ray_constants

    if address is None:
        ray_constants.ENABLE_RAY_CLUSTER = False
    if ray.is_initialized():
        return "ray: using the running instance"
    t0 = time.perf_counter()
    try:
        if address is None:
            ray.init(num_cpus=num_cpus or max(2, os.cpu_count() or 2), include_dashboard=False,
                     logging_level="ERROR", log_to_driver=False, configure_logging=True)
        else:
            ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    except Exception as exc:  # ConnectionError, TimeoutError, RuntimeError across versions
        raise ValueError(f"address: cannot reach a Ray cluster at {address!r} "
                         f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})")
    where = "local instance on 127.0.0.1" if address is None else f"cluster at {address}"
    return f"ray {ray.__version__}: {where}, started in {time.perf_counter() - t0:.1f} s"


@contextlib.contextmanager
def ray_session():
    """For a block of runs: a Ray instance that the block starts (``train`` on the ray backend
    starts one when none is running) is shut down at its end; one already running is left.

    Starting Ray takes seconds, so the lines that would start it are skipped here:

    >>> import dataclasses
    >>> from gradcode.runtime import TrainConfig, ray_session, train
    >>> cfg = TrainConfig(code="isgc-cr", code_params={"n": 4, "c": 2}, wait="fastest:2",
    ...                   rounds=5, backend="ray").validate()
    >>> with ray_session():                     # doctest: +SKIP
    ...     runs = [train(dataclasses.replace(cfg, seed=s), progress=False) for s in (0, 1)]
    >>> [len(r.records) for r in runs]          # doctest: +SKIP
    [5, 5]
    """
    import ray
    started = not ray.is_initialized()
    try:
        yield
    finally:
        if started and ray.is_initialized():
            ray.shutdown()


def _check_reachable(address: str, timeout: float = 3.0) -> None:
    """Fail fast (ray.init would retry for minutes) when nothing listens at ``address``, or
    what listens does not speak gRPC (HTTP/2), as a Ray head (its GCS, or Ray Client for
    ``ray://``) does: a web server, a database, another program's port."""
    import socket

    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"address: expected HOST:PORT or ray://HOST:PORT, got {address!r}")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(HTTP2_PREFACE)
            head = _read(sock, 9)
    except OSError as exc:
        raise ValueError(f"address: cannot reach a Ray cluster at {address!r} "
                         f"({exc.strerror or exc})") from None
    if len(head) < 9 or head[3] != 0x04:              # an HTTP/2 server's first frame: SETTINGS
        raise ValueError(f"address: {address!r} answers, but not as a Ray cluster (no gRPC "
                         "there); give the head node's GCS address, HOST:6379 by default")


#: the HTTP/2 client connection preface and an empty SETTINGS frame (RFC 9113, 3.4 and 6.5)
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def _read(sock, size: int) -> bytes:
    """Up to ``size`` bytes, fewer if the peer closes first."""
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


class WorkerHost:
    """Hosts several logical workers in one process (restarted by the master if it dies).
    Which of them computes is ``WorkerStates``' (as in the local executor): a call finding
    its worker computing answers BUSY; a call cancelled at the round's end, asleep or
    queued behind another worker's gradient, never computes and leaves no mark."""

    def __init__(self, indices, workers, concurrency=None):
        import ray
        import torch
        from concurrent.futures import ThreadPoolExecutor

        from ._worker import concurrency_for, map_large_buffers

        torch.set_num_threads(1)
        map_large_buffers()
        # at most ``concurrency`` of its workers compute at once (as in the local executor),
        # on as many shared replicas; the others queue
        k = concurrency_for(workers, len(indices), concurrency)
        made = workers.landed(ray.get).sharing(k)
        self.workers = {i: made(i) for i in indices}
        self.pool = ThreadPoolExecutor(max_workers=k)
        self.states = WorkerStates()
        # its workers' vectors of the round, when it aggregates
        self.held = Held(getattr(workers, "dtype", None))

    async def ping(self):
        """``(pid, node id)``: alive, and where."""
        import ray
        return os.getpid(), ray.get_runtime_context().get_node_id()

    async def computing(self):
        """``{worker: round}`` of this host's workers computing now."""
        return self.states.computing()

    async def residuals(self, wanted):
        """The rounding residuals ``(round, worker, k)`` of this host's workers, computed again
        on the computing threads, as the messages were."""
        loop = asyncio.get_running_loop()
        return [await loop.run_in_executor(self.pool, self.workers[i].residual, r, k)
                for r, i, k in wanted]

    async def combine(self, round, terms, wide):
        """``sum w m`` over ``terms`` (``(worker, k, w)``) of round ``round`` (``Held``)."""
        return self.held.combine(round, terms, wide)

    async def run(self, broadcast, i, hold=False):
        """Worker ``i``'s part of the round in ``broadcast = (round, params, tasks, delays)``
        (one object per round: a call carries nothing else, like a plain PS loop's); ``hold``:
        its vectors stay here, a notice goes to the master (``Held``)."""
        t0 = time.perf_counter()
        round, params, tasks, delays = broadcast
        self.states.end(round - 1)   # the master starts a round once the last one ended
        self.held.start(round)
        if self.states.busy(i):      # still on an earlier round: a straggler this round
            return busy(round, i)
        delay = float(delays[i])
        if delay > 0:
            await asyncio.sleep(delay)
        # a job still queued for a thread when the round ends (with fewer threads than
        # workers) is cancelled by ray.cancel, or finds the round over and does not start
        res = await asyncio.get_running_loop().run_in_executor(
            self.pool, compute, self.states, self.workers[i], round, params, tasks[i])
        res.seconds = time.perf_counter() - t0
        return self.held.notice(res) if hold else res


def _host_class():
    """``WorkerHost`` as a Ray actor class (imports ray on first use)."""
    import ray
    return ray.remote(num_cpus=0, max_restarts=0, max_task_retries=0)(WorkerHost)


class RayExecutor(HostsAggregate, RealTimeExecutor):
    name = "ray"

    def __init__(self, workers, actors: int | None = None, concurrency: int | None = None,
                 device: str = "cpu", aggregate: str = "auto"):
        import ray

        self.ray = ray
        super().__init__(workers.n)
        n = self.n
        actors = max(1, min(n, actors or 2))
        self.Host = _host_class()
        self.workers = workers.shipped(ray.put)      # each partition shipped once
        self.concurrency = concurrency
        self.owner = [i % actors for i in range(n)]
        # on CUDA each actor asks for its share of a GPU
        cuda = device.startswith("cuda")
        self.options = {"num_gpus": 1.0 / actors} if cuda else {}
        self.node_of: dict[int, str] = {}     # host -> node id (from its ping)
        self.nodes_seen: set[str] = set()     # every node a host ran on during the run
        self.placing: dict = {}               # restarted host -> its first ping
        self.hosts = [self._start_host(a) for a in range(actors)]
        self.dead: set[int] = set()
        self.heard: set[int] = set()  # hosts that answered this round
        self.pings: dict = {}         # host -> its pending ping (a silent host: alive or dead?)
        self.restarts = 0
        self.pending: dict = {}      # ObjectRef -> (round, worker)
        self.holding: set[int] = set()   # hosts that keep their workers' vectors (aggregate)
        self.mode, self.message_bytes = aggregate, message_bytes(workers)

    @classmethod
    def from_config(cls, options, workers):
        """Ray joined at ``options.address`` (or a local instance started), ``options.actors``
        hosts computing at most ``options.concurrency`` of their workers at once each, on
        ``options.device``, aggregating as ``options.aggregate`` says."""
        info = init_ray(options.address)
        ex = cls(workers, options.actors, options.concurrency, options.device, options.aggregate)
        ex.description = info
        return ex

    def _start_host(self, a: int):
        mine = [i for i in range(self.n) if self.owner[i] == a]
        return self.Host.options(scheduling_strategy=self._spread(a), **self.options).remote(
            mine, self.workers.only(mine), self.concurrency)

    def _spread(self, a: int):
        """Host ``a`` on the ``a``-th node alive now, round robin.  Ray's own SPREAD, and soft
        node affinity, are best effort: on Ray 2.60 both stacked two actors asking for no CPU on
        one node of a two-node cluster.  A restarted host goes to a node alive at its restart
        (a node that dies meanwhile kills it again: found and restarted once more)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        alive = sorted(n["NodeID"] for n in self.ray.nodes() if n.get("Alive"))
        if not alive:
            return "SPREAD"
        return NodeAffinitySchedulingStrategy(alive[a % len(alive)], soft=False)

    def ping(self, timeout: float = 120.0) -> None:
        """Wait until every actor is up (before round 1, so start-up is not timed as a round)."""
        for a, (_, node) in enumerate(self.ray.get([h.ping.remote() for h in self.hosts],
                                                   timeout=timeout)):
            self.node_of[a] = node
            self.nodes_seen.add(node)

    def where(self, timeout: float = 10.0) -> dict[str, list[int]]:
        """``{node id: its workers}`` now (hosts that do not answer within ``timeout`` are left
        out)."""
        refs = {a: h.ping.remote() for a, h in enumerate(self.hosts)}
        ready, _ = self.ray.wait(list(refs.values()), num_returns=len(refs), timeout=timeout)
        out: dict[str, list[int]] = {}
        for a, ref in refs.items():
            if ref in ready:
                try:
                    node = self.ray.get(ref)[1]
                except Exception:
                    continue
                out.setdefault(node, []).extend(i for i in range(self.n) if self.owner[i] == a)
        return out

    def submit(self, round: int, params, tasks: list, delays, skip=()) -> None:
        """Start the round on every worker not in ``skip`` (a worker still computing an earlier
        round answers "busy", a straggler this round)."""
        for a in sorted(self.dead):                          # a host died: start a new one
            self.pings.pop(a, None)
            self.hosts[a] = self._start_host(a)
            self.restarts += 1
            mine = [i for i in range(self.n) if self.owner[i] == a]
            node = self.node_of.get(a, "?")[:8]
            self.notes.append(f"Ray host {a} (workers {mine}) on node {node} died; restarted")
            self.placing[a] = self.hosts[a].ping.remote()    # where it went: noted when known
        self.dead.clear()
        self.start_clock()
        bref = self.ray.put((round, params, tasks, delays))  # broadcast once per round
        for i in range(self.n):
            if i in skip:
                continue
            a = self.owner[i]
            ref = self.hosts[a].run.remote(bref, i, a in self.holding)
            self.pending[ref] = (round, i)

    def combine(self, round: int, weights: dict, wide: bool = False,
                timeout: float = 30.0) -> list:
        """From each host holding some of ``weights``' vectors, in one call, their sum."""
        by_host = group_by_host(weights, self.owner)
        hosts = list(by_host)
        try:
            got = self.ray.get([self.hosts[a].combine.remote(round, by_host[a], wide)
                                for a in hosts], timeout=timeout)
        except self.ray.exceptions.RayTaskError as exc:
            raise LookupError(str(exc).splitlines()[-1]) from None
        return [([(i, k) for i, k, _ in by_host[a]], v) for a, v in zip(hosts, got)]

    def residuals(self, wanted: list, timeout: float = 30.0) -> list:
        """From each host, in one call, its workers' residuals among ``wanted``."""
        by_host: dict[int, list] = {}
        for key in wanted:
            by_host.setdefault(self.owner[key[1]], []).append(key)
        hosts = list(by_host)
        got = self.ray.get([self.hosts[a].residuals.remote(by_host[a]) for a in hosts],
                           timeout=timeout)
        found = {key: e for a, part in zip(hosts, got) for key, e in zip(by_host[a], part)}
        return [found[key] for key in wanted]

    def _wait(self, timeout: float, wanted: int) -> list[Result]:
        """Waits for ``wanted`` results (one ``ray.wait``, as paper 2's implementation does) and
        fetches them in one ``ray.get``."""
        if not self.pending:
            time.sleep(min(timeout, 0.05))
            return []
        refs = list(self.pending)
        ready, _ = self.ray.wait(refs, num_returns=min(wanted, len(refs)), timeout=timeout)
        if not ready:
            return []
        meta = [self.pending.pop(ref) for ref in ready]
        self.heard.update(self.owner[i] for _, i in meta)
        try:
            return self.ray.get(ready)
        except Exception:
            return [self._get_one(ref, r, i) for ref, (r, i) in zip(ready, meta)]

    def _get_one(self, ref, round: int, i: int) -> Result:
        try:
            return self.ray.get(ref)
        except self.ray.exceptions.RayActorError as exc:      # the host process died
            self.dead.add(self.owner[i])
            return Result.without(round, i, Outcome.DIED, type(exc).__name__)
        except self.ray.exceptions.TaskCancelledError:
            return cancelled(round, i)
        except Exception as exc:     # the call failed: a straggler this round
            return Result.without(round, i, Outcome.FAILED, type(exc).__name__)

    def end_round(self, round: int) -> None:
        self._check_silent_hosts(round)
        for ref, (r, _) in list(self.pending.items()):
            if r == round:               # cancel injected sleeps; results that still come are
                try:                     # dropped as stale
                    self.ray.cancel(ref)
                except Exception:
                    pass
                del self.pending[ref]

    def _check_silent_hosts(self, round: int) -> None:
        """A host none of whose workers was heard from this round may have died (the round can
        end, e.g. at its fastest w, before the error is fetched): fetch its finished calls, and
        ping it; a ping that fails, at the end of this or a later round, finds the host dead
        (restarted at the next ``submit``), one that answers clears it."""
        silent = [ref for ref, (r, i) in self.pending.items()
                  if r == round and self.owner[i] not in self.heard]
        if silent:
            ready, _ = self.ray.wait(silent, num_returns=len(silent), timeout=0)
            for ref in ready:
                self._get_one(ref, *self.pending[ref])
        for a in {self.owner[i] for r, i in self.pending.values() if r == round} - self.heard:
            if a not in self.dead and a not in self.pings:
                self.pings[a] = self.hosts[a].ping.remote()
        self.heard = set()
        for a, answer in self._answers(self.pings).items():
            if answer is None:                        # the host process is gone
                self.dead.add(a)
        for a, answer in self._answers(self.placing).items():   # where restarted hosts went
            if answer is not None:
                self.node_of[a] = answer[1]
                self.nodes_seen.add(answer[1])
                mine = [i for i in range(self.n) if self.owner[i] == a]
                self.notes.append(f"Ray host {a} (workers {mine}) now runs on node "
                                  f"{answer[1][:8]}")

    def _answers(self, pings: dict) -> dict:
        """The pings of ``pings`` (host -> ref) answered by now, taken out of it: host ->
        ``(pid, node)``, or None where the host is gone (a later check finds one that has not
        answered yet)."""
        if not pings:
            return {}
        ready, _ = self.ray.wait(list(pings.values()), num_returns=len(pings), timeout=0)
        out = {}
        for a, ref in list(pings.items()):
            if ref in ready:
                del pings[a]
                try:
                    out[a] = self.ray.get(ref)
                except Exception:
                    out[a] = None
        return out

    def computing(self, timeout: float = 10.0) -> dict[int, int]:
        """``{worker: round}`` of the workers computing now, as their hosts see it."""
        out: dict[int, int] = {}
        for part in self.ray.get([h.computing.remote() for h in self.hosts], timeout=timeout):
            out.update(part)
        return out

    def kill_actor(self, a: int, wait_s: float = 10.0) -> None:
        """Fault injection: kill host ``a`` (the next round starts a new one), and wait (up to
        ``wait_s``) until a call to it fails: ``ray.kill`` is asynchronous, and a round started
        at once could still be answered by the dying process."""
        host = self.hosts[a]
        self.ray.kill(host, no_restart=True)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                self.ray.get(host.ping.remote(), timeout=1.0)
            except self.ray.exceptions.RayActorError:
                return
            except self.ray.exceptions.GetTimeoutError:
                continue
            time.sleep(0.01)

    def close(self) -> None:
        for ref in list(self.pending):
            try:
                self.ray.cancel(ref, force=False)
            except Exception:
                pass
        for h in self.hosts:
            try:
                self.ray.kill(h)
            except Exception:
                pass
        self.pending.clear()
