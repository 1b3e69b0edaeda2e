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
import sys
from collections.abc import Callable, Iterable

#: the built-in 1-D mechanisms, in the order ``ldprepro.domain.mechanisms`` registers them
BUILTIN_MECHANISMS = ("laplace", "duchi", "harmony", "pm", "hm", "three_outputs", "pm_opt", "pm_sub", "hm_tp", "dct")
#: mean estimators that are not "a 1-D mechanism, then the average" (``experiments.mean.ESTIMATORS``)
MEAN_ESTIMATORS = ("hiera", "graded_laplace", "harmony_at_level", "pm_at_level")
#: the non-private reference curve of an LDP-SGD figure
NON_PRIVATE = "non_private"
#: what the graded collector runs (``collector: graded``; ``domain.graded_sgd.GRADED_SGD_MECHANISMS``)
GRADED_SGD = ("hiera", "graded_laplace", "harmony", "pm", "harmony_at_level", "pm_at_level")
#: the frequency oracles a ``kind: frequency`` figure runs (``ldprepro.domain.frequency.EPS_ORACLES``)
FREQUENCY_ORACLES = ("grr", "sue", "oue", "olh", "blh", "ss", "hr")
#: the collectors a ``kind: histogram`` figure runs (``ldprepro.experiments.histograms.COLLECTORS``)
BUILTIN_COLLECTORS = ("split_baseline", "bshp", "wshp")
#: the sections whose `figN` entries with an experiment `kind` are experiment figures
#: (workflow/rules/experiments.smk); `experiments` (a user's own) and each paper under `papers` too,
#: where the configuration has them
EXPERIMENT_PAPERS = ("hiera", "ldpfl", "dct", "experiments", "bshp")


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


def registered_collectors() -> list[str]:
    """The histogram collectors: the built-in ones and, when a mechanism plugin has registered
    more (it imported ldprepro.experiments.histograms), those too; nothing heavy is imported here."""
    module = sys.modules.get("ldprepro.experiments.histograms")
    return list(module.COLLECTORS) if module is not None else list(BUILTIN_COLLECTORS)


def _config_yaml(key: str) -> str:
    return "config.yaml"


def _unknown(name: str, key: str, known: Iterable[str], origin: Callable[[str], str] = _config_yaml) -> str:
    """The message for a name ``key`` cannot run: what the name is when it is known elsewhere (a
    frequency oracle in a mean figure, a 1-D mechanism in a frequency figure), else unknown."""
    if name in FREQUENCY_ORACLES:
        return (
            f"{origin(key)}: {name} in {key} is a frequency oracle: use kind: frequency "
            "(a figure of frequency oracles; docs/extending.md, 'Adding a paper')"
        )
    if tuple(known) == FREQUENCY_ORACLES:  # a name of the frequency kind's list
        return (
            f"{origin(key)}: {name} in {key} is a 1-D mechanism for numeric values, not a frequency oracle: "
            f"use kind: mean or kind: variance (frequency oracles: {', '.join(FREQUENCY_ORACLES)})"
        )
    return (
        f"{origin(key)}: unknown mechanism {name!r} in {key}: register it under mechanism_plugins "
        f"(known: {', '.join(known)})"
    )


def _names(value) -> list:
    return list(value) if isinstance(value, list) else []


def mechanism_problems(
    config: dict, registered: Iterable[str], origin: Callable[[str], str] = _config_yaml
) -> list[str]:
    """One message per mechanism name of ``config`` that the key it is under cannot run, naming the
    file the key came from (``origin``: dotted key -> file, ldprepro.pipeline.config_origin):

    - ``ldpfl.fig1.mechanisms``, every ``discretize_mechanisms`` and ``benchmark.mechanisms``: the
      registered 1-D mechanisms;
    - a mean figure's ``mechanisms`` and ``sweep_mechanisms``: those, plus paper 000's estimators
      (:data:`MEAN_ESTIMATORS`);
    - an SGD figure's ``mechanisms``: the registered ones and ``non_private`` (``collector:
      multidim``, the default), or :data:`GRADED_SGD` and ``non_private`` (``collector: graded``);
    - a frequency figure's ``mechanisms``: :data:`FREQUENCY_ORACLES`; a variance figure's: the
      registered 1-D mechanisms; a histogram figure's: the collectors (:func:`registered_collectors`).

    A frequency oracle named where a mechanism is expected (or the reverse) is told which kind runs it.
    """
    registered = list(registered)
    out = []

    def check(key: str, names, known) -> None:
        for name in _names(names):
            if name not in known:
                out.append(_unknown(name, key, known, origin))

    fig1 = (config.get("ldpfl") or {}).get("fig1")
    if isinstance(fig1, dict):
        check("ldpfl.fig1.mechanisms", fig1.get("mechanisms"), registered)
    sections = [(paper, config.get(paper)) for paper in EXPERIMENT_PAPERS]
    sections += [(f"papers.{paper}", entries) for paper, entries in (config.get("papers") or {}).items()]
    for prefix, entries in sections:
        for fig, entry in (entries if isinstance(entries, dict) else {}).items():
            if not isinstance(entry, dict) or entry.get("kind") not in (
                "mean",
                "sgd",
                "frequency",
                "variance",
                "histogram",
            ):
                continue
            key = f"{prefix}.{fig}"
            if entry["kind"] == "histogram":
                known = registered_collectors()
                out += [
                    f"{origin(key)}: unknown histogram collector {name!r} in {key}.mechanisms (known: "
                    f"{', '.join(known)}; a module of mechanism_plugins may register more: "
                    "ldprepro.experiments.histograms.register_collector)"
                    for name in _names(entry.get("mechanisms"))
                    if name not in known
                ]
                continue
            check(f"{key}.discretize_mechanisms", entry.get("discretize_mechanisms"), registered)
            if entry["kind"] == "frequency":
                for name in _names(entry.get("mechanisms")):
                    if name in FREQUENCY_ORACLES:
                        continue
                    if name in registered or name in MEAN_ESTIMATORS:
                        out.append(_unknown(name, f"{key}.mechanisms", FREQUENCY_ORACLES, origin))
                    else:
                        out.append(
                            f"{origin(key)}: unknown frequency oracle {name!r} in {key}.mechanisms "
                            f"(known: {', '.join(FREQUENCY_ORACLES)})"
                        )
            elif entry["kind"] == "variance":
                check(f"{key}.mechanisms", entry.get("mechanisms"), registered)
            elif entry["kind"] == "mean":
                check(f"{key}.mechanisms", entry.get("mechanisms"), registered + list(MEAN_ESTIMATORS))
                check(f"{key}.sweep_mechanisms", entry.get("sweep_mechanisms"), registered + list(MEAN_ESTIMATORS))
            elif entry.get("collector") == "graded":
                graded = [*GRADED_SGD, NON_PRIVATE]
                for name in _names(entry.get("mechanisms")):
                    if name not in graded:
                        out.append(
                            f"{origin(key)}: mechanism {name!r} in {key}.mechanisms: the graded collector "
                            f"(collector: graded) runs only {', '.join(graded)}; a registered 1-D "
                            "mechanism runs in an SGD figure with collector: multidim (the default)"
                        )
            else:
                for name in _names(entry.get("mechanisms")):
                    if name in MEAN_ESTIMATORS and name not in registered:
                        out.append(
                            f"{origin(key)}: mechanism {name!r} in {key}.mechanisms runs only with "
                            "collector: graded (paper 000's graded collection)"
                        )
                    elif name not in registered and name != NON_PRIVATE:
                        out.append(_unknown(name, f"{key}.mechanisms", [*registered, NON_PRIVATE], origin))
    bench = config.get("benchmark") or {}
    check("benchmark.mechanisms", bench.get("mechanisms"), registered)  # "all" is not a list
    return out


def check_config_mechanisms(
    config: dict, registered: Iterable[str], origin: Callable[[str], str] = _config_yaml
) -> None:
    """Raise ValueError listing every problem of :func:`mechanism_problems`, if any."""
    problems = mechanism_problems(config, registered, origin)
    if problems:
        raise ValueError("\n".join(problems))
