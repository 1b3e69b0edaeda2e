# ldprepro: reproduce the tables and figures of five LDP papers from raw public data.
#
#   snakemake --cores 2                          # everything obtainable here, then a summary of the rest
#   snakemake --cores 2 --config data_mirror=../shared/datasets
#   snakemake --report report.html               # from whatever has been built
#   snakemake --cores 2 readme_figures           # README thumbnails + tables (rewrites tracked files)
#
# profiles/default/config.yaml is picked up automatically (Snakemake's workflow profile).
# config.yaml is validated against workflow/schemas/config.schema.yaml at load time:
# an unknown key or a wrong type stops the run with a message naming the key.

from pathlib import Path

from snakemake.utils import min_version, validate

from ldprepro.pipeline.config_guard import check_config
from ldprepro.pipeline.config_origin import ConfigOrigin, check_schema
from ldprepro.pipeline.float_kernels import pin_float_kernels
from ldprepro.pipeline.integrity import repair
from ldprepro.pipeline.parse import command_line_booleans, complete_targets
from ldprepro.report.markup import rst_text

min_version("9.0")

# the jobs run numpy's and OpenBLAS's AVX2 kernels on every x86-64 processor: byte-identical
# outputs on any machine (ldprepro/pipeline/float_kernels.py; LDPREPRO_NATIVE_KERNELS=1 opts out)
pin_float_kernels()


configfile: "config.yaml"


# Bounded before anything reads it (YAML aliases expanded: at most MAX_VALUES values), and no text
# that would end the <script> block of the HTML report (ldprepro.pipeline.config_guard).
check_config(config)
# `--config refresh_availability=true` gives the string 'true': read it as the boolean it means.
command_line_booleans(config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml")
# Which file (config.yaml or a --configfile) each key came from: every config error names it.
CONFIG_ORIGIN = ConfigOrigin.from_files("config.yaml", workflow.overwrite_configfiles, workflow.config_settings.config)
check_schema(config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml", CONFIG_ORIGIN)
validate(config, "workflow/schemas/config.schema.yaml")

# Outputs that are empty, cut short or altered since their job wrote them (digest sidecars) are
# removed before the job graph is built: this run rebuilds them and what depends on them
# (ldprepro.pipeline.integrity; docs/data.md "Verified intermediates").
if workflow.is_main_process:
    repair()


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/audit.smk"
include: "workflow/rules/benchmark.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/calibration.smk"


# Read by the report's description (workflow/report/workflow.rst) under `snakemake --report`; its
# texts escaped for reST there (a reason may quote a configured path or name: data, never markup).
if REPORTING:
    config["report_status"] = {
        "missing": [rst_text(p) for p in sorted(REPORT_MISSING)],
        "figures": FIGURE_REGISTRY,
        "unavailable": {rst_text(k): rst_text(v) for k, v in sorted(UNAVAILABLE_ALL.items())},
    }


localrules:
    all,


# Every output of a rule that builds a target is a target too (summary and claims tables beside
# their figure): deleted, it is rebuilt, with what depends on it.
ALL_TARGETS = complete_targets(workflow.rules, ALL_TARGETS)


rule all:
    default_target: True
    input:
        ALL_TARGETS,


# The unavailable datasets the requested targets use (all of them for `rule all`).
onsuccess:
    print("\n".join(summary_lines(UNAVAILABLE_ALL, FIGURE_REGISTRY, run_products(workflow.dag), PRODUCT_NEEDS)))


onerror:
    print("\n".join(error_lines(UNAVAILABLE_ALL, log)))
