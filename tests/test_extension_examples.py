"""The extension path, run as the docs give it: a user's experiment with its own claims
(docs/extending.md, "Your own claims") and a toy sixth paper added from a folder under tests/ with
no edit under src/ or workflow/ (docs/extending.md, "Adding a paper"), built by the real workflow
at smoke scale."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_pipeline_smoke import _mirror_env, smoke_config
from workflow_cmd import snakemake_cmd

REPO = Path(__file__).resolve().parents[1]
TOY = REPO / "tests/toy_paper/config.yaml"


def docs_example() -> dict:
    """The YAML block that follows ``<!-- example: user-experiment -->`` in docs/extending.md."""
    text = (REPO / "docs/extending.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- example: user-experiment -->\s*```yaml\n(.*?)```", text, re.S)
    assert block, "docs/extending.md lost its user-experiment example"
    return yaml.safe_load(block.group(1))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("extension")
    cfg = smoke_config()
    cfg.update(docs_example())
    # the same experiment with PM discretised (Alg. 5): its Laplace and HM-TP jobs are the first's
    # computation, shared (ldprepro.pipeline.shared_jobs), its PM job its own
    again = {k: v for k, v in cfg["experiments"]["pm_vs_laplace"].items() if k != "claims"}
    cfg["experiments"]["pm_vs_laplace_discretised"] = {
        **again,
        "title": "PM discretised",
        "discretize": 10,
        "discretize_mechanisms": ["pm"],
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
    targets = [
        "figures/experiments/pm_vs_laplace.png",
        "figures/experiments/pm_vs_laplace_discretised.png",
        "figures/toy/fig1.png",
        "results/toy/fig1/caption.rst",
    ]
    cmd = snakemake_cmd("--cores", "2", "--configfile", str(TOY), "--", *targets)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_mirror_env(), cwd=workdir)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return workdir


@pytest.mark.slow
def test_the_docs_user_experiment_gets_its_claims_decided_as_a_user_role(built):
    claims = pd.read_parquet(built / "results/experiments/pm_vs_laplace/claims.parquet").set_index("claim")
    assert set(claims.index) == {
        "PM estimates the mean more accurately than Laplace at every ε",
        "HM-TP estimates the mean more accurately than Laplace at every ε",
    }
    assert (claims["data_role"] == "user").all()
    # PM's variance is below Laplace's 8/ε² everywhere on [−1, 1]: on 200 paired repetitions the
    # ratio of mean squared errors is far below 1 at both ε
    assert (claims["verdict"] == "holds").all(), claims[["verdict", "evidence"]]
    assert (built / "figures/experiments/pm_vs_laplace.png").stat().st_size > 1000


@pytest.mark.slow
def test_a_toy_paper_from_a_folder_builds_with_its_false_claim_refuted(built):
    claims = pd.read_parquet(built / "results/toy/fig1/claims.parquet").set_index("claim")
    assert claims.loc["PM's MSE is smaller than Laplace's at every ε", "verdict"] == "holds"
    assert claims.loc["Laplace's MSE is smaller than PM's at every ε", "verdict"] == "does not hold"
    assert (claims["data_role"] == "paper").all()
    caption = (built / "results/toy/fig1/caption.rst").read_text(encoding="utf-8")
    assert "does not hold" in caption and "Toy paper Fig. 1" in caption
    assert (built / "figures/toy/fig1.svg").stat().st_size > 1000


@pytest.mark.slow
def test_a_second_figure_with_the_same_job_reuses_its_rows_and_computes_only_its_own(built):
    """Two user experiments that differ only in PM's discretisation: the second's Laplace and HM-TP
    files are the first's rows relabelled (its log says whose), its PM rows its own draws."""
    first, second = built / "results/experiments/pm_vs_laplace", built / "results/experiments/pm_vs_laplace_discretised"
    for mechanism in ("laplace", "hm_tp"):
        a = pd.read_parquet(first / f"synth_uniform__{mechanism}.parquet")
        b = pd.read_parquet(second / f"synth_uniform__{mechanism}.parquet")
        assert (b["figure"] == "pm_vs_laplace_discretised").all()
        pd.testing.assert_frame_equal(a.drop(columns="figure"), b.drop(columns="figure"))
    log = (built / "logs/experiments/pm_vs_laplace_discretised/synth_uniform.log").read_text(encoding="utf-8")
    assert "results/experiments/pm_vs_laplace/synth_uniform__laplace.parquet (the same computation)" in log
    pm_a = pd.read_parquet(first / "synth_uniform__pm.parquet")
    pm_b = pd.read_parquet(second / "synth_uniform__pm.parquet")
    assert "discretize" in pm_b and (pm_b["discretize"] == 10).all() and "discretize" not in pm_a
    assert not pm_a["value"].reset_index(drop=True).equals(pm_b["value"].reset_index(drop=True))
    assert (built / "figures/experiments/pm_vs_laplace_discretised.png").stat().st_size > 1000
