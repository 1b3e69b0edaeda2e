"""LoPub "coarse" files (IoTDATALab/Python_LoPub ``data/Data*-coarse.*``; shared/datasets/
lopub_nltcs_adult/README.md): ``X.dat`` = record count, then comma-separated integer codes;
``X.domain`` = ``k n`` then per attribute ``name C|D size codes...``.

Used for paper 004 (RR-LDP/LREMH): Adult 45,222 x 15 (continuous attributes cut into 16 bins,
rows with missing values removed). Column names come from ``options.names`` (the UCI order,
inferred from the domain sizes 16,7,16,16,16,7,14,6,5,2,16,16,16,41,2).
"""

from __future__ import annotations

from pathlib import Path

from ldprepro.pipeline.errors import BadInput
from ldprepro.data.table import Column, Table
from ldprepro.data.readers.nltcs import read_dat


def read_domain(path: Path) -> list[tuple[str, str, list[int]]]:
    lines = [ln.split() for ln in Path(path).read_text().splitlines() if ln.strip()]
    k = int(lines[0][0])
    if len(lines) - 1 != k:
        raise BadInput(f"{path}: declares {k} attributes but lists {len(lines) - 1}")
    out = []
    for i, parts in enumerate(lines[1:], start=2):
        name, kind, size, codes = parts[0], parts[1], int(parts[2]), [int(c) for c in parts[3:]]
        if len(codes) != size:
            raise BadInput(f"{path}: line {i}: size {size} but {len(codes)} codes")
        out.append((name, kind, codes))
    return out


def read(paths: dict[str, Path], options: dict) -> Table:
    dat = next(p for n, p in paths.items() if n.endswith(".dat"))
    dom = next(p for n, p in paths.items() if n.endswith(".domain"))
    domain = read_domain(dom)
    df = read_dat(dat, len(domain), sep=",")
    names = options.get("names") or [d[0] for d in domain]
    if len(names) != len(domain):
        raise BadInput(f"{dom}: {len(domain)} attributes but options.names has {len(names)}")
    df.columns = names
    cols = [Column(n, "categorical", categories=codes,
                   description=f"{'discretised continuous' if kind == 'C' else 'categorical'} "
                               f"attribute, {len(codes)} codes")
            for n, (_, kind, codes) in zip(names, domain)]
    t = Table(df, cols, str(dat), len(df))
    t.extra["domain_sizes"] = [len(d[2]) for d in domain]
    return t
