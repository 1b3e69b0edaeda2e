"""Start-up of every Snakemake job script (workflow/scripts/*.py): call :func:`start` first.

- pins BLAS/OpenMP threads to the rule's ``threads`` (environment variables set before numpy is
  imported; this module imports nothing heavy, so the script must import it first);
- sends the ``logging`` records and Python warnings of the job to ``snakemake.log[0]`` (and a
  traceback there if the job fails), so every rule's log says what the job did;
- :func:`progress` writes progress lines to the log, and to the console at most once a minute, so
  long jobs (HierA, LDP-SGD, LREMH) show they are alive without flooding a run of 100+ jobs;
- loads config.yaml's ``mechanism_plugins`` in the jobs whose code fingerprint includes them, and has
  every plugin mechanism the job builds verified (``registry.require_verified_plugins``).
"""

from __future__ import annotations

import atexit
import importlib
import logging
import os
import resource
import sys
import time

THREAD_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
CONSOLE_EVERY_S = 60.0

log = logging.getLogger("ldprepro")
_state = {"name": "job", "last_console": 0.0, "t0": 0.0}


class _Tee:
    """A stdout that also writes each complete line to the job log's handler."""

    def __init__(self, stream, handler):
        self.stream, self.handler, self.buffer = stream, handler, ""

    def write(self, text):
        self.stream.write(text)
        self.buffer += text
        *lines, self.buffer = self.buffer.split("\n")
        for line in lines:
            if line.strip():
                self.handler.stream.write(line + "\n")
        self.handler.flush()
        return len(text)

    def flush(self):
        self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)


def pin_threads(threads: int) -> None:
    """Limit BLAS/OpenMP pools to ``threads`` (effective only before numpy is first imported)."""
    for var in THREAD_VARS:
        os.environ[var] = str(max(1, int(threads)))


def start(smk) -> logging.Logger:
    """Set up a job: threads, log file, warnings. ``smk`` is the script's ``snakemake`` object."""
    pin_threads(getattr(smk, "threads", 1) or 1)
    name = smk.rule + (
        "" if not dict(smk.wildcards.items()) else "[" + ", ".join(f"{k}={v}" for k, v in smk.wildcards.items()) + "]"
    )
    _state.update(name=name, last_console=time.monotonic(), t0=time.monotonic())
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    if len(smk.log):
        os.makedirs(os.path.dirname(smk.log[0]) or ".", exist_ok=True)
        handler = logging.FileHandler(smk.log[0], mode="w", encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        sys.stdout = _Tee(sys.stdout, handler)  # what package code prints (e.g. verdicts) lands in the log too
    logging.captureWarnings(True)
    # matplotlib / PIL debug chatter is not useful in a job log
    for noisy in ("matplotlib", "PIL", "fontTools"):
        logging.getLogger(noisy).setLevel(logging.WARNING)

    def excepthook(kind, value, tb):
        log.error("job failed", exc_info=(kind, value, tb))
        sys.__excepthook__(kind, value, tb)

    sys.excepthook = excepthook
    atexit.register(log_resources)
    log.info("%s: started (threads=%s)", name, getattr(smk, "threads", 1))
    plugins = (getattr(smk, "config", None) or {}).get("mechanism_plugins") or []
    if plugins and _runs_mechanisms(smk):
        # user mechanisms (config.yaml mechanism_plugins): registered before any job code runs.
        # Imported by name, not statically: the workflow's code fingerprint of a script follows its
        # static imports, and a job that uses no mechanism must not rerun when one changes (the
        # plugins' own files are fingerprinted by the workflow, common.smk `code`)
        registry = importlib.import_module("ldprepro.domain.mechanisms.registry")
        log.info("mechanism plugins %s registered %s", plugins, registry.load_plugins(plugins))
        # the audit and the benchmark judge a law themselves and report it "unverifiable"; every
        # other job refuses to run a plugin whose declared law fails the check
        registry.require_verified_plugins("report" if smk.rule in JUDGING_RULES else "strict")
    return log


#: rules that report a plugin's unverifiable law instead of failing on it (docs/audit.md)
JUDGING_RULES = ("audit_family", "benchmark_job", "benchmark_tables")


def _runs_mechanisms(smk) -> bool:
    """Whether the job's code fingerprint includes the plugins (common.smk ``code``): the data
    jobs' does not, so they neither rerun nor run plugin code when a plugin changes or breaks."""
    params = getattr(smk, "params", None)
    fingerprint = getattr(params, "code", None) if params is not None else None
    return not isinstance(fingerprint, str) or "+plugins:" in fingerprint


def progress(message: str, *args) -> None:
    """A progress line: always in the job log; on the console at most every CONSOLE_EVERY_S."""
    text = message % args if args else message
    log.info(text)
    now = time.monotonic()
    if now - _state["last_console"] >= CONSOLE_EVERY_S:
        _state["last_console"] = now
        print(f"[{_state['name']}, {now - _state['t0']:.0f} s] {text}", file=sys.stderr, flush=True)


#: The prefix of the last line of every job log: the job's own CPU time, wall time and peak RSS.
#: Snakemake's ``benchmark:`` files sample CPU time every 0.5 s for 15 s, then every 30 s, so a
#: job's last sample can miss up to 30 s of its CPU; timing/figure_times.py reads this line.
RESOURCES = "resources:"


def log_resources() -> None:
    """Log the process's CPU seconds (user + system, itself and its waited-for children), wall
    seconds since ``start`` and peak RSS, from ``getrusage`` at exit (registered by ``start``)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
    rss_mb = max(own.ru_maxrss, kids.ru_maxrss) / 1024.0  # KiB on Linux
    wall = time.monotonic() - _state["t0"]
    log.info("%s cpu_s=%.3f wall_s=%.3f max_rss_mb=%.1f", RESOURCES, cpu, wall, rss_mb)


def done(message: str = "done") -> None:
    log.info("%s: %s in %.1f s", _state["name"], message, time.monotonic() - _state["t0"])
