"""Importing discussions with their extractions and ground truth (exporting it: audit.services.exports).

The import accepts the ground-truth export format (one discussion as
``{"discussion": {...}, "statements": [...]}``, or many under ``"discussions"``, each either
nested that way or flat as the export writes it) and the other shapes of
audit/services/import_shapes.py. It validates the whole file first and stores nothing if any
part is wrong; it is idempotent by the discussion's external id.

Files are read once, one discussion at a time (``reading``, with
metrics.families.json_input.JsonListReader), in one transaction: each discussion is checked
(``checks``), then written (``discussions``) while nothing has been found wrong; the rest of a
file with a problem is checked, not written, and the transaction rolls back. A case list is
read twice (its discussions are named by the digest of the whole list): checked, then written.
Parsed data goes the same way, so memory stays flat in the number of discussions either way.

Each discussion is written in a number of queries that does not grow with its statements: what
is in place is read a table at a time, what is new inserted a table at a time (``statements``,
``extractions``, ``ground_truth``), and the stored counts that follow them are refreshed once
for a group of discussions (``discussions``).
"""

from audit.services.imports.discussions import (
    GROUP_DISCUSSIONS,
    IMPORTED_MODELS,
    discussions_import,
    discussions_import_file,
)
from audit.services.imports.extractions import extractions_import
from audit.services.imports.ground_truth import LOGGED_FEEDBACK_IDS
from audit.services.imports.limits import (
    DEFAULT_IMPORT_RUN,
    MAX_EXTERNAL_ID,
    MAX_IMPORT_ID,
    MAX_MODEL_NAME,
    MAX_ORDER,
    MAX_PROMPT_VERSION,
    MAX_SPEAKER,
    MAX_USERNAME,
    SCHEMA_VERSION,
)
from audit.services.imports.summary import IMPORT_RUN_MODEL, ImportRun, ImportSummary, Progress

__all__ = [
    "DEFAULT_IMPORT_RUN",
    "GROUP_DISCUSSIONS",
    "IMPORTED_MODELS",
    "IMPORT_RUN_MODEL",
    "LOGGED_FEEDBACK_IDS",
    "MAX_EXTERNAL_ID",
    "MAX_IMPORT_ID",
    "MAX_MODEL_NAME",
    "MAX_ORDER",
    "MAX_PROMPT_VERSION",
    "MAX_SPEAKER",
    "MAX_USERNAME",
    "SCHEMA_VERSION",
    "ImportRun",
    "ImportSummary",
    "Progress",
    "discussions_import",
    "discussions_import_file",
    "extractions_import",
]
