"""The random-stream layout and the injected arrival times every executor shares.

Random streams (``streams(seed)``), spawned from ``numpy.random.SeedSequence(seed)`` in this
order, the same in ``simulate`` and in ``train`` on every backend:

====  ========  ============================================================================
 0    delay     per-run state of the delay and compute models (``start``), then one round of
                delays after another (``sample_many`` = successive ``sample`` calls)
 1    decode    not drawn from directly: round ``r`` decodes with ``decode_rng(seed, r)``, so
                ties break the same way whoever decodes which rounds
 2    model     the NumPy trainer's data split and initial weights (simulator)
 3    data      the PyTorch runtime's data split
 4    shuffle   paper 5's row permutation, one per round
 5    probe     the probe rounds measuring worker speeds (paper 3)
====  ========  ============================================================================

Arrival times: each round every machine draws a delay; a message leaves its sender once that
machine has computed everything up to it (``message_layout``: ``gc-partial`` sends its naive
part, then its coded part); the compute model charges seconds per unit of normalized load.
"""

from __future__ import annotations

import numpy as np

from ..codes import decode_rng  # noqa: F401  (re-exported: stream 1's per-round generators)

STREAMS = ("delay", "decode", "model", "data", "shuffle", "probe")


def streams(seed: int) -> dict[str, np.random.Generator]:
    """The run's generators by name (table above).

    >>> g = streams(0)
    >>> list(g)
    ['delay', 'decode', 'model', 'data', 'shuffle', 'probe']
    >>> g["delay"].random() == streams(0)["delay"].random()   # one seed, the same draws
    True
    """
    seqs = np.random.SeedSequence(seed).spawn(len(STREAMS))
    return {name: np.random.Generator(np.random.PCG64(s)) for name, s in zip(STREAMS, seqs)}


def message_layout(scheme, loads=None):
    """``(sender, cumulative_load, machine_load)``: which machine sends each message, how much data
    it has computed on when the message leaves, and each machine's total load.  ``loads``
    overrides the load per message (paper 5's shuffling moves rows, and their loads).

    >>> import gradcode
    >>> code = gradcode.make_code("gc-partial", n=3, s=1, alpha=2)   # 2 messages per machine
    >>> sender, cum, machine_load = message_layout(code)
    >>> sender.tolist(), cum.round(3).tolist()    # naive parts leave first, then coded parts
    ([0, 1, 2, 0, 1, 2], [0.222, 0.222, 0.222, 0.444, 0.444, 0.444])
    >>> machine_load.round(3).tolist()
    [0.444, 0.444, 0.444]
    """
    sender = np.asarray(scheme.sender)
    loads = np.broadcast_to(np.asarray(scheme.load if loads is None else loads, float),
                            sender.shape)
    cum = np.zeros(sender.shape)
    done = np.zeros(int(sender.max()) + 1)
    for i in np.argsort(sender, kind="stable"):   # messages of one machine in index order
        done[sender[i]] += loads[i]
        cum[i] = done[sender[i]]
    return sender, cum, done


def start_models(scheme, delay, compute, rng) -> None:
    """Draw the models' per-run state; ValueError if a trace's or the speeds' worker count is not
    the scheme's number of machines.

    >>> import gradcode
    >>> from gradcode.stragglers import Compute, SlowActive, Trace
    >>> code = gradcode.make_code("isgc-cr", n=4, c=2)
    >>> rng = np.random.default_rng(0)
    >>> delay = SlowActive(p_slow=0.5, p_ss=1.0, p_as=0.0, delay=2.0)   # slow ones always late
    >>> start_models(code, delay, Compute(1.0), rng)   # draws which workers are slow this run
    >>> delay.sample(rng, 0, np.full(4, 0.5)).tolist()
    [0.0, 2.0, 2.0, 2.0]
    >>> start_models(code, Trace(np.ones((5, 3))), Compute(1.0), np.random.default_rng(0))
    Traceback (most recent call last):
    ...
    ValueError: delays: the trace has 3 workers, the code 4
    """
    for model in (delay, compute):
        model.start(rng, int(scheme.n_machines))


def arrival_times(layout, delay, compute, rng, rounds: int, start: int = 0,
                  slices: int = 1) -> np.ndarray:
    """``(rounds, n_messages)`` arrival time of every message in rounds ``start, start + 1, ...``,
    in seconds after the round starts: the delay, the compute time of the load the message
    covers, and its send time, ``compute.send_s / slices`` (``scheme.slices``: a message of
    ``1 / m`` of the gradient).

    >>> import gradcode
    >>> from gradcode.stragglers import Compute, Constant
    >>> code = gradcode.make_code("isgc-cr", n=4, c=2)          # load 0.5 per worker
    >>> t = arrival_times(message_layout(code), Constant(1.0), Compute(2.0),
    ...                   np.random.default_rng(0), rounds=3)
    >>> t.shape, t[0].tolist()                    # 1 s delay + 0.5 x 2 s of compute
    ((3, 4), [2.0, 2.0, 2.0, 2.0])
    >>> arrival_times(message_layout(code), Constant(1.0), Compute(2.0, send_s=0.5),
    ...               np.random.default_rng(0), rounds=1, slices=2)[0].tolist()   # + 0.5 / 2
    [2.25, 2.25, 2.25, 2.25]
    """
    sender, cum, machine_load = layout
    d = delay.sample_many(rng, rounds, machine_load, start)
    rate = compute.seconds_per_load / (np.asarray(compute.speeds, float)
                                       if compute.speeds is not None else 1.0)
    rate = np.broadcast_to(rate, machine_load.shape)
    offset = cum * rate[sender] + compute.send_s / slices
    if sender.size == d.shape[1] and np.array_equal(sender, np.arange(sender.size)):
        return d + offset                       # one message per machine: no gather
    return d[:, sender] + offset
