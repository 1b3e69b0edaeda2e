"""Issue 54 items 2 and 3: the configuration is bounded at load (YAML aliases expanded) and holds no
text that would end the <script> block of Snakemake's HTML report."""

from __future__ import annotations

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
