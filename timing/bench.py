"""Honest throughput benchmark of ldprepro (not a test): every figure a ratio to a reference
measured in the same run, in CPU time.

    PYTHONPATH=src .venv/bin/python timing/bench.py [--quick] [--out-dir timing]

Rules: every timed callable (ours and the peer's) runs once untimed first (multi-freq-ldpy's numba
compile is never timed); then the minimum over ≥ 5 repeats of CPU time (``time.process_time``)
and, beside it, of wall time. The machine may be shared: CPU time is the figure of merit, and only
ratios of quantities measured in this run are compared. References:

- mechanisms: the raw rate of ``Generator.random(n)`` (one uniform per user);
- frequency oracles: the warmed-up ``multi-freq-ldpy`` and ``pure-ldp`` peers (``pip install -e .[bench]``)
  on the same inputs; their clients are per-user Python/numba functions, so they run on a subsample
  and are reported per user;
- sufficient statistics: the per-user path they replace (same law, tests/test_sufficient_statistics.py);
- LDP-SGD: the RNG floor of one fit, the time of ``Generator.random`` for the number of random
  numbers the fit needs (sampled mechanisms: n_train·2k, k attribute indices and k report uniforms
  per user), and, beside it, the data floor: one read of the fit's training rows in storage order
  (X·θ, BLAS), the least memory traffic any fit needs.

Writes ``results.json`` (every measurement) and ``results.md`` (generated tables; the README links it,
no number is typed by hand). ``--quick`` (< 2 minutes) uses smaller n and fewer SGD fits.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as dt
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from ldprepro.domain.frequency import get_oracle
from ldprepro.domain.graded import sort_by_level
from ldprepro.domain.mechanisms import MECHANISMS, exponential, get_mechanism, get_multidim
from ldprepro.domain.sgd import group_collector, group_size, ldp_sgd, ldp_sgd_fits, take_rows
from ldprepro.experiments.mean import GradedLaplaceEstimator, HierAEstimator, make_collector
from ldprepro.pipeline.seeding import rng_for

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import cpu_model  # noqa: E402  (beside this script)

SIZES = {  # quick / full
    "n_mech": (200_000, 1_000_000),
    "repeats": (5, 7),
    "peer_n": (5_000, 20_000),
    "hiera_reps": (10, 100),
    "sgd_fits": (10, 50),
    "sgd_before_fits": (1, 2),
    "census_n": (300_000, 2_895_705),  # the synthetic BR extract's rows after cleaning (ipums_scale.py, fraction 1)
    "census_fits": (2, 4),
}


def slow_repeats(repeats: int) -> int:
    """Repeats for the slow measurements (jobs, the peer): half the fast ones, never fewer than 5."""
    return max(5, repeats // 2)


def measure(fn, repeats: int) -> dict:
    """Warm-up call, then the minimum CPU and wall seconds over ``repeats`` calls."""
    fn()
    cpu = wall = math.inf
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu, wall = min(cpu, time.process_time() - c0), min(wall, time.perf_counter() - w0)
    return {"cpu_s": cpu, "wall_s": wall}


def _draws(name: str, params: dict, mech, n: int, rng):
    """A callable drawing exactly the random numbers ``mech.perturb`` consumes for n users (the
    sampler's own RNG floor): one uniform, except Laplace (a 64-bit word per user, then a uniform
    and an exponential per word outside its ziggurat rectangle, 2.2 % of them), DCT (two bits and
    a uniform) and the discretised samplers (a second uniform per rounded output)."""
    if name == "laplace":
        slow = round(n * (1.0 - exponential.tables().ke.mean() / 2.0**53))
        return lambda: (exponential.words(rng, n), exponential.slow_draws(rng, slow))
    if name == "dct":
        return lambda: (rng.bytes((2 * n + 7) // 8), rng.random(n))
    if params.get("discretize"):
        rounded = round(n * float(mech.weights[0])) if hasattr(mech, "weights") else n
        if hasattr(mech, "weights"):  # branch uniforms, then the continuous branch's two per user
            return lambda: (rng.random(n), rng.random(rounded), rng.random(rounded))
        return lambda: (rng.random(n), rng.random(n))
    return lambda: rng.random(n)


def bench_mechanisms(n: int, repeats: int, rng) -> list[dict]:
    """Every 1-D mechanism, fused (the default) and on its numpy path (``LDPREPRO_JIT=0``, the
    sampler before the fused loops; same outputs), against the raw uniform rate and against the
    rate of the random numbers the sampler itself must draw."""
    x = rng.uniform(-1.0, 1.0, n)
    ref = measure(lambda: rng.random(n), repeats)
    rows = [{"what": "Generator.random (reference)", **ref, "ratio_to_reference": 1.0}]
    cases = [(name, {}) for name in MECHANISMS] + [
        (f"{m}", {"discretize": 10}) for m in ("pm", "pm_sub", "hm", "hm_tp")
    ]
    for name, params in cases:
        mech = get_mechanism(name, 1.0, **params)
        t = measure(lambda: mech.perturb(x, rng), repeats)
        os.environ["LDPREPRO_JIT"] = "0"
        try:
            numpy_path = measure(lambda: mech.perturb(x, rng), repeats)
        finally:
            os.environ.pop("LDPREPRO_JIT")
        draws = measure(_draws(name, params, mech, n, rng), repeats)
        rows.append(
            {
                "what": name + (" discretised (m=10)" if params else ""),
                **t,
                "ratio_to_reference": ref["cpu_s"] / t["cpu_s"],
                "numpy_cpu_s": numpy_path["cpu_s"],
                "numpy_ratio_to_reference": ref["cpu_s"] / numpy_path["cpu_s"],
                "draws_cpu_s": draws["cpu_s"],
                "ratio_to_own_draws": draws["cpu_s"] / t["cpu_s"],
            }
        )
    return rows


def _peer_xxhash():
    """Both peers hash ``str(v)`` with xxhash, which xxhash ≥ 4 refuses; hash its UTF-8 bytes, as
    xxhash < 4 did (docs/benchmark.md, "Peer libraries"; tests/test_frequency_peers.py)."""
    import types

    import xxhash

    def xxh32(data, seed=0):
        return xxhash.xxh32(data.encode("utf-8") if isinstance(data, str) else data, seed=int(seed) % 2**32)

    return types.SimpleNamespace(xxh32=xxh32)


def _peers(k: int, eps: float) -> dict:
    """{(our oracle, peer name): (peer perturb + estimate of a value array, fraction of peer_n it runs
    on)} for the peers installed (``pip install -e .[bench]``); every peer is per-user Python or numba."""
    out = {}
    try:
        from multi_freq_ldpy.pure_frequency_oracles import LH as mfl_lh
        from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Aggregator_MI, GRR_Client
        from multi_freq_ldpy.pure_frequency_oracles.SS import SS_Aggregator_MI, SS_Client
        from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Aggregator_MI, UE_Client

        mfl_lh.xxhash = _peer_xxhash()
        mfl = "multi-freq-ldpy"
        out[("grr", mfl)] = (lambda v: GRR_Aggregator_MI(np.array([GRR_Client(int(x), k, eps) for x in v]), k, eps), 1)
        out[("oue", mfl)] = (
            lambda v: UE_Aggregator_MI(np.array([UE_Client(int(x), k, eps, True) for x in v]), eps, True),
            1,
        )
        out[("sue", mfl)] = (
            lambda v: UE_Aggregator_MI(np.array([UE_Client(int(x), k, eps, False) for x in v]), eps, False),
            1,
        )
        for name, opt in (("olh", True), ("blh", False)):  # the aggregator hashes every report k times
            out[(name, mfl)] = (
                lambda v, opt=opt: mfl_lh.LH_Aggregator_MI(
                    [mfl_lh.LH_Client(int(x), k, eps, opt) for x in v], k, eps, opt
                ),
                16 / k,
            )
        out[("ss", mfl)] = (lambda v: SS_Aggregator_MI([SS_Client(int(x), k, eps) for x in v], k, eps), 16 / k)
    except ImportError:  # pragma: no cover - optional extra
        pass
    try:
        from pure_ldp.frequency_oracles.hadamard_response import HadamardResponseClient, HadamardResponseServer
        from pure_ldp.frequency_oracles.local_hashing import LHClient, LHServer, lh_client, lh_server

        lh_client.xxhash = lh_server.xxhash = _peer_xxhash()

        def ident(x):
            return x

        def pure(client, server):
            def run(v):
                for x in v:
                    server.aggregate(client.privatise(int(x)))
                return [server.estimate(x, suppress_warnings=True) for x in range(k)]

            return run

        for name, olh in (("olh", True), ("blh", False)):
            out[(name, "pure-ldp")] = (
                lambda v, olh=olh: pure(
                    LHClient(eps, k, use_olh=olh, index_mapper=ident), LHServer(eps, k, use_olh=olh, index_mapper=ident)
                )(v),
                16 / k,
            )
        if eps <= 1:  # pure-ldp's HR is this construction only for ε ≤ 1

            def hr(v):
                server = HadamardResponseServer(eps, k, index_mapper=ident)
                return pure(HadamardResponseClient(eps, k, server.get_hash_funcs(), index_mapper=ident), server)(v)

            out[("hr", "pure-ldp")] = (hr, 1)
    except ImportError:  # pragma: no cover - optional extra
        pass
    return out


def bench_frequency(n: int, peer_n: int, repeats: int, rng) -> list[dict]:
    """Ours (perturb + estimate, vectorised) against the warmed-up peers' per-user clients +
    aggregators, per user; k = 16 and 1024, ε = 1. The peers' local hashing and SS aggregators cost
    O(k) Python steps per report, so they run on peer_n·16/k users (per-user figures are compared)."""
    import warnings

    eps, rows = 1.0, []
    np.random.seed(0)  # the peers draw from numpy's (and Python's) global state
    for k in (16, 1024):
        peers = _peers(k, eps)
        if not peers:
            return [{"what": "no peer installed (pip install -e .[bench]); no peer ratios"}]
        values = rng.integers(0, k, n)
        for (name, peer_name), (peer, fraction) in peers.items():
            oracle = get_oracle(name, k, eps=eps)
            unary = name in ("oue", "sue", "ss", "olh", "blh")  # n × k bits, or n·k hashes, per report batch
            ours_n = max(peer_n, n // max(1, k // 16)) if unary else n
            vals = values[:ours_n]
            p_n = max(50, int(peer_n * min(1.0, fraction)))
            sub = values[:p_n]
            ours = measure(lambda: oracle.estimate_from_reports(oracle.perturb(vals, rng)), repeats)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # pure-ldp's random.randint(float)
                theirs = measure(lambda: peer(sub), slow_repeats(repeats))
            ours_per_user, peer_per_user = ours["cpu_s"] / ours_n, theirs["cpu_s"] / p_n
            rows.append(
                {
                    "what": f"{name} k={k} perturb + estimate",
                    "peer": peer_name,
                    "n_ours": ours_n,
                    "n_peer": p_n,
                    "ours_cpu_s_per_user": ours_per_user,
                    "peer_cpu_s_per_user": peer_per_user,
                    "ours_wall_s": ours["wall_s"],
                    "peer_wall_s": theirs["wall_s"],
                    "speedup_vs_warm_peer": peer_per_user / ours_per_user,
                }
            )
    return rows


def pair(what: str, before, after, repeats: int, floor=None, **extra) -> dict:
    b, a = measure(before, repeats), measure(after, repeats)
    row = {
        "what": what,
        "before_cpu_s": b["cpu_s"],
        "after_cpu_s": a["cpu_s"],
        "before_wall_s": b["wall_s"],
        "after_wall_s": a["wall_s"],
        "speedup": b["cpu_s"] / a["cpu_s"],
        **extra,
    }
    if floor is not None:
        f = measure(floor, repeats)
        row.update(floor_cpu_s=f["cpu_s"], after_over_floor=a["cpu_s"] / f["cpu_s"])
    return row


def bench_sufficient(quick: bool, repeats: int, rng) -> list[dict]:
    """Exact sufficient statistics against the per-user path they replace (same law)."""
    rows = []
    # Laplace mean on a Vehicle-sized table (98,528 users × 100 attributes, ε/d per attribute)
    xv = rng.uniform(-1.0, 1.0, (98_528, 100))
    lap = make_collector("laplace", 4.0, 100)
    rows.append(
        pair(
            "Laplace mean, Vehicle size (98,528 × 100)",
            lambda: lap.estimate_per_user(xv, rng),
            lambda: lap.estimate(xv, rng),
            repeats,
            floor=lambda: rng.random(2 * 100),
        )
    )
    x1 = rng.uniform(-1.0, 1.0, 1_000_000)
    lap1 = make_collector("laplace", 1.0, 1)
    rows.append(
        pair(
            "Laplace mean, 1-D, n = 10⁶",
            lambda: lap1.estimate_per_user(x1, rng),
            lambda: lap1.estimate(x1, rng),
            repeats,
        )
    )
    gl = GradedLaplaceEstimator(1.0)
    rows.append(
        pair(
            "graded Laplace mean, n = 10⁶", lambda: gl.estimate_per_user(x1, rng), lambda: gl.estimate(x1, rng), repeats
        )
    )
    pm = get_multidim("pm_sub", 8.0, 100)
    rows.append(
        pair(
            "sampled multidim mean (PM-SUB, d = 100, k = 3), Vehicle size",
            lambda: pm.perturb(xv, rng).mean(axis=0),
            lambda: pm.group_means(xv[None], rng),
            repeats,
            floor=lambda: rng.random(98_528 * 2 * pm.k),
        )
    )
    grr = get_oracle("grr", 1024, eps=1.0)
    counts = np.bincount(rng.integers(0, 1024, 1_000_000), minlength=1024)
    rows.append(
        pair(
            "GRR counts sampler, k = 1024, n = 10⁶",
            lambda: grr.sample_support_counts_per_value(counts, rng),
            lambda: grr.sample_support_counts(counts, rng),
            repeats,
            floor=lambda: rng.random(2 * 1024),
        )
    )
    h = HierAEstimator(0.1, mu=2)
    xg = np.clip(rng.normal(0.3, 0.2, 1_000_000), -1, 1)
    prepared = sort_by_level(xg, h.levels)
    rows.append(
        pair(
            "HierA counts per repetition, n = 10⁶ continuous (sort per rep → once)",
            lambda: h.model.run(xg, rng, path="count"),
            lambda: h.model.estimate_from_counts(prepared.sample_counts(rng), rng),
            repeats,
            floor=lambda: rng.random(1_000_000),
        )
    )
    ages = np.round(rng.uniform(0, 95, 1_000_000)) / 47.5 - 1.0
    prepared_ages = sort_by_level(ages, h.levels)
    rows.append(
        pair(
            "HierA counts per repetition, n = 10⁶ integer ages (by distinct value)",
            lambda: h.model.run(ages, rng, path="count"),
            lambda: h.model.estimate_from_counts(prepared_ages.sample_counts(rng), rng),
            repeats,
        )
    )
    return rows


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
    for eps in (0.5, 8.0):
        mech = get_multidim("pm", eps, X.shape[1])
        G = group_size(X.shape[1], eps)

        def before():
            for f in range(Fb):
                ldp_sgd(X[orders[f]], y[orders[f]], "svm", mech.perturb, G, 1e-4, "constant_inv_sqrt_T", 1.0, rng)

        visit = np.arange(n_train, dtype=np.int32)

        def after():  # as a job runs them: fit by fit, on the fit's rows gathered once in visiting order
            for Xf, yf in blocks:
                ldp_sgd_fits(Xf, yf, [visit], "svm", group_collector(mech), G, 1e-4, "constant_inv_sqrt_T", 1.0, rng)

        def in_place():  # the earlier job path: all fits batched, rows read in place in shuffled order
            ldp_sgd_fits(X, y, orders, "svm", group_collector(mech), G, 1e-4, "constant_inv_sqrt_T", 1.0, rng)

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
                ldp_sgd_fits(Xf, yf, [visit], "svm", group_collector(), G, 1e-4, "constant_inv_sqrt_T", 1.0, rng)
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
    read of the training rows in storage order per ε, and the gather alone."""
    n, d, F = SIZES["census_n"][not quick], 28, SIZES["census_fits"][not quick]
    X = rng.uniform(-1.0, 1.0, (n, d))
    y = np.where(X @ rng.normal(0, 1, d) > 0, 1.0, -1.0)
    n_train = n * 9 // 10
    orders = [rng_for(0, ("census", f)).permutation(n)[:n_train].astype(np.int32) for f in range(F)]
    eps_grid = (0.5, 1.0, 2.0, 4.0, 8.0)
    mechs = {eps: get_multidim("pm_sub", eps, d) for eps in eps_grid}

    def fit(Xs, ys, o, eps):
        collect = group_collector(mechs[eps])
        return ldp_sgd_fits(Xs, ys, o, "logistic", collect, group_size(d, eps), 1e-4, "constant_inv_sqrt_T", 1.0, rng)

    def before():
        for eps in eps_grid:
            fit(X, y, orders, eps)

    block = np.empty((n_train, d))
    visit = np.arange(n_train, dtype=np.int32)

    def after():
        for o in orders:
            Xf = take_rows(X, o, out=block)
            for eps in eps_grid:
                fit(Xf, y[o], [visit], eps)

    reps = slow_repeats(repeats)
    b, a = measure(before, reps), measure(after, reps)
    draws = sum(n_train * 2 * m.k for m in mechs.values())
    rng_floor = measure(lambda: rng.random(draws), repeats)
    theta = np.zeros(d)
    rows_in_order = X[:n_train]
    data_pass = measure(lambda: [rows_in_order @ theta for _ in eps_grid], repeats)
    gather = measure(lambda: take_rows(X, orders[0], out=block), repeats)
    what = f"ldpfl fig8 SGD job at census size (logistic, PM-SUB, {len(eps_grid)} ε, n = {n:,} × {d}), per fit"
    return _sgd_row(what, b, a, F, F, rng_floor, data_pass) | {
        "gather_cpu_s": gather["cpu_s"],
        "fits_batched": F,
        "floor_note": f"{draws:,} uniforms per fit (every ε); one gather of the fit's rows {_fmt_s(gather['cpu_s'])}",
    }


def _fmt_s(s):
    return "—" if s is None else f"{s * 1e3:,.2f} ms" if s < 1 else f"{s:,.2f} s"


def to_markdown(res: dict) -> str:
    m = res["meta"]
    out = [
        f"<!-- generated by timing/bench.py{' --quick' if m['quick'] else ''}; do not edit by hand -->",
        f"# ldprepro benchmark ({'quick' if m['quick'] else 'full'} mode)",
        "",
        f"Measured {m['date']} on {m['machine']} ({m['python']}, numpy {m['numpy']}, {m['cpus']} CPUs, shared). "
        "CPU time (`time.process_time`), minimum over repeats after a warm-up; every ratio is between two "
        "quantities measured in this run."
        + (
            " The allocator was pinned (`mallopt`: large arrays reuse the heap), so no measurement pays page "
            "faults that depend on what an earlier one freed."
            if m.get("allocator_pinned")
            else ""
        ),
        *(
            [
                "",
                "Sections kept from an earlier run (`--only` re-measured the others): "
                + ", ".join(f"{k} ({v})" for k, v in m["kept_from"].items())
                + ".",
            ]
            if m.get("kept_from")
            else []
        ),
        "",
        f"## 1-D mechanisms, n = {m['n_mech']:,}, ε = 1 (reference: `Generator.random(n)`)",
        "",
        "Fused: the compiled per-user loop (the default). numpy: the same sampler as numpy array passes "
        "(`LDPREPRO_JIT=0`; bit-identical outputs). Own draws: the random numbers the sampler must draw "
        "(Laplace: a 64-bit word per user, and a uniform and an exponential per word outside its ziggurat rectangle, 2.2 % of them; DCT: two bits and a uniform; discretised: a second "
        "uniform per rounded output), timed alone.",
        "",
        "| mechanism | CPU fused | wall fused | × raw uniform rate | CPU numpy | × raw uniform rate (numpy) "
        "| own draws CPU | × own draws' rate |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in res["mechanisms"]:
        if "numpy_cpu_s" not in r:
            out.append(f"| {r['what']} | {_fmt_s(r['cpu_s'])} | {_fmt_s(r['wall_s'])} | 1.00 | | | | |")
            continue
        out.append(
            f"| {r['what']} | {_fmt_s(r['cpu_s'])} | {_fmt_s(r['wall_s'])} | {r['ratio_to_reference']:.2f} "
            f"| {_fmt_s(r['numpy_cpu_s'])} | {r['numpy_ratio_to_reference']:.2f} | {_fmt_s(r['draws_cpu_s'])} "
            f"| {r['ratio_to_own_draws']:.2f} |"
        )
    out += [
        "",
        "## Frequency oracles against the peers (warmed up: multi-freq-ldpy's numba compile is not timed), ε = 1",
        "",
        "Peers: multi-freq-ldpy and pure-ldp, per-user clients and their aggregators on the same values; "
        "local hashing hashes the peers' `str(v)` as UTF-8 bytes (xxhash ≥ 4 refuses str; docs/benchmark.md).",
        "",
        "| oracle | peer | ours CPU per user | peer CPU per user | speed-up | users (ours / peer) |",
        "|---|---|---|---|---|---|",
    ]
    for r in res["frequency"]:
        if "speedup_vs_warm_peer" not in r:
            out.append(f"| {r['what']} | | | | | |")
            continue
        out.append(
            f"| {r['what']} | {r.get('peer', 'multi-freq-ldpy')} | {r['ours_cpu_s_per_user'] * 1e9:,.1f} ns "
            f"| {r['peer_cpu_s_per_user'] * 1e9:,.0f} ns | "
            f"{r['speedup_vs_warm_peer']:,.1f}× | {r['n_ours']:,} / {r['n_peer']:,} |"
        )
    for key, title in (
        ("sufficient", "Exact sufficient statistics (before: the per-user path; same law)"),
        ("jobs", "Jobs (before: the per-repetition / per-fit path)"),
    ):
        out += [
            "",
            f"## {title}",
            "",
            "| what | before CPU | after CPU | speed-up | floor CPU | after / floor | note |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in res[key]:
            floor = r.get("floor_cpu_s")
            extra = r.get("floor_note", "")
            if "after_over_data_pass" in r:
                extra += (
                    f"; data read (X·θ over the training rows in storage order) {_fmt_s(r['data_pass_cpu_s'])}, "
                    f"after / data read {r['after_over_data_pass']:.1f}"
                )
            if "nonprivate_cpu_s" in r:
                extra += (
                    f"; the same fits without a mechanism (non-private steps) {_fmt_s(r['nonprivate_cpu_s'])}, "
                    f"{r['nonprivate_over_floor']:.1f}× the floor"
                )
            if "numpy_steps_cpu_s" in r:
                extra += f"; numpy steps (`LDPREPRO_JIT=0`) {_fmt_s(r['numpy_steps_cpu_s'])}"
            if "gather_cpu_s" in r and "in_place_batched_cpu_s" in r:
                extra += (
                    f"; gathering the fit's rows (once per fit for all the job's settings) {_fmt_s(r['gather_cpu_s'])}"
                )
            if "in_place_batched_cpu_s" in r:
                extra += f"; the earlier path (fits batched, rows read in place) {_fmt_s(r['in_place_batched_cpu_s'])}"
            ratio = "" if floor is None else f"{r['after_over_floor']:.1f}"
            out.append(
                f"| {r['what']} | {_fmt_s(r['before_cpu_s'])} | {_fmt_s(r['after_cpu_s'])} | {r['speedup']:,.1f}× | "
                f"{_fmt_s(floor)} | {ratio} | {extra} |"
            )
    return "\n".join(out) + "\n"


def pin_allocator() -> bool:
    """glibc only: large arrays stay on the heap and freed memory is kept (``mallopt``), so no
    measurement pays page faults that depend on what earlier ones freed. Without it the discretised
    samplers' own draws (two ``Generator.random(10⁶)`` calls) measured 4.4 or 7.3 ms in the same
    script, depending on the allocations before them. True when pinned."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(libc.mallopt(m_mmap_threshold, 1 << 30) and libc.mallopt(m_trim_threshold, 1 << 31))
    except (OSError, AttributeError):
        return False


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, < 2 minutes")
    parser.add_argument("--out-dir", default=str(Path(__file__).parent))
    parser.add_argument("--only", nargs="*", default=None, help="sections: mechanisms frequency sufficient jobs")
    args = parser.parse_args(argv)
    full = not args.quick
    repeats = SIZES["repeats"][full]
    rng = rng_for(0, "benchmark")
    pinned = pin_allocator()
    res = {
        "meta": {
            "allocator_pinned": pinned,
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "quick": args.quick,
            "machine": f"{platform.machine()}, {cpu_model()}",
            "python": f"{platform.python_implementation()} {platform.python_version()}",
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "n_mech": SIZES["n_mech"][full],
            "repeats": repeats,
        }
    }
    sections = {
        "mechanisms": lambda: bench_mechanisms(SIZES["n_mech"][full], repeats, rng),
        "frequency": lambda: bench_frequency(SIZES["n_mech"][full], SIZES["peer_n"][full], repeats, rng),
        "sufficient": lambda: bench_sufficient(args.quick, repeats, rng),
        "jobs": lambda: bench_jobs(args.quick, repeats, rng),
    }
    out = Path(args.out_dir)
    earlier = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else {}
    for name, run in sections.items():
        if args.only is None or name in args.only:
            t0 = time.perf_counter()
            res[name] = run()
            print(f"{name}: {time.perf_counter() - t0:.1f} s wall", flush=True)
        else:  # kept from the earlier run (``--only`` re-measures some sections), with its date
            res[name] = earlier.get(name, [])
            if res[name]:
                res["meta"].setdefault("kept_from", {})[name] = earlier.get("meta", {}).get("date", "?")
    out.mkdir(parents=True, exist_ok=True)
    for path, text in (
        (out / "results.json", json.dumps(res, indent=1, ensure_ascii=False)),
        (out / "results.md", to_markdown(res)),
    ):
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    print(to_markdown(res))


if __name__ == "__main__":
    main()
