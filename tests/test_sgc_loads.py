"""Normalized loads of the sequential schemes (paper 4, eq. 1, Sec. 3) and the lower bounds of
Theorems F.1 / F.2: Tables 1 and 3 (n = 256) to the printed digits, Remark 3.3, Remark F.1,
Example F.1, the O(1/W) gap, and parameter validation."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gradcode
from gradcode.analysis import load_lower_bound_f1, load_lower_bound_f2, sgc_load

# (scheme, params, printed load): Table 1 (3 digits) and Table 3 (6 digits), n = 256
TABLES = [
    ("m-sgc", dict(B=1, W=2, lam=27), "0.008"),
    ("sr-sgc", dict(B=2, W=3, lam=23), "0.051"),
    ("gc-seq", dict(s=15), "0.062"),
    ("gc-seq", dict(s=0), "0.004"),                      # "No Coding"
    ("m-sgc", dict(B=1, W=2, lam=24), "0.007512"),
    ("m-sgc", dict(B=1, W=2, lam=27), "0.007543"),
    ("sr-sgc", dict(B=2, W=3, lam=15), "0.035156"),
    ("sr-sgc", dict(B=2, W=3, lam=20), "0.042969"),
    ("sr-sgc", dict(B=2, W=3, lam=22), "0.046875"),
    ("sr-sgc", dict(B=2, W=3, lam=23), "0.050781"),
    ("gc-seq", dict(s=9), "0.039062"),
    ("gc-seq", dict(s=10), "0.042969"),
    ("gc-seq", dict(s=11), "0.046875"),
    ("gc-seq", dict(s=14), "0.058594"),
    ("gc-seq", dict(s=15), "0.062500"),
]


@pytest.mark.parametrize("name,params,printed", TABLES, ids=str)
def test_tables_1_and_3(name, params, printed):
    digits = len(printed.split(".")[1])
    scheme = gradcode.make_code(name, n=256, **params)
    assert f"{scheme.load.max():.{digits}f}" == printed
    assert f"{sgc_load(name, 256, **params):.{digits}f}" == printed
    if name == "sr-sgc":                                  # Table 1: s = 12 for (2, 3, 23)
        assert scheme.params["s"] == -(-2 * params["lam"] // 4)


def test_table_1_sr_sgc_has_s_12():
    assert gradcode.make_code("sr-sgc", n=256, B=2, W=3, lam=23).params["s"] == 12


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 300), st.integers(1, 6), st.integers(0, 8), st.data())
def test_loads_against_the_bounds(n, B, extra, data):
    """Every scheme tolerating the bursty model is above Theorem F.1's bound; M-SGC's load is at
    most 2/n (Remark 3.3) and never above SR-SGC's for the same (B, W, λ)."""
    W = B + 1 + extra
    lam = data.draw(st.integers(1, n))
    m = sgc_load("m-sgc", n, B, W, lam)
    bound = load_lower_bound_f1(n, B, W, lam)
    assert bound <= m + 1e-15
    assert m <= 2 / n + 1e-15
    # the arbitrary-model bound with N = B, W' = W + B - 1, λ' = λ (Prop. 3.2) holds as well
    assert load_lower_bound_f2(n, B, W + B - 1, lam) <= m + 1e-15
    if (W - 1) % B == 0 and -(-B * lam // (W - 1 + B)) < n:
        sr = sgc_load("sr-sgc", n, B, W, lam)
        assert bound <= sr + 1e-15 and m <= sr + 1e-15
    if lam < n:                                            # (n, λ)-GC also tolerates it
        assert bound <= sgc_load("gc-seq", n, s=lam) + 1e-15


@pytest.mark.parametrize("n,B,W", [(4, 1, 2), (20, 3, 5), (256, 2, 7), (7, 5, 6)])
def test_remark_f1_optimality(n, B, W):
    """λ = n - 1 or n: M-SGC meets Theorems F.1 and F.2 (N = B, W' = W + B - 1)."""
    for lam in (n - 1, n):
        m = sgc_load("m-sgc", n, B, W, lam)
        assert m == pytest.approx(load_lower_bound_f1(n, B, W, lam), rel=1e-12)
        assert m == pytest.approx(load_lower_bound_f2(n, B, W + B - 1, lam), rel=1e-12)
    assert sgc_load("m-sgc", n, B, W, n - 2) > load_lower_bound_f1(n, B, W, n - 2)


def test_example_f1_and_figure_11():
    """Example F.1 (n=4, B=1, W=2, λ=4): SR-SGC 3/4, M-SGC 1/2 = the bound.  Fig. 11 (n=20,
    B=3, λ=4): the M-SGC gap to the bound shrinks like 1/W."""
    assert sgc_load("sr-sgc", 4, 1, 2, 4) == 0.75
    assert sgc_load("m-sgc", 4, 1, 2, 4) == 0.5 == load_lower_bound_f1(4, 1, 2, 4)
    W = np.arange(4, 400)
    gap = sgc_load("m-sgc", 20, 3, W, 4) - load_lower_bound_f1(20, 3, W, 4)
    assert (gap > 0).all() and (np.diff(gap) < 0).all()
    assert (W * gap).max() < 2 * (W * gap)[-1]              # W * gap levels off: O(1/W)


def test_bounds_at_b_equals_w():
    assert load_lower_bound_f1(10, 3, 3, 4) == pytest.approx(1 / 6)
    assert load_lower_bound_f2(10, 3, 3, 4) == pytest.approx(1 / 6)
    assert load_lower_bound_f1(10, 3, 3, 10) == np.inf
    assert load_lower_bound_f2(10, 0, 5, 7) == pytest.approx(1 / 10)      # no stragglers


def test_vectorised():
    lam = np.arange(0, 257)
    loads = sgc_load("m-sgc", 256, 1, 2, lam)
    assert loads.shape == (257,) and loads[27] == sgc_load("m-sgc", 256, 1, 2, 27)
    assert isinstance(sgc_load("m-sgc", 256, 1, 2, 27), float)


@pytest.mark.parametrize("call,word", [
    (lambda: sgc_load("nope", 8, 1, 2, 3), "scheme"),
    (lambda: sgc_load("gc-seq", 8), "s"),
    (lambda: sgc_load("gc-seq", 8, s=8), "s"),
    (lambda: sgc_load("sr-sgc", 8, 2, 4, 3), "W"),
    (lambda: sgc_load("sr-sgc", 8, 1, 2, 0), "lam"),
    (lambda: sgc_load("m-sgc", 8, 2, 2, 3), "W"),
    (lambda: sgc_load("m-sgc", 8, 1, 2, 9), "lam"),
    (lambda: sgc_load("m-sgc", 8, 1, 2), "B, W, lam"),
    (lambda: sgc_load("m-sgc", 8, 1.5, 2, 3), "B"),
    (lambda: load_lower_bound_f1(8, 3, 2, 1), "B"),
    (lambda: load_lower_bound_f1(8, 1, 2, 9), "lam"),
    (lambda: load_lower_bound_f2(8, 4, 3, 1), "N"),
    (lambda: load_lower_bound_f2(0, 1, 3, 0), "n"),
])
def test_invalid_parameters(call, word):
    with pytest.raises(ValueError, match=rf"^{word}:"):
        call()


def test_sgc_loads_experiment_claims(quick):
    """``sgc-loads`` (App. F, Fig. 11): the curves' rows and the ledger rows, every one checked
    exactly on closed forms at the figure's n = 20, B = 3, λ = 4."""
    import csv
    from gradcode.experiments._ledger import VERDICTS

    folder = quick("sgc-loads")
    with (folder / "results.csv").open() as fh:
        loads = [r for r in csv.DictReader(fh) if r["setting"] == "Fig. 11"]
    assert {(r["n"], r["B"], r["lam"]) for r in loads} == {("20", "3", "4")}
    for r in loads:
        assert float(r["lower_bound_f1"]) <= float(r["m-sgc"]) + 1e-12
        if r["sr-sgc"] != "nan":
            assert float(r["m-sgc"]) < float(r["sr-sgc"])
    with (folder / "claims.csv").open() as fh:
        claims = list(csv.DictReader(fh))
    assert len(claims) == 3 and all(c["paper"] == "4" and c["verdict"] in VERDICTS
                                    for c in claims)
    # closed forms at the paper's own parameters: every claim holds exactly
    assert [c["verdict"] for c in claims] == ["reproduced"] * len(claims)
    assert [c["kind"] for c in claims] == ["figure", "figure", "statement"]
    assert {c["setting"] for c in claims} == {"paper's"}
    where = " ".join(c["source"] for c in claims)
    assert "Fig. 11" in where and "App. F" in where
    # Remarks F.1, 3.1, 3.3 and Example F.1 are rows of ``theorems`` (theorems.sgc_*), not here
    for w in ("Remark F.1", "Remark 3.1", "Example F.1", "Remark 3.3"):
        assert w not in where
    summary = (folder / "summary.md").read_text()
    assert "**Claims**" in summary and "Fig. 11 caption" in summary
    # the M-SGC row's rule can fail: the ratio must fall strictly and never cross the bound
    rel = [float(r["m-sgc"]) / float(r["lower_bound_f1"]) for r in loads]
    assert min(rel) >= 1 and all(b < a for a, b in zip(rel, rel[1:]))


@pytest.mark.parametrize("n", [4, 4.0, np.int64(4), np.array([4])])
def test_lower_bounds_are_inf_when_every_worker_may_straggle_for_any_number_type(n):
    """B = W (N = W') with lambda = n: the documented inf, for Python ints as for arrays
    (plain ints divided by zero in the unused branch)."""
    assert np.all(np.isinf(load_lower_bound_f1(n, 1, 1, 4)))
    assert np.all(np.isinf(load_lower_bound_f2(n, 2, 2, 4)))
