"""Every reader and the normaliser on small fixtures written in the official formats."""

from __future__ import annotations

import json

import data_fixtures as fx
import pandas as pd
import pytest

from ldprepro.data.build import build_from_files, fetch, needed_files
from ldprepro.data.fetch import lock_path
from ldprepro.data.readers import adult, ipums, nltcs, salaries, vehicle, wisdm
from ldprepro.data.table import finalise
from ldprepro.pipeline.errors import BadInput, ChecksumMismatch


def _entry(kind, files=(), options=None):
    return {"kind": kind, "files": [{"name": n, "sha256": "lock"} for n in files], "options": options or {}}


# ------------------------------------------------------------------------------------ Adult


def test_adult_reads_train_and_test(tmp_path):
    t = finalise(adult.read(fx.adult(tmp_path), {}))
    df = t.df
    assert len(df) == 5 and t.rows_raw == 5
    assert set(df["income"].cat.categories) == {"<=50K", ">50K"}  # test's trailing '.' removed
    assert df["has_missing"].astype(int).tolist() == [0, 0, 1, 0, 0]
    assert df["workclass"].isna().sum() == 1 and df["age"].dtype == "int64"
    assert t.extra["views"]["complete_cases"]["rows"] == 4
    assert list(df["split"]) == ["train"] * 3 + ["test"] * 2


def test_adult_drop_missing_is_counted(tmp_path):
    t = finalise(adult.read(fx.adult(tmp_path), {"drop_missing": True}))
    assert len(t.df) == 4 and t.drops[0].rows == 1


def test_adult_truncated_file_names_file_and_row(tmp_path):
    cut = fx.ADULT_TRAIN.splitlines()
    cut[1] = cut[1][:40]  # a line cut short
    paths = fx.adult(tmp_path, train="\n".join(cut) + "\n")
    with pytest.raises(BadInput, match=r"adult\.data.*row 2"):
        finalise(adult.read(paths, {}))


def test_adult_value_outside_domain(tmp_path):
    paths = fx.adult(tmp_path, train=fx.ADULT_TRAIN.replace("39, State-gov", "139, State-gov"))
    with pytest.raises(BadInput, match=r"column 'age', row adult\.data:1.*outside"):
        finalise(adult.read(paths, {}))


# ------------------------------------------------------------------------------------ NLTCS


def test_nltcs(tmp_path):
    t = finalise(nltcs.read(fx.nltcs(tmp_path), {}))
    assert t.df.shape == (3, 16) and list(t.df["a02"]) == [0, 1, 1]
    assert list(t.df["a01"].cat.categories) == [0, 1]


def test_nltcs_truncated(tmp_path):
    with pytest.raises(BadInput, match="declares 5 records but the file holds 3"):
        nltcs.read(fx.nltcs(tmp_path, declared=5), {})


def test_nltcs_non_binary_value(tmp_path):
    paths = fx.nltcs(tmp_path, rows=((0,) * 16, (2,) + (0,) * 15))
    with pytest.raises(BadInput, match=r"column 'a01', row 3: value 2"):
        finalise(nltcs.read(paths, {}))


# --------------------------------------------------------------------------------- salaries


def test_baltimore_dollar_prefix_and_header_spellings(tmp_path):
    files = [
        {"name": "Baltimore_City_Employee_Salaries_FY2017.csv", "year": 2017},
        {"name": "Baltimore_City_Employee_Salaries_FY2014.csv", "year": 2014},
    ]
    paths = {files[0]["name"]: fx.baltimore_fy2017(tmp_path), files[1]["name"]: fx.baltimore_fy2014(tmp_path)}
    t = finalise(salaries.read_baltimore(paths, {"year": 2017, "salary_column": "annual_salary"}, files))
    assert t.df["salary"].tolist() == [57863.0, 41000.5]
    assert [d.reason for d in t.drops] == ["salary not positive"] and t.rows_raw == 3
    t14 = finalise(salaries.read_baltimore(paths, {"year": 2014, "salary_column": "annual_salary"}, files))
    assert t14.df["salary"].tolist() == [11310.0] and t14.df["agency"].tolist() == ["Youth Summer"]


def test_sf_cr_only_line_ends_and_not_provided(tmp_path):
    files = [{"name": "san-francisco-2013.csv", "year": 2013}]
    t = finalise(
        salaries.read_sf({files[0]["name"]: fx.sf_2013(tmp_path)}, {"year": 2013, "salary_column": "base_pay"}, files)
    )
    assert t.df["salary"].tolist() == [319275.01, 313686.01]
    assert t.drops[0].reason == "salary missing or not a number" and t.drops[0].examples == [4]


def test_salary_column_missing_is_named(tmp_path):
    files = [{"name": "san-francisco-2013.csv", "year": 2013}]
    with pytest.raises(BadInput, match=r"san-francisco-2013\.csv: missing column\(s\) \['wage'\]"):
        salaries.read_sf({files[0]["name"]: fx.sf_2013(tmp_path)}, {"year": 2013, "salary_column": "wage"}, files)


def test_nyc_socrata_page_and_export_format(tmp_path):
    api = fx.write(tmp_path / "api.csv", "\n".join([fx.SOCRATA_HEADER] + fx.socrata_rows(10)) + "\n")
    files = [{"name": "api.csv"}]
    t = finalise(salaries.read_nyc({"api.csv": api}, {"salary_column": "base_salary", "pay_basis": "per Annum"}, files))
    assert len(t.df) == 8 and t.drops[0].rows == 2 and t.extra["sample"] is False
    files = [{"name": "A.csv"}]
    s = finalise(
        salaries.read_nyc(
            {"A.csv": fx.nyc_sample_A(tmp_path)},
            {"salary_column": "base_salary", "pay_basis": "per Annum", "sample": True},
            files,
        )
    )
    assert s.df["salary"].tolist() == [35109.0] and s.df["year"].tolist() == [2020]
    assert s.extra["sample"] is True and "NOT a complete fiscal year" in s.extra["caveat"]


# ---------------------------------------------------------------------------------- Vehicle


def test_vehicle_uses_modality_directories_only(tmp_path):
    t = finalise(vehicle.read({"v.tar.xz": fx.vehicle_tar(tmp_path)}, {"qffl_subset": False}))
    df = t.df
    assert len(df) == 2 * 3 * 3  # nodes x runs x rows; the per-node duplicates are ignored
    assert list(df["run"].cat.categories) == ["aav3", "dw2", "dw3"]
    assert df["label"].astype(int).tolist()[:9] == [1, 1, 1, -1, -1, -1, -1, -1, -1]
    assert df["device_index"].tolist()[:9] == [0] * 9 and df["sensor_node"].iloc[-1] == 2
    assert df["a01"].iloc[0] == pytest.approx(100.0) and df["s50"].iloc[0] == pytest.approx(100.49)
    q = finalise(vehicle.read({"v.tar.xz": fx.vehicle_tar(tmp_path)}, {}))
    assert len(q.df) == 12 and q.drops[0].rows == 6  # dw2 dropped (not in vehicle.mat)


def test_vehicle_onehot_mismatch(tmp_path):
    with pytest.raises(BadInput, match=r"dw3evfeat1_1_1\.txt: row 3: class one-hot"):
        vehicle.read({"v": fx.vehicle_tar(tmp_path, bad_onehot=True)}, {})


def test_vehicle_truncated_archive(tmp_path):
    p = fx.vehicle_tar(tmp_path)
    p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])
    with pytest.raises(BadInput, match="truncated"):
        vehicle.read({"v": p}, {})


# ------------------------------------------------------------------------------------ WISDM


@pytest.mark.parametrize("as_tar", [True, False])
def test_wisdm_malformed_lines_counted_and_dropped(tmp_path, as_tar):
    logged = []
    t = finalise(wisdm.read({"w": fx.wisdm_raw(tmp_path, tar=as_tar)}, {}, log=logged.append))
    assert t.rows_raw == 8 and len(t.df) == 5
    assert t.drops[0].rows == 3 and len(logged) == 3
    assert "line 4" in t.drops[0].examples[0] and "line 5" in t.drops[0].examples[1]
    assert list(t.df.columns) == ["user", "activity", "x", "y", "z"]  # timestamp dropped
    assert t.df["y"].iloc[3] == pytest.approx(18.496431)  # second record of line 3


def test_wisdm_value_outside_declared_domain(tmp_path):
    p = fx.write(tmp_path / "WISDM_ar_v1.1_raw.txt", "1,Walking,1,0.1,25.0,0.3;\n")
    with pytest.raises(BadInput, match=r"column 'y', row line 1: value 25\.0 outside"):
        finalise(wisdm.read({"w": p}, {}))


# ------------------------------------------------------------------------------------ IPUMS

IPUMS_OPTS = {
    "numeric": {
        "AGE": {"domain": [0, 120]},
        "INCTOT": {"domain": "observed", "missing_codes": [9999998, 9999999]},
        "HRSWORK1": {"domain": "observed", "missing_codes": [998, 999]},
    },
    "categorical": {"SEX": {"missing_codes": [9]}},
}


@pytest.mark.parametrize("form", ["fixed_gz", "fixed", "csv"])
def test_ipums_extract_with_ddi(tmp_path, form):
    ddi = fx.ipums_ddi(tmp_path)
    data = fx.ipums_csv(tmp_path) if form == "csv" else fx.ipums_fixed_width(tmp_path, gz=form == "fixed_gz")
    t = finalise(ipums.read(data, ddi, IPUMS_OPTS))
    assert t.rows_raw == 4
    assert len(t.df) == 1  # NIU income, HRSWORK1 998/999 and SEX 9 dropped
    assert t.df["AGE"].tolist() == [34] and t.df["INCTOT"].tolist() == [12000]
    assert sorted(d.rows for d in t.drops) == [1, 1, 1]
    assert t.extra["value_labels"]["SEX"]["2"] == "Female"
    assert list(t.df["SEX"].cat.categories) == [1]


def test_ipums_truncated_fixed_width(tmp_path):
    ddi = fx.ipums_ddi(tmp_path)
    data = fx.ipums_fixed_width(tmp_path, gz=False)
    data.write_text(data.read_text()[:-10])
    with pytest.raises(BadInput, match=r"ipumsi_00001\.dat: row 4: record is"):
        ipums.read(data, ddi, IPUMS_OPTS)


def test_ipums_variable_not_in_codebook(tmp_path):
    ddi = fx.ipums_ddi(tmp_path)
    data = fx.ipums_fixed_width(tmp_path)
    with pytest.raises(BadInput, match=r"no variable\(s\) \['EDATTAIN'\]"):
        ipums.read(data, ddi, {"numeric": {}, "categorical": {"EDATTAIN": {}}})


# ------------------------------------------------------------------- generic table + card


def _table_entry(path, columns, **opts):
    return {
        "kind": "table",
        "description": "test",
        "source": "fixture",
        "licence": "none",
        "files": [{"name": path.name, "sha256": fx.sha256(path)}],
        "options": {"columns": columns, **opts},
    }


def test_generic_table_end_to_end(tmp_path):
    src = fx.write(tmp_path / "my.csv", "age,city,score\n30,Rome,0.5\n41,Oslo,\n52,Rome,0.9\n")
    entry = _table_entry(
        src,
        {
            "age": {"type": "numeric", "domain": [0, 120], "integer": True},
            "city": {"type": "categorical"},
            "score": {"type": "numeric", "domain": [0, 1]},
        },
        dropna=["score"],
    )
    out = tmp_path / "out"
    card = build_from_files("mine", entry, {"my.csv": src}, out / "mine.parquet", out / "mine.json")
    df = pd.read_parquet(out / "mine.parquet")
    assert df["age"].tolist() == [30, 52] and str(df["city"].dtype) == "category"
    assert card["rows_before_cleaning"] == 3 and card["rows_after_cleaning"] == 2
    assert card["dropped"] == [{"reason": "missing value in 'score'", "rows": 1, "examples": [3]}]
    cols = {c["name"]: c for c in card["columns"]}
    assert cols["age"]["domain"] == [0, 120] and cols["city"]["categories"] == ["Rome"]
    assert json.loads((out / "mine.json").read_text()) == card


def test_generic_table_nan_in_numeric_names_file_column_row(tmp_path):
    src = fx.write(tmp_path / "my.csv", "age,score\n30,0.5\n41,\n")
    entry = _table_entry(src, {"age": {"type": "numeric"}, "score": {"type": "numeric"}})
    out = tmp_path / "out"
    with pytest.raises(BadInput, match=r"my\.csv: column 'score', row 3: missing value"):
        build_from_files("mine", entry, {"my.csv": src}, out / "m.parquet", out / "m.json")
    assert not out.exists() or list(out.iterdir()) == []  # nothing half-written


@pytest.mark.parametrize(
    "spec, needle",
    [
        ({"type": "numeric"}, r"every value is 3, so its observed domain \[3, 3\] has no width"),
        ({"type": "numeric", "domain": [3, 3]}, r"its declared domain \[3, 3\] has no width"),
    ],
)
def test_a_degenerate_domain_is_refused_when_the_data_are_normalised(tmp_path, spec, needle):
    """Issue 29.5: a constant column got a card with domain [3, 3] and every job using it failed later
    with "domain must have U > L" naming no column; now normalising refuses it, naming dataset and column."""
    src = fx.write(tmp_path / "my.csv", "age,level\n30,3\n41,3\n52,3\n")
    entry = _table_entry(src, {"age": {"type": "numeric", "domain": [0, 120]}, "level": spec})
    out = tmp_path / "out"
    with pytest.raises(BadInput, match=r"my\.csv: dataset 'mine', column 'level': " + needle) as err:
        build_from_files("mine", entry, {"my.csv": src}, out / "m.parquet", out / "m.json")
    assert "U > L" in str(err.value) and "domain [L, U] with L < U" in str(err.value)
    assert not out.exists() or list(out.iterdir()) == []  # nothing written


def test_generic_table_wrong_columns(tmp_path):
    src = fx.write(tmp_path / "my.csv", "a,b\n1,2\n")
    entry = _table_entry(src, {"age": {"type": "numeric"}})
    with pytest.raises(BadInput, match=r"my\.csv: missing column\(s\) \['age'\]"):
        build_from_files("mine", entry, {"my.csv": src}, tmp_path / "m.parquet", tmp_path / "m.j")


def test_generic_parquet_and_determinism(tmp_path):
    src = tmp_path / "in.parquet"
    pd.DataFrame({"x": [0.1, 0.2, 0.3], "g": ["a", "b", "a"]}).to_parquet(src)
    entry = _table_entry(src, {"x": {"type": "numeric", "domain": [0, 1]}, "g": {"type": "categorical"}})
    for run in ("1", "2"):
        build_from_files("p", entry, {"in.parquet": src}, tmp_path / run / "p.parquet", tmp_path / run / "p.json")
    assert (tmp_path / "1/p.parquet").read_bytes() == (tmp_path / "2/p.parquet").read_bytes()
    assert (tmp_path / "1/p.json").read_bytes() == (tmp_path / "2/p.json").read_bytes()


def test_needed_files_year_and_placeholders():
    entry = {
        "kind": "salary_nyc",
        "options": {"fiscal_year": 2020, "year": 2012},
        "files": [
            {
                "name": "p_{fiscal_year}.csv",
                "sha256": "lock",
                "socrata": {"domain": "d", "dataset": "x", "query": {"fiscal_year": "{fiscal_year}"}},
            },
            {"name": "a.csv", "sha256": "lock", "year": 2011},
            {"name": "b.csv", "sha256": "lock", "year": 2012},
        ],
    }
    got = needed_files(entry)
    assert [f["name"] for f in got] == ["p_2020.csv", "b.csv"]
    assert got[0]["socrata"]["query"] == {"fiscal_year": "2020"}


# ------------------------------------------------- truncated, header-only and empty tables

PERSON = {
    "age": {"type": "numeric", "domain": [0, 120]},
    "income": {"type": "numeric", "domain": "observed"},
    "region": {"type": "categorical"},
}


def _build(tmp_path, src, columns=PERSON, **opts):
    out = tmp_path / "out"
    return build_from_files(
        "mine", _table_entry(src, columns, **opts), {src.name: src}, out / "m.parquet", out / "m.json"
    )


def test_truncated_last_line_names_file_row_and_column(tmp_path):
    """Issue 14 item 4: '29,38' (cut short) was read as income 38, region NaN."""
    src = fx.write(tmp_path / "people.csv", "age,income,region\n41,52,north\n29,38")
    with pytest.raises(
        BadInput,
        match=r"people\.csv: column 'region', row 3: the line has 2 "
        r"of 3 fields",
    ):
        _build(tmp_path, src)
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_short_line_in_the_middle_and_empty_trailing_field(tmp_path):
    src = fx.write(tmp_path / "p.csv", 'age,income,region\n41,52,"north"\n29\n30,31,south\n')
    with pytest.raises(BadInput, match=r"p\.csv: column 'income', row 3: the line has 1 of 3"):
        _build(tmp_path, src)
    ok = fx.write(tmp_path / "ok.csv", "age,income,region\n41,52,\n30,31,south\n")
    card = _build(tmp_path, ok)  # an empty last field is a missing value, not a short line
    assert card["rows_after_cleaning"] == 2 and card["columns"][2]["missing"] == 1


def test_short_line_in_gzip_and_cr_only_files(tmp_path):
    gz = fx.gzip_copy(fx.write(tmp_path / "x.csv", "age,income,region\n1,2,a\n3,4\n"), tmp_path / "p.csv.gz")
    with pytest.raises(BadInput, match=r"p\.csv\.gz: column 'region', row 3"):
        _build(tmp_path, gz)
    cr = fx.write(tmp_path / "cr.csv", "age,income,region\n1,2,a\n3,4\n", newline="\r")
    with pytest.raises(BadInput, match=r"cr\.csv: column 'region', row 3"):
        _build(tmp_path, cr)


@pytest.mark.parametrize(
    "text,needle",
    [
        ("age,income,region\n", r"no data rows"),
        ("age,income,region", r"no data rows"),
        ("", r"empty file"),
        ("age,income,region\n\n\n", r"no data rows"),
    ],
)
def test_header_only_or_empty_csv_is_an_error_and_writes_nothing(tmp_path, text, needle):
    src = fx.write(tmp_path / "p.csv", text)
    with pytest.raises(BadInput, match=rf"p\.csv: .*{needle}"):
        _build(tmp_path, src)
    assert not (tmp_path / "out" / "m.json").exists()


def test_zero_row_parquet_names_file_and_column(tmp_path):
    src = tmp_path / "in.parquet"
    pd.DataFrame(
        {
            "age": pd.Series([], dtype="float64"),
            "income": pd.Series([], dtype="float64"),
            "region": pd.Series([], dtype="object"),
        }
    ).to_parquet(src)
    with pytest.raises(
        BadInput,
        match=r"in\.parquet: column 'age', row 1: no rows to normalise: "
        r"the file has no data rows",
    ):
        _build(tmp_path, src)


def test_every_row_dropped_says_why(tmp_path):
    src = fx.write(tmp_path / "p.csv", "age,income,region\n41,,north\n29,,south\n")
    with pytest.raises(BadInput, match=r"all 2 rows were dropped \(2: missing value in 'income'\)"):
        _build(tmp_path, src, dropna=["income"])


def test_all_missing_observed_column_never_reaches_the_card(tmp_path):
    t = adult.read(fx.adult(tmp_path), {})
    t = finalise(t)
    t.columns[0].domain = "observed"
    t.df["age"] = float("nan")
    from ldprepro.data.table import data_card

    with pytest.raises(BadInput, match=r"column 'age': no finite value"):
        data_card("adult", {"kind": "uci_adult"}, t, [])


def test_card_with_nan_is_not_written(tmp_path):
    from ldprepro.data.table import write_outputs

    t = finalise(nltcs.read(fx.nltcs(tmp_path), {}))
    with pytest.raises(BadInput, match=r"m\.json: the data card of 'x' holds a NaN"):
        write_outputs(t, {"dataset": "x", "v": float("nan")}, tmp_path / "m.parquet", tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists() and not (tmp_path / "m.parquet").exists()


def test_the_card_says_what_the_parquet_holds(tmp_path):
    """Each column's ``dtype`` in the card is the dtype the parquet gives back: a binary attribute
    (a categorical with integer categories in memory) is stored as int64, not as 'category'."""
    import json

    from ldprepro.data.table import Column, Table, data_card, write_outputs

    df = pd.DataFrame(
        {
            "flag": [0, 1, 1, 0],
            "flag_missing": [0, 1, None, 1],
            "code": [3, 1, 2, 3],
            "colour": ["red", "blue", None, "red"],
            "x": [0.5, 1.5, 2.0, 3.0],
            "n": [1, 2, 3, 4],
        }
    )
    cols = [
        Column("flag", "binary"),
        Column("flag_missing", "binary"),
        Column("code", "categorical", categories=[1, 2, 3]),
        Column("colour", "categorical"),
        Column("x", "numeric"),
        Column("n", "numeric", integer=True),
    ]
    t = finalise(Table(df, cols, "toy.csv", 4))
    card = data_card("toy", {"kind": "table"}, t, [])
    write_outputs(t, card, tmp_path / "toy.parquet", tmp_path / "toy.json")
    held = {k: str(v) for k, v in pd.read_parquet(tmp_path / "toy.parquet").dtypes.items()}
    written = {c["name"]: c["dtype"] for c in json.loads((tmp_path / "toy.json").read_text())["columns"]}
    assert written == held
    assert written["flag"] == "int64" and written["colour"] == "category" and written["x"] == "float64"
    t = finalise(nltcs.read(fx.nltcs(tmp_path), {}))  # a real reader: 16 binary attributes
    write_outputs(t, data_card("nltcs", {"kind": "nltcs"}, t, []), tmp_path / "n.parquet", tmp_path / "n.json")
    held = {k: str(v) for k, v in pd.read_parquet(tmp_path / "n.parquet").dtypes.items()}
    written = {c["name"]: c["dtype"] for c in json.loads((tmp_path / "n.json").read_text())["columns"]}
    assert written == held and set(written.values()) == {"int64"}


def test_nltcs_with_zero_records(tmp_path):
    with pytest.raises(BadInput, match=r"nltcs\.dat: column 'a01', row 1: no rows"):
        finalise(nltcs.read(fx.nltcs(tmp_path, rows=()), {}))


def test_salary_file_cut_mid_row(tmp_path):
    files = [{"name": "san-francisco-2013.csv", "year": 2013}]
    p = fx.sf_2013(tmp_path)
    p.write_bytes(p.read_bytes()[:-40])  # the last record loses its last fields
    with pytest.raises(BadInput, match=r"san-francisco-2013\.csv: column '\w+', row 4"):
        salaries.read_sf({files[0]["name"]: p}, {"year": 2013, "salary_column": "base_pay"}, files)


# ------------------------------------------------ raw files re-verified at normalisation


def test_raw_file_altered_after_fetch_is_refused(tmp_path):
    """Issue 14 item 3: a changed raw file was normalised, and its new sha256 recorded with
    "checksum_from": "config"."""
    src = fx.write(tmp_path / "my.csv", "age,income,region\n30,1,a\n41,2,b\n")
    entry = _table_entry(src, PERSON)
    good = entry["files"][0]["sha256"]
    card = build_from_files("mine", entry, {"my.csv": src}, tmp_path / "a.parquet", tmp_path / "a.json")
    assert card["files"][0] == {"name": "my.csv", "sha256": good, "checksum_from": "config"}
    src.write_text("age,income,region\n30,1,a\n41,9,b\n")  # one byte changed
    bad = fx.sha256(src)
    with pytest.raises(ChecksumMismatch) as err:
        build_from_files("mine", entry, {"my.csv": src}, tmp_path / "b.parquet", tmp_path / "b.json")
    msg = str(err.value)
    assert str(src) in msg and good in msg and bad in msg and "config.yaml" in msg
    assert "Delete it" in msg and src.exists()
    assert not (tmp_path / "b.parquet").exists() and not (tmp_path / "b.json").exists()


def test_lock_checked_file_altered_after_fetch_is_refused(tmp_path):
    body = b"age,income,region\n30,1,a\n40,2,b\n"  # two rows: a one-row column has a degenerate domain
    with fx.web_server({"/live.csv": lambda q: (200, body)}) as base:
        entry = {
            "kind": "table",
            "files": [{"name": "live.csv", "sha256": "lock", "url": f"{base}/live.csv"}],
            "options": {"columns": PERSON},
        }
        dest = tmp_path / "raw" / "live.csv"
        fetch("live", entry, "live.csv", dest, "", log=lambda m: None)
    card = build_from_files("live", entry, {"live.csv": dest}, tmp_path / "a.parquet", tmp_path / "a.json")
    assert card["files"][0]["checksum_from"] == "lock file (recorded on first download)"
    dest.write_bytes(body.replace(b"30", b"31"))
    with pytest.raises(ChecksumMismatch, match=r"live\.csv\.sha256\.lock"):
        build_from_files("live", entry, {"live.csv": dest}, tmp_path / "b.parquet", tmp_path / "b.json")
    lock_path(dest).unlink()  # and a lock-checked file without its lock cannot be verified
    with pytest.raises(ChecksumMismatch, match=r"missing lock file"):
        build_from_files("live", entry, {"live.csv": dest}, tmp_path / "b.parquet", tmp_path / "b.json")


@pytest.mark.parametrize(
    "text, needle",
    [
        ("age,score\n30,0.5\n41,inf\n", r"column 'score', row 3: non-finite value inf"),
        ("age,score\n30,0.5\n41,-Infinity\n", r"column 'score', row 3: non-finite value -inf"),
        ("age,score\n30,0.5\n41,high\n", r"column 'score', row 3: not a number: 'high'"),
    ],
)
def test_a_user_csv_with_inf_or_text_in_a_numeric_column_names_file_column_row(tmp_path, text, needle):
    """Issue 54, untried probes: infinities and strings in a numeric column (NaN: above)."""
    src = fx.write(tmp_path / "my.csv", text)
    entry = _table_entry(src, {"age": {"type": "numeric", "domain": [0, 120]}, "score": {"type": "numeric"}})
    out = tmp_path / "out"
    with pytest.raises(BadInput, match=r"my\.csv: .*" + needle):
        build_from_files("mine", entry, {"my.csv": src}, out / "m.parquet", out / "m.json")
    assert not out.exists() or list(out.iterdir()) == []


def test_a_user_csv_of_one_row_or_with_duplicate_rows_is_data(tmp_path):
    """Issue 54, untried probes: one row (with a declared domain) and duplicate rows are legitimate
    data: built, every row kept and counted (a constant column with an observed domain is refused:
    test_a_degenerate_domain_is_refused_when_the_data_are_normalised)."""
    spec = {"age": {"type": "numeric", "domain": [0, 120]}}
    one = fx.write(tmp_path / "one.csv", "age\n30\n")
    card = build_from_files(
        "one", _table_entry(one, spec), {"one.csv": one}, tmp_path / "1.parquet", tmp_path / "1.json"
    )
    assert card["rows_after_cleaning"] == 1 and pd.read_parquet(tmp_path / "1.parquet")["age"].tolist() == [30]
    dup = fx.write(tmp_path / "dup.csv", "age\n30\n30\n30\n41\n")
    card = build_from_files(
        "dup", _table_entry(dup, spec), {"dup.csv": dup}, tmp_path / "2.parquet", tmp_path / "2.json"
    )
    assert card["rows_after_cleaning"] == 4 and card["dropped"] == []
