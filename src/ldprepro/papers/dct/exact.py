"""Paper 003's claims decided by exact computation (docs/papers/dct.md): DCT's privacy (Lemma 1),
its variance formula (§5.1) and the dimensions of the encoded datasets (§5.4).

Each function is named by a declaration in ``claims.yaml`` (``test: function``) and returns the
claim(s) for the figure's ``Results``.
"""

from __future__ import annotations

import math

import numpy as np

from ldprepro.claims.results import Results
from ldprepro.claims.verdicts import Claim, exact_point, not_testable
from ldprepro.domain.mechanisms import get_mechanism

# Paper 003 §5.4 [P]: dimensions after the k−1 binary encoding of the categorical attributes.
DCT_ENCODED_DIMENSIONS = {"ipums_br": 90, "ipums_mx": 94, "wisdm": 43}


def dct_is_ldp(res: Results, decl: dict) -> list[Claim]:
    """Lemma 1 says DCT is ε-LDP. Exact: the output is v + U[−d, d], whose support moves with v."""
    mech = get_mechanism("dct", 1.0)
    y = -1.0 - mech.d / 2
    lo, hi = float(mech.pdf(y, -1.0)), float(mech.pdf(y, 1.0))
    pt = exact_point(
        "ε = 1, α = 5",
        hi > 0 and lo / hi <= math.e,
        note=f"pdf({y:g} | v=−1) = {lo:g}, pdf({y:g} | v=1) = {hi:g}: unbounded likelihood ratio",
    )
    return [
        res.exact_claim(
            decl,
            [pt],
            "the output is v + Uniform[−d, d]; its support moves with v, so no ε bounds the ratio. "
            "DCT's accuracy advantage is bought by not being private",
        )
    ]


def dct_variance_formula(res: Results, decl: dict) -> list[Claim]:
    """Paper 003 §5.1's variance (15εv²(5ε−1)+2)/(3(5ε)³) against the exact d²/3 = 1/(3α²ε²)."""
    pts = []
    worst = 0.0
    for eps in (0.1, 0.5, 1.0, 2.0, 4.0):
        mech = get_mechanism("dct", eps)
        v = np.linspace(-1, 1, 21)
        exact = np.asarray(mech.variance(v), dtype=float)
        printed = (15 * eps * v**2 * (5 * eps - 1) + 2) / (3 * (5 * eps) ** 3)
        rel = np.abs(printed / exact - 1)
        worst = max(worst, float(rel.max()))
        pts.append(
            exact_point(
                f"ε={eps:g}",
                bool(rel.max() < 1e-9),
                effect=float(rel.max()),
                note=f"printed {printed.min():.4g}–{printed.max():.4g} vs exact {exact[0]:.4g}",
            )
        )
    return [
        res.exact_claim(
            decl,
            pts,
            f"the exact variance is d²/3 = 1/(75ε²) for every v; the printed formula depends on v "
            f"(largest relative error {worst:.3g})",
        )
    ]


def encoded_dimensions(res: Results, decl: dict) -> list:
    """§5.4's dimension counts after k−1 encoding, checked on each dataset we could build."""
    out = []
    for ds, dims in DCT_ENCODED_DIMENSIONS.items():
        text = decl["claim"].replace("{dataset}", ds).replace("{dims}", str(dims))
        scope = decl["scope"].replace("{dataset}", ds)
        r = res.raw[res.raw["dataset"] == ds] if len(res.raw) else res.raw
        if r.empty:
            if ds in res.unavailable or res.role == "paper":
                out.append(
                    not_testable(
                        res.paper,
                        res.figure,
                        text,
                        scope,
                        "closed-form",
                        f"{ds} is not available here ({res.unavailable.get(ds, 'no results')}); the count "
                        "needs the data's category lists",
                    )
                )
            continue
        d = int(r["n_features"].iloc[0])
        out.append(
            res.claim(
                text,
                scope,
                "closed-form",
                points=[exact_point(ds, dims == d + 1, effect=float(d + 1))],
                evidence=f"our encoding: {d} features + 1 target = {d + 1} columns; the paper counts "
                "the target (WISDM: 42 features + z = 43)",
            )
        )
    return out
