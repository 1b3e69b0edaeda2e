"""Obtain raw files: user path, local mirror, then the network; verify every byte by sha256.

A file entry of a dataset (config.yaml ``datasets.<name>.files``) says where its bytes come from:

- ``name``: the file's name under ``data/raw/<dataset>/`` (a plain name: no ``/``, not ``..``);
- ``sha256``: the sha256 of the bytes stored under that name, or ``"lock"`` for live APIs with
  no stable checksum: the checksum is recorded on first download in ``<name>.sha256.lock`` next
  to the file and every later download must match it;
- ``path``: a local file the user supplies (used first when given);
- ``mirror`` (+ ``mirror_sha256``): a path relative to the mirror directory (config
  ``data_mirror`` / env ``LDPREPRO_DATA_MIRROR``); it may not leave that directory. When the
  mirror stores the file gzip-compressed (``mirror`` ends in ``.gz`` and ``name`` does not) the
  stored ``.gz`` bytes are checked against ``mirror_sha256`` and the decompressed bytes against
  ``sha256``. A mirror copy that fails its checksum is skipped with a warning and the official
  URL is tried instead;
- ``url``: where the exact bytes can be downloaded, or ``socrata``: a paged Socrata SODA query
  (see :func:`download_socrata`). Downloads go through pooch (known sha256, retries, a progress
  bar when ``tqdm`` is installed).

Every write is atomic: a mismatch or an interruption never leaves a file under ``data/raw``, and a
file already there that verifies is never fetched again nor removed (:func:`fetch_file`).
Files are verified again each time they are read for normalisation (:func:`verify_raw`), so a
raw file altered after its fetch is an error, never silently different data.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from ldprepro.pipeline.errors import ChecksumMismatch, DataUnavailable, LdpreproError
from ldprepro.pipeline.io import atomic_path, atomic_write_text

#: (connect, read) timeouts in seconds. Short enough that an offline run fails in seconds.
TIMEOUT = (5.0, 60.0)
#: extra attempts per URL after the first (pooch waits 1 s, 2 s, ... between them)
RETRIES = 2
CHUNK = 1 << 20
LOCK = "lock"
USER_AGENT = "ldprepro/0.1 (+reproducible LDP research pipeline)"


class NetworkUnavailable(LdpreproError):
    """Every attempt to reach a URL failed (no network, DNS failure, timeout, server error)."""


class UnsafePath(LdpreproError):
    """A configured file name or mirror path would leave its directory."""


class RawFileChanged(ChecksumMismatch):
    """A file under data/raw no longer has the sha256 it was verified with when fetched."""

    def __init__(self, path: str, expected: str, actual: str, source: str):
        super().__init__(path, expected, actual)
        self.source = source
        self.args = (f"{path}: sha256 mismatch: expected {expected} (from {source}), got "
                     f"{actual}. The file changed after it was fetched and verified. Delete it "
                     f"(rm '{path}') and rerun: it is then fetched again and verified.",)

    def __str__(self) -> str:
        return self.args[0]


@dataclass(frozen=True)
class Fetched:
    """Where a raw file came from and its verified checksum (recorded in the data card)."""

    name: str
    origin: str  # "path", "mirror", "url", "socrata"
    location: str
    sha256: str
    locked: bool = False  # True when the checksum comes from a lock file, not from the config

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "origin": self.origin, "location": self.location,
                "sha256": self.sha256, "checksum_from": "lock file" if self.locked else "config"}


# --------------------------------------------------------------------------------------------
# checksums

def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def lock_path(dest: str | os.PathLike) -> Path:
    dest = Path(dest)
    return dest.with_name(dest.name + ".sha256.lock")


def read_lock(dest: str | os.PathLike) -> str | None:
    p = lock_path(dest)
    if not p.exists():
        return None
    return json.loads(p.read_text())["sha256"]


def write_lock(dest: str | os.PathLike, sha: str, source: str) -> None:
    record = {"sha256": sha, "source": source,
              "note": "checksum recorded on first download (live API); delete this file to accept "
                      "a new upstream version"}
    atomic_write_text(lock_path(dest), json.dumps(record, indent=2, sort_keys=True) + "\n")


def expected_sha(spec: dict, dest: Path) -> tuple[str | None, bool]:
    """(expected sha256 or None if still to be recorded, whether it comes from a lock file)."""
    if spec["sha256"] != LOCK:
        return spec["sha256"].lower(), False
    return read_lock(dest), True


def check(path: Path, expected: str | None, label: str) -> str:
    """Verify ``path`` against ``expected``; on mismatch delete it and raise ChecksumMismatch."""
    actual = sha256_file(path)
    if expected is not None and actual != expected:
        path.unlink(missing_ok=True)
        raise ChecksumMismatch(label, expected, actual)
    return actual


def verify_raw(path: str | os.PathLike, spec: dict) -> dict[str, str]:
    """Check a file under data/raw against its expected sha256 before it is read.

    The expected value is the config's ``sha256`` or, for ``sha256: lock``, the lock file
    written when it was first downloaded. Returns ``{"sha256", "checksum_from"}`` for the data
    card, where ``checksum_from`` says truthfully where the expected value came from. Raises
    RawFileChanged (naming the file, both hashes and what to do) on a mismatch; the file is
    left in place for the user to inspect.
    """
    path = Path(path)
    actual = sha256_file(path)
    if spec["sha256"] != LOCK:
        expected, source = spec["sha256"].lower(), "config.yaml"
        checksum_from = "config"
    else:
        expected = read_lock(path)
        if expected is None:
            raise RawFileChanged(str(path), "(none recorded)", actual,
                                 f"missing lock file {lock_path(path)}")
        source = f"lock file {lock_path(path)}"
        checksum_from = "lock file (recorded on first download)"
    if actual != expected:
        raise RawFileChanged(str(path), expected, actual, source)
    return {"sha256": actual, "checksum_from": checksum_from}


# --------------------------------------------------------------------------------------------
# paths

def safe_name(name: str, what: str) -> str:
    """``name`` if it is a plain file name (no directory part, not '.' or '..')."""
    if (not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name):
        raise UnsafePath(f"{what} {name!r} is not a plain file name (it may not contain '/' "
                         f"or be '..'); fix it in config.yaml")
    return name


def safe_join(base: str | os.PathLike, relative: str, what: str) -> Path:
    """``base / relative``, refused (before any file is opened) if it would leave ``base``."""
    rel = PurePath(relative)
    if rel.is_absolute() or ".." in rel.parts or "\0" in relative:
        raise UnsafePath(f"{what} {relative!r} leaves its directory {base} (absolute path or "
                         f"'..'); give a path inside it in config.yaml")
    path = Path(base) / rel
    root = Path(base).resolve()
    if not path.resolve().is_relative_to(root):  # a symbolic link pointing outside
        raise UnsafePath(f"{what} {relative!r} resolves to {path.resolve()}, outside {root}")
    return path


# --------------------------------------------------------------------------------------------
# network (pooch; requests and pooch are imported by the functions that download, so that the jobs
# that only verify raw files, normalisation and synthetic data, do not pay their ~0.1 CPU-s import)

def short_reason(exc: BaseException | None) -> str:
    """A one-line reason for a failed request."""
    import requests
    text = repr(exc)
    if "NameResolution" in text or "Name or service not known" in text or \
            "Temporary failure in name resolution" in text:
        host = re.search(r"host=\\?'([^'\\]+)", text)
        return f"cannot resolve {host.group(1) if host else 'the host'} (no network?)"
    if isinstance(exc, requests.Timeout):
        return "timed out"
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"HTTP {exc.response.status_code}"
    if isinstance(exc, requests.ConnectionError):
        return "connection failed (server down or no network?)"
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def progressbar() -> bool:
    """pooch shows a tqdm progress bar when tqdm is installed; without it, none (asking pooch
    for a bar without tqdm would be an error)."""
    import pooch
    return getattr(pooch.downloaders, "tqdm", None) is not None


def _downloader(headers: dict | None = None):
    """pooch's HTTP downloader, failing at once (no pooch retry) where retrying cannot help:
    an HTTP 4xx other than 429, or a host name that does not resolve (offline)."""
    import pooch
    import requests
    http = pooch.HTTPDownloader(progressbar=progressbar(), timeout=TIMEOUT,
                                headers={"User-Agent": USER_AGENT, **(headers or {})})

    def download(url, output_file, store):
        try:
            return http(url, output_file, store)
        except requests.HTTPError as exc:
            code = exc.response.status_code if exc.response is not None else None
            if code is not None and code < 500 and code != 429:
                raise NetworkUnavailable(f"{url}: HTTP {code}") from None
            raise
        except requests.ConnectionError as exc:
            if short_reason(exc).startswith("cannot resolve"):
                raise NetworkUnavailable(f"{url}: {short_reason(exc)}") from None
            raise
    return download


_POOCH_MISMATCH = re.compile(r"expected (?:sha256:)?([0-9a-f]{64}) but got ([0-9a-f]{64})")


def download(url: str, dest: Path, sha256: str | None = None, *, headers: dict | None = None,
             retries: int = RETRIES) -> None:
    """Download ``url`` to ``dest`` with pooch, checking ``sha256`` (None: no check yet).

    pooch streams to a temporary file next to ``dest`` and moves it there only when the hash
    matches, so nothing half-written or wrong is ever left at ``dest``. Raises ChecksumMismatch
    (both hashes) or NetworkUnavailable (a one-line reason).
    """
    import pooch
    import requests
    dest = Path(dest)
    registry = {dest.name: f"sha256:{sha256}" if sha256 else None}
    store = pooch.create(path=dest.parent, base_url="", registry=registry,
                         urls={dest.name: url}, retry_if_failed=retries)
    dest.unlink(missing_ok=True)  # never let pooch accept or "update" a stale file
    try:
        store.fetch(dest.name, downloader=_downloader(headers))
    except ValueError as exc:
        hit = _POOCH_MISMATCH.search(str(exc))
        if not hit:
            raise
        raise ChecksumMismatch(f"{url} (saved as {dest})", hit.group(1), hit.group(2)) from None
    except requests.RequestException as exc:
        raise NetworkUnavailable(f"{url}: {short_reason(exc)}") from None


def download_socrata(spec: dict, dest: Path, *, retries: int = RETRIES,
                     base: str | None = None, log=print) -> str:
    """Download a Socrata SODA query as one CSV, page by page, ordered by ``:id``.

    ``spec``: ``domain`` (e.g. data.cityofnewyork.us), ``dataset`` (id, e.g. k397-673e),
    ``query`` (column filters, e.g. ``{fiscal_year: 2019}``), ``page_size``. Each page is
    fetched with pooch; the pages are concatenated with the header written once. An app token
    in ``SOCRATA_APP_TOKEN`` is sent when set (it only raises the rate limit). Returns the URL
    of the first page.
    """
    import requests
    base = base or f"https://{spec['domain']}/resource/{spec['dataset']}.csv"
    size = int(spec.get("page_size", 50000))
    headers = {}
    if os.environ.get("SOCRATA_APP_TOKEN"):
        headers["X-App-Token"] = os.environ["SOCRATA_APP_TOKEN"]
    query = {str(k): str(v) for k, v in (spec.get("query") or {}).items()}
    first_url, rows = None, 0
    with atomic_path(dest) as tmp, open(tmp, "wb") as fh, \
            tempfile.TemporaryDirectory(dir=Path(dest).parent, prefix=".pages.") as pages:
        offset, header, page_no = 0, None, 0
        while True:
            params = {**query, "$order": ":id", "$limit": str(size), "$offset": str(offset)}
            url = requests.Request("GET", base, params=params).prepare().url
            first_url = first_url or url
            part = Path(pages) / f"page{page_no:05d}.csv"
            download(url, part, None, headers=headers, retries=retries)
            page = part.read_bytes()
            part.unlink()
            head, _, body = page.partition(b"\n")
            if header is None:
                header = head
                fh.write(head + b"\n")
            elif head != header:
                raise LdpreproError(f"{url}: page header changed between pages")
            if not body.strip():
                break
            if not body.endswith(b"\n"):
                body += b"\n"
            fh.write(body)
            rows += body.count(b"\n")
            log(f"socrata {spec['dataset']}: page {page_no + 1} done, {rows:,} rows so far")
            offset += size
            page_no += 1
    return first_url


# --------------------------------------------------------------------------------------------
# the one entry point

def _copy_mirror(src: Path, dest: Path, spec: dict) -> None:
    """Copy (and gunzip when the mirror stores a .gz of the file) ``src`` to ``dest``."""
    if spec.get("mirror_sha256"):
        actual = sha256_file(src)
        if actual != spec["mirror_sha256"].lower():
            raise ChecksumMismatch(str(src), spec["mirror_sha256"].lower(), actual)
    gunzip = src.name.endswith(".gz") and not spec["name"].endswith(".gz")
    with atomic_path(dest) as tmp:
        opener = gzip.open if gunzip else open
        try:
            with opener(src, "rb") as fin, open(tmp, "wb") as fout:
                shutil.copyfileobj(fin, fout, CHUNK)
        except (OSError, EOFError) as exc:  # a corrupt .gz without a mirror_sha256
            raise ChecksumMismatch(str(src), spec.get("sha256", "?"),
                                   f"(unreadable: {exc})") from None


def fetch_file(dataset: str, spec: dict, dest: str | os.PathLike, mirror: str | os.PathLike = "",
               *, log=print, obtain: str = "") -> Fetched:
    """Put the verified bytes of ``spec`` at ``dest``. Order: user ``path``, mirror, network.

    A file already at ``dest`` that verifies against its expected sha256 is kept as it is: nothing
    is fetched, whatever its modification time (issue 54). Otherwise the bytes are obtained beside
    it (a hidden ``.<name>.fetching`` file) and moved onto ``dest`` only once they verify: a fetch
    that fails leaves whatever was at ``dest`` untouched, and its message says so.

    A mirror copy that fails its checksum is skipped with a warning and the URL is tried.
    Raises UnsafePath (a name or mirror path leaving its directory, before any file is opened),
    ChecksumMismatch (message has expected and actual) or DataUnavailable (not obtainable here;
    the message says why and what to do).
    """
    safe_name(dataset, "dataset name")
    safe_name(spec["name"], f"file name of dataset '{dataset}':")
    src_mirror = safe_join(mirror, spec["mirror"], f"mirror path of '{spec['name']}'") \
        if spec.get("mirror") and mirror else None
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    expected, locked = expected_sha(spec, dest)
    present = None
    if dest.exists():
        present = sha256_file(dest)
        if expected is not None and present == expected:
            log(f"{dataset}: {spec['name']} already here and verified (sha256 {present}); kept, "
                f"not fetched again")
            return Fetched(spec["name"], "kept", str(dest), present, locked)
    staging = dest.with_name(f".{dest.name}.fetching")
    try:
        return _obtain(dataset, spec, dest, staging, mirror, src_mirror, log, obtain, expected, locked)
    except (DataUnavailable, ChecksumMismatch, NetworkUnavailable) as exc:
        if present is None:
            raise
        why = "no checksum is recorded for it" if expected is None else \
            f"its sha256 is {present}, expected {expected}"
        note = (f" The file already at {dest} was kept untouched ({why}); it is replaced only by "
                f"bytes that verify.")
        if isinstance(exc, DataUnavailable):
            raise DataUnavailable(dataset, exc.reason + note) from None
        exc.args = (str(exc) + note,)
        raise
    finally:
        staging.unlink(missing_ok=True)


def _obtain(dataset: str, spec: dict, dest: Path, staging: Path, mirror, src_mirror: Path | None,
            log, obtain: str, expected: str | None, locked: bool) -> Fetched:
    """Obtain the bytes of ``spec`` into ``staging``, verify them, move them onto ``dest``."""
    tried: list[str] = []

    def finish(origin: str, location: str, label: str) -> Fetched:
        actual = check(staging, expected, label)
        os.replace(staging, dest)
        if spec["sha256"] == LOCK and expected is None:
            write_lock(dest, actual, location)
            log(f"{dataset}: recorded sha256 {actual} of {location} in {lock_path(dest)}")
        log(f"{dataset}: {spec['name']} from {origin} {location} (sha256 {actual})")
        return Fetched(spec["name"], origin, location, actual, locked or spec["sha256"] == LOCK)

    if spec.get("path"):
        src = Path(spec["path"]).expanduser()
        if not src.exists():
            raise DataUnavailable(dataset, f"the configured file {src} does not exist. "
                                  f"Put the file there or fix `path` of '{spec['name']}' in "
                                  f"config.yaml (datasets.{dataset}.files).")
        _copy_mirror(src, staging, {**spec, "mirror_sha256": None})
        return finish("path", str(src), f"{src} (copied to {dest})")

    if src_mirror is not None:
        if src_mirror.exists():
            try:
                _copy_mirror(src_mirror, staging, spec)
                return finish("mirror", str(src_mirror), f"{src_mirror} (copied to {dest})")
            except ChecksumMismatch as exc:
                tried.append(f"the mirror copy is corrupt ({exc})")
                log(f"WARNING: {dataset}: the mirror copy {src_mirror} is corrupt ({exc}); "
                    f"ignoring it and trying the official source")
        elif not Path(mirror).is_dir():
            tried.append(f"the mirror folder {mirror} does not exist")
            log(f"{dataset}: the mirror folder {mirror} does not exist; trying the network")
        else:
            tried.append(f"not in the mirror ({src_mirror})")
            log(f"{dataset}: {src_mirror} not in the mirror; trying the network")
    elif spec.get("mirror"):
        tried.append("no mirror configured (data_mirror / LDPREPRO_DATA_MIRROR)")

    try:
        if spec.get("socrata"):
            url = download_socrata(spec["socrata"], staging, log=log)
            return finish("socrata", url, f"{url} (saved as {dest})")
        if spec.get("url"):
            log(f"{dataset}: downloading {spec['url']}")
            download(spec["url"], staging, expected)
            return finish("url", spec["url"], f"{spec['url']} (saved as {dest})")
        tried.append("no download URL is configured for it")
    except NetworkUnavailable as exc:
        tried.append(f"download failed: {exc}")

    what = [f"'{spec['name']}' could not be obtained ({'; '.join(tried)})."]
    ways = []
    if spec.get("url") or spec.get("socrata"):
        ways.append("run again with internet access")
    if spec.get("mirror"):
        where = src_mirror if src_mirror is not None else f"<mirror>/{spec['mirror']}"
        ways.append(f"put the file at {where} (data_mirror / LDPREPRO_DATA_MIRROR)")
    ways.append(f"download it yourself and set `path` of file '{spec['name']}' in "
                f"config.yaml (datasets.{dataset}.files)")
    what.append("To fix: " + "; or ".join(ways) + ".")
    if spec["sha256"] != LOCK:
        what.append(f"Expected sha256: {spec['sha256']}.")
    msg = " ".join(what)
    if obtain:
        msg += f" {obtain}"
    raise DataUnavailable(dataset, msg)
