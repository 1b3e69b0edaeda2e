"""ldprepro: reproducible local differential privacy (LDP) research pipeline.

Subpackages:
- ``ldprepro.domain.mechanisms``: numeric LDP mechanisms (Laplace, Duchi, Harmony, PM, HM, Three-Outputs,
  PM-OPT, PM-SUB, HM-TP, DCT), discretisation and multidimensional wrappers.
- ``ldprepro.domain.frequency``: frequency oracles (GRR, unary encoding, RAPPOR-style RR).
- ``ldprepro.domain.graded``: graded/hierarchical LDP of paper 000 (graded Laplace, LHP, PLC, HierA).
- ``ldprepro.pipeline.seeding``: deterministic random streams keyed by job parameters.
"""

__version__ = "0.1.0"
