"""The forest plot of one figure's claims (ldprepro.report.forest), from its claims table and points."""

from ldprepro.pipeline.jobsetup import done, ready, start

start(snakemake)  # noqa: F821

import pandas as pd  # noqa: E402

from ldprepro.report.forest import draw_forest  # noqa: E402

ready()

sm = snakemake  # noqa: F821
claims = pd.read_parquet(sm.input.claims)
points = pd.read_parquet(sm.input.points)
draw_forest(claims, points, sm.output.png)
done(f"{len(points)} points of {len(claims)} claims")
