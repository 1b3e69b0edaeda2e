"""Issue 29.1: the audit verifies the law it is given. A mechanism whose declared law is missing, not a
probability law, or not what ``perturb`` samples is "unverifiable" (no exact loss, never best);
``perturb`` output that is NaN or misshapen is an error naming the mechanism; jobs that run a plugin
check its law once per (mechanism, ε)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ldprepro import audit
from ldprepro.benchmark import runs, tables
from ldprepro.domain.mechanisms import MECHANISMS, get_mechanism, load_plugins
from ldprepro.domain.mechanisms import registry as reg
from ldprepro.domain.mechanisms.basic import Laplace
from ldprepro.domain.mechanisms.law_check import MechanismOutputError, verify_law
from ldprepro.domain.mechanisms.registry import UnverifiableMechanismError, unregister_mechanism

PLUGINS = Path(__file__).parent / "plugins"
BAD = ["no_noise", "nan_pdf", "silent_laplace", "nan_output", "wrong_shape"]
BUILTIN = ("laplace", "duchi", "harmony", "pm", "hm", "three_outputs", "pm_opt", "pm_sub", "hm_tp", "dct")


@pytest.fixture
def bad_plugins():
    names = load_plugins([str(PLUGINS / "no_noise.py"), str(PLUGINS / "bad_laws.py")])
    assert names == BAD
    yield names
    for n in names:
        unregister_mechanism(n)
    reg.require_verified_plugins(None)
    reg._VERIFIED.clear()


@pytest.mark.parametrize("eps", [0.1, 1.0, 8.0, 50.0])
def test_every_builtin_law_verifies(eps):
    """Every built-in mechanism (and its discretised variants) passes the check: mass 1, finite
    non-negative law, and its own samples fit it (ε from the benchmark's grid, both ends, and 50,
    where HM's Duchi atom 1 + 2/(e^ε − 1) is the double 1.0, the edge of PM's window)."""
    for name in BUILTIN:
        for m in (None, 1, 10) if name in ("pm", "pm_sub", "hm", "hm_tp") else (None,):
            check = verify_law(get_mechanism(name, eps, discretize=m), name)
            assert check.ok, f"{name} m={m} ε={eps}: {check.reason}"


def test_a_mechanism_without_noise_or_law_is_unverifiable_and_never_best(bad_plugins):
    """The issue's case: perturb returns x and no pmf/pdf is declared. It used to get exact loss 0,
    "holds" and the benchmark's best at every ε."""
    subjects = [audit.numeric_subject(get_mechanism(n, 1.0), n, "numeric", "") for n in ("no_noise", "nan_pdf", "pm")]
    rows = pd.DataFrame(audit.audit_rows(subjects, 2000, 500, 0.9999, 1, {"audit": "t"}))
    rows = rows.set_index("subject")
    for name in ("no_noise", "nan_pdf"):
        assert rows.loc[name, "verdict"] == "unverifiable", rows.loc[name].to_dict()
        assert np.isnan(rows.loc[name, "exact_loss"])
    assert rows.loc["pm", "verdict"] == "holds"
    assert "declares no output law" in rows.loc["no_noise", "notes"]
    assert "pdf(" in rows.loc["nan_pdf", "notes"] and "nan" in rows.loc["nan_pdf", "notes"]

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 2000)})
    card = {"columns": [{"name": "x", "type": "numeric", "domain": [0.0, 1.0]}]}
    entry = {"eps": [0.5, 4.0], "reps": 30, "mechanisms": ["no_noise", "nan_pdf", "laplace", "pm"]}
    res = tables.combine([pd.DataFrame(runs.mean_job(entry, {"dataset": "toy", "column": "x"}, df, card, seed=2))])
    privacy, ranked, win = tables.analyse(res, None)
    mine = ranked[ranked["mechanism"].isin(["no_noise", "nan_pdf"])]
    assert (mine["status"] == "unverifiable").all() and mine["exact_loss"].isna().all()
    assert not win["winner_set"].str.contains("no_noise|nan_pdf").any()
    assert set(win["best"]) <= {"laplace", "pm"}
    assert (ranked.loc[ranked["mechanism"] == "no_noise", "mse"] == 0).all()  # it would have won
    page = tables.markdown(win, ranked, {}, "smoke", 1)
    assert "## Unverifiable (never best)" in page and "| mean | no_noise | 0.5 | declares no output law" in page


def test_a_sampler_that_does_not_follow_its_declared_law_is_unverifiable(bad_plugins):
    """A correct Laplace law declared, no noise sampled: the goodness-of-fit test fails for certain
    (statistic ≈ N·(1 − 1/50)/(1/50) ≈ 10^6 against a critical value below 140)."""
    check = verify_law(get_mechanism("silent_laplace", 1.0), "silent_laplace")
    assert not check.ok and "do not follow the declared law" in check.reason
    assert all(info["stat"] > 1e5 for info in check.fit.values())


def test_power_against_a_sampler_at_twice_the_declared_eps():
    """Laplace noise of a 2ε mechanism declared as ε (the leak `leaky_laplace` makes, but with the
    law left at ε) and binary RR sampled at 2ε fail at every ε of the audit's grid."""

    class Half(Laplace):
        def _perturb_block(self, x, rng):
            return Laplace(2 * self.eps)._perturb_block(x, rng)

    load_plugins([str(PLUGINS / "binary_rr.py")])
    rr = MECHANISMS["binary_rr"]

    class RR2(rr):
        def _sample(self, x, u, lo=0.0, width=1.0):
            return rr(2 * self.eps)._sample(x, u, lo, width) / rr(2 * self.eps).c * self.c

    try:
        for eps in (0.5, 1.0, 2.0, 4.0):
            for mech in (Half(eps), RR2(eps)):
                check = verify_law(mech)
                assert not check.ok, (type(mech).__name__, eps)
                assert max(info.get("stat", np.inf) for info in check.fit.values()) > 100
    finally:
        unregister_mechanism("binary_rr")


def test_nan_or_misshapen_perturb_output_is_an_error_naming_the_mechanism(bad_plugins):
    for name, text in [
        ("nan_output", "perturb returned nan for input"),
        ("wrong_shape", "perturb returned shape (3,)"),
    ]:
        mech = get_mechanism(name, 1.0)
        with pytest.raises(MechanismOutputError) as err:
            audit.numeric_subject(mech, name, "numeric", "")
        assert f"mechanism {name!r} (class " in str(err.value) and "bad_laws.py" in str(err.value)
        assert text in str(err.value)
    with pytest.raises(MechanismOutputError, match="'nan_output'.*perturb returned nan"):
        get_mechanism("nan_output", 1.0).perturb(np.zeros(5), np.random.default_rng(0))


def test_jobs_verify_plugins_once_and_refuse_an_unverifiable_one(bad_plugins, caplog):
    """require_verified_plugins (a pipeline job that loads plugins): 'strict' refuses an
    unverifiable plugin with what to do; 'report' (audit, benchmark) logs it; built-ins are not
    re-verified; a verified plugin is checked once per ε."""
    reg.require_verified_plugins("strict")
    with pytest.raises(
        UnverifiableMechanismError, match=r"'no_noise' \(mechanism_plugins\) at ε = 1: .*check_mechanism"
    ):
        get_mechanism("no_noise", 1.0)
    with pytest.raises(MechanismOutputError, match="'wrong_shape'"):
        get_mechanism("wrong_shape", 1.0)
    load_plugins([str(PLUGINS / "laplace_twin.py")])
    try:
        with caplog.at_level(logging.INFO, logger="ldprepro"):
            for _ in range(3):
                get_mechanism("laplace_twin", 2.0)
                get_mechanism("laplace", 2.0)
        assert [r.message for r in caplog.records].count(
            "plugin mechanism 'laplace_twin' at ε = 2: declared law verified"
        ) == 1
        assert len(reg._VERIFIED) == 2  # no_noise and laplace_twin (wrong_shape's error is not cached)
    finally:
        unregister_mechanism("laplace_twin")
    reg.require_verified_plugins("report")
    with caplog.at_level(logging.WARNING, logger="ldprepro"):
        get_mechanism("nan_pdf", 1.0)
    assert any("'nan_pdf' at ε = 1: unverifiable law" in r.message for r in caplog.records)


def test_the_contract_checker_reports_an_unverifiable_law(bad_plugins):
    """check_mechanism (the plugin author's checker) runs the same law check as the audit."""
    from ldprepro.domain.mechanisms.contract import check_mechanism

    report = check_mechanism("silent_laplace", eps_grid=(1.0,), n=5000)
    assert any(
        f.startswith("ε=1 declared law verified: perturb at x = -1: outputs do not follow") for f in report.failures
    )
    assert not [f for f in check_mechanism("laplace", eps_grid=(1.0,), n=5000).failures if "declared law" in f]


def test_a_perturb_that_raises_is_named():
    class Raises(Laplace):
        def _perturb_block(self, x, rng):
            raise ZeroDivisionError("oops")

    with pytest.raises(
        MechanismOutputError, match=r"class .*Raises in .*: perturb raised ZeroDivisionError at x = -1: oops"
    ):
        verify_law(Raises(1.0))


def test_beyond_double_precision_the_reason_says_so():
    """At ε = 100 PM's window is narrower than the doubles near 1 can resolve: the check cannot
    integrate the pdf and says why, instead of a bare mass error."""
    check = verify_law(get_mechanism("pm", 100.0), "pm")
    assert not check.ok and "narrower than double precision resolves at this ε" in check.reason


@pytest.fixture
def staircase():
    names = load_plugins([str(PLUGINS / "staircase.py")])
    yield names[0]
    for n in names:
        unregister_mechanism(n)
    reg._VERIFIED.clear()


def test_the_staircase_mechanism_passes_both_checks_without_declaring_its_pieces(staircase):
    """Issue 54 item 6, as reported: Geng & Viswanath's staircase (exact step density, infinitely
    many steps, no density_pieces) failed check_mechanism at ε = 4 ('pmf + ∫pdf = 0.99982953') and
    the pipeline's law check at ε = 8 (1.0001467), the two disagreeing. One computation now, exact
    for steps: both pass at every ε, and its total probability is 1 to 1e-9."""
    from ldprepro.domain.mechanisms.law_check import total_mass
    from ldprepro.mechanisms import check_mechanism

    report = check_mechanism(staircase, eps_grid=(0.5, 1.0, 4.0, 8.0), n=50_000)
    assert not report.failures, report.failures
    for eps in (0.5, 4.0, 8.0, 20.0):
        mech = get_mechanism(staircase, eps)
        assert verify_law(mech).ok, verify_law(mech).reason
        for x in (-1.0, 0.0, 0.3, 1.0):
            assert sum(total_mass(mech, x)) == pytest.approx(1.0, abs=1e-9)


def test_a_law_off_in_mass_names_the_declared_quantity_and_by_how_much(staircase):
    from ldprepro.mechanisms import check_mechanism

    cls = type(get_mechanism(staircase, 1.0))

    class Heavier(cls):  # the same steps, 0.1 % too high
        def pdf(self, y, x):
            return 1.001 * super().pdf(y, x)

    report = check_mechanism(Heavier, eps_grid=(4.0,), n=20_000)
    msg = "; ".join(report.failures)
    assert "the pdf integrates to 1.001" in msg and "off by +0.001" in msg, msg
    assert "declared law verified" in msg  # the same finding in both checks


def test_a_plugin_that_changes_numpys_global_state_changes_no_result():
    """Issue 54, untried probe: a plugin that seeds numpy's global generator and makes every
    floating-point warning an error (np.seterr(all='raise')) at import. Results draw from their own
    keyed Generators, so the draws are the same; the built-in laws verify and the mean jobs' rows are
    computed under 'raise' as well (no operation of theirs warns)."""
    from ldprepro.experiments.mean import mean_error_rows

    def draws():
        return {n: get_mechanism(n, 1.0).perturb(np.linspace(-1, 1, 1000), np.random.default_rng(5)) for n in BUILTIN}

    before = draws()
    saved = np.geterr()
    try:
        np.random.seed(123)
        np.seterr(all="raise")
        after = draws()
        for name in BUILTIN:
            assert verify_law(get_mechanism(name, 1.0)).ok, name
            assert len(mean_error_rows(np.linspace(-1, 1, 100), name, [0.5, 4.0], 3, 1, {"f": 1}, {"f": 1})) > 0
    finally:
        np.seterr(**saved)
    assert all(np.array_equal(before[n], after[n]) for n in BUILTIN)
