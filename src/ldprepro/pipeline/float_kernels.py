"""The same floating-point results on every x86-64 processor with AVX2.

numpy and OpenBLAS choose their vector kernels when they load, by the processor: on one with
AVX-512, numpy's ``log``/``exp``/reductions and OpenBLAS's ``gemv`` run kernels that round
differently in the last bit from the AVX2 ones. The EM iterations of LREMH and WSHP then differ
after ~1e-14, and so do the claims built on them. Same config + seed ⇒ byte-identical outputs
must hold on whatever machine a run lands on (a laptop, a cluster node, CI), so the workflow pins
the kernels, for the jobs it starts, to the AVX2 level every such machine has:

* ``OPENBLAS_CORETYPE=Haswell`` (OpenBLAS's AVX2 + FMA kernels);
* ``NPY_DISABLE_CPU_FEATURES`` = numpy's dispatch targets above AVX2 that this processor has
  (``X86_V4``, ``AVX512_*``; named as the installed numpy names them).

A variable already set is left as it is; ``LDPREPRO_NATIVE_KERNELS=1`` turns the pinning off (faster on
some processors, reproducible only on the same kind of processor). On a processor without AVX2 or
FMA, or not x86, nothing is pinned. The cost on an AVX-512 processor: the jobs' vector loops run at
AVX2 width (the sampling loops are numba's and unaffected).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

#: set to "1" to keep numpy's and OpenBLAS's own choice of kernels
OPT_OUT = "LDPREPRO_NATIVE_KERNELS"


def _numpy_cpu() -> tuple[dict, list]:
    """numpy's (features of this processor, dispatch targets it was built with)."""
    try:
        from numpy._core import _multiarray_umath as umath  # numpy ≥ 2
    except ImportError:  # numpy 1.26
        from numpy.core import _multiarray_umath as umath
    return dict(umath.__cpu_features__), list(umath.__cpu_dispatch__)


def pinned_kernels(features: dict, dispatch: list) -> dict[str, str]:
    """The environment that pins the AVX2 kernels, from numpy's CPU features and dispatch targets;
    empty where the processor has no AVX2 + FMA (not x86-64, or an older one)."""
    if not (features.get("AVX2") and features.get("FMA3")):
        return {}
    wider = [t for t in dispatch if features.get(t) and (t == "X86_V4" or t.startswith("AVX512"))]
    env = {"OPENBLAS_CORETYPE": "Haswell"}
    if wider:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(wider)
    return env


def pin_float_kernels(environ: MutableMapping[str, str] = os.environ) -> dict[str, str]:
    """Set the pinning variables in ``environ`` (default: this process's environment, which the
    jobs inherit) unless opted out; a variable already set is kept. Returns what was set.

    numpy and OpenBLAS read these when they load, so they act on processes started after this call
    (the jobs), not on this one."""
    if environ.get(OPT_OUT) == "1":
        return {}
    added = {k: v for k, v in pinned_kernels(*_numpy_cpu()).items() if k not in environ}
    environ.update(added)
    return added
