"""What an import is told (``ImportRun``: where its extractions go) and what it answers
(``ImportSummary``), with its progress callback."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from audit.models import ExtractionRun
from audit.services.import_shapes import ImportNotes
from audit.services.runs import MAX_PROMPT_VERSION

# Called with (discussions imported, discussions in the file) as the import writes them: the
# second estimated from the share of the file read, until the last call; with (0, 0) while a
# case list is checked before it is written (or a file whose size is not known is written).
Progress = Callable[[int, int], None]


@dataclass
class ImportSummary:
    discussions_created: int = 0
    discussions_existing: int = 0
    statements_created: int = 0
    extractions_created: int = 0
    approved_created: int = 0
    approved_kept: int = 0
    # Whose extraction or ground truth the import created, once per statement and 8 bytes
    # each: what stays in memory through a large import.
    touched_statement_ids: array[int] = field(default_factory=lambda: array("q"))
    # The first LOGGED_FEEDBACK_IDS only: what the audit log names.
    imported_feedback_ids: list[int] = field(default_factory=list)
    # The file's shape, the keys it ignored, what it holds that was not imported.
    notes: ImportNotes = field(default_factory=ImportNotes)
    warnings: list[str] = field(default_factory=list)  # one line per distinct warning
    run: str | None = None  # the run the file's extractions went to (none: no extraction)

    def details(self) -> list[str]:
        """Everything the summary says besides the counts: shape, run, warnings, what was
        not imported and the keys ignored."""
        lines = self.notes.lines()
        if self.run:
            lines.insert(1 if lines else 0, f"extractions in run: {self.run}")
        return lines + [f"warning: {line}" for line in self.warnings]

    def line(self) -> str:
        kept = (
            f", {self.approved_kept} statements kept their approved ground truth"
            if self.approved_kept
            else ""
        )
        return (
            f"{self.discussions_created} discussions created, "
            f"{self.discussions_existing} already present, "
            f"{self.statements_created} statements, {self.extractions_created} extractions, "
            f"{self.approved_created} approved ground truths imported{kept}"
        )


@dataclass
class ImportRun:
    """Where a file's extractions go, as the importer says it (the command's --run/--run-model,
    the API's and the import page's run fields): an existing ``run`` (found by its external
    id), else a new replicate of a model and prompt version, else a run of the import's own
    named after the file and the time. As ``run_info`` (audit.services.runs) it is registered
    when the first extraction needs it: a file without extractions makes no run."""

    run: ExtractionRun | None = None
    model_name: str = ""
    prompt_version: str = ""
    source: str = "import"  # the file's name
    # With a model: the new replicate's unit (default statement), notes and external id.
    unit: str = ""
    notes: str = ""
    external_id: str = ""

    def info(self) -> dict[str, Any]:
        if self.run is not None:
            return {"external_id": self.run.external_id}
        if self.model_name:
            info = {"model_name": self.model_name, "prompt_version": self.prompt_version}
            given = {"unit": self.unit, "notes": self.notes, "external_id": self.external_id}
            return {**info, **{key: value for key, value in given.items() if value}}
        stamp = timezone.localtime().strftime("%Y-%m-%d %H:%M:%S")
        name = f"{self.source[: MAX_PROMPT_VERSION - len(stamp) - 1]} {stamp}"
        return {"model_name": IMPORT_RUN_MODEL, "prompt_version": name}


IMPORT_RUN_MODEL = "import"  # the model name of an import's own run
