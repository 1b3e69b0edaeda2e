"""The privacy audit: the exact and empirical privacy loss of every mechanism and protocol the pipeline runs."""
