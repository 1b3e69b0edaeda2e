"""Every intermediate is verified when it is read; a damaged one is removed, never reused.

- :func:`check_dataset`: a processed dataset (``data/processed/<name>.parquet``) against its data
  card's ``parquet`` record (sha256 and row count), on every load (``ldprepro.data.transform.load``);
  :func:`read_json` reads a data card naming the file when it is cut short.
- :func:`job_results`: the job tables of a figure, read and checked to cover exactly the configured
  grid (:class:`Grid`: every mechanism × ε × repetition × metric, plus the experiment's own
  parameter columns) before anything is aggregated, drawn or decided. The figure scripts
  (workflow/scripts/*_figure.py) call it in place of a plain read.

A failure raises :class:`~ldprepro.pipeline.errors.DamagedInput` naming the file, what is wrong and
the command that rebuilds it, after removing the file (and its digest sidecar): the next run of the
same command rebuilds it and everything downstream, instead of failing on it again.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ldprepro.pipeline.errors import DamagedInput
from ldprepro.pipeline.integrity import OUTPUT_ROOTS, sha256_file, sidecar
from ldprepro.pipeline.repetitions import repetitions_run

KEY_COLUMNS = ["paper", "figure", "dataset", "mechanism", "eps", "rep", "metric", "value"]


def _is_pipeline_output(path: str | os.PathLike) -> bool:
    """Whether ``path`` lies in a pipeline output folder (``results/``, ``figures/``, ``data/processed/``
    of some working directory), the only files :func:`refuse` removes."""
    parts = Path(path).resolve().parts
    for root in OUTPUT_ROOTS:
        want = Path(root).parts
        if any(parts[i : i + len(want)] == want for i in range(len(parts) - len(want))):
            return True
    return False


def rebuild_command(path: str | os.PathLike) -> str:
    return f"snakemake --cores all {path}"


def refuse(path: str | os.PathLike, reason: str) -> DamagedInput:
    """Remove the damaged intermediate ``path`` (and its sidecar); the error to raise, naming it. Only
    a pipeline output (in one of the ``OUTPUT_ROOTS`` folders) is removed: any other
    file (a source file, a user's data) is left alone and the error says so."""
    if not _is_pipeline_output(path):
        return DamagedInput(
            f"{path}: {reason}. It is not a pipeline output (not in a {', '.join(OUTPUT_ROOTS)} folder), so it "
            "was left in place: check or restore it."
        )
    Path(path).unlink(missing_ok=True)
    sidecar(path).unlink(missing_ok=True)
    return DamagedInput(
        f"{path}: {reason}. The file has been removed so that it is never reused: run the same "
        f"snakemake command again to rebuild it and what depends on it (or `{rebuild_command(path)}`)."
    )


def read_json(path: str | os.PathLike, what: str = "data card") -> dict:
    """A JSON file (a data card) as a dict; one cut short or altered is refused, naming it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DamagedInput(f"{path}: the {what} is missing; rebuild it with `{rebuild_command(path)}`.") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise refuse(path, f"the {what} is not valid JSON ({exc}; cut short?)") from None
    if not isinstance(data, dict):
        raise refuse(path, f"the {what} is not a JSON object")
    return data


def check_dataset(parquet: str | os.PathLike, card: dict, card_path: str | os.PathLike) -> None:
    """The processed dataset ``parquet`` is the one its card describes: the sha256 its card
    records. A card without the record (written before cards carried it) is refused too: it cannot
    vouch for the table. (The row count is checked once the table is read: :func:`check_rows`.)"""
    rec = card.get("parquet")
    if not isinstance(rec, dict) or "sha256" not in rec or "rows" not in rec:
        raise refuse(card_path, "the data card has no 'parquet' record (sha256, rows) to check its table against")
    actual = sha256_file(parquet)
    if actual != rec["sha256"]:
        raise refuse(
            parquet,
            f"its sha256 {actual} differs from {rec['sha256']} recorded in its data card {card_path} "
            "(altered or cut short since it was written)",
        )


def check_rows(parquet: str | os.PathLike, card: dict, card_path: str | os.PathLike, rows: int) -> None:
    """The table read from ``parquet`` has the row count its card records."""
    if rows != card["parquet"]["rows"]:
        raise refuse(parquet, f"it has {rows} rows, its data card {card_path} records {card['parquet']['rows']}")


@dataclass(frozen=True)
class Grid:
    """What a figure's job tables must cover. ``eps`` and ``reps`` may be one value for every
    dataset or a mapping dataset -> value (e.g. an analytic curve on a fine ε grid beside Monte-Carlo
    runs); ``axes``: the experiment's own parameter columns and their configured values (sizes as
    ``n_users``, swept parameters), checked where a table has the column. ``reps`` is the number of
    repetitions of every measured metric (metrics ending in ``_theory`` are exact: one row).
    ``named``: how a job file's name says what it holds, ``dataset__mechanism`` or ``mechanism``."""

    eps: Sequence[float] | Mapping[str, Sequence[float]] | None = None
    reps: int | Mapping[str, int] | None = None
    axes: Mapping[str, Sequence] = field(default_factory=dict)
    named: str | None = "dataset__mechanism"


def _per_dataset(value, dataset):
    return value.get(dataset) if isinstance(value, Mapping) else value


def _key(v):
    """A value as a set member: floats rounded to 12 significant digits, NaN/None as None."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, (float, int)) and not isinstance(v, bool):
        return float(f"{float(v):.12g}")
    return v


def _fmt(values) -> str:
    return "[" + ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in sorted(values, key=str)) + "]"


def _identity(df: pd.DataFrame, path: Path, named: str | None) -> list[str]:
    if named is None:
        return []
    stem = path.stem
    want = dict(zip(("dataset", "mechanism"), stem.split("__", 1))) if named == "dataset__mechanism" else {}
    if named == "mechanism":
        want = {"mechanism": stem}
    out = []
    for col, value in want.items():
        got = sorted(set(df[col].drop_duplicates().astype(str)))  # str of each distinct value
        if got != [value]:
            out.append(f"its {col} should be '{value}' (from the file name), it holds {got[:5]}")
    return out


#: columns that only qualify a repetition (BSHP's extra repetitions for the tests), not a point
REP_COLUMNS = ("rep", "extra_rep")


def _group_problems(cells: dict, axes: list[str], where: str, dataset: str, metric: str, grid: Grid) -> list[str]:
    """``cells``: {point: sorted repetitions} of one (dataset, mechanism, metric); a point is the
    tuple of its ``axes`` values followed by its other parameters."""
    out = []
    expected = {"eps": _per_dataset(grid.eps, dataset)} | {c: grid.axes[c] for c in axes[1:]}
    k = len(axes)
    seen = [{point[i] for point in cells} for i in range(k)]
    for i, col in enumerate(axes):
        if expected.get(col) is None:
            continue
        got, want = seen[i], {_key(v) for v in expected[col]}
        if got != want:
            miss, extra = want - got, got - want
            out.append(
                f"{where}: {col} "
                + (f"{_fmt(miss)} missing" if miss else "")
                + (" and " if miss and extra else "")
                + (f"{_fmt(extra)} not configured" if extra else "")
                + f" (configured {_fmt(want)})"
            )
    points = len({point[:k] for point in cells})
    full = math.prod(len(v) for v in seen)
    if points != full:
        out.append(f"{where}: {points} of the {full} points of {' × '.join(axes)} present")
    want_reps = _per_dataset(grid.reps, dataset)
    if want_reps is not None and not metric.endswith("_theory"):
        ref = tuple(range(int(want_reps)))  # the configured repetitions 0..n-1
    else:  # every point has the repetitions of the fullest point (exact metrics: one)
        ref = max(cells.values(), key=len)
    short = [(point, reps) for point, reps in cells.items() if reps != ref]
    if short:
        point, reps = short[0]
        at = ", ".join(f"{c} = {v}" for c, v in zip(axes, point))
        span = f"{ref[0]}..{ref[-1]}" if ref else "none"
        out.append(
            f"{where}: {len(short)} point(s) without exactly the {len(ref)} repetitions {span} "
            f"(e.g. at {at}: {len(reps)} repetition(s){', ' + _fmt(reps) if len(reps) < 12 else ''})"
        )
    return out


def _keyed_codes(column: pd.Series) -> tuple[np.ndarray, list]:
    """(code per row, key per code): the column's values as :func:`_key` makes them set members,
    computed once per distinct value (``pd.factorize``), not once per row. Values whose keys are
    equal (two floats that agree to 12 digits, NaN and None) share a code."""
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    keys: list = []
    code_of: dict = {}
    remap = np.empty(len(uniques), dtype=np.int64)
    for i, value in enumerate(uniques.tolist()):
        key = _key(value)
        if key not in code_of:
            code_of[key] = len(keys)
            keys.append(key)
        remap[i] = code_of[key]
    return remap[codes], keys


def _row_ids(columns: list[np.ndarray]) -> np.ndarray:
    """One integer per row, equal for two rows exactly when all their ``columns`` codes are."""
    if not columns:
        return np.zeros(0, dtype=np.int64)
    ids = np.zeros(columns[0].size, dtype=np.int64)
    for codes in columns:
        width = int(codes.max()) + 1 if codes.size else 1
        if (int(ids.max()) + 1 if ids.size else 1) * width >= 2**62:  # keep the mixed radix exact
            ids = np.unique(ids, return_inverse=True)[1].astype(np.int64)
        ids = ids * width + codes
    return np.unique(ids, return_inverse=True)[1].astype(np.int64)


def grid_problems(df: pd.DataFrame, path: str | os.PathLike, grid: Grid) -> list[str]:
    """What keeps one job table from covering ``grid`` ([] when it does). Each column's values are
    keyed once per distinct value and the rows are grouped as integer codes (numpy), so a table of
    10⁶ rows takes a fraction of a second (plain Python per row took seconds, pandas' per-group
    overhead more)."""
    path = Path(path)
    missing = [c for c in KEY_COLUMNS if c not in df.columns]
    if missing:
        return [f"it lacks the columns {missing}"]
    if not len(df):
        return ["it has no rows"]
    out = _identity(df, path, grid.named)
    axes = ["eps"] + [c for c in grid.axes if c in df.columns and df[c].notna().any()]
    others = [c for c in df.columns if c not in REP_COLUMNS and c != "value" and c not in axes]
    qualifiers = [c for c in REP_COLUMNS if c != "rep" and c in df.columns]
    point_cols = axes + others
    coded = {c: _keyed_codes(df[c]) for c in point_cols + qualifiers}
    point_id = _row_ids([coded[c][0] for c in point_cols])
    rep_codes, rep_values = pd.factorize(df["rep"], use_na_sentinel=False)
    rep_codes = rep_codes.astype(np.int64)
    tag_id = _row_ids([coded[c][0] for c in qualifiers]) if qualifiers else np.zeros(len(df), dtype=np.int64)
    row_id = _row_ids([point_id, rep_codes, tag_id])
    duplicated = len(df) - (int(row_id.max()) + 1)
    if duplicated:
        out.append(f"{duplicated} duplicated row(s) (the same point and repetition twice)")
    # one row per distinct (point, repetition): the point's key tuple and the repetition as int
    rep_ints = np.array([int(r) for r in rep_values.tolist()], dtype=np.int64)
    pair = np.unique(point_id * (len(rep_values) + 1) + rep_codes)
    pair_point, pair_rep = pair // (len(rep_values) + 1), rep_ints[pair % (len(rep_values) + 1)]
    order = np.lexsort((pair_rep, pair_point))
    pair_point, pair_rep = pair_point[order], pair_rep[order]
    first_row = np.unique(point_id, return_index=True)[1]  # each point's first row
    starts = np.flatnonzero(np.r_[True, pair_point[1:] != pair_point[:-1]])
    ends = np.r_[starts[1:], pair_point.size]
    at = {c: i for i, c in enumerate(point_cols)}
    groups: dict[tuple, dict] = {}
    # the points in the order of their first rows, as the table lists them
    for row, s, e in sorted(zip(first_row[pair_point[starts]].tolist(), starts.tolist(), ends.tolist())):
        point = tuple(coded[c][1][coded[c][0][row]] for c in point_cols)
        group = (point[at["dataset"]], point[at["mechanism"]], point[at["metric"]])
        reps = tuple(sorted(set(pair_rep[s:e].tolist())))
        groups.setdefault(group, {})[point] = reps
    for (dataset, mechanism, metric), cells in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        out += _group_problems(cells, axes, f"{dataset}/{mechanism}/{metric}", str(dataset), str(metric), grid)
    return out


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """A job's parquet; one that cannot be read (cut short, not parquet) is refused, naming it."""
    try:
        return pd.read_parquet(path)
    except FileNotFoundError:
        raise DamagedInput(f"{path}: missing; rebuild it with `{rebuild_command(path)}`.") from None
    except Exception as exc:  # pyarrow's ArrowInvalid, OSError, ...: the bytes are not a parquet table
        raise refuse(path, f"it cannot be read as a parquet table ({type(exc).__name__}: {exc})") from None


def job_results(paths: Iterable[str | os.PathLike], grid: Grid | None = None) -> pd.DataFrame:
    """The job tables ``paths``, each read and checked against ``grid`` (structure only when None),
    concatenated; the first that fails is removed and refused (:func:`refuse`)."""
    grid = grid or Grid()
    frames = []
    for path in paths:
        df = read_table(path)
        problems = grid_problems(df, path, grid)
        if problems:
            shown = "; ".join(problems[:4]) + (f"; and {len(problems) - 4} more" if len(problems) > 4 else "")
            raise refuse(path, f"it does not cover the configured grid: {shown}")
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=KEY_COLUMNS)


def experiment_grid(fig: dict) -> Grid:
    """The grid of a mean or LDP-SGD figure entry (its smoke overrides applied): its ε, its
    repetitions (mean: ``reps`` or more with ``test_reps``; SGD: ``cv_repetitions`` × ``folds``, one
    row per fit), its swept parameters and (mean) its ``sizes`` as ``n_users``."""
    axes = dict(fig.get("sweep") or {})
    if fig.get("kind") == "sgd":
        reps = int(fig["cv_repetitions"]) * int(fig["folds"])
    else:
        reps = repetitions_run(fig)
        if fig.get("sizes"):
            axes["n_users"] = list(fig["sizes"])
    return Grid(eps=list(fig["eps"]), reps=reps, axes=axes)
