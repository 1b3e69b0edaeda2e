"""The extension path, run as the docs give it: a user's experiment with its own claims
(docs/extending.md, "Your own claims") and a toy sixth paper added from a folder under tests/ with
no edit under src/ or workflow/ (docs/extending.md, "Adding a paper"), built by the real workflow
at smoke scale."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_pipeline_smoke import _mirror_env, smoke_config
from workflow_cmd import snakemake_cmd

REPO = Path(__file__).resolve().parents[1]
TOY = REPO / "tests/toy_paper/config.yaml"
#: markup of every kind a declared string could smuggle into an output (issue 54 item 2): a reST
#: directive after blank lines, live HTML, Markdown links and images, emphasis, mathtext ($…$, unbalanced).
#: (Text with "</script" is refused at load: tests/test_config_guard.py.)
INJECTED = (
    "\n\n.. raw:: html\n\n   <script>document.documentElement.setAttribute('data-pwned','script')</scr ipt>\n\n"
    "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\"> "
    "[link](http://evil.example/) ![image](http://evil.example/a.png) *em* `code` $\\frac{$ |sub| x_"
)


def docs_example() -> dict:
    """The YAML block that follows ``<!-- example: user-experiment -->`` in docs/extending.md."""
    text = (REPO / "docs/extending.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- example: user-experiment -->\s*```yaml\n(.*?)```", text, re.S)
    assert block, "docs/extending.md lost its user-experiment example"
    return yaml.safe_load(block.group(1))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("extension")
    cfg = smoke_config()
    cfg.update(docs_example())
    # the same experiment with PM discretised (Alg. 5): its Laplace and HM-TP jobs are the first's
    # computation, shared (ldprepro.pipeline.shared_jobs), its PM job its own
    again = {k: v for k, v in cfg["experiments"]["pm_vs_laplace"].items() if k != "claims"}
    cfg["experiments"]["pm_vs_laplace_discretised"] = {
        **again,
        "title": "PM discretised",
        "discretize": 10,
        "discretize_mechanisms": ["pm"],
    }
    # issue 54 item 2: the same experiment again with markup injected through every declared string
    # (its jobs are the first's computation, shared); test_injected_text_stays_text checks every output
    injected = {k: v for k, v in cfg["experiments"]["pm_vs_laplace"].items() if k != "claims"}
    claim = {k: v for k, v in cfg["experiments"]["pm_vs_laplace"]["claims"][0].items() if k != "for_each"}
    cfg["experiments"]["x1"] = {
        **injected,
        "title": f"Title {INJECTED}",
        "panels": [{**injected["panels"][0], "title": f"Panel {INJECTED}"}],
        "claims": [{**claim, "claim": f"PM beats Laplace {INJECTED}", "scope": f"scope {INJECTED}", "mechanism": "pm"}],
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True))
    targets = [
        "figures/experiments/pm_vs_laplace.png",
        "figures/experiments/pm_vs_laplace_discretised.png",
        "figures/experiments/x1.png",
        "results/experiments/x1/caption.rst",
        "figures/toy/fig1.png",
        "results/toy/fig1/caption.rst",
    ]
    cmd = snakemake_cmd("--cores", "2", "--configfile", str(TOY), "--", *targets)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_mirror_env(), cwd=workdir)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return workdir


@pytest.mark.slow
def test_the_docs_user_experiment_gets_its_claims_decided_as_a_user_role(built):
    claims = pd.read_parquet(built / "results/experiments/pm_vs_laplace/claims.parquet").set_index("claim")
    assert set(claims.index) == {
        "PM estimates the mean more accurately than Laplace at every ε",
        "HM-TP estimates the mean more accurately than Laplace at every ε",
    }
    assert (claims["data_role"] == "user").all()
    # PM's variance is below Laplace's 8/ε² everywhere on [−1, 1]: on 200 paired repetitions the
    # ratio of mean squared errors is far below 1 at both ε
    assert (claims["verdict"] == "holds").all(), claims[["verdict", "evidence"]]
    assert (built / "figures/experiments/pm_vs_laplace.png").stat().st_size > 1000


@pytest.mark.slow
def test_a_toy_paper_from_a_folder_builds_with_its_false_claim_refuted(built):
    claims = pd.read_parquet(built / "results/toy/fig1/claims.parquet").set_index("claim")
    assert claims.loc["PM's MSE is smaller than Laplace's at every ε", "verdict"] == "holds"
    assert claims.loc["Laplace's MSE is smaller than PM's at every ε", "verdict"] == "does not hold"
    assert (claims["data_role"] == "paper").all()
    caption = (built / "results/toy/fig1/caption.rst").read_text(encoding="utf-8")
    assert "does not hold" in caption and "Toy paper Fig. 1" in caption
    assert (built / "figures/toy/fig1.svg").stat().st_size > 1000


@pytest.mark.slow
def test_a_second_figure_with_the_same_job_reuses_its_rows_and_computes_only_its_own(built):
    """Two user experiments that differ only in PM's discretisation: the second's Laplace and HM-TP
    files are the first's rows relabelled (its log says whose), its PM rows its own draws."""
    first, second = built / "results/experiments/pm_vs_laplace", built / "results/experiments/pm_vs_laplace_discretised"
    for mechanism in ("laplace", "hm_tp"):
        a = pd.read_parquet(first / f"synth_uniform__{mechanism}.parquet")
        b = pd.read_parquet(second / f"synth_uniform__{mechanism}.parquet")
        assert (b["figure"] == "pm_vs_laplace_discretised").all()
        pd.testing.assert_frame_equal(a.drop(columns="figure"), b.drop(columns="figure"))
    log = (built / "logs/experiments/pm_vs_laplace_discretised/synth_uniform.log").read_text(encoding="utf-8")
    assert "results/experiments/pm_vs_laplace/synth_uniform__laplace.parquet (the same computation)" in log
    pm_a = pd.read_parquet(first / "synth_uniform__pm.parquet")
    pm_b = pd.read_parquet(second / "synth_uniform__pm.parquet")
    assert "discretize" in pm_b and (pm_b["discretize"] == 10).all() and "discretize" not in pm_a
    assert not pm_a["value"].reset_index(drop=True).equals(pm_b["value"].reset_index(drop=True))
    assert (built / "figures/experiments/pm_vs_laplace_discretised.png").stat().st_size > 1000


def _no_live_markup(html: str, where: str) -> None:
    """No element the injected text could have made: a script, an image, a link to its site,
    emphasis or code from its asterisks and backquotes."""
    for made in ("<script", "<img", 'href="http://evil', "<em>em</em>", "<code>code</code>", "<cite>"):
        assert made not in html, f"{where}: {made!r} made from declared text"


@pytest.mark.slow
def test_injected_text_stays_text_in_every_output(built, tmp_path):
    """Issue 54 item 2: a user experiment whose title, panel title, claim and scope carry a reST
    directive, HTML, Markdown links and images, emphasis and mathtext. The caption stays text through
    the report's own rendering (Jinja, then docutils), the figure is drawn with the text as written,
    the verdicts page and the results block write it as Markdown text, and report.html, opened in
    headless Chromium, runs none of it."""
    import jinja2
    from docutils.core import publish_parts
    from test_report import rendered_dom, report_entry

    from ldprepro.report import tables as report
    from ldprepro.report.verdicts_page import verdicts_markdown

    caption = (built / "results/experiments/x1/caption.rst").read_text(encoding="utf-8")
    assert ".. raw::" not in caption.replace("\\.\\. raw", "")
    rendered = publish_parts(jinja2.Environment().from_string(caption).render(), writer="html")["body"]
    _no_live_markup(rendered, "caption.rst")
    assert "PM beats Laplace .. raw:: html &lt;script&gt;document" in rendered

    svg = (built / "figures/experiments/x1.svg").read_text(encoding="utf-8")
    assert "<script" not in svg and "<!-- Title " in svg and "&lt;script&gt;document" in svg  # as written
    assert "$\\frac{$" in svg  # unbalanced mathtext drawn as text (it used to stop the render)
    # no ylabel declared: the metric in words, not its key (issue 54, low)
    assert "<!-- mean squared error of the mean estimate -->" in svg and "<!-- sq_error -->" not in svg

    claims = report.claims_table([built / "results/experiments/x1/claims.parquet"])
    page = verdicts_markdown(claims, "smoke", 1) + report.glance_markdown(
        [{"paper": "experiments", "figure": "x1", "title": f"Title {INJECTED}", "status": "built"}], claims
    )
    for line in page.splitlines():
        assert "<script" not in line and "<img src=x" not in line and "](http" not in line and "*em*" not in line, line
        assert "$\\frac" not in line, line  # GitHub typesets $…$ as math
    assert "PM beats Laplace \\.\\. raw\\:\\: html &lt;script&gt;" in page

    proc = subprocess.run(
        snakemake_cmd("--configfile", str(TOY), "--report", "report.html"),
        capture_output=True,
        text=True,
        env=_mirror_env(),
        cwd=built,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    dom = rendered_dom(built / "report.html", tmp_path / "profile")
    assert 'data-pwned="' not in dom  # neither the script nor the image's onerror ran
    # the caption as the page holds it: HTML made by docutils from the escaped reST (the labels and
    # the job's parameters beside it are JSON data the page shows as text)
    entry = report_entry(dom, "figures/experiments/x1.png")  # script text: serialised as it is
    shown = json.loads(re.search(r'"caption": ("(?:[^"\\]|\\.)*")', entry).group(1))
    _no_live_markup(shown, "report.html caption")
    assert "PM beats Laplace .. raw:: html &lt;script&gt;document" in shown
