"""Digests of the workflow's outputs, and the repair of damaged ones at the start of every run.

Every table, figure, data card and caption a job writes (``pipeline.io`` with ``digest=True``:
:func:`~ldprepro.pipeline.io.write_parquet` always) gets a hidden sidecar next to it,
``.<name>.sha256``, in ``sha256sum`` format (``cd <folder> && sha256sum -c .<name>.sha256`` checks
it by hand). At the start of every run the main Snakemake process calls :func:`repair`: an output
under ``data/processed``, ``results`` or ``figures`` that is

- empty (zero bytes),
- different from the bytes its job wrote (its sidecar's sha256; one flipped bit, a cut, rows
  removed and the table written back), or
- without a sidecar and unreadable by its kind (a parquet without its ``PAR1`` magic at both ends, a
  PNG without its signature or ``IEND`` end, an SVG without ``</svg>``, a JSON file that does not
  parse)

is removed, with a line saying which file and why. A download job's record under ``data/verified``
whose raw file is gone or has another size is removed too (the raw files are not Snakemake outputs,
so that no rerun deletes them; their record stands in for them in the job graph): the run fetches
the file again. Snakemake then sees it missing and rebuilds it,
and by modification time everything downstream of it; nothing reads it meanwhile. Snakemake's own
mechanisms cannot do this: ``ensure(non_empty=True)`` is checked only after a job ran, and an
existing output is never re-checked against what its job wrote.

Imports nothing heavy: this module runs at every parse of the workflow.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path

#: the folders of outputs checked at the start of a run (relative to the working directory)
OUTPUT_ROOTS = ("data/verified", "data/processed", "results", "figures")
#: the download jobs' records of the raw files they verified (ldprepro.data.obtain.write_verified)
VERIFIED_ROOT = "data/verified"
#: the raw files' folder: only its killed downloads' temporaries are removed here
RAW_ROOT = "data/raw"
#: ``.<name>.<8 random characters><suffix>`` (tempfile.mkstemp in ``atomic_path``) or ``.<name>.fetching``
_TEMPORARY = re.compile(r"^\..+\.([a-z0-9_]{8}[^/]*|fetching)$")
#: kinds of output checked without a sidecar (by their own structure)
CHECKED_SUFFIXES = (".parquet", ".png", ".svg", ".json", ".rst", ".html", ".md")
CHUNK = 1 << 20


def sidecar(path: str | os.PathLike) -> Path:
    """The hidden digest file of ``path``: ``<folder>/.<name>.sha256``."""
    path = Path(path)
    return path.with_name(f".{path.name}.sha256")


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def recorded(path: str | os.PathLike) -> str | None:
    """The sha256 recorded for ``path`` by the job that wrote it, None without a (readable) sidecar."""
    try:
        text = sidecar(path).read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    return text[0] if text and len(text[0]) == 64 else None


def _tail(path: Path, n: int) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(max(0, path.stat().st_size - n))
        return fh.read()


def _structure(path: Path) -> str | None:
    """Why a file without a sidecar is unreadable by its kind, None when it looks whole."""
    suffix = path.suffix.lower()
    with open(path, "rb") as fh:
        head = fh.read(8)
    if suffix == ".parquet":
        tail = _tail(path, 8)
        footer = int.from_bytes(tail[:4], "little") if len(tail) == 8 else -1
        if head[:4] != b"PAR1" or tail[4:] != b"PAR1" or not 0 < footer < path.stat().st_size:
            return "is not a whole parquet file (its PAR1 magic or footer is missing: cut short?)"
    elif suffix == ".png":
        if head != b"\x89PNG\r\n\x1a\n" or _tail(path, 12)[4:8] != b"IEND":
            return "is not a whole PNG image (signature or IEND end missing: cut short?)"
    elif suffix == ".svg":
        if b"</svg>" not in _tail(path, 64):
            return "is not a whole SVG image (no closing </svg>: cut short?)"
    elif suffix == ".json":
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            return f"is not valid JSON ({exc}: cut short?)"
    return None


def _raw_gone(record: Path) -> str | None:
    """Why the raw file a download job's record names can no longer stand behind it, None when it
    is there with the recorded size (its bytes are verified again before they are read)."""
    body = json.loads(record.read_text(encoding="utf-8"))
    if not isinstance(body, dict) or not isinstance(body.get("file"), str) or not isinstance(body.get("size"), int):
        return "is not a download job's record (no 'file' and 'size')"
    raw = Path(body["file"])
    if not raw.exists():
        return f"records {raw}, which is gone"
    if raw.stat().st_size != body["size"]:
        return f"records {raw} at {body['size']} bytes; it now has {raw.stat().st_size}"
    return None


def damage(path: str | os.PathLike) -> str | None:
    """Why the existing output ``path`` must not be used, None when it is intact."""
    path = Path(path)
    try:
        if path.is_relative_to(VERIFIED_ROOT) and path.suffix == ".json" and not _structure(path):
            return _raw_gone(path)
        if path.stat().st_size == 0:
            return "is empty (0 bytes)"
        want = recorded(path)
        if want is not None:
            got = sha256_file(path)
            if got != want:
                return f"differs from what its job wrote (sha256 {got[:12]}…, recorded {want[:12]}…)"
            return None
        return _structure(path) if path.suffix.lower() in CHECKED_SUFFIXES else None
    except OSError as exc:
        return f"cannot be read ({exc})"


def outputs(roots=OUTPUT_ROOTS) -> list[Path]:
    """The files under ``roots`` (hidden files, i.e. sidecars and temporaries, left out)."""
    found = []
    for root in map(Path, roots):
        if not root.is_dir():
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            found += [Path(folder) / f for f in sorted(files) if not f.startswith(".")]
    return found


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def repair(roots=OUTPUT_ROOTS, log=_stderr, locks: str | os.PathLike = ".snakemake/locks") -> list[tuple[str, str]]:
    """Remove every damaged output under ``roots`` (and its sidecar), saying which and why, so that
    this run rebuilds it and what depends on it; returns [(path, reason)]. Sidecars whose file is
    gone are removed too. Nothing is touched while Snakemake's lock is held (``locks`` not empty):
    another run may be writing, and this one will stop at the lock anyway."""
    if Path(locks).is_dir() and any(Path(locks).iterdir()):
        return []
    removed = []
    for path in outputs(roots):
        reason = damage(path)
        if reason:
            path.unlink(missing_ok=True)
            sidecar(path).unlink(missing_ok=True)
            removed.append((str(path), reason))
            log(
                f"ldprepro: {path} {reason}; removed. A run whose targets need it rebuilds it and what depends "
                f"on it (the plain `snakemake` always does)."
            )
    for root in map(Path, roots):
        for orphan in root.rglob(".*.sha256") if root.is_dir() else []:
            if not orphan.with_name(orphan.name[1 : -len(".sha256")]).exists():
                orphan.unlink(missing_ok=True)
    for stale in temporaries((*roots, RAW_ROOT)):
        stale.unlink(missing_ok=True) if stale.is_file() else shutil.rmtree(stale, ignore_errors=True)
        log(f"ldprepro: {stale} is a temporary file a killed job left behind; removed.")
    return removed


def temporaries(roots) -> list[Path]:
    """The hidden temporaries a killed job leaves under ``roots`` (issue 54: a 65 KB
    ``figures/benchmark/.mean_winners.png.<random>.png`` stayed forever): ``atomic_path``'s
    ``.<name>.<random><suffix>`` beside the file it was to become, a download's ``.<name>.fetching``
    and a Socrata or IPUMS download's ``.pages.*``/``.download.*`` folders. Sidecars
    (``.<name>.sha256``) are not temporaries. Only called while no run holds the lock."""
    found = []
    for root in map(Path, roots):
        if not root.is_dir():
            continue
        for folder, dirs, files in os.walk(root):
            here = Path(folder)
            found += [here / d for d in dirs if d.startswith((".pages.", ".download."))]
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in files:
                if name.startswith(".") and not name.endswith(".sha256") and _TEMPORARY.match(name):
                    found.append(here / name)
    return sorted(found)
