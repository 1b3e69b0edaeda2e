"""Experiment jobs that two figures share: one computation, not two.

Paper 002's Figs. 11–13 repeat Figs. 6, 8 and 9 with the discretisation post-processing (Alg. 5)
applied to PM, HM, PM-SUB and HM-TP; their other curves (Laplace, Duchi, Three-Outputs, the
non-private reference) are the same experiment as in the figure they repeat: same dataset, panel,
ε, repetitions, model and mechanism parameters (at the census sizes, computing them twice was the
largest avoidable cost of the IPUMS-sized run: timing/ipums_results.md lists the copies and what
they cost). Here each job gets an *identity*, the parameters its computation
depends on; a job whose identity an earlier figure's job (in config order) already has is not
computed again: its result file is that job's rows, relabelled with its own paper and figure.

The identity is conservative: the figure's whole compute entry (``compute_params``: no titles,
labels or captions) and panel, except what only concerns *other* mechanisms:

- ``mechanisms`` (the job's own mechanism is part of the identity),
- ``discretize`` / ``discretize_mechanisms``: replaced by the job's own discretisation (the
  number of segments if the mechanism is discretised, else none),
- ``mechanism_params``: only the job's own mechanism's,
- ``claims``: read by the figure's claim step, never by its jobs.

Anything else that differs (ε, ``reps``, ``test_reps``, ``lambda``, a sweep, a panel's target)
keeps the jobs apart. A shared job's rows are the earlier job's draws (its random stream is keyed
by that figure); both figures then show the same estimate of the same curve.

LDP-SGD figures compare mechanisms fold by fold (paired on the cross-validation fits, every
mechanism of a figure trained and tested on the same splits). So that a figure's own curves stay
paired with the curves it shares, the splits (and each fit's visiting order) are keyed by the
first figure with the same *split identity* (:func:`split_sources`: the panel, ``folds``,
``cv_repetitions`` and ``max_users``), not by the figure itself; the noise of every fit stays keyed
by its own figure.

Parse-time code: the standard library only (tests/test_workflow_parse.py).
"""

from __future__ import annotations

import json

from ldprepro.pipeline.parse import compute_params

#: keys of a figure entry that concern other mechanisms than a job's own, or no job at all
_PER_MECHANISM_KEYS = ("panels", "mechanisms", "discretize", "discretize_mechanisms", "mechanism_params", "claims")


def job_identity(entry: dict, panel: dict, mechanism: str) -> str:
    """What the job of ``mechanism`` on ``panel`` of the figure ``entry`` computes, as canonical
    JSON: equal identities mean the same computation (module docstring)."""
    own = compute_params({k: v for k, v in entry.items() if k not in _PER_MECHANISM_KEYS})
    discretised = mechanism in (entry.get("discretize_mechanisms") or [])
    own["discretize"] = entry.get("discretize") if discretised else None
    own["mechanism_params"] = compute_params((entry.get("mechanism_params") or {}).get(mechanism, {}))
    return json.dumps(
        {"figure": own, "panel": compute_params(panel), "mechanism": mechanism}, sort_keys=True, default=str
    )


def shared_sources(figures: dict) -> dict:
    """{(paper, figure, dataset, mechanism): (paper, figure) whose job computes it} for every job
    of ``figures`` ({(paper, figure): entry}, in config order, scale overrides applied) that an
    earlier figure's job already computes. The source is always the first figure with that
    identity, never itself shared, so no job waits on a copy."""
    first, shared = {}, {}
    for (paper, fig), entry in figures.items():
        for panel in entry.get("panels", []):
            for mechanism in entry.get("mechanisms", []):
                identity = job_identity(entry, panel, mechanism)
                key = (paper, fig, panel["dataset"], mechanism)
                if identity in first:
                    shared[key] = first[identity]
                else:
                    first[identity] = (paper, fig)
    return shared


#: the keys of an LDP-SGD entry that decide its cross-validation splits (with the panel)
_SPLIT_KEYS = ("folds", "cv_repetitions", "max_users")


def split_sources(figures: dict) -> dict:
    """{(paper, figure, dataset): (paper, figure) whose cross-validation splits it uses} for every
    panel of the LDP-SGD ``figures`` (in config order, scale overrides applied): the first figure
    whose panel on that dataset and split keys (:data:`_SPLIT_KEYS`) are the same, itself if none."""
    first, out = {}, {}
    for (paper, fig), entry in figures.items():
        if entry.get("kind") != "sgd":
            continue
        for panel in entry.get("panels", []):
            identity = json.dumps(
                {"panel": compute_params(panel), **{k: entry.get(k) for k in _SPLIT_KEYS}}, sort_keys=True, default=str
            )
            out[(paper, fig, panel["dataset"])] = first.setdefault(identity, (paper, fig))
    return out


def shared_files(shared: dict, paper: str, figure: str, dataset: str, mechanisms) -> dict:
    """{mechanism: the earlier figure's result file that holds its rows} for the mechanisms of a
    job (``figure``'s on ``dataset``) that ``shared`` (:func:`shared_sources`) lists."""
    sources = {m: shared.get((paper, figure, dataset, m)) for m in mechanisms}
    return {m: result_path(*src, dataset, m) for m, src in sources.items() if src}


def result_path(paper: str, figure: str, dataset: str, mechanism: str) -> str:
    """A job's result file (the workflow's output path)."""
    return f"results/{paper}/{figure}/{dataset}__{mechanism}.parquet"
