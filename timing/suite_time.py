"""The test suite's wall time, for the ≤ 10 min target of issue 27 (not a test).

    .venv/bin/python -m timing.suite_time [--log PYTEST_OUTPUT] [--out timing/suite.json]

Without ``--log`` it runs the README's test command's pytest part (``python -m pytest -q``, the
dataset mirror from ``LDPREPRO_DATA_MIRROR`` or ../shared/datasets) in this checkout and times it;
with ``--log`` it reads pytest's own summary line (``N passed ... in S s (H:MM:SS)``) from a saved
output, such as a ``.ci/run`` log. Writes the JSON atomically: passed, failed, skipped, errors,
pytest's seconds, the wall seconds of the whole command when it was run here, the machine's cores
and its load average at the start.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUMMARY = re.compile(r"=* ?(?P<body>(?:\d+ \w+(?:, )?)+) in (?P<seconds>[0-9.]+)s")


def parse_summary(text: str) -> dict:
    """The counts and seconds of pytest's last summary line in ``text``."""
    found = list(SUMMARY.finditer(text))
    if not found:
        raise SystemExit("no pytest summary line ('N passed ... in S s') in the output")
    last = found[-1]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", last.group("body"))}
    return {
        "passed": counts.get("passed", 0),
        "failed": counts.get("failed", 0),
        "skipped": counts.get("skipped", 0),
        "errors": counts.get("errors", counts.get("error", 0)),
        "pytest_seconds": float(last.group("seconds")),
    }


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", type=Path, help="a saved pytest output to read instead of running the suite")
    ap.add_argument("--out", type=Path, default=HERE / "suite.json")
    ap.add_argument("--source", help="with --log: what the log is (e.g. '.ci/run on a clean clone at <commit>')")
    args = ap.parse_args(argv)
    record = {"measured_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "cores": os.cpu_count()}
    if args.log:  # the machine's load when that run started is not known here
        text = args.log.read_text(encoding="utf-8", errors="replace")
        record.update(parse_summary(text), load_before=None, source=args.source or str(args.log))
    else:
        record["load_before"] = os.getloadavg()[0]
        env = dict(os.environ, MPLBACKEND="Agg")
        env.setdefault("LDPREPRO_DATA_MIRROR", str((HERE.parent.parent / "shared" / "datasets").resolve()))
        t0 = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q"], cwd=HERE.parent, env=env, capture_output=True, text=True
        )
        record.update(parse_summary(proc.stdout + proc.stderr), wall_s=time.monotonic() - t0, source="run here")
    tmp = args.out.with_name(f".{args.out.name}.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    tmp.replace(args.out)
    print(json.dumps(record))
    return record


if __name__ == "__main__":
    main()
