"""The executor contract: the one interface ``engine.Loop`` drives, whatever runs the workers.

An executor runs ``n`` logical workers for the master, one round at a time:

- ``submit(round, params, tasks, delays, skip)`` starts round ``round`` on every worker not in
  ``skip``: worker ``i`` waits its injected delay ``delays[i]`` (cancelled when the round ends),
  then computes ``tasks[i]`` at ``params``.  A worker still computing an earlier round does not
  start this one: it answers ``Outcome.BUSY`` (a straggler this round).
- ``poll(until, wanted)`` returns the next results that arrived by ``until`` seconds after the
  round started (at most ``wanted`` of them where the backend can tell, at least one unless
  ``until`` passed with none).  Every worker asked answers once per round, unless the round
  ends first.
- ``end_round(round)`` ends the round: sleeping and queued calls are cancelled and leave no state
  behind; only a worker that really is computing stays busy.
- ``elapsed()`` seconds since the round started; ``close()`` frees everything.
- ``residuals(wanted)``: the float32 rounding residuals ``m - fl32(m)`` of messages that
  arrived, ``(round, worker, k)`` each (mini-task ``k``), kept by each worker for its last
  rounds (``analysis.refine`` adds them where decoding weights would amplify float32 rounding
  beyond ``WIRE_TARGET``); a message that reported ``rounding`` 0 has none.
- ``aggregate()`` and ``combine(round, weights, wide)``: per-host aggregation (issue 33), where
  one host process holds several logical workers (a Ray actor, a torch process).  Once the loop
  has called ``aggregate()`` (True: some host will; the backend's ``aggregate`` option says
  where: on, off, or auto, where the bytes saved pay for the sums' round trip), such a host
  keeps its workers' coded vectors of the round and sends the master a notice instead: the
  ``Result`` with ``coded`` ``[None, ...]`` (status, loss, rounding norms, stats; no vector).
  Once the master has decoded, ``combine`` asks each host holding vectors it uses for one
  weighted sum ``sum_i w_i m_i`` (float64 at the host, sent in the wire dtype, or float64 when
  ``wide``), so the bytes into the master per round scale with hosts, not workers.  A host
  holding one worker sends its vectors whole.  The default: no aggregation, every vector comes whole.
- ``wire_bytes``: every byte the master received on the backend's wire (messages, residuals,
  notices, sums), where the backend counts it; None (the default) where the loop counts what
  it is handed (``Loop.bytes_in``).
- ``blocked_s`` (seconds spent waiting on workers), ``notes`` (what the master should log),
  ``nodes_seen`` and ``where()`` (which machine runs which worker), ``ping()`` (wait until every
  worker is up, before round 0), ``computing()`` (which workers are computing now).

A backend is built by ``from_config(options, workers)``: ``options`` the ``BackendOptions`` of
the run (the backend's row of ``gradcode.runtime.BACKENDS`` declares which of them it takes;
the others are at their defaults), ``workers`` the factory of the logical workers (``workers(i)``
is worker ``i``; ``sharing``, ``only``, ``shipped``/``landed`` let a backend give each process the
workers and data it hosts, through its own transport).  Every backend of that table goes
through the same contract test suite (``tests/test_executor_contract.py``).
"""

from __future__ import annotations

import abc
import enum
from dataclasses import dataclass, field, fields


class Outcome(enum.Enum):
    """What became of a worker's call in a round.

    >>> Outcome.BUSY.value
    'busy'
    >>> Outcome("non-finite")
    <Outcome.NONFINITE: 'non-finite'>
    """
    ARRIVED = "arrived"        # its coded result reached the master
    BUSY = "busy"              # still computing an earlier round: a straggler this round
    FAILED = "failed"          # raised: a straggler this round
    NONFINITE = "non-finite"   # returned NaN or inf: an erasure
    DIED = "died"              # its process died (Ray: restarted at the next round)
    CANCELLED = "cancelled"    # the round ended before it computed (never reaches the loop)


@dataclass
class Result:
    """What a worker sends back: one coded vector (and coded loss) per mini-task.

    >>> res = Result(round=0, worker=2, coded=[np.ones(3)], loss=[0.7], arrived_s=0.4)
    >>> res.status, res.coded[0].tolist()
    (<Outcome.ARRIVED: 'arrived'>, [1.0, 1.0, 1.0])
    >>> Result.without(0, 1, Outcome.BUSY).status          # a straggler this round
    <Outcome.BUSY: 'busy'>
    >>> bad = Result.failed(0, 3, OSError("disk full"))     # a machine's fault: a straggler
    >>> bad.status, bad.error, bad.exception
    (<Outcome.FAILED: 'failed'>, 'OSError: disk full', None)
    >>> Result.failed(0, 3, AttributeError("x")).exception.__notes__[0][:42]   # a bug: raised
    'gradcode: an internal error in worker 3, r'
    """
    round: int
    worker: int
    coded: list            # ndarray per mini-task (None: nothing computed, e.g. the simulator)
    loss: list             # coded loss sums per mini-task
    seconds: float = 0.0
    arrived_s: float = 0.0 # seconds after the round started that the master received it
    status: Outcome = Outcome.ARRIVED
    error: str | None = None     # why it failed, died or was cancelled, in words
    #: per mini-task, ``||m - fl32(m)||`` of a message rounded to float32 on the wire (empty
    #: or 0 where nothing was rounded: the residual ``Executor.residuals`` returns)
    rounding: list = field(default_factory=list)
    #: FAILED by an exception of the user's model, loss or data, or by a bug of gradcode's own:
    #: raised to the user (the run stops), not taken as a straggler as a machine's fault is
    exception: BaseException | None = None
    #: per mini-task, one row per partition it combined (or None): what every copy of a
    #: partition computes alike and the master needs besides the coded vector (the runtime's
    #: loss denominator, parameters used, buffers; ``Step.stats``)
    stats: list = field(default_factory=list)

    @classmethod
    def without(cls, round: int, worker: int, status: Outcome, error: str | None = None):
        """A result without vectors: the worker was busy, failed, died or was cancelled."""
        return cls(round, worker, [], [], status=status, error=error)

    @classmethod
    def failed(cls, round: int, worker: int, exc: BaseException):
        """Worker ``worker`` raised ``exc``: FAILED.  A machine's fault (``is_fault``) makes a
        straggler; anything else is carried, so that the loop raises it: the user's own error
        (``user_error``), or a bug in gradcode, noted as one."""
        res = cls.without(round, worker, Outcome.FAILED, f"{type(exc).__name__}: {exc}")
        if not is_fault(exc):
            if not is_user_error(exc):
                exc.add_note(f"gradcode: an internal error in worker {worker}, round {round} (a "
                             "bug in gradcode, not a straggler: please report it)")
            res.exception = exc
        return res


class WorkerFault(Exception):
    """A worker's machine failed (what a test injects as a fault): a straggler this round.

    >>> Result.failed(0, 1, WorkerFault("node lost")).exception is None    # not raised
    True
    """


def is_fault(exc: BaseException) -> bool:
    """Whether ``exc`` is a machine's fault rather than a bug: out of memory (host or device),
    an operating system or connection error, or a ``WorkerFault``.

    >>> is_fault(OSError("disk full")), is_fault(MemoryError()), is_fault(KeyError("x"))
    (True, True, False)
    """
    return (isinstance(exc, (WorkerFault, MemoryError, OSError))
            or type(exc).__name__ == "OutOfMemoryError")


def user_error(exc: BaseException, where: str) -> BaseException:
    """``exc`` (raised by the user's Dataset, model or loss) marked as the user's and noted with
    ``where`` it happened: it reaches the user as their own exception, with the worker, the
    partition and the sample where known (each layer adds its note), on every backend.

    >>> exc = user_error(ValueError("label 7 out of range"), "worker 2, partition 5")
    >>> is_user_error(exc), exc.__notes__
    (True, ['gradcode: raised by worker 2, partition 5'])
    >>> Result.failed(0, 2, exc).exception is exc         # raised to the user, not a straggler
    True
    """
    exc.gradcode_user_error = True
    exc.add_note(f"gradcode: raised by {where}")
    return exc


def is_user_error(exc) -> bool:
    """Whether ``exc`` was marked by ``user_error`` (raised by the user's model, loss or data).

    >>> is_user_error(OSError("connection reset"))
    False
    >>> is_user_error(user_error(KeyError("x"), "the loss"))
    True
    """
    return getattr(exc, "gradcode_user_error", False)


@dataclass(frozen=True)
class BackendOptions:
    """What a backend is given besides its workers: where and how they run.  Each backend takes
    some of these (its row of ``gradcode.runtime.BACKENDS`` says which); a run may set only
    those, the others stay at their defaults.  A backend needing a new option adds a field here
    and a setting of the same name to ``TrainConfig``.

    >>> from types import SimpleNamespace
    >>> cfg = SimpleNamespace(address=None, actors=2, concurrency=None, device="auto",
    ...                       aggregate="auto", rounds=5)
    >>> BackendOptions.of(cfg, device="cpu")          # the device resolved by the runtime
    BackendOptions(address=None, actors=2, concurrency=None, device='cpu', aggregate='auto')
    >>> BackendOptions.set_in(cfg)                    # the options a run sets
    ('actors', 'device')
    """
    address: str | None = None      # a cluster to join (ray: the head's HOST:PORT)
    actors: int | None = None       # processes hosting the n logical workers (None: default)
    concurrency: int | None = None  # logical workers computing at once per process
    device: str = "cpu"             # where the workers compute: cpu, cuda or cuda:K
    aggregate: str = "auto"         # per-host aggregation: auto (where it pays), on, off

    @classmethod
    def of(cls, settings, **given) -> "BackendOptions":
        """The options from ``settings`` (an object with these attributes, e.g. a
        ``TrainConfig``), ``given`` overriding them."""
        return cls(**{f.name: given.get(f.name, getattr(settings, f.name)) for f in fields(cls)})

    @classmethod
    def set_in(cls, settings) -> tuple[str, ...]:
        """The options ``settings`` sets: those not at their default."""
        return tuple(f.name for f in fields(cls) if getattr(settings, f.name) != f.default)


class Executor(abc.ABC):
    """The contract above; a new backend subclasses it (one file, with ``from_config``) and is
    named in ``gradcode.runtime.BACKENDS`` with the options it takes (one line).

    The contract, on the virtual executor (workers answer at their injected delays):

    >>> from gradcode.engine import VirtualExecutor
    >>> ex = VirtualExecutor(3)
    >>> isinstance(ex, Executor), ex.where()
    (True, {'virtual': [0, 1, 2]})
    >>> tasks = [[(0, [i], [1.0], 0)] for i in range(3)]   # (job, partitions, coefs, model)
    >>> ex.submit(0, None, tasks, delays=[0.5, 0.2, 0.9])
    >>> [(r.worker, r.arrived_s) for r in ex.poll(until=0.6, wanted=3)]
    [(1, 0.2), (0, 0.5)]
    >>> ex.elapsed()
    0.5
    >>> ex.end_round(0); ex.close()
    """
    name: str = "executor"
    blocked_s: float = 0.0
    description: str = ""          # one line saying where the workers run (set by from_config)

    def __init__(self, n: int):
        self.n = n
        self.notes: list[str] = []
        self.blocked_s = 0.0
        self.nodes_seen: set[str] = {self.name}

    @classmethod
    @abc.abstractmethod
    def from_config(cls, options: BackendOptions, workers) -> "Executor":
        """The backend for ``workers.n`` logical workers built by ``workers`` (module doc), with
        ``description`` set."""

    def ping(self) -> None:
        """Wait until every worker is up (start-up is not timed as a round)."""

    def where(self) -> dict[str, list[int]]:
        """``{node: its workers}``."""
        return {self.name: list(range(self.n))}

    def exclude(self, seconds: float) -> None:
        """Leave ``seconds`` of the master's work (an audit) out of ``elapsed()`` (a virtual
        clock never counted it)."""

    def computing(self) -> dict[int, int]:
        """``{worker: round}`` of the workers really computing now (none on a virtual clock)."""
        return {}

    #: bytes the master received on this backend's wire, where it counts them (module doc)
    wire_bytes: int | None = None

    def aggregate(self) -> bool:
        """From the next round on, hosts holding several workers send notices and keep the
        vectors for ``combine`` (module doc); whether any host will (default: none)."""
        return False

    def combine(self, round: int, weights: dict, wide: bool = False) -> list:
        """``[(keys, sum)]``, one per host holding some of the vectors ``weights`` names
        (``(worker, k) -> w``, mini-task ``k`` of a worker whose result of round ``round`` came
        as a notice): the keys it summed and ``sum w m`` over them (module doc); raises
        ``LookupError`` for a vector no host keeps."""
        raise LookupError(f"the {self.name} executor keeps no vectors at its hosts")

    def residuals(self, wanted: list) -> list:
        """The rounding residuals of the messages ``wanted`` (``(round, worker, k)`` each, module
        doc), in that order; raises ``LookupError`` for one that is not kept."""
        raise LookupError(f"the {self.name} executor keeps no rounding residuals")

    @abc.abstractmethod
    def submit(self, round: int, params, tasks: list, delays, skip=()) -> None: ...

    @abc.abstractmethod
    def poll(self, until: float, wanted: int = 1) -> list[Result]: ...

    @abc.abstractmethod
    def elapsed(self) -> float: ...

    @abc.abstractmethod
    def end_round(self, round: int) -> None: ...

    @abc.abstractmethod
    def close(self) -> None: ...
