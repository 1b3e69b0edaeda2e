"""Issue 54 items 2 and 3: the configuration is bounded at load (YAML aliases expanded) and holds no
text that would end the <script> block of Snakemake's HTML report."""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml
from workflow_cmd import snakemake_cmd

from ldprepro.pipeline.config_guard import MAX_VALUES, ConfigError, check_config, expanded_size

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]


def billion_laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + f"\nbomb: *a{levels - 1}\n"


def test_expanded_size_counts_aliases_without_expanding_them():
    bomb = yaml.safe_load(billion_laughs())
    assert expanded_size(bomb["a1"]) == 1 + 9 * 10
    assert expanded_size(bomb) > 9**9  # counted in time proportional to the distinct objects
    assert expanded_size(yaml.safe_load((REPO / "config.yaml").read_text())) < MAX_VALUES / 50


def test_a_billion_laughs_configfile_is_refused_at_load_naming_the_key(tmp_path):
    """As reported: it grew past 2.2 GB with no message (the schema validation printed it)."""
    (tmp_path / "bomb.yaml").write_text(billion_laughs())
    cmd = snakemake_cmd("-n", "--configfile", str(tmp_path / "bomb.yaml"), workdir=tmp_path)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "YAML aliases" in out and "'a8'" in out and f"{MAX_VALUES:,}" in out, out[-3000:]


@pytest.mark.parametrize("text", ["a </script><img src=x onerror=alert(1)>", "x </SCRIPT >", "<!-- <script>"])
def test_text_that_would_end_the_reports_script_block_is_refused_naming_the_key(text):
    config = {"experiments": {"x1": {"claims": [{"claim": "fine"}, {"claim": text}]}}}
    with pytest.raises(ConfigError, match=r"config key experiments\.x1\.claims\[1\]\.claim: .*<script>"):
        check_config(config)
    check_config({"experiments": {"x1": {"claims": [{"claim": "PM < Laplace <script> at ε > 1"}]}}})


# ------------------------------------------------------------------ claims outside their figure's scope

EXPERIMENT = {
    "kind": "mean",
    "title": "t",
    "panels": [{"dataset": "synth_uniform"}],
    "mechanisms": ["laplace", "pm"],
    "eps": [0.5, 2],
    "reps": 20,
    "metric": "sq_error",
}


def _claim(**kw) -> dict:
    return {"claim": "PM beats the rest", "scope": "every ε", "test": "outperform", "mechanism": "pm", **kw}


@pytest.mark.parametrize(
    "decl,named",
    [
        (_claim(against=["duchi"]), "against 'duchi'"),
        (_claim(mechanism="hm_tp", against=["laplace"]), "mechanism 'hm_tp'"),
        ({**_claim(against=["laplace"]), "for_each": {"mechanism": ["pm", "sw"]}}, "mechanism 'sw'"),
        (_claim(against=["laplace"], eps={"min": 4}), "eps {'min': 4} selects none of the figure's ε (0.5, 2)"),
    ],
)
def test_a_claim_about_what_its_figure_does_not_run_is_refused_naming_it(decl, named):
    from ldprepro.claims.declarations import DeclarationError, check_in_scope, validate

    decls = validate([decl], "config.yaml experiments.x1.claims", import_functions=False)
    with pytest.raises(DeclarationError, match=re.escape(named)) as err:
        check_in_scope(decls, EXPERIMENT, "config.yaml experiments.x1.claims")
    assert "config.yaml experiments.x1.claims[" in str(err.value)
    ok = validate([_claim(against=["laplace"], eps={"min": 2})], "x", import_functions=False)
    check_in_scope(ok, EXPERIMENT, "x")  # in scope: nothing raised
    check_in_scope([{**decl, "if_present": ["duchi"]}], EXPERIMENT, "x")  # declared as maybe absent


def test_the_workflow_refuses_it_at_load(tmp_path):
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["experiments"] = {"x1": {**EXPERIMENT, "claims": [_claim(against=["duchi"])]}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
    proc = subprocess.run(snakemake_cmd("-n", workdir=tmp_path), capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "config.yaml experiments.x1.claims[0]" in out and "'duchi'" in out, out[-3000:]
