"""The import's limits and defaults: the model fields' lengths it checks before writing
(PostgreSQL enforces them; SQLite does not), published by the API with the runs' own."""

from __future__ import annotations

from audit.services.runs import MAX_MODEL_NAME as MAX_MODEL_NAME
from audit.services.runs import MAX_PROMPT_VERSION as MAX_PROMPT_VERSION

SCHEMA_VERSION = "1"
DEFAULT_IMPORT_RUN = ("imported", "unknown")
MAX_EXTERNAL_ID = 200
MAX_SPEAKER = 200
MAX_USERNAME = 150
MAX_IMPORT_ID = 10**18 - 1  # an exported discussion id, kept as its external id
MAX_ORDER = 2**31 - 1
