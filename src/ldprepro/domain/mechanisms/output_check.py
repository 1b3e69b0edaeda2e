"""A mechanism's outputs checked before they reach a result: one finite float per input, else an
error naming the mechanism (built-in or plugin: its registered name, class and file) and what to fix.
``Mechanism.perturb`` calls :func:`check_output` on a block whose outputs are not plainly valid; the
law checks (``law_check``) name mechanisms with :func:`describe`. Knows no mechanism class, so the
base class can use it without importing the law checks (which import the base class)."""

from __future__ import annotations

import inspect

import numpy as np


class MechanismOutputError(ValueError):
    """``perturb`` returned something that is not one finite float per input."""


def describe(mech) -> str:
    """'name' (class C in file F): how an error names a mechanism, built-in or plugin."""
    name = getattr(mech, "registered_name", None) or getattr(mech, "name", "mechanism")
    cls = type(mech)
    try:
        where = inspect.getsourcefile(cls) or cls.__module__
    except TypeError:
        where = cls.__module__
    return f"mechanism {name!r} (class {cls.__qualname__} in {where})"


def check_output(mech, x: np.ndarray, y) -> np.ndarray:
    """``y`` as a float array if it is one finite value per entry of ``x``, else
    :class:`MechanismOutputError` naming the mechanism, what it returned and what to fix."""
    x = np.asarray(x)
    try:
        arr = np.asarray(y, dtype=float)
    except (TypeError, ValueError) as exc:
        raise MechanismOutputError(
            f"{describe(mech)}: perturb returned {type(y).__name__}, not an array of floats ({exc}); "
            "it must return one float per input, in the input's shape"
        ) from None
    if arr.shape != x.shape:
        raise MechanismOutputError(
            f"{describe(mech)}: perturb returned shape {arr.shape} for input of shape {x.shape}; "
            "it must return one output per input, in the input's shape"
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad.ravel())[0])
        raise MechanismOutputError(
            f"{describe(mech)}: perturb returned {float(arr.ravel()[i])!r} for input {float(x.ravel()[i])!r} "
            f"({int(bad.sum())} of {arr.size} outputs not finite); every output must be a finite number"
        )
    return arr
