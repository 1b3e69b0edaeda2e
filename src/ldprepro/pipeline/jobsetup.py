"""Start-up of every Snakemake job script (workflow/scripts/*.py): call :func:`start` first.

- pins BLAS/OpenMP threads to the rule's ``threads`` (environment variables set before numpy is
  imported; this module imports nothing heavy, so the script must import it first);
- keeps the memory the job frees for its next arrays (:func:`keep_freed_memory`), so a job that
  allocates large temporaries over and over does not pay the kernel to map and zero them each time;
- sends the ``logging`` records and Python warnings of the job to ``snakemake.log[0]`` (and a
  traceback there if the job fails), so every rule's log says what the job did;
- :func:`progress` writes progress lines to the log, and to the console at most once a minute, so
  long jobs (HierA, LDP-SGD, LREMH) show they are alive without flooding a run of 100+ jobs;
- loads config.yaml's ``mechanism_plugins`` in the jobs whose code fingerprint includes them, and has
  every plugin mechanism the job builds verified (``registry.require_verified_plugins``);
- gives the job a wall-time limit from its ``runtime`` resource (minutes; Snakemake's local executor
  enforces none): past it, :class:`JobTimeout` stops the job naming the mechanism it was running
  (:func:`watchdog`).
"""

from __future__ import annotations

import atexit
import ctypes
import faulthandler
import importlib
import logging
import os
import re
import resource
import signal
import sys
import threading
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
_state = {"name": "job", "rule": "job", "last_console": 0.0, "t0": 0.0, "setup_cpu": None}


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


#: glibc ``mallopt`` parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4
#: free memory at the top of the heap kept for reuse before glibc returns it to the system
KEEP_FREED_BYTES = 2**31 - 1


def keep_freed_memory() -> bool:
    """Serve every allocation from the C heap and keep what is freed there for the next one
    (glibc: ``mallopt(M_MMAP_MAX, 0)`` and a 2 GiB ``M_TRIM_THRESHOLD``), and stop numpy asking
    for transparent huge pages on its arrays (``NUMPY_MADVISE_HUGEPAGE=0``, read when numpy is
    imported). Returns whether the C library took the setting (False off glibc: nothing changes).

    Why: by default glibc maps each block over 32 MB afresh and unmaps it when freed, so a job
    that builds a large temporary per call (LREMH's likelihood matrix, an SGD fit's gathered rows)
    has the kernel fault in and zero every page of it every time: on LREMH's explicit EM that system
    time was most of the job's CPU (a one-off study, recorded in timing/records/allocator.md). The
    job's results are the same bytes. What it frees is kept rather than returned to the system
    until it exits, so its resident memory does not shrink after a peak, and a freed block too
    small for the next request stays beside it (a job's peak RSS can rise; the job logs' peaks
    are what timing/resources_fit.py calibrates ``mem_mb`` on). ``LDPREPRO_MALLOC=system`` keeps
    the defaults."""
    if os.environ.get("LDPREPRO_MALLOC", "").lower() == "system":
        return False
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    numpy = sys.modules.get("numpy")
    if numpy is not None:  # too late for the variable: tell numpy directly
        core = getattr(numpy, "_core", None) or numpy.core
        core.multiarray._set_madvise_hugepage(os.environ["NUMPY_MADVISE_HUGEPAGE"] != "0")
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS): leave the allocator alone
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, KEEP_FREED_BYTES))


def start(smk) -> logging.Logger:
    """Set up a job: threads, memory reuse, log file, warnings. ``smk`` is the script's ``snakemake`` object."""
    pin_threads(getattr(smk, "threads", 1) or 1)
    keep_freed_memory()
    name = smk.rule + (
        "" if not dict(smk.wildcards.items()) else "[" + ", ".join(f"{k}={v}" for k, v in smk.wildcards.items()) + "]"
    )
    _state.update(name=name, rule=smk.rule, last_console=time.monotonic(), t0=time.monotonic(), setup_cpu=None)
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
        if issubclass(kind, MemoryError):
            log.error(memory_hint(smk, name, value))
        sys.__excepthook__(kind, value, tb)

    sys.excepthook = excepthook
    atexit.register(log_resources)
    log.info("%s: started (threads=%s)", name, getattr(smk, "threads", 1))
    watchdog(smk, name)
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
        registry.require_verified_plugins("report" if smk.rule.startswith(JUDGING_RULES) else "strict")
    return log


def memory_hint(smk, name: str, error) -> str:
    """What a job that ran out of memory says (issue 54 item 4): the resource, its declared value and
    how to raise it."""
    declared = getattr(getattr(smk, "resources", None), "mem_mb", None)
    rule = getattr(smk, "rule", "job")
    return (
        f"{name}: out of memory ({type(error).__name__}: {str(error)[:200]}); its mem_mb resource is "
        f"{declared} MB (ldprepro.pipeline.resources, from the data's size, the repetitions, the ε count and "
        f"the users). Raise it: snakemake --set-resources {rule}:mem_mb=<MB> (or under set-resources in your "
        f"profile, e.g. profiles/slurm/config.yaml); a machine with less memory than that needs fewer "
        f"repetitions (reps, test_reps) or smaller sizes."
    )


#: rules that report a plugin's unverifiable law instead of failing on it (docs/audit.md), by the
#: prefix of their names (the benchmark's jobs are ``benchmark_job_<task>_<dataset>``)
JUDGING_RULES = ("audit_families", "benchmark_job", "benchmark_tables")


def _runs_mechanisms(smk) -> bool:
    """Whether the job's code fingerprint includes the plugins (common.smk ``code``): the data
    jobs' does not, so they neither rerun nor run plugin code when a plugin changes or breaks."""
    params = getattr(smk, "params", None)
    fingerprint = getattr(params, "code", None) if params is not None else None
    return not isinstance(fingerprint, str) or "+plugins:" in fingerprint


#: seconds after the limit at which a job whose Python code cannot be interrupted (a C loop
#: holding the interpreter) is ended by faulthandler, with every thread's traceback in the log
HARD_KILL_GRACE_S = 30.0


class JobTimeout(BaseException):
    """The job ran past its ``runtime`` resource (a BaseException, like KeyboardInterrupt, so that
    no ``except Exception`` in job or plugin code swallows it)."""


def _mechanism_in(frame) -> str:
    """The innermost mechanism being run in ``frame``'s stack ('' if none): a ``self`` that is a
    1-D mechanism (``law_check.describe`` names it as registered, with its class and file) or a
    multidimensional collection."""
    base = sys.modules.get("ldprepro.domain.mechanisms.base")
    multidim = sys.modules.get("ldprepro.domain.mechanisms.multidim")
    kinds = tuple(k for k in (getattr(base, "Mechanism", None), getattr(multidim, "MultiDimMechanism", None)) if k)
    while frame is not None and kinds:
        obj = frame.f_locals.get("self")
        if isinstance(obj, kinds):
            if base is not None and isinstance(obj, base.Mechanism):
                describe = importlib.import_module("ldprepro.domain.mechanisms.law_check").describe
                return f"{describe(obj)} at ε = {obj.eps:g}, in {frame.f_code.co_name}()"
            return f"{type(obj).__name__} {getattr(obj, 'name', '')} in {frame.f_code.co_name}()"
        frame = frame.f_back
    return ""


#: A local job is stopped after this many times its ``runtime`` resource: the resource is what a
#: cluster is asked for (sized for an unloaded node), the local limit only has to catch a job that
#: never ends, not a slow one on a loaded machine (CI runs many workflows on two cores at once).
LOCAL_RUNTIME_SLACK = 3.0


def watchdog(smk, name: str) -> float | None:
    """Stop a local job when it has run for ``LOCAL_RUNTIME_SLACK`` × its ``runtime`` resource
    (minutes): SIGALRM raises
    :class:`JobTimeout` naming the mechanism being run at that moment (or the code line), which the
    job log and the console show; if Python cannot get control (a C loop), faulthandler ends the
    process :data:`HARD_KILL_GRACE_S` later, writing every thread's traceback to the log. Returns the
    limit in seconds (None: no runtime resource, no limit)."""
    runtime = getattr(getattr(smk, "resources", None), "runtime", None)
    try:
        seconds = float(runtime) * 60.0 * LOCAL_RUNTIME_SLACK
    except (TypeError, ValueError):
        return None
    if not seconds > 0 or not hasattr(signal, "SIGALRM") or os.environ.get("SLURM_JOB_ID"):
        return None  # (on a cluster the scheduler enforces the same runtime)
    rule = getattr(smk, "rule", "job")

    def on_alarm(signum, frame):
        what = _mechanism_in(frame)
        here = f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}()" if frame else "?"
        running = f"while running {what}" if what else f"at {here}"
        raise JobTimeout(
            f"{name}: stopped after its wall-time limit of {seconds / 60:g} min ({LOCAL_RUNTIME_SLACK:g} × its "
            f"runtime resource of {float(runtime):g} min) {running}. "
            "If that mechanism never returns (a plugin's perturb that hangs), fix it; if the job is only "
            f"slow, raise the limit: snakemake --set-resources {rule}:runtime=<minutes>"
        )

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    stream = _log_stream()
    if stream is not None:
        faulthandler.dump_traceback_later(seconds + HARD_KILL_GRACE_S, exit=True, file=stream)
    return seconds


def _log_stream():
    """The job log's open file (for faulthandler, which needs a real file descriptor), or stderr."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.FileHandler) and handler.stream is not None:
            return handler.stream
    return sys.stderr


def progress(message: str, *args) -> None:
    """A progress line: always in the job log; on the console at most every CONSOLE_EVERY_S."""
    text = message % args if args else message
    log.info(text)
    now = time.monotonic()
    if now - _state["last_console"] >= CONSOLE_EVERY_S:
        _state["last_console"] = now
        print(f"[{_state['name']}, {now - _state['t0']:.0f} s] {text}", file=sys.stderr, flush=True)


#: The prefix of the last line of every job log: the job's own CPU time, wall time and peak RSS, the
#: CPU it spent before :func:`ready` (its fixed cost) and its rule. It is the pipeline's only record
#: of what a job cost (the rules declare no ``benchmark:`` files: Snakemake's timers sampled every
#: running job's memory maps from its own process, a third of its CPU, and missed up to 30 s of a
#: long job's CPU); the report's provenance and timing/ read it with :func:`logged_resources`.
RESOURCES = "resources:"
RESOURCES_LINE = re.compile(
    r"resources: cpu_s=([0-9.]+) wall_s=([0-9.]+) max_rss_mb=([0-9.]+)(?: setup_cpu_s=(\S+) rule=(\S+))?"
    r"(?: sys_cpu_s=([0-9.]+))?"
)


def logged_resources(text: str) -> dict | None:
    """The last ``resources:`` line of a job log's text as ``{cpu_s, wall_s, max_rss_mb,
    setup_cpu_s, rule, sys_cpu_s}`` (``setup_cpu_s`` and ``sys_cpu_s`` NaN and ``rule`` '?' in a
    log from before they existed), or None if the log has none (the job has not finished, or
    failed before its exit). ``sys_cpu_s`` is the part of ``cpu_s`` the kernel spent for the job."""
    found = RESOURCES_LINE.findall(text)
    if not found:
        return None
    cpu, wall, rss, setup, rule, system = found[-1]
    return {
        "cpu_s": float(cpu),
        "wall_s": float(wall),
        "max_rss_mb": float(rss),
        "setup_cpu_s": float(setup) if setup else float("nan"),
        "rule": rule or "?",
        "sys_cpu_s": float(system) if system else float("nan"),
    }


def log_resources() -> None:
    """Log the process's CPU seconds (user + system, itself and its waited-for children; the
    system part again as ``sys_cpu_s``), wall seconds since ``start`` and peak RSS, from
    ``getrusage`` at exit (registered by ``start``)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    system = own.ru_stime + kids.ru_stime
    cpu = own.ru_utime + kids.ru_utime + system
    rss_mb = max(own.ru_maxrss, kids.ru_maxrss) / 1024.0  # KiB on Linux
    wall = time.monotonic() - _state["t0"]
    setup = _state["setup_cpu"]
    log.info(
        "%s cpu_s=%.3f wall_s=%.3f max_rss_mb=%.1f setup_cpu_s=%s rule=%s sys_cpu_s=%.3f",
        RESOURCES,
        cpu,
        wall,
        rss_mb,
        "nan" if setup is None else f"{setup:.3f}",
        _state["rule"],
        system,
    )


def _own_cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def ready() -> None:
    """Mark the end of the job's fixed cost: the script calls it once its imports are done, before
    it reads any data. The CPU the process spent until then (the interpreter, Snakemake's script
    preamble and every import) is logged as ``setup_cpu_s`` (timing/figure_times.py sums it as the
    run's per-process fixed cost)."""
    _state["setup_cpu"] = _own_cpu()


def done(message: str = "done") -> None:
    """Log that the job finished. Called as the last statement of a job script (its ``__main__``),
    it then ends the process at once (:func:`_exit_now`): the job's outputs are written and closed,
    and what would follow is only the interpreter tearing down the modules it loaded."""
    log.info("%s: %s in %.1f s", _state["name"], message, time.monotonic() - _state["t0"])
    if sys._getframe(1).f_globals.get("__name__") == "__main__":
        _exit_now()


def _exit_now() -> None:
    """End a finished job without the interpreter's teardown: every exit handler runs as at a
    normal exit (:func:`log_resources`' line, ``logging.shutdown`` closing the log, the libraries'
    own handlers) and the standard streams are flushed, then ``os._exit(0)`` skips the garbage
    collection of numpy/pandas/matplotlib/numba's modules, which measured 0.2–0.45 CPU-s per job (the
    "outside the jobs' lines" of timing/figure_times.md). A job still running a non-daemon thread
    exits normally instead, so no thread's work is cut short."""
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return
    faulthandler.cancel_dump_traceback_later()
    if hasattr(signal, "ITIMER_REAL"):
        signal.setitimer(signal.ITIMER_REAL, 0)  # the watchdog
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(0)
