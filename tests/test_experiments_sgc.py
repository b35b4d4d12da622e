from gradcode.experiments import list_experiments, reproduce


def test_every_experiment_is_listed():
    names = [n for n, _ in list_experiments()]
    assert "sgc-table1" in names and len(names) == 9


def test_sgc_loads_and_table1_quick(tmp_path):
    for name in ("sgc-loads", "sgc-table1"):
        folder = reproduce(name, quick=True, out_root=tmp_path, progress=False)
        for f in ("results.csv", "plot.png", "summary.md"):
            assert (folder / f).is_file()
    text = (tmp_path / "sgc-table1" / "results.csv").read_text()
    assert "m-sgc" in text and "uncoded" in text
