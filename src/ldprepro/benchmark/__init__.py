"""The cross-paper benchmark (issue 18): every registered mechanism on every dataset we can obtain,
at one shared ε grid, under common random numbers, with its exact privacy loss beside it.

- :mod:`.runs`: one job = one task × dataset (all mechanisms, ε and repetitions inside);
- :mod:`.privacy`: exact privacy loss of each (mechanism, ε), and the audit's empirical bound;
- :mod:`.winners`: the best mechanism per cell from paired tests with Holm correction;
- :mod:`.plots`, :mod:`.tables`: the winner map, ratio-to-best figure and generated table.

Tasks: ``mean`` (MSE of the mean; 1-D mechanisms for one column, the papers' multidimensional
collections for several), ``frequency`` (MSE of the frequency vector, GRR / SUE / OUE) and ``sgd``
(LDP-SGD's test metric, Zhao et al. Alg. 4, on shared cross-validation folds).
"""

TASKS = ("mean", "frequency", "sgd")
