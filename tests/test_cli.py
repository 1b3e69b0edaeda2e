"""``ldprepro run`` is a thin convenience: Snakemake's arguments pass through unchanged (a later
``--`` included), nothing is deleted, the exit status is Snakemake's."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ldprepro.pipeline import cli
from ldprepro.pipeline.status import read_unavailable, record_unavailable


def test_arguments_pass_through_with_every_later_double_dash(monkeypatch):
    seen = {}
    monkeypatch.setattr(subprocess, "call", lambda cmd, cwd: seen.update(cmd=cmd) or 7)
    assert cli.main(["run", "--cores", "3", "--", "--config", "scale=smoke", "--", "figures/dct/fig1.png"]) == 7
    assert seen["cmd"] == [
        sys.executable,
        "-m",
        "snakemake",
        "--cores",
        "3",
        "--config",
        "scale=smoke",
        "--",
        "figures/dct/fig1.png",
    ]
    assert cli.main(["run", "-n"]) == 7 and seen["cmd"][-3:] == ["--cores", "all", "-n"]
    with pytest.raises(SystemExit):
        cli.main([])


def test_run_deletes_nothing_before_snakemake_holds_its_lock(tmp_path, monkeypatch):
    """A second run started while the first holds the lock must not touch the first run's state."""
    record = record_unavailable("wisdm", "no network", root=tmp_path)
    monkeypatch.setattr(subprocess, "call", lambda cmd, cwd: 1)  # Snakemake refusing the lock
    assert cli.run("2", [], workdir=tmp_path) == 1
    assert record.exists() and [r["dataset"] for r in read_unavailable(tmp_path)] == ["wisdm"]
