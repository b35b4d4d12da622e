import csv
import math

import pytest

from gradcode.experiments import list_experiments, reproduce
from gradcode.experiments._common import Headline, headline_table


def test_every_experiment_is_listed():
    names = [n for n, _ in list_experiments()]
    assert "sgc-table1" in names and "sim-vs-real" in names and len(names) == 10


def test_a_traces_folder_that_is_not_there_is_refused(tmp_path, capsys):
    from gradcode.cli import main
    rc = main(["reproduce", "sgc-table1", "--quick", "--traces", str(tmp_path / "none"),
               "--out", str(tmp_path / "out")])
    assert rc == 2 and "traces: no such folder" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def _rows(folder):
    with (folder / "results.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_sgc_loads_and_table1_quick(tmp_path):
    for name in ("sgc-loads", "sgc-table1"):
        folder = reproduce(name, quick=True, out_root=tmp_path, progress=False)
        for f in ("results.csv", "plot.png", "summary.md"):
            assert (folder / f).is_file()
        assert "**Paper vs ours**" in (folder / "summary.md").read_text()
    text = (tmp_path / "sgc-table1" / "results.csv").read_text()
    assert "m-sgc" in text and "uncoded" in text
    rows = _rows(tmp_path / "sgc-table1")
    for sel in ("best of App. J search", "paper's Table 1 parameters"):
        picked = {r["family"]: r for r in rows if r["selection"] == sel
                  and r["profile"] == rows[0]["profile"]}
        assert set(picked) == {"uncoded", "gc-seq", "sr-sgc", "m-sgc"}
        assert float(picked["gc-seq"]["relative_to_gc"]) == pytest.approx(1.0)
        assert float(picked["uncoded"]["relative_to_gc"]) > 1.0     # coding beats no coding
        assert float(picked["m-sgc"]["paper_relative_to_gc"]) == pytest.approx(891.37 / 1064.96)
        assert float(picked["m-sgc"]["load"]) <= 2 / 256 + 1e-12    # Remark 3.3
    # sgc-loads: the paper's Fig. 11 setting, M-SGC between the bound and SR-SGC, O(1/W') gap
    loads = [r for r in _rows(tmp_path / "sgc-loads") if r["setting"] == "Fig. 11"]
    assert {(r["n"], r["B"], r["lam"]) for r in loads} == {("20", "3", "4")}
    for r in loads:
        assert float(r["lower_bound_f1"]) <= float(r["m-sgc"]) + 1e-12
        if r["sr-sgc"] != "nan":
            assert float(r["m-sgc"]) < float(r["sr-sgc"])
        assert abs(float(r["m-sgc_minus_bound_lam_n-1"])) < 1e-12     # Remark F.1
    gw = [float(r["gap_times_Wprime"]) for r in loads]
    assert max(gw) < 2 * gw[0] and gw[-1] > 0


def test_headline_table_ratio_and_text():
    rows = [Headline("speed-up", 3.0, 2.85, "close", "{:.2f}", "x"),
            Headline("qualitative", "A < B", "A 1 vs B 2", "holds")]
    table = headline_table(rows)
    assert "| speed-up | 3.00 x | 2.85 x | 0.95 | close |" in table
    assert "| qualitative | A < B | A 1 vs B 2 | — | holds |" in table
    assert Headline("nan", 1.0, math.nan).ratio() is None
    assert headline_table([]) == ""
