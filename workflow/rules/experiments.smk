# Config-driven experiment figures: entries `<paper>.<figN>` with a `kind` of the kind registry
# (ldprepro.experiments.kinds: mean, sgd, frequency, variance, histogram), for papers 000, 001, 002
# and 003, for the papers added under `papers:` and for your own experiments under `experiments:`
# (docs/extending.md). Every kind goes through these rules; what a job computes, its grid and its
# plot are its kind's, and so are its rules' names (KindSpec.job_rule, render_rule).
#   results/<paper>/<figN>/<dataset>__<mechanism>.parquet   ε × sweep × size × reps of one mechanism
#     written by one job per panel (rule panel_job_<paper>_<figN>, bshp_job_<figN> for paper 001's
#     histograms: every mechanism of the figure on that dataset, so the start-up is paid once), or,
#     on a dataset marked `one_job_per_mechanism`
#     (the IPUMS censuses, WISDM), by one job per mechanism (rule figure_job); same rows either way
#   results/<paper>/<figN>/summary.parquet, claims.parquet   aggregated table and verdicts
#   figures/<paper>/<figN>.png, .svg                         one panel per dataset
#     (rule figure_<paper>_<figN>; bshp_figure_<figN> for paper 001)
# Panels whose dataset cannot be obtained here are drawn as "not available: <reason>"; the figures
# with no panel left to compute are drawn together, by rule figures_not_available.

# Kinds bound to one paper's config entry, with their own job shape (ldprepro.experiments.kinds.PAPER_KINDS;
# the rule names are the kind's job_rule and render_rule):
#   shape mechanisms (ldpfl Fig. 1): one data-free job writes results/<paper>/<figN>/<mechanism>.parquet
#     for every mechanism (experiment_job.py: the kind's run_job); the render (experiment_figure.py: the
#     kind's render) writes summary.parquet, claims.parquet and figures/<paper>/<figN>.png, .svg
#   shape in_render (ldpfl Fig. 4): one job computes results/<paper>/<figN>/<mechanism>.parquet, decides
#     its claims and draws it (experiment_figure.py: the kind's render)
PAPER_KIND_FIGURES = {}  # (paper, figure) -> (its kind, its entry with the scale's overrides applied)
for _spec in PAPER_KINDS.values():
    _paper, _, _fig = _spec.config_key.partition(".")
    if _spec.shape in ("mechanisms", "in_render") and _fig in config.get(_paper, {}):
        PAPER_KIND_FIGURES[(_paper, _fig)] = (_spec, figure_params(_paper, _fig))

for (_paper, _fig), (_spec, _entry) in PAPER_KIND_FIGURES.items():
    ALL_TARGETS.extend([f"figures/{_paper}/{_fig}.png", f"figures/{_paper}/{_fig}.svg"])
    register_figure(_paper, _fig, _entry.get("title", _spec.title))
    if _spec.shape == "mechanisms":

        rule:
            name:
                _spec.job_rule.format(paper=_paper, figure=_fig)
            output:
                # in the order of params.mechanisms
                [f"results/{_paper}/{_fig}/{m}.parquet" for m in _entry["mechanisms"]],
            log:
                f"logs/{_paper}/{_fig}/mechanisms.log",
            group:
                f"{_paper}_{_fig}"
            conda:
                "../../envs/ldprepro.yaml"
            threads: 1
            resources:
                **res(_spec.resource_family, entry={**_entry, "job_mechanisms": _entry["mechanisms"]}),
            params:
                kind=_spec.name,
                fig=compute_params(_entry),
                panel={},
                paper=_paper,
                figure=_fig,
                mechanisms=_entry["mechanisms"],
                shared={},
                split_of=None,
                seed=config["seed"],
                code=kind_code("experiment_job.py", _spec),
            script:
                "../scripts/experiment_job.py"

        rule:
            name:
                _spec.render_rule.format(paper=_paper, figure=_fig)
            input:
                **figure_report_inputs(_paper, _fig),
                jobs=[f"results/{_paper}/{_fig}/{m}.parquet" for m in _entry["mechanisms"]],
            output:
                **experiment_figure_outputs(_paper, _fig),
            log:
                f"logs/{_paper}/{_fig}/figure.log",
            group:
                f"{_paper}_{_fig}"
            conda:
                "../../envs/ldprepro.yaml"
            threads: 1
            resources:
                **res("render"),
            params:
                **figure_report_params(_paper, _fig),
                kind=_spec.name,
                paper=_paper,
                figure=_fig,
                fig=_entry,
                code=kind_code("experiment_figure.py", _spec),
                declarations=declarations(_paper, _fig),
            script:
                "../scripts/experiment_figure.py"

    else:

        rule:
            name:
                _spec.render_rule.format(paper=_paper, figure=_fig)
            input:
                **figure_report_inputs(_paper, _fig),
            output:
                # a render's outputs without a summary table (the job's rows are the figure's own)
                **{k: v for k, v in experiment_figure_outputs(_paper, _fig).items() if k != "summary"},
                results=f"results/{_paper}/{_fig}/{_entry['mechanism']}.parquet",
            log:
                f"logs/{_paper}/{_fig}/figure.log",
            conda:
                "../../envs/ldprepro.yaml"
            threads: 1
            resources:
                **res(_spec.resource_family, entry=_entry),
            params:
                **figure_report_params(_paper, _fig),
                kind=_spec.name,
                paper=_paper,
                figure=_fig,
                fig=_entry,
                seed=config["seed"],
                code=kind_code("experiment_figure.py", _spec),
                declarations=declarations(_paper, _fig),
            script:
                "../scripts/experiment_figure.py"


EXPERIMENT_SECTIONS = {
    **{paper: config.get(paper, {}) for paper in EXPERIMENT_PAPERS},
    **config.get("papers", {}),
}
MEAN_PAPERS = sorted(EXPERIMENT_SECTIONS)
# The whole entry (titles included) goes to the rendering rule; compute jobs get compute_params().
MEAN_FIGURES = {
    (paper, fig): figure_params(paper, fig)
    for paper, section in EXPERIMENT_SECTIONS.items()
    for fig, entry in section.items()
    if isinstance(entry, dict) and entry.get("kind") in EXPERIMENT_KINDS
}
# A figure's own claims (`claims:` in its entry) are checked now, naming the config key: their keys,
# and that the figure runs the mechanisms and ε they name (claims_in_scope).
for (_paper, _fig), _entry in MEAN_FIGURES.items():
    _key = f"papers.{_paper}.{_fig}" if _paper in config.get("papers", {}) else f"{_paper}.{_fig}"
    _where = f"{CONFIG_ORIGIN.of(_key)} {_key}.claims"
    claims_in_scope(validate_claims(_entry.get("claims", []), _where, import_functions=False), _entry, _where)
    _problems = kind_entry_problems(_entry, _key)
    if _problems:
        raise ValueError("\n".join(f"{CONFIG_ORIGIN.of(_key)}: {p}" for p in _problems))
    for _panel in _entry["panels"]:
        if kind_needs_data(_entry, _panel) and _panel["dataset"] not in config["datasets"]:
            raise ValueError(
                f"{CONFIG_ORIGIN.of(_key)}: {_key}.panels names dataset {_panel['dataset']!r}, which is not "
                "under datasets: add it there (README, 'Adding a dataset') or correct the name"
            )
# the datasets the panels read (a data-free panel, synthetic counts or a worst-case input, reads none)
UNAVAILABLE = unavailable_datasets(
    {p["dataset"] for f in MEAN_FIGURES.values() for p in f["panels"] if kind_needs_data(f, p)}
)


# Jobs that an earlier figure's job already computes (the same parameters: Figs. 11-13 of paper
# 002 repeat curves of Figs. 6, 8 and 9): their result file is that job's rows, relabelled
# (ldprepro.pipeline.shared_jobs; docs/extending.md).
SHARED = shared_sources(MEAN_FIGURES)
# LDP-SGD panels whose cross-validation splits are an earlier figure's (the same panel and split
# keys): the curves two figures share stay paired with each figure's own.
SPLITS = split_sources(MEAN_FIGURES)


# {mechanism: the earlier figure's result file} for figure_job's one mechanism, if shared
shared_of_job = lambda w: shared_files(SHARED, w.paper, w.figure, w.dataset, [w.mechanism])


# Datasets whose figure jobs run one mechanism each (config.yaml datasets.<name>.one_job_per_mechanism).
PER_MECHANISM = sorted(n for n, d in config["datasets"].items() if d.get("one_job_per_mechanism"))


rule figure_job:
    input:
        parquet="data/processed/{dataset}.parquet",
        card="data/processed/{dataset}.json",
        shared=lambda w: list(shared_of_job(w).values()),
    output:
        "results/{paper}/{figure}/{dataset}__{mechanism}.parquet",
    log:
        "logs/{paper}/{figure}/{dataset}__{mechanism}.log",
    wildcard_constraints:
        paper="|".join(MEAN_PAPERS),
        figure=r"[a-z][a-z0-9_]*",
        dataset="|".join(PER_MECHANISM) or "(?!)",  # the other datasets' panels: panel_job_<paper>_<fig>
        mechanism=r"[a-z][a-z0-9_]*",  # a registered name (ldprepro.domain.mechanisms.registry)
    conda:
        "../../envs/ldprepro.yaml"
    threads: 1
    resources:
        **res(
            # a job that only copies an earlier figure's rows is sized as a table job
            lambda w: ("tables" if shared_of_job(w) else kind_family(MEAN_FIGURES[(w.paper, w.figure)])),
            entry=lambda w: MEAN_FIGURES[(w.paper, w.figure)],
            card="card",
        ),
    params:
        # compute parameters only: a title, label or caption edit must not rerun the job
        fig=lambda w: figure_compute(MEAN_FIGURES[(w.paper, w.figure)]),
        panel=lambda w: compute_params(figure_panel(MEAN_FIGURES[(w.paper, w.figure)], w.dataset)),
        paper=lambda w: w.paper,
        figure=lambda w: w.figure,
        mechanisms=lambda w: [w.mechanism],
        shared=shared_of_job,
        split_of=lambda w: SPLITS.get((w.paper, w.figure, w.dataset)),
        seed=config["seed"],
        code=lambda w: kind_code("experiment_job.py", KINDS[MEAN_FIGURES[(w.paper, w.figure)]["kind"]]),
    script:
        "../scripts/experiment_job.py"


for (_paper, _fig), _entry in MEAN_FIGURES.items():
    # unobtainable datasets too: `rule all` does not ask for them, but asked for explicitly their
    # data rule fails saying what to do (common.smk)
    _panels = [p["dataset"] for p in _entry["panels"] if p["dataset"] not in PER_MECHANISM]
    if not _panels:
        continue

    rule:
        name:
            KINDS[_entry["kind"]].job_rule.format(paper=_paper, figure=_fig)
        input:
            parquet=lambda w, _e=_entry: panel_data(_e, w.dataset, "parquet"),
            card=lambda w, _e=_entry: panel_data(_e, w.dataset, "json"),
            shared=lambda w, _p=_paper, _f=_fig, _e=_entry: list(
                shared_files(SHARED, _p, _f, w.dataset, _e["mechanisms"]).values()
            ),
        output:
            # in the order of params.mechanisms
            [f"results/{_paper}/{_fig}/{{dataset}}__{m}.parquet" for m in _entry["mechanisms"]],
        log:
            f"logs/{_paper}/{_fig}/{{dataset}}.log",
        wildcard_constraints:
            dataset="|".join(_panels),
        conda:
            "../../envs/ldprepro.yaml"
        threads: 1
        resources:
            **res(
                kind_family(_entry),
                entry={**_entry, "job_mechanisms": _entry["mechanisms"]},
                card="card",
            ),
        params:
            # compute parameters only: a title, label or caption edit must not rerun the job
            fig=figure_compute(_entry),
            panel=lambda w, _e=_entry: compute_params(figure_panel(_e, w.dataset)),
            paper=_paper,
            figure=_fig,
            mechanisms=_entry["mechanisms"],
            shared=lambda w, _p=_paper, _f=_fig, _e=_entry: shared_files(SHARED, _p, _f, w.dataset, _e["mechanisms"]),
            split_of=lambda w, _p=_paper, _f=_fig: SPLITS.get((_p, _f, w.dataset)),
            seed=config["seed"],
            code=kind_code("experiment_job.py", KINDS[_entry["kind"]]),
        script:
            "../scripts/experiment_job.py"


# Figures with nothing to compute here (every panel's dataset unavailable): drawn together by one
# job, rule figures_not_available (a render process costs ~0.7 CPU-s to start, drawing "not
# available" panels ~0.3 s); the figures with data get one render job each.
NOTHING_TO_COMPUTE = [(p, f) for (p, f), e in MEAN_FIGURES.items() if not job_outputs(p, f, e, UNAVAILABLE)]

for (_paper, _fig), _entry in MEAN_FIGURES.items():
    ALL_TARGETS.extend([f"figures/{_paper}/{_fig}.png", f"figures/{_paper}/{_fig}.svg"])
    register_figure(_paper, _fig, _entry.get("title", ""), _entry["panels"], UNAVAILABLE)
    if (_paper, _fig) in NOTHING_TO_COMPUTE:
        continue

    rule:
        name:
            KINDS[_entry["kind"]].render_rule.format(paper=_paper, figure=_fig)
        input:
            **figure_report_inputs(_paper, _fig),
            jobs=job_outputs(_paper, _fig, _entry, UNAVAILABLE),
            # the panels' data cards, for a kind whose plot reads them (KindSpec.render_cards)
            cards=figure_cards(_entry, UNAVAILABLE),
        output:
            **experiment_figure_outputs(_paper, _fig),
        log:
            f"logs/{_paper}/{_fig}/figure.log",
        group:
            "render"
        conda:
            "../../envs/ldprepro.yaml"
        threads: 1
        resources:
            **res("render"),
        params:
            **experiment_figure_params(_paper, _fig, _entry, UNAVAILABLE),
            code=kind_code("experiment_figure.py", KINDS[_entry["kind"]]),
            declarations=declarations(_paper, _fig),
        script:
            "../scripts/experiment_figure.py"


if NOTHING_TO_COMPUTE:

    rule figures_not_available:
        input:
            report_prose=[figure_report_inputs(p, f)["report_prose"] for p, f in NOTHING_TO_COMPUTE],
        output:
            [path for p, f in NOTHING_TO_COMPUTE for path in experiment_figure_outputs(p, f).values()],
        log:
            "logs/figures_not_available.log",
        group:
            "render"
        conda:
            "../../envs/ldprepro.yaml"
        threads: 1
        resources:
            **res("render"),
        params:
            figures=[
                {
                    "params": experiment_figure_params(p, f, MEAN_FIGURES[p, f], UNAVAILABLE),
                    "output": {k: str(v) for k, v in experiment_figure_outputs(p, f).items()},
                    "report_prose": figure_report_inputs(p, f)["report_prose"],
                }
                for p, f in NOTHING_TO_COMPUTE
            ],
            code=[
                kind_code("experiment_figure.py", KINDS[k])
                for k in sorted({MEAN_FIGURES[f]["kind"] for f in NOTHING_TO_COMPUTE})
            ],
            declarations=[declarations(p, f) for p, f in NOTHING_TO_COMPUTE],
        script:
            "../scripts/experiment_figure.py"


FIGURES_MEAN = [f"figures/{paper}/{fig}.png" for paper, fig in PAPER_KIND_FIGURES] + [
    f"figures/{paper}/{fig}.png" for (paper, fig), e in MEAN_FIGURES.items() if e["kind"] == "mean"
]
FIGURES_SGD = [f"figures/{paper}/{fig}.png" for (paper, fig), e in MEAN_FIGURES.items() if e["kind"] == "sgd"]
FIGURES_BSHP = [
    f"figures/bshp/{fig}.{ext}" for (paper, fig) in MEAN_FIGURES if paper == "bshp" for ext in ("png", "svg")
]


localrules:
    figures_mean,
    figures_sgd,
    figures_bshp,


rule figures_bshp:
    input:
        FIGURES_BSHP,


rule figures_mean:
    input:
        FIGURES_MEAN,


rule figures_sgd:
    input:
        FIGURES_SGD,


# Kinds bound to one paper's config section of experiments (ldprepro.experiments.kinds.PAPER_KINDS, shape
# experiment: paper 004's section lremh). One job per experiment (rule <job_rule>, experiment_job.py: the
# kind's run_experiment) runs every method on the same reports, so the timings of a figure come from one
# process on one machine, and writes the files of every figure it feeds, one per role:
#   results/<paper>/<time fig>/<experiment>__<method>.parquet   cost_ops, lasso_epochs (decide Figs. 1-2) and CPU time (drawn only)
#   results/<paper>/<avd fig>/<experiment>__<method>.parquet    AVD, iterations, candidates, pruning
# Each figure is rendered on its own (rule <render_rule>, experiment_figure.py: the kind's render):
#   results/<paper>/<figN>/summary.parquet, claims.parquet
#   results/<paper>/<time fig>/cost_time_agreement.json         Spearman rank agreement of cost_ops with CPU time
#   figures/<paper>/<figN>.png, .svg                              one panel per f
# An unobtainable dataset gives "not available" panels.
EXPERIMENT_SETS = {}  # paper -> (its kind, {experiment: its entry, the section's settings and scale applied})
for _spec in PAPER_KINDS.values():
    if _spec.shape == "experiment" and _spec.config_key in config:
        _section = config[_spec.config_key]
        EXPERIMENT_SETS[_spec.config_key] = (
            _spec,
            {name: experiment_params(_section, name, config["scale"]) for name in _section.get("experiments", {})},
        )
EXPERIMENT_SET_FIGURES = {}  # paper -> {figure: (experiment, role)}

for _paper, (_spec, _exps) in EXPERIMENT_SETS.items():
    _unavailable = unavailable_datasets({e["dataset"] for e in _exps.values()})
    _figures = {_exp[f"{role}_figure"]: (_name, role) for _name, _exp in _exps.items() for role in _spec.roles}
    EXPERIMENT_SET_FIGURES[_paper] = _figures
    ALL_TARGETS.extend(f"figures/{_paper}/{fig}.{ext}" for fig in sorted(_figures) for ext in ("png", "svg"))

    for _name, _exp in _exps.items():

        rule:
            name:
                _spec.job_rule.format(paper=_paper, experiment=_name)
            input:
                parquet=f"data/processed/{_exp['dataset']}.parquet",
                card=f"data/processed/{_exp['dataset']}.json",
            output:
                **{role: experiment_outputs(_exp, role, _paper) for role in _spec.roles},
            log:
                f"logs/{_paper}/{_name}.log",
            # long chains (the benchmark and audit tables, LREMH's EM fits) start first, so that
            # the run does not end on one of them with a core idle
            priority: 1
            conda:
                "../../envs/ldprepro.yaml"
            threads: 1
            resources:
                **res(_spec.resource_family, entry=_exp, card="card"),
            params:
                kind=_spec.name,
                exp=compute_params(_exp),  # no title: a title edit reruns only the figures
                seed=config["seed"],
                code=kind_code("experiment_job.py", _spec),
            script:
                "../scripts/experiment_job.py"

    for _fig, (_name, _role) in sorted(_figures.items()):
        _exp = _exps[_name]
        _missing = {d: r for d, r in _unavailable.items() if d == _exp["dataset"]}
        register_figure(_paper, _fig, _exp["title"].format(n=_fig[3:]), [_exp["dataset"]], _unavailable)

        rule:
            name:
                _spec.render_rule.format(paper=_paper, figure=_fig)
            input:
                **figure_report_inputs(_paper, _fig),
                results=[] if _missing else experiment_outputs(_exp, _role, _paper),
            output:
                **experiment_figure_outputs(_paper, _fig),
                **{n: path.format(paper=_paper, figure=_fig) for r, n, path in _spec.role_outputs if r == _role},
            log:
                f"logs/{_paper}/{_fig}.log",
            group:
                "render"
            conda:
                "../../envs/ldprepro.yaml"
            threads: 1
            resources:
                **res("render"),
            params:
                **figure_report_params(_paper, _fig),
                kind=_spec.name,
                paper=_paper,
                figure=_fig,
                role=_role,
                exp=_exp,
                unavailable=_missing,
                code=kind_code("experiment_figure.py", _spec),
                declarations=declarations(_paper, _fig),
            script:
                "../scripts/experiment_figure.py"

    rule:
        name:
            f"figures_{_paper}"
        input:
            [f"figures/{_paper}/{fig}.png" for fig in sorted(_figures)],
        localrule: True


# paper 004's experiments and figures, for the report's job logs and its cost-time agreement (report.smk)
LREMH_EXPERIMENTS = EXPERIMENT_SETS.get("lremh", (None, {}))[1]
LREMH_UNAVAILABLE = unavailable_datasets({e["dataset"] for e in LREMH_EXPERIMENTS.values()})
LREMH_FIGURES = EXPERIMENT_SET_FIGURES.get("lremh", {})
