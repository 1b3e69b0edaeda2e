"""How many repetitions a figure's jobs run: the one home of the rule (standard library only).

A figure entry's ``reps`` is the paper's number of repetitions, which draw the plotted curve. Some
figures ask for more, for the power their claims' tests declare (docs/verdicts-standard.md):
``test_reps`` (mean figures: HierA Figs. 1–2, DCT Fig. 2) or ``claim_reps`` (histogram figures: BSHP). Their jobs
run the larger number; the extra repetitions are ours and are used only by the claims, never drawn.
The jobs (``experiments.mean_figures``, ``experiments.histograms``), the check of their results
(``pipeline.verify``) and the pricing of the extra repetitions (timing/papers_reps.py) all read it
here. (The resource model's work predictor, ``pipeline.resources.job_sizes``, is a separate,
calibrated quantity.)
"""

from __future__ import annotations

#: The config keys that ask for repetitions beyond the paper's ``reps`` (one per kind of figure).
EXTRA_KEYS = ("test_reps", "claim_reps")


def repetitions_run(entry: dict) -> int:
    """The repetitions a figure entry's jobs run: its ``reps``, or its ``test_reps``/``claim_reps``
    when larger."""
    return max(int(entry["reps"]), *(int(entry.get(key, 0)) for key in EXTRA_KEYS))


def extra_key(entry: dict) -> str | None:
    """The key (``test_reps`` or ``claim_reps``) whose repetitions the jobs run beyond the paper's
    ``reps``, or None when they run the paper's."""
    for key in EXTRA_KEYS:
        if int(entry.get(key, 0)) > int(entry["reps"]):
            return key
    return None
