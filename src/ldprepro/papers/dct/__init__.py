"""Paper 003: DCT, classified-transformation perturbation (Zhu, Wang, Sun); docs/papers/dct.md."""
