# Joint-distribution estimation (issue 7, paper 004: RR-LDP + EM, LASSO, LREMH).
#   results/lremh/<time fig>/<experiment>__<method>.parquet   cost_ops, lasso_epochs (decide Figs. 1-2) and CPU time (drawn only)
#   results/lremh/<avd fig>/<experiment>__<method>.parquet    AVD, iterations, candidates, pruning
#   results/lremh/<figN>/summary.parquet, claims.parquet
#   results/lremh/<time fig>/cost_time_agreement.json      Spearman rank agreement of cost_ops with CPU time
#   figures/lremh/<figN>.png, .svg                              one panel per f
# One job per experiment (dataset) runs all methods on the same reports, so the timings of a
# figure come from one process on one machine. An unobtainable dataset gives "not available" panels.
from ldprepro.pipeline.parse import experiment_outputs, experiment_params

LREMH_EXPERIMENTS = {
    name: experiment_params(config["lremh"], name, config["scale"])
    for name in config.get("lremh", {}).get("experiments", {})
}
LREMH_UNAVAILABLE = unavailable_datasets({e["dataset"] for e in LREMH_EXPERIMENTS.values()})
LREMH_FIGURES = {}  # figure -> (experiment name, kind)
for _name, _exp in LREMH_EXPERIMENTS.items():
    LREMH_FIGURES[_exp["time_figure"]] = (_name, "time")
    LREMH_FIGURES[_exp["avd_figure"]] = (_name, "avd")
LREMH_TARGETS = [f"figures/lremh/{fig}.{ext}" for fig in sorted(LREMH_FIGURES) for ext in ("png", "svg")]
ALL_TARGETS.extend(LREMH_TARGETS)


for _name, _exp in LREMH_EXPERIMENTS.items():

    rule:
        name:
            f"lremh_job_{_name}"
        input:
            parquet=f"data/processed/{_exp['dataset']}.parquet",
            card=f"data/processed/{_exp['dataset']}.json",
        output:
            time=experiment_outputs(_exp, "time"),
            avd=experiment_outputs(_exp, "avd"),
        log:
            f"logs/lremh/{_name}.log",
        # long chains (the benchmark and audit tables, LREMH's EM fits) start first, so that
        # the run does not end on one of them with a core idle
        priority: 1
        conda:
            "../../envs/ldprepro.yaml"
        threads: 1
        resources:
            **res("lremh_job", entry=_exp, card="card"),
        params:
            exp=compute_params(_exp),  # no title: a title edit reruns only the figures
            seed=config["seed"],
            code=code("lremh_job.py"),
        script:
            "../scripts/lremh_job.py"


for _fig, (_name, _kind) in sorted(LREMH_FIGURES.items()):
    _exp = LREMH_EXPERIMENTS[_name]
    _missing = {_exp["dataset"]: LREMH_UNAVAILABLE[_exp["dataset"]]} if _exp["dataset"] in LREMH_UNAVAILABLE else {}
    register_figure("lremh", _fig, _exp["title"].format(n=_fig[3:]), [_exp["dataset"]], LREMH_UNAVAILABLE)

    rule:
        name:
            f"lremh_figure_{_fig}"
        input:
            **figure_report_inputs("lremh", _fig),
            results=[] if _missing else experiment_outputs(_exp, _kind),
        output:
            **figure_report_outputs("lremh", _fig),
            **({"agreement": f"results/lremh/{_fig}/cost_time_agreement.json"} if _kind == "time" else {}),
            summary=f"results/lremh/{_fig}/summary.parquet",
            claims=f"results/lremh/{_fig}/claims.parquet",
            claim_points=f"results/lremh/{_fig}/claim_points.parquet",
            png=report_if_built(f"figures/lremh/{_fig}.png", caption=figure_caption("lremh", _fig), category="lremh"),
            svg=f"figures/lremh/{_fig}.svg",
            # time figures: the rank agreement of the cost with CPU time (ldprepro.papers.lremh.agreement)
        log:
            f"logs/lremh/{_fig}.log",
        group:
            "render"
        conda:
            "../../envs/ldprepro.yaml"
        threads: 1
        resources:
            **res("render"),
        params:
            **figure_report_params("lremh", _fig),
            figure=_fig,
            kind=_kind,
            exp=_exp,
            unavailable=_missing,
            code=code("lremh_figure.py"),
            declarations=declarations("lremh", _fig),
        script:
            "../scripts/lremh_figure.py"


localrules:
    figures_lremh,


rule figures_lremh:
    input:
        [t for t in LREMH_TARGETS if t.endswith(".png")],
