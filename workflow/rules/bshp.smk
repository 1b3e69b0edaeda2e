# Histogram publication with bit sampling (issue 6, paper 001: BSHP / WSHP vs the split baseline).
#   results/bshp/<figN>/<dataset>__<method>.parquet   ε × r × repetitions of one method, written by
#     one job per (figure, city), rule bshp_job_<figN>: every method of the figure on that city
#   results/bshp/<figN>/summary.parquet, claims.parquet
#   figures/bshp/<figN>.png, .svg                     Figs. 1-3 one city each, Figs. 4-5 a panel per city
# Cities whose dataset cannot be obtained here are drawn as "not available: <reason>".
from ldprepro.pipeline.parse import figure_cities

BSHP = config.get("bshp", {})
BSHP_FIGURES = {fig: figure_params("bshp", fig) for fig in BSHP if fig.startswith("fig")}
BSHP_CITIES = {fig: figure_cities(BSHP, fig, entry) for fig, entry in BSHP_FIGURES.items()}
BSHP_UNAVAILABLE = unavailable_datasets({c["dataset"] for cs in BSHP_CITIES.values() for c in cs.values()})
BSHP_TARGETS = [f"figures/bshp/{fig}.{ext}" for fig in BSHP_FIGURES for ext in ("png", "svg")]
ALL_TARGETS.extend(BSHP_TARGETS)


for _fig, _entry in BSHP_FIGURES.items():
    # unobtainable cities too: asked for explicitly, their data rule fails saying what to do
    _datasets = sorted({c["dataset"] for c in BSHP_CITIES[_fig].values()})

    # one job per (figure, city): the figure's methods one after another on the city's salaries
    rule:
        name:
            f"bshp_job_{_fig}"
        input:
            parquet="data/processed/{dataset}.parquet",
            card="data/processed/{dataset}.json",
        output:
            # in the order of params.methods
            [f"results/bshp/{_fig}/{{dataset}}__{m}.parquet" for m in _entry["methods"]],
        log:
            f"logs/bshp/{_fig}/{{dataset}}.log",
        wildcard_constraints:
            dataset="|".join(_datasets),
        conda:
            "../../envs/ldprepro.yaml"
        threads: 1
        resources:
            **res("bshp_job", entry={**_entry, "job_mechanisms": _entry["methods"]}, card="card"),
        params:
            # compute parameters only (no cities, titles or focus city): presentation edits rerun only rendering
            fig=compute_params({k: v for k, v in _entry.items() if k != "cities"}),
            protocol=compute_params(BSHP.get("protocol", {})),
            figure=_fig,
            methods=_entry["methods"],
            seed=config["seed"],
            code=code("bshp_job.py"),
        script:
            "../scripts/bshp_job.py"


for _fig, _entry in BSHP_FIGURES.items():
    _available = sorted({c["dataset"] for c in BSHP_CITIES[_fig].values()} - set(BSHP_UNAVAILABLE))
    register_figure(
        "bshp", _fig, _entry.get("title", ""), [c["dataset"] for c in BSHP_CITIES[_fig].values()], BSHP_UNAVAILABLE
    )

    rule:
        name:
            f"bshp_figure_{_fig}"
        input:
            **figure_report_inputs("bshp", _fig),
            jobs=[f"results/bshp/{_fig}/{ds}__{m}.parquet" for ds in _available for m in _entry["methods"]],
            cards=[f"data/processed/{ds}.json" for ds in _available],
        output:
            **figure_report_outputs("bshp", _fig),
            summary=f"results/bshp/{_fig}/summary.parquet",
            claims=f"results/bshp/{_fig}/claims.parquet",
            claim_points=f"results/bshp/{_fig}/claim_points.parquet",
            png=report_if_built(f"figures/bshp/{_fig}.png", caption=figure_caption("bshp", _fig), category="bshp"),
            svg=f"figures/bshp/{_fig}.svg",
        log:
            f"logs/bshp/{_fig}/figure.log",
        group:
            "render"
        conda:
            "../../envs/ldprepro.yaml"
        threads: 1
        resources:
            **res("render"),
        params:
            **figure_report_params("bshp", _fig),
            figure=_fig,
            fig=_entry,
            cities=BSHP_CITIES[_fig],
            unavailable={
                c["dataset"]: BSHP_UNAVAILABLE[c["dataset"]]
                for c in BSHP_CITIES[_fig].values()
                if c["dataset"] in BSHP_UNAVAILABLE
            },
            code=code("bshp_figure.py"),
            declarations=declarations("bshp", _fig),
        script:
            "../scripts/bshp_figure.py"


localrules:
    figures_bshp,


rule figures_bshp:
    input:
        BSHP_TARGETS,
