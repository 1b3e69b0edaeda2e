"""What the claims' extra repetitions buy: the verdicts of two runs compared (issue 27; not a test).

Some figures run more repetitions than their paper (``test_reps``/``claim_reps``, timing/papers_reps.py)
so that their claims' tests have the power docs/verdicts-standard.md asks for. Whether to keep them
is a trade between the offline run's wall time and those verdicts; this module puts the verdict side
in numbers. It reads every ``results/<paper>/<figure>/claims.parquet`` of a run with the default
config and of a run with the overlay papers_reps.py writes (every figure at its paper's repetitions),
pairs the claims by (paper, figure, claim_id) and lists:

- every claim whose verdict differs (default → at the papers' repetitions), with its repetitions, its
  effect and interval and its minimum detectable effect (MDE) in both runs;
- every claim whose repetitions differ but whose verdict does not (its MDE grows).

Both runs must hold the same claims (the same figures, claim ids and texts); a difference is an
error naming the figure, since then the runs are not the same pipeline. Writes
``papers_reps_verdicts.json`` and ``.md``; targets.py reads the JSON into the offline target::

    .venv/bin/python -m timing.papers_reps_verdicts --default RUN/results --papers RUN2/results --note "..."
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd

from .bench_common import write_record

HERE = Path(__file__).resolve().parent
#: the columns of a claims table this comparison reads (ldprepro.claims.tables.write_claims)
COLUMNS = ("claim_id", "claim", "verdict", "n_reps", "mde", "effect", "ci_low", "ci_high", "test")
KEY = ("paper", "figure", "claim_id")


def read_claims(results: Path) -> pd.DataFrame:
    """Every figure's claims table under ``results`` (results/<paper>/<figure>/claims.parquet), one
    frame with ``paper`` and ``figure`` columns; an error names a file that lacks a column."""
    frames = []
    for path in sorted(results.glob("*/*/claims.parquet")):
        df = pd.read_parquet(path)
        missing = [c for c in COLUMNS if c not in df.columns]
        if missing:
            raise SystemExit(f"{path}: not a claims table (no column {', '.join(missing)}); pass a run's results/")
        df = df[list(COLUMNS)].copy()
        df.insert(0, "figure", path.parent.name)
        df.insert(0, "paper", path.parent.parent.name)
        frames.append(df)
    if not frames:
        raise SystemExit(f"{results}: no results/<paper>/<figure>/claims.parquet; pass a finished run's results/")
    return pd.concat(frames, ignore_index=True)


def _number(v) -> float | None:
    return None if v is None or pd.isna(v) or not math.isfinite(float(v)) else float(v)


def _reps(v) -> int | None:
    return None if v is None or pd.isna(v) else int(v)


def compare(default: pd.DataFrame, papers: pd.DataFrame) -> dict:
    """The claims whose verdict or repetitions differ between the two runs (see the module docstring)."""
    merged = default.merge(papers, on=list(KEY), how="outer", suffixes=("", "_papers"), indicator=True)
    lone = merged[merged["_merge"] != "both"]
    if len(lone):
        r = lone.iloc[0]
        side = "the default run" if r["_merge"] == "left_only" else "the papers'-repetitions run"
        raise SystemExit(
            f"{r['paper']}/{r['figure']}: claim {r['claim_id']} is only in {side}; "
            "compare two runs of the same commit and config"
        )
    text_differs = merged[merged["claim"] != merged["claim_papers"]]
    if len(text_differs):
        r = text_differs.iloc[0]
        raise SystemExit(f"{r['paper']}/{r['figure']}: claim {r['claim_id']} has different texts in the two runs")
    changed, power_only = [], []
    for _, r in merged.iterrows():
        row = {
            **{k: (int(r[k]) if k == "claim_id" else r[k]) for k in KEY},
            "claim": r["claim"],
            "test": r["test"],
            "verdict": r["verdict"],
            "verdict_papers": r["verdict_papers"],
            **{
                f"{c}{s}": _number(r[f"{c}{s}"])
                for c in ("effect", "ci_low", "ci_high", "mde")
                for s in ("", "_papers")
            },
            "n_reps": _reps(r["n_reps"]),
            "n_reps_papers": _reps(r["n_reps_papers"]),
        }
        if row["verdict"] != row["verdict_papers"]:
            changed.append(row)
        elif row["n_reps"] != row["n_reps_papers"]:
            power_only.append(row)
    return {"claims": len(merged), "verdict_changed": changed, "repetitions_only": power_only}


def target_sentence(report: dict | None) -> str:
    """The offline target's words on what the papers' repetitions would cost the verdicts (targets.py),
    from :func:`compare`'s report; empty when there is none."""
    if not report:
        return ""
    changed = report["verdict_changed"]
    if not changed:
        return f". At the papers' repetitions none of the {report['claims']} claims changes verdict (papers_reps_verdicts.md)"
    listed = "; ".join(
        f"{r['paper']} {r['figure']} “{r['claim']}” {r['verdict']} → {r['verdict_papers']} "
        f"({r['n_reps']} → {r['n_reps_papers']} repetitions)"
        for r in changed
    )
    return (
        f". But there {len(changed)} of the {report['claims']} claims change verdict ({listed}; "
        f"papers_reps_verdicts.md, {report.get('note') or 'its runs not described'}): the default config keeps "
        "the repetitions that give those tests their declared power"
    )


def _interval(r: dict, s: str) -> str:
    e, lo, hi = r[f"effect{s}"], r[f"ci_low{s}"], r[f"ci_high{s}"]
    if e is None:
        return "—"
    return f"{e:.3g} [{lo:.3g}, {hi:.3g}]" if lo is not None and hi is not None else f"{e:.3g}"


def _mde(v: float | None) -> str:
    return "—" if v is None else f"{v:.3g}"


def markdown(report: dict) -> str:
    lines = [
        "<!-- generated by timing/papers_reps_verdicts.py; do not edit by hand -->",
        "# What the claims' extra repetitions buy",
        "",
        f"Two runs of the same commit: the default config, and every figure at its paper's repetitions "
        f"(timing/papers_reps.py's overlay). Conditions: {report.get('note') or 'not recorded'}.",
        "",
        f"Of {report['claims']} claims, **{len(report['verdict_changed'])} change verdict** at the papers' "
        f"repetitions and {len(report['repetitions_only'])} more keep it with fewer repetitions (a larger "
        "minimum detectable effect). Effect [interval] as the claims table prints them.",
        "",
        "| figure | claim | verdict (default → papers' reps) | repetitions | effect [CI], default | "
        "effect [CI], papers' reps | MDE, default → papers' reps |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in report["verdict_changed"]:
        lines.append(
            f"| {r['paper']} {r['figure']} | {r['claim']} | {r['verdict']} → **{r['verdict_papers']}** | "
            f"{r['n_reps']} → {r['n_reps_papers']} | {_interval(r, '')} | {_interval(r, '_papers')} | "
            f"{_mde(r['mde'])} → {_mde(r['mde_papers'])} |"
        )
    if report["repetitions_only"]:
        lines += [
            "",
            "Same verdict with fewer repetitions:",
            "",
            "| figure | claim | verdict | repetitions | MDE, default → papers' reps |",
            "|---|---|---|---|---|",
        ]
        for r in report["repetitions_only"]:
            lines.append(
                f"| {r['paper']} {r['figure']} | {r['claim']} | {r['verdict']} | {r['n_reps']} → "
                f"{r['n_reps_papers']} | {_mde(r['mde'])} → {_mde(r['mde_papers'])} |"
            )
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--default", required=True, type=Path, help="results/ of a run with the default config")
    ap.add_argument("--papers", required=True, type=Path, help="results/ of the run with papers_reps.py's overlay")
    ap.add_argument("--note", default="", help="the runs' commit and conditions, printed with the table")
    ap.add_argument("--out-dir", default=HERE, type=Path)
    args = ap.parse_args(argv)
    report = {**compare(read_claims(args.default), read_claims(args.papers)), "note": args.note}
    write_record(args.out_dir, "papers_reps_verdicts", report, markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
