"""Workflow plumbing: parse-time helpers of the Snakefile (``parse``), job set-up and logging
(``jobsetup``), seeded random streams (``seeding``), atomic files (``io``), tidy results
(``results``), errors, run status and the command line."""
