"""Metric families computed on evalsite's own data (approved ground truth, auditors' coding).

- ``selective``: review savings — risk-coverage of auto-accepting the AI's most confident
  statements (family ``review_savings``, one row per run);
- ``calibration``: are the AI's item confidences probabilities? (family ``calibration``, per run);
- ``agreement``: inter-auditor agreement and blind vs pre-filled coding (family
  ``interauditor``, one system row, and each auditor's and discussion's on the team page).

Each module reads the database, calls the pure libraries in ``metrics.families`` and stores a
``MetricResult`` (its ``*_result_compute`` service), and builds its card from the stored row
only (its ``*_card``); its registry entry (``metrics.registry``) names both, and the one task
``metrics.tasks.compute_own_data`` calls the service. ``common`` holds the shared storing /
staleness plumbing.
"""
