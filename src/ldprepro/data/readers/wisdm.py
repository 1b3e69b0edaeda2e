"""WISDM Activity Recognition v1.1 raw accelerometer data (Kwapisz, Weiss & Moore 2010).

``WISDM_ar_v1.1_raw.txt`` (inside ``WISDM_ar_latest.tar.gz``, or given directly): records
``user,activity,timestamp,x,y,z;`` (WISDM_ar_v1.1_raw_about.txt). The file has malformed lines
(missing fields, empty values, several records on one line, a trailing ``,;``); records are
split on ``;`` and newlines, and every record that does not parse as 6 valid fields is counted,
logged (line number and text) and dropped. The timestamp is dropped (papers 002/003).

Output: ``user`` (categorical 1..36), ``activity`` (categorical, 6 values), ``x``, ``y``, ``z``
(numeric, declared domain [-20, 20] from the about file).
"""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pandas as pd

from ldprepro.pipeline.errors import BadInput
from ldprepro.data.table import Column, Drop, Table

ACTIVITIES = ["Downstairs", "Jogging", "Sitting", "Standing", "Upstairs", "Walking"]
RAW_NAME = re.compile(r"(?:^|/)WISDM_ar_v1\.1_raw\.txt$")
NUM = re.compile(r"^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")


def raw_text(path: Path) -> tuple[str, str]:
    """(text, name) of the raw file from the tarball or a plain file."""
    name = str(path)
    if path.name.endswith((".tar.gz", ".tgz", ".tar")):
        try:
            with tarfile.open(path, "r:*") as tar:
                for m in tar:
                    if m.isfile() and RAW_NAME.search(m.name):
                        return tar.extractfile(m).read().decode("utf-8", "replace"), \
                            f"{path}!{m.name}"
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise BadInput(f"{path}: not a readable tar archive (truncated?): {exc}") from exc
        raise BadInput(f"{path}: no WISDM_ar_v1.1_raw.txt inside")
    return path.read_text(encoding="utf-8", errors="replace"), name


def parse(text: str, name: str, log=None) -> tuple[pd.DataFrame, int, list[Drop]]:
    """Parse the records; returns (good rows indexed by line number, #records, drops)."""
    users, acts, xs, ys, zs, where = [], [], [], [], [], []
    bad: list[tuple[int, str]] = []
    n = 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        for rec in line.split(";"):
            rec = rec.strip().rstrip(",")
            if not rec:
                continue
            n += 1
            f = [p.strip() for p in rec.split(",")]
            if (len(f) != 6 or not f[0].isdigit() or f[1] not in ACTIVITIES
                    or not all(NUM.match(v) for v in f[3:6])):
                bad.append((lineno, rec))
                continue
            users.append(int(f[0]))
            acts.append(f[1])
            xs.append(float(f[3]))
            ys.append(float(f[4]))
            zs.append(float(f[5]))
            where.append(lineno)
    df = pd.DataFrame({"user": users, "activity": acts, "x": xs, "y": ys, "z": zs},
                      index=pd.Index(where, name="line"))
    drops = []
    if bad:
        drops.append(Drop("malformed record (not 'user,activity,timestamp,x,y,z')", len(bad),
                          [f"line {ln}: {txt[:60]}" for ln, txt in bad[:10]]))
        if log:
            for ln, txt in bad:
                log(f"{name}: line {ln}: malformed record dropped: {txt[:80]!r}")
    return df, n, drops


def read(paths: dict[str, Path], options: dict, log=None) -> Table:
    path = next(iter(paths.values()))
    text, name = raw_text(path)
    df, n, drops = parse(text, name, log)
    # duplicate index values are fine (several records on one line) but make them unique
    df.index = [f"line {i}" for i in df.index]
    cols = [Column("user", "categorical", categories=list(range(1, 37))),
            Column("activity", "categorical", categories=ACTIVITIES),
            Column("x", "numeric", [-20, 20]), Column("y", "numeric", [-20, 20]),
            Column("z", "numeric", [-20, 20])]
    t = Table(df, cols, name, n, drops=drops)
    t.notes.append("timestamp dropped (papers 002/003)")
    return t
