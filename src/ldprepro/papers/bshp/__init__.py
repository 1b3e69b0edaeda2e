"""Paper 001: histogram publication with bit sampling (BSHP, WSHP); docs/papers/bshp.md.

``runs`` (one job's rows), ``figure_data`` (a figure's results indexed for the claims), ``points``
(the claim functions), ``claims`` (the declared claims and their verdicts), ``plots`` (Figs. 1–5)."""
