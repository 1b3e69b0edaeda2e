"""A real one-node SLURM cluster for the test suite (issue 15, item 5).

``SlurmCluster`` starts Debian's SLURM daemons (slurmctld, slurmd) and a private ``munged`` with
every state, spool, log, pid, key and socket file under one scratch directory, on TCP ports that
were free a moment before.

The configuration goes to the default path /etc/slurm/slurm.conf, as on a real cluster, not to a
scratch file named by ``SLURM_CONF``: snakemake-executor-plugin-slurm-jobstep (0.6) removes every
``SLURM_*`` variable before its nested ``srun``, so inside a job ``srun`` only finds the default
path ("Could not establish a configuration source"; plugin issue #164). The file carries a marker
line, is written only when absent or left by an earlier run of this harness, is removed at
teardown, and one cluster at a time holds ``LOCK`` (a second one waits for it).

Design choices (checked on Debian 12 with slurm-wlm 22.05, root, no systemd):
  * no accounting database (``AccountingStorageType=accounting_storage/none``): ``sacct`` answers
    "Slurm accounting storage is disabled", so job status must come from ``squeue``, and
    ``MinJobAge`` is one day so that finished jobs stay visible to ``squeue``;
  * no cgroups (``ProctrackType=proctrack/linuxproc``, ``TaskPlugin=task/none``), which need
    systemd or a writable cgroup tree that containers often lack;
  * memory enforced without cgroups: ``JobAcctGatherType=jobacct_gather/linux`` with
    ``JobAcctGatherParams=OverMemoryKill`` (sampled every second) kills a step whose processes'
    RSS passes its ``--mem``: the jobs of tests/test_slurm.py run under their rules' declared
    ``mem_mb``;
  * ``SlurmdParameters=config_overrides``: the node is declared with 2 CPUs whatever the host has,
    so the test runs the same on a 2-core laptop and a 64-core CI runner.

``ensure_installed`` installs the packages with apt-get when a binary is missing and raises
``SlurmSetupError`` with the command's output when it cannot: the test must fail, never skip.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

DAEMONS = ("slurmctld", "slurmd", "munged")
CLIENTS = ("sinfo", "sbatch", "squeue", "scontrol", "scancel", "srun")
APT_PACKAGES = ("slurm-wlm", "munge")
PARTITION = "ldprepro"
NODE_CPUS = 2
SYSTEM_CONF = Path("/etc/slurm/slurm.conf")
MARKER = "# written by ldprepro tests/slurm_cluster.py; removed when its test cluster stops"
LOCK = Path("/tmp/ldprepro-slurm-test.lock")


class SlurmSetupError(RuntimeError):
    """The cluster could not be installed, started or stopped; the message says which step."""


def _missing_binaries() -> list[str]:
    search = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/sbin"
    return [b for b in DAEMONS + CLIENTS if shutil.which(b, path=search) is None]


def _binary(name: str) -> str:
    path = shutil.which(name, path=os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/sbin")
    if path is None:
        raise SlurmSetupError(f"'{name}' not found on PATH or in /usr/sbin after installation")
    return path


def ensure_installed() -> None:
    """apt-get install slurm-wlm and munge if any daemon or client binary is missing.

    Runs ``apt-get update`` only when the first install attempt fails (a fresh container often
    has empty package lists). Needs root and apt-get; otherwise raises SlurmSetupError naming
    what is missing and how to install it.
    """
    missing = _missing_binaries()
    if not missing:
        return
    how = f"install them with: apt-get install -y {' '.join(APT_PACKAGES)}"
    if shutil.which("apt-get") is None:
        raise SlurmSetupError(f"SLURM binaries missing ({', '.join(missing)}) and no apt-get here; {how}")
    if os.geteuid() != 0:
        raise SlurmSetupError(f"SLURM binaries missing ({', '.join(missing)}) and not running as root; {how}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    # Wait for the dpkg lock rather than fail: another apt-get (an unattended upgrade, a parallel
    # test installing its own packages) may be holding it.
    lock = ["-o", "DPkg::Lock::Timeout=600"]
    install = ["apt-get", *lock, "install", "-y", "-q", "--no-install-recommends", *APT_PACKAGES]
    proc = subprocess.run(install, capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0:
        upd = subprocess.run(["apt-get", *lock, "update", "-q"], capture_output=True, text=True, env=env, timeout=900)
        if upd.returncode != 0:
            raise SlurmSetupError(f"apt-get update failed (exit {upd.returncode}):\n{upd.stderr[-3000:]}")
        proc = subprocess.run(install, capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0:
        raise SlurmSetupError(
            f"{' '.join(install)} failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        )
    still = _missing_binaries()
    if still:
        raise SlurmSetupError(f"after {' '.join(install)}, still missing: {', '.join(still)}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _meminfo_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    raise SlurmSetupError("/proc/meminfo has no MemTotal line")


def _tail(path: Path, n: int = 40) -> str:
    if not path.exists():
        return f"--- {path}: (not written)"
    lines = path.read_text(errors="replace").splitlines()[-n:]
    return f"--- {path} (last {len(lines)} lines):\n" + "\n".join(lines)


class SlurmCluster:
    """One node (this host, ``NODE_CPUS`` CPUs), one default partition ``PARTITION``.

    Use as a context manager: ``__enter__`` starts munged, slurmctld and slurmd and waits until
    ``sinfo`` reports the node idle; ``__exit__`` cancels leftover jobs and stops the daemons by
    their pid files, also when the body raised.
    """

    def __init__(self, root: Path, start_timeout: float = 60.0, extra_partitions: tuple[str, ...] = ()):
        self.root = Path(root)
        self.extra_partitions = tuple(extra_partitions)
        self.start_timeout = start_timeout
        self.node = socket.gethostname().split(".")[0]
        d = {name: self.root / name for name in ("state", "spool", "log", "run", "munge")}
        for p in d.values():
            p.mkdir(parents=True, exist_ok=True)
            p.chmod(0o700)
        self.conf = SYSTEM_CONF
        self._lock_fd: int | None = None
        self.munge_key = d["munge"] / "munge.key"
        self.munge_socket = d["munge"] / "munge.socket"
        self.pidfiles = {
            "slurmctld": d["run"] / "slurmctld.pid",
            "slurmd": d["run"] / "slurmd.pid",
            "munged": d["munge"] / "munged.pid",
        }
        self.logs = {
            "slurmctld": d["log"] / "slurmctld.log",
            "slurmd": d["log"] / "slurmd.log",
            "munged": d["munge"] / "munged.log",
        }
        self.dirs = d
        # Leave room for the OS and the test's own processes; slurmd rejects a node whose
        # RealMemory exceeds what it measures.
        total = _meminfo_mb()
        self.real_memory_mb = max(1024, total - max(1024, total // 10))
        self.env = {k: v for k, v in os.environ.items() if k != "SLURM_CONF"}

    # -- configuration ----------------------------------------------------------------------
    def write_conf(self) -> None:
        d = self.dirs
        ctld_port, slurmd_port = _free_port(), _free_port()
        lines = [
            MARKER,
            f"# scratch directory: {self.root}",
            "ClusterName=ldprepro-test",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={ctld_port}",
            f"SlurmdPort={slurmd_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={d['state']}",
            f"SlurmdSpoolDir={d['spool']}/%n",
            f"SlurmctldPidFile={self.pidfiles['slurmctld']}",
            f"SlurmdPidFile={self.pidfiles['slurmd']}",
            f"SlurmctldLogFile={self.logs['slurmctld']}",
            f"SlurmdLogFile={self.logs['slurmd']}",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "MpiDefault=none",
            "SwitchType=switch/none",
            "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            # Memory limits enforced without cgroups: slurmd samples each step's processes every
            # second (/proc) and kills a step whose RSS passes its --mem (OverMemoryKill), so a job
            # whose declared mem_mb is too small fails here as it would on a real cluster.
            "JobAcctGatherType=jobacct_gather/linux",
            "JobAcctGatherParams=OverMemoryKill",
            "JobAcctGatherFrequency=task=1",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "MinJobAge=86400",
            "ReturnToService=2",
            "SlurmdParameters=config_overrides",
            "SlurmdTimeout=60",
            "InactiveLimit=0",
            "KillWait=5",
            f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={NODE_CPUS} RealMemory={self.real_memory_mb} State=UNKNOWN",
            f"PartitionName={PARTITION} Nodes={self.node} Default=YES MaxTime=INFINITE State=UP",
            *(
                f"PartitionName={p} Nodes={self.node} Default=NO MaxTime=INFINITE State=UP"
                for p in self.extra_partitions
            ),
        ]
        self._claim_system_conf()
        self.conf.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.conf.with_name(f".{self.conf.name}.{os.getpid()}")
        tmp.write_text("\n".join(lines) + "\n")
        tmp.chmod(0o644)
        tmp.replace(self.conf)

    def _claim_system_conf(self, timeout: float = 900) -> None:
        """Take ``LOCK`` (waiting up to ``timeout`` s for another test cluster to stop), then
        make sure /etc/slurm/slurm.conf is absent or a leftover of this harness."""
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise SlurmSetupError(f"another test cluster held {LOCK} for more than {timeout:.0f} s") from None
                time.sleep(2)
        self._lock_fd = fd
        if self.conf.exists() and MARKER not in self.conf.read_text(errors="replace"):
            raise SlurmSetupError(
                f"{self.conf} exists and was not written by this test harness: this machine "
                f"has its own SLURM configuration, which the test will not overwrite"
            )

    def _release_system_conf(self) -> None:
        if self._lock_fd is None:
            return
        try:
            if self.conf.exists() and MARKER in self.conf.read_text(errors="replace"):
                self.conf.unlink()
        finally:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- daemons ----------------------------------------------------------------------------
    def _run(self, cmd: list[str], what: str, timeout: float = 30) -> subprocess.CompletedProcess:
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=self.env, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise SlurmSetupError(
                f"{what}: '{' '.join(cmd)}' did not return within {timeout} s\n{self.diagnostics()}"
            ) from e
        if proc.returncode != 0:
            raise SlurmSetupError(
                f"{what}: '{' '.join(cmd)}' exited {proc.returncode}\n"
                f"stdout: {proc.stdout[-1500:]}\nstderr: {proc.stderr[-1500:]}\n"
                f"{self.diagnostics()}"
            )
        return proc

    def start_munge(self) -> None:
        self.munge_key.write_bytes(os.urandom(1024))
        self.munge_key.chmod(0o400)
        # --force: run despite munged's permission warnings about the scratch path (e.g. a
        # world-writable /tmp above it); the key and socket directory themselves are 0700.
        self._run(
            [
                _binary("munged"),
                "--force",
                f"--key-file={self.munge_key}",
                f"--socket={self.munge_socket}",
                f"--pid-file={self.pidfiles['munged']}",
                f"--log-file={self.logs['munged']}",
                f"--seed-file={self.dirs['munge'] / 'munged.seed'}",
            ],
            "starting munged",
        )
        self._wait_for_pidfile("munged")
        cred = subprocess.run(
            [_binary("munge"), "-n", f"--socket={self.munge_socket}"], capture_output=True, timeout=10
        )
        check = subprocess.run(
            [_binary("unmunge"), f"--socket={self.munge_socket}"], input=cred.stdout, capture_output=True, timeout=10
        )
        if check.returncode != 0:
            raise SlurmSetupError(
                f"munge round trip failed: {check.stderr.decode(errors='replace')}\n{self.diagnostics()}"
            )

    def start(self) -> None:
        self.write_conf()
        self.start_munge()
        # -c: start from a clean state (no jobs or node states from an earlier run).
        self._run([_binary("slurmctld"), "-c", "-f", str(self.conf)], "starting slurmctld")
        self._wait_for_pidfile("slurmctld")
        self._run([_binary("slurmd"), "-f", str(self.conf), "-N", self.node], "starting slurmd")
        self._wait_for_pidfile("slurmd")
        self.wait_idle()

    def wait_idle(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        last = ""
        while time.monotonic() < deadline:
            proc = subprocess.run(
                [_binary("sinfo"), "-h", "-N", "-o", "%N %T"], capture_output=True, text=True, env=self.env, timeout=15
            )
            last = (proc.stdout + proc.stderr).strip()
            if proc.returncode == 0 and f"{self.node} idle" in proc.stdout:
                return
            time.sleep(1)
        raise SlurmSetupError(
            f"node {self.node} not idle after {self.start_timeout:.0f} s; last sinfo: {last!r}\n{self.diagnostics()}"
        )

    def _wait_for_pidfile(self, daemon: str, timeout: float = 20) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid = self._pid(daemon)
            if pid is not None:
                return pid
            time.sleep(0.2)
        raise SlurmSetupError(
            f"{daemon} wrote no pid file {self.pidfiles[daemon]} within {timeout} s\n{self.diagnostics()}"
        )

    def _pid(self, daemon: str) -> int | None:
        """The daemon's pid from its pid file, if that process is alive and is that daemon."""
        try:
            pid = int(self.pidfiles[daemon].read_text().split()[0])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            return None
        return pid if daemon.encode() in cmdline else None

    def _stop(self, daemon: str, timeout: float = 15) -> None:
        pid = self._pid(daemon)
        if pid is None:
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._pid(daemon) is None:
                return
            time.sleep(0.2)
        os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        """Cancel this cluster's jobs, then stop slurmd, slurmctld and munged (by pid file)."""
        if self._pid("slurmctld") is not None:
            subprocess.run(
                [_binary("scancel"), "--full", "--user", str(os.geteuid())],
                capture_output=True,
                env=self.env,
                timeout=15,
            )
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                q = subprocess.run(
                    [_binary("squeue"), "-h", "-t", "RUNNING,COMPLETING"],
                    capture_output=True,
                    text=True,
                    env=self.env,
                    timeout=15,
                )
                if q.returncode != 0 or not q.stdout.strip():
                    break
                time.sleep(0.5)
        try:
            for daemon in ("slurmd", "slurmctld", "munged"):
                self._stop(daemon)
        finally:
            self._release_system_conf()

    def jobs(self) -> list[dict[str, str]]:
        """Every job slurmctld still knows (running or finished within MinJobAge): id, partition,
        state, comment (the plugin writes ``rule_<name>...`` there), allocated CPUs, memory
        requested (``--mem``, e.g. ``700M``), start and end."""
        fields = {
            "id": "%i",
            "partition": "%P",
            "state": "%T",
            "comment": "%k",
            "cpus": "%C",
            "mem": "%m",
            "start": "%S",
            "end": "%e",
        }
        proc = self._run([_binary("squeue"), "-h", "-t", "all", "-o", "|".join(fields.values())], "listing jobs")
        return [dict(zip(fields, line.split("|"))) for line in proc.stdout.splitlines() if line.strip()]

    def diagnostics(self) -> str:
        """The daemons' log tails and the generated slurm.conf, for failure messages."""
        parts = [_tail(self.logs[d]) for d in DAEMONS]
        if self._lock_fd is not None and self.conf.exists():
            parts.append(f"--- {self.conf}:\n{self.conf.read_text()}")
        return "\n".join(parts)

    def __enter__(self) -> SlurmCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def ensure_executor_plugin() -> None:
    """pip-install the package's ``slurm`` extra (snakemake-executor-plugin-slurm) into this
    interpreter's environment when it is missing: the CI venv installs only the ``test`` extra."""
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401

        return
    except ImportError:
        pass
    import tomllib

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    reqs = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]["slurm"]
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", *reqs], capture_output=True, text=True, timeout=900
    )
    if proc.returncode != 0:
        raise SlurmSetupError(f"pip install {' '.join(reqs)} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
