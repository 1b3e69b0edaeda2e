"""Job resources that follow the data: each rule's ``mem_mb`` and ``runtime`` from what the job holds
and does, calibrated on measured runs (issue 30).

The model, per family of rules (:data:`SIZES`: ``figure_job.sgd``, ``bshp_job``, ``render``, ...; which
rule is which family: :func:`rule_family`), is two straight lines:

    memory  (MB)  ≈ a_mem  + b_mem  × size   size = what the job holds (rows × one-hot width of its
                                              dataset, or the Monte-Carlo users of a data-free job)
    wall    (s)   ≈ a_time + b_time × work   work = what the job does (users × width × fits, users ×
                                              ε count × repetitions, ...; :func:`job_sizes`), summed
                                              over the mechanisms of a job that runs several
                                              (``job_mechanisms``: a figure panel, a BSHP city)

Each line is the *upper envelope* of the family's measured jobs (timing/resources_fit.py: every
measured job lies on or under it, :func:`fit_envelope`), at smoke, paper and IPUMS size. A job then
declares

    mem_mb  = ⌈ (SAFETY_MEM × line_mem + snakemake_rss_mb) × attempt ⌉₁₀₀
    runtime = ⌈ (SAFETY_TIME × line_time / 60 + RUNTIME_ALLOWANCE_MIN) × attempt ⌉   (minutes)

``snakemake_rss_mb`` is the measured peak of the Snakemake process that wraps the script on a cluster
node (SLURM counts every process of the job step); ``RUNTIME_ALLOWANCE_MIN`` covers that process's
start. ``attempt`` is Snakemake's attempt counter: a job killed for memory or time is retried with
twice (then three times) the resources (profiles/slurm ``retries``).

Sizes come from the dataset's data card (``data/processed/<dataset>.json``: ``rows_after_cleaning``
and ``columns``), an input of every compute job. While the card does not exist yet (it is made by a
data job), reading it raises :class:`FileNotFoundError` for that input file, which Snakemake 9 turns
into a to-be-determined value and evaluates again when the job is ready to run (the scheduler resets
every ready job's resources; ``snakemake -n`` shows ``<TBD>``). Data rules, whose size is not known
before they run, use their input files' size (``input.size_mb``) or their configured size.

The calibration lives in ``timing/resources.json`` (written by timing/resources_fit.py from run
directories' job logs, never by hand); its ``model`` part, all the workflow needs, is written with it
to :data:`MODEL_FILE` in this package (1 KB, read at every parse), which :func:`load_model` reads. This module
imports only the standard library (it runs at every parse).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

#: The declared memory is at least this many times the calibrated envelope of measured peaks.
SAFETY_MEM = 1.5
#: The declared runtime is at least this many times the calibrated envelope of measured wall times.
SAFETY_TIME = 2.0
#: Minutes added to every runtime for the job's own Snakemake start on a cluster node (the parse).
RUNTIME_ALLOWANCE_MIN = 1
#: What one repetition at one ε of one mechanism costs a mean-estimation job beyond its data, whatever
#: the calibration (issue 54 item 4: the calibrated lines are flat in the repetitions, so ``reps:
#: 10000000`` was declared like ``reps: 20`` and died in numpy's ArrayMemoryError): its two result rows
#: and its generator, held until the job writes its table. Measured on mean_error_rows + its DataFrame
#: (20,000 repetitions, 10 and 1,000 users, Laplace and PM): a peak of 1,990 bytes (tracemalloc) and
#: 20-29 µs of CPU per repetition.
REP_BYTES = 2000
REP_SECONDS = 30e-6
#: Families whose calibration has no data and no fallback get these (MB, minutes); see docs/cluster.md.
UNCALIBRATED = (2000, 30)
#: A family with no measured job is declared with the line of the family named here.
FALLBACK = {
    "benchmark_job.mean": "figure_job.mean",
    "benchmark_job.frequency": "figure_job.mean",
    "benchmark_job.sgd": "figure_job.sgd",
    "figure_job.mean": "figure_job.sgd",
    "data_fetch": "data_normalise",
    "tables": "render",
}


#: the model the workflow reads (timing/resources.json's ``model`` part, written by timing/resources_fit.py)
MODEL_FILE = Path(__file__).with_name("resource_model.json")


class ResourceInputError(ValueError):
    """A data card or calibration file that cannot be used; the message names the file, key and value."""


# ------------------------------------------------------------------------------------------ sizes
def card_size(path) -> tuple[int, int]:
    """(rows, one-hot width) of a data card: ``rows_after_cleaning`` and Σ over ``columns`` of the
    column's ``n_categories`` (categorical) or 1 (numeric). Raises FileNotFoundError (with the path
    as given, so that Snakemake recognises its own input) when the card is not there yet."""
    with open(path, encoding="utf-8") as fh:
        try:
            card = json.load(fh)
        except json.JSONDecodeError as err:
            raise ResourceInputError(f"{path}: not a JSON data card ({err})") from err
    return card_summary(card, str(path))


def card_summary(card: dict, where: str = "data card") -> tuple[int, int]:
    """(rows, one-hot width) of a parsed data card (see :func:`card_size`)."""
    rows = card.get("rows_after_cleaning")
    if not isinstance(rows, int) or isinstance(rows, bool) or rows < 0:
        raise ResourceInputError(f"{where}: key 'rows_after_cleaning' must be a count, got {rows!r}")
    columns = card.get("columns")
    if not isinstance(columns, list):
        raise ResourceInputError(f"{where}: key 'columns' must be a list of columns, got {columns!r}")
    width = 0
    for col in columns:
        k = col.get("n_categories") if isinstance(col, dict) else None
        if k is None and isinstance(col, dict) and isinstance(col.get("categories"), list):
            k = len(col["categories"])
        if k is not None and (not isinstance(k, int) or k < 0):
            raise ResourceInputError(f"{where}: column {col.get('name')!r} has n_categories {k!r}")
        width += max(1, k or 1)
    return rows, max(1, width)


def _count(value) -> int:
    """How many settings a config value stands for: a list's length, a number itself, else 1."""
    if isinstance(value, (list, tuple, dict)):
        return max(1, len(value))
    if isinstance(value, bool) or value is None:
        return 1
    if isinstance(value, (int, float)):
        return max(1, int(value))
    return 1


def _users(rows: int, entry: dict) -> int:
    """The users a job works on: the dataset's rows, capped by the entry's ``max_users``."""
    cap = entry.get("max_users")
    return min(rows, int(cap)) if isinstance(cap, (int, float)) and cap > 0 else rows


def _sgd_fits(entry: dict) -> int:
    """Models a SGD job fits: ε count × folds × CV repetitions × swept output counts × graded levels."""
    fits = _count(entry.get("eps")) * _count(entry.get("folds", 1)) * _count(entry.get("cv_repetitions", 1))
    if entry.get("x") == "n_outputs":
        fits *= _count(entry.get("discretize", 1))
    if entry.get("collector") == "graded":
        fits *= _count(entry.get("graded", 1))
    return fits


def _mechanisms(entry: dict) -> int:
    """Mechanisms a job runs one after another on the same data: a panel job's (``job_mechanisms``)
    times a benchmark job's panels (``job_panels``)."""
    return _count(entry.get("job_mechanisms", 1)) * _count(entry.get("job_panels", 1))


def _mc_reps(entry: dict) -> int:
    """Repetitions × swept sizes of a Monte-Carlo job: ``reps`` plus its claims' ``test_reps``."""
    reps = _count(entry.get("reps", 1)) + _count(entry.get("test_reps", 0)) * bool(entry.get("test_reps"))
    return reps * _count(entry.get("sizes", entry.get("sweep", 1)))


def _monte_carlo_sizes(entry, rows, width, users, input_mb):
    """Mean or frequency estimation: users × ε count × repetitions × sweep × mechanisms."""
    return rows * width, users * _count(entry.get("eps")) * _mc_reps(entry) * _mechanisms(entry)


def _sgd_sizes(entry, rows, width, users, input_mb):
    """LDP-SGD: users × one-hot width × fits × mechanisms."""
    return rows * width, users * width * _sgd_fits(entry) * _mechanisms(entry)


def _bshp_sizes(entry, rows, width, users, input_mb):
    """One job per (figure, city) runs the figure's methods (``job_mechanisms``)."""
    reps = _count(entry.get("reps", 1)) + _count(entry.get("claim_reps", 0))
    methods = _count(entry.get("job_mechanisms", 1))
    return rows * width, users * _count(entry.get("eps")) * _count(entry.get("ratios", 1)) * reps * methods


def _lremh_sizes(entry, rows, width, users, input_mb):
    sample = float(entry.get("sample_fraction", 1.0))
    repeat = _count(entry.get("runs", 1)) * _count(entry.get("subsets", 1)) * _count(entry.get("f", 1))
    return rows * width, int(rows * sample) * width * repeat * _count(entry.get("k", 1))


def _worst_case_sizes(entry, rows, width, users, input_mb):
    """One job draws every mechanism's rows (``job_mechanisms``)."""
    n = _count(entry.get("mc_users", 1))
    return n, n * _count(entry.get("mc_reps", 1)) * _count(entry.get("mc_eps", 1)) * _count(
        entry.get("job_mechanisms", 1)
    )


def _ldpfl_fig4_sizes(entry, rows, width, users, input_mb):
    n = _count(entry.get("users", 1))
    return n, n * _count(entry.get("inputs", 1))


def _audit_sizes(entry, rows, width, users, input_mb):
    """One job audits every family (``job_families``)."""
    n = _count(entry.get("trials", 1))
    return n, n * _count(entry.get("eps", 1)) * _count(entry.get("job_families", 1))


def _synthetic_sizes(entry, rows, width, users, input_mb):
    n = _count(entry.get("size", 1))
    return n, n


def _input_sizes(entry, rows, width, users, input_mb):
    return input_mb, input_mb


def _constant_sizes(entry, rows, width, users, input_mb):
    return 0, 0  # a constant: the measured envelope


#: Every family of the model and its two predictors (module docstring): ``(entry, rows, width,
#: users, input_mb) -> (size, work)``. A kind's jobs are sized as one of these
#: (``ldprepro.experiments.kinds.KindSpec.resource_family``), every other rule's as :data:`RULE_FAMILIES` says.
SIZES: dict[str, Callable] = {
    "figure_job.mean": _monte_carlo_sizes,
    "figure_job.sgd": _sgd_sizes,
    "benchmark_job.mean": _monte_carlo_sizes,
    "benchmark_job.frequency": _monte_carlo_sizes,
    "benchmark_job.sgd": _sgd_sizes,
    "bshp_job": _bshp_sizes,
    "lremh_job": _lremh_sizes,
    "ldpfl_fig1_mechanism": _worst_case_sizes,
    "ldpfl_fig4": _ldpfl_fig4_sizes,
    "audit_family": _audit_sizes,
    "data_synthetic": _synthetic_sizes,
    "data_normalise": _input_sizes,
    "data_fetch": _input_sizes,
    "data_ipums": _constant_sizes,
    "render": _constant_sizes,
    "tables": _constant_sizes,
}
#: The families whose jobs hold their repetitions' rows (:func:`repetitions_held`).
HOLDS_REPETITIONS = ("figure_job.mean", "benchmark_job.mean")


def job_sizes(family: str, entry: dict | None = None, card: tuple[int, int] | None = None, input_mb: float = 0.0):
    """(size, work) of a job of ``family`` (:data:`SIZES`): the model's two predictors.

    ``entry``: the job's config entry (the figure's, with the scale's overrides applied); ``card``:
    (rows, width) of its dataset (:func:`card_size`); ``input_mb``: its input files' size."""
    if family not in SIZES:
        raise ValueError(f"unknown resource family {family!r}; known: {', '.join(SIZES)}")
    entry = entry or {}
    rows, width = card or (0, 1)
    return SIZES[family](entry, rows, width, _users(rows, entry), input_mb)


def repetitions_held(family: str, entry: dict | None = None) -> int:
    """Repetitions × ε × swept settings × mechanisms a mean-estimation job computes and holds (0 for
    the other families): the term of :data:`REP_BYTES` and :data:`REP_SECONDS`."""
    if family not in HOLDS_REPETITIONS:
        return 0
    entry = entry or {}
    return _count(entry.get("eps")) * _mc_reps(entry) * _mechanisms(entry)


# ------------------------------------------------------------------------------------------ rules
#: The shared experiment rules (workflow/rules/experiments.smk; a name ending in "_" is a prefix):
#: a job of one runs a figure of some kind and is sized as that kind's ``resource_family``
#: (ldprepro.experiments.kinds.KindSpec). The one place that says so; :func:`rule_family` reads it.
KIND_RULES = ("figure_job", "panel_job_")
#: The family every other rule is sized as (a name ending in "_" is the prefix of the rules made one
#: per figure, dataset or task; "benchmark_job.*": the family of the task the rule name continues
#: with). Rules not named here declare no resources (targets and local rules). workflow/rules/*.smk
#: declare the same family in each rule's ``res(...)`` (tests/test_resources.py checks they agree);
#: timing/ (the calibration, the CPU accounts) reads it from here.
RULE_FAMILIES: dict[str, str] = {
    "data_fetch": "data_fetch",
    "data_normalise": "data_normalise",
    "data_synthetic": "data_synthetic",
    "data_ipums": "data_ipums",
    "audit_families": "audit_family",
    "benchmark_job_": "benchmark_job.*",
    "bshp_job_": "bshp_job",
    "lremh_job_": "lremh_job",
    "ldpfl_fig1_mechanism": "ldpfl_fig1_mechanism",
    "ldpfl_fig4": "ldpfl_fig4",
    "audit": "render",
    "benchmark_tables": "render",
    "figures_not_available": "render",
    "ldpfl_fig1": "render",
    "figure_": "render",
    "bshp_figure_": "render",
    "lremh_figure_": "render",
    "report_tables": "tables",
    "readme_figures": "tables",
}


def _named(rule: str, names) -> str | None:
    """The entry of ``names`` that names ``rule``: itself, else the longest prefix (ending in "_")."""
    if rule in names:
        return rule
    prefixes = [n for n in names if n.endswith("_") and rule.startswith(n)]
    return max(prefixes, key=len) if prefixes else None


def runs_a_kind(rule: str) -> bool:
    """Whether ``rule`` is one of the shared experiment rules (:data:`KIND_RULES`)."""
    return _named(rule, KIND_RULES) is not None


def rule_family(rule: str, kind_family: str | None = None) -> str | None:
    """The family a job of ``rule`` is sized as, or None for a rule that declares no resources.

    A job of a kind's rule (:data:`KIND_RULES`) is sized as its figure's kind says: pass
    ``kind_family`` (``KINDS[kind].resource_family``); every other rule as :data:`RULE_FAMILIES`."""
    if runs_a_kind(rule):
        if kind_family is None:
            raise ValueError(f"rule {rule!r} runs an experiment kind: its family is the kind's resource_family")
        return kind_family
    name = _named(rule, RULE_FAMILIES)
    if name is None:
        return None
    family = RULE_FAMILIES[name]
    if family.endswith(".*"):  # benchmark_job_<task>_<dataset>: the task's family
        family = family[:-1] + rule[len(name) :].split("_")[0]
    return family


def synthetic_entry(datasets: dict, name: str, scale: str) -> dict:
    """``{"size": rows}`` a data_synthetic job draws: the dataset's ``options.size`` at ``scale``."""
    size = (datasets[name].get("options") or {}).get("size", 0)
    return {"size": size.get(scale, 0) if isinstance(size, dict) else size}


# ------------------------------------------------------------------------------------------ fit
def fit_envelope(points) -> tuple[float, float]:
    """The line a + b·x (a, b ≥ 0) on or above every point (x, y) with the smallest mean height over
    the points' x: an edge of the upper convex hull (the one over the mean x), else the flat line at
    the largest y. Every point lies under it, so declared ≥ measured × the safety factor holds for
    every calibration job by construction; the fit only decides how it extrapolates."""
    pts = sorted({(float(x), float(y)) for x, y in points})
    if not pts:
        raise ValueError("fit_envelope: no points")
    flat = (max(y for _, y in pts), 0.0)
    if len({x for x, _ in pts}) < 2:
        return flat
    hull: list[tuple[float, float]] = []  # upper hull, left to right
    for p in pts:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) >= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    xbar = sum(x for x, _ in pts) / len(pts)
    best = flat
    for (x1, y1), (x2, y2) in zip(hull, hull[1:]):
        if x1 <= xbar <= x2 and x2 > x1:
            b = (y2 - y1) / (x2 - x1)
            a = y1 - b * x1
            if b >= 0 and a >= 0:
                best = (a, b)
            elif b >= 0:  # would go negative left of the data: pivot on the hull's first point
                best = (hull[0][1], max((y - hull[0][1]) / (x - hull[0][0]) for x, y in hull[1:]))
            break
    a, b = best
    assert all(a + b * x >= y - 1e-6 * max(1.0, y) for x, y in pts)
    return a, b


# ------------------------------------------------------------------------------------------ model
class Model:
    """The calibrated lines per family (``timing/resources.json``'s ``model``) and the declaration."""

    def __init__(self, lines: dict, snakemake_rss_mb: float, source: str = "calibration"):
        self.lines = lines
        self.snakemake_rss_mb = float(snakemake_rss_mb)
        self.source = source

    def line(self, family: str):
        """(mem line, time line) of a family, following FALLBACK when it has no measured job."""
        seen = family
        while seen not in self.lines and seen in FALLBACK:
            seen = FALLBACK[seen]
        return self.lines.get(seen)

    def declare(self, family: str, size: float, work: float, attempt: int = 1, repetitions: int = 0) -> tuple[int, int]:
        """(mem_mb, runtime minutes) declared for a job (module docstring), plus what its
        ``repetitions`` (:func:`repetitions_held`) hold and take beyond the calibrated line."""
        attempt = max(1, int(attempt))
        line = self.line(family)
        if line is None:
            mem, minutes = UNCALIBRATED
            return mem * attempt, minutes * attempt
        (am, bm), (at, bt) = line["mem"], line["time"]
        held_mb, held_s = repetitions * REP_BYTES / 1e6, repetitions * REP_SECONDS
        mem = (SAFETY_MEM * (am + bm * size + held_mb) + self.snakemake_rss_mb) * attempt
        minutes = (SAFETY_TIME * (at + bt * work + held_s) / 60.0 + RUNTIME_ALLOWANCE_MIN) * attempt
        return int(math.ceil(mem / 100.0) * 100), int(math.ceil(minutes))


def load_model(path) -> Model:
    """The model part of a calibration file (timing/resources.json), checked."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as err:
        raise ResourceInputError(f"{path}: calibration file missing (run timing/resources_fit.py)") from err
    except json.JSONDecodeError as err:
        raise ResourceInputError(f"{path}: not JSON ({err})") from err
    model = data.get("model")
    if not isinstance(model, dict) or not isinstance(model.get("lines"), dict):
        raise ResourceInputError(f"{path}: key 'model.lines' missing or not a mapping")
    for fam, line in model["lines"].items():
        for key in ("mem", "time"):
            val = line.get(key) if isinstance(line, dict) else None
            if not (
                isinstance(val, list) and len(val) == 2 and all(isinstance(v, (int, float)) and v >= 0 for v in val)
            ):
                raise ResourceInputError(f"{path}: key 'model.lines.{fam}.{key}' must be [a, b] ≥ 0, got {val!r}")
    rss = model.get("snakemake_rss_mb")
    if not isinstance(rss, (int, float)) or rss < 0:
        raise ResourceInputError(f"{path}: key 'model.snakemake_rss_mb' must be MB ≥ 0, got {rss!r}")
    return Model(model["lines"], rss, str(path))


def callables(
    model: Model, family: str, entry: Callable | dict | None = None, card: str | None = None, sized_by_input=False
):
    """``{"mem_mb": f, "runtime": f}`` for a rule's ``resources:``, each
    ``f(wildcards, input, threads, attempt)`` as Snakemake calls resource functions.

    ``family``: the model family, or a callable ``wildcards -> family`` (e.g. by the figure's kind);
    ``entry``: the job's config entry, or a callable ``wildcards -> entry``; ``card``: the name of the
    input holding the dataset's data card; ``sized_by_input``: size the job by ``input.size_mb``."""

    def sizes(wildcards, input):
        fam = family(wildcards) if callable(family) else family
        ent = entry(wildcards) if callable(entry) else entry
        given = getattr(input, card, None) if card else None
        # a job with no card among its inputs (a synthetic benchmark panel: an empty input list) is
        # sized from its config entry alone
        crd = card_size(given) if isinstance(given, str) else None
        input_mb = float(input.size_mb) if sized_by_input else 0.0
        return fam, job_sizes(fam, ent, crd, input_mb), repetitions_held(fam, ent)

    def mem_mb(wildcards, input, threads, attempt):
        fam, (size, work), reps = sizes(wildcards, input)
        return model.declare(fam, size, work, attempt, reps)[0]

    def runtime(wildcards, input, threads, attempt):
        fam, (size, work), reps = sizes(wildcards, input)
        return model.declare(fam, size, work, attempt, reps)[1]

    return {"mem_mb": mem_mb, "runtime": runtime}
