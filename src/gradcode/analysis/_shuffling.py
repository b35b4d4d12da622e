"""Paper 5 (Johri, Yardi, Bodas): heterogeneous stragglers, shuffling, expected optimal error.

Model (paper 5, Sec. II "Heterogeneous straggler model"): each of the ``n`` workers is in the
slow class with probability ``p_slow`` (the paper's ``p^``), independently, and keeps its class
for the whole run; in every iteration a slow worker straggles with probability ``p_ss`` and an
active one with ``p_as``, independently of everything else.  Sec. IV conditions on the number
``m`` of slow workers (the "(n, m)-heterogeneous model"); Remark 2 averages over
``m ~ Binomial(n, p_slow)``.

Orientation: the paper's ``B`` has data-sets as rows and workers as columns; gradcode's
``code.B`` is ``(n_workers, n_partitions)``, so the paper's columns are our rows and its
non-straggler matrix ``A`` is ``B[R].T`` for the set ``R`` of received rows.  The paper's ``s``
is the *replication* (an ``(s-1)``-tolerant scheme): its FRC/CRC with ``s`` are
``make_code("gc-fr", n, s=s-1)`` and the circulant ``make_code("isgc-cr", n, c=s)``.

Shuffling (Sec. III, Remark 1): in iteration ``l`` worker ``j`` computes row ``perm[j]`` of
``B`` (``shuffle_permutation``), a uniformly random permutation or the cyclic shift by ``l``.
The optimal decoding error of a received set ``R`` is eq. (2),
``err(R) = min_w ||w @ B_R - 1||^2`` (``n_partitions`` when ``R`` is empty).

``expected_error`` is the expectation of ``err`` over one iteration:

* ``shuffle=True`` and ``slow`` given (``m = len(slow)``): the (n, m) model of Thm 1 / Thm 2,
  ``E = sum_r P_r E_r`` with ``E_r`` the mean error over the ``C(n, r)`` received sets of
  size ``r`` (random shuffling makes them equally likely).
* ``slow=None``: averaged over the classes, ``sum_m P_m E(n, m)`` (Remark 2 with the sum over
  ``m`` that the printed remark drops).  Every worker then straggles independently with
  ``q = p_slow p_ss + (1 - p_slow) p_as`` *whether or not* rows are shuffled, so for a single
  iteration this equals the no-shuffle average: shuffling changes which data are missed over
  time (Prop. 1), not the one-iteration error averaged over classes.
* ``shuffle=False`` and ``slow`` given: worker ``j`` computes row ``j`` and straggles with
  ``p_ss`` if ``j in slow`` else ``p_as``.  ``shuffle="cyclic"``: the time average over the
  ``n`` cyclic shifts (Remark 1), i.e. over iterations when ``n`` divides ``L``.

Paper errata (what this module implements instead):

* Thm 1's ``P_r`` as printed uses ``C(m, min(i, m))`` with exponents in ``i`` and sums
  ``i = 0..r``; for ``i > m`` it adds terms with negative powers of ``p_ss``.  For ``n = 8``,
  ``p_ss = 0.8``, ``p_as = 0.01`` it sums over ``r`` to 1.002532 (``m = 0``), 1.000506
  (``m = 1``), ...  We use ``P_r = sum_{i=max(0,r-n+m)}^{min(r,m)} C(m,i) C(n-m,r-i)
  pbar_ss^i p_ss^(m-i) pbar_as^(r-i) p_as^(n-m-r+i)`` (``non_straggler_pmf``).
* Remark 2 as printed reads ``E_err(n, s) = E_err(n, m, s) P_m``; the sum over ``m`` is missing.
* Thm 1 sums ``r = 0..n-s`` although the proof says the error vanishes for ``r >= n-s``; the
  ``r = n-s`` term is not zero for FR and the formula rightly keeps it.  We sum over all ``r``.
* Thm 2's proof needs ``B`` circulant; Tandon's CR (``gc-cr``, random coefficients) is not, so
  its expected error is computed by enumeration, not Thm 2.
* Sec. V quotes ``E_err(FRC) = 1.976`` and ``E_err(CRC) = 0.5173`` for ``n = 8, s = 2,
  p^ = 0.3, p_ss = 0.8, p_as = 0.01``.  The model gives (``q = 0.247``):
  FRC ``gc-fr(8, s=1)``: 0.488072 (``= n q^2``); circulant CRC ``isgc-cr(8, c=2)``: 0.624412;
  Tandon CRC ``gc-cr(8, s=1)`` (random coefficients, not circulant; by enumeration): about
  0.9, depending on the coefficients (0.915, 0.887, 0.972 for seeds 0, 1, 2).
  Per m (Thm 1 / Thm 2, m = 0..8): FRC 0.0008, 0.0166, 0.2107, 0.5831, 1.1339, 1.8629,
  2.7703, 3.8560, 5.1200; circulant CRC 0.0013, 0.0273, 0.3401, 0.7861, 1.3675, 2.0874,
  2.9537, 3.9795, 5.1900.
  The printed ``P_r`` moves these by < 1e-6, so it does not explain the quoted numbers, and
  neither matches any single ``E(n, m)``; with the model, CRC is *worse* than FRC here.
"""

from __future__ import annotations

from math import comb

import numpy as np
from scipy.stats import binom, poisson_binom

from ..codes import Code, check_int, check_rng, optimal_weights

#: largest ``n_workers`` for ``method="exact"`` (2^n received sets) and for Thm 2 (cycle classes)
EXACT_MAX_N = 20
#: largest ``n_workers`` for which ``method="auto"`` enumerates instead of sampling
AUTO_EXACT_N = 14
_CHUNK = 4096


# --------------------------------------------------------------------------- model & shuffling
def _check_prob(name: str, value) -> float:
    try:
        p = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a probability in [0, 1], got {value!r}") from None
    if isinstance(value, bool) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{name}: expected a probability in [0, 1], got {value!r}")
    return p




def shuffle_permutation(n: int, iteration: int, kind: str = "random",
                        rng: np.random.Generator | None = None) -> np.ndarray:
    """``perm`` with ``perm[j]`` = the row of ``B`` that worker ``j`` computes in ``iteration``.

    ``kind="random"``: a uniformly random permutation drawn from ``rng`` (paper 5, Sec. III);
    ``kind="cyclic"``: the pre-decided shift ``perm[j] = (j + iteration) mod n`` (Remark 1).

    >>> from gradcode.analysis import shuffle_permutation
    >>> shuffle_permutation(5, 2, kind="cyclic").tolist()
    [2, 3, 4, 0, 1]
    >>> shuffle_permutation(5, 0, rng=np.random.default_rng(0)).tolist()
    [2, 4, 3, 0, 1]
    """
    n = check_int("n", n, minimum=1)
    iteration = check_int("iteration", iteration, minimum=0)
    if kind == "cyclic":
        return (np.arange(n) + iteration) % n
    if kind != "random":
        raise ValueError(f"kind: expected 'random' or 'cyclic', got {kind!r}")
    return check_rng(rng).permutation(n)


def sample_slow(n: int, p_slow: float, rng: np.random.Generator) -> np.ndarray:
    """Boolean class mask (``True`` = slow): each worker slow w.p. ``p_slow`` (Sec. II); draw
    it once per run, the classes are kept for all iterations.

    >>> from gradcode.analysis import sample_slow
    >>> sample_slow(8, 0.3, np.random.default_rng(0)).tolist()
    [False, True, True, True, False, False, False, False]
    """
    n = check_int("n", n, minimum=1)
    p = _check_prob("p_slow", p_slow)
    return check_rng(rng).random(n) < p


def sample_stragglers(slow, p_ss: float, p_as: float, rng: np.random.Generator) -> np.ndarray:
    """Boolean straggler mask of one iteration (Sec. II): ``slow`` is a boolean class mask of
    any shape; each worker straggles w.p. ``p_ss`` if slow, else ``p_as``, independently.

    >>> from gradcode.analysis import sample_stragglers
    >>> slow = np.array([False, True, True, True, False, False, False, False])
    >>> rounds = sample_stragglers(np.tile(slow, (1000, 1)), 0.8, 0.01, np.random.default_rng(0))
    >>> rounds.shape, rounds.mean(axis=0).round(1).tolist()
    ((1000, 8), [0.0, 0.8, 0.8, 0.8, 0.0, 0.0, 0.0, 0.0])
    """
    slow = np.asarray(slow)
    if slow.dtype != bool:
        raise ValueError(f"slow: expected a boolean class mask, got dtype {slow.dtype}")
    p = np.where(slow, _check_prob("p_ss", p_ss), _check_prob("p_as", p_as))
    return check_rng(rng).random(slow.shape) < p


def _binom_pmf(N: int, p: float) -> np.ndarray:
    return binom.pmf(np.arange(N + 1), N, p)


def non_straggler_pmf(n: int, m: int, p_ss: float, p_as: float) -> np.ndarray:
    """``P_r``, ``r = 0..n``: probability of ``r`` non-stragglers when ``m`` of the ``n`` workers
    are slow (paper 5, Thm 1, with the range of ``i`` corrected -- see the module docstring):
    the convolution of ``Binomial(m, 1 - p_ss)`` and ``Binomial(n - m, 1 - p_as)``.

    >>> from gradcode.analysis import non_straggler_pmf
    >>> P = non_straggler_pmf(4, 1, p_ss=0.8, p_as=0.1)
    >>> P.round(4).tolist(), round(float(P.sum()), 12)
    ([0.0008, 0.0218, 0.1998, 0.6318, 0.1458], 1.0)
    """
    n = check_int("n", n, minimum=1)
    m = check_int("m", m, minimum=0, maximum=n)
    p_ss, p_as = _check_prob("p_ss", p_ss), _check_prob("p_as", p_as)
    return np.convolve(_binom_pmf(m, 1.0 - p_ss), _binom_pmf(n - m, 1.0 - p_as))


# --------------------------------------------------------------------------- structure of B
def _fr_groups(B):
    """FR structure of the sparse ``B``: ``[(rows, b_q)]`` if every row is constant on its
    support, rows whose supports meet share the same support (a group of ``a_q = len(rows)``
    workers holding ``b_q`` partitions), and the supports cover every partition once.
    ``None`` otherwise."""
    members: dict[bytes, list[int]] = {}
    for i in range(B.shape[0]):
        lo, hi = B.indptr[i], B.indptr[i + 1]
        vals = B.data[lo:hi]
        if vals.size == 0 or not np.all(vals == vals[0]):
            return None
        members.setdefault(B.indices[lo:hi].tobytes(), []).append(i)
    cover = np.zeros(B.shape[1], int)
    groups = []
    for key, rows in members.items():
        cols = np.frombuffer(key, B.indices.dtype)
        cover[cols] += 1
        groups.append((np.array(rows), cols.size))
    return groups if np.all(cover == 1) else None


def _is_circulant(B: np.ndarray) -> bool:
    """``B`` square with row ``i`` the cyclic shift of row 0 by ``i`` (either direction):
    the structure the proof of Thm 2 uses (rows here are the paper's columns)."""
    n, k = B.shape
    if n != k:
        return False
    atol = 1e-12 * max(1.0, float(np.abs(B).max()))
    return any(all(np.allclose(B[i], np.roll(B[0], d * i), rtol=0, atol=atol) for i in range(n))
               for d in (1, -1))


def _bits(masks: np.ndarray, n: int) -> np.ndarray:
    return ((masks[:, None] >> np.arange(n)) & 1).astype(bool)


def _cycle_classes(n: int):
    """Cycle representatives ``v`` of ``F_2^n`` (as bitmasks, the smallest of each class), with
    their orders ``e`` and weights ``r`` (paper 5, Sec. IV-B; Lemma 1 counts them)."""
    masks = np.arange(1 << n, dtype=np.int64)
    full = (1 << n) - 1
    rot = lambda x, t: ((x << t) | (x >> (n - t))) & full  # noqa: E731
    canon = masks.copy()
    for t in range(1, n):
        np.minimum(canon, rot(masks, t), out=canon)
    reps = masks[canon == masks]
    order = np.full(reps.size, n)
    for d in sorted(d for d in range(1, n) if n % d == 0)[::-1]:
        order[rot(reps, d) == reps] = d
    return reps, order, _bits(reps, n).sum(axis=1)


# --------------------------------------------------------------------------- errors
def _errors(B: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Optimal decoding error (eq. 2) of each received-row bitmask, by batched SVD:
    ``err = k - ||projection of 1 onto the row space of B_R||^2``."""
    n, k = B.shape
    out = np.empty(masks.size)
    bits = _bits(masks, n)
    pop = bits.sum(axis=1)
    for r in np.unique(pop):
        where = np.flatnonzero(pop == r)
        if r == 0:
            out[where] = k
            continue
        for lo in range(0, where.size, _CHUNK):
            sel = where[lo:lo + _CHUNK]
            rows = np.nonzero(bits[sel])[1].reshape(sel.size, r)
            _, S, Vh = np.linalg.svd(B[rows], full_matrices=False)
            keep = S > S[:, :1] * max(r, k) * np.finfo(float).eps
            out[sel] = np.maximum(k - np.sum(keep * Vh.sum(axis=2) ** 2, axis=1), 0.0)
    return out


def _mean_error_by_size(code: Code, groups, circulant: bool) -> np.ndarray:
    """``E_r``, ``r = 0..n``: the mean error over the ``C(n, r)`` received sets of size ``r``,
    by Thm 1 (FR: ``sum_q b_q C(n - a_q, r) / C(n, r)``, [8, Thm 6] as corrected in paper 5)
    or Thm 2 (circulant: ``sum_i e_i err(A_{v_i}) / C(n, r)`` over cycle representatives)."""
    n = code.n_workers
    r = np.arange(n + 1)
    if groups is not None:
        b_by_a: dict[int, int] = {}
        for rows, b in groups:
            b_by_a[rows.size] = b_by_a.get(rows.size, 0) + b
        out = np.zeros(n + 1)
        for a, b in b_by_a.items():   # C(n - a, r) / C(n, r) = prod_i (n - r - i) / (n - i)
            i = np.arange(a)
            out += b * np.prod(np.clip(n - r[:, None] - i, 0, None) / (n - i), axis=1)
        return out
    reps, order, weight = _cycle_classes(n)
    total = np.array([comb(n, int(k)) for k in r], float)
    return np.bincount(weight, order * _errors(np.asarray(code.B), reps), n + 1) / total


def _poisson_binomial(p: np.ndarray) -> np.ndarray:
    """Law of the number of non-stragglers when worker ``j`` straggles w.p. ``p[j]``."""
    q = 1.0 - np.asarray(p, float)
    return poisson_binom.pmf(np.arange(q.size + 1), q)


# --------------------------------------------------------------------------- expected error
def expected_error(code: Code, p_slow: float | None, p_ss: float, p_as: float,
                   shuffle: bool | str = True, slow=None, method: str = "auto",
                   rng: np.random.Generator | None = None, samples: int = 20_000) -> float:
    """Expected optimal decoding error ``E ||w @ B - 1||^2`` of one iteration (paper 5, eq. 2)
    under the heterogeneous straggler model; see the module docstring for the cases.

    ``p_slow``: probability a worker is slow (unused, may be None, when ``slow`` is given);
    ``slow``: worker indices (or a boolean mask) of the slow class; ``shuffle``: ``True`` /
    ``"random"``, ``"cyclic"`` or ``False``.  ``method``: ``"closed"`` (Thm 1 for FR-structured
    ``B``, also without shuffling by Prop. 1; Thm 2 for circulant ``B`` when all received sets
    of a size are equally likely), ``"exact"`` (enumeration of the ``2^n`` received sets,
    ``n <= 20``), ``"mc"`` (``samples`` draws of the model from ``rng``) or ``"auto"`` (closed,
    else exact for ``n <= 14``, else mc).

    Paper 5, Sec. V (``n = 8``, replication 2, ``p^ = 0.3``, ``p_ss = 0.8``, ``p_as = 0.01``):
    FRC and the circulant CRC (the printed 1.976 and 0.5173 are not what the model gives; see
    the module docstring).

    >>> from gradcode import make_code
    >>> from gradcode.analysis import expected_error
    >>> round(expected_error(make_code("gc-fr", n=8, s=1), 0.3, 0.8, 0.01), 6)
    0.488072
    >>> round(expected_error(make_code("isgc-cr", n=8, c=2), 0.3, 0.8, 0.01), 6)
    0.624412
    """
    if not isinstance(code, Code):
        raise ValueError(f"code: expected a gradcode Code, got {type(code).__name__}")
    n = code.n_workers
    p_ss, p_as = _check_prob("p_ss", p_ss), _check_prob("p_as", p_as)
    if shuffle is True or shuffle == "random":
        kind = "random"
    elif shuffle is False or shuffle is None or shuffle == "cyclic":
        kind = "cyclic" if shuffle == "cyclic" else "none"
    else:
        raise ValueError(f"shuffle: expected True, False, 'random' or 'cyclic', got {shuffle!r}")
    if method not in ("auto", "closed", "exact", "mc"):
        raise ValueError(f"method: expected one of 'auto', 'closed', 'exact', 'mc', got {method!r}")
    samples = check_int("samples", samples, minimum=1)
    if slow is None:
        if p_slow is None:
            raise ValueError("p_slow: expected a probability in [0, 1] when slow is None, got None")
        p_slow = _check_prob("p_slow", p_slow)
        q = p_slow * p_ss + (1.0 - p_slow) * p_as
        p_worker, slow_mask = np.full(n, q), None
    else:
        if p_slow is not None:
            _check_prob("p_slow", p_slow)
        slow_mask = _slow_mask(slow, n)
        p_worker = np.where(slow_mask, p_ss, p_as)

    exchangeable = kind == "random" or np.all(p_worker == p_worker[0])
    groups, circulant = None, False
    if method in ("auto", "closed"):
        groups = _fr_groups(code.B_sparse)
        circulant = (groups is None and exchangeable and n <= EXACT_MAX_N
                     and _is_circulant(np.asarray(code.B)))
        if method == "closed" and groups is None and not circulant:
            raise ValueError("method: 'closed' needs an FR-structured B (Thm 1) or a circulant B "
                             f"(Thm 2, n <= {EXACT_MAX_N}, exchangeable stragglers); "
                             f"{code!r} gives neither")
        if groups is not None or circulant:
            return _closed(code, groups, circulant, kind, exchangeable, p_slow, p_ss, p_as,
                           p_worker, slow_mask)
        method = "exact" if n <= AUTO_EXACT_N else "mc"
    if method == "exact":
        if n > EXACT_MAX_N:
            raise ValueError(f"method: 'exact' enumerates 2^n received sets and needs n_workers "
                             f"<= {EXACT_MAX_N}, got {n}")
        return _exact(code, kind, p_worker)
    return _monte_carlo(code, kind, p_slow, p_ss, p_as, slow_mask, check_rng(rng), samples)


def _slow_mask(slow, n: int) -> np.ndarray:
    arr = np.asarray(slow)
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise ValueError(f"slow: expected a boolean mask of length {n}, got shape {arr.shape}")
        return arr.copy()
    arr = arr.ravel()
    if arr.size and (not np.issubdtype(arr.dtype, np.number)
                     or not np.all(np.equal(np.mod(arr, 1), 0))):
        raise ValueError(f"slow: expected integer worker indices, got {arr.tolist()}")
    arr = arr.astype(int)
    bad = arr[(arr < 0) | (arr >= n)]
    if bad.size:
        raise ValueError(f"slow: worker indices must be in [0, {n - 1}], got {bad.tolist()}")
    mask = np.zeros(n, bool)
    mask[arr] = True
    return mask


def _closed(code, groups, circulant, kind, exchangeable, p_slow, p_ss, p_as, p_worker, slow_mask):
    n = code.n_workers
    if exchangeable:
        if slow_mask is not None and kind == "random":   # the (n, m) model of Thm 1 / Thm 2
            P_r = non_straggler_pmf(n, int(slow_mask.sum()), p_ss, p_as)
        else:   # iid stragglers w.p. q: Remark 2, sum_m P_m P_r(m) = Binomial(n, 1 - q)(r)
            P_r = _binom_pmf(n, 1.0 - p_worker[0])
        return float(P_r @ _mean_error_by_size(code, groups, circulant))
    # FR without random shuffling: a group's b_q partitions are lost iff all its rows
    # straggle, with probability prod p_ss^k p_as^(a_q - k) (Prop. 1)
    shifts = range(n) if kind == "cyclic" else [0]
    total = 0.0
    for t in shifts:
        p_row = np.roll(p_worker, t)   # row i is computed by worker (i - t) mod n
        total += sum(b * float(np.prod(p_row[rows])) for rows, b in groups)
    return total / len(shifts)


def _exact(code, kind, p_worker):
    """Enumeration of all received-row sets ``R`` weighted by their probability."""
    n = code.n_workers
    masks = np.arange(1 << n, dtype=np.int64)
    err = _errors(np.asarray(code.B), masks)
    if kind == "random":   # R uniform given |R|; |R| Poisson-binomial over the workers
        pop = _bits(masks, n).sum(axis=1)
        P_r = _poisson_binomial(p_worker)
        sizes = np.array([comb(n, r) for r in range(n + 1)], float)
        return float(np.sum(P_r[pop] / sizes[pop] * err))
    shifts = range(n) if kind == "cyclic" else [0]
    total = 0.0
    for t in shifts:
        p_row = np.roll(p_worker, t)
        w = np.ones(1)
        for j in range(n):     # bit j of the mask: row j received
            w = np.concatenate([w * p_row[j], w * (1.0 - p_row[j])])
        total += float(w @ err)
    return total / len(shifts)


def _monte_carlo(code, kind, p_slow, p_ss, p_as, slow_mask, rng, samples):
    """Simulates the model: classes, stragglers and permutation drawn afresh per sample."""
    n = code.n_workers
    if slow_mask is None:
        slow = rng.random((samples, n)) < p_slow
    else:
        slow = np.broadcast_to(slow_mask, (samples, n))
    straggles = sample_stragglers(slow, p_ss, p_as, rng)
    if kind == "random":
        perm = rng.permuted(np.tile(np.arange(n), (samples, 1)), axis=1)
    elif kind == "cyclic":
        perm = (np.arange(n) + (np.arange(samples) % n)[:, None]) % n
    else:
        perm = np.broadcast_to(np.arange(n), (samples, n))
    received = np.zeros((samples, n), bool)
    np.put_along_axis(received, perm, ~straggles, axis=1)
    patterns, counts = np.unique(received, axis=0, return_counts=True)
    B = code.B_sparse
    errs = np.empty(len(patterns))
    for i, pattern in enumerate(patterns):
        w = optimal_weights(B, np.flatnonzero(pattern))
        errs[i] = float(np.sum((B.T @ w - 1.0) ** 2))
    return float(errs @ counts / samples)
