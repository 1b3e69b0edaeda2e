"""``python -m ldprepro.report <at_a_glance.md> <README.md>``: splice the generated block into the README."""

from ldprepro.report.tables import main

raise SystemExit(main())
