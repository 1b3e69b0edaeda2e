"""Atomic file writes: write to a temporary file in the same directory, then rename.

With ``digest=True`` (always for :func:`write_parquet`) the file's sha256 is recorded next to it
once it is in place, in the hidden sidecar ``.<name>.sha256`` (:mod:`ldprepro.pipeline.integrity`),
which the next run checks before anything reads the file."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ldprepro.pipeline.integrity import sha256_file, sidecar


def _umask() -> int:
    """The process umask (read by setting and restoring it; there is no read-only call)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = "", digest: bool = False) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` only on success.

    On any exception the temporary file is removed and ``path`` is left untouched, so a
    failed job never leaves a half-written output behind. ``digest``: then record its sha256.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix or ".tmp", dir=path.parent)
    # mkstemp creates 0600; give the file the mode a plain open() would (0666 minus the umask),
    # so results are readable by the group / others exactly as the user's umask says.
    os.fchmod(fd, 0o666 & ~_umask())
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        if digest:  # the sidecar first: a file in place never has a stale one beside it
            record(tmp_path, path)
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def atomic_write_text(path: str | os.PathLike, text: str, digest: bool = False) -> None:
    with atomic_path(path, digest=digest) as tmp:
        tmp.write_text(text)


def record(written: str | os.PathLike, path: str | os.PathLike | None = None) -> str:
    """Write the sidecar of ``path`` with the sha256 of ``written`` (the finished temporary file
    about to be renamed onto ``path``; by default ``path`` itself); returns the sha256."""
    path = Path(path if path is not None else written)
    digest = sha256_file(written)
    atomic_write_text(sidecar(path), f"{digest}  {path.name}\n")
    return digest


def atomic_write_bytes(path: str | os.PathLike, data: bytes, digest: bool = False) -> None:
    with atomic_path(path, digest=digest) as tmp:
        tmp.write_bytes(data)


def write_parquet(df, path: str | os.PathLike) -> None:
    """Write a DataFrame to parquet atomically and deterministically (no pandas index), and record
    its sha256 in its sidecar."""
    with atomic_path(path, suffix=".parquet", digest=True) as tmp:
        df.to_parquet(tmp, index=False, engine="pyarrow")
