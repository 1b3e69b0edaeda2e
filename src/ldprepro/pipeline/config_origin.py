"""Which file a config key came from, so that every config error names it.

The workflow's configuration is config.yaml, then each ``--configfile`` given on the command line
merged over it (Snakemake's recursive update: a key a later file sets wins), then ``--config
key=value``. An error about ``papers.wang17.fig1.mechanisms`` must name the user's own file when
the entry was there, not config.yaml. :class:`ConfigOrigin` reads the same files, in the same
order, and answers for a dotted key the last layer that sets it (or, when none sets the key
itself, the last that sets its longest prefix: the entry the key belongs to).

Parse-time code: the standard library and PyYAML only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from ldprepro.pipeline.parse import load_yaml

#: how the ``--config key=value`` layer is named
COMMAND_LINE = "--config on the command line"


def _depth(data, path: tuple[str, ...]) -> int:
    """How many leading parts of ``path`` the nested mapping ``data`` has."""
    depth = 0
    for part in path:
        if not isinstance(data, Mapping) or part not in data:
            break
        data = data[part]
        depth += 1
    return depth


class ConfigOrigin:
    """The layers of a configuration, lowest first: (name, data)."""

    def __init__(self, layers: Iterable[tuple[str, Mapping]]):
        self.layers = [(str(name), data or {}) for name, data in layers]

    @classmethod
    def from_files(cls, base: str | os.PathLike, overrides=(), command_line: Mapping | None = None) -> ConfigOrigin:
        """config.yaml (``base``), the ``--configfile`` files in order, then ``--config``. A file that
        cannot be read counts as empty here (Snakemake itself reports it)."""
        layers = []
        for path in [base, *overrides]:
            try:
                with open(path, encoding="utf-8") as fh:
                    data = load_yaml(fh.read())
            except Exception:  # noqa: BLE001 (unreadable or not YAML: Snakemake's own load reports it)
                data = {}
            shown = os.path.relpath(path) if os.path.isabs(path) else str(path)
            layers.append((str(path) if shown.startswith("..") else shown, data))
        if command_line:
            layers.append((COMMAND_LINE, command_line))
        return cls(layers)

    def of(self, key: str) -> str:
        """The name of the layer a dotted ``key`` (``papers.wang17.fig1.mechanisms``) came from."""
        path = tuple(str(key).split("."))
        best, best_depth = self.layers[0][0] if self.layers else "config.yaml", -1
        for name, data in self.layers:
            depth = _depth(data, path)
            if depth and depth >= best_depth:
                best, best_depth = name, depth
        return best


def check_schema(config: Mapping, schema_path: str | os.PathLike, origin: ConfigOrigin) -> None:
    """Validate ``config`` against the JSON schema; the first problem (jsonschema's best match) is
    raised as a ValueError naming the file the offending entry came from and its dotted key.
    (The workflow then validates again with Snakemake's ``validate``, which fills in defaults.)"""
    import jsonschema  # Snakemake has already imported it

    with open(schema_path, encoding="utf-8") as fh:
        schema = load_yaml(fh.read())
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is None:
        return
    key = ".".join(str(p) for p in error.absolute_path)
    where = origin.of(key) if key else (origin.layers[-1][0] if origin.layers else "config.yaml")
    raise ValueError(
        f"{where}: {key or 'the configuration'}: {error.message} (the schema: {schema_path}, "
        f"{'/'.join(str(p) for p in error.absolute_schema_path)})"
    )
