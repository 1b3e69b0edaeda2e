"""timing/papers_reps_verdicts.py: the verdicts of the default run and of the run at the papers'
repetitions, compared claim by claim, and the offline target's sentence about them."""

import json
from pathlib import Path

import pandas as pd
import pytest

from timing import papers_reps_verdicts as prv
from timing import targets as tg


def claims_row(claim_id: int, claim: str, verdict: str, n_reps, mde, effect=1.1, lo=1.0, hi=1.2) -> dict:
    return {"claim_id": claim_id, "claim": claim, "verdict": verdict, "n_reps": n_reps, "mde": mde,
            "effect": effect, "ci_low": lo, "ci_high": hi, "test": "TOST", "evidence": "…"}  # fmt: skip


def write_run(root: Path, tables: dict) -> Path:
    """results/<paper>/<figure>/claims.parquet for each (paper, figure) → rows."""
    for (paper, figure), rows in tables.items():
        path = root / "results" / paper / figure / "claims.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        df = pd.DataFrame(rows)
        df["n_reps"] = df["n_reps"].astype("Int64")
        df.to_parquet(path)
    return root / "results"


@pytest.fixture
def runs(tmp_path):
    default = write_run(
        tmp_path / "default",
        {
            ("dct", "fig2"): [
                claims_row(1, "trend", "holds", 500, 0.03),
                claims_row(2, "close", "holds", 500, 1.15),
                claims_row(3, "LDP", "does not hold", None, None, effect=None, lo=None, hi=None),
            ],
            ("bshp", "fig1"): [claims_row(1, "agrees", "holds", 500, 1.11)],
        },
    )
    papers = write_run(
        tmp_path / "papers",
        {
            ("dct", "fig2"): [
                claims_row(1, "trend", "holds", 100, 0.07),
                claims_row(2, "close", "inconclusive", 100, 1.38, effect=1.04, lo=0.86, hi=1.25),
                claims_row(3, "LDP", "does not hold", None, None, effect=None, lo=None, hi=None),
            ],
            ("bshp", "fig1"): [claims_row(1, "agrees", "does not hold", 20, 1.43, effect=0.68, lo=0.53, hi=0.83)],
        },
    )
    return default, papers


def test_verdict_changes_and_repetitions_only_are_listed(runs):
    """A claim whose verdict differs is listed with both runs' repetitions, effects and MDEs; one whose
    repetitions alone differ is listed apart; an exact claim (no repetitions) in neither."""
    report = prv.compare(prv.read_claims(runs[0]), prv.read_claims(runs[1]))
    assert report["claims"] == 4
    changed = {(r["paper"], r["claim"]): r for r in report["verdict_changed"]}
    assert set(changed) == {("dct", "close"), ("bshp", "agrees")}
    close = changed[("dct", "close")]
    assert (close["verdict"], close["verdict_papers"], close["n_reps"], close["n_reps_papers"]) == (
        "holds", "inconclusive", 500, 100,
    )  # fmt: skip
    assert close["mde"] == 1.15 and close["mde_papers"] == 1.38 and close["ci_high_papers"] == 1.25
    assert [(r["paper"], r["claim"]) for r in report["repetitions_only"]] == [("dct", "trend")]
    text = prv.markdown({**report, "note": "two runs at abc"})
    assert "Of 4 claims, **2 change verdict**" in text and "two runs at abc" in text
    assert (
        "| dct fig2 | close | holds → **inconclusive** | 500 → 100 | 1.1 [1, 1.2] | 1.04 [0.86, 1.25] | 1.15 → 1.38 |"
        in text
    )
    assert "| dct fig2 | trend | holds | 500 → 100 | 0.03 → 0.07 |" in text


def test_runs_with_different_claims_are_refused(runs, tmp_path):
    """Two runs whose claims differ (a claim only in one, or another text) are not the same pipeline:
    the error names the figure and the claim."""
    default, _ = runs
    other = write_run(
        tmp_path / "other",
        {
            ("dct", "fig2"): [
                claims_row(1, "trend", "holds", 100, 0.07),
                claims_row(3, "LDP", "does not hold", None, None),
            ],
            ("bshp", "fig1"): [claims_row(1, "agrees", "holds", 20, 1.4)],
        },
    )
    with pytest.raises(SystemExit, match=r"dct/fig2: claim 2 is only in the default run"):
        prv.compare(prv.read_claims(default), prv.read_claims(other))
    renamed = write_run(
        tmp_path / "renamed",
        {
            ("dct", "fig2"): [
                claims_row(1, "a different trend", "holds", 100, 0.07),
                claims_row(2, "close", "holds", 100, 1.2),
                claims_row(3, "LDP", "does not hold", None, None),
            ],
            ("bshp", "fig1"): [claims_row(1, "agrees", "holds", 20, 1.4)],
        },
    )
    with pytest.raises(SystemExit, match=r"dct/fig2: claim 1 has different texts"):
        prv.compare(prv.read_claims(default), prv.read_claims(renamed))
    with pytest.raises(SystemExit, match="no results/<paper>/<figure>/claims.parquet"):
        prv.read_claims(tmp_path / "empty")
    bad = tmp_path / "bad" / "results" / "x" / "fig1" / "claims.parquet"
    bad.parent.mkdir(parents=True)
    pd.DataFrame({"claim": ["c"]}).to_parquet(bad)
    with pytest.raises(SystemExit, match=r"x/fig1/claims.parquet: not a claims table \(no column claim_id"):
        prv.read_claims(tmp_path / "bad" / "results")


def test_the_offline_target_states_the_verdicts_the_papers_repetitions_change(runs, tmp_path):
    """main writes the JSON targets.py reads; the offline target names every changed verdict, and says
    so when none changes."""
    prv.main(["--default", str(runs[0]), "--papers", str(runs[1]), "--note", "at abc", "--out-dir", str(tmp_path)])
    report = json.loads((tmp_path / "papers_reps_verdicts.json").read_text())
    assert (tmp_path / "papers_reps_verdicts.md").read_text() == prv.markdown(report)
    figures = {"cpus": 2, "figures": [], "totals": {}}
    totals = {"run_wall_s": 340.0, "run_cpu_s": 680.0, "cores": 2, "jobs": 6, "load_before": 0.1,
              "fixed_cpu_s": 3.0, "snakemake_cpu_s": 1.0, "setup_cpu_s": 2.0, "outside_jobs_cpu_s": 0.0,
              "work_cpu_s": 677.0, "floor_s": 60.0}  # fmt: skip
    figures["figures"] = [{"floor_cpu_s": 50.0, "cpu_over_floor": 1.2}]
    row = tg.offline_target({**figures, "accounts": {"totals": totals}}, None, report)
    assert (
        "But there 2 of the 4 claims change verdict (bshp fig1 “agrees” holds → does not hold (500 → 20"
        in (row["explanation"])
    )
    assert (
        "dct fig2 “close” holds → inconclusive (500 → 100 repetitions); papers_reps_verdicts.md, at abc)"
        in (row["explanation"])
    )
    none = tg.offline_target({**figures, "accounts": {"totals": totals}}, None, {**report, "verdict_changed": []})
    assert none["explanation"].endswith("none of the 4 claims changes verdict (papers_reps_verdicts.md)")
