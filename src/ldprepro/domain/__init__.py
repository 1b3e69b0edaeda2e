"""The LDP domain: what the papers define, with no data frames, plots or paper keys.

- ``mechanisms``: numeric LDP mechanisms (Laplace, Duchi, Harmony, PM, HM, Three-Outputs, PM-OPT,
  PM-SUB, HM-TP, DCT), discretisation, multidimensional wrappers, their exact privacy loss;
- ``frequency``: frequency oracles (GRR, unary encoding, RAPPOR-style randomised response);
- ``graded`` and ``graded_sgd``: graded (hierarchical) LDP of paper 000 (graded Laplace, LHP, PLC, HierA);
- ``histograms``: bit-sampling histogram publication of paper 001 (BSHP, WSHP);
- ``joint``: RR-LDP joint-distribution estimation of paper 004 (EM, LREMH);
- ``sgd``: LDP stochastic gradient descent (Zhao et al., Algorithm 1; its models, collectors and
  the bridge to the compiled steps in ``sgd_models``, ``sgd_collectors``, ``sgd_compiled``);
- ``sufficient``, ``binary_sum`` and ``uniform_sum``: exact samplers of sufficient statistics (sums of
  Laplace noise, of ±C reports, of PM's and DCT's uniform-mixture reports); ``random_bits``: the
  random bytes and bits those samplers and Duchi's mean reports draw instead of uniforms;
  ``ties``: identical output laws.

Imports only numpy, scipy and numba (tests/test_layout.py checks it)."""
