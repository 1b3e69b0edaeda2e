"""Combine the benchmark jobs, attach privacy, rank the cells, and write the generated table."""

from __future__ import annotations

import math

import pandas as pd

from ldprepro.benchmark.privacy import privacy_table
from ldprepro.benchmark.winners import rank_cells, winners
from ldprepro.claims.multiplicity import format_p
from ldprepro.report.markup import markdown_text

TASK_TITLES = {
    "mean": "Mean estimation (MSE of the mean)",
    "frequency": "Frequency estimation (MSE of the frequencies)",
    "sgd": "LDP-SGD (test metric on shared cross-validation folds)",
}


def combine(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The jobs' tidy rows in one frame, with ``k`` (oracle domain size; 0 for numeric tasks)."""
    df = pd.concat(frames, ignore_index=True)
    df["k"] = df["n_attributes"].where(df["task"] == "frequency", 0).fillna(0).astype(int)
    return df.sort_values(["task", "dataset", "mechanism", "eps", "metric", "rep"], kind="mergesort").reset_index(
        drop=True
    )


def analyse(results: pd.DataFrame, audit: pd.DataFrame | None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(privacy, ranked cells, winners) of the combined results."""
    privacy = privacy_table(results, audit)
    ranked = rank_cells(results, privacy)
    ranked = ranked.merge(
        privacy[["task", "mechanism", "eps", "exact_loss", "eps_empirical", "unverifiable"]].drop_duplicates(
            ["task", "mechanism", "eps"]
        ),
        on=["task", "mechanism", "eps"],
        how="left",
    )
    return privacy, ranked, winners(ranked)


def _g(v: float) -> str:
    if v is None or math.isnan(v):
        return "—"
    return "∞" if math.isinf(v) else f"{v:.3g}"


#: The hand-written note on the peer libraries (pure-ldp, multi-freq-ldpy), checked by
#: tests/test_frequency_peers.py, where each defect is asserted where it is.
PEER_NOTE = [
    "## Peer libraries",
    "",
    "tests/test_frequency_peers.py runs our OLH, BLH, SS and HR beside pure-ldp (local hashing, Hadamard "
    "response) and multi-freq-ldpy (local hashing, subset selection) on the same inputs: on the peers' own "
    "reports our estimator gives their estimate, and their reports' estimates are unbiased with our exact "
    "variance. What differs:",
    "",
    "- **Both peers' local hashing does not run with xxhash ≥ 4**: they hash `str(v)`, which xxhash 4 "
    "refuses (TypeError: strings must be encoded); neither pins xxhash < 4. The tests hash the string's "
    "UTF-8 bytes, which is what xxhash < 4 did.",
    "- **multi-freq-ldpy's estimators are biased by design**: its `*_Aggregator_MI` clips negative "
    "estimates to 0 and renormalises to sum 1, so rare values are overestimated and the variance is not "
    "the closed form; the tests check that it equals our unbiased estimate, clipped and renormalised.",
    "- **pure-ldp's Hadamard response** is this project's HR (the construction with output sets of "
    "half the alphabet) only for ε ≤ 1; above, it switches to the paper's blocked construction, which "
    "our HR does not implement. It also calls `random.randint` with a float bound (deprecated since "
    "Python 3.10, an error from 3.12), and its default item mapping is 1-based (`x − 1`).",
    "- **pure-ldp's `frequency_oracles` package imports statsmodels** (its RAPPOR server) without "
    "declaring it; the test extra lists statsmodels.",
    "",
]


def plane_markdown(win: pd.DataFrame, exact_win: pd.DataFrame | None, claims: pd.DataFrame | None) -> list[str]:
    """The (k, ε) plane: measured winners per synthetic panel, exact winners, and the theory claims."""
    plane = win[(win["task"] == "frequency") & win["dataset"].str.contains(", k = ", regex=False)]
    if not len(plane) and exact_win is None:
        return []
    lines = [
        "## Frequency oracles on the (k, ε) plane",
        "",
        "Synthetic panels (zipf and uniform counts, every k of the plane) are in the frequency table above "
        "(datasets `<distribution>, k = <k>`) and drawn in figures/benchmark/frequency_plane.png (the winner "
        "map, measured and exact) and frequency_plane_theory.png (measured MSE beside its exact expectation).",
        "",
    ]
    if exact_win is not None and len(exact_win):
        eps = sorted(exact_win["eps"].unique())
        lines += [
            "Exact winners: the oracles of smallest closed-form variance at a value of true count 0 "
            "(ties: equal variances), per k (rows) and ε (columns).",
            "",
            "| k | " + " | ".join(f"ε = {e:g}" for e in eps) + " |",
            "|---|" + "---|" * len(eps),
        ]
        for k, g in exact_win.groupby("k", sort=True):
            cells = g.set_index("eps")["winners"]
            lines.append(f"| {k} | " + " | ".join(cells[e].replace(",", ", ") for e in eps) + " |")
        lines.append("")
    if claims is not None and len(claims):
        lines += [
            "Theory claims (declared in config.yaml, benchmark.frequency.claims), decided by exact computation "
            "on the closed-form variances:",
            "",
        ]
        lines += ["| claim | scope | verdict | evidence |", "|---|---|---|---|"]
        for r in claims.itertuples(index=False):  # the claims' words are config text: data, never markup
            cells = [markdown_text(r.claim), markdown_text(r.scope), f"**{r.verdict}**", markdown_text(r.evidence)]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def markdown(
    win: pd.DataFrame,
    ranked: pd.DataFrame,
    unavailable: dict[str, str],
    scale: str,
    seed: int,
    exact_win: pd.DataFrame | None = None,
    claims: pd.DataFrame | None = None,
) -> str:
    """The generated page docs/benchmark.md: per task, one row per (dataset, ε) with the winner set
    and the runner-up's ratio; the frequency oracles' (k, ε) plane with its theory claims; then which
    mechanisms were excluded as not LDP, and the note on the peer libraries."""
    lines = [
        "<!-- generated by the benchmark stage (snakemake benchmark_tables); do not edit by hand -->",
        "# Cross-paper benchmark",
        "",
        f"Scale `{scale}`, seed {seed}. Every registered mechanism on every dataset obtainable here, at one "
        "ε grid, under common random numbers. **Best** = lowest mean error (MSE; LDP-SGD: its test metric) among the mechanisms "
        "that are ε-LDP at that ε (exact loss from their pmf/pdf, once that law is verified); **tied** = not separated from it by the "
        "paired ratio-of-means test after Holm correction within the cell (α = 0.05). The runner-up "
        "columns give the ratio of its mean error to the best's with a 95% CI, its Holm-adjusted p and the "
        "smallest ratio the test could detect (MDE). Rule and caveats: see the end of this page.",
        "",
    ]
    for task, tw in win.groupby("task", sort=False):
        lines += [
            f"## {TASK_TITLES.get(task, task)}",
            "",
            "| dataset | ε | best | tied with it | runner-up | ratio [95% CI] | Holm p | MDE | reps |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in tw.itertuples(index=False):
            lines.append(
                f"| {r.dataset} | {r.eps:g} | {r.best} | {r.tied.replace(',', ', ') or '—'} | {r.runner_up or '—'} "
                f"| {_g(r.runner_up_ratio)} [{_g(r.runner_up_ci_low)}, {_g(r.runner_up_ci_high)}] "
                f"| {format_p(r.runner_up_p_holm)} | {_g(r.runner_up_mde)} | {r.n_reps} |"
            )
        counts = tw["winner_set"].str.split(",").explode().value_counts()
        lines += [
            "",
            "Cells won or tied for the win: " + ", ".join(f"{m} {c}" for m, c in counts.items()) + f" (of {len(tw)}).",
            "",
        ]
    lines += plane_markdown(win, exact_win, claims)
    excluded = ranked[ranked["status"] == "not LDP"]
    if len(excluded):
        lines += [
            "## Not LDP (never best)",
            "",
            "| task | mechanism | ε | exact loss | cells where its MSE was below the best's |",
            "|---|---|---|---|---|",
        ]
        below = win.assign(m=win["not_ldp_below_best"].str.split(",")).explode("m")
        for (task, mech, eps), g in excluded.groupby(["task", "mechanism", "eps"], sort=True):
            n_below = int(((below["task"] == task) & (below["m"] == mech) & (below["eps"] == eps)).sum())
            lines.append(f"| {task} | {mech} | {eps:g} | {_g(g['exact_loss'].iloc[0])} | {n_below} of {len(g)} |")
        lines.append("")
    unverified = ranked[ranked["status"] == "unverifiable"]
    if len(unverified):
        lines += [
            "## Unverifiable (never best)",
            "",
            "Their declared output law failed the check of `ldprepro.domain.mechanisms.law_check` "
            "(docs/audit.md), so no exact loss is computed from it.",
            "",
            "| task | mechanism | ε | why |",
            "|---|---|---|---|",
        ]
        for (task, mech, eps), g in unverified.groupby(["task", "mechanism", "eps"], sort=True):
            why = str(g["unverifiable"].iloc[0]).replace("|", "/")
            lines.append(f"| {task} | {mech} | {eps:g} | {why} |")
        lines.append("")
    if unavailable:
        lines += ["## Not available here", ""] + [f"- {ds}: {why}" for ds, why in sorted(unavailable.items())] + [""]
    lines += PEER_NOTE
    lines += [
        "## Rule and caveats",
        "",
        "- The candidate is chosen by its sample mean and then tested against the others, which makes a "
        "separation slightly easier than for a pre-declared pair; a tie means the repetitions cannot tell "
        "the mechanisms apart at this number of repetitions (see MDE).",
        "- Multidimensional collections inherit the privacy verdict of their 1-D mechanism (sampling at "
        "ε/k per attribute: sequential composition); the audit stage checks the collections themselves.",
        "- Values are rescaled to [−1, 1] as in every figure; MSE is on that scale.",
        "- Frequency oracles: the MSE is that of the frequency vector, averaged over the k values; "
        "local hashing is run under its ideal hash (a uniformly random function, the law its variance "
        "assumes; docs in ldprepro.domain.frequency.local_hashing), HR is the construction with output "
        "sets of half the alphabet at every ε, and SS uses the subset size of smallest exact variance.",
        "",
    ]
    return "\n".join(lines)
