# Shared helpers for every stage: paths, the data mirror, the list of top-level targets.
import os

# The mirror directory is consulted before the network. Config wins; the environment
# variable LDPREPRO_DATA_MIRROR is the fallback (CI sets it to ../shared/datasets).
DATA_MIRROR = config.get("data_mirror") or os.environ.get("LDPREPRO_DATA_MIRROR") or ""

# Every stage appends the files `rule all` should build.
ALL_TARGETS = []


def figure_params(paper, figure):
    """A figure's config entry, with its `smoke` overrides applied when scale is smoke
    (sizes and repetitions only; the method never changes)."""
    entry = dict(config[paper][figure])
    smoke = entry.pop("smoke", {})
    if config["scale"] == "smoke":
        entry.update(smoke)
    return entry
