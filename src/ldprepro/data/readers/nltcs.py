"""NLTCS, PrivBayes version (MANIFEST §3): ``nltcs.dat`` = a line with the record count, then one
line of 16 tab-separated 0/1 values per record; ``nltcs.domain`` = ``16`` then ``D 0 1`` x 16.

The attributes are 16 binary disability measures (6 ADLs, 10 IADLs; PrivBayes moved "getting about
outside" to the last column). Names are not in the files, so the columns are ``a01``..``a16``.
The declared count on line 1 catches truncated files.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ldprepro.pipeline.errors import BadInput
from ldprepro.data.table import Column, Table


def read_domain(path: Path) -> int:
    lines = [ln.split() for ln in Path(path).read_text().splitlines() if ln.strip()]
    try:
        k = int(lines[0][0])
    except (IndexError, ValueError) as exc:
        raise BadInput(f"{path}: line 1: expected the number of attributes") from exc
    if len(lines) - 1 != k:
        raise BadInput(f"{path}: declares {k} attributes but lists {len(lines) - 1}")
    for i, parts in enumerate(lines[1:], start=2):
        if parts[-2:] != ["0", "1"]:
            raise BadInput(f"{path}: line {i}: attribute is not binary 0/1: {' '.join(parts)}")
    return k


def read_dat(path: Path, k: int, sep: str = r"[\t,]") -> pd.DataFrame:
    text = Path(path).read_text()
    lines = text.splitlines()
    try:
        n = int(lines[0].split()[0])
    except (IndexError, ValueError) as exc:
        raise BadInput(f"{path}: line 1: expected the record count") from exc
    rows = [ln for ln in lines[1:] if ln.strip()]
    if len(rows) != n:
        raise BadInput(f"{path}: line 1 declares {n} records but the file holds {len(rows)} "
                       f"(truncated file?)")
    split = [re.split(sep, ln.strip()) for ln in rows]
    for i, parts in enumerate(split):
        if len(parts) != k:
            raise BadInput(f"{path}: row {i + 2}: expected {k} fields, found {len(parts)}")
    df = pd.DataFrame(split, columns=[f"a{j:02d}" for j in range(1, k + 1)])
    df.index = pd.RangeIndex(2, 2 + len(df), name="line")
    return df


def read(paths: dict[str, Path], options: dict) -> Table:
    k = read_domain(paths["nltcs.domain"])
    df = read_dat(paths["nltcs.dat"], k)
    cols = [Column(c, "binary") for c in df.columns]
    t = Table(df, cols, str(paths["nltcs.dat"]), len(df))
    t.notes.append("attribute names are not in the files: a01..a16 follow the PrivBayes column "
                   "order (12th original variable moved last); polarity not verified")
    return t
