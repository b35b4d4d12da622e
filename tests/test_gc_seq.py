"""``gc-seq`` (paper 4, Sec. 3.1) is a sequential scheme with ``T = 0`` (issue 21): it has a
wait-out rule like every other sequential scheme, so training, resuming, ``summary.json`` and
the CLI's printed summary must treat it as one (the question is "does the planner have a
wait-out rule", never "is T non-zero").  Tiny runs on the virtual backend: seconds."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gradcode.cli import main  # noqa: E402
from gradcode.records import Interrupted, read_records  # noqa: E402
from gradcode.runtime import TrainConfig, train  # noqa: E402

GC_SEQ = ("gc-seq", {"n": 4, "s": 1})
M_SGC = ("m-sgc", {"n": 4, "B": 1, "W": 2, "lam": 1})
GC_CR = ("gc-cr", {"n": 4, "s": 1})
#: what summary.json adds for a scheme whose planner has a wait-out rule
SEQUENTIAL_KEYS = {"models", "jobs", "waitout_rule", "waitout_rounds"}
#: straggling enough for wait-outs in some rounds and not in others (seed 1)
SETTINGS = dict(dataset="iris", wait="mu:1", delay="exp:0.3", backend="virtual", seed=1,
                eval_every=2, checkpoint_every=2)


def config(scheme, rounds: int, **kw) -> TrainConfig:
    """No plot.png: these runs' subject is their records (the plot's: tests/test_runtime_data)."""
    code, params = scheme
    return TrainConfig(code=code, code_params=params, rounds=rounds,
                       **{**SETTINGS, "plot": False, **kw})


def rows(records):
    """The records as rows, without the measured seconds spent evaluating."""
    return [{k: v for k, v in r.as_row().items() if k != "eval_s"} for r in records]


def flat(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).numpy()


@pytest.mark.parametrize("rule", [None, "deadline", "model", "never"])
def test_summary_names_the_waitout_rule(tmp_path, rule):
    """summary.json (and ``TrainResult.summary``) of a gc-seq run name its wait-out rule, the
    rounds waited out, its jobs and its one model, as every sequential scheme's do."""
    res = train(config(GC_SEQ, 6, waitout=rule, out=str(tmp_path)), progress=False)
    summary = json.loads((tmp_path / "summary.json").read_text())
    waited = [r.round for r in res.records if r.waitout]
    expected = {"models": 1, "jobs": 6, "waitout_rule": rule or "deadline",
                "waitout_rounds": waited}
    assert {k: summary.get(k) for k in SEQUENTIAL_KEYS} == expected
    assert {k: res.summary.get(k) for k in SEQUENTIAL_KEYS} == expected
    assert summary["waitouts"] == len(waited)
    if rule == "never":
        assert waited == []
    elif rule == "deadline":
        assert 0 < len(waited) < 6           # the settings straggle in some rounds, not all


@pytest.mark.parametrize("scheme,sequential", [(GC_SEQ, True), (M_SGC, True), (GC_CR, False)],
                         ids=["gc-seq", "m-sgc", "gc-cr"])
def test_summary_keys_of_every_sequential_scheme_and_no_single_round_code(tmp_path, scheme,
                                                                          sequential):
    res = train(config(scheme, 4, out=str(tmp_path)), progress=False)
    keys = set(json.loads((tmp_path / "summary.json").read_text()))
    assert (SEQUENTIAL_KEYS <= keys) is sequential
    assert not SEQUENTIAL_KEYS & keys or sequential
    assert (SEQUENTIAL_KEYS <= set(res.summary)) is sequential


def test_resume_after_ctrl_c_equals_the_uninterrupted_run(tmp_path):
    """A gc-seq run stopped after round 2 (checkpoint of round 2, rounds.csv holding round 2 as
    well) and resumed gives the records, wait-outs and model of the uninterrupted run."""
    straight = train(config(GC_SEQ, 6), progress=False)
    out = tmp_path / "run"

    def crash(r, rec, info):
        if r == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(config(GC_SEQ, 6, out=str(out)), progress=False, on_round=crash)
    res = train(config(GC_SEQ, 6, out=str(out), resume=True), progress=False)
    np.testing.assert_equal(rows(res.records), rows(straight.records))     # NaN == NaN here
    np.testing.assert_equal(rows(read_records(out / "rounds.csv")), rows(straight.records))
    np.testing.assert_allclose(flat(res.model), flat(straight.model), rtol=1e-6)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["waitout_rule"] == "deadline"
    assert summary["waitout_rounds"] == [r.round for r in straight.records if r.waitout]


def test_resume_of_a_finished_run_to_more_rounds_and_never_fewer(tmp_path):
    """A finished gc-seq run extended to more rounds (twice) is one longer run; cutting it is
    refused in one line, as for every sequential scheme.  (Each run's last round is an
    evaluation round of the longer one too: the held-out set is measured every 2 rounds.)"""
    whole = train(config(GC_SEQ, 8), progress=False)
    out = str(tmp_path / "run")
    train(config(GC_SEQ, 4, out=out), progress=False)
    train(config(GC_SEQ, 6, out=out, resume=True), progress=False)
    res = train(config(GC_SEQ, 8, out=out, resume=True), progress=False)
    np.testing.assert_equal(rows(res.records), rows(whole.records))
    assert res.summary["waitout_rounds"] == [r.round for r in whole.records if r.waitout]
    with pytest.raises(ValueError, match="^rounds: a sequential scheme's run can be extended"):
        train(config(GC_SEQ, 5, out=out, resume=True), progress=False)


def test_interrupted_run_resumed_via_sigterm_checkpoint(tmp_path):
    """``Interrupted`` (Ctrl-C finishing the round) keeps a checkpoint of that round: the resumed
    gc-seq run continues it."""
    straight = train(config(GC_SEQ, 5), progress=False)
    out = tmp_path / "run"

    def ctrl_c(r, rec, info):
        if r == 1:
            import signal
            signal.raise_signal(signal.SIGINT)      # noted by the Stopper: the round finishes

    with pytest.raises(Interrupted) as caught:
        train(config(GC_SEQ, 5, out=str(out), checkpoint_every=10), progress=False,
              on_round=ctrl_c)
    assert len(caught.value.result.records) == 2
    assert json.loads((out / "summary.json").read_text())["waitout_rule"] == "deadline"
    res = train(config(GC_SEQ, 5, out=str(out), resume=True), progress=False)
    np.testing.assert_equal(rows(res.records), rows(straight.records))


def _cli(scheme, rounds: int, out, *more):
    code, params = scheme
    argv = ["train", "--code", code]
    for k, v in params.items():
        argv += [f"--{k}", str(v)]
    for k, v in SETTINGS.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    return main(argv + ["--rounds", str(rounds), "--out", str(out), "--quiet", "--no-plot", *more])


@pytest.mark.parametrize("scheme,rule", [(GC_SEQ, "deadline"), (M_SGC, "deadline"),
                                         (GC_SEQ, "never"), (GC_CR, None)],
                         ids=["gc-seq", "m-sgc", "gc-seq-never", "gc-cr"])
def test_cli_prints_the_waitout_rule(tmp_path, capsys, scheme, rule):
    more = () if rule is None or rule == "deadline" else ("--waitout", rule)
    assert _cli(scheme, 4, tmp_path / "run", *more) == 0
    out = capsys.readouterr().out
    waited = json.loads((tmp_path / "run" / "summary.json").read_text()).get("waitouts")
    if rule is None:
        assert "wait-out" not in out
    else:
        assert f"wait-out rule {rule}: {waited} of 4 rounds waited out" in out


def test_cli_train_then_resume_gc_seq(tmp_path, capsys):
    """``gradcode train --code gc-seq ... --out`` then ``--resume --rounds`` more: exit 0, the
    rounds of one longer run, the rule printed and in summary.json."""
    assert _cli(GC_SEQ, 6, tmp_path / "whole") == 0
    assert _cli(GC_SEQ, 4, tmp_path / "run") == 0
    capsys.readouterr()
    assert _cli(GC_SEQ, 6, tmp_path / "run", "--resume") == 0
    out = capsys.readouterr().out
    assert "wait-out rule deadline:" in out
    np.testing.assert_equal(rows(read_records(tmp_path / "run" / "rounds.csv")),
                            rows(read_records(tmp_path / "whole" / "rounds.csv")))
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    whole = json.loads((tmp_path / "whole" / "summary.json").read_text())
    assert {k: summary[k] for k in SEQUENTIAL_KEYS} == {k: whole[k] for k in SEQUENTIAL_KEYS}
