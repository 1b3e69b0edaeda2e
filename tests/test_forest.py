"""The forest plot of a figure's claims, drawn from the engine's own tables (issue 26.4)."""

import numpy as np
import pandas as pd

from ldprepro.claims.tables import effect_text
from ldprepro.claims.verdicts import Claim, exact_point, judge, paired_point, tie_point
from ldprepro.report import forest


def _claims():
    rng = np.random.default_rng(1)
    # points in the claim's favour, undecided ones and ones against it (every side drawn first)
    scales = [2.0] * (forest.MAX_POINTS - 2) + [1.05] * 3 + [0.5] * 4
    many = [paired_point(rng.gamma(2, 1, 40), rng.gamma(2, s, 40), f"ε={i}") for i, s in enumerate(scales)]
    mixed = [tie_point("ε=0.5", "same law"), paired_point(rng.gamma(2, 1, 40), rng.gamma(2, 1.5, 40), "ε=1")]
    exact = [exact_point("k=2", True, 0.5)]
    return judge(
        [
            Claim("p", "f", c, "s", "pairwise", points=pts)
            for c, pts in (("many", many), ("mixed", mixed), ("exact", exact))
        ]
    )


def test_every_claim_with_points_gets_a_panel_and_the_weakest_points_are_kept(tmp_path):
    table = _claims()
    points = pd.DataFrame(table.attrs["points"])
    shown, hidden = forest._shown(points[points["claim_id"] == 1])
    assert hidden == 5 and len(shown) == forest.MAX_POINTS
    dropped = points[(points["claim_id"] == 1) & ~points.index.isin(shown.index)]
    assert set(points.loc[points["claim_id"] == 1, "favours"]) == {"claim", "none", "against"}
    assert (dropped["favours"] == "claim").all()  # contrary and undecided points are always drawn
    assert dropped["p_value"].max() <= shown.loc[shown["favours"] == "claim", "p_value"].min()
    forest.draw_forest(table, points, tmp_path / "forest.png")
    assert (tmp_path / "forest.png").stat().st_size > 10_000


def test_an_unbounded_fieller_interval_is_drawn_as_an_arrow(tmp_path):
    from ldprepro.claims.stats import Point

    open_ended = Point("n=3", "ratio of means", 0.8, 0.0, float("inf"), 0.6, True, 3, 1.0, 5.0, null=1.0, scale="ratio")
    table = judge([Claim("p", "f", "wide", "s", "pairwise", points=[open_ended])])
    assert "∞" in effect_text(next(table.itertuples()))
    forest.draw_forest(table, pd.DataFrame(table.attrs["points"]), tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 5_000


def test_the_forest_is_written_uncropped_with_every_title_inside_the_canvas(tmp_path, monkeypatch):
    """The forest is laid out by tight_layout and written as its canvas (no crop pass): a claim far
    longer than a line wraps at the canvas edge instead of running off it."""
    from PIL import Image

    from ldprepro.report.plotting import SAVE_DPI, plt

    rng = np.random.default_rng(2)
    long = "a claim of many words " * 12
    table = judge(
        [
            Claim(
                "p",
                "f",
                long,
                "s",
                "pairwise",
                points=[paired_point(rng.gamma(2, 1, 40), rng.gamma(2, 1.2, 40), "ε=1")],
            )
        ]
    )
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)  # keep the figure to measure its title
    forest.draw_forest(table, pd.DataFrame(table.attrs["points"]), tmp_path / "f.png")
    (fig,) = figures
    width, height = Image.open(tmp_path / "f.png").size
    assert (width, height) == (round(fig.get_figwidth() * SAVE_DPI), round(fig.get_figheight() * SAVE_DPI))
    renderer = fig.canvas.get_renderer()
    title = fig.axes[0]._left_title  # set_title(loc="left")
    assert title.get_text().startswith(table["verdict"].iloc[0].upper() + ": " + long[:20])
    box = title.get_window_extent(renderer)
    assert title._get_wrapped_text().count("\n") >= 2 and 0 <= box.x0 and box.x1 <= fig.bbox.width
