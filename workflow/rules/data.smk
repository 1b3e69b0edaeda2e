# Data layer (issue 3): download, verify and normalise every dataset.
#
#   data/raw/{dataset}/{file}          verified raw file (user path, mirror, or network)
#   data/verified/{dataset}/{file}.json  the download job's record of it (sha256, size): its output
#   data/processed/{dataset}.parquet   typed table (numeric raw + declared domain; categoricals)
#   data/processed/{dataset}.json      data card (source, checksums, rows, drops, columns)
#
# Which rule builds a dataset follows its `kind` in config.yaml: file-backed kinds go through
# data_fetch + data_normalise, `synthetic` through data_synthetic, `ipums` through data_ipums.
# `rule all` asks only for the datasets that can be obtained here (results/availability.json,
# see common.smk); asked for explicitly, an unobtainable dataset fails with a message saying what
# to do and records itself under logs/unavailable/ (the next parse then treats it as unavailable).
# The mirror location is read by the fetch script, not passed as a param: where verified bytes
# came from must not make Snakemake rebuild everything downstream. For the same reason the data
# rules' code fingerprint leaves out the mechanism plugins (`code(..., plugins=False)`): no data
# job runs a mechanism, so adding or editing a plugin reruns none of them.
from ldprepro.data import workflow as dw

# Raw data are never lost to a rerun (issue 54): Snakemake deletes a job's outputs before it reruns
# it (a newer script, an old modification time after `cp -p`/`tar`/`rsync -a`, --forcerun, changed
# params), so the raw files are not outputs. data_fetch declares its record under data/verified/;
# rerun, it keeps a raw file that still verifies and fetches nothing, and a needed refetch downloads
# beside the old file and replaces it only with bytes that verify. A raw file removed or resized
# by hand drops its record at the start of the next run (ldprepro.pipeline.integrity), so it is
# fetched again.


# Downloads run on the submitting host (compute nodes often have no network); they are light.
localrules:
    data_fetch,


# `one_job_per_mechanism` is how the figures cut their jobs, not what the data are: it is left out of
# the data rules' params, so setting it reruns no data job.
DATASETS = {
    name: {k: v for k, v in entry.items() if k != "one_job_per_mechanism"} for name, entry in config["datasets"].items()
}

ALL_TARGETS.extend(dw.targets({k: v for k, v in DATASETS.items() if k not in UNAVAILABLE_ALL}))


rule data_fetch:
    output:
        "data/verified/{dataset}/{filename}.json",
    log:
        "logs/data/fetch/{dataset}/{filename}.log",
    wildcard_constraints:
        dataset=dw.constraint(DATASETS, "files"),
        filename=r"[^/]+",
    # the data first: each is seconds of work, and every figure's jobs wait for theirs (a data set
    # made last holds its figure's jobs, then its render, at the end of the run with a core idle)
    priority: 2
    retries: 0
    conda:
        "../../envs/ldprepro.yaml"
    threads: 1
    resources:
        **res("data_fetch"),
    params:
        entry=lambda w: DATASETS[w.dataset],
        code=code("data_fetch.py", plugins=False),
    script:
        "../scripts/data_fetch.py"


rule data_normalise:
    input:
        unpack(lambda w: dw.verified_inputs(DATASETS, w.dataset)),
    output:
        parquet="data/processed/{dataset}.parquet",
        card="data/processed/{dataset}.json",
    log:
        "logs/data/normalise/{dataset}.log",
    wildcard_constraints:
        dataset=dw.constraint(DATASETS, "files"),
    priority: 2  # the data first (see data_fetch)
    conda:
        "../../envs/ldprepro.yaml"
    threads: 1
    resources:
        **res("data_normalise", sized_by_input=True),
    params:
        entry=lambda w: DATASETS[w.dataset],
        code=code("data_normalise.py", plugins=False),
    script:
        "../scripts/data_normalise.py"


rule data_synthetic:
    output:
        parquet="data/processed/{dataset}.parquet",
        card="data/processed/{dataset}.json",
    log:
        "logs/data/synthetic/{dataset}.log",
    wildcard_constraints:
        dataset=dw.constraint(DATASETS, "synthetic"),
    priority: 2  # the data first (see data_fetch)
    group:
        "synthetic"
    conda:
        "../../envs/ldprepro.yaml"
    threads: 1
    resources:
        **res("data_synthetic", entry=lambda w: job_resources.synthetic_entry(DATASETS, w.dataset, config["scale"])),
    params:
        entry=lambda w: DATASETS[w.dataset],
        seed=config["seed"],
        scale=config["scale"],
        code=code("data_synthetic.py", plugins=False),
    script:
        "../scripts/data_synthetic.py"


rule data_ipums:
    output:
        parquet="data/processed/{dataset}.parquet",
        card="data/processed/{dataset}.json",
    log:
        "logs/data/ipums/{dataset}.log",
    wildcard_constraints:
        dataset=dw.constraint(DATASETS, "ipums"),
    conda:
        "../../envs/ldprepro.yaml"
    threads: 1
    resources:
        **res("data_ipums"),
    params:
        entry=lambda w: DATASETS[w.dataset],
        extract_dir=config.get("ipums", {}).get("extract_dir", ""),
        code=code("data_ipums.py", plugins=False),
    script:
        "../scripts/data_ipums.py"
