"""The one way to declare an experiment (``Experiment``): the framework's share -- sizes, the loop
over configurations, rows appended as they finish (Ctrl-C writes the finished ones), the
``Output`` -- and that every registered experiment is declared so."""

import csv
import importlib

import pytest

from gradcode.experiments import EXPERIMENTS, Claim, Context, Experiment, holds, reproduce
from gradcode.experiments import _common
from gradcode.experiments._ledger import GROUPS


def _figure(facts):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 4])
    ax.set(title="squares", xlabel="n", ylabel="n squared")
    fig.suptitle("A demo")
    return fig


def _demo(measure=None, **kw) -> Experiment:
    def square(ctx, n):
        return {"n": n, "square": n * n, "seed": ctx.seed}
    return Experiment("demo", "A demo", "paper 2, Fig. 1", "squares grow", number=2,
                      sizes={"ns": ((1, 2, 3), (1, 2, 3, 4, 5))},
                      configs=lambda ctx: ctx.sizes["ns"], measure=measure or square,
                      plot=_figure, ours=lambda facts: "squared.", **kw)


def _register(monkeypatch, exp):
    monkeypatch.setattr(_common, "EXPERIMENTS", {exp.name: "fake"})
    monkeypatch.setattr(_common, "_spec", lambda name: exp)


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_sizes_configs_and_measure_give_the_rows():
    exp = _demo()
    quick = exp.output(Context(quick=True, seed=3, progress=False))
    full = exp.output(Context(quick=False, progress=False))
    assert [r["square"] for r in quick.rows] == [1, 4, 9] and quick.rows[0]["seed"] == 3
    assert [r["n"] for r in full.rows] == [1, 2, 3, 4, 5]
    assert quick.ours == "squared." and quick.claims == [] and quick.extra_files == {}


def test_measure_may_give_several_rows_and_analyse_gives_the_facts():
    def both(ctx, n):
        return [{"n": n, "kind": "a"}, {"n": n, "kind": "b"}]

    def analyse(ctx, rows):
        ctx.notes.append(f"{len(rows)} rows")
        return {"rows": rows, "largest": max(r["n"] for r in rows)}
    exp = _demo(both, analyse=analyse,
                claims=lambda f: [Claim("Fig. 1", "grows", "grows", f["largest"],
                                        verdict=holds(f["largest"] == 4), why="rule: n = 4",
                                        kind="direction")],
                files=lambda f: {"extra.txt": str(f["largest"])})
    ctx = Context(quick=True, progress=False)
    out = exp.output(ctx)
    assert len(out.rows) == 6 and ctx.notes == ["6 rows"]
    assert out.claims[0].verdict == "not reproduced" and out.extra_files == {"extra.txt": "3"}


def test_a_custom_run_goes_through_the_same_declaration():
    def run(ctx):
        ctx.each([10, 20], lambda n: {"n": n})
        return {"total": sum(r["n"] for r in ctx.rows)}
    exp = Experiment("custom", "Custom", "p", "c", run=run, plot=_figure,
                     ours=lambda f: f"total {f['total']}")
    out = exp.output(Context(progress=False))
    assert out.ours == "total 30" and [r["n"] for r in out.rows] == [10, 20]


def test_a_declaration_measures_one_way():
    with pytest.raises(ValueError, match="expected configs and measure, or run"):
        Experiment("x", "x", "p", "c", configs=lambda ctx: [1], plot=_figure, ours=str)
    with pytest.raises(ValueError, match="expected configs and measure, or run"):
        Experiment("x", "x", "p", "c", configs=lambda ctx: [1], measure=lambda ctx, c: {},
                   run=lambda ctx: None, plot=_figure, ours=str)
    with pytest.raises(ValueError, match="expected plot and ours"):
        Experiment("x", "x", "p", "c", run=lambda ctx: None, ours=str)


def test_reproduce_writes_a_declared_experiment(tmp_path, monkeypatch):
    _register(monkeypatch, _demo(claims=lambda rows: [Claim(
        "Fig. 1", "squares grow", "grow", "grow", verdict=holds(rows[-1]["square"] > 1),
        why="rule: the last square above 1", kind="direction")]))
    folder = reproduce("demo", quick=True, out_root=tmp_path, progress=False)
    assert [r["square"] for r in _rows(folder / "results.csv")] == ["1", "4", "9"]
    (claim,) = _rows(folder / "claims.csv")
    assert claim["paper"] == "2" and claim["verdict"] == "reproduced"
    assert (claim["kind"], claim["setting"]) == ("direction", "paper's")
    assert (folder / "summary.md").read_text().startswith("# A demo\n\n**Paper** (paper 2, Fig. 1)")


def test_ctrl_c_in_the_loop_writes_the_finished_rows(tmp_path, monkeypatch):
    def stop_at_three(ctx, n):
        if n == 3:
            raise KeyboardInterrupt
        return {"n": n}
    _register(monkeypatch, _demo(stop_at_three))
    with pytest.raises(KeyboardInterrupt, match="2 finished rows"):
        reproduce("demo", quick=True, out_root=tmp_path, progress=False)
    assert [r["n"] for r in _rows(tmp_path / "demo" / "results.csv")] == ["1", "2"]
    assert "Interrupted (Ctrl-C)" in (tmp_path / "demo" / "summary.md").read_text()


def test_every_experiment_is_declared():
    """Every registered experiment but ``theorems`` (its statements have their own declaration,
    ``@statement``) is an ``Experiment`` of its module's ``SPECS``, under its own name, with the
    paper it belongs to."""
    for name, module in EXPERIMENTS.items():
        spec = importlib.import_module(module).SPECS[name]
        if name == "theorems":
            continue
        assert isinstance(spec, Experiment), name
        assert spec.name == name and spec.number in range(1, len(GROUPS) + 1), name
