"""Download, mirror and checksum behaviour of ldprepro.data.fetch (local files and a local
web server only; no internet)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from data_fixtures import SOCRATA_HEADER, gzip_copy, sha256, socrata_rows, web_server, write

from ldprepro.data import fetch as F
from ldprepro.data.build import fetch
from ldprepro.pipeline.errors import ChecksumMismatch, DataUnavailable


@pytest.fixture(autouse=True)
def backoff_waits(monkeypatch) -> list:
    """pooch's back-off waits between retries, recorded instead of slept (1 s, 2 s, ...: the tests
    that retry would otherwise sleep 3.5 s each); a test reads them to check what was retried."""
    import types

    import pooch.core

    waits = []
    monkeypatch.setattr(pooch.core, "time", types.SimpleNamespace(sleep=waits.append))
    return waits


@pytest.fixture
def payload(tmp_path) -> Path:
    return write(tmp_path / "src" / "file.csv", "a,b\n1,2\n" * 100)


def test_mirror_gzip_copy_verified(tmp_path, payload):
    mirror = tmp_path / "mirror"
    gz = gzip_copy(payload, mirror / "sub" / "file.csv.gz")
    spec = {
        "name": "file.csv",
        "sha256": sha256(payload),
        "mirror": "sub/file.csv.gz",
        "mirror_sha256": sha256(gz),
        "url": "http://unused.invalid/file.csv",
    }
    got = F.fetch_file("ds", spec, tmp_path / "raw" / "file.csv", mirror, log=lambda m: None)
    assert got.origin == "mirror"
    assert (tmp_path / "raw" / "file.csv").read_bytes() == payload.read_bytes()


def test_corrupt_mirror_copy_without_url_is_unavailable_with_both_hashes(tmp_path, payload):
    mirror = tmp_path / "mirror"
    write(mirror / "file.csv", payload.read_bytes()[:-3])  # a truncated copy
    spec = {"name": "file.csv", "sha256": sha256(payload), "mirror": "file.csv"}
    dest = tmp_path / "raw" / "file.csv"
    logged = []
    with pytest.raises(DataUnavailable) as err:
        F.fetch_file("ds", spec, dest, mirror, log=logged.append)
    assert sha256(payload) in str(err.value) and sha256(mirror / "file.csv") in str(err.value)
    assert "corrupt" in str(err.value) and any("WARNING" in m for m in logged)
    assert not dest.exists() and list(dest.parent.iterdir()) == []  # nothing half-written
    assert (mirror / "file.csv").exists()  # the mirror itself is never deleted


def test_corrupt_mirror_falls_through_to_url_with_a_warning(tmp_path, payload):
    mirror = tmp_path / "mirror"
    write(mirror / "file.csv", payload.read_bytes()[:-3])
    logged = []
    with web_server({"/file.csv": lambda q: (200, payload.read_bytes())}) as base:
        spec = {"name": "file.csv", "sha256": sha256(payload), "mirror": "file.csv", "url": f"{base}/file.csv"}
        got = F.fetch_file("ds", spec, tmp_path / "raw" / "file.csv", mirror, log=logged.append)
    assert got.origin == "url"
    assert (tmp_path / "raw" / "file.csv").read_bytes() == payload.read_bytes()
    warning = [m for m in logged if m.startswith("WARNING")]
    assert len(warning) == 1 and str(mirror / "file.csv") in warning[0]
    assert sha256(mirror / "file.csv") in warning[0]


def test_corrupt_mirror_and_unreachable_url_recorded_unavailable(tmp_path, payload, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mirror = tmp_path / "mirror"
    write(mirror / "file.csv", payload.read_bytes()[:-3])
    with web_server({}) as base:  # every path: 404
        entry = {
            "kind": "table",
            "files": [{"name": "file.csv", "sha256": sha256(payload), "mirror": "file.csv", "url": f"{base}/file.csv"}],
        }
        with pytest.raises(DataUnavailable) as err:
            fetch("ds", entry, "file.csv", tmp_path / "raw" / "file.csv", str(mirror), log=lambda m: None)
    assert "corrupt" in str(err.value) and "HTTP 404" in str(err.value)
    record = json.loads((tmp_path / "logs" / "unavailable" / "ds.json").read_text())
    assert record["reason"] == err.value.reason and "corrupt" in record["reason"]


def test_corrupt_mirror_and_corrupt_download_is_a_checksum_error(tmp_path, payload):
    mirror = tmp_path / "mirror"
    write(mirror / "file.csv", payload.read_bytes()[:-3])
    with web_server({"/file.csv": lambda q: (200, b"tampered\n")}) as base:
        spec = {"name": "file.csv", "sha256": sha256(payload), "mirror": "file.csv", "url": f"{base}/file.csv"}
        with pytest.raises(ChecksumMismatch) as err:
            F.fetch_file("ds", spec, tmp_path / "raw" / "file.csv", mirror, log=lambda m: None)
    assert sha256(payload) in str(err.value)
    assert hashlib.sha256(b"tampered\n").hexdigest() in str(err.value)
    assert list((tmp_path / "raw").iterdir()) == []


@pytest.mark.parametrize("bad", ["../../../../etc/passwd", "/etc/passwd", "sub/../../x"])
def test_mirror_path_cannot_escape_the_mirror(tmp_path, monkeypatch, bad):
    def opened(*a, **k):
        raise AssertionError("a file was opened")

    monkeypatch.setattr(F, "_copy_mirror", opened)
    monkeypatch.setattr(F, "sha256_file", opened)
    (tmp_path / "mirror").mkdir()
    spec = {"name": "passwd", "sha256": "0" * 64, "mirror": bad}
    with pytest.raises(F.UnsafePath, match=r"mirror path of 'passwd'.*leaves its directory"):
        F.fetch_file("ds", spec, tmp_path / "raw" / "passwd", tmp_path / "mirror", log=lambda m: None)
    assert not (tmp_path / "raw").exists()


def test_mirror_symlink_pointing_outside_is_refused(tmp_path, monkeypatch):
    outside = write(tmp_path / "secret.txt", "secret\n")
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / "link.txt").symlink_to(outside)
    spec = {"name": "link.txt", "sha256": sha256(outside), "mirror": "link.txt"}
    with pytest.raises(F.UnsafePath, match="outside"):
        F.fetch_file("ds", spec, tmp_path / "raw" / "link.txt", tmp_path / "mirror", log=lambda m: None)


@pytest.mark.parametrize("name", ["..", ".", "a/b", "..\\x"])
def test_file_name_cannot_escape_the_raw_directory(tmp_path, name):
    spec = {"name": name, "sha256": "0" * 64, "url": "http://unused.invalid/x"}
    with pytest.raises(F.UnsafePath, match="not a plain file name"):
        F.fetch_file("ds", spec, tmp_path / "raw" / "x", "", log=lambda m: None)


def test_stored_gz_checksum_checked_before_decompressing(tmp_path, payload):
    mirror = tmp_path / "mirror"
    gzip_copy(payload, mirror / "file.csv.gz")
    spec = {"name": "file.csv", "sha256": sha256(payload), "mirror": "file.csv.gz", "mirror_sha256": "0" * 64}
    with pytest.raises(DataUnavailable, match="expected 0{64}"):  # no URL to fall back to
        F.fetch_file("ds", spec, tmp_path / "raw" / "file.csv", mirror, log=lambda m: None)


def test_a_missing_mirror_folder_is_named_as_missing(tmp_path, payload):
    """Issue 29: a mirror folder that does not exist is reported as such, not as 'not in the mirror'."""
    spec = {"name": "file.csv", "sha256": sha256(payload), "mirror": "file.csv"}
    with pytest.raises(DataUnavailable) as err:
        F.fetch_file("ds", spec, tmp_path / "raw" / "file.csv", tmp_path / "no-such-mirror", log=lambda m: None)
    assert f"the mirror folder {tmp_path / 'no-such-mirror'} does not exist" in str(err.value)
    assert "not in the mirror" not in str(err.value)
    (tmp_path / "mirror").mkdir()
    with pytest.raises(DataUnavailable, match="not in the mirror"):  # the folder is there, the file is not
        F.fetch_file("ds", spec, tmp_path / "raw" / "file.csv", tmp_path / "mirror", log=lambda m: None)


def test_download_streams_and_verifies(tmp_path, payload):
    body = payload.read_bytes()
    with web_server({"/file.csv": lambda q: (200, body)}) as base:
        spec = {"name": "file.csv", "sha256": sha256(payload), "url": f"{base}/file.csv", "mirror": "file.csv"}
        got = F.fetch_file("ds", spec, tmp_path / "raw" / "file.csv", tmp_path / "empty-mirror", log=lambda m: None)
    assert got.origin == "url" and (tmp_path / "raw" / "file.csv").read_bytes() == body


def test_download_mismatch_names_both_hashes_and_leaves_nothing(tmp_path, payload):
    with web_server({"/file.csv": lambda q: (200, b"tampered\n")}) as base:
        spec = {"name": "file.csv", "sha256": sha256(payload), "url": f"{base}/file.csv"}
        dest = tmp_path / "raw" / "file.csv"
        with pytest.raises(ChecksumMismatch) as err:
            F.fetch_file("ds", spec, dest, "", log=lambda m: None)
    assert err.value.expected == sha256(payload)
    assert err.value.actual == hashlib.sha256(b"tampered\n").hexdigest()
    assert f"{base}/file.csv" in str(err.value)
    assert list(dest.parent.iterdir()) == []  # no file, no temporary left behind


def test_server_error_is_retried(tmp_path, payload, backoff_waits):
    calls = []

    def flaky(q):
        calls.append(1)
        return (503, b"busy") if len(calls) < 2 else (200, payload.read_bytes())

    with web_server({"/f": flaky}) as base:
        spec = {"name": "f", "sha256": sha256(payload), "url": f"{base}/f"}
        got = F.fetch_file("ds", spec, tmp_path / "f", "", log=lambda m: None)
    assert len(calls) == 2 and got.origin == "url"
    assert backoff_waits == [1]  # pooch waited once before its retry


def test_server_that_keeps_failing_is_unavailable_in_one_line(tmp_path):
    with web_server({"/f": lambda q: (500, b"down")}) as base:
        spec = {"name": "f", "sha256": "0" * 64, "url": f"{base}/f"}
        with pytest.raises(DataUnavailable) as err:
            F.fetch_file("ds", spec, tmp_path / "f", "", log=lambda m: None)
    assert "HTTP 500" in str(err.value) and "\n" not in str(err.value)


def test_offline_fails_fast_with_instructions(tmp_path, backoff_waits):
    """Offline (the host does not resolve) is not retried: no back-off wait, one line of advice.
    Checked by counting the waits, not by timing (the machine's speed must not matter)."""
    spec = {
        "name": "x.tar.gz",
        "sha256": "lock",
        "mirror": "wisdm/x.tar.gz",
        "url": "https://no-such-host.invalid/x.tar.gz",
    }
    with pytest.raises(DataUnavailable) as err:
        F.fetch_file("wisdm", spec, tmp_path / "raw" / "x.tar.gz", tmp_path / "mirror", log=lambda m: None)
    assert backoff_waits == []
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
        return 200, ("\n".join([SOCRATA_HEADER] + rows[off : off + lim]) + "\n").encode()

    with web_server({"/resource/k397-673e.csv": page}) as base:
        spec = {"domain": "x", "dataset": "k397-673e", "query": {"fiscal_year": 2019}, "page_size": 3}
        dest = tmp_path / "nyc.csv"
        F.download_socrata(spec, dest, base=f"{base}/resource/k397-673e.csv")
    lines = dest.read_text().splitlines()
    assert lines[0] == SOCRATA_HEADER and lines[1:] == rows


def test_user_path_missing_says_what_to_do(tmp_path):
    spec = {"name": "a.csv", "sha256": "0" * 64, "path": str(tmp_path / "nope.csv")}
    with pytest.raises(DataUnavailable, match="does not exist"):
        F.fetch_file("mine", spec, tmp_path / "raw" / "a.csv", "", log=lambda m: None)


def test_mirror_first_the_url_is_not_asked(tmp_path, payload):
    mirror = tmp_path / "mirror"
    write(mirror / "file.csv", payload.read_bytes())
    hits = []
    with web_server({"/file.csv": lambda q: hits.append(1) or (200, b"other")}) as base:
        spec = {"name": "file.csv", "sha256": sha256(payload), "mirror": "file.csv", "url": f"{base}/file.csv"}
        got = F.fetch_file("ds", spec, tmp_path / "raw" / "file.csv", mirror, log=lambda m: None)
    assert got.origin == "mirror" and hits == []


def test_socrata_failing_page_leaves_nothing_and_is_unavailable(tmp_path):
    rows = socrata_rows(7)

    def page(q):
        off, lim = int(q["$offset"][0]), int(q["$limit"][0])
        if off >= 3:
            return 500, b"server error"
        return 200, ("\n".join([SOCRATA_HEADER] + rows[off : off + lim]) + "\n").encode()

    with web_server({"/resource/k397-673e.csv": page}) as base:
        spec = {
            "name": "nyc.csv",
            "sha256": "lock",
            "socrata": {"domain": base.split("//")[1], "dataset": "k397-673e", "page_size": 3},
        }
        dest = tmp_path / "raw" / "nyc.csv"
        with pytest.raises(F.NetworkUnavailable, match="HTTP 500"):
            F.download_socrata(
                spec["socrata"], dest, base=f"{base}/resource/k397-673e.csv", retries=0, log=lambda m: None
            )
    assert not dest.exists() and list(dest.parent.iterdir()) == []


# --------------------------------------------------------------------------------------------
# issue 54 item 1: a raw file already in place is never lost


def test_a_verified_file_in_place_is_kept_and_nothing_is_fetched(tmp_path, payload):
    """Whatever its modification time: the mirror and the URL are not asked, the bytes not rewritten."""
    dest = write(tmp_path / "raw" / "file.csv", payload.read_bytes())
    old = 946684800
    import os

    os.utime(dest, (old, old))
    hits, logged = [], []
    with web_server({"/file.csv": lambda q: hits.append(1) or (200, b"other")}) as base:
        spec = {"name": "file.csv", "sha256": sha256(payload), "mirror": "file.csv", "url": f"{base}/file.csv"}
        got = F.fetch_file("ds", spec, dest, tmp_path / "no-mirror", log=logged.append)
    assert got.origin == "kept" and hits == [] and dest.stat().st_mtime == old
    assert any("already here and verified" in m for m in logged)


def test_a_changed_file_offline_is_kept_and_the_message_says_so(tmp_path, payload):
    dest = write(tmp_path / "raw" / "file.csv", "altered\n")
    spec = {"name": "file.csv", "sha256": sha256(payload), "url": "http://no-such-host.invalid/file.csv"}
    with pytest.raises(DataUnavailable) as err:
        F.fetch_file("ds", spec, dest, "", log=lambda m: None)
    assert dest.read_text() == "altered\n"
    msg = str(err.value)
    assert f"{dest} was kept untouched" in msg and sha256(dest) in msg and sha256(payload) in msg
    assert [p.name for p in dest.parent.iterdir()] == ["file.csv"]  # nothing half-fetched beside it


def test_a_changed_file_is_replaced_only_by_bytes_that_verify(tmp_path, payload):
    dest = write(tmp_path / "raw" / "file.csv", "altered\n")
    body = {"bytes": b"wrong\n"}
    with web_server({"/file.csv": lambda q: (200, body["bytes"])}) as base:
        spec = {"name": "file.csv", "sha256": sha256(payload), "url": f"{base}/file.csv"}
        with pytest.raises(ChecksumMismatch, match="kept untouched"):
            F.fetch_file("ds", spec, dest, "", log=lambda m: None)
        assert dest.read_text() == "altered\n"
        body["bytes"] = payload.read_bytes()
        got = F.fetch_file("ds", spec, dest, "", log=lambda m: None)
    assert got.origin == "url" and dest.read_bytes() == payload.read_bytes()
    assert [p.name for p in dest.parent.iterdir()] == ["file.csv"]


def test_the_download_record_and_the_start_of_run_check(tmp_path, payload, monkeypatch):
    """The download job's output is its record; a raw file removed or resized by hand drops the record
    at the start of the next run (so that run fetches it again); an intact one keeps it."""
    from ldprepro.pipeline.integrity import repair

    monkeypatch.chdir(tmp_path)
    mirror = tmp_path / "mirror"
    write(mirror / "file.csv", payload.read_bytes())
    entry = {"files": [{"name": "file.csv", "sha256": sha256(payload), "mirror": "file.csv"}]}
    record = Path("data/verified/ds/file.csv.json")
    fetch("ds", entry, "file.csv", Path("data/raw/ds/file.csv"), str(mirror), log=lambda m: None, verified=record)
    body = json.loads(record.read_text())
    assert body == {"checksum_from": "config", "file": "data/raw/ds/file.csv", "name": "file.csv",
                    "sha256": sha256(payload), "size": payload.stat().st_size}  # fmt: skip
    assert repair(log=lambda m: None) == [] and record.exists()
    Path("data/raw/ds/file.csv").write_text("shorter\n")
    assert [p for p, _ in repair(log=lambda m: None)] == [str(record)]
    fetch("ds", entry, "file.csv", Path("data/raw/ds/file.csv"), str(mirror), log=lambda m: None, verified=record)
    Path("data/raw/ds/file.csv").unlink()
    assert "which is gone" in repair(log=lambda m: None)[0][1] and not record.exists()
