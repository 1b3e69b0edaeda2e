"""Data layer: download, verify and normalise every dataset of the five papers (issue 3).

- :mod:`.fetch`: user path / local mirror / network, sha256 verification, lock files.
- :mod:`.readers`: one reader per source format (UCI Adult, NLTCS, LoPub, salaries, Vehicle,
  WISDM, IPUMS, generic CSV/parquet).
- :mod:`.table`: typed columns with declared domains, validation, the data card.
- :mod:`.synthetic`: the papers' synthetic generators.
- :mod:`.transform`: [-1, 1] mapping and the papers' categorical encodings (called by experiments).

The names below are imported lazily (PEP 562), so that the workflow's parse-time helpers
(:mod:`.entries`, :mod:`.availability`, :mod:`.workflow`) do not pull in pandas.
"""

__all__ = ["complete_cases", "domains", "from_unit", "k_minus_1", "load", "one_hot",
           "ordinal_codes", "to_unit", "unit_table"]


def __getattr__(name):
    if name in __all__:
        from ldprepro.data import transform

        return getattr(transform, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
