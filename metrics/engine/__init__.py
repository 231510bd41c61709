"""The result engine: computing the stored extraction-F1 results and the figures derived from
them (run comparison, error analysis), their totals, marking them stale when audit's data
changes, and recomputing them in batches."""
