"""Issue 54 item 1: raw data is never deleted by a rerun.

A real workflow run on NLTCS (two small files, from the dataset mirror), then the cases that used to
lose the raw files: their modification times set into the past (what `cp -p`, `tar` or `rsync -a`
restoring a backup does; Snakemake then called the download's code newer than its outputs and deleted
them before rerunning it), and a forced rerun of the downloads (as after an edit of the data code),
both offline: no mirror, and every download sent to a proxy that refuses connections. The raw files must survive
byte for byte and the runs succeed, since every raw file still verifies against its sha256.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml
from test_pipeline_smoke import _mirror_env
from workflow_cmd import snakemake_cmd

REPO = Path(__file__).resolve().parents[1]
RAW = ["data/raw/nltcs/nltcs.dat", "data/raw/nltcs/nltcs.domain"]
TARGET = "data/processed/nltcs.parquet"


def _run(workdir: Path, *args: str, offline: bool) -> tuple[int, str]:
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["scale"] = "smoke"
    (workdir / "config.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
    env = _mirror_env()
    if offline:  # no mirror, and every download goes to a proxy port nothing listens on
        env.pop("LDPREPRO_DATA_MIRROR")
        for var in ("NO_PROXY", "no_proxy"):
            env.pop(var, None)
        env.update({v: "http://127.0.0.1:9" for v in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")})
    cmd = snakemake_cmd("--cores", "1", *args, "--", TARGET)
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def test_raw_files_survive_old_mtimes_and_forced_downloads_offline(tmp_path):
    code, out = _run(tmp_path, offline=False)
    assert code == 0, out[-3000:]
    fetched = {f: (tmp_path / f).read_bytes() for f in RAW}

    old = 946684800  # 2000-01-01, as `touch -d 2000-01-01 data/raw/nltcs/*`
    for f in RAW:
        os.utime(tmp_path / f, (old, old))
    code, out = _run(tmp_path, offline=True)
    assert code == 0, out[-3000:]
    assert {f: (tmp_path / f).read_bytes() for f in RAW} == fetched

    code, out = _run(tmp_path, "--forcerun", "data_fetch", offline=True)
    assert code == 0, out[-3000:]
    assert {f: (tmp_path / f).read_bytes() for f in RAW} == fetched
    logged = (tmp_path / "logs/data/fetch/nltcs/nltcs.dat.log").read_text()
    assert "already here and verified" in logged and "kept, not fetched again" in logged, logged
