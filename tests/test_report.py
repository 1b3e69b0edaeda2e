"""Report tables and the generated README block."""

from __future__ import annotations

import pandas as pd
import pytest

from ldprepro.report import tables as report


def test_glance_markdown_counts_paper_and_substitute_verdicts_apart():
    claims = pd.DataFrame(
        [
            {"paper": "dct", "figure": "fig2", "claim": "a", "verdict": "holds", "data_role": "paper"},
            {"paper": "dct", "figure": "fig2", "claim": "b", "verdict": "does not hold", "data_role": "paper"},
            {"paper": "dct", "figure": "fig2", "claim": "c", "verdict": "holds", "data_role": "paper"},
            {"paper": "dct", "figure": "fig2", "claim": "d", "verdict": "inconclusive", "data_role": "substitute"},
        ]
    )
    figs = [
        {"paper": "dct", "figure": "fig2", "title": "AE vs ε", "status": "built", "reason": ""},
        {
            "paper": "hiera",
            "figure": "fig1",
            "title": "MAE vs ε",
            "status": "not reproducible here",
            "reason": "IPUMS extract not configured",
        },
    ]
    md = report.glance_markdown(figs, claims)
    assert md.startswith("Headline, on the papers' data: experimental claims (3): 2 holds, 1 does not hold")
    assert (
        "| dct | fig2: AE vs ε | built | 2 holds, 1 does not hold | 1 inconclusive | "
        "<a href='docs/figures/dct_fig2.png'>"
    ) in md
    assert "not reproducible here (IPUMS extract not configured) | — | — |" in md


def test_splice_readme_replaces_only_the_block(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{report.GLANCE_START}\nold\n{report.GLANCE_END}\nrest\n")
    report.splice_readme(readme, "new table\n")
    assert readme.read_text() == f"intro\n{report.GLANCE_START}\nnew table\n{report.GLANCE_END}\nrest\n"
    (tmp_path / "NO.md").write_text("no markers")
    with pytest.raises(ValueError, match="markers"):
        report.splice_readme(tmp_path / "NO.md", "x")


def test_wall_times_per_stage(tmp_path):
    for stage, job, s in [("dct", "a", 1.5), ("dct", "b", 2.0), ("audit", "c", 4.0)]:
        path = tmp_path / "logs" / stage / "fig1" / f"{job}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"INFO started\nINFO resources: cpu_s=0.5 wall_s={s} max_rss_mb=10.0 setup_cpu_s=0.2 rule=figure_job\n"
        )
    # a job whose log never got its line (it was removed, or the job ran before the line existed)
    (tmp_path / "logs" / "audit" / "d.log").write_text("INFO started\n")
    times = report.wall_times(sorted(tmp_path.glob("logs/**/*.log")) + [tmp_path / "logs/audit/gone.log"])
    times = times.set_index("stage")
    assert times.loc["dct", "seconds"] == pytest.approx(3.5) and times.loc["dct", "jobs"] == 2
    assert times.loc["dct", "missing"] == 0
    assert times.loc["audit", "seconds"] == pytest.approx(4.0) and times.loc["audit", "missing"] == 2


def test_html_tables_render():
    audit = pd.DataFrame(
        [
            {
                "family": "numeric",
                "subject": "pm",
                "eps_claimed": 1.0,
                "exact_loss": 1.0,
                "eps_empirical": 0.99,
                "verdict": "holds",
            }
        ]
    )
    assert "<table" in report.audit_html(audit) and "pm" in report.audit_html(audit)
    card = {"dataset": "adult", "rows_before_cleaning": 3, "columns": [{"name": "age", "type": "numeric"}]}
    assert "adult" in report.data_cards_html([card])
    versions = report.package_versions()
    assert versions["numpy"] != "not installed" and "python" in versions


# ------------------------------------------------------------------ the built report in a real browser
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium() -> str:
    """Debian's chromium, installed with apt-get when missing (CI runs as root)."""
    import os
    import shutil
    import subprocess

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe:
        return exe
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing and the tests are not root (cannot apt-get)")
        pytest.skip("chromium missing and not root")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env, capture_output=True)
    subprocess.run(
        ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"],
        check=True,
        env=env,
        capture_output=True,
    )
    return shutil.which("chromium")


def rendered_dom(html_file, profile_dir) -> str:
    """The page's DOM after its JavaScript ran (headless Chromium, fresh profile, no network)."""
    import subprocess

    proc = subprocess.run(
        [
            chromium(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile_dir}",
            "--virtual-time-budget=15000",
            "--dump-dom",
            f"file://{html_file}",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def caption_phrase(rst_text: str) -> str:
    """The longest plain phrase (letters, digits, spaces) on one line of a caption: it survives the
    caption's rst-to-HTML conversion and the JSON escaping of the report's data unchanged."""
    import re

    runs = [r for line in rst_text.splitlines() for r in re.findall(r"[A-Za-z0-9][A-Za-z0-9 ,]{10,}[A-Za-z0-9]", line)]
    return max(runs, key=len).strip()


def report_entry(dom: str, path: str) -> str:
    """The report's data for one output (name, size, caption), as the page's script holds it."""
    start = dom.find(f'"{path}": {{')
    assert start >= 0, f"{path} is not in the report"
    end = dom.find('"data":', start)
    return dom[start : end if end > start else start + 20000]


def test_datasets_page_is_generated_from_the_cards():
    from ldprepro.report.tables import datasets_markdown

    card = {
        "dataset": "toy",
        "kind": "csv",
        "rows_before_cleaning": 1200,
        "rows_after_cleaning": 1000,
        "dropped": [{"reason": "salary | missing", "rows": 200, "examples": []}],
        "columns": [
            {"name": "a", "type": "numeric"},
            {"name": "b", "type": "numeric"},
            {"name": "c", "type": "binary"},
        ],
        "views": {"complete_cases": {"rows": 900}},
    }
    md = datasets_markdown([card])
    assert "| `toy` | csv | 1,200 | 1,000 | salary \\| missing: 200 | 2 numeric, 1 binary | complete_cases: 900 |" in md


def test_the_claims_page_lists_each_finding_once_in_its_own_section(tmp_path):
    from ldprepro.claims.verdicts import Claim, exact_point, judge

    def claim(text, **kw):
        return Claim("bshp", "fig1", text, "s", "closed-form", points=[exact_point("ε=1", False, 2.0)], **kw)

    thm = {"statement": "theorem", "finding": "bshp: Theorem 7"}
    table = judge([claim("Theorem 7 holds", **thm), claim("Theorem 7 holds (again)", counted=False, **thm), claim("A")])
    table.attrs = {}
    table.to_parquet(tmp_path / "claims.parquet")
    page = report.claims_html([tmp_path / "claims.parquet"])
    head, findings = page.split("<h3>Errors in the papers' theorems and algorithms</h3>")
    assert "Theorem 7 holds" not in head  # not among the experimental claims
    assert "Theorem 7 holds" in findings and "(again)" not in findings
    assert "experimental claims (1): 1 does not hold" in page and "theorems, lemmas and algorithms (1)" in page
