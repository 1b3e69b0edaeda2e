"""Honest throughput benchmark of ldprepro (not a test): every figure a ratio to a reference
measured in the same run, in CPU time.

    .venv/bin/python -m timing.bench [--quick] [--out-dir timing]

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
import datetime as dt
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from ldprepro.domain.frequency import get_oracle
from ldprepro.domain.graded import sort_by_level
from ldprepro.domain.mechanisms import MECHANISMS, exponential, get_mechanism, get_multidim
from ldprepro.experiments.mean import GradedLaplaceEstimator, HierAEstimator, make_collector
from ldprepro.pipeline.seeding import rng_for

from .bench_common import SIZES, measure, pair, pin_allocator, slow_repeats
from .bench_jobs import bench_jobs
from .bench_render import to_markdown
from .machine import cpu_model


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
