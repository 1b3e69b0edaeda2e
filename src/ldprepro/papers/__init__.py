"""Everything specific to one paper, one folder per paper key (config.yaml names the same keys):
``hiera`` (000), ``bshp`` (001), ``ldpfl`` (002), ``dct`` (003), ``lremh`` (004)."""
