"""Small real runs of the workflow (scale: smoke, synthetic data only, no mirror needed):

- two identical runs give byte-identical parquet, PNG and SVG files (issue 14.8);
- rerun semantics, proved with `snakemake -n` dry runs (default --rerun-triggers): a presentation
  edit (titles) reruns only the rendering job; a compute edit (ε) reruns the compute jobs; an edit of
  package code a job runs (mechanisms/piecewise.py) reruns exactly the jobs that import it (issue 15.2).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from workflow_cmd import snakemake_cmd

REPO = Path(__file__).resolve().parents[1]
# DCT Fig. 3 (synthetic GAUSS: data_synthetic + 3 mechanism jobs + rendering) and PM-OPT's density
TARGETS = ["figures/dct/fig3.png", "figures/dct/fig3.svg", "figures/ldpfl/fig4.png", "figures/ldpfl/fig4.svg"]


def snakemake(workdir: Path, *args: str, src: Path = REPO / "src") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(src), "MPLBACKEND": "Agg"}
    env.pop("IPUMS_API_KEY", None)
    cmd = snakemake_cmd(*args, workdir=workdir)
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def build(workdir: Path) -> None:
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["scale"] = "smoke"
    (workdir / "config.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
    proc = snakemake(workdir, "--cores", "2", "--", *TARGETS)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    a, b = tmp_path_factory.mktemp("run_a"), tmp_path_factory.mktemp("run_b")
    build(a)
    build(b)
    return a, b


def outputs(workdir: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(workdir)): p.read_bytes()
        for d in ("results", "figures", "data/processed")
        for p in sorted((workdir / d).rglob("*"))
        if p.is_file() and p.name != "availability.json"
    }


@pytest.mark.slow
def test_identical_runs_give_identical_bytes(two_runs):
    a, b = two_runs
    first, second = outputs(a), outputs(b)
    kinds = {Path(name).suffix for name in first}
    assert {".parquet", ".png", ".svg"} <= kinds  # every kind is compared, none vacuously
    own = [n for n in first if n.startswith("results/dct/fig3/") and not Path(n).name.startswith(".")]
    # 3 jobs + summary + claims + claim points + caption + forest plot (beside their hidden digest sidecars)
    assert len(own) == 3 + 5
    assert sorted(first) == sorted(second)
    differ = [name for name in first if first[name] != second[name]]
    assert not differ, differ


def dry_run_jobs(workdir: Path, *args: str, src: Path = REPO / "src") -> dict[str, int]:
    """{rule: job count} of a dry run (parsed from its 'Job stats' table); {} when nothing to do."""
    proc = snakemake(workdir, "-n", *args, "--", *TARGETS, src=src)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = proc.stdout + proc.stderr
    if "Nothing to be done" in text:
        return {}
    table = text.split("Job stats:")[1].split("total")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, re.MULTILINE)}


def changed_config(workdir: Path, edit) -> str:
    cfg = yaml.safe_load((workdir / "config.yaml").read_text())
    edit(cfg)
    path = workdir / "changed.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True))
    return str(path)


@pytest.mark.slow
def test_rerun_semantics_by_dry_run(two_runs, tmp_path):
    work = two_runs[0]
    assert dry_run_jobs(work) == {}  # up to date: nothing reruns without a change

    def titles(cfg):
        cfg["dct"]["fig3"]["title"] = "a new title"
        cfg["dct"]["fig3"]["ylabel"] = "a new label"
        cfg["dct"]["fig3"]["panels"][0]["title"] = "a new panel title"

    assert dry_run_jobs(work, "--configfile", changed_config(work, titles)) == {"figure_dct_fig3": 1}

    def eps(cfg):
        cfg["dct"]["fig3"]["eps"] = [2.0]

    # one job runs the figure's 3 mechanisms on its synthetic dataset (a panel job)
    assert dry_run_jobs(work, "--configfile", changed_config(work, eps)) == {
        "panel_job_dct_fig3": 1,
        "figure_dct_fig3": 1,
    }

    src = tmp_path / "src"
    shutil.copytree(REPO / "src" / "ldprepro", src / "ldprepro", ignore=shutil.ignore_patterns("__pycache__"))
    with open(src / "ldprepro/domain/mechanisms/piecewise.py", "a") as fh:
        fh.write("\n# an edit of the code PM runs\n")
    jobs = dry_run_jobs(work, src=src)
    # every job whose script imports the mechanisms reruns (the panel job of the 3 mean mechanisms,
    # Fig. 4's job, and the renderings downstream); the synthetic data does not
    assert jobs.get("panel_job_dct_fig3") == 1 and jobs.get("ldpfl_fig4") == 1 and "data_synthetic" not in jobs


@pytest.mark.slow
def test_a_built_project_copied_elsewhere_is_up_to_date(two_runs, tmp_path_factory):
    """Issue 54 (low): a copied or moved built project reran all its figure jobs (their caption input
    was an absolute path). Copied with its metadata and modification times (`cp -a`) to a folder at
    the same depth, so that the path from it to this checkout is the same: nothing to do."""
    moved = tmp_path_factory.getbasetemp() / "run_a_copied"  # beside the original: the same depth
    shutil.copytree(two_runs[0], moved, symlinks=True)  # copy2: modification times kept
    assert dry_run_jobs(moved) == {}
    # and no job's input is an absolute path into the checkout (moved with it, it would change)
    proc = snakemake(moved, "-n", "--forceall", "--", *TARGETS)
    inputs = [line for line in proc.stdout.splitlines() if line.strip().startswith("input:")]
    files = [f for line in inputs for f in line.split("input:")[1].replace(",", " ").split()]
    assert files and not [f for f in files if f.startswith(str(REPO))], files


@pytest.mark.slow
def test_report_builds_from_an_incomplete_run(two_runs):
    """Only two figures are built here: `snakemake --report` still works and lists the rest as missing."""
    work = two_runs[0]
    proc = snakemake(work, "--report", "report.html")
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = (work / "report.html").read_text(errors="replace")
    assert "Not built yet" in page and "figures/dct/fig1.png" in page
    assert '"figures/dct/fig3.png": {' in page  # the built figure is in the report itself


@pytest.mark.slow
def test_after_kill_9_the_next_run_says_exactly_what_to_run(tmp_path):
    """kill -9 of Snakemake leaves its lock (and maybe orphaned jobs): the next run names the command."""
    import signal
    import time

    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["scale"] = "smoke"
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "MPLBACKEND": "Agg"}
    cmd = snakemake_cmd("--cores", "1", "--", "figures/dct/fig3.png", workdir=tmp_path)
    first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    locks = tmp_path / ".snakemake/locks"
    while not (locks.is_dir() and any(locks.iterdir())):  # wait for the lock (no wall-clock limit)
        assert first.poll() is None, "the first run ended before taking its lock"
        time.sleep(0.2)
    first.send_signal(signal.SIGKILL)
    first.wait()
    second = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert second.returncode != 0
    hint = [line for line in second.stderr.splitlines() if line.startswith("ldprepro: ")]
    assert hint and "`snakemake --unlock`" in hint[0], second.stderr[-2000:]
    orphans = re.search(r"`kill ([\d ]+)`", hint[0])
    for pid in orphans.group(1).split() if orphans else []:  # the killed run's own jobs
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert snakemake(tmp_path, "--unlock").returncode == 0


@pytest.mark.slow
def test_the_closing_summary_names_only_the_datasets_the_targets_use(tmp_path):
    """A run of one figure lists the unavailable dataset of that figure's panel, not every
    unavailable dataset of the configuration (as a run of `rule all` does)."""
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["scale"] = "smoke"
    cfg["dct"]["fig9"] = {
        "kind": "mean",
        "panels": [{"dataset": "synth_uniform"}, {"dataset": "ipums_br", "columns": ["AGE"]}],
        "mechanisms": ["pm"],
        "eps": [1.0],
        "reps": 3,
        "metric": "sq_error",
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
    proc = snakemake(tmp_path, "--cores", "2", "--", "figures/dct/fig9.png")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    summary = out.split("ldprepro: built the requested targets. Datasets they use that are not available here:")[1]
    listed = re.findall(r"^  - (\w+): ", summary, re.MULTILINE)
    assert listed == ["ipums_br"], summary
    assert "'not available' panels: dct/fig9" in summary
    record = json.loads((tmp_path / "results/availability.json").read_text())["datasets"]
    assert len([k for k, v in record.items() if not v["available"]]) > 1  # others were left out


def job_counts(text: str) -> dict[str, int]:
    """{rule: job count} of Snakemake's 'Job stats' table in ``text``; {} when nothing to do."""
    if "Nothing to be done" in text:
        return {}
    table = text.split("Job stats:")[1].split("total")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, re.MULTILINE)}


@pytest.mark.slow
def test_deleted_or_damaged_outputs_are_rebuilt_exactly_by_the_main_command(two_runs):
    """Issue 29.4: a deleted summary was never rebuilt, a zero-byte figure was accepted (and shown
    in the report), a job parquet cut in half failed every later run with ArrowInvalid. Now the
    main command (`rule all`) rebuilds exactly the damaged files and what depends on them, byte for
    byte. (`--until <caption>` keeps the run to this figure's part of `rule all`'s graph.)"""
    work = two_runs[1]
    caption = "results/dct/fig3/caption.rst"
    assert snakemake(work, "--cores", "2", "--", caption).returncode == 0
    before = outputs(work)
    (work / "results/dct/fig3/summary.parquet").unlink()  # a summary deleted
    (work / "results/dct/fig3/claims.parquet").unlink()  # a claims table deleted
    (work / "figures/dct/fig3.png").write_bytes(b"")  # a zero-byte figure
    (work / caption).unlink()  # a caption deleted
    job = work / "results/dct/fig3/synth_gauss_003__pm.parquet"
    job.write_bytes(job.read_bytes()[: job.stat().st_size // 2])  # a job table cut in half
    run = snakemake(work, "--cores", "2", "--until", caption)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "figures/dct/fig3.png is empty (0 bytes); removed" in run.stderr
    assert job_counts(run.stdout + run.stderr) == {"panel_job_dct_fig3": 1, "figure_dct_fig3": 1}
    after = outputs(work)
    assert sorted(after) == sorted(before)
    assert [name for name in before if before[name] != after[name]] == []
