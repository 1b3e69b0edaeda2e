"""Paper 001: histogram publication with bit sampling (BSHP, WSHP); docs/papers/bshp.md."""
