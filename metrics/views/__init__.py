"""Pages of the metrics app: dashboards, own-data cards, triage settings, recompute jobs."""
