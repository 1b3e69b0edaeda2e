"""Download, mirror and checksum behaviour of ldprepro.data.fetch (local files and a local
web server only; no internet)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from data_fixtures import SOCRATA_HEADER, gzip_copy, sha256, socrata_rows, web_server, write
from ldprepro.data import fetch as F
from ldprepro.errors import ChecksumMismatch, DataUnavailable


@pytest.fixture
def payload(tmp_path) -> Path:
    return write(tmp_path / "src" / "file.csv", "a,b\n1,2\n" * 100)


def test_mirror_gzip_copy_verified(tmp_path, payload):
    mirror = tmp_path / "mirror"
    gz = gzip_copy(payload, mirror / "sub" / "file.csv.gz")
    spec = {"name": "file.csv", "sha256": sha256(payload), "mirror": "sub/file.csv.gz",
            "mirror_sha256": sha256(gz), "url": "http://unused.invalid/file.csv"}
    got = F.fetch_file("ds", spec, tmp_path / "raw" / "file.csv", mirror, log=lambda m: None)
    assert got.origin == "mirror"
    assert (tmp_path / "raw" / "file.csv").read_bytes() == payload.read_bytes()


def test_corrupt_mirror_copy_fails_with_expected_and_actual(tmp_path, payload):
    mirror = tmp_path / "mirror"
    write(mirror / "file.csv", payload.read_bytes()[:-3])  # a truncated copy
    spec = {"name": "file.csv", "sha256": sha256(payload), "mirror": "file.csv"}
    dest = tmp_path / "raw" / "file.csv"
    with pytest.raises(ChecksumMismatch) as err:
        F.fetch_file("ds", spec, dest, mirror, log=lambda m: None)
    assert sha256(payload) in str(err.value) and sha256(mirror / "file.csv") in str(err.value)
    assert not dest.exists() and list(dest.parent.iterdir()) == []  # nothing half-written
    assert (mirror / "file.csv").exists()  # the mirror itself is never deleted


def test_stored_gz_checksum_checked_before_decompressing(tmp_path, payload):
    mirror = tmp_path / "mirror"
    gzip_copy(payload, mirror / "file.csv.gz")
    spec = {"name": "file.csv", "sha256": sha256(payload), "mirror": "file.csv.gz",
            "mirror_sha256": "0" * 64}
    with pytest.raises(ChecksumMismatch, match="0{64}"):
        F.fetch_file("ds", spec, tmp_path / "raw" / "file.csv", mirror, log=lambda m: None)


def test_download_streams_and_verifies(tmp_path, payload):
    body = payload.read_bytes()
    with web_server({"/file.csv": lambda q: (200, body)}) as base:
        spec = {"name": "file.csv", "sha256": sha256(payload), "url": f"{base}/file.csv",
                "mirror": "file.csv"}
        got = F.fetch_file("ds", spec, tmp_path / "raw" / "file.csv", tmp_path / "empty-mirror",
                           log=lambda m: None)
    assert got.origin == "url" and (tmp_path / "raw" / "file.csv").read_bytes() == body


def test_download_mismatch_deletes_file(tmp_path, payload):
    with web_server({"/file.csv": lambda q: (200, b"tampered\n")}) as base:
        spec = {"name": "file.csv", "sha256": sha256(payload), "url": f"{base}/file.csv"}
        dest = tmp_path / "raw" / "file.csv"
        with pytest.raises(ChecksumMismatch, match="expected"):
            F.fetch_file("ds", spec, dest, "", log=lambda m: None)
    assert not dest.exists()


def test_server_error_is_retried(tmp_path, payload, monkeypatch):
    monkeypatch.setattr(F, "BACKOFF", 0.01)
    calls = []

    def flaky(q):
        calls.append(1)
        return (503, b"busy") if len(calls) < 2 else (200, payload.read_bytes())
    with web_server({"/f": flaky}) as base:
        spec = {"name": "f", "sha256": sha256(payload), "url": f"{base}/f"}
        F.fetch_file("ds", spec, tmp_path / "f", "", log=lambda m: None)
    assert len(calls) == 2


def test_offline_fails_fast_with_instructions(tmp_path):
    spec = {"name": "x.tar.gz", "sha256": "lock", "mirror": "wisdm/x.tar.gz",
            "url": "https://no-such-host.invalid/x.tar.gz"}
    t0 = time.monotonic()
    with pytest.raises(DataUnavailable) as err:
        F.fetch_file("wisdm", spec, tmp_path / "raw" / "x.tar.gz", tmp_path / "mirror",
                     log=lambda m: None)
    assert time.monotonic() - t0 < 10
    msg = str(err.value)
    assert "run again with internet access" in msg and str(tmp_path / "mirror" / "wisdm") in msg
    assert not (tmp_path / "raw" / "x.tar.gz").exists()


def test_lock_recorded_then_enforced(tmp_path):
    state = {"body": b"v1\n"}
    with web_server({"/live": lambda q: (200, state["body"])}) as base:
        spec = {"name": "live.csv", "sha256": "lock", "url": f"{base}/live"}
        dest = tmp_path / "raw" / "live.csv"
        first = F.fetch_file("ds", spec, dest, "", log=lambda m: None)
        assert F.read_lock(dest) == first.sha256 and F.lock_path(dest).exists()
        dest.unlink()
        F.fetch_file("ds", spec, dest, "", log=lambda m: None)  # same bytes: fine
        dest.unlink()
        state["body"] = b"v2\n"
        with pytest.raises(ChecksumMismatch, match=first.sha256):
            F.fetch_file("ds", spec, dest, "", log=lambda m: None)
        assert not dest.exists()


def test_socrata_pages_concatenated(tmp_path):
    rows = socrata_rows(7)

    def page(q):
        off, lim = int(q["$offset"][0]), int(q["$limit"][0])
        assert q["$order"] == [":id"] and q["fiscal_year"] == ["2019"]
        return 200, ("\n".join([SOCRATA_HEADER] + rows[off:off + lim]) + "\n").encode()
    with web_server({"/resource/k397-673e.csv": page}) as base:
        spec = {"domain": "x", "dataset": "k397-673e", "query": {"fiscal_year": 2019},
                "page_size": 3}
        dest = tmp_path / "nyc.csv"
        F.download_socrata(spec, dest, base=f"{base}/resource/k397-673e.csv")
    lines = dest.read_text().splitlines()
    assert lines[0] == SOCRATA_HEADER and lines[1:] == rows


def test_user_path_missing_says_what_to_do(tmp_path):
    spec = {"name": "a.csv", "sha256": "0" * 64, "path": str(tmp_path / "nope.csv")}
    with pytest.raises(DataUnavailable, match="does not exist"):
        F.fetch_file("mine", spec, tmp_path / "raw" / "a.csv", "", log=lambda m: None)
