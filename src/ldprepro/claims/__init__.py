"""The claim engine: statistical tests, claim records, the declarations of the papers' claims and
the one dispatcher that decides them for every figure (docs/verdicts-standard.md)."""
