"""``bench.py``'s jobs section: a HierA Fig. 1 job at one (ε, μ); ldpfl Fig. 10's LDP-SGD per fit
against its random-number and data-pass floors, beside the earlier in-place path; an ldpfl Fig. 8
job at the BR extract's size, fit by fit on gathered rows against the fits of each ε batched in
place."""

from __future__ import annotations

import os

import numpy as np

from ldprepro.domain.mechanisms import get_multidim
from ldprepro.domain.sgd import group_collector, group_size, ldp_sgd, ldp_sgd_fits, take_rows
from ldprepro.experiments.mean import HierAEstimator
from ldprepro.pipeline.seeding import rng_for

from .bench_common import SIZES, measure, pair, slow_repeats
from .bench_render import _fmt_s


def _vehicle_like(rng, n=43_695, d=100):
    """Synthetic stand-in of ldpfl fig10's Vehicle panel (AAV vs DW: 43,695 users, 100 features in
    [−1, 1], labels ±1); the cost of SGD does not depend on the values."""
    X = rng.uniform(-1.0, 1.0, (n, d))
    y = np.where(X @ rng.normal(0, 1, d) > 0, 1.0, -1.0)
    return X, y


def bench_jobs(quick: bool, repeats: int, rng) -> list[dict]:
    rows = []
    # one HierA fig1 job at one (ε, μ): T repetitions on n = 10⁶ (paper 000's synthetic size)
    T = SIZES["hiera_reps"][not quick]
    xg = np.clip(rng.normal(0.3, 0.2, 1_000_000), -1, 1)

    def hiera_before():
        h = HierAEstimator(0.1, mu=2)
        return [h.model.run(xg, rng, path="count") for _ in range(T)]

    def hiera_after():
        h = HierAEstimator(0.1, mu=2)
        return [h.estimate(xg, rng) for _ in range(T)]

    rows.append(
        pair(
            f"HierA fig1 job, one (ε, μ), T = {T} reps, n = 10⁶",
            hiera_before,
            hiera_after,
            slow_repeats(repeats),
            floor=lambda: [rng.random(1_000_000) for _ in range(T)],
            floor_note="T·n uniforms (one Harmony discretisation draw per user and repetition)",
        )
    )
    # ldpfl fig10 SVM LDP-SGD at one ε: F CV fits, PM (sampled, k = ⌊ε/2.5⌋ attributes)
    X, y = _vehicle_like(rng)
    n_train = X.shape[0] * 9 // 10
    F, Fb = SIZES["sgd_fits"][not quick], SIZES["sgd_before_fits"][not quick]
    orders = [rng_for(0, ("order", f)).permutation(X.shape[0])[:n_train] for f in range(F)]
    # a job gathers each fit's rows once, in its visiting order, for all its settings (fig10: 5 ε × 2
    # group rules); the fits below read those blocks, and the gather is timed on its own
    blocks = [(take_rows(X, o), y[o]) for o in orders]
    gather = measure(lambda: take_rows(X, orders[0], out=blocks[0][0].copy()), repeats)
    # a job checks its data finite once, for all its fits and settings (sgd_figures), and tells each
    # fit so (``finite``): the check is timed on its own, the fits below are run as the job runs them
    finite = bool(np.isfinite(X).all() and np.isfinite(y).all())
    check = measure(lambda: bool(np.isfinite(X).all() and np.isfinite(y).all()), repeats)
    for eps in (0.5, 8.0):
        mech = get_multidim("pm", eps, X.shape[1])
        G = group_size(X.shape[1], eps)

        def before():
            for f in range(Fb):
                ldp_sgd(X[orders[f]], y[orders[f]], "svm", mech.perturb, G, 1e-4, "constant_inv_sqrt_T", 1.0, rng)

        visit = np.arange(n_train, dtype=np.int32)

        def after():  # as a job runs them: fit by fit, on the fit's rows gathered once in visiting order
            for Xf, yf in blocks:
                ldp_sgd_fits(Xf, yf, [visit], "svm", group_collector(mech), G, 1e-4, "constant_inv_sqrt_T", 1.0, rng,
                             finite=finite)  # fmt: skip

        def in_place():  # the earlier job path: all fits batched, rows read in place in shuffled order
            ldp_sgd_fits(X, y, orders, "svm", group_collector(mech), G, 1e-4, "constant_inv_sqrt_T", 1.0, rng,
                         finite=finite)  # fmt: skip

        theta = np.zeros(X.shape[1])
        b, a = measure(before, slow_repeats(repeats)), measure(after, slow_repeats(repeats))
        batched = measure(in_place, slow_repeats(repeats))
        os.environ["LDPREPRO_JIT"] = "0"  # the same fits as numpy steps
        try:
            numpy_steps = measure(after, slow_repeats(repeats))
        finally:
            os.environ.pop("LDPREPRO_JIT")
        # the same fits without a mechanism (the non-private reference's compiled steps): what a fit
        # costs before any perturbation, i.e. reading the rows in the fit's order and the gradients
        nonprivate = measure(  # as ``after``: the fits on the gathered rows
            lambda: [
                ldp_sgd_fits(
                    Xf, yf, [visit], "svm", group_collector(), G, 1e-4, "constant_inv_sqrt_T", 1.0, rng, finite=finite
                )  # fmt: skip
                for Xf, yf in blocks
            ],
            slow_repeats(repeats),
        )
        rng_floor = measure(lambda: rng.random(n_train * 2 * mech.k), repeats)
        rows_in_order = X[:n_train]
        data_floor = measure(lambda: rows_in_order @ theta, repeats)  # every datum read once, in storage order
        what = f"ldpfl fig10 SGD (SVM, PM), ε = {eps:g}: G = {G}, {n_train // G} steps, per fit"
        rows.append(
            _sgd_row(what, b, a, Fb, F, rng_floor, data_floor)
            | {
                "numpy_steps_cpu_s": numpy_steps["cpu_s"] / F,
                "in_place_batched_cpu_s": batched["cpu_s"] / F,
                "gather_cpu_s": gather["cpu_s"],
                "finite_check_cpu_s": check["cpu_s"],
                "nonprivate_cpu_s": nonprivate["cpu_s"] / F,
                "nonprivate_over_floor": nonprivate["cpu_s"] / F / rng_floor["cpu_s"],
                "fits_batched": F,
                "floor_note": f"n_train·2k = {n_train * 2 * mech.k:,} uniforms per fit",
            }
        )
    rows.append(bench_census_job(quick, repeats, rng))
    return rows


def _sgd_row(
    what: str, before: dict, after: dict, n_before: int, n_after: int, rng_floor: dict, data_pass: dict
) -> dict:
    """A per-fit SGD row: CPU and wall of ``before`` over ``n_before`` fits and ``after`` over
    ``n_after`` fits, against the random-number floor and one read of the training rows."""
    per_fit_before, per_fit_after = before["cpu_s"] / n_before, after["cpu_s"] / n_after
    return {
        "what": what,
        "before_cpu_s": per_fit_before,
        "after_cpu_s": per_fit_after,
        "before_wall_s": before["wall_s"] / n_before,
        "after_wall_s": after["wall_s"] / n_after,
        "speedup": per_fit_before / per_fit_after,
        "floor_cpu_s": rng_floor["cpu_s"],
        "after_over_floor": per_fit_after / rng_floor["cpu_s"],
        "data_pass_cpu_s": data_pass["cpu_s"],
        "after_over_data_pass": per_fit_after / data_pass["cpu_s"],
        "job_after_cpu_s_50_fits": per_fit_after * 50,
        "job_before_cpu_s_50_fits": per_fit_before * 50,
    }


def bench_census_job(quick: bool, repeats: int, rng) -> dict:
    """An IPUMS-sized LDP-SGD job (ldpfl Fig. 8 on BR: logistic regression, PM-SUB, 5 ε) on synthetic
    data of the BR extract's size (2.9 M users × 28 features, 90 % training), per fit with every ε:
    before, the fits of each ε batched and reading X in place in their shuffled order; after, fit by
    fit, the fit's rows gathered once into its visiting order and read in sequence by every ε.
    Floors: the uniforms the fits draw (attribute index and report per training user and ε), one
    read of the training rows in storage order per ε, and the gather alone; beside them the same fits
    with no mechanism (the non-private reference's steps)."""
    n, d, F = SIZES["census_n"][not quick], 28, SIZES["census_fits"][not quick]
    X = rng.uniform(-1.0, 1.0, (n, d))
    y = np.where(X @ rng.normal(0, 1, d) > 0, 1.0, -1.0)
    n_train = n * 9 // 10
    orders = [rng_for(0, ("census", f)).permutation(n)[:n_train].astype(np.int32) for f in range(F)]
    eps_grid = (0.5, 1.0, 2.0, 4.0, 8.0)
    finite = bool(np.isfinite(X).all() and np.isfinite(y).all())  # once per job, as sgd_figures (timed below)
    mechs = {eps: get_multidim("pm_sub", eps, d) for eps in eps_grid}

    def fit(Xs, ys, o, eps):
        collect = group_collector(mechs[eps])
        return ldp_sgd_fits(Xs, ys, o, "logistic", collect, group_size(d, eps), 1e-4, "constant_inv_sqrt_T", 1.0, rng,
                            finite=finite)  # fmt: skip

    def before():
        for eps in eps_grid:
            fit(X, y, orders, eps)

    block = np.empty((n_train, d))
    visit = np.arange(n_train, dtype=np.int32)

    def after():  # the fit's rows and labels gathered once, as a job does, then every ε on them
        for o in orders:
            Xf, yf = take_rows(X, o, out=block), y[o]
            for eps in eps_grid:
                fit(Xf, yf, [visit], eps)

    def nonprivate():  # ``after``'s fits with no mechanism: the rows, the gradients and the steps alone
        for o in orders:
            Xf, yf = take_rows(X, o, out=block), y[o]
            for eps in eps_grid:
                ldp_sgd_fits(Xf, yf, [visit], "logistic", group_collector(), group_size(d, eps), 1e-4,
                             "constant_inv_sqrt_T", 1.0, rng, finite=finite)  # fmt: skip

    reps = slow_repeats(repeats)
    b, a = measure(before, reps), measure(after, reps)
    free = measure(nonprivate, reps)
    draws = sum(n_train * 2 * m.k for m in mechs.values())
    rng_floor = measure(lambda: rng.random(draws), repeats)
    theta = np.zeros(d)
    rows_in_order = X[:n_train]
    data_pass = measure(lambda: [rows_in_order @ theta for _ in eps_grid], repeats)
    gather = measure(lambda: take_rows(X, orders[0], out=block), repeats)
    check = measure(lambda: bool(np.isfinite(X).all() and np.isfinite(y).all()), repeats)
    what = f"ldpfl fig8 SGD job at census size (logistic, PM-SUB, {len(eps_grid)} ε, n = {n:,} × {d}), per fit"
    return _sgd_row(what, b, a, F, F, rng_floor, data_pass) | {
        "nonprivate_cpu_s": free["cpu_s"] / F,
        "nonprivate_over_floor": free["cpu_s"] / F / rng_floor["cpu_s"],
        "gather_cpu_s": gather["cpu_s"],
        "finite_check_cpu_s": check["cpu_s"],
        "fits_batched": F,
        "floor_note": f"{draws:,} uniforms per fit (every ε); one gather of the fit's rows {_fmt_s(gather['cpu_s'])}",
    }
