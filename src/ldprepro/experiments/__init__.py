"""Experiment kinds shared by several papers: mean estimation (``mean``, ``mean_figures``), LDP
stochastic gradient descent (``sgd_figures``), frequency oracles and a mechanism's variance; the
registry and the contract every kind follows are in ``kinds``. A figure names its kind in its config
entry."""
