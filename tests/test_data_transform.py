"""[-1, 1] mapping, categorical encodings, synthetic generators, IPUMS routes, config schema."""

from __future__ import annotations

import copy
import sys
import types
from pathlib import Path

import data_fixtures as fx
import numpy as np
import pandas as pd
import pytest
import yaml

from ldprepro.data import from_unit, k_minus_1, one_hot, ordinal_codes, synthetic, to_unit
from ldprepro.data.build import build_ipums, build_synthetic
from ldprepro.data.table import finalise
from ldprepro.pipeline.errors import DataUnavailable

ROOT = Path(__file__).resolve().parents[1]


def test_to_unit_and_back():
    v = np.array([17, 53.5, 90])
    u = to_unit(v, [17, 90])
    assert u.tolist() == [-1.0, 0.0, 1.0]
    assert from_unit(u, [17, 90]) == pytest.approx(v)
    with pytest.raises(ValueError, match="outside"):
        to_unit([100], [17, 90])


def test_one_hot_k_columns_and_k_minus_1():
    s = pd.Series(pd.Categorical(["b", "a", "c"], categories=["a", "b", "c"]), name="g")
    oh = one_hot(s)
    assert list(oh.columns) == ["g=a", "g=b", "g=c"] and oh.to_numpy().sum(axis=1).tolist() == [1, 1, 1]
    km1 = k_minus_1(s, on=1, off=-1)
    assert list(km1.columns) == ["g=a", "g=b"]
    assert km1.to_numpy().tolist() == [[-1, 1], [1, -1], [-1, -1]]  # last value: all off
    assert ordinal_codes(s).tolist() == [1, 0, 2]
    with pytest.raises(ValueError, match="missing"):
        one_hot(pd.Series(["a", None], name="h"), categories=["a", "b"])


@pytest.mark.parametrize(
    "dist,params", [("uniform", {}), ("gaussian", {"mean": 0.3, "sd": 0.2}), ("exponential", {"sd": 0.3})]
)
def test_synthetic_bounded_and_deterministic(dist, params):
    opts = {"distribution": dist, "size": {"paper": 50, "smoke": 2000}, **params}
    a = finalise(synthetic.generate("s", opts, 7, "smoke")).df
    b = finalise(synthetic.generate("s", opts, 7, "smoke")).df
    c = finalise(synthetic.generate("s2", opts, 7, "smoke")).df
    assert len(a) == 2000 and a.equals(b) and not a.equals(c)
    x = a["x"].to_numpy()
    assert x.min() >= -1 and x.max() <= 1
    if dist == "gaussian":
        assert abs(x.mean() - 0.3) < 0.03 and abs(x.std() - 0.2) < 0.03
    if dist == "exponential":
        assert x.min() >= 0


def test_synthetic_multidim_and_files_byte_identical(tmp_path):
    entry = {
        "kind": "synthetic",
        "options": {
            "distribution": "gaussian",
            "dims": 16,
            "mean": 1.0,
            "sd": 0.25,
            "size": {"paper": 9, "smoke": 300},
        },
    }
    for d in ("1", "2"):
        card = build_synthetic("g16", entry, 5, "smoke", tmp_path / d / "g.parquet", tmp_path / d / "g.json")
    assert card["rows_after_cleaning"] == 300 and len(card["columns"]) == 16
    assert (tmp_path / "1/g.parquet").read_bytes() == (tmp_path / "2/g.parquet").read_bytes()
    df = pd.read_parquet(tmp_path / "1/g.parquet")
    assert df.to_numpy().max() <= 1 and list(df.columns)[:2] == ["x01", "x02"]


IPUMS_ENTRY = {
    "kind": "ipums",
    "options": {
        "collection": "ipumsi",
        "sample": "br2010a",
        "extract": {"data": "", "ddi": ""},
        "numeric": {"AGE": {"domain": [0, 120]}},
        "categorical": {"SEX": {"missing_codes": [9]}},
    },
}


def test_ipums_without_key_or_extract_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv("IPUMS_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataUnavailable) as err:
        build_ipums("ipums_br", IPUMS_ENTRY, tmp_path / "o.parquet", tmp_path / "o.json")
    msg = str(err.value)
    assert "IPUMS_API_KEY" in msg and "datasets.ipums_br.options.extract" in msg
    assert "br2010a" in msg and "AGE, SEX" in msg
    assert (tmp_path / "logs" / "unavailable" / "ipums_br.json").exists()
    assert not (tmp_path / "o.parquet").exists()


def test_ipums_user_extract(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    entry = copy.deepcopy(IPUMS_ENTRY)
    fx.ipums_ddi(tmp_path / "ex")
    fx.ipums_fixed_width(tmp_path / "ex")
    entry["options"]["extract"] = {"data": "ipumsi_00001.dat.gz", "ddi": "ipumsi_00001.xml"}
    card = build_ipums("ipums_br", entry, tmp_path / "o.parquet", tmp_path / "o.json", extract_dir=str(tmp_path / "ex"))
    assert card["rows_before_cleaning"] == 4 and card["rows_after_cleaning"] == 3
    assert card["files"][0]["route"] == "user-supplied extract"


def test_ipums_api_route_with_ipumspy(tmp_path, monkeypatch):
    """The API route, with a stand-in for ipumspy that 'downloads' a fixture extract."""
    calls = []

    class Client:
        def __init__(self, key, **kw):
            calls.append(("key", key))

        def submit_extract(self, ex):
            ex.extract_id = 42
            calls.append(("submit", ex.kw["collection"], ex.kw["samples"], ex.kw["variables"]))

        def wait_for_extract(self, ex):
            calls.append(("wait",))

        def download_extract(self, ex, download_dir):
            fx.ipums_ddi(Path(download_dir))
            fx.ipums_fixed_width(Path(download_dir))

    class Extract:
        def __init__(self, **kw):
            self.kw = kw

    monkeypatch.setitem(sys.modules, "ipumspy", types.SimpleNamespace(IpumsApiClient=Client, MicrodataExtract=Extract))
    monkeypatch.setenv("IPUMS_API_KEY", "secret")
    monkeypatch.chdir(tmp_path)
    card = build_ipums("ipums_br", IPUMS_ENTRY, tmp_path / "o.parquet", tmp_path / "o.json")
    assert calls[1] == ("submit", "ipumsi", ["br2010a"], ["AGE", "SEX"])
    assert card["files"][0]["route"] == "IPUMS API" and card["rows_after_cleaning"] == 3
    lock = tmp_path / "data/raw/ipums_br/ipumsi_00001.dat.gz.sha256.lock"
    assert lock.exists()
    # second run: no new submission, the earlier download is verified against the lock
    calls.clear()
    build_ipums("ipums_br", IPUMS_ENTRY, tmp_path / "o.parquet", tmp_path / "o.json")
    assert calls == []


# ----------------------------------------------------------------------------- config schema


def _validate(cfg):
    from snakemake.utils import validate

    validate(cfg, str(ROOT / "workflow/schemas/config.schema.yaml"))


def test_shipped_config_is_valid():
    _validate(yaml.safe_load((ROOT / "config.yaml").read_text()))


def test_a_new_experiment_entry_is_accepted_and_checked():
    """Users add experiments as new figN entries (docs/extending.md, "Adding an experiment"): a valid one
    passes the schema, an incomplete one fails at load naming the missing key."""
    from snakemake.exceptions import WorkflowError

    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    cfg["dct"]["fig99"] = {**cfg["dct"]["fig2"], "mechanisms": ["pm", "hm_tp"]}
    cfg["ldpfl"]["fig98"] = {**cfg["ldpfl"]["fig10"], "eps": [2]}
    _validate(cfg)
    cfg["hiera"]["fig97"] = {"kind": "sgd", "panels": [{"dataset": "vehicle", "target": "label"}]}
    with pytest.raises(WorkflowError, match="mechanisms"):
        _validate(cfg)


@pytest.mark.parametrize(
    "mutate,needle",
    [
        (lambda c: c["datasets"]["adult"]["files"][0].update(sha="x"), "sha"),
        (lambda c: c["datasets"]["adult"]["files"][0].update(sha256="abc"), "abc"),
        (lambda c: c["datasets"]["adult"].update(kind="uci"), "uci"),
        (lambda c: c["datasets"]["salary_sf"]["options"].update(salary="base_pay"), "salary"),
        (lambda c: c["datasets"]["synth_uniform"]["options"].update(distribution="cauchy"), "cauchy"),
        (
            lambda c: c["datasets"].update(
                mine={
                    "kind": "table",
                    "files": [{"name": "a.csv", "sha256": "lock"}],
                    "options": {"columns": {"age": {"type": "numeric", "domain": [0]}}},
                }
            ),
            "domain",
        ),
        # LDP-SGD figures: graded-only keys, discretisation, encodings (which mechanisms a collector
        # runs is checked against the registry at load: tests/test_workflow_parse.py)
        (lambda c: c["hiera"]["fig3"]["graded"].update(component_rule="all"), "'all'"),
        (lambda c: c["ldpfl"]["fig14"].update(discretize=[0]), "minimum"),
        (lambda c: c["hiera"]["fig3"]["panels"][0].update(categorical_encoding="binary"), "binary"),
        (lambda c: c["hiera"]["fig3"].update(discretize=10), "discretize"),
        (lambda c: c["ldpfl"]["fig10"].update(sweep={"clip": [True]}), "sweep"),
        (lambda c: c["hiera"]["fig3"].update(sweep={"alpha": [1]}), "alpha"),
    ],
)
def test_bad_config_entry_fails_naming_the_key(mutate, needle):
    from snakemake.exceptions import WorkflowError

    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    mutate(cfg)
    with pytest.raises(WorkflowError) as err:
        _validate(cfg)
    assert needle in str(err.value)


def test_synthetic_regression_target():
    """The linear target of the paper-000 stand-in: y = Xβ + noise, clipped; OLS on the generated
    data recovers β within 5 standard errors (SE from the noise sd and the design)."""
    beta = [0.4, -0.3, 0.25, 0.0]
    opts = {
        "distribution": "uniform",
        "dims": 4,
        "size": {"paper": 10, "smoke": 20000},
        "target": {"name": "y", "coefficients": beta, "noise_sd": 0.1},
    }
    df = finalise(synthetic.generate("lin", opts, 3, "smoke")).df
    assert list(df.columns) == ["x01", "x02", "x03", "x04", "y"] and df["y"].abs().max() <= 1
    X = df[["x01", "x02", "x03", "x04"]].to_numpy()
    est, *_ = np.linalg.lstsq(X, df["y"].to_numpy(), rcond=None)
    se = 0.1 / np.sqrt(len(df) / 3)  # Var(x) = 1/3 for U(-1, 1), independent columns
    assert np.all(np.abs(est - beta) <= 5 * se)
    with pytest.raises(ValueError, match="4 values"):
        synthetic.generate("lin", {**opts, "target": {"name": "y", "coefficients": [1.0]}}, 3, "smoke")
    with pytest.raises(ValueError, match="attribute's name"):
        synthetic.generate("lin", {**opts, "target": {"name": "x02", "coefficients": beta}}, 3, "smoke")
