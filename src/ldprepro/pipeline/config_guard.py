"""Checks of the loaded configuration before anything else reads it (issue 54 items 2 and 3), run by
the Snakefile ahead of the schema validation:

- its size is bounded: YAML aliases make a small file expand into a huge configuration (a nine-level
  "billion laughs" given with ``--configfile`` loads as shared references, then grew past 2.2 GB
  when the schema validation printed it). :func:`expanded_size` counts the values as they would be
  written out, in time proportional to the distinct objects, and a configuration of more than
  :data:`MAX_VALUES` is refused naming its largest top-level key;
- no text in it can end the ``<script>`` block of Snakemake's HTML report: the report embeds the
  configuration, the rules' parameters and the labels as JSON inside ``<script>`` without escaping
  ``</``, so a title or claim containing ``</script`` (or ``<!--``) became live HTML in
  ``report.html``. Such text is refused naming its key.

Imports nothing heavy: this runs at every parse of the workflow.
"""

from __future__ import annotations

import re

from ldprepro.pipeline.errors import LdpreproError

#: the most values (scalars and containers, as written out) a configuration may hold; the shipped
#: config.yaml holds about 1,800
MAX_VALUES = 200_000
#: text that ends or confuses an HTML <script> block (case-insensitive)
SCRIPT_BREAKERS = re.compile(r"</script|<!--", re.IGNORECASE)


class ConfigError(LdpreproError):
    """The configuration cannot be used; the message names the key and what to do."""


def expanded_size(value, _memo: dict | None = None) -> int:
    """The number of values ``value`` holds as written out (every alias expanded), counted once per
    distinct object (a shared reference is not walked again)."""
    memo = {} if _memo is None else _memo
    if not isinstance(value, dict | list | tuple):
        return 1
    key = id(value)
    if key not in memo:
        memo[key] = 0  # a reference cycle counts as nothing more (YAML anchors cannot make one)
        items = value.values() if isinstance(value, dict) else value
        memo[key] = 1 + sum(expanded_size(v, memo) for v in items)
    return memo[key]


def _strings(value, path: str):
    """(key path, text) of every string in ``value`` (keys included)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            where = f"{path}.{k}" if path else str(k)
            if isinstance(k, str):
                yield where, k
            yield from _strings(v, where)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]")


def check_config(config: dict) -> None:
    """Refuse a configuration that is too large once its aliases are expanded, or that holds text
    which would become markup in Snakemake's report (see the module docstring)."""
    size = expanded_size(config)
    if size > MAX_VALUES:
        sizes = {k: expanded_size(v) for k, v in config.items()}
        largest = max(sizes, key=sizes.get)
        raise ConfigError(
            f"the configuration holds {size:,} values once its YAML aliases (*name) are expanded, more "
            f"than the {MAX_VALUES:,} allowed; most of them under the key '{largest}' ({sizes[largest]:,}). "
            f"An alias repeated inside itself (a 'billion laughs' file) does this. Check the files given "
            f"with --configfile and config.yaml."
        )
    for path, text in _strings(config, ""):
        hit = SCRIPT_BREAKERS.search(text)
        if hit:
            raise ConfigError(
                f"config key {path}: the text contains {hit.group(0)!r}, which would end the <script> "
                f"block of Snakemake's HTML report (it embeds the configuration unescaped) and turn the "
                f"rest into live HTML; remove it."
            )
