"""Extraction contributions' F1 sums become fixed-point integers (exact, order-free).

Each statement and discussion result's float F1 (and SARF macro-F1) moves to the integer
keys that replace them, in units of 2**-62 (``FIXED_ONE`` in the extraction family, spelled
out here so that this migration does not change with the code). A run's totals are set
aside (``contribution`` null): the next change to the run rebuilds them exactly from its
results, as after an invalidation; its stored figures stay as they are meanwhile.
"""

from django.db import migrations

FIXED_ONE = 2**62
RENAMED = {"sum_f1": "f1_total", "sum_f1_nontrivial": "f1_total_nontrivial"}
CHILD_SCOPES = ("statement", "discussion")
BATCH = 2000


def _fixed(value) -> int:
    return round(value * FIXED_ONE)


def to_fixed(contribution: dict) -> dict:
    """The contribution with its float sums as fixed-point integers (new keys)."""
    converted = {RENAMED.get(key, key): value for key, value in contribution.items()}
    for old, new in RENAMED.items():
        if old in contribution:
            converted[new] = _fixed(contribution[old])
    sums = converted.pop("sarf_f1_sum", None)
    if sums is not None:
        converted["sarf_f1_total"] = {var: _fixed(v) for var, v in sums.items() if v}
    return converted


def forwards(apps, schema_editor) -> None:
    MetricResult = apps.get_model("metrics", "MetricResult")
    rows = MetricResult.objects.filter(
        family="extraction", scope__in=CHILD_SCOPES, contribution__isnull=False
    )
    # Listed first, then read and written a batch at a time: SQLite would see the rows it
    # writes in a query still being read.
    pks = list(rows.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(pks), BATCH):
        batch = MetricResult.objects.filter(pk__in=pks[start : start + BATCH]).only("contribution")
        converted = []
        for row in batch:
            if "sum_f1" in row.contribution or "sarf_f1_sum" in row.contribution:
                row.contribution = to_fixed(row.contribution)
                converted.append(row)
        MetricResult.objects.bulk_update(converted, ["contribution"])
    MetricResult.objects.filter(family="extraction", scope="run").update(contribution=None)


class Migration(migrations.Migration):
    dependencies = [("metrics", "0010_stale_rows_by_run")]

    # Backwards: the integer sums are left as they are (the old code cannot read them:
    # recompute the extraction results after going back).
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
