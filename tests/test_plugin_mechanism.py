"""Issue 18: a new mechanism is one module plus one registry line, and then the contract checker,
the audit and the benchmark all see it; a non-private one is flagged and never wins."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ldprepro import audit
from ldprepro.benchmark import runs, tables
from ldprepro.domain.mechanisms import MECHANISM_INFO, MECHANISMS, PluginError, load_plugins, register_mechanism
from ldprepro.domain.mechanisms.basic import Laplace
from ldprepro.domain.mechanisms.contract import check_mechanism
from ldprepro.domain.mechanisms.registry import plugin_files, unregister_mechanism

PLUGINS = Path(__file__).parent / "plugins"
LEAKY, TWIN = str(PLUGINS / "leaky_laplace.py"), str(PLUGINS / "laplace_twin.py")


@pytest.fixture
def plugins():
    names = load_plugins([LEAKY, TWIN])
    assert names == ["leaky_laplace", "laplace_twin"]
    yield names
    for n in names:
        unregister_mechanism(n)


def test_loading_registers_once_with_metadata(plugins):
    assert load_plugins([LEAKY, TWIN]) == []  # idempotent
    assert MECHANISM_INFO["laplace_twin"].presented_as_ldp and "tests/plugins" in MECHANISM_INFO["laplace_twin"].source
    assert {"leaky_laplace", "laplace_twin"} <= set(MECHANISMS)


def test_checker_passes_the_correct_plugin_and_reports_the_leak(plugins):
    good = check_mechanism("laplace_twin", eps_grid=(1.0,), n=50_000)
    assert good.ok, str(good)
    bad = check_mechanism("leaky_laplace", eps_grid=(1.0,), n=50_000)
    assert not bad.ok
    assert [f for f in bad.failures if "exact loss 2 > ε = 1" in f], str(bad)
    # the moments are those of a correct (2ε) Laplace: only privacy fails
    assert all("exact loss" in f for f in bad.failures), str(bad)


def test_checker_says_how_to_load_an_unregistered_plugin():
    """A name nobody registered (the plugin was not loaded) is not a bare KeyError: the message says
    to load the plugins (load_plugins, config.yaml's mechanism_plugins) and lists the known names."""
    with pytest.raises(ValueError) as err:
        check_mechanism("my_mech", eps_grid=(1.0,), n=1000)
    text = str(err.value)
    assert "'my_mech'" in text and "load_plugins([" in text and "mechanism_plugins" in text
    assert "laplace, duchi" in text and "pm_sub" in text


def test_checker_catches_a_biased_or_misdeclared_mechanism():
    class Biased(Laplace):
        def perturb(self, x, rng):
            return super().perturb(x, rng) + 0.05

    class WrongVariance(Laplace):
        def variance(self, x):
            return 0.5 * super().variance(x)

    assert any("unbiased" in f for f in check_mechanism(Biased, eps_grid=(1.0,), n=50_000).failures)
    assert any("variance at" in f for f in check_mechanism(WrongVariance, eps_grid=(1.0,), n=50_000).failures)


def test_audit_lists_plugins_and_flags_only_the_leaky_one(plugins):
    subjects = {s.name: s for s in audit.numeric_subjects(1.0, discretize_m=())}
    assert {"leaky_laplace", "laplace_twin", "pm", "dct"} <= set(subjects)
    rows = pd.DataFrame(
        audit.audit_rows(
            [subjects["leaky_laplace"], subjects["laplace_twin"]], 20_000, 5_000, 0.9999, 1, {"audit": "t"}
        )
    ).set_index("subject")
    assert rows.loc["leaky_laplace", "verdict"] == "violated"
    assert rows.loc["leaky_laplace", "exact_loss"] == pytest.approx(2.0, rel=1e-6)
    assert rows.loc["laplace_twin", "verdict"] == "holds"


def test_benchmark_includes_plugins_and_never_crowns_the_leaky_one(plugins):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 4000)})
    card = {"columns": [{"name": "x", "type": "numeric", "domain": [0.0, 1.0]}]}
    entry = {"eps": [0.5, 2.0], "reps": 200, "mechanisms": "all"}
    res = tables.combine([pd.DataFrame(runs.mean_job(entry, {"dataset": "toy", "column": "x"}, df, card, seed=2))])
    _, ranked, win = tables.analyse(res, None)
    assert {"leaky_laplace", "laplace_twin"} <= set(ranked["mechanism"])
    assert (ranked.loc[ranked["mechanism"] == "leaky_laplace", "status"] == "not LDP").all()
    assert not win["winner_set"].str.contains("leaky_laplace").any()
    # the leak buys accuracy: its MSE is below the best LDP mechanism's in every cell
    assert win["not_ldp_below_best"].str.contains("leaky_laplace").all()


def test_bad_plugins_are_refused_with_their_name(tmp_path):
    with pytest.raises(PluginError, match="nope.py: no such file"):
        load_plugins([str(tmp_path / "nope.py")])
    silent = tmp_path / "silent.py"
    silent.write_text("x = 1\n")
    with pytest.raises(PluginError, match="registered no mechanism"):
        load_plugins([str(silent)])
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(PluginError, match=r"cannot import .*broken.py.*boom"):
        load_plugins([str(broken)])
    with pytest.raises(PluginError, match="no module 'no_such_plugin_module'"):
        plugin_files(["no_such_plugin_module"])


def test_register_refuses_bad_names_and_duplicates():
    with pytest.raises(ValueError, match="already registered"):
        register_mechanism("pm", Laplace)
    with pytest.raises(ValueError, match="lower-case"):
        register_mechanism("My Mech", Laplace)
    with pytest.raises(TypeError, match="callable"):
        register_mechanism("not_callable", 3)


@pytest.mark.slow
def test_pipeline_jobs_load_plugins_and_rerun_when_a_plugin_changes(tmp_path):
    """config.yaml mechanism_plugins: the audit job (a real Snakemake job, smoke scale) loads the
    plugin and flags it; editing the plugin file reruns the job (it is in the code fingerprint)."""
    import yaml
    from test_pipeline_smoke import _mirror_env
    from workflow_cmd import snakemake_cmd

    plugin = tmp_path / "my_mech.py"
    plugin.write_text(Path(LEAKY).read_text())
    cfg = yaml.safe_load((Path(__file__).parents[1] / "config.yaml").read_text())
    cfg.update(scale="smoke", mechanism_plugins=[str(plugin)])
    cfg["audit"]["eps"] = [1.0]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
    target = "results/audit/numeric.parquet"
    env = _mirror_env()
    proc = subprocess.run(
        snakemake_cmd("--cores", "1", "--", target), cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = pd.read_parquet(tmp_path / target).set_index("subject")
    assert rows.loc["leaky_laplace", "verdict"] == "violated" and rows.loc["pm", "verdict"] == "holds"
    plugin.write_text(plugin.read_text() + "\n# edited\n")
    dry = subprocess.run(snakemake_cmd("-n", "--", target), cwd=tmp_path, env=env, capture_output=True, text=True)
    assert dry.returncode == 0 and "params have changed" in dry.stdout + dry.stderr, dry.stdout[-2000:]


def test_a_plugin_runs_in_an_experiment_and_an_unknown_name_stops_the_load(tmp_path):
    """Dry runs: a plugin listed under mechanism_plugins can be one of an experiment's mechanisms (a
    job per panel × mechanism); without the plugin the load stops naming the key and what to do."""
    import os

    import yaml
    from workflow_cmd import snakemake_cmd

    cfg = yaml.safe_load((Path(__file__).parents[1] / "config.yaml").read_text())
    cfg.update(scale="smoke", mechanism_plugins=[str(PLUGINS / "binary_rr.py")])
    cfg["dct"]["fig9"] = {
        "kind": "mean",
        "panels": [{"dataset": "synth_uniform"}],
        "mechanisms": ["binary_rr", "pm"],
        "eps": [1.0],
        "reps": 3,
        "metric": "sq_error",
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    target = "results/dct/fig9/summary.parquet"
    dry = subprocess.run(snakemake_cmd("-n", "--", target), cwd=tmp_path, env=env, capture_output=True, text=True)
    out = dry.stdout + dry.stderr
    assert dry.returncode == 0, out[-3000:]
    assert "results/dct/fig9/synth_uniform__binary_rr.parquet" in out and "synth_uniform__pm.parquet" in out
    cfg["mechanism_plugins"] = []
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
    dry = subprocess.run(snakemake_cmd("-n", "--", target), cwd=tmp_path, env=env, capture_output=True, text=True)
    out = dry.stdout + dry.stderr
    assert dry.returncode != 0
    assert "unknown mechanism 'binary_rr' in dct.fig9.mechanisms: register it under mechanism_plugins (known: " in out


@pytest.mark.slow
def test_a_broken_plugin_never_deletes_raw_downloads_and_a_good_one_reruns_no_data_job(tmp_path):
    """Issue 29.3 on Adult's downloads (smoke scale, from the mirror): adding a correct plugin reruns
    only the mechanism job (no download, no synthetic data); a plugin that fails inside jobs fails the mechanism job naming it, while a
    download that reruns (forced here, as after an update of the data code) neither loads it nor loses
    its file; a plugin that fails on import stops the run before any job, the downloads untouched."""
    import re

    import yaml
    from test_pipeline_smoke import _mirror_env
    from workflow_cmd import snakemake_cmd

    env = _mirror_env()
    cfg = yaml.safe_load((Path(__file__).parents[1] / "config.yaml").read_text())
    cfg["scale"] = "smoke"
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
    raw = ["data/raw/adult/adult.data", "data/raw/adult/adult.test"]
    records = [f.replace("data/raw/", "data/verified/") + ".json" for f in raw]  # the downloads' outputs
    targets = [*records, "data/processed/synth_uniform.parquet", "results/ldpfl/fig1/laplace.parquet"]

    def run(*args, plugin=None):
        conf = dict(cfg, mechanism_plugins=[plugin] if plugin else [])
        path = tmp_path / "with_plugin.yaml"
        path.write_text(yaml.safe_dump(conf, allow_unicode=True))
        cmd = snakemake_cmd(*args, "--configfile", str(path), "--", *targets)
        proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
        return proc, proc.stdout + proc.stderr

    proc, out = run("--cores", "2")
    assert proc.returncode == 0, out[-3000:]
    downloaded = {f: (tmp_path / f).read_bytes() for f in raw}

    proc, out = run("-n", plugin=str(PLUGINS / "binary_rr.py"))
    assert proc.returncode == 0, out[-3000:]
    table = out.split("Job stats:")[1].split("total")[0]
    jobs = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, re.MULTILINE)}
    assert jobs == {"ldpfl_fig1_mechanism": 1}, out[-3000:]

    proc, out = run(
        "--cores", "1", "--keep-going", "--forcerun", "data_fetch", plugin=str(PLUGINS / "fails_in_jobs.py")
    )
    assert proc.returncode != 0
    assert "cannot import" in out and "fails_in_jobs.py" in out and "fancy_dependency" in out, out[-3000:]
    assert "Error in rule ldpfl_fig1_mechanism" in out and "Error in rule data_fetch" not in out, out[-3000:]
    assert {f: (tmp_path / f).read_bytes() for f in raw} == downloaded

    broken = tmp_path / "broken_plugin.py"
    broken.write_text("raise RuntimeError('boom')\n")
    proc, out = run("--cores", "1", "--forcerun", "data_fetch", plugin=str(broken))
    assert proc.returncode != 0 and "cannot import" in out and "broken_plugin.py" in out and "boom" in out
    assert {f: (tmp_path / f).read_bytes() for f in raw} == downloaded
