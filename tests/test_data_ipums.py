"""IPUMS: API failures become "not available: <reason>" in one line, and the API key never
appears in an error, a log, a record or a data card; extracts are read with ipumspy when it is
installed and with the built-in reader otherwise, to the same table."""

from __future__ import annotations

import copy
import json
import sys
import types
from pathlib import Path

import data_fixtures as fx
import pandas as pd
import pytest

from ldprepro.data import ipums_api
from ldprepro.data.build import build_ipums, exit_if_unavailable, log_to
from ldprepro.data.readers import ipums
from ldprepro.data.table import finalise
from ldprepro.pipeline.errors import BadInput, DataUnavailable

KEY = "dummy-ipums-key-5f3a9c1e"
ENTRY = {
    "kind": "ipums",
    "options": {
        "collection": "ipumsi",
        "sample": "br2010a",
        "numeric": {"AGE": {"domain": [0, 120]}},
        "categorical": {"SEX": {"missing_codes": [9]}},
    },
}


def _leaks(tmp_path: Path, err: BaseException, captured: str) -> list[str]:
    """Every place the key shows up: exception text/repr/chain, logs, records, outputs."""
    places = []
    chain, e = [], err
    while e is not None:
        chain.append(e)
        e = e.__cause__ or e.__context__
    for e in chain:
        if KEY in str(e) or KEY in repr(e) or KEY in repr(e.args):
            places.append(f"exception {type(e).__name__}")
    if KEY in captured:
        places.append("stdout/stderr")
    for p in tmp_path.rglob("*"):
        if p.is_file() and KEY.encode() in p.read_bytes():
            places.append(str(p))
    return places


def _run(tmp_path, capfd) -> tuple[DataUnavailable, str]:
    log = log_to(tmp_path / "logs" / "data" / "ipums" / "ipums_br.log")
    with pytest.raises(DataUnavailable) as err:
        build_ipums("ipums_br", ENTRY, tmp_path / "o.parquet", tmp_path / "o.json", log=log)
    out, errout = capfd.readouterr()
    return err.value, out + errout


def _stub_ipumspy(monkeypatch, submit):
    class Client:
        def __init__(self, key, **kw):
            self.key = key

        def submit_extract(self, ex):
            submit(self.key)

    monkeypatch.setitem(
        sys.modules,
        "ipumspy",
        types.SimpleNamespace(IpumsApiClient=Client, MicrodataExtract=lambda **kw: types.SimpleNamespace(**kw)),
    )


@pytest.fixture
def keyed(tmp_path, monkeypatch):
    monkeypatch.setenv("IPUMS_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)


class IpumsApiException(Exception):
    pass


def test_offline_api_is_unavailable_in_one_line_without_the_key(tmp_path, keyed, monkeypatch, capfd):
    def submit(key):  # what ipumspy raises offline, with the key thrown in for the worst case
        raise IpumsApiException(
            f"other error occured: HTTPSConnectionPool(host='api.ipums.org', port=443): Max "
            f'retries exceeded (Caused by NameResolutionError("Failed to resolve '
            f"'api.ipums.org'\")) headers={{'Authorization': '{key}'}}"
        )

    _stub_ipumspy(monkeypatch, submit)
    err, captured = _run(tmp_path, capfd)
    assert err.reason.startswith("cannot reach the IPUMS API: cannot resolve api.ipums.org")
    assert "\n" not in str(err) and len(str(err)) < 300
    assert err.__cause__ is None and err.__context__ is None
    record = json.loads((tmp_path / "logs/unavailable/ipums_br.json").read_text())
    assert record["reason"] == err.reason
    log = (tmp_path / "logs/data/ipums/ipums_br.log").read_text()
    assert log.strip() == f"NOT AVAILABLE: {err}"
    assert not (tmp_path / "o.parquet").exists() and not (tmp_path / "o.json").exists()
    assert _leaks(tmp_path, err, captured) == []


def test_key_refused_reason_is_scrubbed(tmp_path, keyed, monkeypatch, capfd):
    class IpumsAPIAuthenticationError(Exception):
        pass

    def submit(key):
        raise IpumsAPIAuthenticationError(f"API key {key} is not valid")

    _stub_ipumspy(monkeypatch, submit)
    err, captured = _run(tmp_path, capfd)
    assert "refused the key in IPUMS_API_KEY" in err.reason and "***" in err.reason
    assert _leaks(tmp_path, err, captured) == []


def test_script_wrapper_exits_1_without_traceback(tmp_path, keyed, monkeypatch, capfd):
    def submit(key):
        raise RuntimeError(f"boom {key}")

    _stub_ipumspy(monkeypatch, submit)
    log = log_to(tmp_path / "job.log")
    with pytest.raises(SystemExit) as ex:
        exit_if_unavailable(
            lambda: build_ipums("ipums_br", ENTRY, tmp_path / "o.parquet", tmp_path / "o.json", log=log)
        )
    assert ex.value.code == 1 and ex.value.__suppress_context__  # no chained traceback
    captured = "".join(capfd.readouterr())
    lines = [ln for ln in captured.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("NOT AVAILABLE: dataset 'ipums_br'")
    assert "Traceback" not in captured and KEY not in captured
    assert KEY not in (tmp_path / "job.log").read_text()


# ------------------------------------------------------- the real ipumspy client, local server


def _real_client():
    return pytest.importorskip("ipumspy")


def test_real_ipumspy_key_refused_by_a_local_api(tmp_path, keyed, monkeypatch, capfd):
    """The real client against a local stand-in API that echoes the key back in its error."""
    _real_client()
    seen = []

    class Handler(fx._Handler):
        def do_POST(self):  # noqa: N802
            seen.append(self.headers.get("Authorization"))
            body = json.dumps({"error": f"key {self.headers.get('Authorization')} invalid"})
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

    with fx.web_server({}, handler=Handler) as base:
        monkeypatch.setattr(ipums_api, "API_URL", base)
        err, captured = _run(tmp_path, capfd)
    assert seen == [KEY]  # the key really was sent, and really came back in the error
    assert "refused the key" in err.reason
    assert _leaks(tmp_path, err, captured) == []


def test_real_ipumspy_unreachable_api(tmp_path, keyed, monkeypatch, capfd):
    _real_client()
    monkeypatch.setattr(ipums_api, "API_URL", "https://api.ipums.invalid")
    err, captured = _run(tmp_path, capfd)
    assert err.reason.startswith("cannot reach the IPUMS API")
    assert "\n" not in str(err) and _leaks(tmp_path, err, captured) == []


def test_probe_without_ipumspy_or_network(monkeypatch):
    monkeypatch.setattr(ipums_api.importlib.util, "find_spec", lambda name: None)
    assert "not installed" in ipums_api.probe()
    monkeypatch.undo()
    if ipums_api.importlib.util.find_spec("ipumspy") is None:
        pytest.skip("ipumspy not installed")
    monkeypatch.setattr(ipums_api, "API_URL", "https://api.ipums.invalid")
    assert ipums_api.probe() == ("cannot reach the IPUMS API (cannot resolve api.ipums.invalid: no network?)")


# ------------------------------------------------------------- reading: ipumspy and built-in

OPTS = {
    "numeric": {
        "AGE": {"domain": [0, 120]},
        "INCTOT": {"domain": "observed", "missing_codes": [9999998, 9999999]},
        "HRSWORK1": {"domain": "observed", "missing_codes": [998, 999]},
    },
    "categorical": {"SEX": {"missing_codes": [9]}},
}


@pytest.fixture(params=["ipumspy", "built-in"])
def reader(request, monkeypatch):
    if request.param == "ipumspy":
        pytest.importorskip("ipumspy")
    else:
        monkeypatch.setattr(ipums, "ipumspy_readers", None)
    return request.param


def _extract(d: Path, form: str, records=fx.IPUMS_RECORDS) -> tuple[Path, Path]:
    if form == "csv":
        return fx.ipums_csv(d, records), fx.ipums_ddi(d, "ipumsi_00002", "csv")
    return fx.ipums_fixed_width(d, records, gz=form == "fixed_gz"), fx.ipums_ddi(d)


@pytest.mark.parametrize("form", ["fixed_gz", "fixed", "csv"])
def test_both_readers_give_the_same_table(tmp_path, reader, form):
    data, ddi = _extract(tmp_path, form)
    t = finalise(ipums.read(data, ddi, OPTS))
    assert t.extra["ipums_reader"]["reader"].startswith(reader)
    assert t.rows_raw == 4 and len(t.df) == 1
    assert t.df["AGE"].tolist() == [34] and t.df["INCTOT"].tolist() == [12000]
    assert t.df["HRSWORK1"].tolist() == [40] and t.df.index.tolist() == [2 if form == "csv" else 1]
    assert sorted(d.rows for d in t.drops) == [1, 1, 1]
    assert t.extra["value_labels"]["SEX"]["2"] == "Female"
    if reader == "ipumspy":
        assert t.extra["ipums_reader"]["citation"].startswith("Minnesota Population Center")


def test_implied_decimals_both_readers(tmp_path, reader, monkeypatch):
    monkeypatch.setattr(fx, "IPUMS_VARS", [v if v[0] != "HRSWORK1" else ("HRSWORK1", 25, 27, 1) for v in fx.IPUMS_VARS])
    data, ddi = _extract(tmp_path, "fixed")
    opts = {"numeric": {"HRSWORK1": {"domain": "observed"}}, "categorical": {}}
    t = finalise(ipums.read(data, ddi, opts))
    assert t.df["HRSWORK1"].tolist() == [4.0, 99.9, 99.8, 4.4]


@pytest.mark.parametrize("form", ["fixed", "csv"])
def test_truncated_last_record_both_readers(tmp_path, reader, form):
    data, ddi = _extract(tmp_path, form)
    data.write_text(data.read_text()[:-6])  # the last record loses its last fields
    with pytest.raises(BadInput, match=rf"{data.name}: .*row [45]\b"):
        ipums.read(data, ddi, OPTS)


def test_header_only_csv_extract_both_readers(tmp_path, reader):
    data, ddi = _extract(tmp_path, "csv", records=[])
    with pytest.raises(BadInput, match=rf"{data.name}: .*no (data )?rows"):
        finalise(ipums.read(data, ddi, OPTS))


def test_ipumspy_falls_back_on_a_codebook_it_cannot_parse(tmp_path):
    pytest.importorskip("ipumspy")
    data = fx.ipums_fixed_width(tmp_path)
    ddi = fx.write(
        tmp_path / "minimal.xml",
        (
            '<codeBook xmlns="ddi:codebook:2_5"><dataDscr>'
            + "".join(f'<var name="{n}"><location StartPos="{s}" EndPos="{e}"/></var>' for n, s, e, _ in fx.IPUMS_VARS)
            + "</dataDscr></codeBook>"
        ),
    )
    t = finalise(ipums.read(data, ddi, OPTS))
    assert t.extra["ipums_reader"]["reader"].startswith("built-in (ipumspy could not parse")
    assert t.df["AGE"].tolist() == [34]


def test_user_extract_card_is_strict_json(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    entry = copy.deepcopy(ENTRY)
    data, ddi = _extract(tmp_path / "ex", "fixed_gz")
    entry["options"]["extract"] = {"data": data.name, "ddi": ddi.name}
    card = build_ipums("ipums_br", entry, tmp_path / "o.parquet", tmp_path / "o.json", extract_dir=str(tmp_path / "ex"))
    assert (
        json.loads((tmp_path / "o.json").read_text(), parse_constant=lambda c: pytest.fail(f"{c} in the card")) == card
    )
    assert len(pd.read_parquet(tmp_path / "o.parquet")) == 3


def test_an_earlier_api_download_is_used_offline_and_never_deleted(tmp_path, monkeypatch):
    """Issue 54 item 1 with IPUMS-format files: an extract downloaded through the API earlier (data,
    DDI and lock in data/raw/<dataset>/) is used without a key or network; altered afterwards, the
    job refuses it naming both hashes and leaves it in place (an extract can take hours to obtain)."""
    from ldprepro.data.fetch import sha256_file as sha
    from ldprepro.data.fetch import write_lock

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("IPUMS_API_KEY", raising=False)
    raw = tmp_path / "data" / "raw" / "ipums_br"
    data, ddi = _extract(raw, "fixed_gz")
    write_lock(data, sha(data), "IPUMS API extract (ipumsi, br2010a)")
    card = build_ipums("ipums_br", ENTRY, tmp_path / "o.parquet", tmp_path / "o.json")
    assert card["files"][0]["route"] == "IPUMS API (earlier download)"
    data.write_bytes(data.read_bytes() + b"\n")
    with pytest.raises(Exception, match="sha256") as err:
        build_ipums("ipums_br", ENTRY, tmp_path / "p.parquet", tmp_path / "p.json")
    assert "data/raw/ipums_br/ipumsi_00001.dat.gz" in str(err.value) and "Delete it" in str(err.value)
    assert data.exists() and ddi.exists()
