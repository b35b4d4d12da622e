"""Paper 4 in the claims ledger, part B: ``sgc-trace-stats`` (Fig. 1, Fig. 16),
``sgc-switching`` (Fig. 2(a), Fig. 18) and ``sgc-decode-time`` (Table 4), in quick form, on the
real Lambda traces where they are and on the synthetic stand-in (an empty ``--traces`` folder)."""

import csv

import numpy as np
import pytest

from gradcode import make_code
from gradcode.experiments import reproduce
from gradcode.experiments._ledger import COLUMNS, VERDICTS
from gradcode.experiments.sgc_decode import D_CNN, _cnn_parameters, _combine
from gradcode.experiments.sgc_switching import MAX_DELAY, PAPER_SEARCH_S, job_times
from gradcode.experiments.sgc_traces import burst_lengths, round_cdf
from gradcode.sim import estimate_runtime
from gradcode.stragglers import fit_load_slope, load_trace, traces_dir
from _results import quick_output, read_csv as _read

TRACES = traces_dir()
real_only = pytest.mark.skipif(TRACES is None or not any(TRACES.glob("canada-w256-r30-load*")),
                               reason="the Lambda traces (../shared/traces) are not here")


def _synthetic(name, tmp_path_factory):
    """The quick run with an empty --traces folder: the synthetic fallback."""
    out = tmp_path_factory.mktemp(name)
    (out / "no-traces").mkdir()
    return quick_output(reproduce(name, quick=True, out_root=out / "out", progress=False,
                            traces=out / "no-traces"))


@pytest.fixture(scope="module")
def stats(quick):
    return quick_output(quick("sgc-trace-stats"))


@pytest.fixture(scope="module")
def stats_synth(tmp_path_factory):
    return _synthetic("sgc-trace-stats", tmp_path_factory)


@pytest.fixture(scope="module")
def switch(quick):
    return quick_output(quick("sgc-switching"))


@pytest.fixture(scope="module")
def switch_synth(tmp_path_factory):
    return _synthetic("sgc-switching", tmp_path_factory)


@pytest.fixture(scope="module")
def decode(quick):
    return quick_output(quick("sgc-decode-time"))


def _check_ledger(folder, claims, extra=(), least=7):
    with (folder / "claims.csv").open() as fh:
        assert tuple(next(csv.reader(fh))) == COLUMNS
    assert len(claims) >= least and all(c["paper"] == "4" for c in claims)
    assert all(c["verdict"] in VERDICTS for c in claims)
    assert all(c["why"].strip() for c in claims if c["verdict"] != "reproduced")
    summary = (folder / "summary.md").read_text()
    assert "**Claims**" in summary
    assert all(c["claim"].replace("|", "\\|") in summary for c in claims)
    for f in ("results.csv", "plot.png", *extra):
        assert (folder / f).stat().st_size > 0


def _row(claims, *words):
    (r,) = [c for c in claims if all(w in c["claim"] for w in words)]
    return r


def _synthetic_says_so(claims, keep=(), least=4):
    """On the stand-in no trace-dependent row may claim anything: 'not attempted', saying so."""
    assert not any(c["verdict"] == "reproduced" and not any(k in c["claim"] for k in keep)
                   for c in claims)
    said = [c for c in claims if "no Lambda traces found" in c["why"]]
    assert len(said) >= least and all(c["verdict"] == "not attempted" for c in said)


# ----------------------------------------------------------------------------- Fig. 1, Fig. 16
def test_burst_lengths_by_hand():
    S = np.zeros((6, 3), bool)
    S[0:2, 0] = True                 # length 2, touches round 0 (censored)
    S[3, 0] = True                   # length 1
    S[2:5, 1] = True                 # length 3
    S[5, 2] = True                   # length 1, touches the last round (censored)
    L, cens = burst_lengths(S)
    assert sorted(zip(L.tolist(), cens.tolist())) == [(1, False), (1, True), (2, True),
                                                      (3, False)]
    assert burst_lengths(np.zeros((4, 2), bool))[0].size == 0


def test_round_cdf_is_a_cdf():
    D = np.random.default_rng(1).gamma(3.0, 0.2, (7, 50))
    grid = np.linspace(0, D.max(), 40)
    F, s = round_cdf(D, grid)
    assert np.all(np.diff(F) >= 0) and F[0] == 0 and F[-1] == 1 and np.all(s >= 0)


@real_only
def test_trace_stats_on_the_traces(stats):
    folder, rows, claims = stats
    _check_ledger(folder, claims, ("bursts.csv", "cdf.csv"))
    fig1 = [r for r in rows if r["table"] == "Fig. 1"]
    main = fig1[0]
    assert main["profile"] == "Lambda Canada (real)" and len(fig1) >= 2
    bursts = _read(folder / "bursts.csv")
    assert sum(int(b["count"]) for b in bursts) == int(main["bursts"])
    assert int(bursts[0]["count"]) / int(main["bursts"]) == pytest.approx(
        float(main["bursts_len1"]))
    cdf = _read(folder / "cdf.csv")
    assert np.all(np.diff([float(c["cdf_mean"]) for c in cdf]) >= 0)
    # Fig. 16: the line through the per-load means is the sample fit; its residuals sum to 0
    fit = [r for r in rows if r["table"] == "Fig. 16"]
    sweep = [(float(r["load"]), load_trace(p)) for r, p in
             zip(fit, sorted(TRACES.glob("canada-w256-r30-load*.csv")))]
    alpha, _ = fit_load_slope(sweep)
    assert float(fit[0]["alpha"]) == pytest.approx(alpha)
    assert float(fit[0]["r2_means"]) > 0.99
    assert sum(float(r["residual_s"]) for r in fit) == pytest.approx(0, abs=1e-9)
    # a larger mu never marks more stragglers
    mus = [r for r in rows if r["table"] == "mu sweep"]
    share = [float(r["rounds_with_stragglers"]) for r in mus]
    assert [float(r["mu"]) for r in mus] == sorted(float(r["mu"]) for r in mus)
    assert np.all(np.diff(share) <= 0) and share[0] == 1.0
    linear = _row(claims, "scales linearly")
    assert linear["verdict"] == "reproduced" and linear["kind"] == "direction"
    assert linear["setting"].startswith("stand-in: ")
    slope = _row(claims, "slope alpha")
    assert float(slope["ours"].split()[0]) == pytest.approx(2 * alpha, abs=1e-3)
    assert slope["paper_value"] == "2.201 s" and slope["source"].startswith("code: mamaj/")
    assert slope["verdict"] == ("reproduced" if abs(2 * alpha / 2.201 - 1) <= 0.05
                                else "not reproduced")
    # the shifted reference misses the measured stragglers per round: not the paper's estimate
    shift = [r for r in fit[1:] if float(r["stragglers_measured"]) > 0]
    off = max(abs(float(r["stragglers_shift_model"]) / float(r["stragglers_measured"]) - 1)
              for r in shift)
    assert off > 0.25 and _row(claims, "load-adjusted")["verdict"] == "not reproduced"
    every = _row(claims, "throughout the profile")
    assert every["verdict"] == ("reproduced" if share[2] == 1.0 else "not reproduced")
    assert _row(claims, "100 rounds, 16 MNIST")["verdict"] == "not attempted"
    assert _row(claims, "ResNet-18")["verdict"] == "not attempted"


def test_trace_stats_without_traces(stats_synth):
    folder, rows, claims = stats_synth
    _check_ledger(folder, claims, ("bursts.csv", "cdf.csv"))
    assert rows[0]["profile"] == "synthetic GE"
    _synthetic_says_so(claims)
    assert "Real Lambda traces not found" in (folder / "summary.md").read_text()


# ----------------------------------------------------------------------------- Fig. 2, Fig. 18
def _curves(folder):
    out = {}
    for c in _read(folder / "curves.csv"):
        out.setdefault((c["profile"], c["mode"], c["family"]), []).append(
            (int(c["job"]), float(c["completed_s"])))
    return out


def _check_curves(folder, rows):
    curves = _curves(folder)
    for key, pts in curves.items():
        jobs, t = zip(*pts)
        assert list(jobs) == list(range(1, len(jobs) + 1))
        assert np.all(np.diff(t) >= 0) and t[0] > 0            # completed jobs never go down
    for r in rows:
        assert int(r["jobs"]) == next(len(v) for k, v in curves.items() if k[0] == r["profile"])
        assert float(r["last_job_s"]) <= float(r["runtime_s"]) + 1e-9
    return curves


@real_only
def test_switching_on_the_trace(switch):
    folder, rows, claims = switch
    _check_ledger(folder, claims, ("curves.csv",), least=5)
    curves = _check_curves(folder, rows)
    label = "Lambda Canada (real)"
    D = load_trace(TRACES / "canada-w256-r30-load0_000.csv")
    sweep = [(float(p.stem.split("load")[1].replace("_", ".")), load_trace(p))
             for p in sorted(TRACES.glob("canada-w256-r30-load*.csv"))]
    alpha, _ = fit_load_slope(sweep)
    alpha *= 2                          # the paper's setting: the fit at 2048 samples x 4096/2048
    jobs = D.shape[0] - MAX_DELAY
    # no coding waits for the slowest worker of every round
    unc = np.cumsum((D + alpha / 256).max(axis=1)[:jobs])
    got = [t for _, t in curves[(label, "paper's Table 1 parameters", "uncoded")]]
    assert np.allclose(got, unc, rtol=0, atol=1e-5)
    paper = {r["family"]: r for r in rows if r["profile"] == label
             and r["mode"] == "paper's Table 1 parameters"}
    for fam, p in (("m-sgc", dict(B=1, W=2, lam=27)), ("gc-seq", dict(s=15))):
        e = estimate_runtime(make_code(fam, n=256, **p), D, jobs=jobs, mu=1.0, alpha=alpha)
        assert float(paper[fam]["runtime_s"]) == pytest.approx(e.runtime_s)
    # switching: the probe's jobs are the uncoded ones; the switch waits out the paper's search
    for r in (r for r in rows if r["profile"] == label and r["mode"].startswith("uncoded")):
        t_probe, r0 = int(r["t_probe"]), int(r["switch_round"])
        pts = [t for _, t in curves[(label, "switching", r["family"])]]
        assert np.allclose(pts[:r0], unc[:r0], rtol=0, atol=1e-5)
        u = (D + alpha / 256).max(axis=1)
        assert u[t_probe:r0].sum() >= PAPER_SEARCH_S[r["family"]] > u[t_probe:r0 - 1].sum()
    # Fig. 2(a)'s ranking and "coding beats no coding" are sgc-table1's rows (one claim, one row)
    assert not any("M-SGC finishes first" in c["claim"] or "no coding (no coding" in c["claim"]
                   for c in claims)
    gain = _row(claims, "uncoded for T_probe rounds")
    sw = {r["family"]: float(r["runtime_s"]) for r in rows if r["profile"] == label
          and r["mode"].startswith("uncoded")}
    unc_t = float(paper["uncoded"]["runtime_s"])
    assert gain["verdict"] == ("reproduced" if sw["m-sgc"] < min(sw["gc-seq"], unc_t)
                               else "not reproduced")
    assert gain["kind"] == "direction" and gain["setting"].startswith("stand-in: ")
    assert f"at the paper's alpha ({alpha:.3f})" in gain["why"]
    assert _row(claims, "training loss")["verdict"] == "not attempted"
    # ~8 s / ~2 s / < 1 s are numbers: judged by them (a factor 2), not by the candidate counts
    search = _row(claims, "exhaustive search")
    took = {f: float(r["search_s_ours"]) for r in rows if r["profile"] == label
            and r["mode"].startswith("uncoded") for f in [r["family"]]}
    near = (took["gc-seq"] < 1 and 4 <= took["sr-sgc"] <= 16 and 1 <= took["m-sgc"] <= 4)
    assert search["kind"] == "value"
    assert search["verdict"] == ("reproduced" if near else "not reproduced")


def test_job_times_meet_the_deadline():
    rng = np.random.default_rng(3)
    D = 1.0 + rng.gamma(2.0, 0.1, (14, 16))
    D[rng.random(D.shape) < 0.1] += 2.0
    for code in (make_code("m-sgc", n=16, B=1, W=2, lam=3), make_code("gc-seq", n=16, s=3)):
        t, e = job_times(code, D, 12, alpha=1.0)
        clock = np.cumsum(e.round_times)
        assert np.all(t <= clock[np.arange(12) + code.T] + 1e-12)
        assert t.max() == pytest.approx(clock[-1])


def test_switching_without_traces(switch_synth):
    folder, rows, claims = switch_synth
    _check_ledger(folder, claims, ("curves.csv",), least=5)
    _check_curves(folder, rows)
    assert {r["profile"] for r in rows} == {"synthetic GE"}
    _synthetic_says_so(claims, keep=("exhaustive search",), least=2)


# ----------------------------------------------------------------------------- Table 4
def test_cnn_size_and_combination():
    assert _cnn_parameters() == D_CNN == 269_998
    rng = np.random.default_rng(0)
    pool = rng.standard_normal((4, 10), dtype=np.float32)
    w = {(0, 1, 0): 0.5, (2, 3, 1): -2.0}
    acc = np.full(10, 9.0, np.float32)
    assert _combine(w, pool, acc) == 2
    want = 0.5 * pool[(0 + 1 + 0) % 4] - 2.0 * pool[(14 + 3 + 3) % 4]
    assert np.allclose(acc, want, atol=1e-6)


def test_decode_time_rows(decode):
    folder, rows, claims = decode
    _check_ledger(folder, claims, ("rounds.csv",))
    by = {r["family"]: r for r in rows}
    assert set(by) == {"gc-seq", "sr-sgc", "m-sgc"}
    assert [int(by[f]["T"]) for f in ("gc-seq", "sr-sgc", "m-sgc")] == [0, 2, 1]
    assert [int(by[f]["base_s"]) for f in ("gc-seq", "sr-sgc", "m-sgc")] == [15, 12, 27]
    # a job needs at least n - s coded results; M-SGC also all n uncoded D1 results
    assert float(by["gc-seq"]["vectors_median"]) >= 256 - 15
    assert float(by["sr-sgc"]["vectors_median"]) >= 256 - 12
    assert float(by["m-sgc"]["vectors_median"]) >= 256 + 256 - 27
    for p in _read(folder / "rounds.csv"):
        assert float(p["decode_ms"]) >= float(p["combine_ms"]) > 0
        assert int(p["jobs_decoded"]) >= 1
    assert _row(claims, "independent (n, lambda)-GCs")["verdict"] == "reproduced"
    assert _row(claims, "D = M - T - 1")["verdict"] == "reproduced"
    for c in claims:               # Table 4's numbers: judged by them, within ±25 %
        if "decoding time per round" in c["claim"]:
            ratio = float(c["ours"].split()[0]) / float(c["paper_value"].split()[0])
            assert c["kind"] == "value" and "tolerance ±25%" in c["why"]
            assert c["verdict"] == ("reproduced" if abs(ratio - 1) <= 0.25 else "not reproduced")
    assert not any("GC decodes fastest" in c["claim"] for c in claims)   # the order: in why
