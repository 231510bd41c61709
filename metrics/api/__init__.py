"""REST API v1 of the metrics app: stored results, recompute and jobs, review triage; its routes in ``urls``."""
