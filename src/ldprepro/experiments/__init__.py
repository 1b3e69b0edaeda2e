"""Experiment kinds shared by several papers: mean estimation (``mean``, ``mean_figures``) and LDP
stochastic gradient descent (``sgd_figures``). A paper's figure names its kind in config.yaml."""
