"""The experiment-kind contract: what a kind of config-driven figure is, in one place.

A figure entry (``<paper>.<figN>``, ``papers.<paper>.<figN>`` or ``experiments.<figN>``) names its
``kind``; the shared experiment rules (workflow/rules/experiments.smk) create its jobs (one per
panel, or per panel and mechanism on a dataset marked ``one_job_per_mechanism``), run each through
``workflow/scripts/experiment_job.py`` and render the figure through
``workflow/scripts/experiment_figure.py``, whatever the kind. What differs between kinds is declared
here (:class:`KindSpec`, light: read at every workflow parse, no numpy) and in the kind's module
(imported only by a job or a render of that kind), which provides

- ``run_job(fig, panel, mechanism, df, card, seed, paper, figure, progress, split_of=None) ->
  list[dict]``: the tidy rows of one mechanism on one panel (``df``, ``card``: the panel's dataset,
  None for a panel that needs none; ``progress``: the job log's printf-style line; ``split_of``: the
  figure whose cross-validation splits an LDP-SGD panel shares); random streams keyed by (paper,
  figure, dataset, mechanism, …);
- ``grid(fig) -> ldprepro.pipeline.verify.Grid``: the grid the rows must cover (checked before a
  figure is drawn or a shared result reused);
- ``plot(summary, fig, unavailable, title, png, svg, claims)``: the default plot (a kind whose
  spec says ``render_cards`` also gets ``cards={dataset: data card}``, the figure's card files
  being inputs of its render);

and may provide ``COLUMN_ORDER`` (the parameter columns first after the key columns,
``tidy_frame``'s ``extra_order``) and ``drawn_rows(raw, fig)`` (the rows the curve is drawn from;
default the repetitions below ``reps``);

and, for every kind, the exact/theory rows follow ONE convention: a row ``metric =
"<metric>_theory"``, ``rep = 0``, with ``theory_exact`` True when its value is the exact expectation
of the measured ``<metric>`` for what was run (the claim engine decides such points exactly,
``ldprepro.claims.points``, "exact first"), False for an approximation. The summary metric is the
entry's ``metric`` (the y axis and the claims' default).

Three figures whose jobs are shaped otherwise are kinds bound to their paper's config
(:data:`PAPER_KINDS`, each with a :data:`SHAPES` shape): ldpfl Fig. 1 (``variance_curve``: one
data-free job writes every mechanism's file), ldpfl Fig. 4 (``output_density``: one job computes and
draws) and paper 004 (``joint_distribution``: a job per experiment feeds two figures). The same rule
template creates their jobs and renders, named by their spec (``job_rule``, ``render_rule``); their
modules, in the paper's folder, keep their own job and render functions behind the contract.

Adding a kind is one module (the three functions above) plus its line in :data:`KINDS`, whose
``schema`` names the entry's schema fragment (``$defs/<schema>`` of
``workflow/schemas/config.schema.yaml``, with the kind's name in its ``kind`` enum); tests/test_kinds.py
checks that every kind has both. The rules fingerprint a kind's module by name (their ``code`` param,
``ldprepro.pipeline.parse.module_hash``): editing it reruns that kind's jobs and renders only.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class KindSpec:
    """One experiment kind, as the workflow sees it at parse time."""

    name: str
    #: the module implementing run_job / grid / plot (imported by the jobs and the render only)
    module: str
    #: the entry's schema: ``$defs/<schema>`` of workflow/schemas/config.schema.yaml
    schema: str
    #: the calibrated resource family its jobs are sized as (ldprepro.pipeline.resources)
    resource_family: str
    #: what its ``mechanisms`` are: ``mechanisms`` (registered 1-D mechanisms, checked by
    #: ldprepro.pipeline.mechanism_names), ``oracles`` (frequency oracles), ``collectors``
    #: (histogram collectors, ldprepro.experiments.histograms), ``methods`` (a paper kind's own
    #: estimators, checked by its schema: paper 004's EM, LASSO, LREMH)
    names: str
    #: a panel with this key needs no dataset (synthetic counts, a mechanism's worst-case input)
    data_free_key: str | None
    #: one line for docs and error messages
    summary: str
    #: how the shared rules (workflow/rules/experiments.smk) cut its jobs: ``panel`` (a job per panel,
    #: or per panel and mechanism, every kind of :data:`KINDS`), or one of :data:`SHAPES` for a kind
    #: bound to one paper's config (:data:`PAPER_KINDS`)
    shape: str = "panel"
    #: a paper kind's config entry (``ldpfl.fig1``) or, for the ``experiment`` shape, section (``lremh``)
    config_key: str | None = None
    #: the names of its rules (workflow/rules/experiments.smk): a job's (None: the render computes,
    #: shape ``in_render``) and the figure's render, formatted with ``paper``, ``figure`` and, for the
    #: ``experiment`` shape, ``experiment``
    job_rule: str | None = "panel_job_{paper}_{figure}"
    render_rule: str = "figure_{paper}_{figure}"
    #: whether its plot reads the panels' data cards (``plot(..., cards={dataset: card})``)
    render_cards: bool = False
    #: the figure's title when its entry has none (registered for the report and the README)
    title: str = ""
    #: ``experiment`` shape: the figures an experiment feeds, its ``<role>_figure`` keys, and further
    #: outputs of a role's render, (role, output name, path formatted with ``paper`` and ``figure``)
    roles: tuple[str, ...] = ()
    role_outputs: tuple[tuple[str, str, str], ...] = ()


KINDS: dict[str, KindSpec] = {
    "mean": KindSpec(
        "mean",
        "ldprepro.experiments.kinds.mean",
        "mean_figure",
        "figure_job.mean",
        "mechanisms",
        None,
        "mean estimation: error of the estimated mean of numeric columns vs ε or n",
    ),
    "sgd": KindSpec(
        "sgd",
        "ldprepro.experiments.kinds.sgd",
        "sgd_figure",
        "figure_job.sgd",
        "mechanisms",
        None,
        "LDP stochastic gradient descent: test metric of private linear/logistic/SVM fits",
    ),
    "frequency": KindSpec(
        "frequency",
        "ldprepro.experiments.kinds.frequency",
        "frequency_figure",
        "benchmark_job.frequency",
        "oracles",
        "synthetic",
        "frequency estimation: frequency oracles on a categorical column or synthetic counts, vs ε or k",
    ),
    "variance": KindSpec(
        "variance",
        "ldprepro.experiments.kinds.variance",
        "variance_figure",
        "ldpfl_fig1_mechanism",
        "mechanisms",
        "input",
        "a mechanism's variance (worst case or on a dataset's values) vs ε, closed form and Monte Carlo",
    ),
    "histogram": KindSpec(
        "histogram",
        "ldprepro.experiments.kinds.histogram",
        "histogram_figure",
        "bshp_job",
        "collectors",
        None,
        "histogram publication: named collectors (split_baseline, bshp, wshp) on a numeric column, vs ε or r",
        job_rule="{paper}_job_{figure}",
        render_rule="{paper}_figure_{figure}",
        render_cards=True,
    ),
}


#: The job shapes of the kinds bound to one paper's config (besides ``panel``), as
#: workflow/rules/experiments.smk creates them (a paper kind's module provides what its shape runs):
#:
#: - ``mechanisms``: one data-free job writes ``results/<paper>/<figN>/<mechanism>.parquet`` for every
#:   mechanism of the entry (the module's ``run_job``, ``panel`` {} and no data), rule ``job_rule``;
#:   the figure's render (rule ``render_rule``) is the module's ``render(params, input, output)``;
#: - ``in_render``: one job computes the rows, decides the claims and draws (the module's ``render``);
#: - ``experiment``: one job per experiment of the config section (``<section>.experiments``) writes the
#:   result files of every figure it feeds, one per role (the module's ``run_experiment(params, input,
#:   output, progress)``), and each figure is rendered by the module's ``render``.
SHAPES = ("mechanisms", "in_render", "experiment")

#: Kinds bound to one paper's config entry or section, each with its own job shape and computation
#: (the issue's "a job that feeds two figures or computes and draws in one job keeps its own job
#: function behind the contract"). A figure entry cannot name them: their config is their paper's.
#: Their modules live in the paper's folder (``ldprepro.papers.<key>``) and are fingerprinted, as every
#: kind's, by their rules' ``code`` param (``ldprepro.pipeline.parse.module_hash``).
PAPER_KINDS: dict[str, KindSpec] = {
    "variance_curve": KindSpec(
        "variance_curve",
        "ldprepro.papers.ldpfl.variance_curve",
        "properties/ldpfl/properties/fig1",
        "ldpfl_fig1_mechanism",
        "mechanisms",
        None,
        "Zhao et al. Fig. 1: closed-form worst-case variance on a fine ε grid, Monte Carlo at a few ε",
        shape="mechanisms",
        config_key="ldpfl.fig1",
        job_rule="{paper}_{figure}_mechanism",
        render_rule="{paper}_{figure}",
        title="worst-case noise variance vs ε",
    ),
    "output_density": KindSpec(
        "output_density",
        "ldprepro.papers.ldpfl.output_density",
        "properties/ldpfl/properties/fig4",
        "ldpfl_fig4",
        "mechanisms",
        None,
        "Zhao et al. Fig. 4: a piecewise mechanism's output density, exact and sampled, at a few inputs",
        shape="in_render",
        config_key="ldpfl.fig4",
        job_rule=None,
        render_rule="{paper}_{figure}",
        title="PM-OPT output density",
    ),
    "joint_distribution": KindSpec(
        "joint_distribution",
        "ldprepro.papers.lremh.kind",
        "properties/lremh",
        "lremh_job",
        "methods",
        None,
        "paper 004: joint distributions from RR-LDP reports (EM, LASSO, LREMH), cost/time and AVD vs k",
        shape="experiment",
        config_key="lremh",
        job_rule="{paper}_job_{experiment}",
        render_rule="{paper}_figure_{figure}",
        roles=("time", "avd"),
        role_outputs=(("time", "agreement", "results/{paper}/{figure}/cost_time_agreement.json"),),
    ),
}


def kind_names() -> tuple[str, ...]:
    """The kinds a figure entry may name (:data:`KINDS`, not the paper kinds), in registry order."""
    return tuple(KINDS)


def get_kind(name: str) -> KindSpec:
    """The spec of a kind (a figure entry's or a paper kind), or a ValueError naming the known ones."""
    if name in KINDS:
        return KINDS[name]
    if name in PAPER_KINDS:
        return PAPER_KINDS[name]
    raise ValueError(f"unknown experiment kind {name!r}; known: {', '.join(KINDS)}")


def load(name: str) -> ModuleType:
    """The module implementing a kind (its run_job, grid and plot; a paper kind's, what its shape runs)."""
    return importlib.import_module(get_kind(name).module)


def entry_problems(entry: dict, key: str) -> list[str]:
    """What a figure entry (config key ``key``, the scale's overrides applied) asks that its kind
    cannot draw, checked when the workflow loads (the schema checks each key alone; these are
    combinations): one message per problem, naming the key and what to write instead."""
    out = []
    kind = entry.get("kind")
    panels = entry.get("panels") or []
    if kind == "frequency":
        if any("synthetic" in p for p in panels) and not entry.get("k"):
            out.append(f"{key}: a synthetic frequency panel needs the figure's domain sizes, k: [64] say")
        if entry.get("x", "eps") == "eps" and len(entry.get("k") or []) > 1:
            out.append(f"{key}: x: eps draws one k, and k is {entry['k']}: draw x: k (a curve per oracle and ε)")
        if entry.get("x") == "k" and any("synthetic" not in p for p in panels):
            out.append(f"{key}: x: k needs synthetic panels (a dataset's column has one k, its categories)")
    if kind == "variance" and any(p.get("input") == "worst_case" for p in panels) and "users" not in entry:
        out.append(f"{key}: a worst-case variance panel needs the Monte-Carlo users per repetition, users: 1000 say")
    if kind == "histogram":
        out += _histogram_problems(entry, key)
    return out


def _histogram_problems(entry: dict, key: str) -> list[str]:
    panels = entry.get("panels") or []
    out = []
    if entry.get("plot", "mse_eps") == "values" and len(panels) != 1:
        out.append(f"{key}: plot: values draws one panel's histograms, got {len(panels)} panels: one per figure")
    if not entry.get("column") and any("column" not in p for p in panels):
        out.append(f"{key}: name the numeric column to publish, column: salary say (or per panel)")
    declared = [c for c in entry.get("claims") or [] if c.get("test") != "function"]
    if declared and len(entry.get("ratios") or []) > 1:
        out.append(
            f"{key}: its claims compare the collectors at one sampling ratio, and ratios is {entry['ratios']}: "
            "give the figure one ratio, ratios: [0.8] say (a figure per ratio)"
        )
    focus = entry.get("focus_city")
    if focus is not None and focus not in (entry.get("cities") or []):
        out.append(f"{key}.focus_city {focus!r} is not one of its cities {entry.get('cities') or []}")
    return out


def section_entry(section: dict, entry: dict, key: str) -> dict:
    """A figure entry with what its paper section names once for all its figures: for a
    ``histogram`` figure that lists ``cities: [name, ...]``, its panels are the section's
    ``cities`` entries of those names (each with ``city``: its name), and the section's ``protocol``
    gives the options the entry does not set (paper 001's config). Any other entry as it is."""
    if entry.get("kind") != "histogram" or "cities" not in entry:
        return entry
    cities = section.get("cities") or {}
    unknown = [c for c in entry["cities"] if c not in cities]
    if unknown:
        where = key.rsplit(".", 1)[0]
        raise ValueError(f"{key}.cities names {unknown}, which are not under {where}.cities (known: {sorted(cities)})")
    if "panels" in entry:
        raise ValueError(f"{key}: name its panels once, cities: [...] or panels: [...], not both")
    panels = [{"city": c, **cities[c]} for c in entry["cities"]]
    return {**(section.get("protocol") or {}), **entry, "panels": panels}


def needs_data(entry: dict, panel: dict) -> bool:
    """Whether a panel of this entry reads a dataset (its data and card are job inputs)."""
    key = get_kind(entry.get("kind", "mean")).data_free_key
    return not (key and key in panel)
