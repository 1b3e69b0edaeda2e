"""Exceptions with messages that name the file, key or value at fault."""

from __future__ import annotations


class LdpreproError(Exception):
    """Base class of every error the pipeline raises on purpose."""


class DataUnavailable(LdpreproError):
    """A dataset cannot be obtained here (not mirrored, no network, no IPUMS credentials).

    The message says exactly what the user can do about it. The main command treats this as
    "could not build" (listed in its closing summary), not as a bug.
    """

    def __init__(self, dataset: str, reason: str):
        self.dataset = dataset
        self.reason = reason
        super().__init__(f"dataset '{dataset}' is not available: {reason}")


class ChecksumMismatch(LdpreproError):
    """A downloaded or mirrored file does not match its configured sha256."""

    def __init__(self, path: str, expected: str, actual: str):
        self.path, self.expected, self.actual = path, expected, actual
        super().__init__(f"{path}: sha256 mismatch: expected {expected}, got {actual}")


class BadInput(LdpreproError):
    """Malformed input data; the message names the file, column and row."""


class DamagedInput(BadInput):
    """An intermediate file (a processed dataset, its data card, a job's results) that is cut
    short, altered since its job wrote it, or does not cover the configured grid. The message names
    the file and the command that rebuilds it; the file itself has been removed, so the next run
    rebuilds it instead of reusing it (ldprepro.pipeline.verify)."""
