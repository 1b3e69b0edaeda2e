"""``ldprepro run``: exit status and closing summary, with Snakemake replaced by a stub."""

from __future__ import annotations

import subprocess

import pytest

from ldprepro import cli
from ldprepro.status import read_unavailable, record_unavailable


def fake_snakemake(tmp_path, status: int, errors: list[str], unavailable: list[tuple[str, str]]):
    """A stand-in for subprocess.call that writes what a Snakemake run would leave behind."""

    def call(cmd, cwd):
        assert "--keep-going" in cmd and cmd[cmd.index("--cores") + 1] == "2"
        log = tmp_path / ".snakemake" / "log" / "2026-11-21T000000.snakemake.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("".join(f"[Sat Nov 21]\nError in rule {rule}:\n    message: None\n    jobid: 3\n"
                               f"    output: {out}\n    log: logs/x.log\nExecute 1 jobs...\n"
                               for rule, out in errors))
        for dataset, reason in unavailable:
            record_unavailable(dataset, reason, root=tmp_path)
        return status

    return call


def test_success_prints_everything_built(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(subprocess, "call", fake_snakemake(tmp_path, 0, [], []))
    assert cli.run("2", [], workdir=tmp_path) == 0
    assert "Everything was built." in capsys.readouterr().out


def test_only_unavailable_data_is_not_a_failure(tmp_path, monkeypatch, capsys):
    stale = record_unavailable("old", "left over from an earlier run", root=tmp_path)
    monkeypatch.setattr(subprocess, "call", fake_snakemake(
        tmp_path, 1, [("data_ipums", "data/processed/ipums_br.parquet, data/processed/ipums_br.json"),
                      ("data_fetch", "data/raw/wisdm/WISDM_ar_latest.tar.gz"),
                      ("data_fetch", "data/raw/wisdm/other.csv")],
        [("ipums_br", "set IPUMS_API_KEY or datasets.ipums_br.extract"), ("wisdm", "no network")]))
    assert cli.run("2", [], workdir=tmp_path) == 0
    out = capsys.readouterr().out
    assert "ipums_br: set IPUMS_API_KEY" in out
    assert not stale.exists()  # records from earlier runs are cleared first
    assert [r["dataset"] for r in read_unavailable(tmp_path)] == ["ipums_br", "wisdm"]


def test_any_other_failure_fails_the_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(subprocess, "call", fake_snakemake(
        tmp_path, 1, [("data_ipums", "data/processed/ipums_br.parquet"),
                      ("data_normalise", "data/processed/adult.parquet, data/processed/adult.json")],
        [("ipums_br", "no key")]))
    assert cli.run("2", [], workdir=tmp_path) == 1
    out = capsys.readouterr().out
    assert "1 job(s) failed for other reasons" in out
    assert "rule data_normalise: data/processed/adult.parquet" in out


def test_snakemake_failing_before_any_job_is_reported(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(subprocess, "call", fake_snakemake(tmp_path, 1, [], []))
    assert cli.run("2", [], workdir=tmp_path) == 1
    assert "failed before running any job" in capsys.readouterr().out


def test_main_parses_arguments(monkeypatch):
    seen = {}
    monkeypatch.setattr(cli, "run", lambda cores, extra: seen.update(cores=cores, extra=extra) or 0)
    assert cli.main(["run", "--cores", "3", "--", "--config", "scale=smoke"]) == 0
    assert seen == {"cores": "3", "extra": ["--config", "scale=smoke"]}
    with pytest.raises(SystemExit):
        cli.main([])
