"""Paper 002: Zhao et al., LDP-FedSGD with Three-Outputs, PM-OPT, PM-SUB and HM-TP; docs/papers/ldpfl.md."""
