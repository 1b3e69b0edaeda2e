"""timing/wisdm_scale.py: SYNTHETIC records in the WISDM raw file's format are read by the real reader."""

import re

from data_fixtures import wisdm_raw

from ldprepro.data.readers import wisdm
from ldprepro.data.table import finalise
from timing import wisdm_scale as ws

#: A whole record as the raw file writes it (the about file's example, the fixture's first lines).
ACTS = "|".join(wisdm.ACTIVITIES)
RECORD = re.compile(rf"\d+,({ACTS}),\d+,-?\d+\.\d+,-?\d+\.\d+,-?\d+\.\d+;")


def test_the_records_have_the_raw_files_format(tmp_path):
    fixture = wisdm_raw(tmp_path, tar=False).read_text().splitlines()
    assert RECORD.fullmatch(fixture[0]) and RECORD.fullmatch(fixture[1])  # the pattern fits the official format
    lines = ws.raw_text(3000).splitlines()
    assert sum(bool(RECORD.fullmatch(line)) for line in lines) == len(lines)  # no malformed one below 50 000


def test_the_real_reader_reads_the_generated_tarball(tmp_path, monkeypatch):
    monkeypatch.setattr(ws, "MALFORMED_EVERY", 200)
    monkeypatch.setattr(ws, "SESSION", 300)
    n = 1000
    path = ws.generate(tmp_path, n)
    assert "SYNTHETIC" in path.name and ws.ARCNAME.startswith("SYNTHETIC")
    assert ws.generate(tmp_path, n).read_bytes() == path.read_bytes()  # reproducible, reused
    t = finalise(wisdm.read({"w": path}, {}))
    # malformed every 200th record from the 100th: 5 of them, of kinds (two on a line, empty z,
    # trailing ",;") in turn; only the empty z is dropped
    assert t.rows_raw == n and t.drops[0].rows == 2 and len(t.df) == n - 2
    assert set(t.df["activity"]) <= set(wisdm.ACTIVITIES) and set(t.df["user"].astype(int)) <= set(range(1, 37))
    assert t.df[["x", "y", "z"]].abs().max().max() <= 20
