"""Paper 000: HierA, hierarchical aggregation under graded LDP (Hao, Wu, Wan, Sensors 2023); docs/papers/hiera.md."""
