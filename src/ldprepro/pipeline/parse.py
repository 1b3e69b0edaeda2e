"""Parse-time helpers of the Snakemake workflow (workflow/rules/*.smk).

Everything here runs at every parse of the Snakefile, which on a cluster means once per job, so
this module imports neither numpy nor pandas nor scipy (tests/test_workflow_parse.py checks it).

- figure/experiment entries -> rule parameters (:func:`experiment_params`,
  :func:`experiment_outputs`);
- rerun semantics: :func:`compute_params` strips presentation keys (titles, labels, colours,
  captions) from what a compute job receives, and :func:`code_hash` fingerprints the package
  modules a job's script imports, so editing ``domain/mechanisms/piecewise.py`` reruns the jobs that run it;
- :func:`lock_hint`: what to run when a killed run left Snakemake's lock behind;
- :func:`summary_lines`: the plain "not built, and why" summary printed by ``onsuccess``, for the
  datasets the run's targets use (:func:`run_products`).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import json
import os
import re
from pathlib import Path

LREMH = "lremh"

# Keys of a figure entry (and of its panels / cities / experiments) that only change how results
# are drawn or described. A compute job never receives them, so editing them reruns only rendering.
PRESENTATION_KEYS = frozenset(
    {
        "title",
        "ylabel",
        "xlabel",
        "yscale",
        "xscale",
        "x",
        "caption",
        "label",
        "labels",
        "colour",
        "colours",
        "color",
        "colors",
        "legend",
        "focus_city",
        # a figure's claim declarations: decided when the figure is drawn, they change no computation
        "claims",
    }
)


# ------------------------------------------------------------------------------------------------
# config entries
# ------------------------------------------------------------------------------------------------


def experiment_params(section: dict, name: str, scale: str) -> dict:
    """A paper-004 experiment entry merged with the section's shared settings; ``smoke`` overrides
    (sizes and repetitions only) applied when ``scale == 'smoke'``. The ``converged`` control
    settings are merged key by key (an experiment may narrow the control's ``k``)."""
    shared = {k: v for k, v in section.items() if k != "experiments"}
    entry = dict(section["experiments"][name])
    smoke = dict(entry.pop("smoke", {}))
    out = {**shared, **entry}
    out["converged"] = {**shared.get("converged", {}), **entry.get("converged", {})}
    if scale == "smoke":
        conv_smoke = smoke.pop("converged", {})
        out.update(smoke)
        out["converged"] = {**out["converged"], **conv_smoke}
    out["name"] = name
    return out


def experiment_outputs(exp: dict, role: str, paper: str = LREMH) -> list[str]:
    """The result files an experiment job writes for the figure of its ``role`` (the figure named by
    the experiment's ``<role>_figure``): one per method, ``results/<paper>/<figN>/<experiment>__<method>.parquet``."""
    fig = exp[f"{role}_figure"]
    return [f"results/{paper}/{fig}/{exp['name']}__{m}.parquet" for m in exp["methods"]]


def compute_params(entry):
    """``entry`` without its presentation keys, recursively (lists and nested dicts too)."""
    if isinstance(entry, dict):
        return {k: compute_params(v) for k, v in entry.items() if k not in PRESENTATION_KEYS}
    if isinstance(entry, list):
        return [compute_params(v) for v in entry]
    return entry


# ------------------------------------------------------------------------------------------------
# code fingerprints
# ------------------------------------------------------------------------------------------------


def _package_root() -> Path:
    spec = importlib.util.find_spec("ldprepro")
    return Path(next(iter(spec.submodule_search_locations)))


def _module_file(root: Path, dotted: str) -> Path | None:
    """File of module ``ldprepro.<dotted>`` ('' = the package itself)."""
    base = root.joinpath(*dotted.split(".")) if dotted else root
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _dotted(root: Path, path: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _statements(body: list):
    """Every statement of ``body`` and of the blocks nested in it (function and class bodies, the
    branches of if/for/while/with/try/match), in order. An import is a statement, so this finds
    every import ``ast.walk`` would, without visiting the expressions (most of a module's nodes)."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                yield from _statements(block)
        for part in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
            yield from _statements(part.body)


@functools.cache
def _imports(path: Path, root: Path) -> tuple[Path, ...]:
    """Package files that ``path`` imports directly (absolute ``ldprepro.x`` and relative imports),
    plus the ``__init__.py`` of every package on the way."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    inside = path.is_relative_to(root)
    here = _dotted(root, path) if inside else ""
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    names: set[str] = set()
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if not inside:
                    continue
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                mod = ".".join(base + ([node.module] if node.module else []))
                mod = "ldprepro" + ("." + mod if mod else "")
            else:
                mod = node.module or ""
            names.add(mod)
            names |= {f"{mod}.{a.name}" for a in node.names}  # `from . import x` may name a module
    out = set()
    for name in names:
        if name != "ldprepro" and not name.startswith("ldprepro."):
            continue
        parts = name.split(".")[1:]
        for i in range(len(parts) + 1):  # the package __init__s on the way, then the module
            f = _module_file(root, ".".join(parts[:i]))
            if f is not None:
                out.add(f)
    return tuple(sorted(out))


@functools.cache
def _paper_declarations(root: Path, paper: str) -> dict:
    """A paper folder's ``claims.yaml`` parsed (YAML aliases resolved), {} when there is none."""
    path = root / "papers" / paper / "claims.yaml"
    if not path.is_file():
        return {}
    return load_yaml(path.read_text(encoding="utf-8")) or {}


def _functions(section) -> list[str]:
    """The ``function: "ldprepro.x:name"`` entries of a section of ``claims.yaml``, at any depth."""
    if isinstance(section, dict):
        own = [section["function"]] if isinstance(section.get("function"), str) else []
        return own + [m for v in section.values() for m in _functions(v)]
    if isinstance(section, list):
        return [m for v in section for m in _functions(v)]
    return []


def code_files(script: str | os.PathLike) -> list[Path]:
    """Every file of the ldprepro package that ``script`` imports, transitively."""
    root = _package_root()
    seen: set[Path] = set()
    todo = [Path(script)]
    while todo:
        path = todo.pop()
        for f in _imports(path, root):
            if f not in seen:
                seen.add(f)
                todo.append(f)
    return sorted(seen)


#: package files every job script imports that change no output: the job harness (threads, log,
#: plugin loading, time limit). Left out of :func:`code_hash`, so that an edit of them reruns no job
#: (a rerun of a download that then fails would delete the raw file it was going to replace).
HARNESS = ("pipeline/jobsetup.py",)


@functools.cache
def code_hash(script: str | os.PathLike) -> str:
    """sha256 (16 hex digits) of the package source a script runs: given to the job as a param,
    so that Snakemake reruns it when that code changes (it watches only the script itself).
    The job harness (:data:`HARNESS`) is not part of it."""
    root = _package_root()
    harness = {root / f for f in HARNESS}
    return _files_hash([f for f in code_files(script) if f not in harness], root)


@functools.cache
def module_hash(dotted: str) -> str:
    """sha256 (16 hex digits) of package module ``dotted`` (``ldprepro.papers.lremh.kind``) and of
    what it imports: the part of a job's code a script loads by name (a kind bound to one paper's
    config, ldprepro.experiments.kinds.PAPER_KINDS), which :func:`code_hash` cannot follow."""
    root = _package_root()
    path = _module_file(root, dotted.removeprefix("ldprepro").removeprefix("."))
    if path is None:
        raise ValueError(f"no module {dotted!r} in the ldprepro package")
    return _files_hash(sorted({path, *code_files(path)}), root)


def _files_hash(files, root: Path) -> str:
    """sha256 (16 hex digits) of the package files ``files``: each one's path and bytes, in order."""
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


@functools.cache
def declarations_hash(paper: str, figure: str) -> str:
    """sha256 (16 hex digits) of one figure's claim declarations (its section of
    ``papers/<paper>/claims.yaml``, YAML aliases resolved, comments and layout ignored) and of every
    module (with its imports) that a ``function:`` entry of that section names. A param of the
    figure's rule, which decides its claims: editing a claim reruns that figure's claims step (and
    the tables that collect claims), not the other figures nor anything upstream (the compute jobs).
    A figure without a paper folder or section hashes the empty section."""
    root = _package_root()
    section = _paper_declarations(root, paper).get(figure)
    files: set[Path] = set()
    for module in re.findall(r"^ldprepro\.([\w.]+):", "\n".join(_functions(section)), flags=re.M):
        f = _module_file(root, module)
        if f is not None:
            files |= {f, *code_files(f)}
    h = hashlib.sha256(json.dumps(section, sort_keys=True, ensure_ascii=False, default=str).encode())
    h.update(_files_hash(sorted(files), root).encode())
    return h.hexdigest()[:16]


# ------------------------------------------------------------------------------------------------
# lock and summary messages
# ------------------------------------------------------------------------------------------------


def _processes_here(workdir: Path) -> dict[int, str]:
    """{pid: command line} of the other processes whose working directory is ``workdir`` and that
    run Snakemake or a Snakemake job script (Linux /proc; empty elsewhere)."""
    out = {}
    skip = {os.getpid(), os.getppid()}
    proc = Path("/proc")
    if not proc.is_dir():
        return out
    for d in proc.iterdir():
        if not d.name.isdigit() or int(d.name) in skip:
            continue
        try:
            if Path(os.readlink(d / "cwd")).resolve() != workdir:
                continue
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if "snakemake" in cmd:
            out[int(d.name)] = cmd
    return out


def lock_hint(workdir: str | os.PathLike = ".") -> str | None:
    """None when Snakemake's lock directory is empty; otherwise exactly what to run: wait for the
    running Snakemake, or (after a killed run) stop its orphaned jobs and `snakemake --unlock`."""
    workdir = Path(workdir).resolve()
    locks = workdir / ".snakemake" / "locks"
    if not locks.is_dir() or not any(locks.iterdir()):
        return None
    procs = _processes_here(workdir)
    mains = {p: c for p, c in procs.items() if ".snakemake/scripts" not in c and "--target-jobs" not in c}
    jobs = sorted(set(procs) - set(mains))
    if mains:
        return (
            f"Another Snakemake is running in {workdir} (pid {', '.join(map(str, sorted(mains)))}); "
            "wait for it to finish. Two runs must not build the same files at once."
        )
    msg = f"A previous Snakemake run in {workdir} was killed and left its lock in .snakemake/locks. "
    if jobs:
        msg += f"Its jobs are still running as orphans: first run `kill {' '.join(map(str, jobs))}`, then "
    else:
        msg += "Run "
    return (
        msg
        + "`snakemake --unlock`, then your command again (incomplete files are rebuilt by the profile's rerun-incomplete)."
    )


def run_products(dag) -> set[str] | None:
    """Every file of the jobs in a run's DAG (``workflow.dag`` in ``onsuccess``: the jobs the
    requested targets need, run now or already up to date), or None when the run asked for
    ``rule all`` (everything) or the DAG cannot be read (another Snakemake version): then the
    summary covers every dataset."""
    try:
        if any(job.rule.name == "all" for job in dag.targetjobs):
            return None
        return {str(f) for job in dag.jobs for f in job.output}
    except (AttributeError, TypeError):
        return None


def _needed(figures: list[dict], products: set[str] | None, needs) -> tuple[list[dict], dict[str, str] | None]:
    """The figures among ``products`` (its PNG, which every registered figure has, is built by the
    job that draws it) and the unavailable datasets they and the ``needs`` among ``products`` use;
    (every figure, None) when ``products`` is None."""
    if products is None:
        return figures, None
    drawn = [f for f in figures if f"figures/{f['paper']}/{f['figure']}.png" in products]
    missing: dict[str, str] = {}
    for f in drawn:
        missing.update(f.get("unavailable") or {})
    for product, datasets in needs:
        if product in products:
            missing.update(datasets)
    return drawn, missing


def summary_lines(
    unavailable: dict[str, str], figures: list[dict], products: set[str] | None = None, needs=()
) -> list[str]:
    """The plain closing summary: the unobtainable datasets, why, and what they leave out.

    ``products``: the files of the run (:func:`run_products`); only the datasets that the figures
    among them (their registry entries' ``unavailable``) and the ``needs`` among them ((file,
    {dataset: reason}) pairs for products that are not figures, e.g. the benchmark's tables) use
    are listed. None (``rule all``): every unobtainable dataset."""
    figures, needed = _needed(figures, products, needs)
    if needed is not None:
        unavailable = needed
        if not unavailable:
            return ["ldprepro: built the requested targets (every dataset they use could be obtained)."]
        lines = ["ldprepro: built the requested targets. Datasets they use that are not available here:"]
    elif not unavailable:
        return ["ldprepro: everything configured was built (every dataset could be obtained)."]
    else:
        lines = ["ldprepro: built everything obtainable here. Not built (data not available):"]
    for name, reason in sorted(unavailable.items()):
        lines.append(f"  - {name}: {reason}")
    partial = [f"{f['paper']}/{f['figure']}" for f in figures if f["status"] == "partial"]
    none = [f"{f['paper']}/{f['figure']}" for f in figures if f["status"] == "not reproducible here"]
    if partial:
        lines.append("  Figures drawn with 'not available' panels: " + ", ".join(partial))
    if none:
        lines.append("  Figures with no obtainable panel (every panel 'not available'): " + ", ".join(none))
    lines.append(
        "  (Recorded in results/availability.json; after adding data or a network, run "
        "`snakemake --cores N --config refresh_availability=true`.)"
    )
    return lines


#: the strings Snakemake's ``--config key=value`` leaves as strings that mean a boolean
BOOLEAN_WORDS = {
    "true": True,
    "yes": True,
    "on": True,
    "1": True,
    "false": False,
    "no": False,
    "off": False,
    "0": False,
}


#: what Snakemake writes to its log when the run is interrupted (Ctrl-C, SIGTERM)
INTERRUPTED = "Terminating processes on user request"


def stop_line(logfile: str | os.PathLike | None) -> str:
    """The first line ``onerror`` prints: an interrupted run (Snakemake's log says so) is not
    called an error (issue 54: after Ctrl-C it said "the run stopped with an error")."""
    try:
        text = Path(logfile).read_text(encoding="utf-8", errors="replace") if logfile else ""
    except OSError:
        text = ""
    if INTERRUPTED in text:
        return (
            "ldprepro: the run was interrupted before it finished; run the same command again to finish it "
            "(the outputs it left half written are rebuilt)."
        )
    return "ldprepro: the run stopped with an error (the failing job's log is named above)."


def load_yaml(text: str):
    """``yaml.safe_load(text)`` with libyaml's safe loader when PyYAML has it: the same objects, in
    about a tenth of the time (for the project's own files: the schema, the papers' claims.yaml)."""
    import yaml  # light; Snakemake has already imported it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)  # noqa: S506 (a safe loader)


def command_line_booleans(config: dict, schema_path: str | os.PathLike) -> dict:
    """Read the strings ``true``/``false`` (any case; also yes/no, on/off, 1/0) of the top-level
    boolean keys of the config schema as booleans, in place, before the schema is checked.

    Snakemake's ``--config refresh_availability=true`` passes the string ``'true'`` (only ``True``
    and ``False`` become booleans), so the advice the run prints must be read this way to work as
    printed. Any other string is left alone, for the schema to refuse naming the key."""
    # 0.02 s instead of 0.17 s for the 36 kB schema on every Snakemake start
    schema = load_yaml(Path(schema_path).read_text(encoding="utf-8"))
    for key, spec in (schema.get("properties") or {}).items():
        value = config.get(key)
        if isinstance(spec, dict) and spec.get("type") == "boolean" and isinstance(value, str):
            word = value.strip().lower()
            if word in BOOLEAN_WORDS:
                config[key] = BOOLEAN_WORDS[word]
    return config


def complete_targets(rules, targets: list) -> list:
    """``targets`` plus every other declared output of the rules that build one of them.

    Snakemake reruns a job only for the outputs somebody asks for: a rendering job's summary or
    claims table, deleted, was never rebuilt while its figure stood (the closing ``rule all`` asked
    for figures and captions only). ``rules``: the workflow's rules (outputs with wildcards are
    left to the targets that name them)."""
    wanted = {str(t) for t in targets}
    out = list(targets)
    for rule in rules:
        files = [str(f) for f in rule.output]
        if any("{" in f for f in files) or wanted.isdisjoint(files):
            continue
        extra = [f for f in files if f not in wanted]
        out += extra
        wanted.update(extra)
    return out
