"""Synthetic numeric datasets on [-1, 1] (papers 000, 002, 003).

- paper 000 (HierA, docs/papers/hiera.md §8.1): uniform; Gaussian mean 0.3 sd 0.2; exponential sd (= scale) 0.3.
- paper 003 (DCT, docs/papers/dct.md §3): Gaussian mean 0 sd 0.25; exponential sd 0.5; uniform.
- paper 002 (Zhao et al., docs/papers/ldpfl.md §14 Fig. 7): d = 16 Gaussian attributes, sd 1/4, mean in
  {0, 1/3, 2/3, 1} [I].

``target`` (optional) adds a linear-regression target column (:func:`linear_target`).

How values are forced into [-1, 1] is not given [U]; ``bound: reject`` (default) redraws values
outside, ``clip`` clips them. The exponential lives on [0, inf), so it ends up in [0, 1].
All randomness comes from ``rng_for(seed, key)`` with key = dataset name + parameters.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ldprepro.pipeline.seeding import rng_for
from ldprepro.data.table import Column, Table

LO, HI = -1.0, 1.0


def _draw(rng: np.random.Generator, dist: str, p: dict, size: int) -> np.ndarray:
    if dist == "uniform":
        return rng.uniform(p.get("low", LO), p.get("high", HI), size)
    if dist == "gaussian":
        return rng.normal(p["mean"], p["sd"], size)
    if dist == "exponential":
        return p.get("loc", 0.0) + rng.exponential(p["sd"], size)
    raise ValueError(f"unknown distribution {dist!r}")


def sample(rng: np.random.Generator, dist: str, params: dict, n: int,
           bound: str = "reject") -> np.ndarray:
    """n draws restricted to [-1, 1] by rejection (redraw) or clipping."""
    if bound == "clip":
        return np.clip(_draw(rng, dist, params, n), LO, HI)
    out = np.empty(0)
    while out.size < n:
        need = n - out.size
        x = _draw(rng, dist, params, int(need * 1.2) + 16)
        out = np.concatenate([out, x[(x >= LO) & (x <= HI)][:need]])
    return out


def linear_target(X: np.ndarray, target: dict, rng: np.random.Generator) -> np.ndarray:
    """A regression target y = Xβ + N(0, noise_sd²), clipped to [-1, 1] (a stand-in for the census
    regressions of papers 000 and 003, never presented as their data)."""
    beta = np.asarray(target["coefficients"], dtype=float)
    if beta.shape != (X.shape[1],):
        raise ValueError(f"target.coefficients needs {X.shape[1]} values (one per attribute), got {beta.size}")
    noise = rng.normal(0.0, float(target.get("noise_sd", 0.0)), X.shape[0])
    return np.clip(X @ beta + float(target.get("intercept", 0.0)) + noise, LO, HI)


def generate(dataset: str, options: dict, seed: int, scale: str = "paper") -> Table:
    n = int(options["size"][scale])
    d = int(options.get("dims", 1))
    dist = options["distribution"]
    params = {k: options[k] for k in ("mean", "sd", "low", "high", "loc") if k in options}
    bound = options.get("bound", "reject")
    key = {"dataset": dataset, "distribution": dist, "params": params, "dims": d, "n": n,
           "bound": bound}
    target = options.get("target")
    names = ["x"] if d == 1 else [f"x{j:02d}" for j in range(1, d + 1)]
    if target:
        key["target"] = target
        if target["name"] in names:
            raise ValueError(f"synthetic dataset {dataset}: target name {target['name']!r} is an attribute's name")
    rng = rng_for(seed, key)
    cols = {name: sample(rng, dist, params, n, bound) for name in names}
    if target:
        cols[target["name"]] = linear_target(np.column_stack([cols[c] for c in names]), target, rng)
    df = pd.DataFrame(cols)
    df.index = pd.RangeIndex(1, n + 1, name="row")
    t = Table(df, [Column(c, "numeric", [LO, HI]) for c in cols], f"synthetic:{dataset}", n)
    t.extra["generator"] = {"seed": seed, "key": key, "scale": scale,
                            "rng": "numpy PCG64 via ldprepro.pipeline.seeding.rng_for(seed, key)"}
    return t
