"""The scheme protocol: the two small contracts every scheme keeps, as code, and the wait-out
rules as a value.

* ``Scheme``: immutable, built by ``make_code(name, **params)``; what each worker holds and
  computes (``n_workers`` messages per round from ``n_machines`` machines, ``sender``,
  ``partition_sizes``, ``placement``, ``load`` per message), the decoding delay ``T``, the
  wait-out rules it accepts (``waitout_rules``: none for a single-round code), ``slices`` (the
  number of slices each message's gradient is cut into: every message is one coded vector of
  length ``ceil(l / slices)`` for a gradient of length ``l``; 1 for every scheme but
  ``comm-efficient``, whose planner gives ``(d, slices)`` coefficient rows and length-``slices``
  decoding weights), ``describe()`` with ``make_code(**scheme.describe())`` the same scheme, and
  ``planner(jobs, waitout)``.
* ``Planner``: the master's state across the rounds of one run: ``assign(r)`` the tasks,
  ``loads(r)``, ``waitout(r, returned)`` whether the rule needs everyone, ``report(r, returned)``
  the jobs finished, ``weights(job)`` their decoding weights, ``due(r)`` what the round's record
  says, ``extended(jobs)`` the same run with more jobs.

A single-round code (``gradcode.codes``, papers 1-3, 5) is the case ``T = 0`` without wait-out
rules: job ``r`` is computed and decoded in round ``r`` from whatever arrived.  A sequential
scheme (paper 4, ``gradcode.sequential``) decodes job ``t`` by round ``t + T`` and waits a round
out when its rule (``WaitOut``) says a job would be lost.  The engine's loop, the vectorised
simulator, replay, the App. J search and the CLI use these alone; tests/test_contract.py checks
every registered scheme against them and tests/test_contract_paths.py every fast path against
the loop.

>>> import gradcode
>>> code, seq = gradcode.make_code("gc-cr", n=4, s=1), gradcode.make_code("gc-seq", n=4, s=1)
>>> isinstance(code, Scheme) and isinstance(seq, Scheme)
True
>>> code.T, code.waitout_rules, seq.T, [str(r) for r in seq.waitout_rules]
(0, (), 0, ['deadline', 'model', 'never'])
>>> isinstance(seq.planner(3), Planner), seq.planner(3).rule is WaitOut.DEADLINE
(True, True)
"""

from __future__ import annotations

import enum
from typing import Any, Protocol, runtime_checkable

import numpy as np


class WaitOut(enum.StrEnum):
    """A sequential scheme's wait-out rule (paper 4, Remark 2.3): when the master waits for every
    worker instead of stopping at the wait policy.

    * ``DEADLINE``: when, with the round's stragglers lost, some job could no longer be decoded
      by its deadline even if no worker straggled afterwards;
    * ``MODEL``: when the stragglers of the recent rounds leave the scheme's design straggler
      model (the authors' rule, App. J);
    * ``NEVER``: never (jobs may be lost).

    >>> WaitOut("model") is WaitOut.MODEL, str(WaitOut.DEADLINE), WaitOut.NEVER == "never"
    (True, 'deadline', True)
    >>> WaitOut.parse("sometimes")
    Traceback (most recent call last):
    ValueError: waitout: expected one of deadline, model, never, got 'sometimes'
    """

    DEADLINE = "deadline"
    MODEL = "model"
    NEVER = "never"

    @classmethod
    def parse(cls, value) -> "WaitOut":
        """The rule named ``value`` (a ``WaitOut`` or its name), else ValueError naming it."""
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(r.value for r in cls)
            raise ValueError(f"waitout: expected one of {names}, got {value!r}") from None


@runtime_checkable
class Scheme(Protocol):
    """What every scheme is (module docstring); ``isinstance(x, Scheme)`` checks the members.

    >>> import gradcode
    >>> x = gradcode.make_code("m-sgc", n=4, B=1, W=2, lam=2)
    >>> isinstance(x, Scheme), x.T, x.load.tolist(), gradcode.make_code(**x.describe()) == x
    (True, 1, [0.375, 0.375, 0.375, 0.375], True)
    >>> isinstance(object(), Scheme)
    False
    """

    name: str
    T: int
    waitout_rules: tuple
    slices: int

    @property
    def n_workers(self) -> int: ...
    @property
    def n_machines(self) -> int: ...
    @property
    def sender(self) -> np.ndarray: ...
    @property
    def partition_sizes(self) -> np.ndarray: ...
    @property
    def placement(self) -> tuple: ...
    @property
    def load(self) -> np.ndarray: ...
    @property
    def is_sum_code(self) -> bool: ...
    def describe(self) -> dict[str, Any]: ...
    def planner(self, jobs: int, waitout=None, *, decode_seed: int = 0,
                shuffle_rng=None) -> "Planner": ...


@runtime_checkable
class Planner(Protocol):
    """The master's state across one run's rounds (module docstring); the loop's only view of a
    scheme besides its ``Scheme`` members.

    Round 0 of gc-seq (n = 4, s = 1) with worker 3 late: the job still decodes.

    >>> import gradcode
    >>> planner = gradcode.make_code("gc-seq", n=4, s=1).planner(jobs=2)
    >>> isinstance(planner, Planner), len(planner.assign(0)), planner.waitout(0, [0, 1, 2])
    (True, 4, False)
    >>> planner.report(0, [0, 1, 2]), planner.due(0)
    ([0], (1.0, 0.0, True))
    """

    rule: WaitOut | None
    decoding: Any

    def assign(self, r: int) -> list: ...
    def loads(self, r: int) -> np.ndarray: ...
    def rows(self, returned) -> np.ndarray: ...
    def decodes(self, r: int, returned) -> bool: ...
    def waitout(self, r: int, returned) -> bool: ...
    def report(self, r: int, returned) -> list: ...
    def weights(self, job: int) -> dict: ...
    def recovered(self, job: int) -> np.ndarray: ...
    def due(self, r: int) -> tuple: ...
    def extended(self, jobs: int) -> "Planner": ...
