"""Helpers for workflow/rules/data.smk (kept here so the rule file holds only rules)."""

from __future__ import annotations

from ldprepro.data.entries import needed_files

NOT_FILE_KINDS = ("synthetic", "ipums")


def names(datasets: dict, kinds=None, exclude=()) -> list[str]:
    return sorted(n for n, e in datasets.items()
                  if (kinds is None or e["kind"] in kinds) and e["kind"] not in exclude)


def alternation(names_: list[str]) -> str:
    """A regex matching exactly these names (nothing when the list is empty)."""
    return "|".join(names_) if names_ else "(?!x)x"


def constraint(datasets: dict, group: str) -> str:
    """Wildcard constraint for the datasets a rule builds: 'files', 'synthetic' or 'ipums'."""
    if group == "files":
        return alternation(names(datasets, exclude=NOT_FILE_KINDS))
    return alternation(names(datasets, kinds=(group,)))


def raw_inputs(datasets: dict, dataset: str) -> dict[str, str]:
    """{file name: data/raw/<dataset>/<file name>} of the files a dataset needs."""
    return {f["name"]: f"data/raw/{dataset}/{f['name']}" for f in needed_files(datasets[dataset])}


def targets(datasets: dict) -> list[str]:
    return [f"data/processed/{d}.{ext}" for d in sorted(datasets) for ext in ("parquet", "json")]
