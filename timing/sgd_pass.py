"""Is the LDP-SGD pass over a fit's rows bound by memory or by arithmetic? (issue 27; not a test)

The IPUMS-sized SGD jobs run several settings (ε values) on each fit's training rows, each setting
a full pass over the fit's gathered block of rows (``experiments.sgd_figures._fit_all``). If a pass
were bound by reading the block from memory, one pass advancing every setting at once would save
most of its cost; if it is bound by the arithmetic (each user's margin xᵀθ, σ, the clipped
gradient), it would save almost nothing.

This script times the compiled non-private steps (``sgd.ldp_sgd_fits`` with
``group_collector(None)``: the work every setting pays before any perturbation) per training row,
on a block of the census size (ldpfl Fig. 8's IPUMS BR panel: n = 2,895,705 rows × d = 28, 650 MB,
far larger than the caches) and on a block that stays in cache (16,384 rows, 3.7 MB, visited over and over: the same number of visits and steps), at the group
sizes of ε = 8 … 0.5 (G = 2 … 374) and a large one (5,000). CPU time, min of ``--repeats`` runs after a warm-up,
the two blocks timed in alternation. The rows are SYNTHETIC (standard normal / √d clipped to
[−1, 1], random ±1 labels): only their count and width matter for the cost.

Writes ``sgd_pass.json`` and ``sgd_pass.md`` (``--out-dir``, default timing/).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402  (beside this script)

HERE = Path(__file__).resolve().parent
CENSUS_ROWS, D = 2_895_705, 28
CACHE_ROWS = 16_384
#: G = ⌈d ln d / ε²⌉ at d = 28 is 374, 94, 24, 6, 2 for ε = 0.5 … 8; and a large group
GROUP_SIZES = (2, 6, 24, 94, 374, 5000)


def _fit_seconds(X: np.ndarray, y: np.ndarray, visit: np.ndarray, G: int) -> float:
    """CPU seconds of one non-private fit visiting the rows ``visit`` of X."""
    from ldprepro.domain.sgd import group_collector, ldp_sgd_fits

    t = time.process_time()
    ldp_sgd_fits(
        X, y, [visit], "logistic", group_collector(None), G, 1e-4, "constant_inv_sqrt_T", 1.0,
        np.random.default_rng(0), finite=True,
    )  # fmt: skip
    return time.process_time() - t


def paired_ns_per_row(blocks: list[tuple], G: int, repeats: int) -> list[float]:
    """Per block (X, y, visit): the min over ``repeats`` of one fit's CPU time per visited row. The
    blocks are timed in alternation within each repeat, after one warm-up fit each, so that a slow
    spell of the machine falls on all of them."""
    for X, y, visit in blocks:
        _fit_seconds(X, y, visit, G)
    best = [float("inf")] * len(blocks)
    for _ in range(repeats):
        for i, (X, y, visit) in enumerate(blocks):
            best[i] = min(best[i], _fit_seconds(X, y, visit, G))
    return [b / visit.size * 1e9 for b, (_, _, visit) in zip(best, blocks)]


def numpy_ns_per_row(
    X: np.ndarray, y: np.ndarray, G: int, repeats: int, passes: int = 20, clipped: bool = False
) -> float:
    """The references: the same logistic gradient by numpy per group of G rows of a cache-resident X
    (margins Xᵦθ by BLAS, σ), then, without the per-coordinate clipping, Xᵦᵀ·coef by BLAS, or, with
    it (``clipped``), the clipped per-user gradients elementwise and their column sums; per row, min
    over ``repeats`` of ``passes`` passes over X."""
    theta = np.zeros(X.shape[1])
    lam = 1e-4
    best = float("inf")
    groups = X.shape[0] // G
    for r in range(repeats + 1):
        t = time.process_time()
        for _ in range(passes):
            for b in range(0, groups * G, G):
                xb, yb = X[b : b + G], y[b : b + G]
                coef = -yb / (1.0 + np.exp(yb * (xb @ theta)))
                if clipped:
                    g = coef[:, None] * xb
                    g += lam * theta
                    np.clip(g, -1.0, 1.0, out=g).sum(axis=0)
                else:
                    xb.T @ coef
        best = min(best, time.process_time() - t) if r else best
    return best / (passes * groups * G) * 1e9


def measure(repeats: int, census_rows: int = CENSUS_ROWS, d: int = D) -> dict:
    rng = np.random.default_rng(20261126)
    X = np.clip(rng.standard_normal((census_rows, d)) / np.sqrt(d), -1.0, 1.0)
    y = np.where(rng.random(census_rows) < 0.5, -1.0, 1.0)
    small_X, small_y = np.ascontiguousarray(X[:CACHE_ROWS]), np.ascontiguousarray(y[:CACHE_ROWS])
    # the same number of visits and steps: the census block's rows in order, or the small block's
    # rows over and over (so that it stays in cache)
    visit = np.arange(census_rows)
    rows = []
    for G in GROUP_SIZES:
        census, cached = paired_ns_per_row([(X, y, visit), (small_X, small_y, visit % CACHE_ROWS)], G, repeats)
        rows.append({"G": G, "census_ns_per_row": census, "cache_ns_per_row": cached, "ratio": census / cached})
    blas = numpy_ns_per_row(small_X, small_y, max(GROUP_SIZES), repeats)
    numpy_clipped = numpy_ns_per_row(small_X, small_y, max(GROUP_SIZES), repeats, passes=10, clipped=True)
    return {
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": describe(numpy=np.__version__),
        "census_rows": census_rows,
        "cache_rows": CACHE_ROWS,
        "d": d,
        "repeats": repeats,
        "rows": rows,
        "blas_unclipped_ns_per_row": blas,
        "numpy_clipped_ns_per_row": numpy_clipped,
        "blas_group_size": max(GROUP_SIZES),
        # what one pass advancing every setting could save at most: the part of a pass above its
        # cache-resident cost, at the group size where that part is largest
        "fused_saving_at_most": max(0.0, max(1.0 - r["cache_ns_per_row"] / r["census_ns_per_row"] for r in rows)),
    }


def markdown(res: dict) -> str:
    lines = [
        "<!-- generated by timing/sgd_pass.py; do not edit by hand -->",
        "# The LDP-SGD pass: memory or arithmetic?",
        "",
        f"Compiled non-private steps (logistic, d = {res['d']}), CPU ns per training row, min of "
        f"{res['repeats']} runs, {res['measured_at']} on {res['machine']}. SYNTHETIC rows.",
        "",
        f"| G | {'census-size' if res['census_rows'] == CENSUS_ROWS else 'large'} block ({res['census_rows']:,} rows) | cache-resident block ({res['cache_rows']:,} rows) "
        "| census / cache |",
        "|---|---|---|---|",
    ]
    for r in res["rows"]:
        lines.append(f"| {r['G']:,} | {r['census_ns_per_row']:.1f} | {r['cache_ns_per_row']:.1f} | {r['ratio']:.2f} |")
    worst = max(r["ratio"] for r in res["rows"])
    bound = (
        "about the same per row whether its rows come from memory or from cache: it is bound by the arithmetic, "
        "not by reading the block"
        if worst < 1.5
        else f"up to {worst:.1f}× more per row from memory than from cache: reading the block is a large part of it"
    )
    G = res["blas_group_size"]
    lines += [
        "",
        f"A pass costs {bound}. One pass advancing every setting of a fit at once would save at most "
        f"{100 * res['fused_saving_at_most']:.0f} % of a setting's pass.",
        "",
        f"Reference, same run: the same gradient without the per-coordinate clipping, by BLAS on the "
        f"cache-resident block (groups of {G:,}): {res['blas_unclipped_ns_per_row']:.1f} ns per row, "
        f"{min(r['cache_ns_per_row'] for r in res['rows']) / res['blas_unclipped_ns_per_row']:.1f}× below "
        "the compiled steps' best cache-resident rate; with the clipping, by numpy (the clipped per-user "
        f"gradients elementwise, then their sums): {res['numpy_clipped_ns_per_row']:.1f} ns per row. The "
        "clipping is the paper's (each user clips its own gradient), so the unclipped BLAS rate is a lower "
        "reference, not a rate the clipped computation can be expected to reach.",
    ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--rows", type=int, default=CENSUS_ROWS, help="rows of the large block (default: census size)")
    ap.add_argument("--out-dir", type=Path, default=HERE)
    args = ap.parse_args(argv)
    res = measure(args.repeats, args.rows)
    from ldprepro.pipeline.io import atomic_write_text

    args.out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out_dir / "sgd_pass.json", json.dumps(res, indent=1))
    atomic_write_text(args.out_dir / "sgd_pass.md", markdown(res))
    print(markdown(res))


if __name__ == "__main__":
    main()
