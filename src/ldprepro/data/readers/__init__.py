"""Readers, one per source format. Each returns a :class:`ldprepro.data.table.Table`."""

from __future__ import annotations

from typing import Callable

from ldprepro.data.readers import adult, generic, lopub, nltcs, salaries, vehicle, wisdm
from ldprepro.data.table import Table

# kind -> reader(paths by file name, options, file entries, log) -> Table
READERS: dict[str, Callable[..., Table]] = {
    "uci_adult": lambda p, o, f, log: adult.read(p, o),
    "nltcs": lambda p, o, f, log: nltcs.read(p, o),
    "lopub": lambda p, o, f, log: lopub.read(p, o),
    "salary_sf": lambda p, o, f, log: salaries.read_sf(p, o, f),
    "salary_baltimore": lambda p, o, f, log: salaries.read_baltimore(p, o, f),
    "salary_nyc": lambda p, o, f, log: salaries.read_nyc(p, o, f),
    "vehicle": lambda p, o, f, log: vehicle.read(p, o),
    "wisdm": lambda p, o, f, log: wisdm.read(p, o, log),
    "table": lambda p, o, f, log: generic.read(p, o),
}
