"""Vehicle / SensIT (Duarte & Hu 2004), the 23-sensor binary AAV-vs-DW table of the federated
benchmarks (MOCHA / q-FFL ``vehicle.mat``), derived from Duarte & Hu's original feature files.

Input: a tar (``.tar``, ``.tar.gz`` or ``.tar.xz``) holding ``<run>/acoustic_1/features/
<run>evfeat<node>_1_1.txt`` and ``<run>/seismic_2/features/<run>evfeat<node>_1_2.txt`` under any
prefix. Only the modality directories are read: the per-node directories duplicate them and five
of them misplace the next node's files (MANIFEST §7), which is why node-walking loaders lose
961 rows.

Rows (MANIFEST §7): devices 0..22 = nodes in ascending order; per device, runs aav3..aav11 then
dw2..dw12 (numeric order), events in file order; acoustic row i paired with seismic row i.
Each acoustic row = 50 features + one-hot (AAV ``1 0 0 0``, DW ``0 1 0 0``); seismic = 50 + 3.
``label`` = +1 AAV, -1 DW (checked against both one-hot blocks). ``in_qffl`` = 0 for runs dw2 and
dw12 (not in ``vehicle.mat``). ``options.qffl_subset`` keeps only the 43,695 q-FFL rows.
"""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd

from ldprepro.pipeline.errors import BadInput
from ldprepro.data.table import Column, Table

MEMBER = re.compile(r"(?:^|/)(?P<run>(?:aav|dw)\d+)/(?P<mod>acoustic|seismic)_\d+/features/"
                    r"(?P=run)evfeat(?P<node>\d+)_1_(?P<m>[12])\.txt$")
ONEHOT = {("aav", 1): [1, 0, 0, 0], ("dw", 1): [0, 1, 0, 0],
          ("aav", 2): [1, 0, 0], ("dw", 2): [0, 1, 0]}
NOT_QFFL = {"dw2", "dw12"}
FEATURES = [f"a{i:02d}" for i in range(1, 51)] + [f"s{i:02d}" for i in range(1, 51)]


def _run_key(run: str) -> tuple[int, int]:
    kind, num = re.match(r"(aav|dw)(\d+)", run).groups()
    return (0 if kind == "aav" else 1, int(num))


def _parse(text: bytes, name: str, width: int) -> np.ndarray:
    rows = [ln.split() for ln in text.decode("ascii").splitlines() if ln.strip()]
    for i, r in enumerate(rows, start=1):
        if len(r) != width:
            raise BadInput(f"{name}: row {i}: expected {width} fields, found {len(r)}")
    try:
        return np.array(rows, dtype="float64").reshape(len(rows), width)
    except ValueError as exc:
        raise BadInput(f"{name}: not numeric: {exc}") from exc


def read_tar(path: Path) -> dict[tuple[str, int, int], tuple[str, bytes]]:
    """{(run, node, modality 1|2): (member name, bytes)} for the modality-directory files."""
    files = {}
    try:
        with tarfile.open(path, "r:*") as tar:
            for m in tar:
                hit = MEMBER.search(m.name)
                if not (m.isfile() and hit):
                    continue
                key = (hit["run"], int(hit["node"]), int(hit["m"]))
                if key in files:
                    raise BadInput(f"{path}: {m.name}: duplicate of {files[key][0]}")
                files[key] = (m.name, tar.extractfile(m).read())
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise BadInput(f"{path}: not a readable tar archive (truncated?): {exc}") from exc
    if not files:
        raise BadInput(f"{path}: no '<run>/<modality>/features/<run>evfeat<node>_1_<m>.txt' "
                       f"members")
    return files


def build(files: dict) -> pd.DataFrame:
    nodes = sorted({k[1] for k in files})
    runs = sorted({k[0] for k in files}, key=_run_key)
    parts = []
    for dev, node in enumerate(nodes):
        for run in runs:
            ka, ks = (run, node, 1), (run, node, 2)
            if ka not in files and ks not in files:
                continue
            if (ka in files) != (ks in files):
                have = files.get(ka, files.get(ks))[0]
                raise BadInput(f"{have}: its acoustic/seismic partner file is missing")
            (na, ta), (ns, ts) = files[ka], files[ks]
            a, s = _parse(ta, na, 54), _parse(ts, ns, 53)
            if len(a) != len(s):
                raise BadInput(f"{na}: {len(a)} rows but {ns} has {len(s)}")
            kind = re.match(r"aav|dw", run).group()
            for arr, name, m in ((a, na, 1), (s, ns, 2)):
                bad = ~(arr[:, 50:] == ONEHOT[(kind, m)]).all(axis=1)
                if bad.any():
                    raise BadInput(f"{name}: row {int(np.argmax(bad)) + 1}: class one-hot "
                                   f"{arr[np.argmax(bad), 50:].tolist()} does not match run "
                                   f"'{run}'")
            block = pd.DataFrame(np.hstack([a[:, :50], s[:, :50]]), columns=FEATURES)
            block.insert(0, "device_index", dev)
            block.insert(1, "sensor_node", node)
            block.insert(2, "run", run)
            block.insert(3, "event_index", np.arange(len(a)))
            block.insert(4, "label", 1 if kind == "aav" else -1)
            block.insert(5, "in_qffl", 0 if run in NOT_QFFL else 1)
            block.index = [f"{na}:{i + 1}" for i in range(len(a))]
            parts.append(block)
    return pd.concat(parts)


def read(paths: dict[str, Path], options: dict) -> Table:
    path = next(iter(paths.values()))
    df = build(read_tar(path))
    runs = sorted(df["run"].unique(), key=_run_key)
    cols = [Column("device_index", "numeric", [0, 22], integer=True),
            Column("sensor_node", "numeric", "observed", integer=True),
            Column("run", "categorical", categories=runs),
            Column("event_index", "numeric", "observed", integer=True),
            Column("label", "categorical", categories=[-1, 1],
                   description="+1 = AAV (assault amphibian vehicle), -1 = DW (dragon wagon)"),
            Column("in_qffl", "binary", description="1 if the row is in q-FFL's vehicle.mat")]
    cols += [Column(f, "numeric", "observed") for f in FEATURES]
    t = Table(df, cols, str(path), len(df))
    if options.get("qffl_subset", True):
        t.drop(df["in_qffl"].to_numpy() == 0,
               "run dw2 or dw12: not in the q-FFL/MOCHA vehicle.mat (23-sensor benchmark)")
    counts = t.df.groupby("device_index").size()
    t.extra["per_device_rows"] = {int(k): int(v) for k, v in counts.items()}
    t.extra["class_counts"] = {"+1 (AAV)": int((t.df["label"] == 1).sum()),
                               "-1 (DW)": int((t.df["label"] == -1).sum())}
    return t
