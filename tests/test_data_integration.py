"""Integration: normalise every mirrored dataset from the offline mirror and check the row counts
of shared/datasets/MANIFEST.md.

The mirror is LDPREPRO_DATA_MIRROR, else ../shared/datasets next to the repository. Without it
these tests are skipped, except under CI (CI=true), where a missing mirror is a failure.
"""

from __future__ import annotations

import copy
import hashlib
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml
from data_fixtures import web_server

from ldprepro.data.build import build_from_files, fetch, needed_files
from ldprepro.pipeline.errors import ChecksumMismatch, DataUnavailable

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "config.yaml").read_text())

pytestmark = pytest.mark.integration


@pytest.fixture(scope="session")
def mirror() -> Path:
    env = os.environ.get("LDPREPRO_DATA_MIRROR")
    path = Path(env) if env else ROOT.parent / "shared" / "datasets"
    if not (path / "MANIFEST.md").exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI needs the dataset mirror, not found at {path} (set LDPREPRO_DATA_MIRROR)")
        pytest.skip(f"dataset mirror not found at {path}")
    return path


@pytest.fixture(scope="session")
def built(mirror, tmp_path_factory):
    """Fetch (from the mirror) and normalise a dataset once per session."""
    root = tmp_path_factory.mktemp("data")
    cache: dict[str, tuple[pd.DataFrame, dict]] = {}

    def build(name: str, **option_overrides):
        key = name + repr(sorted(option_overrides.items()))
        if key not in cache:
            entry = {**CONFIG["datasets"][name]}
            entry["options"] = {**entry.get("options", {}), **option_overrides}
            raw = {}
            for f in needed_files(entry):
                dest = root / "raw" / name / f["name"]
                if not dest.exists():
                    fetch(name, entry, f["name"], dest, str(mirror), log=lambda m: None)
                raw[f["name"]] = dest
            out = root / "processed" / key
            card = build_from_files(name, entry, raw, out / "t.parquet", out / "t.json", log=lambda m: None)
            cache[key] = (pd.read_parquet(out / "t.parquet"), card)
        return cache[key]

    return build


# (dataset, rows before cleaning as in MANIFEST.md, rows after)
COUNTS = [
    ("adult", 48842, 48842),
    ("adult_lopub", 45222, 45222),
    ("nltcs", 21574, 21574),
    ("salary_sf", 38123, None),  # SF 2014 file: 38,123 rows
    ("salary_baltimore", 13683, 13683),  # FY2018: 13,683 rows, all with a positive salary
    ("salary_nyc_sample", 20000, None),  # two 10,000-row samples
]


@pytest.mark.parametrize("name,before,after", COUNTS)
def test_mirrored_dataset_row_counts(built, name, before, after):
    df, card = built(name)
    assert card["rows_before_cleaning"] == before
    assert len(df) == card["rows_after_cleaning"]
    if after is not None:
        assert len(df) == after
    for col in card["columns"]:
        assert col["name"] in df.columns


def test_adult_details(built):
    df, card = built("adult")
    assert card["views"]["complete_cases"]["rows"] == 45222
    assert (df["split"] == "train").sum() == 32561 and (df["split"] == "test").sum() == 16281
    assert set(df["income"].cat.categories) == {"<=50K", ">50K"}


def test_adult_lopub_domain_sizes(built):
    _, card = built("adult_lopub")
    assert card["domain_sizes"] == [16, 7, 16, 16, 16, 7, 14, 6, 5, 2, 16, 16, 16, 41, 2]


def test_nltcs_column_sums(built):
    df, _ = built("nltcs")
    sums = [int(df[c].astype(int).sum()) for c in df.columns]
    assert sums == [3144, 4552, 4949, 10638, 2285, 10477, 5590, 7646, 4671, 14577, 5347, 9466, 4483, 8697, 5947, 11965]


@pytest.mark.parametrize("year,rows", [(2011, 36159), (2012, 36766), (2013, 37606)])
def test_sf_other_years(built, year, rows):
    _, card = built("salary_sf", year=year)
    assert card["rows_before_cleaning"] == rows


@pytest.mark.parametrize("year,rows", [(2011, 14454), (2013, 19137), (2014, 18981), (2017, 13483), (2019, 13811)])
def test_baltimore_header_spellings(built, year, rows):
    df, card = built("salary_baltimore", year=year)
    assert card["rows_before_cleaning"] == rows and df["salary"].min() > 0


def test_nyc_sample_is_labelled(built):
    df, card = built("salary_nyc_sample")
    assert card["sample"] is True and "NOT a complete fiscal year" in card["caveat"]
    assert df["year"].min() == 2014 and df["year"].max() == 2025


def _corrupt_mirror(mirror: Path, tmp_path: Path) -> Path:
    bad_mirror = tmp_path / "mirror"
    src = mirror / "nltcs" / "nltcs.dat"
    (bad_mirror / "nltcs").mkdir(parents=True)
    data = bytearray(src.read_bytes())
    data[100] = ord("1") if data[100] == ord("0") else ord("0")  # flip one value
    (bad_mirror / "nltcs" / "nltcs.dat").write_bytes(bytes(data))
    return bad_mirror


def _nltcs_with_url(url: str) -> dict:
    entry = copy.deepcopy(CONFIG["datasets"]["nltcs"])
    for f in entry["files"]:
        if f["name"] == "nltcs.dat":
            f["url"] = url  # a local stand-in for the official URL (no network here)
    return entry


def test_corrupted_mirror_copy_falls_through_to_the_url(mirror, tmp_path):
    bad_mirror = _corrupt_mirror(mirror, tmp_path)
    good = (mirror / "nltcs" / "nltcs.dat").read_bytes()
    logged = []
    with web_server({"/nltcs.dat": lambda q: (200, good)}) as base:
        got = fetch(
            "nltcs",
            _nltcs_with_url(f"{base}/nltcs.dat"),
            "nltcs.dat",
            tmp_path / "raw" / "nltcs.dat",
            str(bad_mirror),
            log=logged.append,
        )
    assert got.origin == "url" and (tmp_path / "raw" / "nltcs.dat").read_bytes() == good
    assert any(m.startswith("WARNING: nltcs: the mirror copy") for m in logged)


def test_corrupted_mirror_copy_and_no_url_is_recorded_unavailable(mirror, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bad_mirror = _corrupt_mirror(mirror, tmp_path)
    dest = tmp_path / "raw" / "nltcs.dat"
    with web_server({}) as base:  # the "official URL" answers 404
        with pytest.raises(DataUnavailable) as err:
            fetch("nltcs", _nltcs_with_url(f"{base}/nltcs.dat"), "nltcs.dat", dest, str(bad_mirror), log=lambda m: None)
    assert CONFIG["datasets"]["nltcs"]["files"][0]["sha256"] in str(err.value)
    assert "corrupt" in err.value.reason and not dest.exists()
    assert (tmp_path / "logs" / "unavailable" / "nltcs.json").exists()


def test_raw_file_altered_after_fetch_is_refused_at_normalisation(mirror, tmp_path):
    """Issue 14 item 3, as reported: alter a byte of nltcs.dat after a successful fetch and
    rebuild. It was normalised (exit 0, changed data) with "checksum_from": "config"."""
    entry = CONFIG["datasets"]["nltcs"]
    raw = {}
    for f in needed_files(entry):
        raw[f["name"]] = tmp_path / "raw" / f["name"]
        fetch("nltcs", entry, f["name"], raw[f["name"]], str(mirror), log=lambda m: None)
    card = build_from_files("nltcs", entry, raw, tmp_path / "a.parquet", tmp_path / "a.json", log=lambda m: None)
    expected = entry["files"][0]["sha256"]
    assert card["files"][0]["sha256"] == expected
    assert card["files"][0]["checksum_from"] == "config"
    data = bytearray(raw["nltcs.dat"].read_bytes())
    data[100] = ord("1") if data[100] == ord("0") else ord("0")
    raw["nltcs.dat"].write_bytes(bytes(data))
    with pytest.raises(ChecksumMismatch) as err:
        build_from_files("nltcs", entry, raw, tmp_path / "b.parquet", tmp_path / "b.json", log=lambda m: None)
    msg = str(err.value)
    assert str(raw["nltcs.dat"]) in msg and expected in msg
    assert hashlib.sha256(bytes(data)).hexdigest() in msg and "Delete it" in msg
    assert not (tmp_path / "b.json").exists()


def test_vehicle_matches_derived_table(built, mirror):
    """Our table from the original feature files equals the mirror's derived 23-sensor csv."""
    df, card = built("vehicle", qffl_subset=False)
    assert card["rows_before_cleaning"] == 49264 and len(df) == 49264
    ref = pd.read_csv(mirror / "vehicle" / "vehicle_sensit_23sensors.csv.gz")
    assert len(ref) == 49264
    assert df["device_index"].tolist() == ref["device_index"].tolist()
    assert df["sensor_node"].tolist() == ref["sensor_node"].tolist()
    assert df["run"].astype(str).tolist() == ref["run"].tolist()
    assert df["event_index"].tolist() == ref["event_index"].tolist()
    assert df["label"].astype(int).tolist() == ref["label"].tolist()
    assert df["in_qffl"].astype(int).tolist() == ref["in_qffl_vehicle"].tolist()
    feats = [c for c in ref.columns if c[0] in "as" and c[1:].isdigit()]
    assert (df[feats].to_numpy() == ref[feats].to_numpy()).all()
    q, qcard = built("vehicle")
    assert len(q) == 43695 and qcard["class_counts"] == {"+1 (AAV)": 22841, "-1 (DW)": 20854}
    sizes = q.groupby("device_index").size()
    assert sizes.iloc[0] == 2578 and sizes.iloc[22] == 2281
