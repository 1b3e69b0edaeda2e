"""Obtain one raw file for a data job, without the readers: the entry points the download jobs
(``workflow/scripts/data_fetch.py``) need, kept apart from :mod:`ldprepro.data.build` so that a
download job imports neither pandas nor the readers (a job's start-up is paid once per job; issue 27).
:mod:`ldprepro.data.build` re-exports them.

A DataUnavailable is recorded under logs/unavailable/ (``ldprepro.pipeline.status.record_unavailable``)
before it propagates; :func:`exit_if_unavailable` turns it into exit status 1 without a traceback."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Iterator

from ldprepro.data.entries import needed_files
from ldprepro.data.fetch import Fetched, fetch_file
from ldprepro.pipeline.errors import DataUnavailable
from ldprepro.pipeline.io import atomic_write_text
from ldprepro.pipeline.status import record_unavailable


def file_spec(entry: dict, name: str) -> dict:
    for f in needed_files(entry):
        if f["name"] == name:
            return f
    raise KeyError(name)


@contextlib.contextmanager
def unavailable_recorded(dataset: str, target: str | None = None, root: str | Path = ".",
                         log=None) -> Iterator[None]:
    """Record a DataUnavailable under logs/unavailable/ (and in the job log) before letting it
    propagate."""
    try:
        yield
    except DataUnavailable as exc:
        record_unavailable(dataset, exc.reason, target, root=root)
        if log:
            log(f"NOT AVAILABLE: {exc}")
        raise


def fetch(dataset: str, entry: dict, name: str, dest: str | Path, mirror: str = "",
          log=print, verified: str | Path | None = None) -> Fetched:
    """Put the verified raw file ``name`` at ``dest`` (kept when it is already there and verifies);
    then, when ``verified`` is given, write there the record of the verification the download job
    declares as its output (:func:`write_verified`)."""
    with unavailable_recorded(dataset, str(dest), log=log):
        got = fetch_file(dataset, file_spec(entry, name), dest, mirror, log=log,
                         obtain=entry.get("obtain", ""))
    if verified is not None:
        write_verified(verified, dest, got)
    return got


def write_verified(record: str | Path, dest: str | Path, got: Fetched) -> None:
    """The download job's output ``data/verified/<dataset>/<name>.json``: which raw file was
    verified, its sha256 and size. The raw file itself is not a Snakemake output, so that no rerun
    of the download job (a newer script, an old modification time, ``--forcerun``) can delete it
    before the job runs; the job keeps a raw file that still verifies (issue 54). Deterministic
    bytes: where the file came from is in the job log, not here."""
    body = {"file": str(dest), "name": got.name, "sha256": got.sha256, "size": Path(dest).stat().st_size,
            "checksum_from": "lock file" if got.locked else "config"}
    atomic_write_text(record, json.dumps(body, indent=2, sort_keys=True) + "\n")


def exit_if_unavailable(main) -> None:
    """Run a Snakemake script's ``main()``; a DataUnavailable ends it with exit status 1 and no
    traceback. Its one "NOT AVAILABLE: <reason>" line is already in the job log and on stderr,
    and the reason under logs/unavailable/ (:func:`unavailable_recorded`)."""
    try:
        main()
    except DataUnavailable:
        raise SystemExit(1) from None
