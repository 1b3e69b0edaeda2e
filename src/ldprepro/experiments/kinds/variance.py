"""Kind ``variance``: the variance of one report of a 1-D mechanism (any registered one, plugins
included) against ε, from its closed form and checked by Monte Carlo, behind the experiment-kind
contract (ldprepro.experiments.kinds). Wang et al.'s (ICDE 2019) worst-case variance comparison of
PM, Duchi et al.'s mechanism and HM, and Zhao et al.'s Fig. 1 (paper 002), are of this kind.

A panel is either ``input: worst_case`` (every user holds the input t* at which the mechanism's
variance is largest, ldprepro.domain.mechanisms.worst_case: the worst-case variance) or a dataset's
numeric ``columns`` (one column, mapped to [−1, 1] with its card domain as every figure does: the
data-dependent variance, the mean over the users of Var[M(t_i)]).

Per (mechanism, ε, repetition) the job perturbs every user's input once (``users`` users for the
worst case; the dataset's rows, or ``max_users`` of them) and writes ``variance`` = (1/n) Σ_i
(y_i − t_i)²: the mechanisms are unbiased, so its expectation is (1/n) Σ_i Var[M(t_i)], the
``variance_theory`` row (exact: ``Mechanism.variance`` is each mechanism's closed form). The claims
are decided exactly on those rows; ``theory_agreement`` is the Monte-Carlo check of the closed form.
"""

from __future__ import annotations

import numpy as np

from ldprepro.domain.mechanisms import get_mechanism
from ldprepro.domain.mechanisms.worst_case import worst_input
from ldprepro.pipeline.errors import BadInput
from ldprepro.pipeline.repetitions import repetitions_run
from ldprepro.pipeline.seeding import rng_for
from ldprepro.pipeline.verify import Grid

YLABEL = {
    "worst_case": "variance of one report\n(at the worst-case input t*)",
    "data": "variance of one report\n(mean over the users' values in [−1, 1])",
}


def panel_inputs(fig: dict, panel: dict, df, card, mechanism) -> np.ndarray:
    """The users' inputs in [−1, 1]: t* repeated ``users`` times, or the panel's column."""
    if panel.get("input") == "worst_case":
        if "users" not in fig:
            raise BadInput(f"variance panel {panel['dataset']!r} (input: worst_case): the figure needs users: N")
        return np.full(int(fig["users"]), worst_input(mechanism))
    from ldprepro.experiments.mean_figures import panel_values

    values = panel_values(df, card, panel, fig.get("max_users"))
    if values.ndim != 1:
        raise BadInput(
            f"variance panel {panel['dataset']!r}: one numeric column (columns: [NAME]), got {values.shape[1]}"
        )
    return values


def run_job(fig, panel, mechanism, df, card, seed, paper, figure, progress, split_of=None) -> list[dict]:
    """Every (ε × repetition) of one mechanism on one panel; the exact row first per ε."""
    reps = repetitions_run(fig)
    rows = []
    for eps in fig["eps"]:
        eps = float(eps)
        mech = get_mechanism(mechanism, eps)
        x = panel_inputs(fig, panel, df, card, mech)
        common = {"paper": paper, "figure": figure, "dataset": panel["dataset"], "mechanism": mechanism, "eps": eps}
        common["n_users"] = int(x.size)
        if panel.get("input") == "worst_case":
            common["t_input"] = float(x[0])
        theory = float(np.mean(mech.variance(x)))
        rows.append({**common, "rep": 0, "metric": "variance_theory", "value": theory, "theory_exact": True})
        for rep in range(reps):
            rng = rng_for(seed, {**common, "rep": rep})
            y = mech.perturb(x, rng)
            rows.append({**common, "rep": rep, "metric": "variance", "value": float(np.mean((y - x) ** 2))})
        progress("%s: ε = %g done (%d repetitions of %d users)", mechanism, eps, reps, x.size)
    return rows


def grid(fig: dict) -> Grid:
    """ε and the repetitions run."""
    return Grid(eps=list(fig["eps"]), reps=repetitions_run(fig))


def plot(summary, fig, unavailable, title, png, svg=None, claims=None) -> None:
    """Variance against ε per panel (log scale); dashed: the closed form."""
    from ldprepro.experiments.mean_figures import plot_mean_figure

    panels = [
        {**p, "ylabel": p.get("ylabel", fig.get("ylabel", YLABEL["worst_case" if "input" in p else "data"]))}
        for p in fig["panels"]
    ]
    plot_mean_figure(summary, {**fig, "panels": panels}, unavailable, title, png, svg, claims=claims)
