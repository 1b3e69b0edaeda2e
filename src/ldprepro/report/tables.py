"""Tables for the Snakemake report and the README's generated "Results at a glance".

Everything here is rendered from pipeline outputs (claims tables, the audit table, data cards,
the jobs' own log lines) plus the configuration; nothing is typed in.
"""

from __future__ import annotations

import json
import platform
import sys
from importlib import metadata
from pathlib import Path

import pandas as pd

from ldprepro.pipeline.io import atomic_write_text
from ldprepro.report.markup import html_text, markdown_text

PACKAGES = ["ldprepro", "snakemake", "numpy", "pandas", "scipy", "scikit-learn", "matplotlib", "pyarrow", "requests"]
GLANCE_START = "<!-- results-at-a-glance:start -->"
GLANCE_END = "<!-- results-at-a-glance:end -->"


def _page(title: str, body: str) -> str:
    style = (
        "body{font-family:sans-serif;font-size:13px} table{border-collapse:collapse} "
        "td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top} th{background:#eee}"
    )
    return (
        f"<html><head><meta charset='utf-8'><title>{html_text(title)}</title><style>{style}</style></head>"
        f"<body><h2>{html_text(title)}</h2>{body}</body></html>"
    )


def claims_table(paths) -> pd.DataFrame:
    frames = [pd.read_parquet(p) for p in paths]
    return (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=["paper", "figure", "claim", "verdict", "evidence"])
    )


def claims_html(paths) -> str:
    """Every claim of every figure with its verdicts (the fair reading, ``verdict``, and the literal
    one, ``verdict_strict``), and the Benjamini–Hochberg q of its decisive p per direction
    (secondary, ``claims.tables.with_q``): the headline counts first, then the experimental claims,
    then the findings on the papers' theorems and algorithms, each once."""
    from ldprepro.claims.tables import headline, with_q

    df = claims_table(paths)
    df = with_q(df) if "p_value" in df else df
    if "statement" not in df:
        return _page("The papers' claims and our verdicts", df.to_html(index=False, escape=True))
    theorem = df["statement"] == "theorem"
    findings = df[theorem & df["counted"].astype(bool)]
    body = (
        f"<p>Headline, on the papers' data: {html_text(headline(df))}.</p>"
        "<h3>Experimental claims</h3>"
        + df[~theorem].to_html(index=False, escape=True)
        + "<h3>Errors in the papers' theorems and algorithms</h3><p>Every theorem, lemma and algorithm statement "
        "of the papers we check, one row per finding (its test says how it is decided; the figures citing it "
        "show it in their badges).</p>" + findings.to_html(index=False, escape=True)
    )
    return _page("The papers' claims and our verdicts", body)


#: what an audit verdict rests on (issue 54 item 5; docs/audit.md "What the audit proves")
AUDIT_SCOPE = (
    "The exact loss is that of the law each mechanism declares (its pmf/pdf). Its sampler is checked "
    "against that law with a finite number of draws (column 'proves'), so a sampler that deviates from "
    "its declared law only on outputs rarer than about one in that many draws cannot be excluded: "
    "'holds' means the declared law meets the claimed ε and no deviation of the sampler was seen."
)


def audit_html(audit: pd.DataFrame) -> str:
    cols = [
        "family",
        "subject",
        "eps_claimed",
        "exact_loss",
        "eps_empirical",
        "tpr",
        "fpr",
        "trials",
        "verdict",
        "proves",
        "presented_as_ldp",
        "claim_source",
        "notes",
    ]
    return _page(
        "Privacy audit: claimed vs exact vs empirical ε",
        f"<p>{html_text(AUDIT_SCOPE)}</p>"
        + audit[[c for c in cols if c in audit.columns]].to_html(index=False, float_format="%.4g"),
    )


def data_cards_html(cards: list[dict], unavailable: dict | None = None) -> str:
    """One section per dataset: its data card, or why it could not be obtained here."""
    parts = []
    for card in cards:
        summary = {
            k: card.get(k)
            for k in ("dataset", "description", "source", "licence", "rows_before_cleaning", "rows_after_cleaning")
        }
        cols = pd.DataFrame(card.get("columns", []))
        parts.append(
            f"<h3>{html_text(str(card.get('dataset')))}</h3>"
            + pd.DataFrame([summary]).to_html(index=False)
            + f"<p>dropped: {html_text(json.dumps(card.get('dropped', {}), default=str)[:2000])}</p>"
            + (cols.to_html(index=False) if len(cols) else "")
        )
    for name, reason in sorted((unavailable or {}).items()):
        parts.append(f"<h3>{html_text(name)}</h3><p><b>not available here</b>: {html_text(reason)}</p>")
    return _page("Data cards", "".join(parts))


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def wall_times(job_logs) -> pd.DataFrame:
    """Seconds per stage (the first folder under ``logs/``) from the jobs' own ``resources:`` log
    lines (ldprepro.pipeline.jobsetup). ``missing`` counts the stage's jobs whose log has no such
    line (a log removed, or a job run before the line existed); they add no seconds."""
    from ldprepro.pipeline.jobsetup import logged_resources

    rows = []
    for path in job_logs:
        path = Path(path)
        parts = path.parts
        i = parts.index("logs") if "logs" in parts else -1
        stage = parts[i + 1] if 0 <= i < len(parts) - 2 else path.stem
        line = logged_resources(path.read_text(encoding="utf-8", errors="replace")) if path.exists() else None
        rows.append(
            {"stage": stage, "job": path.stem, "seconds": line["wall_s"] if line else 0.0, "missing": line is None}
        )
    df = pd.DataFrame(rows, columns=["stage", "job", "seconds", "missing"])
    return df.groupby("stage", as_index=False).agg(
        jobs=("job", "count"), seconds=("seconds", "sum"), missing=("missing", "sum")
    )


def provenance_html(config: dict, job_logs, figures: list[dict] | None = None) -> str:
    """Scale, seeds, per-figure status, wall time per stage (from the logs of the jobs upstream of
    the report, :func:`wall_times`), package versions and the configuration."""
    versions = pd.DataFrame(sorted(package_versions().items()), columns=["package", "version"])
    times = wall_times(job_logs)
    status = pd.DataFrame(figures or [], columns=["paper", "figure", "title", "status", "reason"])
    import yaml

    body = (
        "<h3>Scale and seeds</h3>"
        f"<p>scale: <b>{html_text(str(config.get('scale')))}</b>; base seed: <b>{config.get('seed')}</b>. "
        "Every job's generator is SeedSequence(seed, spawn_key = sha256 of the job's parameters).</p>"
        "<h3>Figures: built, partial (some panels 'not available'), not reproducible here</h3>"
        + status.to_html(index=False)
        + "<h3>Wall time per stage (sum of job times, from each job's own log)</h3>"
        + times.to_html(index=False, float_format="%.1f")
        + "<h3>Package versions</h3>"
        + versions.to_html(index=False)
        + "<h3>Configuration</h3><pre>"
        + html_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
        + "</pre>"
    )
    return _page("Provenance", body)


def short_status(f: dict) -> str:
    """A figure's status in a few words: what is missing (the datasets) and a link to the data page
    that says why, instead of the full reasons (docs/data.md)."""
    missing = sorted(f.get("unavailable") or {})
    if not missing:
        return f["status"] + (f" ({markdown_text(f['reason'])})" if f.get("reason") else "")
    return f"{f['status']}: missing {markdown_text(', '.join(missing))} ([why](docs/data.md))"


def glance_markdown(figures: list[dict], claims: pd.DataFrame) -> str:
    """One line per paper figure: built / partial / not reproducible offline (what is missing, linked
    to the data page), and the verdicts of its claims that count (each finding once, in the fair
    reading; "(k of n panels)" where a verdict rests on fewer panels than the paper shows), the
    findings on theorems apart. ``figures``: dicts with paper, figure, title, status, reason and
    ``unavailable`` ({dataset: reason})."""
    from ldprepro.claims.tables import headline, verdict_counts

    lines = [
        f"Headline, on the papers' data: {headline(claims)}. Fair reading first (ties and differences within the "
        "practical margin neutral, collective claims best against best), literal reading in brackets; "
        "[docs/verdicts-standard.md](docs/verdicts-standard.md), per claim: "
        "[docs/figures/verdicts.md](docs/figures/verdicts.md).",
        "",
        "| paper | figure | status | verdicts on the paper's data (reproductions) | verdicts on our stand-ins "
        "(extension) | thumbnail |",
        "|---|---|---|---|---|---|",
    ]
    for f in figures:
        c = claims[(claims["paper"] == f["paper"]) & (claims["figure"] == f["figure"])] if len(claims) else claims
        paper = verdict_counts(c, "paper", "experimental")
        theorems = verdict_counts(c, "paper", "theorem")
        if theorems != "—":
            paper = ("" if paper == "—" else paper + "; ") + f"theorems: {theorems}"
        rebuilt = (
            c[(c["data_role"] == "paper") & c["reconstructed"].astype(bool)] if "reconstructed" in c else c.iloc[0:0]
        )
        if len(rebuilt):
            shown = ", ".join(f"{n} {v}" for v, n in rebuilt["verdict"].value_counts().items())
            paper = ("" if paper == "—" else paper + "; ") + f"reconstructed by us (not counted): {shown}"
        thumb = f"docs/figures/{f['paper']}_{f['figure']}.png"
        lines.append(
            f"| {f['paper']} | {f['figure']}: {markdown_text(f.get('title', ''))} | {short_status(f)} | {paper} | "
            f"{verdict_counts(c, 'substitute')} | <a href='{thumb}'><img src='{thumb}' width='220'></a> |"
        )
    return "\n".join(lines) + "\n"


def splice_readme(readme: Path, block: str, start: str = GLANCE_START, end: str = GLANCE_END) -> None:
    """Replace the text between two marker comments of the README (atomically); by default the
    results-at-a-glance markers."""
    text = readme.read_text()
    if start not in text or end not in text:
        raise ValueError(f"{readme}: markers {start} … {end} not found")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    atomic_write_text(readme, head + start + "\n" + block + end + tail)


def main(argv=None) -> int:  # pragma: no cover - thin CLI
    """`python -m ldprepro.report docs/figures/at_a_glance.md README.md`"""
    argv = sys.argv[1:] if argv is None else argv
    src, readme = Path(argv[0]), Path(argv[1])
    splice_readme(readme, src.read_text())
    return 0


def datasets_markdown(cards: list[dict]) -> str:
    """docs/figures/datasets.md: rows before and after cleaning, what was dropped and why, the
    columns and the named views of every dataset built, from its data card (generated)."""
    lines = [
        "<!-- generated from the data cards (snakemake readme_figures); do not edit by hand -->",
        "# Datasets as built",
        "",
        "| dataset | kind | rows before cleaning | rows after | dropped (reason: rows) | columns | views |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in sorted(cards, key=lambda c: c["dataset"]):
        dropped = "; ".join(f"{markdown_text(d['reason'])}: {d['rows']:,}" for d in c.get("dropped", [])) or "—"
        types: dict[str, int] = {}
        for col in c.get("columns", []):
            types[col["type"]] = types.get(col["type"], 0) + 1
        cols = ", ".join(f"{n} {t}" for t, n in types.items())
        views = "; ".join(f"{k}: {v['rows']:,}" for k, v in (c.get("views") or {}).items()) or "—"
        lines.append(
            # the name in a code span: dataset names are [a-z][a-z0-9_]* (config schema)
            f"| `{c['dataset']}` | {markdown_text(c.get('kind', ''))} | {c['rows_before_cleaning']:,} "
            f"| {c['rows_after_cleaning']:,} | {dropped} | {cols} | {views} |"
        )
    return "\n".join(lines) + "\n"
