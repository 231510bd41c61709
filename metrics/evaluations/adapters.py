"""A family's ``run.py`` as the upload registry calls it.

Each family's ``run.py`` holds its options, parsing, computing, report and card, behind the one
interface of ``metrics.families.runs``. A ``RunAdapter`` only translates: the registry passes
option values as a dict (resolved from a form, the API or ``key=value``, and stored with the
evaluation); the family takes its ``Options`` dataclass. A registry entry takes them all with
``**run_entry(run)``, so a new family adds nothing here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from metrics.evaluations.base import Files, Option
from metrics.families.runs import option_defaults, options_from


@dataclass(frozen=True)
class RunAdapter:
    """A family's ``run.py`` with the registry's calling conventions."""

    run: ModuleType

    @property
    def options(self) -> tuple[Option, ...]:
        """The family's option declarations, each with its ``Options`` default."""
        defaults = option_defaults(self.run.Options)
        return tuple(
            Option(
                name=spec.name,
                kind=spec.kind,
                help=spec.help,
                choices=spec.choices,
                minimum=spec.minimum,
                maximum=spec.maximum,
                default=defaults[spec.name],
            )
            for spec in self.run.OPTIONS
        )

    def family_options(self, options: Mapping[str, Any]) -> Any:
        """The family's ``Options``; ValueError names a value the family refuses."""
        return options_from(self.run.Options, options)

    def check_options(self, options: Mapping[str, Any]) -> None:
        self.family_options(options)

    def parse(self, files: Files, options: Mapping[str, Any]) -> Any:
        return self.run.parse(files, self.family_options(options))

    def compute(self, parsed: Any, options: Mapping[str, Any]) -> dict[str, Any]:
        return self.run.compute(parsed, self.family_options(options))

    def report(self, artifact: Mapping[str, Any]) -> str:
        return self.run.report(artifact)

    def card(self, artifact: Mapping[str, Any]) -> dict[str, Any]:
        return self.run.card(artifact)


def run_entry(run: ModuleType) -> dict[str, Any]:
    """The registry fields a family's ``run.py`` provides, for ``Family(..., **run_entry(run))``."""
    adapter = RunAdapter(run)
    return {
        "options": adapter.options,
        "parse": adapter.parse,
        "compute": adapter.compute,
        "check_options": adapter.check_options,
        "report": adapter.report,
        "card_context": adapter.card,
    }
