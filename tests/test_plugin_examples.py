"""The two example plugins of docs/extending.md ("Adding a mechanism"): the page shows the files
tests/plugins/binary_rr.py and tests/plugins/sech_noise.py verbatim, they import only the public API
``ldprepro.mechanisms``, and each one loads, passes ``check_mechanism`` and has exactly the law its
docstring states (unbiased, the closed-form variance, total probability 1, exact loss ≤ ε)."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate

from ldprepro.domain.mechanisms.registry import unregister_mechanism
from ldprepro.mechanisms import check_mechanism, get_mechanism, load_plugins

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = Path(__file__).parent / "plugins"
EXAMPLES = {"binary_rr": PLUGINS / "binary_rr.py", "sech_noise": PLUGINS / "sech_noise.py"}
DOC = ROOT / "docs" / "extending.md"
#: the contract checker's default grid, where the laws are checked exactly too
EPS = (0.5, 1.0, 4.0)
XS = np.linspace(-1.0, 1.0, 41)


@pytest.fixture(scope="module")
def examples():
    names = load_plugins([str(p) for p in EXAMPLES.values()])
    assert names == list(EXAMPLES)
    yield names
    for n in names:
        unregister_mechanism(n)


def test_the_docs_show_the_example_files_verbatim():
    blocks = dict(re.findall(r"<!-- file: (\S+) -->\n```python\n(.*?)```", DOC.read_text(), re.DOTALL))
    assert sorted(blocks) == sorted(str(p.relative_to(ROOT)) for p in EXAMPLES.values())
    for path, code in blocks.items():
        assert code == (ROOT / path).read_text(), f"docs/extending.md's block for {path} differs from the file"


@pytest.mark.parametrize("path", EXAMPLES.values(), ids=list(EXAMPLES))
def test_examples_import_only_the_public_api(path):
    tree = ast.parse(path.read_text())
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    ours = {m for m in modules if m.split(".")[0] == "ldprepro"}
    assert ours == {"ldprepro.mechanisms"}, ours


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_examples_pass_the_contract_checker(examples, name):
    report = check_mechanism(name)
    assert report.ok, str(report)
    assert len(report.checked) > 40


@pytest.mark.parametrize("eps", EPS)
def test_binary_rr_law_is_exact(examples, eps):
    m = get_mechanism("binary_rr", eps)
    assert m.discrete and not m.continuous
    c = (math.exp(eps) + 1) / (math.exp(eps) - 1)
    assert np.allclose(m.support(), [-c, c], rtol=1e-14, atol=0)
    p = m.pmf(XS)
    assert p.shape == (XS.size, 2) and (p >= 0).all()
    assert np.allclose(p.sum(axis=1), 1.0, rtol=0, atol=4e-16)
    assert np.allclose(p @ m.support(), XS, rtol=0, atol=1e-14)  # unbiased
    second = (p * (m.support()[None, :] - XS[:, None]) ** 2).sum(axis=1)
    assert np.allclose(second, c**2 - XS**2, rtol=1e-13, atol=0)  # Var = C² − x²
    assert np.allclose(m.variance(XS), c**2 - XS**2, rtol=1e-13, atol=0)
    assert m.worst_case_variance() == pytest.approx(c**2, rel=1e-14)
    loss = float((np.log(p).max(axis=0) - np.log(p).min(axis=0)).max())
    assert loss == pytest.approx(eps, rel=1e-12)  # ≤ ε, and attained at x = ±1
    assert loss <= eps * (1 + 1e-12)


def _moment(m, x: float, k: int, centre: float = 0.0) -> float:
    """∫ (y − centre)^k pdf(y | x) dy over the real line, split at the density's peak x."""

    def f(y):
        return (y - centre) ** k * m.pdf(y, x)

    return sum(
        integrate.quad(f, a, b, epsabs=1e-14, epsrel=1e-12, limit=200)[0] for a, b in [(-np.inf, x), (x, np.inf)]
    )


@pytest.mark.parametrize("eps", EPS)
def test_sech_noise_law_is_exact(examples, eps):
    m = get_mechanism("sech_noise", eps)
    assert m.continuous and not m.discrete and len(m.support()) == 0
    var = math.pi**2 / eps**2
    for x in (-1.0, 0.0, 0.6, 1.0):
        assert _moment(m, x, 0) == pytest.approx(1.0, abs=1e-12)  # total probability
        assert _moment(m, x, 1) == pytest.approx(x, abs=1e-12)  # unbiased
        assert _moment(m, x, 2, centre=x) == pytest.approx(var, rel=1e-12)  # Var = π²/ε²
    assert np.allclose(m.variance(XS), var, rtol=1e-15) and m.worst_case_variance() == pytest.approx(var, rel=1e-15)
    # the log-density ratio of inputs 2 apart is below ε everywhere and tends to ε in the tails
    ys = np.linspace(-1 - 40 / eps, 1 + 40 / eps, 4001)
    gap = m.logpdf(ys, 1.0) - m.logpdf(ys, -1.0)
    assert np.abs(gap).max() <= eps * (1 + 1e-12) and np.abs(gap).max() >= eps * (1 - 1e-6)
    assert np.allclose(m.pdf(ys, 0.3), np.exp(m.logpdf(ys, 0.3)), rtol=1e-15)


@pytest.mark.parametrize("name", list(EXAMPLES))
@pytest.mark.parametrize("eps", [1e-6, 700.0])
def test_examples_stay_finite_over_the_whole_eps_range(examples, name, eps):
    """The sampler at the extreme uniforms (u = 0 is possible), the variance and the log-law."""
    m = get_mechanism(name, eps)
    y = m._sample(np.array([-1.0, 0.0, 1.0]), np.array([0.0, 0.5, 1.0 - 2.0**-53]))
    assert np.isfinite(y).all()
    assert np.isfinite(m.variance(XS)).all() and np.isfinite(m.worst_case_variance())
    if name == "binary_rr":
        assert np.isfinite(np.log(m.pmf(XS))).all()  # no impossible atom: the loss stays finite
    else:
        assert np.isfinite(m.logpdf(np.array([-1 - 40 / eps, 0.0, 1 + 40 / eps]), 1.0)).all()
