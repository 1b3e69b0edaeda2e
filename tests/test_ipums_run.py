"""timing/ipums_run.py: single-job runs (--jobs-only) accumulate in one jobs file per fraction."""

import json

import pytest

from timing import ipums_run as ir


def _run(fig, job, cpu, data=None, fraction=1.0):
    row = {"job": job, "s": cpu + 1, "cpu_time_s": cpu, "max_rss_mb": 100 * cpu, "n_users": 10, "dims": 2,
           "fits": 1, "flops": 1.0, "random_numbers": 1.0, "scaled": True, "projected_cpu_s_full_size": cpu}  # fmt: skip
    data_jobs = [{"job": data, "s": 1.0, "cpu_time_s": 1.0, "max_rss_mb": 5.0, "projected_cpu_s_full_size": 1.0}]
    return {
        "meta": {"fraction": fraction, "scale": "paper", "startup_cpu_s": 2.0, "records": {data: 10} if data else {}},
        "figures": [{"figure": fig, "wall_s": cpu + 1, "panels_not_run": [], "jobs": [row], "peak_rss_mb": 100 * cpu}],
        "data_jobs": data_jobs if data else [],
        "totals": {"cores": 2},
    }


def test_jobs_accumulate_and_a_rerun_replaces_its_row(tmp_path):
    path = tmp_path / "ipums_jobs_fraction_1.json"
    out = ir.merge_jobs(path, _run("hiera/fig3", "ipums_br__hiera", 50.0, "ipums_br"))
    path.write_text(json.dumps(out))
    out = ir.merge_jobs(path, _run("ldpfl/fig9", "ipums_mx__duchi", 30.0, "ipums_mx"))
    path.write_text(json.dumps(out))
    out = ir.merge_jobs(path, _run("hiera/fig3", "ipums_br__hiera", 40.0, "ipums_br"))  # measured again
    assert [r["figure"] for r in out["figures"]] == ["hiera/fig3", "ldpfl/fig9"]
    assert [j["cpu_time_s"] for r in out["figures"] for j in r["jobs"]] == [40.0, 30.0]
    assert [j["job"] for j in out["data_jobs"]] == ["ipums_br", "ipums_mx"]
    assert out["totals"]["measured_cpu_s"] == 40.0 + 30.0 + 2.0
    assert out["meta"]["records"] == {"ipums_br": 10, "ipums_mx": 10}
    assert "ipums_br__hiera" in ir.render(out)
    with pytest.raises(SystemExit, match="fraction"):
        ir.merge_jobs(path, _run("hiera/fig3", "ipums_br__pm", 1.0, fraction=0.25))


def test_runs_combine_into_one_record_with_their_panels_and_figures_not_run_recomputed(tmp_path):
    """--combine: a figure measured in an earlier run keeps its jobs, a later run adds the panel it
    had left out (dct/fig4's WISDM panel), a figure left out of one run but run in another is run."""
    early = _run("dct/fig4", "ipums_br__pm", 40.0, "ipums_br")
    early["figures"][0]["panels_not_run"] = ["wisdm"]
    early["meta"]["figures_not_run"] = ["ldpfl/fig9"]
    later = _run("dct/fig4", "wisdm__pm", 5.0, "wisdm")
    later["meta"]["wall_source"] = "job log"
    later["totals"]["cores"] = 1  # single jobs run one at a time: the record keeps the machine's cores
    nine = _run("ldpfl/fig9", "ipums_mx__duchi", 30.0, "ipums_mx")
    nine["meta"]["wall_source"] = "job log"
    paths = []
    for i, rec in enumerate([early, later, nine]):
        paths.append(tmp_path / f"run{i}.json")
        paths[-1].write_text(json.dumps(rec))
    ir.main(["--combine", *map(str, paths), "--out-dir", str(tmp_path / "out")])
    out = json.loads((tmp_path / "out/ipums_results.json").read_text())
    fig4 = next(r for r in out["figures"] if r["figure"] == "dct/fig4")
    assert [j["job"] for j in fig4["jobs"]] == ["ipums_br__pm", "wisdm__pm"] and fig4["panels_not_run"] == []
    assert out["meta"]["figures_not_run"] == [] and out["meta"]["wall_source"] == "mixed"
    assert out["totals"]["measured_cpu_s"] == 40.0 + 5.0 + 30.0 + 3 * 1.0
    assert out["totals"]["cores"] == 2
    parts = [f"{tmp_path.name}/run{i}.json" for i in range(3)]
    assert out["meta"]["combined_from"] == parts
    # combining the combination with one more run keeps the names of its parts
    more = tmp_path / "more" / "run3.json"
    more.parent.mkdir()
    more.write_text(json.dumps(_run("ldpfl/fig8", "wisdm__pm", 2.0, "wisdm")))
    ir.main(["--combine", str(tmp_path / "out/ipums_results.json"), str(more), "--out-dir", str(tmp_path / "out2")])
    again = json.loads((tmp_path / "out2/ipums_results.json").read_text())
    assert again["meta"]["combined_from"] == [*parts, "more/run3.json"]
    assert "Snakemake's benchmark file" in (tmp_path / "out/ipums_results.md").read_text()


@pytest.mark.parametrize(
    "extra", [["--figures", "ldpfl/fig8"], ["--fraction", "0.5"], ["--scale", "smoke"], ["--collect"]]
)
def test_everything_runs_every_figure_at_the_papers_sizes_only(extra, capsys):
    """--everything is one run of the whole workflow at the papers' sizes: refused with a subset of
    figures, another size, or anything that is not one run."""
    with pytest.raises(SystemExit) as err:
        ir.main(["--everything", *extra])
    assert err.value.code == 2
    message = capsys.readouterr().err
    assert "--everything" in message or "--together runs whole figures" in message


def test_the_whole_workflows_run_is_described_as_such():
    out = _run("ldpfl/fig8", "ipums_br__pm", 10.0, "ipums_br")
    out["meta"] |= {"everything": {"wall_s": 3000.0, "cpu_s": 5940.0}, "together_wall_s": 3000.0}
    out["totals"] |= {"ipums_panels_projected_cpu_s": 11.0, "measured_cpu_s": 11.0, "projected_hours_on_cores": 0.0,
                      "peak_rss_mb": 1000.0}  # fmt: skip
    text = ir.render(out)
    assert "One run of the whole workflow" in text and "50.0 min wall, 99 min CPU" in text
