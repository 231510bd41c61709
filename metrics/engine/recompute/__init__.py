"""Recompute jobs: every extraction result (or every stale one) recomputed in the background.

A job (``ComputeJob``) lists what it must do, then splits the statement and discussion results
into chunks. Each chunk is a task any worker on the slow queue takes, so N workers share the
job; a chunk reads its inputs in bulk and stores its results in batches (one transaction
each, bulk writes), which a worker's threads take in turn. The chunk that completes the set
settles the runs' totals and the system result. Progress, the lease (heartbeat) and
cancellation live on the job row:

- a worker lost mid-job stops writing the heartbeat; the sweep then resumes the job as a new
  attempt, which only finds what is left (the older attempt's tasks stop);
- a cancelled job stops before its next batch; the discussions and runs it did not reach stay
  stale for the sweep.

A full recompute marks the discussion, run and system rows stale (their figures follow every
statement) but not the statement rows: each of those is computed from its own inputs with the
code and settings in force, so its stored figures stand until its batch replaces them. What
the job has done is what was computed since it began (``since``): a batch skips a row computed
after that (by an approval's task, or by an earlier delivery of the same chunk), and a resumed
job lists only the rows computed before it.
The per-result computation is ``metrics.engine.services`` (one row at a time, for the tasks an
approval queues); this package is the batch path, with the same figures, hashes and rows. By
what they hold: ``items`` (what a job computes), ``jobs`` (start, claim, plan, chunks, lease,
settle), ``batches`` (one batch's reads and bulk writes), ``sweep`` (stale rows in place, jobs
nobody runs), ``marking`` (bulk stale marking handed to one job).
"""

from metrics.engine.recompute.jobs import (
    MAX_JOB_ATTEMPTS,
    compute_job_chunk,
    compute_job_run,
    metrics_recompute_all,
)
from metrics.engine.recompute.marking import (
    results_mark_outdated,
    results_mark_stale_many,
    results_outdated,
)
from metrics.engine.recompute.sweep import compute_jobs_recover, results_recompute_stale

__all__ = [
    "MAX_JOB_ATTEMPTS",
    "compute_job_chunk",
    "compute_job_run",
    "compute_jobs_recover",
    "metrics_recompute_all",
    "results_mark_outdated",
    "results_mark_stale_many",
    "results_outdated",
    "results_recompute_stale",
]
