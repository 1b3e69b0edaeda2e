"""The package layout is the architecture (README "Layout"): every module's imports point down the
layers, the domain knows no data frames, plots or papers, no module grows past ~500 lines, and no
docstring or comment sends a reader outside the repository."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "src" / "ldprepro"

#: What each layer may import (besides itself). Lower layers never import higher ones.
MAY_IMPORT = {
    "pipeline": set(),
    "domain": set(),
    "mechanisms": {"domain"},  # the public plugin API re-exports the domain's mechanisms
    "data": {"pipeline"},
    "claims": {"domain", "pipeline"},
    "report": {"claims", "domain", "pipeline"},
    "audit": {"domain", "report", "pipeline"},
    "experiments": {"domain", "claims", "data", "report", "pipeline"},
    "papers": {"experiments", "domain", "claims", "data", "report", "pipeline"},
    "benchmark": {"experiments", "audit", "domain", "claims", "data", "report", "pipeline"},
}
#: Workflow glue that runs at Snakefile parse time and may look up the registry (lazily).
GLUE = {"pipeline/mechanism_names.py": {"domain"}}
MAX_LINES = 520  # "no module over ~500 lines"


def modules():
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def imported(path: Path) -> set[str]:
    """Every ldprepro module or third-party package ``path`` imports, at any depth of the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{path}: relative import; the package imports absolutely"
            names.add(node.module)
    return names


def layer(path: Path) -> str:
    rel = path.relative_to(PKG)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_imports_point_down_the_layers(path):
    own = layer(path)
    if own not in MAY_IMPORT:  # the package's face (__init__) and its version
        return
    allowed = MAY_IMPORT[own] | GLUE.get(str(path.relative_to(PKG)), set()) | {own}
    for name in imported(path):
        if name.startswith("ldprepro."):
            target = name.split(".")[1]
            assert target in allowed, f"{path.relative_to(REPO)} ({own}) imports {name}, a layer above it"


@pytest.mark.parametrize("path", sorted((PKG / "domain").rglob("*.py")), ids=lambda p: str(p.relative_to(PKG)))
def test_the_domain_knows_no_data_frames_plots_or_papers(path):
    for name in imported(path):
        assert name.split(".")[0] not in ("pandas", "matplotlib", "yaml"), f"{path.relative_to(REPO)}: {name}"
    # hiera, dct and lremh are also the names of mechanisms and estimators the domain defines; the
    # keys that name only a paper's config section must not appear
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"[\"'](bshp|ldpfl)[\"']|config\[", text), f"{path.relative_to(REPO)} reads a paper's config"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_no_module_over_about_500_lines(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(REPO)} has {n} lines; split it by concept"


def test_every_paper_key_names_a_folder_with_its_claims():
    for key in ("hiera", "bshp", "ldpfl", "dct", "lremh"):
        folder = PKG / "papers" / key
        assert (folder / "__init__.py").is_file() and (folder / "claims.yaml").is_file(), key
        assert (folder / "captions").is_dir(), key


def test_nothing_points_outside_the_repository():
    """The reconstruction specs are summarised in docs/papers/; no file cites them by path."""
    tracked = [
        p
        for p in [
            *PKG.rglob("*"),
            *(REPO / "workflow").rglob("*"),
            *(REPO / "tests").glob("*.py"),
            *(REPO / "docs").rglob("*.md"),
        ]
        if p.is_file() and p.suffix in (".py", ".smk", ".md", ".rst", ".yaml")
    ] + [REPO / "config.yaml", REPO / "README.md"]
    bad = []
    for p in tracked:
        if p == Path(__file__):
            continue
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"shared/specs|\bspecs/|\bspec [a-z_0-9]+\.md|zhao2021 §|sampling_histograms_bshp_wshp", line):
                bad.append(f"{p.relative_to(REPO)}:{i}: {line.strip()[:100]}")
    assert not bad, "\n".join(bad[:20])


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


def import_graph() -> dict[str, set[str]]:
    """{module: the ldprepro modules it imports, at any depth of the file}: ``from a.b import c``
    points to the module a.b.c when there is one, else to a.b (a package's __init__)."""
    known = {module_name(p) for p in modules()}
    graph = {}
    for path in modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name in known}
            elif isinstance(node, ast.ImportFrom) and node.module in known:
                subs = {f"{node.module}.{a.name}" for a in node.names} & known
                targets |= subs or {node.module}
                if len(subs) < len(node.names):  # names taken from the module itself
                    targets.add(node.module)
        graph[module_name(path)] = targets - {module_name(path)}
    return graph


def test_the_import_graph_has_no_circles():
    """No module imports, directly or through others, a module that imports it (a lazy import
    inside a function counts too: it is the same dependency, only deferred)."""
    graph = import_graph()
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert circles == [], circles
