"""Helpers for workflow/rules/data.smk (kept here so the rule file holds only rules)."""

from __future__ import annotations

from ldprepro.data.entries import RAW_ROOT, needed_files

#: where the download jobs record the raw files they verified (their declared outputs)
VERIFIED_ROOT = "data/verified"

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


def verified_inputs(datasets: dict, dataset: str) -> dict[str, str]:
    """{file name: data/verified/<dataset>/<file name>.json}: the download jobs' records of the raw
    files a dataset needs (the raw files themselves are not Snakemake outputs; data.smk)."""
    return {f["name"]: f"{VERIFIED_ROOT}/{dataset}/{f['name']}.json" for f in needed_files(datasets[dataset])}


def raw_paths(dataset: str, names) -> dict[str, str]:
    """{file name: data/raw/<dataset>/<file name>}."""
    return {name: str(RAW_ROOT / dataset / name) for name in names}


def targets(datasets: dict) -> list[str]:
    return [f"data/processed/{d}.{ext}" for d in sorted(datasets) for ext in ("parquet", "json")]
