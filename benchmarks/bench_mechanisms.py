"""Throughput of every mechanism and frequency oracle (users per second), not a test.

    .venv/bin/python benchmarks/bench_mechanisms.py [--n 1000000] [--out benchmarks/results.md]

Measures, in one run on this machine:
- the raw rate of ``Generator.random(n)`` (the reference);
- every 1-D numeric mechanism's ``perturb`` at n users (best of several repeats), and its ratio
  to the raw rate (target ≥ 0.25), plus the discretised and multidimensional forms;
- GRR, SUE, OUE and RAPPOR perturbation + count estimation at n users, next to the pip-installed
  ``multi-freq-ldpy`` (``pip install -e .[bench]``) on the same inputs (target ≥ 100×). Its
  clients are per-user Python functions, so they are timed on a subsample and reported per user.

Writes a Markdown table (the README quotes it) and prints it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import time
from pathlib import Path

import numpy as np

from ldprepro.frequency import get_oracle
from ldprepro.mechanisms import MECHANISMS, get_mechanism, get_multidim
from ldprepro.seeding import rng_for


def best_time(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def bench_numeric(n: int, eps: float, repeats: int, rng) -> list[dict]:
    x = rng.uniform(-1.0, 1.0, n)
    raw = n / best_time(lambda: rng.random(n), repeats)
    rows = [{"what": "Generator.random (reference)", "users_per_s": raw, "ratio": 1.0, "target": ""}]
    for name in MECHANISMS:
        mech = get_mechanism(name, eps)
        rate = n / best_time(lambda: mech.perturb(x, rng), repeats)
        rows.append({"what": name, "users_per_s": rate, "ratio": rate / raw, "target": "≥ 0.25"})
    for name in ["pm", "pm_sub", "hm", "hm_tp"]:
        mech = get_mechanism(name, eps, discretize=10)
        rate = n / best_time(lambda: mech.perturb(x, rng), repeats)
        rows.append({"what": f"{name} discretised (m=10)", "users_per_s": rate, "ratio": rate / raw, "target": ""})
    d = 16
    xd = rng.uniform(-1.0, 1.0, (n // d, d))
    for name in ["laplace", "duchi", "pm_sub", "three_outputs", "hm_tp"]:
        mech = get_multidim(name, 4 * eps, d)
        rate = (n // d) / best_time(lambda: mech.perturb(xd, rng), repeats)
        rows.append({"what": f"{name} multidim d={d}, eps={4 * eps:g} (user vectors/s)", "users_per_s": rate,
                     "ratio": None, "target": ""})
    return rows


def bench_frequency(n: int, k: int, eps: float, repeats: int, rng, baseline_n: int) -> list[dict]:
    values = rng.integers(0, k, n)
    rows = []
    try:
        from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Client
        from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Client
    except ImportError:  # pragma: no cover - optional extra
        GRR_Client = UE_Client = None
    baselines = {}
    if GRR_Client is not None:
        sub = values[:baseline_n]
        np.random.seed(0)  # multi-freq-ldpy draws from numpy's global state
        baselines["grr"] = baseline_n / best_time(lambda: [GRR_Client(int(v), k, eps) for v in sub], 1)
        baselines["oue"] = baseline_n / best_time(lambda: [UE_Client(int(v), k, eps, optimal=True) for v in sub], 1)
        baselines["sue"] = baseline_n / best_time(lambda: [UE_Client(int(v), k, eps, optimal=False) for v in sub], 1)
    for name, params in [("grr", {"eps": eps}), ("sue", {"eps": eps}), ("oue", {"eps": eps}),
                         ("rappor", {"f": 0.5, "p": 0.5, "q": 0.75})]:
        oracle = get_oracle(name, k, **params)

        def run():
            return oracle.estimate_from_reports(oracle.perturb(values, rng))

        rate = n / best_time(run, repeats)
        base = baselines.get(name)
        rows.append({"what": f"{name} (k={k}) perturb + estimate", "users_per_s": rate,
                     "multi_freq_ldpy_users_per_s": base, "speedup": (rate / base) if base else None,
                     "target": "≥ 100× multi-freq-ldpy" if name in ("grr", "oue") else ""})
        counts = np.bincount(values, minlength=k)
        suff = n / best_time(lambda: oracle.sample_support_counts(counts, rng), repeats)
        rows.append({"what": f"{name} (k={k}) sufficient-statistic sampler", "users_per_s": suff,
                     "multi_freq_ldpy_users_per_s": None, "speedup": None, "target": ""})
    return rows


def fmt_rate(r):
    return "—" if r is None else f"{r / 1e6:,.1f} M" if r >= 1e6 else f"{r / 1e3:,.1f} k"


def to_markdown(numeric, freq, n, eps, k) -> str:
    lines = [f"Measured {dt.date.today().isoformat()} on {platform.machine()} "
             f"({platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}), "
             f"n = {n:,} users, ε = {eps:g}, one process.", "",
             "| mechanism | users/s | × raw uniform rate | target | meets |", "|---|---|---|---|---|"]
    for r in numeric:
        meets = "" if not r["target"] else ("yes" if r["ratio"] >= 0.25 else "**no**")
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}"
        lines.append(f"| {r['what']} | {fmt_rate(r['users_per_s'])} | {ratio} | {r['target']} | {meets} |")
    lines += ["", f"Frequency oracles, domain size k = {k}:", "",
              "| oracle | users/s | multi-freq-ldpy users/s | speed-up | target | meets |", "|---|---|---|---|---|---|"]
    for r in freq:
        sp = r["speedup"]
        meets = "" if not r["target"] else ("yes" if sp and sp >= 100 else "**no**")
        lines.append(f"| {r['what']} | {fmt_rate(r['users_per_s'])} | {fmt_rate(r['multi_freq_ldpy_users_per_s'])} | "
                     f"{'' if sp is None else f'{sp:,.0f}×'} | {r['target']} | {meets} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--eps", type=float, default=1.0)
    parser.add_argument("--k", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline-n", type=int, default=20_000,
                        help="users for the per-user multi-freq-ldpy clients")
    parser.add_argument("--out", default="benchmarks/results.md")
    args = parser.parse_args(argv)
    rng = rng_for(0, "benchmark")
    numeric = bench_numeric(args.n, args.eps, args.repeats, rng)
    freq = bench_frequency(args.n, args.k, args.eps, args.repeats, rng, args.baseline_n)
    text = to_markdown(numeric, freq, args.n, args.eps, args.k)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
