"""Data layer: download, verify and normalise every dataset of the five papers (issue 3).

- :mod:`.fetch`: user path / local mirror / network, sha256 verification, lock files.
- :mod:`.readers`: one reader per source format (UCI Adult, NLTCS, LoPub, salaries, Vehicle,
  WISDM, IPUMS, generic CSV/parquet).
- :mod:`.table`: typed columns with declared domains, validation, the data card.
- :mod:`.synthetic`: the papers' synthetic generators.
- :mod:`.transform`: [-1, 1] mapping and the papers' categorical encodings (called by experiments).
"""

from .transform import (complete_cases, domains, from_unit, k_minus_1, load, one_hot,
                        ordinal_codes, to_unit, unit_table)

__all__ = ["complete_cases", "domains", "from_unit", "k_minus_1", "load", "one_hot",
           "ordinal_codes", "to_unit", "unit_table"]
