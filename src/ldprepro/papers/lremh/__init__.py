"""Paper 004: RR-LDP and LREMH joint-distribution estimation; docs/papers/lremh.md."""
