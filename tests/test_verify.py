"""Issue 29: every intermediate is verified when read, and a damaged output is removed (so rebuilt),
never reused: processed datasets against their data card (sha256, rows), job tables against the
configured grid (ldprepro.pipeline.verify), every output against its digest sidecar or its own
structure (ldprepro.pipeline.integrity), and every output of a rule that builds a target is a
target (ldprepro.pipeline.parse.complete_targets). Small tables only: no workflow run here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ldprepro.data.table import Column, Table, data_card, finalise, write_outputs
from ldprepro.data.transform import load
from ldprepro.pipeline import integrity
from ldprepro.pipeline.errors import DamagedInput
from ldprepro.pipeline.io import atomic_write_text, write_parquet
from ldprepro.pipeline.parse import complete_targets
from ldprepro.pipeline.results import tidy_frame
from ldprepro.pipeline.verify import Grid, experiment_grid, grid_problems, job_results, read_table

# ------------------------------------------------------------------ processed datasets (load)


@pytest.fixture
def processed(tmp_path):
    """data/processed/toy.parquet + toy.json of a 10,000-row table, as the data rules write them."""
    root = tmp_path / "data" / "processed"
    df = pd.DataFrame({"age": [17 + (i * 7) % 74 for i in range(10_000)], "x": [i / 10_000 for i in range(10_000)]})
    t = finalise(
        Table(df, [Column("age", "numeric", [17, 90], integer=True), Column("x", "numeric")], "toy.csv", 10_000)
    )
    write_outputs(t, data_card("toy", {"kind": "table"}, t, []), root / "toy.parquet", root / "toy.json")
    return root


def test_the_card_records_the_parquets_sha256_and_rows(processed):
    card = json.loads((processed / "toy.json").read_text())
    assert card["parquet"] == {
        "file": "toy.parquet",
        "sha256": integrity.sha256_file(processed / "toy.parquet"),
        "rows": 10_000,
    }
    df, loaded = load("toy", processed)
    assert len(df) == 10_000 and loaded == card


def test_one_flipped_bit_in_a_processed_parquet_is_refused_naming_file_and_command(processed):
    """It used to change 1,206 ages and 68 of 180 dct/fig1 means, exit 0."""
    path = processed / "toy.parquet"
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(DamagedInput) as err:
        load("toy", processed)
    msg = str(err.value)
    assert f"{path}: its sha256" in msg and "recorded in its data card" in msg
    assert f"snakemake --cores all {path}" in msg
    assert not path.exists()  # removed: the next run rebuilds it, never reuses it


def test_a_processed_parquet_cut_to_fewer_rows_is_refused(processed):
    """A valid parquet of 700 of the 10,000 rows used to be used by every job."""
    path = processed / "toy.parquet"
    pd.read_parquet(path).head(700).to_parquet(path, index=False)
    with pytest.raises(DamagedInput, match=r"toy\.parquet: its sha256 .* differs"):
        load("toy", processed)


def test_a_data_card_cut_short_names_the_file(processed):
    """It used to be a bare JSONDecodeError without the file name."""
    card = processed / "toy.json"
    card.write_text(card.read_text()[:200])
    with pytest.raises(DamagedInput, match=r"toy\.json: the data card is not valid JSON .*cut short"):
        load("toy", processed)
    assert not card.exists()


def test_a_card_without_the_parquet_record_cannot_vouch_for_its_table(processed):
    card = processed / "toy.json"
    record = json.loads(card.read_text())
    del record["parquet"]
    card.write_text(json.dumps(record))
    with pytest.raises(DamagedInput, match=r"toy\.json: the data card has no 'parquet' record"):
        load("toy", processed)


# ------------------------------------------------------------------ job tables against the grid

FIG = {"kind": "mean", "eps": [0.5, 1.0], "reps": 3, "sizes": [100, 200], "mechanisms": ["pm"]}


def _job(tmp_path, name="synth__pm.parquet", drop=None) -> str:
    rows = [
        {
            "paper": "dct",
            "figure": "fig3",
            "dataset": "synth",
            "mechanism": "pm",
            "eps": e,
            "rep": r,
            "n_users": n,
            "metric": m,
            "value": 0.1 * r + e,
        }
        for e in FIG["eps"]
        for n in FIG["sizes"]
        for m in ("abs_error", "abs_error_theory")
        for r in (range(3) if m == "abs_error" else [0])
    ]
    df = tidy_frame(rows)
    if drop is not None:
        df = df[~drop(df)]
    path = tmp_path / "results" / "dct" / "fig3" / name  # a pipeline output: refuse() may remove it
    path.parent.mkdir(parents=True, exist_ok=True)
    write_parquet(df, path)
    return str(path)


def test_a_complete_job_table_passes(tmp_path):
    raw = job_results([_job(tmp_path)], experiment_grid(FIG))
    assert len(raw) == 2 * 2 * (3 + 1)


@pytest.mark.parametrize(
    "drop, needle",
    [
        # a whole point removed (a figure with a point missing, exit 0, on main)
        (
            lambda d: (d.eps == 1.0) & (d.n_users == 200) & (d.metric == "abs_error"),
            r"3 of the 4 points of eps × n_users",
        ),
        # one repetition removed (verdicts on n = 2 on main)
        (lambda d: (d.eps == 0.5) & (d.n_users == 100) & (d.rep == 2), r"without exactly the 3 repetitions 0\.\.2"),
        # a configured ε missing everywhere
        (lambda d: d.eps == 1.0, r"eps \[1\] missing \(configured \[0\.5, 1\]\)"),
        # a configured size missing everywhere
        (lambda d: d.n_users == 200, r"n_users \[200\] missing"),
    ],
)
def test_a_job_table_with_rows_removed_is_refused_naming_file_and_command(tmp_path, drop, needle):
    path = _job(tmp_path, drop=drop)
    with pytest.raises(DamagedInput, match=needle) as err:
        job_results([path], experiment_grid(FIG))
    assert str(err.value).startswith(f"{path}: it does not cover the configured grid")
    assert f"snakemake --cores all {path}" in str(err.value)
    assert not Path(path).exists()


def test_duplicates_and_a_wrong_file_are_refused(tmp_path):
    path = _job(tmp_path)
    df = pd.read_parquet(path)
    write_parquet(pd.concat([df, df.head(1)]), path)
    with pytest.raises(DamagedInput, match="1 duplicated row"):
        job_results([path], experiment_grid(FIG))
    other = _job(tmp_path, name="synth__duchi.parquet")  # pm's rows under duchi's name
    with pytest.raises(DamagedInput, match=r"its mechanism should be 'duchi' \(from the file name\)"):
        job_results([other], experiment_grid(FIG))


def test_points_are_keyed_to_12_digits_and_the_example_is_the_tables_first_short_point(tmp_path):
    """The grid check keys each distinct value once (not each row): values equal to 12 significant
    digits are one point, NaN and None one missing value, and the point named as the example of a
    short one is the first in the table's order, as a row-by-row reading names it."""
    df = pd.read_parquet(_job(tmp_path))
    nudged = df.copy()
    nudged.loc[nudged["rep"] == 1, "eps"] = nudged.loc[nudged["rep"] == 1, "eps"] * (1 + 1e-14)
    assert grid_problems(nudged, "results/dct/fig3/synth__pm.parquet", experiment_grid(FIG)) == []
    moved = df.copy()
    moved.loc[moved["rep"] == 2, "eps"] = moved.loc[moved["rep"] == 2, "eps"] * (1 + 1e-9)  # a new ε value
    short = df[~((df["rep"] == 2) & (df["metric"] == "abs_error") & (df["n_users"] == 200))]
    for table, first in [(short, "eps = 0.5, n_users = 200.0"), (short.iloc[::-1], "eps = 1.0, n_users = 200.0")]:
        problems = grid_problems(table, "results/dct/fig3/synth__pm.parquet", experiment_grid(FIG))
        assert problems == [
            "synth/pm/abs_error: 2 point(s) without exactly the 3 repetitions 0..2 "
            f"(e.g. at {first}: 2 repetition(s), [0, 1])"
        ]
    problems = grid_problems(moved, "results/dct/fig3/synth__pm.parquet", experiment_grid(FIG))
    assert any("not configured" in p for p in problems)
    missing = df.astype({"dataset": object})
    missing.loc[missing.index[:2], "dataset"] = [None, float("nan")]  # rep 0 and 1 of one point
    assert grid_problems(missing, "x/synth__pm.parquet", Grid(reps=3, named=None)) == [
        "None/pm/abs_error: 2 point(s) without exactly the 3 repetitions 0..2 "
        "(e.g. at eps = 0.5: 1 repetition(s), [0])",
        "synth/pm/abs_error: 2 point(s) without exactly the 3 repetitions 0..2 "
        "(e.g. at eps = 0.5: 2 repetition(s), [1, 2])",
    ]


def test_a_job_parquet_cut_in_half_is_refused_not_an_arrow_error(tmp_path):
    """It used to fail every later run with ArrowInvalid and never be rebuilt."""
    path = _job(tmp_path)
    data = open(path, "rb").read()
    open(path, "wb").write(data[: len(data) // 2])
    with pytest.raises(DamagedInput, match=r"synth__pm\.parquet: it cannot be read as a parquet table"):
        job_results([path], Grid())
    assert not Path(path).exists()


def test_per_dataset_grids_and_exact_metrics(tmp_path):
    rows = [
        {
            "paper": "ldpfl",
            "figure": "fig1",
            "dataset": ds,
            "mechanism": "pm",
            "eps": e,
            "rep": r,
            "metric": "v",
            "value": 1.0,
        }
        for ds, eps, reps in (("analytic", [0.1, 0.2, 0.3], 1), ("monte_carlo", [0.5], 3))
        for e in eps
        for r in range(reps)
    ]
    path = tmp_path / "pm.parquet"
    write_parquet(tidy_frame(rows), path)
    grid = Grid(
        eps={"analytic": [0.1, 0.2, 0.3], "monte_carlo": [0.5]},
        reps={"analytic": 1, "monte_carlo": 3},
        named="mechanism",
    )
    assert len(job_results([path], grid)) == 6
    with pytest.raises(DamagedInput, match=r"monte_carlo/pm/v: 1 point\(s\) without exactly the 4 repetitions"):
        job_results([path], Grid(eps=grid.eps, reps={"analytic": 1, "monte_carlo": 4}, named="mechanism"))


# ------------------------------------------------------------------ outputs repaired at the start of a run


def test_damaged_outputs_are_removed_and_intact_ones_kept(tmp_path, monkeypatch):
    """The start of every run (Snakefile): empty, cut or altered outputs are removed, so Snakemake
    rebuilds them; a zero-byte figure was accepted by `-n` and embedded in the report on main."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "results" / "p" / "fig1"
    figs = tmp_path / "figures" / "p"
    write_parquet(pd.DataFrame({"a": range(50)}), out / "job.parquet")
    write_parquet(pd.DataFrame({"a": range(50)}), out / "cut.parquet")
    write_parquet(pd.DataFrame({"a": range(50)}), out / "rows.parquet")
    atomic_write_text(out / "caption.rst", "A caption.\n", digest=True)
    atomic_write_text(out / "edited.rst", "A caption.\n", digest=True)
    figs.mkdir(parents=True)
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 40 + b"\0\0\0\0IEND\xaeB`\x82"
    (figs / "fig1.png").write_bytes(png)  # no sidecar: checked by its structure
    (figs / "empty.png").write_bytes(b"")
    (figs / "fig1.svg").write_text("<svg>\n</svg>\n")
    (figs / "cut.svg").write_text("<svg>\n<path d='M0")
    (tmp_path / "data" / "processed").mkdir(parents=True)
    (tmp_path / "data" / "processed" / "x.json").write_text('{"dataset": "x", "col')
    data = (out / "cut.parquet").read_bytes()
    (out / "cut.parquet").write_bytes(data[: len(data) // 2])
    pd.DataFrame({"a": range(40)}).to_parquet(out / "rows.parquet", index=False)  # valid, but not what the job wrote
    (out / "edited.rst").write_text("Another caption.\n")
    integrity.sidecar(out / "gone.parquet").write_text("0" * 64 + "  gone.parquet\n")  # an orphan sidecar
    lines = []
    removed = dict(integrity.repair(log=lines.append))
    assert set(removed) == {
        "results/p/fig1/cut.parquet",
        "results/p/fig1/rows.parquet",
        "results/p/fig1/edited.rst",
        "figures/p/empty.png",
        "figures/p/cut.svg",
        "data/processed/x.json",
    }
    assert removed["figures/p/empty.png"] == "is empty (0 bytes)"
    assert removed["results/p/fig1/rows.parquet"].startswith("differs from what its job wrote")
    assert "not valid JSON" in removed["data/processed/x.json"] and "</svg>" in removed["figures/p/cut.svg"]
    assert all(line.startswith("ldprepro: ") and "rebuilds it" in line for line in lines)
    for kept in (
        "results/p/fig1/job.parquet",
        "results/p/fig1/caption.rst",
        "figures/p/fig1.png",
        "figures/p/fig1.svg",
    ):
        assert (tmp_path / kept).exists(), kept
    assert not integrity.sidecar(out / "cut.parquet").exists() and not integrity.sidecar(out / "gone.parquet").exists()
    assert integrity.repair(log=lines.append) == []  # nothing left to repair
    shutil.rmtree(tmp_path / "results")


class _Rule:
    def __init__(self, *output):
        self.output = list(output)


def test_every_output_of_a_rule_that_builds_a_target_is_a_target():
    """A deleted summary.parquet was never rebuilt: only its figure (and captions) were targets."""
    rules = [
        _Rule(
            "results/dct/fig3/summary.parquet",
            "results/dct/fig3/claims.parquet",
            "figures/dct/fig3.png",
            "figures/dct/fig3.svg",
        ),
        _Rule("results/{paper}/{figure}/caption.rst"),
        _Rule("results/x/other.parquet"),
    ]
    targets = ["figures/dct/fig3.png", "figures/dct/fig3.svg", "results/dct/fig3/caption.rst"]
    assert complete_targets(rules, targets) == targets + [
        "results/dct/fig3/summary.parquet",
        "results/dct/fig3/claims.parquet",
    ]


def test_nothing_is_touched_while_another_run_holds_the_lock(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "f.png").write_bytes(b"")
    (tmp_path / ".snakemake" / "locks").mkdir(parents=True)
    (tmp_path / ".snakemake" / "locks" / "0.output.lock").write_text("")
    assert integrity.repair(log=print) == [] and (tmp_path / "figures" / "f.png").exists()
    (tmp_path / ".snakemake" / "locks" / "0.output.lock").unlink()
    assert integrity.repair(log=print) == [("figures/f.png", "is empty (0 bytes)")]


def test_a_damaged_file_that_is_no_pipeline_output_is_refused_but_left_in_place(tmp_path):
    """Only pipeline outputs are removed: a source file read by mistake as a job table (a caption's
    prose passed among a figure's inputs) is named and kept."""
    source = tmp_path / "src" / "fig1.rst"
    source.parent.mkdir()
    source.write_text("The paper claims A beats B.\n", encoding="utf-8")
    output = tmp_path / "results" / "p" / "fig1" / "x__pm.parquet"
    output.parent.mkdir(parents=True)
    output.write_text("not parquet", encoding="utf-8")
    with pytest.raises(DamagedInput, match="not a pipeline output .* left in place"):
        read_table(source)
    assert source.read_text(encoding="utf-8") == "The paper claims A beats B.\n"
    with pytest.raises(DamagedInput, match="has been removed"):
        read_table(output)
    assert not output.exists()


def test_a_killed_jobs_hidden_temporaries_are_removed_at_the_start_of_the_next_run(tmp_path, monkeypatch):
    """Issue 54 (low): a 65 KB figures/benchmark/.mean_winners.png.<random>.png stayed forever after
    a job was killed (the start-of-run check skipped hidden files). Sidecars stay; nothing is removed
    while a run holds the lock."""
    import tempfile

    monkeypatch.chdir(tmp_path)
    fig = Path("figures/benchmark/mean_winners.png")
    fig.parent.mkdir(parents=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{fig.name}.", suffix=".png", dir=fig.parent)  # as atomic_path makes it
    Path(tmp).write_bytes(b"x" * 65_000)
    atomic_write_text(fig.with_suffix(".json"), "{}", digest=True)  # a real output and its sidecar
    raw = Path("data/raw/adult")
    raw.mkdir(parents=True)
    (raw / ".adult.data.fetching").write_text("half a download")
    (raw / ".pages.abc").mkdir()
    (raw / "adult.data").write_text("kept")
    Path(".snakemake/locks").mkdir(parents=True)
    (Path(".snakemake/locks") / "0.input.lock").write_text("")
    assert integrity.repair(log=lambda m: None) == [] and Path(tmp).exists()  # a run holds the lock
    shutil.rmtree(".snakemake/locks")
    said = []
    integrity.repair(log=said.append)
    assert not Path(tmp).exists() and not (raw / ".adult.data.fetching").exists() and not (raw / ".pages.abc").exists()
    assert (raw / "adult.data").exists() and integrity.sidecar(fig.with_suffix(".json")).exists()
    assert any("a killed job left behind" in s and fig.name in s for s in said)


def test_an_interrupted_run_is_not_called_an_error(tmp_path):
    from ldprepro.pipeline.parse import stop_line

    log = tmp_path / "run.log"
    log.write_text("Terminating processes on user request, this might take some time.\n")
    assert "interrupted" in stop_line(log) and "error" not in stop_line(log)
    log.write_text("Error in rule figure_job:\n")
    assert "stopped with an error" in stop_line(log) and "stopped with an error" in stop_line(None)
