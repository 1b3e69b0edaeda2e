"""The workflow pins numpy's and OpenBLAS's kernels to the AVX2 level (pipeline/float_kernels.py),
so the same config and seed give the same bytes on processors with and without AVX-512: the smoke
claims' reference (tests/test_pipeline_smoke.py) was recorded on an AVX2 processor and differs in
the last digits of LREMH's and WSHP's EM claims when an AVX-512 one runs its own kernels."""

from __future__ import annotations

import subprocess
import sys

from ldprepro.pipeline import float_kernels
from ldprepro.pipeline.float_kernels import OPT_OUT, pin_float_kernels, pinned_kernels

AVX512 = {"AVX2": True, "FMA3": True, "X86_V3": True, "X86_V4": True, "AVX512_ICL": True, "AVX512_SPR": False}
DISPATCH_2X = ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]  # numpy 2.4's names
DISPATCH_126 = ["SSE41", "AVX2", "AVX512F", "AVX512_SKX", "AVX512_ICL"]  # numpy 1.26's


def test_avx512_targets_this_processor_has_are_disabled_and_openblas_pinned():
    assert pinned_kernels(AVX512, DISPATCH_2X) == {
        "OPENBLAS_CORETYPE": "Haswell",
        "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL",  # not AVX512_SPR: this processor lacks it
    }
    old = {"AVX2": True, "FMA3": True, "AVX512F": True, "AVX512_SKX": True, "AVX512_ICL": False}
    assert pinned_kernels(old, DISPATCH_126)["NPY_DISABLE_CPU_FEATURES"] == "AVX512F AVX512_SKX"


def test_an_avx2_processor_pins_openblas_only_and_an_older_one_nothing():
    avx2 = {"AVX2": True, "FMA3": True, "X86_V3": True, "X86_V4": False}
    assert pinned_kernels(avx2, DISPATCH_2X) == {"OPENBLAS_CORETYPE": "Haswell"}
    assert pinned_kernels({"AVX2": False, "FMA3": False}, DISPATCH_2X) == {}
    assert pinned_kernels({"ASIMD": True}, ["ASIMDHP"]) == {}  # not x86


def test_set_variables_are_kept_and_the_opt_out_pins_nothing(monkeypatch):
    monkeypatch.setattr(float_kernels, "_numpy_cpu", lambda: (AVX512, DISPATCH_2X))
    env = {"OPENBLAS_CORETYPE": "Zen"}
    assert pin_float_kernels(env) == {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL"}
    assert env == {"OPENBLAS_CORETYPE": "Zen", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL"}
    assert pin_float_kernels({OPT_OUT: "1"}) == {}


def test_a_process_started_after_pinning_runs_the_avx2_kernels():
    """On this machine: the variables reach a child process and numpy and OpenBLAS take them."""
    env = {}
    pin_float_kernels(env)
    probe = (
        "import numpy, sys; from numpy._core import _multiarray_umath as u;"
        "print(' '.join(t for t in u.__cpu_dispatch__ if u.__cpu_features__.get(t)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], env={**_base_env(), **env}, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "X86_V4" not in out.stdout.split() and not any(t.startswith("AVX512") for t in out.stdout.split())
    if "OPENBLAS_CORETYPE" in env:
        code = "import numpy, threadpoolctl; print(threadpoolctl.threadpool_info()[0].get('architecture'))"
        arch = subprocess.run([sys.executable, "-c", code], env={**_base_env(), **env}, capture_output=True, text=True)
        assert arch.stdout.strip() == "Haswell", (arch.stdout, arch.stderr)


def _base_env() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")}
