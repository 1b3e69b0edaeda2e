# ldprepro: reproduce the tables and figures of five LDP papers from raw public data.
#
#   snakemake --cores all                       # everything obtainable
#   snakemake --cores 2 --config data_mirror=../shared/datasets
#
# config.yaml is validated against workflow/schemas/config.schema.yaml at load time:
# an unknown key or a wrong type stops the run with a message naming the key.

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/mechanism_figures.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/histogram.smk"
include: "workflow/rules/joint.smk"
include: "workflow/rules/audit.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        ALL_TARGETS,
    default_target: True
