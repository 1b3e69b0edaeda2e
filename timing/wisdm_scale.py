"""SYNTHETIC accelerometer records in the format of the WISDM v1.1 raw file, at its size (not WISDM data).

    .venv/bin/python -m timing.wisdm_scale OUT_DIR [--fraction 0.01]

Writes ``SYNTHETIC_WISDM_ar_latest.tar.gz``, a gzip'd tar holding
``SYNTHETIC_WISDM_ar_v1.1/WISDM_ar_v1.1_raw.txt`` (the member name the reader looks for, as in the
official ``WISDM_ar_latest.tar.gz``), in the raw file's format (WISDM_ar_v1.1_raw_about.txt):
one record ``user,activity,timestamp,x,y,z;`` per line, users 1..36, the six activities in the
about file's class shares, in sessions of one user and one activity sampled at 20 Hz (timestamps
50 ms apart, in nanoseconds), accelerations with seven decimals inside [-20, 20]. A few records
are malformed as in the real file (several records on one line, an empty field, a trailing
``,;``), so that the reader's drop path is timed too. The values are draws from simple made-up
laws (per-activity means and spreads), meant only to time the pipeline at the raw file's size
(1,098,207 records, the about file's count); every file name and the tar's directory say SYNTHETIC.
"""

from __future__ import annotations

import argparse
import gzip
import io
import tarfile
from pathlib import Path

import numpy as np

from ldprepro.pipeline.seeding import rng_for

#: Records of the raw file (WISDM_ar_v1.1_raw_about.txt, "Number of examples").
PAPER_SIZE = 1_098_207
#: Class distribution of the raw file (WISDM_ar_v1.1_raw_about.txt), records per activity.
ACTIVITY_RECORDS = {
    "Walking": 424_400,
    "Jogging": 342_177,
    "Upstairs": 122_869,
    "Downstairs": 100_427,
    "Sitting": 59_939,
    "Standing": 48_395,
}
USERS = 36
#: Made-up (mean, spread) of x, y, z per activity (gravity ≈ 9.81 on the axis pointing down).
LAWS = {
    "Walking": ((0.0, 8.5, 0.5), (4.0, 5.0, 3.5)),
    "Jogging": ((-0.5, 6.0, 0.0), (7.0, 7.0, 5.0)),
    "Upstairs": ((0.3, 8.0, 0.8), (3.5, 4.0, 3.0)),
    "Downstairs": ((0.5, 8.5, 0.7), (4.0, 5.0, 3.0)),
    "Sitting": ((1.5, 2.0, 9.0), (0.4, 0.4, 0.4)),
    "Standing": ((0.5, 9.5, 0.8), (0.4, 0.4, 0.4)),
}
#: One record in this many is malformed (a kind each, in turn).
MALFORMED_EVERY = 50_000
SESSION = 2_000  # records per (user, activity) session
ARCNAME = "SYNTHETIC_WISDM_ar_v1.1/WISDM_ar_v1.1_raw.txt"
FILE_NAME = "SYNTHETIC_WISDM_ar_latest.tar.gz"


def raw_text(n: int, seed: int = 0) -> str:
    """The raw file's text with n records (fewer lines: some lines hold two records)."""
    rng = rng_for(seed, "wisdm-scale")
    shares = np.array(list(ACTIVITY_RECORDS.values()), dtype=float)
    acts = list(ACTIVITY_RECORDS)
    n_sessions = max(1, -(-n // SESSION))
    act = rng.choice(len(acts), size=n_sessions, p=shares / shares.sum())
    user = rng.integers(1, USERS + 1, size=n_sessions)
    session = np.minimum(np.arange(n) // SESSION, n_sessions - 1)
    a = act[session]
    mean = np.array([LAWS[x][0] for x in acts])[a]
    sd = np.array([LAWS[x][1] for x in acts])[a]
    xyz = np.clip(mean + sd * rng.standard_normal((n, 3)), -19.6, 19.6)
    start = rng.integers(10**12, 5 * 10**13, size=n_sessions)
    stamp = start[session] + (np.arange(n) - session * SESSION) * 50_000_000
    names = np.array(acts)[a]
    u = user[session]
    lines = [f"{u[i]},{names[i]},{stamp[i]},{xyz[i, 0]:.7f},{xyz[i, 1]:.7f},{xyz[i, 2]:.7f};" for i in range(n)]
    for k, i in enumerate(range(MALFORMED_EVERY // 2, n - 1, MALFORMED_EVERY)):
        kind = k % 3
        if kind == 0:  # two records on one line (both valid)
            lines[i] = lines[i] + lines[i + 1]
            lines[i + 1] = ""
        elif kind == 1:  # an empty z
            lines[i] = lines[i].rsplit(",", 1)[0] + ",;"
        else:  # the real file's trailing ",;" on a record that is otherwise whole
            lines[i] = lines[i][:-1] + ",;"
    return "\n".join(line for line in lines if line) + "\n"


def generate(out_dir: Path, n: int, seed: int = 0) -> Path:
    """Write ``FILE_NAME`` with n records under out_dir (reused when already written for n) and
    return its path. Byte-reproducible: fixed tar and gzip timestamps."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / FILE_NAME
    stamp = out_dir / f"{FILE_NAME}.records"
    if path.exists() and stamp.exists() and stamp.read_text().strip() == f"{n} {seed}":
        return path
    data = raw_text(n, seed).encode()
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0, filename="") as gz:
        with tarfile.open(fileobj=gz, mode="w") as tar:
            info = tarfile.TarInfo(ARCNAME)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    tmp.replace(path)
    stamp.write_text(f"{n} {seed}\n")
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--fraction", type=float, default=1.0)
    args = parser.parse_args(argv)
    print(generate(args.out_dir, max(1, round(PAPER_SIZE * args.fraction))))


if __name__ == "__main__":
    main()
