"""timing/figure_times.py: per-figure sums of the jobs' own resources: log lines and the floor arithmetic."""

import json
import math
import sys
from pathlib import Path

import pandas as pd
import pytest

from timing import bench_common, ipums_run, machine
from timing import cpu_accounts as ca
from timing import figure_times as ft
from timing import papers_reps as pr
from timing import readme_block as rb
from timing import suite_time as st
from timing import targets as tg


def job_log(path: Path, s: float, cpu: float, rss: float, rule: str = "figure_job") -> None:
    """A job log as ldprepro.pipeline.jobsetup writes it: progress lines, then the resources: line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "2026-11-24 04:00:00 INFO ldprepro: started\n"
        f"2026-11-24 04:00:40 INFO ldprepro: resources: cpu_s={cpu:.3f} wall_s={s:.3f} max_rss_mb={rss:.1f}"
        f" setup_cpu_s=0.500 rule={rule}\n"
    )


@pytest.fixture
def run(tmp_path, monkeypatch):
    # the floors' prices: a few repeats, not spread over seconds (what matters here is the bookkeeping)
    monkeypatch.setattr(bench_common, "PRICE_REPEATS", 3)
    monkeypatch.setattr(bench_common, "PRICE_PAUSE_S", 0.0)
    logs = tmp_path / "logs"
    job_log(logs / "hiera/fig2/synth_a__pm.log", 10.0, 8.0, 300.0)
    job_log(logs / "hiera/fig2/synth_a__hiera.log", 30.0, 20.0, 250.0)
    job_log(logs / "hiera/fig2/plot.log", 2.0, 1.5, 200.0)
    job_log(logs / "lremh/fig1.log", 5.0, 4.0, 900.0)
    cards = tmp_path / "cards"
    cards.mkdir()
    (cards / "synth_a.json").write_text(json.dumps({"rows_after_cleaning": 1000}))
    config = {
        "seed": 1,
        "hiera": {
            "fig2": {
                "kind": "mean",
                "panels": [{"dataset": "synth_a"}],
                "mechanisms": ["pm", "hiera"],
                "sweep": {"mu": [1, 2, 3]},
                "sweep_mechanisms": ["hiera"],
                "eps": [0.5, 1.0],
                "reps": 10,
                "test_reps": 40,
            }
        },
    }
    return logs, cards, config


def test_sums_per_figure_and_floor_counts_users_reps_eps_sweep(run):
    logs, cards, config = run
    jobs = ft.read_jobs(logs)
    assert set(jobs.figure) == {"fig2", "fig1"} and len(jobs) == 4
    draws = ft.floors(config, cards)
    # pm: 1000 users × 40 repetitions (test_reps > reps) × 2 ε; hiera also × 3 sweep values
    assert draws == {
        ("hiera", "fig2", "synth_a__pm"): 80_000,
        ("hiera", "fig2", "synth_a__hiera"): 240_000,
        ("hiera", "fig2", "synth_a"): 320_000,  # a panel job of both mechanisms
    }
    table = ft.summarise(jobs, draws, sec_per_draw=1e-6).set_index(["paper", "figure"])
    fig2 = table.loc[("hiera", "fig2")]
    assert fig2.jobs == 3 and fig2.cpu_s == pytest.approx(29.5) and fig2.max_rss_mb == 300.0
    assert fig2.floor_jobs == 2 and fig2.floor_cpu_s == pytest.approx(0.32)
    assert fig2.cpu_over_floor == pytest.approx(28.0 / 0.32)  # the plot job is not in the ratio
    assert table.loc[("lremh", "fig1")].jobs == 1


def test_sgd_floor_is_two_uniforms_per_training_user_and_fit(run):
    _, cards, _ = run
    entry = {"kind": "sgd", "mechanisms": ["pm"], "eps": [1, 2, 4], "folds": 5, "cv_repetitions": 10}
    assert ft.job_floor_draws(entry, "synth_a", "pm", cards) == 3 * 5 * 10 * 800 * 2  # index + report per user
    assert ft.job_floor_draws(entry, "no_card", "pm", cards) is None


def test_a_log_without_its_resources_line_is_not_a_job_record(tmp_path):
    """A job that has not finished (or died before its exit line) has no record; the last line of a
    rerun job's log counts."""
    logs = tmp_path / "logs"
    (logs / "dct/fig1").mkdir(parents=True)
    (logs / "dct/fig1/x__dct.log").write_text("INFO started\n")
    job_log(logs / "dct/fig1/y__dct.log", 3.0, 2.0, 100.0)
    with (logs / "dct/fig1/y__dct.log").open("a") as fh:
        fh.write("INFO resources: cpu_s=7.000 wall_s=8.000 max_rss_mb=90.0 setup_cpu_s=0.400 rule=figure_job\n")
    jobs = ft.read_jobs(logs).set_index("job")
    assert list(jobs.index) == ["y__dct"] and jobs.loc["y__dct", "cpu_s"] == 7.0 and jobs.loc["y__dct", "wall_s"] == 8.0


def test_main_writes_json_and_markdown_with_before(run, tmp_path):
    logs, cards, config = run
    cfg = tmp_path / "config.yaml"
    import yaml

    cfg.write_text(yaml.safe_dump(config))
    before = tmp_path / "before"
    job_log(before / "hiera/fig2/synth_a__pm.log", 100.0, 59.0, 300.0)
    result = ft.main(
        [
            "--logs",
            str(logs),
            "--before",
            str(before),
            "--config",
            str(cfg),
            "--cards",
            str(cards),
            "--out-dir",
            str(tmp_path / "out"),
        ]
    )
    fig2 = next(r for r in result["figures"] if r["figure"] == "fig2")
    assert fig2["before_cpu_s"] == 59.0
    md = (tmp_path / "out/figure_times.md").read_text()
    assert "| hiera/fig2 | 3 | 29.5 s |" in md and "2.0×" in md


def test_before_may_be_an_earlier_figure_times_json(run, tmp_path):
    logs, cards, config = run
    cfg = tmp_path / "config.yaml"
    import yaml

    cfg.write_text(yaml.safe_dump(config))
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps({"figures": [{"paper": "hiera", "figure": "fig2", "cpu_s": 88.5}]}))
    out = tmp_path / "out"
    args = ["--logs", str(logs), "--before", str(earlier), "--config", str(cfg), "--cards", str(cards)]
    result = ft.main([*args, "--out-dir", str(out)])
    fig2 = next(r for r in result["figures"] if r["figure"] == "fig2")
    assert fig2["before_cpu_s"] == 88.5
    assert "3.0×" in (out / "figure_times.md").read_text()  # 88.5 s before, 29.5 s now


def test_readme_performance_block_is_generated_from_the_json(tmp_path):
    results = {
        "meta": {"date": "2026-11-24T00:00", "n_mech": 1000},
        "mechanisms": [
            {"what": "Generator.random (reference)", "ratio_to_reference": 1.0},
            {"what": "pm", "ratio_to_reference": 0.61},
            {"what": "hm", "ratio_to_reference": 0.17},
            {"what": "pm discretised (m=10)", "ratio_to_reference": 0.3},
        ],
        "frequency": [{"what": "grr k=16 perturb + estimate", "speedup_vs_warm_peer": 43.7}],
        "extra_key_from_another_section": [1, 2],
    }
    figures = {
        "cpus": 2,
        "totals": {"jobs": 10, "cpu_s": 1200.0, "before_cpu_s": 2400.0},
        "figures": [{"paper": "hiera", "figure": "fig2", "cpu_s": 600.0, "cpu_over_floor": 3.5}],
    }
    text = rb.block(results, figures)
    assert "the 2 mechanisms run at 0.17× (hm) to 0.61× (pm)" in text and "1 of 2 below the 0.5× target" in text
    assert "Discretised (Algorithm 5 draws a second uniform per rounded output): 0.30×" in text
    assert "grr k=16 44×" in text and "20.0 min CPU in total (≥ 10.0 min on 2 cores), 40.0 min before" in text
    assert "hiera/fig2, takes 10.0 min CPU, 3.5× its one-uniform-per-user floor" in text
    fused = {"what": "laplace", "cpu_s": 2.0, "ratio_to_reference": 0.4, "numpy_ratio_to_reference": 0.3}
    fused |= {"draws_cpu_s": 1.6, "ratio_to_own_draws": 0.8}  # reference 0.8 s: draws at 0.5×
    line = rb._mechanism_line(10, [fused])
    assert "(their numpy samplers, same outputs: 0.30× (laplace)" in line
    assert "laplace: the random numbers it must draw alone run at 0.50× the uniform rate; it reaches 0.80×" in line
    ipums = {
        "meta": {"fraction": 0.05},
        "totals": {
            "measured_cpu_s": 600.0,
            "projected_cpu_s_full_size": 7200.0,
            "projected_hours_on_cores": 1.0,
            "cores": 2,
            "peak_rss_mb": 900.0,
        },
    }
    text = rb.block(results, figures, ipums)
    assert "projected linearly to the papers' sizes 2.0 CPU-hours, about 1.0 h on 2 cores" in text
    assert "(a projection, not a measurement nor a bound)" in text
    assert "IPUMS-sized panels included" not in text  # an older ipums_results.json without the split
    ipums["totals"]["ipums_panels_projected_cpu_s"] = 6000.0
    assert (
        "the offline run's 20 min CPU (measured) + the IPUMS panels' 100 min (projected) = 2.0 CPU-hours, "
        "at least 1.0 h on 2 cores (a projection)." in rb.block(results, figures, ipums)
    )
    ipums["meta"]["fraction"] = 1  # a run at the papers' sizes: measured, never called a projection
    text = rb.block(results, figures, ipums)
    assert "10 min CPU measured at the papers' sizes, at least 1.0 h on 2 cores" in text
    assert "the IPUMS panels' 100 min (measured) = 2.0 CPU-hours, at least 1.0 h on 2 cores." in text
    assert "projection" not in text
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n{rb.START}\nold\n{rb.END}\nrest\n")
    (tmp_path / "r.json").write_text(json.dumps(results))
    rb.main(
        [
            *("--results", str(tmp_path / "r.json"), "--figures", str(tmp_path / "none.json")),
            *("--ipums", str(tmp_path / "none.json"), "--readme", str(readme)),
        ]
    )
    out = readme.read_text()
    assert "old" not in out and "0.17× (hm)" in out and out.endswith(f"{rb.END}\nrest\n")


def test_floor_counts_test_reps_sweeps_of_swept_mechanisms_and_sgd_variants():
    mean = {
        "kind": "mean",
        "mechanisms": ["hiera", "pm"],
        "sweep": {"mu": [1, 2, 3]},
        "sweep_mechanisms": ["hiera"],
        "eps": [0.5, 1.0],
        "reps": 100,
        "test_reps": 400,
    }
    assert ft.job_floor(mean, "hiera", 1000)["random_numbers"] == 1000 * 400 * 2 * 3
    assert ft.job_floor(mean, "pm", 1000)["random_numbers"] == 1000 * 400 * 2
    # estimates drawn from sufficient statistics have no per-user floor: HierA's level counts from
    # 2^16 users on, Duchi's and Harmony's ±C counts, Laplace's Gamma sums, graded Laplace
    assert ft.job_floor(mean, "hiera", 1 << 16)["random_numbers"] == 0
    # and PM's uniform-mixture sums
    assert ft.job_floor(mean, "pm", 1 << 16)["random_numbers"] == 0
    assert ft.job_floor(mean, "pm", 1000)["random_numbers"] == 1000 * 400 * 2
    for mech in ("duchi", "harmony", "laplace", "graded_laplace", "harmony_at_level"):
        assert ft.job_floor({**mean, "mechanisms": [mech]}, mech, 1 << 16)["random_numbers"] == 0, mech
    for mech in ("duchi", "harmony", "harmony_at_level"):  # below 2^16 users: one uniform per user
        assert ft.job_floor({**mean, "mechanisms": [mech]}, mech, 1000)["random_numbers"] == 1000 * 400 * 2, mech
    assert ft.job_floor({**mean, "mechanisms": ["pm_at_level"]}, "pm_at_level", 1 << 16)["random_numbers"] == 0
    assert ft.job_floor({**mean, "mechanisms": ["pm_at_level"]}, "pm_at_level", 1000)["random_numbers"] > 0
    sgd = {
        "kind": "sgd",
        "mechanisms": ["pm"],
        "eps": [1, 2],
        "folds": 10,
        "cv_repetitions": 5,
        "discretize": [2, 10],
        "group_rule": ["paper", "fixed"],
    }
    f = ft.job_floor(sgd, "pm", 1000, d=20)
    assert f["fits"] == 10 * 5 * 2 * 2 * 2 and f["flops"] == f["fits"] * 4.0 * 900 * 20


def test_every_job_logs_its_own_resources_at_exit(tmp_path):
    """jobsetup.start registers the exit line: a job that burns 0.3 s of CPU logs at least that."""
    import subprocess

    log = tmp_path / "job.log"
    script = (
        "import time, types\n"
        "from ldprepro.pipeline import jobsetup\n"
        f"smk = types.SimpleNamespace(rule='r', wildcards={{}}, log=[{str(log)!r}], threads=1, config={{}})\n"
        "jobsetup.start(smk)\n"
        "t = time.process_time()\n"
        "while time.process_time() - t < 0.3:\n"
        "    pass\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
    found = ft.job_resources(log)
    assert found is not None and found[0] >= 0.3 and found[1] > 0 and found[2] > 0


def test_ipums_projection_scales_only_the_ipums_panels():
    """Jobs on IPUMS panels ran on a fraction of the users and are scaled up; the figures' other
    panels (synthetic families, Vehicle) ran at their paper size and are not."""
    run = ipums_run
    assert run.projected_cpu_s(12.0, 2.0, 0.05, scaled=True) == pytest.approx(2.0 + 10.0 / 0.05)
    assert run.projected_cpu_s(12.0, 2.0, 0.05, scaled=False) == 12.0
    assert run.projected_cpu_s(1.5, 2.0, 0.05, scaled=True) == 2.0  # all start-up


def test_targets_report_each_target_with_its_floor():
    """Met or not from the measured numbers; the every-figure floor prices each IPUMS SGD job at its
    panel's non-private reference (scaled by fits) and keeps the other jobs as projected."""
    figures = {
        "cpus": 2,
        "totals": {"jobs": 3, "cpu_s": 600.0, "max_rss_mb": 900.0},
        "figures": [
            {"paper": "p", "figure": "f1", "cpu_s": 500.0, "floor_cpu_s": 100.0, "cpu_over_floor": 4.0},
            {"paper": "p", "figure": "f2", "cpu_s": 100.0, "floor_cpu_s": None},
        ],
    }

    def job(name, cpu, fits, scaled=True):
        return {"job": name, "projected_cpu_s_full_size": cpu, "fits": fits, "scaled": scaled}

    ipums = {
        "meta": {"fraction": 0.05},
        "totals": {"ipums_panels_projected_cpu_s": 9000.0, "peak_rss_mb": 9000.0},
        "figures": [
            {
                "figure": "p/f3",
                "jobs": [
                    job("figure", 5.0, 0, scaled=False),
                    job("ipums_br__non_private", 1000.0, 250),
                    job("ipums_br__pm", 3000.0, 250),
                    job("ipums_br__duchi", 4000.0, 500),  # twice the fits: twice the reference
                    job("ipums_br__hiera", 1000.0, 0),  # mean estimation: kept as projected
                    job("vehicle__pm", 50.0, 250, scaled=False),
                ],
            }
        ],
    }
    assert not tg.offline_target(figures)["met"]  # no run_workflow record: not measured, never met
    assert tg.offline_target(figures)["measured"].startswith("not measured")
    accounts = {
        "run_wall_s": 420.0,
        "run_cpu_s": 840.0,
        "cores": 2,
        "jobs": 200,
        "load_before": 0.5,
        "fixed_cpu_s": 126.0,
        "fixed_share": 0.15,
        "snakemake_cpu_s": 40.0,
        "setup_cpu_s": 60.0,
        "outside_jobs_cpu_s": 26.0,
        "work_cpu_s": 714.0,
        "floor_s": 240.0,
    }
    offline = tg.offline_target({**figures, "accounts": {"totals": accounts}})
    assert not offline["met"] and offline["measured"].startswith("7.0 min wall, 14.0 min CPU over 200 jobs")
    assert "cannot take less than 7.0 min" in offline["explanation"]
    assert "take 1.7 min CPU and the jobs they model run at 4.0× it" in offline["explanation"]  # floor 100 s
    assert "add to 4.0 min CPU, 2.0 min on 2 cores" in offline["explanation"]
    assert tg.offline_target({**figures, "accounts": {"totals": {**accounts, "run_wall_s": 299.0}}})["met"]
    fixed = tg.fixed_cost_target({**figures, "accounts": {"totals": accounts}})
    assert not fixed["met"] and fixed["measured"].startswith("15.0% (2.1 of 14.0 min CPU, 200 jobs)")
    assert "0.30 s of start-up, 0.20 s of Snakemake" in fixed["explanation"]
    assert tg.fixed_cost_target({**figures, "accounts": {"totals": {**accounts, "fixed_share": 0.1}}})["met"]
    every = tg.every_figure_target(figures, ipums)
    assert not every["met"]
    # SGD jobs 8000 s; free: 1000 + 1000 + 2000 = 4000 s; rest 9000 − 8000 = 1000; floor 600 + 1000 + 4000
    assert "3 LDP-SGD jobs take 133 min" in every["explanation"] and "would take 67 min" in every["explanation"]
    assert "the whole run 1.6 CPU-hours, 0.8 h on 2 cores" in every["explanation"]
    assert "PROJECTED from SYNTHETIC IPUMS-format data at 0.05" in every["measured"]
    # at the papers' sizes: measured, and the random numbers the IPUMS jobs draw are priced
    ipums["meta"]["fraction"] = 1
    ipums["figures"][0]["jobs"][2]["random_numbers"] = 6e10
    every = tg.every_figure_target({**figures, "ns_per_uniform": 2.5}, ipums)
    assert "measured on SYNTHETIC IPUMS-format data at the papers' sizes" in every["measured"]
    assert "(6.00e+10 at 2.50 ns) take 2 min CPU" in every["explanation"]  # 150 s
    # one complete run (not merged from several) has a measured wall time, and it decides the target
    small = {
        **ipums,
        "totals": {"ipums_panels_projected_cpu_s": 5000.0, "peak_rss_mb": 900.0},
        "figures": [{**ipums["figures"][0], "wall_s": 2700.0}],
    }
    timed = {**figures, "accounts": {"totals": {"run_wall_s": 480.0}}}
    every = tg.every_figure_target(timed, small)
    assert (
        "measured wall: 53 min (the offline run 8.0 min + the IPUMS-sized figures in one run 45.0 min"
        in (every["measured"])
    )
    assert every["met"]  # (600 + 5000) / 2 s of CPU per core and 3,180 s of wall
    assert not tg.every_figure_target(timed, {**small, "figures": [{**small["figures"][0], "wall_s": 3200.0}]})["met"]
    elsewhere = {**small, "meta": {**small["meta"], "machine": "x86_64, AMD EPYC (CPython 3.11.7)"}}
    timed_here = {**timed, "machine": "x86_64, Intel Xeon (CPython 3.11.7, numpy 2.4.6)"}
    assert "measured wall" not in tg.every_figure_target(timed_here, elsewhere)["measured"]  # two processors
    same = {**timed_here, "machine": "x86_64, AMD EPYC (CPython 3.11.7, numpy 2.4.6)"}
    assert "measured wall: 53 min" in tg.every_figure_target(same, elsewhere)["measured"]
    merged = {**small, "meta": {**small["meta"], "combined_from": ["a.json", "b.json"]}}
    assert "measured wall" not in tg.every_figure_target(timed, merged)["measured"]  # runs merged: no one wall
    together = {**small, "meta": {**small["meta"], "together_wall_s": 2400.0}}  # one Snakemake run of them all
    assert (
        "figures in one run 40.0 min, the figures together in one Snakemake run on 2 cores"
        in (tg.every_figure_target(timed, together)["measured"])
    )
    memory = tg.memory_target(figures, ipums)
    assert not memory["met"] and "9,000 MB" in memory["measured"]  # above 8 GiB = 8,192 MB
    assert tg.memory_target(figures, None)["met"]
    results = {
        "mechanisms": [
            {"what": "pm", "ratio_to_reference": 0.7, "numpy_cpu_s": 1.0, "ratio_to_own_draws": 0.7},
            {"what": "laplace", "ratio_to_reference": 0.4, "numpy_cpu_s": 1.0, "ratio_to_own_draws": 0.8},
        ],
        "jobs": [{"what": "fit", "after_over_floor": 8.0, "after_over_data_pass": 3.0, "nonprivate_over_floor": 6.0}],
    }
    mech = tg.mechanism_target(results)
    assert not mech["met"] and "own draws" not in mech["measured"] and "alone run at 0.50×" in mech["explanation"]
    sgd = tg.sgd_target(results)
    assert sgd["met"] and "the mechanism adds 2.0×" in sgd["explanation"] and "exceeds" not in sgd["explanation"]
    # missed: the arithmetic from the same row (one sequential read of the rows bounds any fit below)
    fits = [
        {"what": "small G", "after_over_floor": 11.4, "after_over_data_pass": 7.6, "nonprivate_over_floor": 8.9},
        {"what": "large G", "after_over_floor": 25.8, "after_over_data_pass": 1.5, "nonprivate_over_floor": 26.3},
    ]
    missed = tg.sgd_target({"jobs": fits})
    assert not missed["met"] and missed["measured"] == "11.4×; 25.8×"
    assert (
        "small G: 11.4× the floor; the same fits with no mechanism at all cost 8.9× it (the mechanism adds 2.5×); "
        "7.6× one sequential read of the training rows, a read that costs 1.5× the floor: 10× would need the "
        "whole fit within 6.7× one read of its rows" in missed["explanation"]
    )
    assert "cost 26.3× it (more than with the mechanism" in missed["explanation"]
    assert "a read that alone costs 17.2× the floor: 10× is out of reach" in missed["explanation"]
    assert [t["target"] for t in tg.targets(results, None, None)][-1] == "peak memory ≤ 8 GiB per job"
    text = rb.block({"mechanisms": []}, None, None, [mech, sgd])
    assert "**Targets**" in text and "1 of 2 met" in text and "(not met)" in text and "(met)" in text
    run = {
        "totals": {"jobs": 3, "cpu_s": 600.0},
        "cpus": 2,
        "figures": [],
        "measured_at": "2026-11-26T16:00:00+00:00",
        "machine": "x86_64, AMD EPYC (CPython 3.11.7, numpy 2.4.6)",
    }
    text = rb.block({"mechanisms": []}, run, None, None)
    assert (
        "(measured 2026-11-26 on x86_64, AMD EPYC (CPython 3.11.7, numpy 2.4.6))" in text
    )  # runs name their processor
    run["totals"] |= {"before_cpu_s": 1200.0, "before_machine": "x86_64 (CPython 3.11.7, numpy 2.4.6)"}
    text = rb.block({"mechanisms": []}, run, None, None)
    assert "(20.0 min in the previous round, on x86_64 (CPython 3.11.7, numpy 2.4.6))" in text
    assert "before this round" not in text  # another processor: not a speed-up of the code
    run["totals"]["before_machine"] = run["machine"]
    assert ", 20.0 min before this round" in rb.block({"mechanisms": []}, run, None, None)


def test_the_sgd_pass_measurement_prices_one_pass_for_all_settings_and_the_blas_reference():
    """timing/sgd_pass.json's memory-against-cache ratios and BLAS reference enter the IPUMS target's
    arithmetic: the non-private reference scaled to the BLAS rate, the rest of the run as measured."""
    sgd_pass = {
        "rows": [
            {"G": 2, "census_ns_per_row": 44.0, "cache_ns_per_row": 40.0, "ratio": 1.1},
            {"G": 94, "census_ns_per_row": 40.0, "cache_ns_per_row": 40.0, "ratio": 1.0},
        ],
        "fused_saving_at_most": 4.0 / 44.0,
        "blas_unclipped_ns_per_row": 10.0,
    }
    # free 4,000 s of a 7,200 s floor: at the BLAS rate (10/40) the reference takes 1,000 s, the run 4,200 s
    note = tg.sgd_pass_note(sgd_pass, free=4000.0, floor=7200.0, cpus=2)
    assert "1.00–1.10× as much per row" in note and "save at most 9 %" in note
    assert "10.0 ns per row against the compiled steps' 40.0:" in note  # no numpy clipped rate recorded
    clipped = tg.sgd_pass_note({**sgd_pass, "numpy_clipped_ns_per_row": 90.0}, free=4000.0, floor=7200.0, cpus=2)
    assert "compiled steps' 40.0 (numpy's, with the clipping: 90.0)" in clipped
    assert "1.2 CPU-hours, 0.6 h on 2 cores" in note
    assert tg.sgd_pass_note(None, 1.0, 2.0, 2) == ""


def test_an_incomplete_ipums_run_never_meets_or_decides_the_every_figure_target():
    figures = {"cpus": 2, "totals": {"jobs": 1, "cpu_s": 600.0, "max_rss_mb": 1.0}, "figures": []}
    job = {"job": "ipums_br__pm", "projected_cpu_s_full_size": 600.0, "fits": 250, "scaled": True}
    ipums = {
        "meta": {"fraction": 1, "figures_not_run": ["ldpfl/fig8"]},
        "totals": {"ipums_panels_projected_cpu_s": 600.0, "peak_rss_mb": 1.0},
        "figures": [{"figure": "p/f", "jobs": [job]}],
    }
    every = tg.every_figure_target(figures, ipums)  # 1,200 s CPU measured: under 1 h, but incomplete
    assert not every["met"] and every["explanation"].startswith("NOT DECIDED")
    assert every["measured"].startswith("at least") and "WITHOUT ldpfl/fig8" in every["measured"]
    ipums["totals"]["ipums_panels_projected_cpu_s"] = job["projected_cpu_s_full_size"] = 9000.0
    every = tg.every_figure_target(figures, ipums)  # already over the target without the missing figure
    assert not every["met"] and not every["explanation"].startswith("NOT DECIDED")


def test_one_run_of_the_whole_workflow_decides_the_every_figure_target():
    """ipums_run.py --everything: its one run's wall decides the row (no sum of two runs counting the
    shared jobs twice); a record that is not one complete run at the papers' sizes, or comes from
    another processor, is not used."""
    machine = "x86_64, AMD EPYC (CPython 3.11.7, numpy 2.4.6)"
    figures = {
        "cpus": 2,
        "machine": machine,
        "totals": {"jobs": 1, "cpu_s": 600.0, "max_rss_mb": 1.0},
        "figures": [],
        "accounts": {"totals": {"run_wall_s": 500.0}},
    }
    job = {"job": "ipums_br__pm", "projected_cpu_s_full_size": 4000.0, "fits": 250, "scaled": True}
    ipums = {
        "meta": {"fraction": 1, "together_wall_s": 2500.0, "machine": machine},
        "totals": {"ipums_panels_projected_cpu_s": 4000.0, "peak_rss_mb": 1.0},
        "figures": [{"figure": "p/f", "jobs": [job]}],
    }
    every = tg.every_figure_target(figures, ipums)
    assert every["met"] and "measured wall: 50 min (the offline run 8.3 min" in every["measured"]
    whole = {
        "meta": {"fraction": 1, "machine": machine, "everything": {"wall_s": 3720.0, "cpu_s": 7300.0}},
        "totals": {"peak_rss_mb": 9000.0},
    }
    every = tg.every_figure_target(figures, ipums, everything=whole)
    assert not every["met"]  # the one run took 62 min: what a user waits, whatever the sum says
    assert "measured wall: 62.0 min, 122 min CPU (one Snakemake run of the whole workflow" in every["measured"]
    assert not tg.memory_target(figures, ipums, whole)["met"]  # its peak counts too
    for meta in ({"collected": True}, {"fraction": 0.5}, {"machine": "x86_64, Intel Xeon (CPython)"}):
        other = {**whole, "meta": {**whole["meta"], **meta}}
        assert tg.every_figure_target(figures, ipums, everything=other)["met"], meta
    # the README's performance block says it too
    whole["meta"]["measured_at"], whole["totals"]["cores"] = "2026-11-27T03:50:00+0000", 2
    text = rb.block({"mechanisms": []}, None, None, None, whole)
    assert "The whole workflow in one run" in text and "62.0 min wall, 122 min CPU on 2 cores" in text
    assert "whole workflow" not in rb.block({"mechanisms": []}, None, None, None, {**whole, "meta": {"fraction": 1}})


def test_cpu_accounts_add_up_to_the_run_and_split_fixed_cost_from_work(tmp_path):
    """Issue 27.1: Snakemake's own CPU + every job's line + what lies outside them is the run's CPU;
    a job's fixed cost is its CPU up to ready(); the floors are priced per job where modelled."""
    logs = tmp_path / "logs"
    (logs / "dct" / "fig2").mkdir(parents=True)
    (logs / "report").mkdir()
    line = "2026-01-01 INFO ldprepro: resources: cpu_s={} wall_s={} max_rss_mb={} setup_cpu_s={} rule={}\n"
    (logs / "dct" / "fig2" / "synth__pm.log").write_text("started\n" + line.format(10.0, 6.0, 300.0, 0.8, "figure_job"))
    (logs / "dct" / "fig2" / "figure.log").write_text(
        line.format(3.0, 4.0, 250.0, 1.5, "figure_dct_fig2").replace("\n", " sys_cpu_s=0.250\n")
    )
    (logs / "report" / "old.log").write_text("resources: cpu_s=2.0 wall_s=2.0 max_rss_mb=100.0\n")  # before ready()
    (logs / "report" / "none.log").write_text("no resources line\n")
    jobs = ca.read_job_logs(logs)
    assert sorted(jobs["log"]) == ["dct/fig2/figure", "dct/fig2/synth__pm", "report/old"]
    # the families the workflow sizes the jobs as (ldprepro.pipeline.resources.rule_family): a figure
    # job's its kind's, a render rule's "render", a benchmark job's its task's
    jobs["family"] = ca.job_families(jobs, {"dct": {"fig2": {"kind": "mean"}}})
    assert set(jobs["family"]) == {"figure_job.mean", "render", "?"}
    bench = pd.DataFrame(
        {
            "log": ["benchmark/frequency/plane__zipf", "benchmark/mean/adult", "x/fig1/synth"],
            "rule": ["benchmark_job_frequency_plane__zipf", "benchmark_job_mean_adult", "panel_job_x_fig1"],
        }
    )
    families = ca.job_families(bench, {"papers": {"x": {"fig1": {"kind": "sgd"}}}})
    assert families == ["benchmark_job.frequency", "benchmark_job.mean", "figure_job.sgd"]
    model = {"dct/fig2/synth__pm": {"fits": 0, "flops": 0.0, "random_numbers": 1e9}}
    jobs["floor_s"] = ca.job_floors(jobs, model.get, 2e-9, 1e-9, {}, 1e-10)
    run = {"snakemake_cpu_s": 4.0, "children_cpu_s": 20.0, "wall_s": 12.0, "cores": 2, "command": "snakemake"}
    acc = ca.accounts(jobs, run)
    t = acc["totals"]
    assert t["jobs_cpu_s"] == 15.0 and t["run_cpu_s"] == 24.0 and t["outside_jobs_cpu_s"] == 5.0
    assert t["setup_cpu_s"] == 2.3 and t["jobs_without_setup"] == 1
    assert t["fixed_cpu_s"] == 4.0 + 2.3 + 5.0 and abs(t["fixed_share"] - 11.3 / 24.0) < 1e-12
    assert t["floor_s"] == 2.0 and t["floor_jobs_cpu_s"] == 10.0  # 1e9 uniforms at 2 ns
    by_family = {r["family"]: r for r in acc["rules"]}
    assert by_family["figure_job.mean"]["work_cpu_s"] == 9.2
    text = "\n".join(ca.markdown(acc, 2e-9, 1e-9))
    assert "**47.1% of the run's CPU**" in text and "| figure_job.mean | 1 | 10.0 s | 0.8 s | 9.2 s |" in text
    assert t["sys_cpu_s"] == 0.25 and t["jobs_with_sys"] == 1
    assert "0.2 s was the kernel's (system time" in text and "1 of 3 job logs report it" in text


def test_the_lremh_floor_counts_two_multiply_adds_per_user_and_candidate_per_em_iteration(tmp_path):
    """LREMH's floor is its EM iterations' arithmetic, 2·N·m per iteration on m candidates, from the
    iterations and candidates its jobs recorded in the AVD figures' per-method tables under
    results/lremh/<figure>/, keyed by the job's log name; the LASSO (0 iterations) adds nothing."""
    import pandas as pd

    def table(*estimates):  # (rep, n_users, candidates, iterations)
        rows = []
        for rep, n, m, t in estimates:
            key = {"rep": rep, "eps": 1.0, "f": 0.3, "k": 2, "n_users": n, "mechanism": "x"}
            rows += [{**key, "metric": "candidates", "value": m}, {**key, "metric": "iterations", "value": t}]
            rows.append({**key, "metric": "avd", "value": 0.1})
        return pd.DataFrame(rows)

    tables = {
        "fig4/adult__em": table((0, 100, 16, 1), (1, 100, 16, 3)),
        "fig4/adult__lasso": table((0, 100, 16, 0)),
        "fig2/adult__em": pd.DataFrame({"metric": ["cost_ops"], "value": [5.0], "n_users": [100]}),
        "fig3/nltcs_x__lremh": table((0, 50, 4, 10)),
        "fig3/claims": table((0, 10**6, 10**6, 10**6)),  # a claims table, not a job's
    }
    for name, frame in tables.items():
        path = tmp_path / "lremh" / f"{name}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(path)
    assert ca.lremh_em_multiply_adds(tmp_path) == {
        "lremh/adult": 2 * 100 * 16 * 4.0,
        "lremh/nltcs_x": 2 * 50 * 4 * 10.0,
    }
    priced = ca.job_floors(
        pd.DataFrame({"log": ["lremh/adult", "other"]}), lambda log: None, 1.0, 1.0, {"lremh/adult": 1e9}, 2e-10
    )
    assert priced.iloc[0] == 0.2 and math.isnan(priced.iloc[1])  # at the matrix-product rate, not the others


def test_the_benchmark_jobs_floor_is_their_recorded_draws(tmp_path):
    """benchmark_draws: a mean job needs one uniform per reported user per repetition, a frequency job
    one random number per support count per repetition, from the sq_error rows it recorded (theory
    rows and other tasks count nothing; a (k, ε)-plane job counts every k of its distribution);
    job_floors prices them at the uniform rate."""
    import pandas as pd

    def rows(n_rows, users, k, theory=2):
        key = {"eps": 1.0, "n_users": users, "n_attributes": k, "mechanism": "pm"}
        return pd.DataFrame(
            [{**key, "rep": r, "metric": "sq_error", "value": 0.1} for r in range(n_rows)]
            + [{**key, "rep": 0, "metric": "sq_error_theory", "value": 0.1}] * theory
        )

    for name, frame in {
        "mean/adult__age": rows(3, 5000, 1),
        "frequency/adult__sex": rows(4, 48842, 2),
        "sgd/adult": rows(5, 100, 9),
        "frequency/plane__zipf__k2": rows(2, 500, 2),  # one distribution's plane panels: one job
        "frequency/plane__zipf__k64": rows(2, 500, 64),
    }.items():
        path = tmp_path / "benchmark" / f"{name}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(path)
    draws = ca.benchmark_draws(tmp_path)
    assert draws == {  # by job: one per task × dataset, one per plane distribution
        "benchmark/mean/adult": 3 * 5000.0,
        "benchmark/frequency/adult": 4 * 2.0,
        "benchmark/frequency/plane__zipf": 2 * 2.0 + 2 * 64.0,
    }
    priced = ca.job_floors(
        pd.DataFrame({"log": ["benchmark/mean/adult", "benchmark/sgd/adult"]}),
        lambda log: None,
        2e-9,
        1.0,
        {},
        1.0,
        draws,
    )
    assert priced.iloc[0] == pytest.approx(3 * 5000 * 2e-9) and math.isnan(priced.iloc[1])


def test_the_suite_target_reads_pytests_summary_line(tmp_path):
    log = tmp_path / "ci.log"
    log.write_text("....\n=== 2,126 passed\n" + "2126 passed, 3 skipped, 1 warning in 543.21s (0:09:03)\n")
    rec = st.main(["--log", str(log), "--out", str(tmp_path / "suite.json")])
    assert (rec["passed"], rec["skipped"], rec["failed"], rec["pytest_seconds"]) == (2126, 3, 0, 543.21)
    assert tg.suite_target(rec)["met"] and tg.suite_target(rec)["measured"].startswith("9.1 min, 543 s (2,126 passed")
    assert not tg.suite_target({**rec, "failed": 1})["met"]
    assert not tg.suite_target({**rec, "pytest_seconds": 601.0})["met"]


def test_timing_records_name_the_processor(tmp_path):
    """Records of different sessions may come from different processors of one machine kind: the
    timing scripts name it from /proc/cpuinfo's model name (else "unknown processor" or platform's)."""

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9R14\nflags\t\t: fpu\n")
    assert machine.cpu_model(info) == "AMD EPYC 9R14"
    info.write_text("processor\t: 0\nmodel name\t:\n")
    assert machine.cpu_model(info) == (machine.platform.processor() or "unknown processor")
    assert machine.cpu_model(tmp_path / "absent") == (machine.platform.processor() or "unknown processor")
    assert machine.cpu_model() in machine.describe(numpy="2.4.6") and "numpy 2.4.6" in machine.describe(numpy="2.4.6")


def test_ipums_record_names_its_machine_and_the_wall_of_one_run():
    """ipums_results.md says where it was measured and, for one complete run (not merged, not
    collected from logs), the wall time of all its figures."""
    run = ipums_run
    job = {"job": "ipums_br__pm", "n_users": 10, "dims": 2, "s": 60.0, "cpu_time_s": 55.0, "max_rss_mb": 100.0}
    job |= {"fits": 1, "flops": 1.0, "random_numbers": 1.0, "projected_cpu_s_full_size": 55.0}
    record = {
        "meta": {"fraction": 1.0, "scale": "paper", "startup_cpu_s": 0.5, "collected": False},
        "figures": [
            {"figure": "p/f1", "wall_s": 1800.0, "jobs": [job], "peak_rss_mb": 100.0},
            {"figure": "p/f2", "wall_s": 600.0, "jobs": [job], "peak_rss_mb": 100.0},
        ],
        "data_jobs": [],
        "totals": {"cores": 2, "measured_cpu_s": 110.0, "projected_hours_on_cores": 0.1, "peak_rss_mb": 100.0}
        | {"ipums_panels_projected_cpu_s": 110.0},
    }
    record["meta"] |= {"measured_at": "2026-11-26T17:33:00+0000", "machine": "x86_64, AMD EPYC (CPython 3.11.7)"}
    text = run.render(record)
    assert "Measured 2026-11-26 on x86_64, AMD EPYC (CPython 3.11.7)." in text
    assert "One run: the 2 figures one after another, each a Snakemake run on 2 cores, 40.0 min wall in all" in text
    # the figures together in one Snakemake run (--together): that run's wall, the figures' summed job wall
    together = {**record, "meta": {**record["meta"], "together_wall_s": 1500.0}}
    text = run.render(together)
    assert "One run: the 2 figures together, one Snakemake run on 2 cores as a user runs them, 25.0 min wall" in text
    assert "one after another" not in text and "| figure | jobs | wall s (summed job wall) |" in text
    record["meta"]["combined_from"] = ["a.json", "b.json"]
    assert "One run" not in run.render(record)
    assert "One run" not in run.render({**together, "meta": {**together["meta"], "collected": True}})


def test_the_ipums_figures_target_is_decided_by_one_measured_run():
    """Issue 27's own target: the figures with an IPUMS or WISDM panel, measured in one complete run
    at the papers' sizes, in ≤ 1 h wall; a merged, collected, partial or projected record decides nothing."""
    job = {"job": "ipums_br__pm", "s": 60.0, "cpu_time_s": 55.0, "max_rss_mb": 100.0}
    ipums = {
        "meta": {"fraction": 1.0, "scale": "paper"},
        "figures": [
            {"figure": "p/f1", "wall_s": 2000.0, "jobs": [job]},
            {"figure": "p/f2", "wall_s": 1700.0, "jobs": [job]},
        ],
        "totals": {"cores": 2, "measured_cpu_s": 7000.0},
    }
    row = tg.ipums_figures_target(ipums)  # one after another: 3,700 s
    assert not row["met"] and row["measured"].startswith("61.7 min wall, 117 min CPU (the figures one after another")
    assert "cannot take less than 58.3 min" in row["explanation"]
    together = {**ipums, "meta": {**ipums["meta"], "together_wall_s": 3580.0}}
    row = tg.ipums_figures_target(together)
    assert row["met"] and row["measured"].startswith(
        "59.7 min wall, 117 min CPU (the figures together in one Snakemake"
    )
    assert not tg.ipums_figures_target({**together, "meta": {**together["meta"], "together_wall_s": 3601.0}})["met"]
    for meta in ({"combined_from": ["a", "b"]}, {"collected": True}, {"figures_not_run": ["p/f3"]}, {"fraction": 0.05}):
        row = tg.ipums_figures_target({**together, "meta": {**together["meta"], **meta}})
        assert not row["met"] and row["explanation"].startswith("NOT DECIDED")
    assert tg.ipums_run_wall(together) == 3580.0 and tg.ipums_run_wall(ipums) == 3700.0


def _offline_run(wall_s: float, cpu_s: float) -> tuple[dict, dict]:
    """(accounts' totals, figure_times record) of an offline run on 2 cores taking ``wall_s`` and ``cpu_s``."""
    totals = {
        "run_wall_s": wall_s, "run_cpu_s": cpu_s, "cores": 2, "jobs": 6, "load_before": 0.1, "fixed_cpu_s": 3.0,
        "snakemake_cpu_s": 1.0, "setup_cpu_s": 2.0, "outside_jobs_cpu_s": 0.0, "work_cpu_s": cpu_s - 3.0,
        "floor_s": 60.0,
    }  # fmt: skip
    return totals, {"cpus": 2, "figures": [{"floor_cpu_s": 50.0, "cpu_over_floor": 1.2}], "totals": {}}


def test_the_extra_repetitions_are_priced_from_the_compute_jobs_work(tmp_path):
    """papers_reps: a figure with test_reps / claim_reps above its paper's reps has its compute jobs'
    work (CPU after start-up, render jobs excluded) × (1 − reps/run_reps) priced; the offline target
    states it as a projection beside the measured run."""
    config = {
        "seed": 1,
        "hiera": {"fig2": {"reps": 100, "test_reps": 400}, "fig3": {"reps": 100}},
        "bshp": {"fig4": {"reps": 20, "claim_reps": 500}, "fig5": {"reps": 20, "claim_reps": 10}},
    }
    assert [(r["paper"], r["figure"], r["key"]) for r in pr.extra_repetitions(config)] == [
        ("hiera", "fig2", "test_reps"),
        ("bshp", "fig4", "claim_reps"),
    ]
    logs = pd.DataFrame(
        [
            {"log": "hiera/fig2/synth_a", "rule": "panel_job_hiera_fig2", "cpu_s": 40.5, "setup_cpu_s": 0.5},
            {"log": "hiera/fig2/synth_b", "rule": "panel_job_hiera_fig2", "cpu_s": 20.5, "setup_cpu_s": 0.5},
            {"log": "hiera/fig2/figure", "rule": "figure_hiera_fig2", "cpu_s": 4.0, "setup_cpu_s": 0.8},
            # a job of one mechanism (a dataset marked one_job_per_mechanism) computes too
            {"log": "hiera/fig2/synth_c__pm", "rule": "figure_job", "cpu_s": 6.5, "setup_cpu_s": 0.5},
            {"log": "hiera/fig3/synth_a", "rule": "panel_job_hiera_fig3", "cpu_s": 9.0, "setup_cpu_s": 0.5},
            {"log": "bshp/fig4/sf", "rule": "bshp_job_fig4", "cpu_s": 25.4, "setup_cpu_s": 0.4},
        ]
    )
    priced = pr.price(config, logs)
    by = {r["figure"]: r for r in priced["figures"]}
    assert by["fig2"]["jobs"] == 3 and by["fig2"]["work_cpu_s"] == 66.0 and by["fig2"]["extra_cpu_s"] == 49.5
    assert by["fig4"]["extra_cpu_s"] == 25.0 * (1 - 20 / 500)
    assert priced["saved_cpu_s"] == 49.5 + 24.0
    text = pr.markdown(priced, 300.0, 2)
    assert "In all **73.5 s**" in text and "about 226.5 s CPU, at least 1.9 min on 2 cores (not measured)" in text
    totals, figures = _offline_run(160.0, 300.0)
    plain = tg.offline_target({**figures, "accounts": {"totals": totals}})["explanation"]
    assert "papers' repetitions" not in plain
    note = tg.offline_target({**figures, "accounts": {"totals": totals, "extra_repetitions": priced}})["explanation"]
    assert note.startswith(plain) and "1.2 min CPU is the repetitions beyond the papers'" in note
    assert "(hiera fig2, bshp fig4: `test_reps`/`claim_reps`)" in note and "at least 1.9 min on 2 cores" in note


def test_the_papers_repetitions_overlay_and_its_measured_run(tmp_path):
    """papers_reps writes the overlay that sets each such figure's test_reps / claim_reps to its
    paper's reps (a figure already at its paper's repetitions is left out); the offline target reports
    the run measured with it, and says the 5 minutes are met there only when they are."""
    import yaml

    config = {
        "seed": 1,
        "hiera": {"fig2": {"reps": 100, "test_reps": 400}, "fig3": {"reps": 100}},
        "bshp": {"fig4": {"reps": 20, "claim_reps": 500}, "fig5": {"reps": 20, "claim_reps": 10}},
    }
    assert pr.overlay(config) == {"hiera": {"fig2": {"test_reps": 100}}, "bshp": {"fig4": {"claim_reps": 20}}}
    src, out = tmp_path / "config.yaml", tmp_path / "overlay.yaml"
    src.write_text(yaml.safe_dump(config))
    pr.main(["--config", str(src), "--overlay", str(out)])
    assert yaml.safe_load(out.read_text()) == pr.overlay(config)
    src.write_text(yaml.safe_dump({"hiera": {"fig3": {"reps": 100}}}))
    with pytest.raises(SystemExit, match="nothing to write"):
        pr.main(["--config", str(src), "--overlay", str(out)])
    totals, figures = _offline_run(340.0, 680.0)
    run = {"command": "snakemake --cores 2 --configfile x.yaml", "wall_s": 285.0, "snakemake_cpu_s": 3.0,
           "children_cpu_s": 555.0, "cores": 2, "note": "fresh clone at abc"}  # fmt: skip
    row = tg.offline_target({**figures, "accounts": {"totals": totals}}, run)
    assert not row["met"]  # the target is the default configuration's run
    assert row["measured"].endswith("; at the papers' repetitions (measured): 4.8 min wall")
    assert "at the papers' repetitions (`snakemake --cores 2 --configfile x.yaml`" in row["explanation"]
    assert "fresh clone at abc): 4.8 min wall, 9.3 min CPU on 2 cores — the 5 minutes are met" in row["explanation"]
    slow = tg.offline_target({**figures, "accounts": {"totals": totals}}, {**run, "wall_s": 320.0})["explanation"]
    assert "5.3 min wall" in slow and "met" not in slow.split("Measured at the papers' repetitions")[1]


def test_a_floor_price_is_the_minimum_over_repeats_spread_in_time():
    """bench_common.min_cpu_spread: a warm-up call, then ``repeats`` calls ``pause_s`` apart (a slow
    spell of the machine cannot cover them all), the smallest CPU time returned."""
    import time

    bc = bench_common
    calls = []
    cpu = bc.min_cpu_spread(lambda: calls.append(time.perf_counter()), repeats=4, pause_s=0.02)
    assert len(calls) == 5 and 0.0 <= cpu < 0.01
    assert min(b - a for a, b in zip(calls[1:], calls[2:])) >= 0.02
    assert calls[1] - calls[0] < 0.02  # no pause after the warm-up
