"""SYNTHETIC microdata in the official IPUMS extract format, at the papers' sizes (not IPUMS data).

    .venv/bin/python -m timing.ipums_scale OUT_DIR [--fraction 0.01] [--datasets br mx us]

Writes, per dataset, ``SYNTHETIC_<name>.dat.gz`` (fixed-width records, one person per line) and
``SYNTHETIC_<name>.xml`` (its DDI-Codebook 2.5, as IPUMS ships it: ``<var name dcml>`` with
``<location StartPos EndPos width>`` and ``<catgry>`` value labels), for the variables the
configuration's ``datasets.ipums_*.options`` select (read from config.yaml), preceded by IPUMS's technical variables
(COUNTRY/YEAR/SAMPLE/SERIAL/PERNUM). Every DDI title and file name says SYNTHETIC: the values are
random draws from simple made-up laws (income log-normal and increasing in age, hours and education;
about 2% missing / not-in-universe codes per variable with such codes), meant only to measure the
pipeline's cost at the papers' sizes. They are not a stand-in for any census.

Paper sizes (person records): BR ≈ 4 M (Wang et al. 2019 / paper 002: "4M tuples"; paper 000:
3.86 M), MX ≈ 4 M (Wang et al.), US ≈ 1.52 M (paper 000, docs/papers/hiera.md). ``--fraction`` scales them.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import numpy as np

from ldprepro.pipeline.seeding import rng_for

PAPER_SIZES = {"br": 4_000_000, "mx": 4_000_000, "us": 1_520_000}
SAMPLES = {
    "br": ("ipumsi", 76, 2010, 76201001),
    "mx": ("ipumsi", 484, 2010, 484201001),
    "us": ("usa", 840, 2010, 201001),
}

# name: (width, categories {code: label} or None for numeric, missing/NIU codes)
VARIABLES = {
    "AGE": (3, None, [999]),
    "CHBORN": (2, None, [98, 99]),
    "CHSURV": (2, None, [98, 99]),
    "FAMSIZE": (2, None, [99]),
    "NCHILD": (1, None, []),
    "HRSWORK1": (3, None, [998, 999]),
    "UHRSWORK": (2, None, []),
    "INCTOT": (7, None, [9999998, 9999999]),
    "INCEARN": (8, None, [99999998, 99999999]),
    "SEX": (1, {1: "Male", 2: "Female", 9: "Unknown"}, [9]),
    "MARST": (
        1,
        {
            1: "Single/never married",
            2: "Married/in union",
            3: "Separated/divorced/spouse absent",
            4: "Widowed",
            9: "Unknown/missing",
        },
        [9],
    ),
    "NATIVITY": (1, {1: "Native-born", 2: "Foreign-born", 9: "Unknown/missing"}, [9]),
    "URBAN": (1, {1: "Rural", 2: "Urban", 9: "Unknown"}, [9]),
    "LIT": (1, {0: "NIU (not in universe)", 1: "No, illiterate", 2: "Yes, literate", 9: "Unknown/missing"}, [0, 9]),
    "SCHOOL": (
        1,
        {
            0: "NIU (not in universe)",
            1: "Yes",
            2: "No, not specified",
            3: "No, attended in the past",
            4: "No, never attended",
            9: "Unknown/missing",
        },
        [0, 9],
    ),
    "EDATTAIN": (
        1,
        {
            0: "NIU (not in universe)",
            1: "Less than primary completed",
            2: "Primary completed",
            3: "Secondary completed",
            4: "University completed",
            9: "Unknown",
        },
        [0, 9],
    ),
    "EMPSTAT": (
        1,
        {0: "NIU (not in universe)", 1: "Employed", 2: "Unemployed", 3: "Inactive", 9: "Unknown/missing"},
        [0, 9],
    ),
    "CLASSWK": (
        1,
        {
            0: "NIU (not in universe)",
            1: "Self-employed",
            2: "Wage/salary worker",
            3: "Unpaid worker",
            4: "Other",
            9: "Unknown/missing",
        },
        [0, 9],
    ),
    "RACE": (
        1,
        {
            1: "White",
            2: "Black/African American",
            3: "American Indian or Alaska Native",
            4: "Chinese",
            5: "Japanese",
            6: "Other Asian or Pacific Islander",
            7: "Other race",
            8: "Two major races",
            9: "Three or more major races",
        },
        [],
    ),
    "RELATE": (
        1,
        {1: "Head", 2: "Spouse/partner", 3: "Child", 4: "Other relative", 5: "Non-relative", 9: "Unknown"},
        [9],
    ),
    "DISABLED": (1, {1: "Disabled", 2: "Not disabled", 9: "Unknown"}, [9]),
    "RELIGION": (
        1,
        {
            1: "No religion",
            2: "Buddhist",
            3: "Hindu",
            4: "Jewish",
            5: "Muslim",
            6: "Christian",
            7: "Other",
            9: "Unknown",
        },
        [9],
    ),
    "OWNERSHIP": (1, {0: "NIU (not in universe)", 1: "Owned", 2: "Not owned", 9: "Unknown"}, [0, 9]),
    "ELECTRIC": (
        1,
        {0: "NIU (not in universe)", 1: "Yes, has electricity", 2: "No, lacks electricity", 9: "Unknown"},
        [0, 9],
    ),
    "EDUC": (
        2,
        {
            0: "N/A or no schooling",
            1: "Nursery school to grade 4",
            2: "Grade 5, 6, 7, or 8",
            3: "Grade 9",
            4: "Grade 10",
            5: "Grade 11",
            6: "Grade 12",
            7: "1 year of college",
            8: "2 years of college",
            10: "4 years of college",
            11: "5+ years of college",
        },
        [],
    ),
}


CONFIG = Path(__file__).resolve().parents[1] / "config.yaml"


def selected(ds: str, config: Path = CONFIG) -> dict[str, list]:
    """{variable: missing codes} the configuration selects for ipums_<ds> (numeric, then categorical)."""
    import yaml

    opts = yaml.safe_load(config.read_text())["datasets"][f"ipums_{ds}"]["options"]
    out = {}
    for var, cfg in {**(opts.get("numeric") or {}), **(opts.get("categorical") or {})}.items():
        if var not in VARIABLES:
            raise ValueError(
                f"config.yaml datasets.ipums_{ds}: no synthetic law for variable {var!r}; add it to VARIABLES"
            )
        out[var] = list((cfg or {}).get("missing_codes", []))
    return out


TECHNICAL = [("COUNTRY", 3), ("YEAR", 4), ("SAMPLE", 9), ("SERIAL", 10), ("PERNUM", 3)]
CHUNK = 250_000


def _draw(name: str, n: int, rng: np.random.Generator, cols: dict, missing: list) -> np.ndarray:
    """Made-up laws (SYNTHETIC); incomes depend on age, hours and education so that regressions
    have something to find. ``missing``: the configured missing / NIU codes (2% of records)."""
    width, cats, _ = VARIABLES[name]
    if cats is not None:
        valid = [c for c in cats if c not in missing]
        out = rng.choice(
            valid, size=n, p=np.diff(np.concatenate([[0], np.sort(rng.uniform(0, 1, len(valid) - 1)), [1]]))
        )
    elif name == "AGE":
        out = np.minimum(rng.gamma(2.2, 16.0, n), 100).astype(np.int64)
    elif name in ("CHBORN", "CHSURV"):
        out = np.minimum(rng.poisson(2.0, n), 20)
        if name == "CHSURV" and "CHBORN" in cols:
            out = np.minimum(out, cols["CHBORN"])
    elif name == "FAMSIZE":
        out = 1 + np.minimum(rng.poisson(2.4, n), 29)
    elif name == "NCHILD":
        out = np.minimum(rng.poisson(0.9, n), 9)
    elif name in ("HRSWORK1", "UHRSWORK"):
        out = np.where(rng.random(n) < 0.4, 0, np.clip(rng.normal(40, 10, n), 1, 99)).astype(np.int64)
    elif name in ("INCTOT", "INCEARN"):
        age = cols.get("AGE", np.full(n, 40))
        hours = cols.get("HRSWORK1", cols.get("UHRSWORK", np.full(n, 20)))
        edu = cols.get("EDATTAIN", cols.get("EDUC", np.full(n, 2)))
        log_mean = 6.5 + 0.02 * np.minimum(age, 60) + 0.02 * hours + 0.25 * np.minimum(edu, 11)
        cap = 10 ** (width - 1) - 1
        out = np.minimum(np.exp(rng.normal(log_mean, 0.8)), cap).astype(np.int64)
    else:  # pragma: no cover - every variable above has a law
        raise ValueError(f"no synthetic law for {name}")
    out = np.asarray(out, dtype=np.int64)
    if missing:
        hit = rng.random(n) < 0.02
        out[hit] = rng.choice(missing, size=int(hit.sum()))
    return out


def _digits(values: np.ndarray, width: int) -> np.ndarray:
    """(n, width) ASCII digits, zero-padded (IPUMS fixed-width numbers)."""
    v = values.astype(np.int64)
    if np.any(v < 0) or np.any(v >= 10**width):
        raise ValueError(f"value out of range for width {width}")
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    return ((v[:, None] // powers) % 10 + 48).astype(np.uint8)


def layout(ds: str) -> list[tuple[str, int, int]]:
    """(name, start, end) 1-based columns of the record."""
    pos, out = 1, []
    for name, width in TECHNICAL + [(v, VARIABLES[v][0]) for v in selected(ds)]:
        out.append((name, pos, pos + width - 1))
        pos += width
    return out


def write_ddi(path: Path, ds: str, n: int) -> None:
    collection, *_ = SAMPLES[ds]
    parts = []
    for name, start, end in layout(ds):
        cats = VARIABLES.get(name, (None, None, None))[1]
        cat_xml = "".join(
            f"<catgry><catValu>{c}</catValu><labl>{lab}</labl></catgry>" for c, lab in (cats or {}).items()
        )
        parts.append(
            f'<var ID="{name}" name="{name}" dcml="0" intrvl="{"discrete" if cats else "contin"}">'
            f'<location StartPos="{start}" EndPos="{end}" width="{end - start + 1}"/>'
            f"<labl>{name.title()} (SYNTHETIC)</labl>{cat_xml}</var>"
        )
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<codeBook xmlns="ddi:codebook:2_5" version="2.5">'
        f"<stdyDscr><citation><titlStmt><titl>SYNTHETIC {collection} {ds.upper()} 2010-format extract, "
        f"{n:,} person records: random values for benchmarking ldprepro, NOT IPUMS data</titl></titlStmt>"
        "</citation></stdyDscr>"
        f"<fileDscr><fileTxt><fileName>SYNTHETIC_{ds}.dat</fileName></fileTxt></fileDscr>"
        f"<dataDscr>{''.join(parts)}</dataDscr></codeBook>\n"
    )
    path.write_text(xml)


def generate(out_dir: Path, ds: str, n: int, seed: int = 0) -> tuple[Path, Path]:
    """Write SYNTHETIC_<ds>.dat.gz and .xml with n person records (chunked; memory ~ CHUNK rows)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    dat, ddi = out_dir / f"SYNTHETIC_{ds}.dat.gz", out_dir / f"SYNTHETIC_{ds}.xml"
    stamp, made = out_dir / f"SYNTHETIC_{ds}.made.json", json.dumps({"n": n, "seed": seed, "layout": layout(ds)})
    if dat.exists() and ddi.exists() and stamp.exists() and stamp.read_text() == made:
        return dat, ddi  # the same draws are on disk: keep them (and their mtime, so a rerun reuses their jobs)
    _, country, year, sample = SAMPLES[ds]
    lay, sel = layout(ds), selected(ds)
    width = lay[-1][2]
    tmp = dat.with_suffix(".gz.tmp")
    with gzip.open(tmp, "wb", compresslevel=1) as fh:
        for start in range(0, n, CHUNK):
            m = min(CHUNK, n - start)
            rng = rng_for(seed, {"ipums_scale": ds, "chunk": start})
            cols = {
                "COUNTRY": np.full(m, country),
                "YEAR": np.full(m, year),
                "SAMPLE": np.full(m, sample),
                "SERIAL": np.arange(start, start + m) // 3 + 1,
                "PERNUM": np.arange(start, start + m) % 3 + 1,
            }
            for v, missing in sel.items():
                cols[v] = _draw(v, m, rng, cols, missing)
            rec = np.empty((m, width + 1), dtype=np.uint8)
            for name, s, e in lay:
                rec[:, s - 1 : e] = _digits(cols[name], e - s + 1)
            rec[:, -1] = ord("\n")
            fh.write(rec.tobytes())
    tmp.replace(dat)
    write_ddi(ddi, ds, n)
    stamp.write_text(made)
    return dat, ddi


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument(
        "--fraction", type=float, default=1.0, help="of the paper sizes (default 1: BR, MX 4 M, US 1.52 M)"
    )
    parser.add_argument("--datasets", nargs="*", default=list(PAPER_SIZES), choices=list(PAPER_SIZES))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for ds in args.datasets:
        n = max(1, round(PAPER_SIZES[ds] * args.fraction))
        dat, ddi = generate(args.out_dir, ds, n, args.seed)
        print(f"{ds}: {n:,} SYNTHETIC person records -> {dat} ({dat.stat().st_size / 2**20:.1f} MiB), {ddi}")


if __name__ == "__main__":
    main()
