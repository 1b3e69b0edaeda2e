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
    (workdir / "config.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
    targets = ["figures/experiments/pm_vs_laplace.png", "figures/toy/fig1.png", "results/toy/fig1/caption.rst"]
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
