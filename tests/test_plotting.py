"""Figure conventions (issue 17): one style file, a colour-blind-safe palette with a distinct hue per
mechanism in every figure, variants told apart by line style, compact "not available" panels after
the real ones, a shared legend outside the data, and no literal font size in plot code."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.colors import to_rgb

from ldprepro.report import plotting
from ldprepro.report.plotting import MECHANISM_STYLE, MIN_COLOUR_DISTANCE, style

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "ldprepro"
#: mechanism names another part of the pipeline adds outside config.yaml's lists
EXTRA_NAMES = {"em_converged"}


def cielab(colour) -> np.ndarray:
    """sRGB (D65) -> CIELAB, the textbook formulas (IEC 61966-2-1; CIE 1976)."""
    rgb = np.array(to_rgb(colour))
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = m @ lin / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_cielab_reference_values():
    assert np.allclose(cielab("#ffffff"), [100, 0, 0], atol=0.05)
    assert np.allclose(cielab("#000000"), [0, 0, 0], atol=1e-9)
    assert np.allclose(cielab("#ff0000"), [53.24, 80.09, 67.20], atol=0.1)


def figure_groups() -> dict[str, list[str]]:
    """{"paper.figN": mechanisms drawn together} for every figure of config.yaml."""
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    groups = {}
    for paper, section in cfg.items():
        if not isinstance(section, dict):
            continue
        if isinstance(section.get("methods"), list):  # one method list for every figure (lremh)
            groups[f"{paper}.*"] = list(section["methods"])
        for name, entry in section.items():
            if isinstance(entry, dict):
                names = entry.get("mechanisms") or entry.get("methods")
                if isinstance(names, list):
                    groups[f"{paper}.{name}"] = list(names)
    return groups


def base_method(name: str) -> str:
    """The method a variant belongs to (variants share its hue on purpose)."""
    return name.removesuffix("_disc").removesuffix("_at_level").removesuffix("_converged").removesuffix("_lopub")


def test_config_has_figures_to_check():
    groups = figure_groups()
    assert len(groups) >= 20 and "ldpfl.fig1" in groups and "hiera.fig2" in groups


def test_every_mechanism_in_config_has_a_style():
    names = set(itertools.chain.from_iterable(figure_groups().values())) | EXTRA_NAMES
    missing = sorted(
        n for n in names if base_method(n) not in MECHANISM_STYLE or n.removesuffix("_disc") not in MECHANISM_STYLE
    )
    assert not missing, f"config.yaml mechanisms without an entry in plotting.MECHANISM_STYLE: {missing}"


def test_no_two_mechanisms_of_one_figure_share_a_hue():
    close = []
    for fig, names in figure_groups().items():
        bases = sorted({base_method(n) for n in names})
        for a, b in itertools.combinations(bases, 2):
            d = float(np.linalg.norm(cielab(style(a)["color"]) - cielab(style(b)["color"])))
            if d < MIN_COLOUR_DISTANCE:
                close.append(f"{fig}: {a} / {b} ΔE = {d:.1f}")
    assert not close, f"colours too close (CIE76 ΔE < {MIN_COLOUR_DISTANCE:g}): {close}"


def test_markers_differ_within_a_figure():
    for fig, names in figure_groups().items():
        bases = sorted({base_method(n) for n in names} - {"non_private"})
        markers = [style(n)["marker"] for n in bases]
        assert len(set(markers)) == len(markers), f"{fig}: two mechanisms share a marker: {dict(zip(bases, markers))}"


@pytest.mark.parametrize(
    "variant_name", ["harmony_at_level", "pm_at_level", "em_converged", "lremh_converged", "pm_disc", "em_lopub"]
)
def test_variants_keep_the_hue_but_not_the_line(variant_name):
    v, b = style(variant_name), style(base_method(variant_name))
    assert v["color"] == b["color"]
    assert (v["ls"], v["mfc"]) != (b["ls"], b["mfc"])
    assert v["label"] != b["label"]


def test_unclipped_is_dashed_in_the_same_colour():
    st = style("hiera")
    un = plotting.variant(st, clip=False)
    assert un["color"] == st["color"] and un["ls"] != st["ls"]
    assert plotting.variant(st, clip=True)["ls"] == st["ls"]


def test_style_file_is_applied_and_shipped():
    import matplotlib.pyplot as plt

    assert plotting.STYLE_FILE.is_file()
    plotting.use_style()
    assert plt.rcParams["legend.fontsize"] == 8 and plt.rcParams["axes.titlesize"] == 9
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert "ldprepro.mplstyle" in pyproject, "the style file must be package data"


def test_no_plot_code_uses_a_literal_font_size():
    pattern = re.compile(r"fontsize\s*=\s*[0-9]")
    hits = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in PACKAGE.rglob("*.py")
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not hits, f"literal font sizes (use ldprepro.mplstyle or a relative size): {hits}"


def test_short_reason_is_one_line_and_truncated():
    long = (
        "IPUMS extract not available offline; the registration-walled download needs an API key. "
        "See the data card for the full list of variables and samples."
    )
    r = plotting.short_reason(long)
    assert "\n" not in r and len(r) <= plotting.NA_REASON_CHARS
    assert r.startswith("IPUMS extract not available offline")
    assert plotting.short_reason("no results") == "no results"


def test_ratio_to_best_uses_the_lowest_mean_at_each_x():
    curves = {"a": ([1, 2], [2.0, 3.0], [1.5, 2.5], [2.5, 3.5]), "b": ([1, 2], [1.0, 6.0], [0.5, 5], [1.5, 7])}
    ratios, xs = plotting.ratio_to_best(curves)
    assert list(xs) == [1, 2]
    assert np.allclose(ratios["a"][1], [2.0, 1.0]) and np.allclose(ratios["b"][1], [1.0, 2.0])
    assert np.allclose(ratios["a"][2], [1.5, 2.5 / 3])
    assert plotting.curves_overlap({k: v[:2] for k, v in curves.items()}, 2.0)
    assert not plotting.curves_overlap({k: v[:2] for k, v in curves.items()}, 1.5)


def _summary(datasets, theory=False):
    rows = []
    for ds, mech, k in itertools.product(datasets, ["pm", "duchi"], range(3)):
        eps = [0.5, 1.0, 2.0][k]
        m = (1.0 if mech == "pm" else 1.2) / eps
        rows.append(
            {
                "dataset": ds,
                "mechanism": mech,
                "metric": "abs_error",
                "eps": eps,
                "mean": m,
                "ci_low": 0.9 * m,
                "ci_high": 1.1 * m,
            }
        )
        if theory:
            rows.append(
                {
                    "dataset": ds,
                    "mechanism": mech,
                    "metric": "abs_error_theory",
                    "eps": eps,
                    "mean": m,
                    "ci_low": m,
                    "ci_high": m,
                }
            )
    return pd.DataFrame(rows)


def _draw(monkeypatch, summary, fig_cfg, unavailable):
    from ldprepro.experiments.mean_figures import plot_mean_figure

    captured = {}

    def fake_save(fig, png, svg=None, claims=None):
        fig.canvas.draw()
        captured["fig"] = fig

    monkeypatch.setattr(plotting, "save_figure", fake_save)
    plot_mean_figure(summary, fig_cfg, unavailable, "Test figure", "unused.png")
    return captured["fig"]


def _cfg(datasets, **kw):
    return {
        "kind": "mean",
        "metric": "abs_error",
        "ylabel": "MAE",
        "eps": [0.5, 1, 2],
        "panels": [{"dataset": d, "title": d.upper()} for d in datasets],
        **kw,
    }


def test_unavailable_panels_come_after_the_real_ones_and_are_compact(monkeypatch):
    fig = _draw(
        monkeypatch,
        _summary(["b"]),
        _cfg(["a", "b", "c"], ratio_panel=False),
        {"a": "no offline copy. Long explanation " * 5, "c": "registration wall"},
    )
    na = [ax for ax in fig.axes if any("not available" in t.get_text() for t in ax.texts)]
    real = [ax for ax in fig.axes if ax not in na]
    assert [ax.texts[0].get_text().split(" — ")[0] for ax in na] == ["A", "C"]
    assert [ax.get_title() for ax in real] == ["B"]
    assert all(fig.axes.index(n) > fig.axes.index(r) for n in na for r in real)
    top_of_na = max(ax.get_position().y1 for ax in na)
    assert top_of_na < min(ax.get_position().y0 for ax in real), "a notice sits above a real panel"
    assert all(ax.get_position().height < real[0].get_position().height / 3 for ax in na)
    assert na[0].texts[0].get_text() == "A — not available: no offline copy"
    assert all("\n" not in t.get_text() for ax in na for t in ax.texts)


def test_legend_is_shared_and_outside_the_panels(monkeypatch):
    fig = _draw(monkeypatch, _summary(["a", "b"]), _cfg(["a", "b"], ratio_panel=False), {})
    assert all(ax.get_legend() is None for ax in fig.axes)
    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels.count("PM") == 1 and labels.count("Duchi et al.") == 1
    box = legend.get_window_extent().transformed(fig.transFigure.inverted())
    assert box.x0 >= max(ax.get_position().x1 for ax in fig.axes) - 1e-6


def test_rescaled_axis_and_theory_note_only_when_drawn(monkeypatch):
    fig = _draw(monkeypatch, _summary(["a"]), _cfg(["a"], ratio_panel=False), {})
    assert "[−1, 1]" in fig.axes[0].get_ylabel()
    assert "dashed" not in fig._suptitle.get_text()
    fig = _draw(monkeypatch, _summary(["a"], theory=True), _cfg(["a"], ratio_panel=False), {})
    assert "dashed: exact theory" in fig._suptitle.get_text().replace("\n", " ")


def test_a_theory_value_at_a_lone_x_is_drawn_as_a_tick_and_the_legend_says_so(monkeypatch):
    """A line through one point draws nothing: with one x (a frequency figure at one k, say) the exact
    value is a horizontal tick, and the legend shows the tick, not a dashed line that is not drawn."""
    s = _summary(["a"], theory=True)
    s = s[s["eps"] == 1].reset_index(drop=True)
    fig = _draw(monkeypatch, s, _cfg(["a"], ratio_panel=False, eps=[1]), {})
    theory = [ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() != "-" and len(ln.get_xdata()) == 1]
    assert theory and all(ln.get_marker() == "_" for ln in theory)
    assert "ticks: exact theory" in fig._suptitle.get_text().replace("\n", " ")
    assert any(h.get_marker() == "_" for h in fig.legends[0].legend_handles)
    # several x: dashed lines without markers, as before
    fig = _draw(monkeypatch, _summary(["a"], theory=True), _cfg(["a"], ratio_panel=False), {})
    lines = [ln for ln in fig.axes[0].get_lines() if len(ln.get_xdata()) > 1 and ln.get_linestyle() == "--"]
    assert lines and all(ln.get_marker() in ("None", None, "") for ln in lines)
    assert "dashed: exact theory" in fig._suptitle.get_text().replace("\n", " ")


def test_ratio_panel_when_curves_overlap(monkeypatch):
    # PM and Duchi within ×1.2 of each other: a ratio-to-best panel under the main one
    fig = _draw(monkeypatch, _summary(["a"]), _cfg(["a"]), {})
    assert len(fig.axes) == 2
    ratio_ax = fig.axes[1]
    ys = sorted(float(np.max(line.get_ydata())) for line in ratio_ax.get_lines())
    assert ys[0] == pytest.approx(1.0) and ys[-1] == pytest.approx(1.2)


def test_hiera_theory_is_labelled_as_the_unclipped_closed_form(monkeypatch):
    s = _summary(["a"], theory=True)
    s["mechanism"] = s["mechanism"].replace({"pm": "hiera"})
    fig = _draw(monkeypatch, s, _cfg(["a"], ratio_panel=False), {})
    title = fig._suptitle.get_text().replace("\n", " ")
    assert "HierA: MAE of the unclipped estimator" in title
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("unclipped" in lab and lab.startswith("dashed: exact theory") for lab in labels)


@pytest.fixture
def example_plugins():
    """The example plugins of docs/extending.md, registered for one test."""
    from ldprepro.domain.mechanisms.registry import unregister_mechanism
    from ldprepro.mechanisms import load_plugins

    names = load_plugins([str(ROOT / "tests/plugins/binary_rr.py"), str(ROOT / "tests/plugins/sech_noise.py")])
    assert names == ["binary_rr", "sech_noise"]
    yield names
    for n in names:
        unregister_mechanism(n)


def test_plugin_colours_stay_apart_from_every_mechanism_colour():
    from ldprepro.benchmark.plots import BENCHMARK_COLOURS

    own = {c for _, c, _ in MECHANISM_STYLE.values()} | set(BENCHMARK_COLOURS.values())
    plugin = [c for c, _ in plotting.PLUGIN_STYLES]
    close = [
        (a, b)
        for a, b in [*itertools.product(plugin, own), *itertools.combinations(plugin, 2)]
        if np.linalg.norm(cielab(a) - cielab(b)) < MIN_COLOUR_DISTANCE
    ]
    assert not close and len(set(plugin)) == len(plugin) >= 5
    markers = [m for _, m in plotting.PLUGIN_STYLES]
    assert len(set(markers)) == len(markers) and not set(markers) & {m for *_, m in MECHANISM_STYLE.values()}


def test_a_plugin_is_drawn_with_its_registered_label_and_its_own_colour(monkeypatch, example_plugins):
    """The legend shows the label the plugin registered (not its name), and each plugin has its own
    colour and marker, never the grey of Laplace or of an unknown name."""
    s = _summary(["a"])
    s["mechanism"] = s["mechanism"].replace({"pm": "binary_rr", "duchi": "sech_noise"})
    fig = _draw(monkeypatch, s, _cfg(["a"], ratio_panel=False, mechanisms=["binary_rr", "sech_noise"]), {})
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["binary RR (example plugin)", "sech noise (example plugin)"]
    colours = {line.get_label(): line.get_color() for line in fig.axes[0].get_lines()}
    assert colours["binary RR (example plugin)"] == plotting.PLUGIN_STYLES[0][0]
    assert colours["sech noise (example plugin)"] == plotting.PLUGIN_STYLES[1][0]
    assert style("binary_rr")["marker"] != style("sech_noise")["marker"]
    assert style("binary_rr_disc")["label"] == "binary RR (example plugin) (discretised)"
    # the built-in mechanisms keep the table's style; a name nobody registered stays grey, as it is
    assert style("laplace")["color"] == plotting.PALETTE["grey"]
    assert (style("no_such_mech")["label"], style("no_such_mech")["color"]) == ("no_such_mech", "#555555")


def test_theory_declared_approximate_is_not_labelled_exact(monkeypatch):
    """The jobs mark the MAE's theory (a normal approximation) theory_exact = False: the dashed
    lines are then 'theory', qualified, never 'exact theory'."""
    s = _summary(["a"], theory=True)
    s["theory_exact"] = np.where(s["metric"] == "abs_error_theory", False, None)
    fig = _draw(monkeypatch, s, _cfg(["a"], ratio_panel=False), {})
    title = fig._suptitle.get_text().replace("\n", " ")
    assert "exact theory" not in title and "MAE: normal approximation" in title


def _figure(layout):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(6, 4), layout=layout, sharey=True)
    for i, ax in enumerate(axes.flat):
        ax.plot(np.logspace(-1, 1, 7), np.logspace(-2, 2, 7) ** (i / 3 + 0.2), label=f"mechanism {i}")
        ax.set(xscale="log", yscale="log", title=f"panel {i}: a long title", xlabel="ε")
    fig.legend(loc="outside right upper" if layout == "constrained" else "upper right")
    fig.suptitle("suptitle")
    return fig


@pytest.mark.parametrize("layout", ["constrained", None])
def test_save_figure_writes_the_png_savefig_tight_writes(tmp_path, layout):
    """One layout pass for both files (``_fix_layout``) gives the very PNG bytes that savefig with
    bbox_inches="tight" (two laid-out draws per file) gives; the SVG is cropped to the same box."""
    import matplotlib.pyplot as plt

    reference = tmp_path / "reference.png"
    fig = _figure(layout)
    fig.savefig(reference, format="png", dpi=plotting.SAVE_DPI, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    plotting.save_figure(_figure(layout), tmp_path / "ours.png", tmp_path / "ours.svg")
    assert (tmp_path / "ours.png").read_bytes() == reference.read_bytes()
    width_pt = float(re.search(r'<svg[^>]*width="([0-9.]+)pt"', (tmp_path / "ours.svg").read_text())[1])
    from PIL import Image

    assert width_pt / 72 == pytest.approx(Image.open(reference).size[0] / plotting.SAVE_DPI, abs=0.02)


def test_an_uncropped_figure_is_its_canvas_laid_out_once_and_never_carries_badges(tmp_path):
    """save_figure(crop=False): the PNG is the canvas at SAVE_DPI; a layout engine not yet run runs
    once (the axes move off the canvas edge); verdict badges, which sit under the canvas, are refused
    before anything is drawn."""
    from PIL import Image

    fig, ax = plotting.plt.subplots(figsize=(3.0, 2.0), layout="constrained")
    ax.set_ylabel("a label that needs room")
    before = ax.get_position().x0
    kept = []
    close = plotting.plt.close
    plotting.plt.close = kept.append
    try:
        plotting.save_figure(fig, tmp_path / "f.png", crop=False)
    finally:
        plotting.plt.close = close
    assert Image.open(tmp_path / "f.png").size == (3 * plotting.SAVE_DPI, 2 * plotting.SAVE_DPI)
    assert kept == [fig] and fig.axes[0].get_position().x0 != before  # laid out by the engine
    plotting.plt.close(fig)
    fig2, _ = plotting.plt.subplots()
    claims = pd.DataFrame([{"verdict": "holds", "claim": "c"}])
    with pytest.raises(ValueError, match="written cropped"):
        plotting.save_figure(fig2, tmp_path / "g.png", claims=claims, crop=False)
    assert not fig2.texts and not (tmp_path / "g.png").exists()
    plotting.plt.close(fig2)


def test_a_log_panel_keeps_every_measured_mean_inside_its_axis():
    """A curve whose 95 % CI reaches below 0 (few repetitions) sets no floor; another curve's lower
    CI end above its mean must not cut its points off (issue 54: PM at 3.3e-5 under a 5e-5 floor)."""
    import matplotlib.pyplot as plt

    from ldprepro.experiments.mean_figures import _log_limits

    x = np.array([1.0, 2.0])
    curves = {
        "pm": {"x": x, "mean": np.array([3.3e-5, 1e-4]), "ci_low": np.array([-1e-5, -2e-5]), "ci_high": x * 1e-4},
        "laplace": {"x": x, "mean": np.array([2e-4, 1e-4]), "ci_low": np.array([5e-5, 6e-5]), "ci_high": x * 3e-4},
    }
    fig, ax = plt.subplots()
    ax.set_yscale("log")
    _log_limits(ax, curves, [])
    lo, hi = ax.get_ylim()
    plt.close(fig)
    assert lo < 3.3e-5 < hi and lo > 3.3e-5 / 10 / 1.3 * 0.999
