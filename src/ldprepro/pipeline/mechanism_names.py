"""Parse-time check of the mechanism names in config.yaml against the mechanism registry.

The config schema only says that a mechanism is a string: which names exist depends on the
registry, which the user's ``mechanism_plugins`` extend. The workflow (workflow/rules/common.smk)
calls :func:`registered_mechanisms` once the config is loaded, then :func:`check_config_mechanisms`,
so a typo or a plugin missing from ``mechanism_plugins`` stops the run at load time with the config
key, the name and what to do, before any job runs.

Without plugins nothing heavy is imported (this module runs at every parse; see
ldprepro.pipeline.parse): the built-in names are listed here, and tests/test_workflow_parse.py
checks that they are the ones ``ldprepro.domain.mechanisms`` registers, and that the experiment
names below are those of ``ldprepro.experiments.mean`` and ``ldprepro.domain.graded_sgd``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

#: the built-in 1-D mechanisms, in the order ``ldprepro.domain.mechanisms`` registers them
BUILTIN_MECHANISMS = ("laplace", "duchi", "harmony", "pm", "hm", "three_outputs", "pm_opt", "pm_sub", "hm_tp", "dct")
#: mean estimators that are not "a 1-D mechanism, then the average" (``experiments.mean.ESTIMATORS``)
MEAN_ESTIMATORS = ("hiera", "graded_laplace", "harmony_at_level", "pm_at_level")
#: the non-private reference curve of an LDP-SGD figure
NON_PRIVATE = "non_private"
#: what the graded collector runs (``collector: graded``; ``domain.graded_sgd.GRADED_SGD_MECHANISMS``)
GRADED_SGD = ("hiera", "graded_laplace", "harmony", "pm", "harmony_at_level", "pm_at_level")
#: the sections whose `figN` entries with `kind: mean | sgd` are experiment figures
#: (workflow/rules/experiments.smk); `experiments` (a user's own) and each paper under `papers` too,
#: where the configuration has them
EXPERIMENT_PAPERS = ("hiera", "ldpfl", "dct", "experiments")


def registered_mechanisms(plugins: Iterable[str] | None) -> list[str]:
    """Names of every registered 1-D mechanism: the built-in ones and, when ``plugins`` (config.yaml
    ``mechanism_plugins``) lists any, those its modules register. Only then is the registry (and
    numpy) imported, and the plugins with it: a plugin that cannot be imported stops the parse with
    ``PluginError`` naming it."""
    if not plugins:
        return list(BUILTIN_MECHANISMS)
    # imported by name, like jobsetup's plugin loading: kept out of the static imports
    mechanisms = importlib.import_module("ldprepro.domain.mechanisms")  # registers the built-in ones
    mechanisms.load_plugins(list(plugins))
    return list(mechanisms.MECHANISMS)


def _unknown(name: str, key: str, known: Iterable[str]) -> str:
    return (
        f"config.yaml: unknown mechanism {name!r} in {key}: register it under mechanism_plugins "
        f"(known: {', '.join(known)})"
    )


def _names(value) -> list:
    return list(value) if isinstance(value, list) else []


def mechanism_problems(config: dict, registered: Iterable[str]) -> list[str]:
    """One message per mechanism name of ``config`` that the key it is under cannot run:

    - ``ldpfl.fig1.mechanisms``, every ``discretize_mechanisms`` and ``benchmark.mechanisms``: the
      registered 1-D mechanisms;
    - a mean figure's ``mechanisms`` and ``sweep_mechanisms``: those, plus paper 000's estimators
      (:data:`MEAN_ESTIMATORS`);
    - an SGD figure's ``mechanisms``: the registered ones and ``non_private`` (``collector:
      multidim``, the default), or :data:`GRADED_SGD` and ``non_private`` (``collector: graded``).
    """
    registered = list(registered)
    out = []

    def check(key: str, names, known) -> None:
        for name in _names(names):
            if name not in known:
                out.append(_unknown(name, key, known))

    fig1 = (config.get("ldpfl") or {}).get("fig1")
    if isinstance(fig1, dict):
        check("ldpfl.fig1.mechanisms", fig1.get("mechanisms"), registered)
    sections = [(paper, config.get(paper)) for paper in EXPERIMENT_PAPERS]
    sections += [(f"papers.{paper}", entries) for paper, entries in (config.get("papers") or {}).items()]
    for prefix, entries in sections:
        for fig, entry in (entries if isinstance(entries, dict) else {}).items():
            if not isinstance(entry, dict) or entry.get("kind") not in ("mean", "sgd"):
                continue
            key = f"{prefix}.{fig}"
            check(f"{key}.discretize_mechanisms", entry.get("discretize_mechanisms"), registered)
            if entry["kind"] == "mean":
                check(f"{key}.mechanisms", entry.get("mechanisms"), registered + list(MEAN_ESTIMATORS))
                check(f"{key}.sweep_mechanisms", entry.get("sweep_mechanisms"), registered + list(MEAN_ESTIMATORS))
            elif entry.get("collector") == "graded":
                graded = [*GRADED_SGD, NON_PRIVATE]
                for name in _names(entry.get("mechanisms")):
                    if name not in graded:
                        out.append(
                            f"config.yaml: mechanism {name!r} in {key}.mechanisms: the graded collector "
                            f"(collector: graded) runs only {', '.join(graded)}; a registered 1-D "
                            "mechanism runs in an SGD figure with collector: multidim (the default)"
                        )
            else:
                for name in _names(entry.get("mechanisms")):
                    if name in MEAN_ESTIMATORS and name not in registered:
                        out.append(
                            f"config.yaml: mechanism {name!r} in {key}.mechanisms runs only with "
                            "collector: graded (paper 000's graded collection)"
                        )
                    elif name not in registered and name != NON_PRIVATE:
                        out.append(_unknown(name, f"{key}.mechanisms", [*registered, NON_PRIVATE]))
    bench = config.get("benchmark") or {}
    check("benchmark.mechanisms", bench.get("mechanisms"), registered)  # "all" is not a list
    return out


def check_config_mechanisms(config: dict, registered: Iterable[str]) -> None:
    """Raise ValueError listing every problem of :func:`mechanism_problems`, if any."""
    problems = mechanism_problems(config, registered)
    if problems:
        raise ValueError("\n".join(problems))
