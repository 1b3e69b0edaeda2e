"""How the claims name the mechanisms (in claim texts, scopes and evidence); a registered plugin's
``label`` is used for any name not listed here. Light: imported when the workflow validates the
claim declarations of config.yaml at parse time."""

NAMES = {
    "laplace": "Laplace",
    "duchi": "Duchi",
    "pm": "PM",
    "hm": "HM",
    "pm_sub": "PM-SUB",
    "three_outputs": "Three-Outputs",
    "hm_tp": "HM-TP",
    "harmony": "Harmony",
    "dct": "DCT",
    "graded_laplace": "graded Laplace",
    "hiera": "HierA",
    "hiera_unclipped": "HierA (unclipped)",
    "harmony_at_level": "Harmony at the level budget",
    "pm_at_level": "PM at the level budget",
    "non_private": "non-private",
    # the frequency oracles (ldprepro.domain.frequency)
    "grr": "GRR",
    "sue": "SUE",
    "oue": "OUE",
    "olh": "OLH",
    "blh": "BLH",
    "ss": "SS",
    "hr": "HR",
}


def label(mechanism: str) -> str:
    """The claims' name for a mechanism: the table above, else the registry's label, else the key."""
    if mechanism in NAMES:
        return NAMES[mechanism]
    import sys

    info = getattr(sys.modules.get("ldprepro.domain.mechanisms.registry"), "MECHANISM_INFO", {})
    return info[mechanism].label if mechanism in info else mechanism
