"""Every config error names the file its entry came from (config.yaml or a `--configfile`), and a
name of the wrong kind says what it is (ldprepro.pipeline.config_origin, mechanism_names)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ldprepro.pipeline.config_origin import ConfigOrigin, check_schema
from ldprepro.pipeline.mechanism_names import BUILTIN_MECHANISMS, mechanism_problems

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow/schemas/config.schema.yaml"


def test_a_frequency_oracle_in_a_mean_figure_is_told_its_kind_and_the_user_s_file():
    cfg = {"papers": {"wang17": {"fig1": {"kind": "mean", "mechanisms": ["grr", "oue", "pm"]}}}}
    origin = ConfigOrigin([("config.yaml", {"papers": {}}), ("wang17.yaml", cfg)])
    problems = mechanism_problems(cfg, BUILTIN_MECHANISMS, origin.of)
    assert problems == [
        "wang17.yaml: grr in papers.wang17.fig1.mechanisms is a frequency oracle: use kind: frequency "
        "(a figure of frequency oracles; docs/extending.md, 'Adding a paper')",
        "wang17.yaml: oue in papers.wang17.fig1.mechanisms is a frequency oracle: use kind: frequency "
        "(a figure of frequency oracles; docs/extending.md, 'Adding a paper')",
    ]


def test_a_mechanism_in_a_frequency_figure_is_told_its_kind():
    cfg = {"experiments": {"f": {"kind": "frequency", "mechanisms": ["olh", "pm", "nope"]}}}
    problems = mechanism_problems(cfg, BUILTIN_MECHANISMS)
    assert len(problems) == 2
    assert problems[0].startswith("config.yaml: pm in experiments.f.mechanisms is a 1-D mechanism")
    assert "use kind: mean or kind: variance" in problems[0]
    assert problems[1].startswith("config.yaml: unknown frequency oracle 'nope' in experiments.f.mechanisms")


def test_a_schema_error_names_the_configfile_the_entry_came_from(tmp_path):
    user = tmp_path / "mine.yaml"
    entry = yaml.safe_load((REPO / "tests/toy_paper/config.yaml").read_text(encoding="utf-8"))
    entry["papers"]["toy"]["fig1"]["metric"] = "rmse"
    user.write_text(yaml.safe_dump(entry), encoding="utf-8")
    cfg = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    cfg.update(entry)
    origin = ConfigOrigin.from_files(REPO / "config.yaml", [user])
    with pytest.raises(ValueError, match=r"mine\.yaml: papers\.toy\.fig1\.metric: 'rmse' is not one of"):
        check_schema(cfg, SCHEMA, origin)
    cfg["papers"]["toy"]["fig1"]["metric"] = "sq_error"
    check_schema(cfg, SCHEMA, origin)  # the shipped config with the toy paper is valid


def test_the_origin_of_a_key_is_the_last_layer_that_sets_it():
    origin = ConfigOrigin(
        [
            ("config.yaml", {"a": {"b": 1, "c": 2}}),
            ("user.yaml", {"a": {"b": 3}, "p": {"x": {}}}),
            ("--config", {"s": 1}),
        ]
    )
    assert origin.of("a.b") == "user.yaml"
    assert origin.of("a.c") == "config.yaml"
    assert origin.of("p.x.mechanisms") == "user.yaml"  # the entry the key belongs to
    assert origin.of("s") == "--config"
    assert origin.of("nowhere") == "config.yaml"


def test_the_workflow_names_the_user_s_configfile_for_an_oracle_in_a_mean_figure(tmp_path):
    """`snakemake -n --configfile wang17.yaml` with GRR in a mean figure stops at load time naming
    wang17.yaml (not config.yaml) and what GRR is."""
    import subprocess

    from test_pipeline_smoke import _mirror_env, smoke_config
    from workflow_cmd import snakemake_cmd

    toy = yaml.safe_load((REPO / "tests/toy_paper/config.yaml").read_text(encoding="utf-8"))
    toy["papers"]["toy"]["fig1"]["mechanisms"] = ["grr", "pm"]
    (tmp_path / "wang17.yaml").write_text(yaml.safe_dump(toy, allow_unicode=True), encoding="utf-8")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(smoke_config(), allow_unicode=True), encoding="utf-8")
    cmd = snakemake_cmd("-n", "--configfile", "wang17.yaml")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_mirror_env(), cwd=tmp_path)
    assert proc.returncode != 0
    assert "wang17.yaml: grr in papers.toy.fig1.mechanisms is a frequency oracle: use kind: frequency" in (
        proc.stdout + proc.stderr
    )
