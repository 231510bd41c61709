from django.core.management.base import BaseCommand

from audit.derived.coding_times import team_times_rebuild, times_replayed, times_stored
from audit.derived.tallies import tallies_counted, tallies_rebuild, tallies_stored
from audit.derived.team_figures import (
    figures_counted,
    figures_stored,
    to_code_recounted,
    to_code_stored,
    weakest_counted,
    weakest_mine_counted,
    weakest_mine_stored,
    weakest_stored,
)


class Command(BaseCommand):
    help = (
        "Recount the stored per-discussion, per-auditor tallies from the feedback and "
        "assignments, their sums per discussion and per auditor (the team page's rows), each "
        "discussion's statements still to code and their lowest review triage score, and the team page's active time (with --check: "
        "only report the counts and time rows that differ, exit 1 if any)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="compare, change nothing")

    def handle(self, *args, check: bool, **options):
        if check:
            differ = self._differ("pair", tallies_counted(), tallies_stored())
            for key, counted in figures_counted().items():
                differ += self._differ(key.removesuffix("_id"), counted, figures_stored()[key])
            differ += self._differ("to-code count", to_code_recounted(), to_code_stored())
            differ += self._differ("lowest open score", weakest_counted(), weakest_stored())
            differ += self._differ(
                "own lowest score", weakest_mine_counted(), weakest_mine_stored()
            )
            differ += self._differ("time row", times_replayed(), times_stored())
            if differ:
                raise SystemExit(1)
            return
        self.stdout.write(f"Recounted {tallies_rebuild()} discussion x auditor pairs.")
        self.stdout.write(f"Active time of {team_times_rebuild()} discussions and auditors.")

    def _differ(self, what: str, counted: dict, stored: dict) -> int:
        """Report the keys whose stored counts differ from the recount; returns how many."""
        differ = sorted(k for k in set(counted) | set(stored) if counted.get(k) != stored.get(k))
        for key in differ[:50]:
            self.stdout.write(f"{what} {key}: stored {stored.get(key)}, counted {counted.get(key)}")
        self.stdout.write(f"{len(differ)} of {len(counted)} {what}s differ.")
        return len(differ)
