# Shared helpers for every stage: paths, the data mirror, the list of top-level targets.
import os
from pathlib import Path

from ldprepro.data.availability import availability

# The mirror directory is consulted before the network. Config wins; the environment
# variable LDPREPRO_DATA_MIRROR is the fallback (CI sets it to ../shared/datasets).
DATA_MIRROR = config.get("data_mirror") or os.environ.get("LDPREPRO_DATA_MIRROR") or ""

# Every stage appends the files `rule all` should build.
ALL_TARGETS = []

# Every stage registers its paper figures here (paper, figure, title, status, reason) for the
# report and the README's generated "Results at a glance".
FIGURE_REGISTRY = []


def register_figure(paper, figure, title, panels=(), unavailable=None):
    """Status from the panels' data and roles (ldprepro.figure_status); ``panels``: config dicts
    or dataset names."""
    from ldprepro.figure_status import figure_status

    panels = [p if isinstance(p, dict) else {"dataset": p} for p in panels]
    status, reason = figure_status(panels, unavailable or {})
    FIGURE_REGISTRY.append({"paper": paper, "figure": figure, "title": title, "status": status,
                            "reason": reason})


def figure_params(paper, figure=None):
    """A figure's config entry (or a top-level entry such as `audit` when figure is None), with
    its `smoke` overrides applied when scale is smoke (sizes and repetitions only; the method
    never changes)."""
    entry = dict(config[paper] if figure is None else config[paper][figure])
    smoke = entry.pop("smoke", {})
    if config["scale"] == "smoke":
        entry.update(smoke)
    return entry


def unavailable_datasets(names):
    """{dataset: reason} for the datasets that cannot be obtained here (decided at load time)."""
    out = {}
    for name in sorted(names):
        if name not in config["datasets"]:
            raise ValueError(f"config.yaml: a figure panel names dataset '{name}', which is not under datasets:")
        reason = availability(name, config["datasets"][name], DATA_MIRROR,
                              config.get("ipums", {}).get("extract_dir", ""))
        if reason:
            out[name] = reason
    return out


def job_outputs(paper, fig, entry, unavailable):
    """One result file per (available panel dataset, mechanism) of a figure."""
    return [f"results/{paper}/{fig}/{p['dataset']}__{m}.parquet"
            for p in entry["panels"] if p["dataset"] not in unavailable for m in entry["mechanisms"]]


def figure_panel(entry, dataset):
    for panel in entry["panels"]:
        if panel["dataset"] == dataset:
            return panel
    raise ValueError(f"no panel for dataset {dataset}")


def figure_caption(paper, fig):
    """The figure's report caption (workflow/report/<paper>_<figN>.rst), or the generic one for an
    experiment a user added in config.yaml."""
    own = f"{paper}_{fig}.rst"
    return f"../report/{own}" if (Path(workflow.basedir) / "workflow/report" / own).exists() else "../report/experiment.rst"
