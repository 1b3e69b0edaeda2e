# Shared helpers for every stage: paths, the data mirror, availability, resources, the list of
# top-level targets. Parse-time code lives in light modules (ldprepro.pipeline.parse,
# ldprepro.data.availability, ldprepro.data.entries): no numpy, pandas or scipy at parse time.
import os
import re
import sys
from pathlib import Path

from ldprepro.claims.declarations import check_in_scope as claims_in_scope
from ldprepro.claims.declarations import validate as validate_claims
from ldprepro.data.availability import decide as decide_availability
from ldprepro.experiments.kinds import (
    KINDS,
    PAPER_KINDS,
    entry_problems as kind_entry_problems,
    kind_names,
    section_entry,
    needs_data as kind_needs_data,
)
from ldprepro.pipeline import resources as job_resources
from ldprepro.pipeline.mechanism_names import EXPERIMENT_PAPERS, check_config_mechanisms, registered_mechanisms
from ldprepro.pipeline.scheduler_wakeups import coalesce as coalesce_scheduler_wakeups
from ldprepro.pipeline.shared_jobs import shared_files, shared_sources, split_sources
from ldprepro.pipeline.parse import (
    code_hash,
    compute_params,
    declarations_hash,
    experiment_outputs,
    experiment_params,
    lock_hint,
    module_hash,
    run_products,
    stop_line,
    summary_lines,
)

# The mirror directory is consulted before the network. Config wins; the environment
# variable LDPREPRO_DATA_MIRROR is the fallback (CI sets it to ../shared/datasets).
DATA_MIRROR = config.get("data_mirror") or os.environ.get("LDPREPRO_DATA_MIRROR") or ""

# Which datasets can be obtained here: decided once by the main process and recorded in
# results/availability.json; every later parse (cluster jobs included) reads the same record.
# `--config refresh_availability=true` decides again.
UNAVAILABLE_ALL = decide_availability(
    config["datasets"],
    DATA_MIRROR,
    config.get("ipums", {}).get("extract_dir", ""),
    refresh=bool(config.get("refresh_availability")) and workflow.is_main_process,
    write=workflow.is_main_process,
)

# After a killed run, say exactly what to run before Snakemake refuses its lock.
if workflow.is_main_process and "--unlock" not in sys.argv:
    _hint = lock_hint(".")
    if _hint:
        print(f"ldprepro: {_hint}", file=sys.stderr)

# Snakemake's scheduler starts a new 1-second wake-up timer chain for every finished job, each pass
# re-evaluating every waiting job; keep one pending wake-up at a time (ldprepro.pipeline.scheduler_wakeups).
if not coalesce_scheduler_wakeups():
    print(
        "ldprepro: this Snakemake's scheduler has no wake-up timer method to coalesce; left as it is", file=sys.stderr
    )

# `snakemake --report`: report-marked files that were not built are listed, not fatal.
REPORTING = any(a == "--report" or a.startswith("--report=") for a in sys.argv)


def error_lines(before, logfile=None):
    """onerror: why the run stopped (an error, or an interruption: Snakemake's log ``logfile``),
    datasets that turned out unobtainable while their job ran (recorded now, so the next run draws
    them as 'not available'), and what to run next."""
    after = decide_availability(
        config["datasets"], DATA_MIRROR, config.get("ipums", {}).get("extract_dir", ""), write=workflow.is_main_process
    )
    new = {k: v for k, v in after.items() if k not in before}
    lines = [stop_line(logfile)]
    if new:
        lines.append(
            "These datasets turned out not to be obtainable while their job ran; they are now "
            "recorded as not available (results/availability.json):"
        )
        lines += [f"  - {k}: {v}" for k, v in sorted(new.items())]
        lines.append("Run the same command again: it builds everything else, with 'not available' panels.")
    return lines


# Every stage appends the files `rule all` should build.
ALL_TARGETS = []

# Every stage registers its paper figures here (paper, figure, title, status, reason) for the
# report and the README's generated "Results at a glance".
FIGURE_REGISTRY = []

# Products that are not registered figures, with the unavailable datasets they are built without
# ((file, {dataset: reason}); e.g. the benchmark's tables): the closing summary of a run names the
# unavailable datasets of the figures and of these products among its targets (summary_lines).
PRODUCT_NEEDS = []

# ---------------------------------------------------------------------------------------------
# Resources: every rule's mem_mb and runtime follow what its job holds and does (issue 30). The
# model (ldprepro.pipeline.resources) reads the job's data card (rows x one-hot width) and its config
# entry (repetitions, folds, eps count, ...) and declares (safety factor x the envelope of measured
# jobs + the Snakemake wrapper's RSS) x attempt. The calibration, timing/resources.json, is written by
# timing/resources_fit.py from measured runs (smoke, paper, IPUMS-sized), with its model part (all
# the parse reads) in the package (ldprepro/pipeline/resource_model.json); timing/resources.md has the
# declared-vs-measured table. A card that does not exist yet at DAG time (made by a data job) gives
# <TBD>; Snakemake evaluates the resources again when the job is ready. Every job is single-threaded
# (BLAS/OpenMP pinned to `threads` by ldprepro.pipeline.jobsetup), so threads = 1 everywhere.
# runtime is enforced: a local job past 3 x runtime is stopped naming the mechanism it was running
# (jobsetup.watchdog); on SLURM it is the job's time limit, and a job killed for memory or time is
# retried with attempt = 2 (profiles/slurm). Raise one by hand: --set-resources RULE:runtime=N.
# ---------------------------------------------------------------------------------------------
RESOURCE_MODEL = job_resources.load_model(job_resources.MODEL_FILE)


def res(family, entry=None, card=None, sized_by_input=False):
    """The mem_mb and runtime callables (ldprepro.pipeline.resources.callables) of a family of rules. ``family`` a
    model family or a function of the wildcards; ``entry`` the job's config entry (or a function of
    the wildcards); ``card`` the name of the input that is the dataset's data card;
    ``sized_by_input``: sized by input.size_mb (data rules)."""
    return job_resources.callables(RESOURCE_MODEL, family, entry, card, sized_by_input)


def _plugins_hash():
    """Fingerprint of the user's mechanism plugins (config.yaml mechanism_plugins), '' if none."""
    if not config.get("mechanism_plugins"):
        return ""  # keeps the parse free of numpy
    import hashlib

    from ldprepro.domain.mechanisms.registry import plugin_files

    files = plugin_files(config["mechanism_plugins"])
    return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:16] if files else ""


PLUGINS_HASH = _plugins_hash()


def declarations(paper, fig):
    """The hash of the figure's own section of papers/<paper>/claims.yaml and of the modules its
    function entries name (ldprepro.pipeline.parse.declarations_hash), a param of the figure's job,
    which decides its claims. Editing one claim reruns that figure's claims step and the report
    tables, not every figure."""
    return declarations_hash(paper, fig)


# The mechanism names config.yaml uses, checked against the registry once the plugins are loaded
# (the schema only checks that they are names): an unknown one stops the parse naming its key.
# Without plugins, the built-in names are known without importing numpy.
MECHANISM_NAMES = registered_mechanisms(config.get("mechanism_plugins"))
check_config_mechanisms(config, MECHANISM_NAMES, CONFIG_ORIGIN.of)

# The experiment kinds the shared experiment rules run (ldprepro.experiments.kinds, experiments.smk).
EXPERIMENT_KINDS = kind_names()


def kind_family(entry):
    """The resource family a figure's jobs are sized as: its kind's (ldprepro.experiments.kinds)."""
    return KINDS[entry["kind"]].resource_family


def code(script, plugins=True):
    """Fingerprint of the package code a script runs (a param: editing that code reruns the job)
    and, for a job that runs mechanisms (``plugins``), of the mechanism plugins. The data rules
    pass ``plugins=False``: adding or editing a plugin must not rerun downloads and normalisation
    (nor delete a raw download when the rerun fails)."""
    own = code_hash(Path(workflow.basedir) / "workflow" / "scripts" / script)
    return f"{own}+plugins:{PLUGINS_HASH}" if PLUGINS_HASH and plugins else own


def kind_code(script, spec):
    """code(script) and the fingerprint of the module of the kind ``spec`` (ldprepro.experiments.kinds),
    which the script loads by name (code_hash follows import statements only): editing a kind's
    computation or plot reruns its jobs and renders, and only those."""
    return f"{code(script)}+kind:{module_hash(spec.module)}"


def register_figure(paper, figure, title, panels=(), unavailable=None):
    """Status from the panels' data and roles (ldprepro.report.figure_status); ``panels``: config dicts
    or dataset names."""
    from ldprepro.report.figure_status import figure_status

    panels = [p if isinstance(p, dict) else {"dataset": p} for p in panels]
    status, reason = figure_status(panels, unavailable or {})
    missing = {p["dataset"]: (unavailable or {})[p["dataset"]] for p in panels if p["dataset"] in (unavailable or {})}
    FIGURE_REGISTRY.append(
        {
            "paper": paper,
            "figure": figure,
            "title": title,
            "status": status,
            "reason": reason,
            "unavailable": missing,
            "panels": [{"dataset": p["dataset"], "data_role": p.get("data_role", "paper")} for p in panels],
        }
    )


def config_entry(paper, figure):
    """A figure's config entry: ``<paper>.<figure>`` for the five papers and ``experiments``, or
    ``papers.<paper>.<figure>`` for a paper added under ``papers:``."""
    if paper in config.get("papers", {}):
        return config["papers"][paper][figure]
    return config[paper][figure]


def figure_params(paper, figure=None):
    """A figure's config entry (or a top-level entry such as `audit` when figure is None), with
    its `smoke` overrides applied when scale is smoke (sizes and repetitions only; the method
    never changes), and what its paper section names once for all its figures (a histogram
    figure's cities and protocol: ldprepro.experiments.kinds.section_entry)."""
    entry = dict(config[paper] if figure is None else config_entry(paper, figure))
    smoke = entry.pop("smoke", {})
    if config["scale"] == "smoke":
        entry.update(smoke)
    if figure is None:
        return entry
    papers = config.get("papers", {})
    key = f"papers.{paper}.{figure}" if paper in papers else f"{paper}.{figure}"
    section = papers[paper] if paper in papers else config[paper]
    try:
        return section_entry(section, entry, key)
    except ValueError as exc:
        raise ValueError(f"{CONFIG_ORIGIN.of(key)}: {exc}") from None


def unavailable_datasets(names):
    """{dataset: reason} for the datasets that cannot be obtained here (from the recorded decision)."""
    out = {}
    for name in sorted(names):
        if name not in config["datasets"]:
            raise ValueError(f"config.yaml: a figure panel names dataset '{name}', which is not under datasets:")
        if name in UNAVAILABLE_ALL:
            out[name] = UNAVAILABLE_ALL[name]
    return out


def job_outputs(paper, fig, entry, unavailable):
    """One result file per (available panel dataset, mechanism) of a figure."""
    return [
        f"results/{paper}/{fig}/{p['dataset']}__{m}.parquet"
        for p in entry["panels"]
        if p["dataset"] not in unavailable
        for m in entry["mechanisms"]
    ]


def figure_cards(entry, unavailable):
    """The data cards of a figure's available panels, for a kind whose plot reads them
    (KindSpec.render_cards); none for any other kind."""
    if not KINDS[entry["kind"]].render_cards:
        return []
    return [f"data/processed/{p['dataset']}.json" for p in entry["panels"] if p["dataset"] not in unavailable]


def figure_compute(entry):
    """The compute parameters of an experiment figure's jobs: its entry without the panels (and, by
    compute_params, without titles or labels), so a presentation edit reruns no job."""
    return compute_params({k: v for k, v in entry.items() if k != "panels"})


def panel_data(entry, dataset, what):
    """A panel's processed dataset file (``what``: parquet or json), none for a data-free panel
    (synthetic counts, a worst-case input: ldprepro.experiments.kinds.needs_data)."""
    needs = kind_needs_data(entry, figure_panel(entry, dataset))
    return f"data/processed/{dataset}.{what}" if needs else []


def figure_panel(entry, dataset):
    for panel in entry["panels"]:
        if panel["dataset"] == dataset:
            return panel
    raise ValueError(f"no panel for dataset {dataset}")


def static_caption(paper, fig):
    """The figure's hand-written prose (src/ldprepro/papers/<paper>/captions/<figN>.rst: what the
    paper claims), or the generic one for an experiment a user added in config.yaml."""
    own = Path(workflow.basedir) / "src/ldprepro/papers" / paper / "captions" / f"{fig}.rst"
    return own if own.exists() else Path(workflow.basedir) / "workflow/report/experiment.rst"


def figure_caption(paper, fig):
    """The figure's report caption: the one generated from its claims table (by the figure's own job:
    title, the paper's claim, our verdicts and tests, parameters) once it exists, else the prose."""
    generated = Path(f"results/{paper}/{fig}/caption.rst").resolve()
    return str(generated) if generated.exists() else str(static_caption(paper, fig))


def caption_entry(paper, fig):
    """The figure's config entry (compute parameters) for its generated caption, {} if none."""
    try:
        entry = config_entry(paper, fig)
    except KeyError:
        return {}
    return compute_params(figure_params(paper, fig)) if isinstance(entry, dict) else {}


def figure_report_outputs(paper, fig):
    """What the job of every figure writes beside it (ldprepro.report.figure_report), the report caption
    generated from its claims and the forest plot of its claims (every point with its effect and
    interval, from claim_points.parquet; in the report beside the figure)."""
    return {
        "caption": f"results/{paper}/{fig}/caption.rst",
        "forest": report_if_built(
            f"results/{paper}/{fig}/claims_forest.png",
            caption="../report/forest.rst",
            category="claims",
            labels={"figure": f"{paper} {fig}", "title": "forest plot of the claims"},
        ),
    }


def experiment_figure_outputs(paper, fig):
    """What an experiment figure's render writes: its table, claims, figure, caption and forest plot."""
    return {
        **figure_report_outputs(paper, fig),
        "summary": f"results/{paper}/{fig}/summary.parquet",
        "claims": f"results/{paper}/{fig}/claims.parquet",
        "claim_points": f"results/{paper}/{fig}/claim_points.parquet",
        "png": report_if_built(f"figures/{paper}/{fig}.png", caption=figure_caption(paper, fig), category=paper),
        "svg": f"figures/{paper}/{fig}.svg",
    }


def experiment_figure_params(paper, fig, entry, unavailable):
    """The render's parameters: the whole entry (titles included) and the reasons of its panels that are
    ``unavailable`` ({dataset: reason})."""
    return {
        **figure_report_params(paper, fig),
        "paper": paper,
        "figure": fig,
        "fig": entry,
        "unavailable": {
            p["dataset"]: UNAVAILABLE[p["dataset"]] for p in entry["panels"] if p["dataset"] in UNAVAILABLE
        },
    }


def figure_report_params(paper, fig):
    """The caption's title and parameters (the figure, registered before its rule is defined). Its prose
    is an input (figure_report_inputs): an edit reruns the figure job."""
    entry = next(f for f in FIGURE_REGISTRY if (f["paper"], f["figure"]) == (paper, fig))
    return {"report_figure": entry, "report_entry": caption_entry(paper, fig)}


def figure_report_inputs(paper, fig):
    """The figure's hand-written caption prose (static_caption), read by the figure job for its caption."""
    # relative to the working directory: a project copied or moved whole (`cp -a`, `mv`) keeps its input
    # paths, so Snakemake does not rerun every figure for a changed set of inputs (issue 54)
    return {"report_prose": os.path.relpath(static_caption(paper, fig))}


def report_if_built(path, **kwargs):
    """`report(path)` when the file exists, else the plain path: `snakemake --report` then builds
    from whatever finished, and the missing figures are listed in the report's description
    (REPORT_MISSING) instead of stopping it. (Only `--report` reads the flag.)"""
    figure = re.fullmatch(r"figures/([a-z0-9_]+)/([a-z][a-z0-9_]*)\.png", str(path))
    if figure and "labels" not in kwargs:  # the report lists figures by paper and title, not by path
        entry = next((f for f in FIGURE_REGISTRY if (f["paper"], f["figure"]) == figure.groups()), None)
        if entry:
            kwargs["labels"] = {
                "figure": f"{entry['paper']} {entry['figure']}",
                "title": entry["title"] or entry["figure"],
            }
    if Path(path).exists():
        return report(path, **kwargs)
    REPORT_MISSING.append(path)
    return path


REPORT_MISSING = []
