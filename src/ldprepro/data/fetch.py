"""Obtain raw files: user path, local mirror, then the network; verify every byte by sha256.

A file entry of a dataset (config.yaml ``datasets.<name>.files``) says where its bytes come from:

- ``name``: the file's name under ``data/raw/<dataset>/``;
- ``sha256``: the sha256 of the bytes stored under that name, or ``"lock"`` for live APIs with
  no stable checksum: the checksum is recorded on first download in ``<name>.sha256.lock`` next
  to the file and every later download must match it;
- ``path``: a local file the user supplies (used first when given);
- ``mirror`` (+ ``mirror_sha256``): a path relative to the mirror directory (config
  ``data_mirror`` / env ``LDPREPRO_DATA_MIRROR``). When the mirror stores the file
  gzip-compressed (``mirror`` ends in ``.gz`` and ``name`` does not) the stored ``.gz`` bytes are
  checked against ``mirror_sha256`` and the decompressed bytes against ``sha256``;
- ``url``: where the exact bytes can be downloaded (streamed, with timeouts, retries and a
  progress indicator), or ``socrata``: a paged Socrata SODA query (see :func:`download_socrata`).

Every write is atomic: a mismatch or an interruption never leaves a file under ``data/raw``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import requests

from ..errors import ChecksumMismatch, DataUnavailable, LdpreproError
from ..io import atomic_path, atomic_write_text

#: (connect, read) timeouts in seconds. Short enough that an offline run fails in seconds.
TIMEOUT = (5.0, 60.0)
#: attempts per URL (network errors and HTTP 5xx/429 are retried; other HTTP errors are not)
RETRIES = 3
BACKOFF = 1.0  # seconds, doubled after each failed attempt
CHUNK = 1 << 20
LOCK = "lock"
USER_AGENT = "ldprepro/0.1 (+reproducible LDP research pipeline)"


class NetworkUnavailable(LdpreproError):
    """Every attempt to reach a URL failed (no network, DNS failure, timeout, server error)."""


@dataclass(frozen=True)
class Fetched:
    """Where a raw file came from and its verified checksum (recorded in the data card)."""

    name: str
    origin: str  # "path", "mirror", "url", "socrata" or "existing"
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


# --------------------------------------------------------------------------------------------
# progress

class Progress:
    """A minimal progress indicator on stderr (a bar on a terminal, a line per 10% otherwise)."""

    def __init__(self, label: str, total: int | None, stream=None):
        self.label, self.total, self.done = label, total, 0
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last_decile = -1

    def update(self, n: int) -> None:
        self.done += n
        if self.total:
            frac = min(self.done / self.total, 1.0)
            if self.tty:
                bar = "#" * int(30 * frac)
                self.stream.write(f"\r{self.label} [{bar:<30}] {frac:6.1%}")
            elif int(frac * 10) > self._last_decile:
                self._last_decile = int(frac * 10)
                self.stream.write(f"{self.label}: {frac:.0%} of {self.total:,} bytes\n")
        elif self.tty:
            self.stream.write(f"\r{self.label}: {self.done:,} bytes")

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
        self.stream.write(f"{self.label}: {self.done:,} bytes done\n")
        self.stream.flush()


# --------------------------------------------------------------------------------------------
# network

def _retrying(url: str, attempt: Callable[[], Any], retries: int = RETRIES) -> Any:
    delay, last = BACKOFF, None
    for i in range(retries):
        try:
            return attempt()
        except requests.HTTPError as exc:
            code = exc.response.status_code if exc.response is not None else None
            if code is not None and code < 500 and code != 429:
                raise NetworkUnavailable(f"{url}: HTTP {code}") from exc
            last = exc
        except (requests.ConnectionError, requests.Timeout) as exc:
            last = exc
            # DNS failure or no route within the connect timeout: the machine is offline;
            # retrying will not help (this keeps an offline run fast).
            if ("NameResolution" in repr(exc) or "Name or service not known" in str(exc)
                    or isinstance(exc, requests.ConnectTimeout)):
                break
        if i + 1 < retries:
            time.sleep(delay)
            delay *= 2
    raise NetworkUnavailable(f"{url}: {_short(last)}")


def _short(exc: BaseException | None) -> str:
    """A one-line reason for a failed request."""
    text = repr(exc)
    if "NameResolution" in text or "Name or service not known" in text:
        host = re.search(r"host=\\?'([^'\\]+)", text)
        return f"cannot resolve {host.group(1) if host else 'the host'} (no network?)"
    if isinstance(exc, requests.Timeout):
        return "timed out"
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"HTTP {exc.response.status_code}"
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def download(url: str, dest: Path, *, session: requests.Session | None = None,
             timeout: tuple[float, float] = TIMEOUT, retries: int = RETRIES,
             headers: dict | None = None) -> None:
    """Stream ``url`` to ``dest`` atomically (the caller verifies the checksum)."""
    sess = session or requests.Session()
    hdrs = {"User-Agent": USER_AGENT, **(headers or {})}

    def attempt() -> None:
        with sess.get(url, stream=True, timeout=timeout, headers=hdrs) as resp:
            resp.raise_for_status()
            total = int(resp.headers.get("Content-Length") or 0) or None
            bar = Progress(f"download {dest.name}", total)
            with atomic_path(dest) as tmp, open(tmp, "wb") as fh:
                for block in resp.iter_content(CHUNK):
                    fh.write(block)
                    bar.update(len(block))
            bar.close()

    _retrying(url, attempt, retries)


def download_socrata(spec: dict, dest: Path, *, session: requests.Session | None = None,
                     timeout: tuple[float, float] = TIMEOUT, retries: int = RETRIES,
                     base: str | None = None) -> str:
    """Download a Socrata SODA query as one CSV, page by page, ordered by ``:id``.

    ``spec``: ``domain`` (e.g. data.cityofnewyork.us), ``dataset`` (id, e.g. k397-673e),
    ``query`` (column filters, e.g. ``{fiscal_year: 2019}``), ``page_size``. The pages are
    concatenated with the header written once. An app token in ``SOCRATA_APP_TOKEN`` is sent
    when set (it only raises the rate limit). Returns the URL of the first page.
    """
    sess = session or requests.Session()
    base = base or f"https://{spec['domain']}/resource/{spec['dataset']}.csv"
    size = int(spec.get("page_size", 50000))
    headers = {"User-Agent": USER_AGENT}
    if os.environ.get("SOCRATA_APP_TOKEN"):
        headers["X-App-Token"] = os.environ["SOCRATA_APP_TOKEN"]
    query = {str(k): str(v) for k, v in (spec.get("query") or {}).items()}
    bar = Progress(f"socrata {spec['dataset']}", None)
    first_url = None
    with atomic_path(dest) as tmp, open(tmp, "wb") as fh:
        offset, header = 0, None
        while True:
            params = {**query, "$order": ":id", "$limit": str(size), "$offset": str(offset)}
            req = requests.Request("GET", base, params=params).prepare()
            first_url = first_url or req.url

            def attempt(url=req.url) -> bytes:
                resp = sess.get(url, timeout=timeout, headers=headers)
                resp.raise_for_status()
                return resp.content

            page = _retrying(req.url, attempt, retries)
            head, _, body = page.partition(b"\n")
            if header is None:
                header = head
                fh.write(head + b"\n")
            elif head != header:
                raise LdpreproError(f"{req.url}: page header changed between pages")
            if not body.strip():
                break
            if not body.endswith(b"\n"):
                body += b"\n"
            fh.write(body)
            bar.update(len(body))
            offset += size
    bar.close()
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
        with opener(src, "rb") as fin, open(tmp, "wb") as fout:
            shutil.copyfileobj(fin, fout, CHUNK)


def fetch_file(dataset: str, spec: dict, dest: str | os.PathLike, mirror: str | os.PathLike = "",
               *, session: requests.Session | None = None, log=print,
               obtain: str = "") -> Fetched:
    """Put the verified bytes of ``spec`` at ``dest``. Order: user ``path``, mirror, network.

    Raises ChecksumMismatch (file removed; message has expected and actual) or DataUnavailable
    (not in the mirror and the network is unreachable; the message says what to do).
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    expected, locked = expected_sha(spec, dest)
    tried: list[str] = []

    def finish(origin: str, location: str, label: str) -> Fetched:
        actual = check(dest, expected, label)
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
        _copy_mirror(src, dest, {**spec, "mirror_sha256": None})
        return finish("path", str(src), f"{src} (copied to {dest})")

    if spec.get("mirror") and mirror:
        src = Path(mirror) / spec["mirror"]
        if src.exists():
            _copy_mirror(src, dest, spec)
            return finish("mirror", str(src), f"{src} (copied to {dest})")
        tried.append(f"not in the mirror ({src})")
        log(f"{dataset}: {src} not in the mirror; trying the network")
    elif spec.get("mirror"):
        tried.append("no mirror configured (data_mirror / LDPREPRO_DATA_MIRROR)")

    try:
        if spec.get("socrata"):
            url = download_socrata(spec["socrata"], dest, session=session)
            return finish("socrata", url, f"{url} (saved as {dest})")
        if spec.get("url"):
            download(spec["url"], dest, session=session)
            return finish("url", spec["url"], f"{spec['url']} (saved as {dest})")
        tried.append("no download URL is configured for it")
    except NetworkUnavailable as exc:
        tried.append(f"download failed: {exc}")

    what = [f"'{spec['name']}' could not be obtained ({'; '.join(tried)})."]
    ways = []
    if spec.get("url") or spec.get("socrata"):
        ways.append("run again with internet access")
    if spec.get("mirror"):
        where = Path(mirror) / spec["mirror"] if mirror else f"<mirror>/{spec['mirror']}"
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
