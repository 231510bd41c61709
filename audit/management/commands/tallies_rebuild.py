from django.core.management.base import BaseCommand

from audit.tallies import tallies_counted, tallies_rebuild, tallies_stored


class Command(BaseCommand):
    help = (
        "Recount the stored per-discussion, per-auditor tallies from the feedback and "
        "assignments (with --check: only report the pairs that differ, exit 1 if any)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="compare, change nothing")

    def handle(self, *args, check: bool, **options):
        if check:
            counted, stored = tallies_counted(), tallies_stored()
            differ = sorted(
                p for p in set(counted) | set(stored) if counted.get(p) != stored.get(p)
            )
            for discussion_id, auditor_id in differ[:50]:
                self.stdout.write(
                    f"discussion {discussion_id} auditor {auditor_id}: stored "
                    f"{stored.get((discussion_id, auditor_id))}, counted "
                    f"{counted.get((discussion_id, auditor_id))}"
                )
            self.stdout.write(f"{len(differ)} of {len(counted)} pairs differ.")
            if differ:
                raise SystemExit(1)
            return
        self.stdout.write(f"Recounted {tallies_rebuild()} discussion x auditor pairs.")
