from django.core.management.base import BaseCommand

from audit.services.demo import demo_experiments_seed, demo_seed, demo_triage_seed


class Command(BaseCommand):
    help = "Load the deterministic demo data set and demo users (idempotent)."

    def handle(self, *args, **options):
        summary = demo_seed()
        self.stdout.write(
            f"demo data: {summary.discussions_created} discussions created "
            f"({summary.statements_created} statements); existing ones left unchanged"
        )
        experiments = demo_experiments_seed()
        frozen = f"snapshot {experiments.snapshot.name} frozen" if experiments.snapshot else ""
        self.stdout.write(
            f"runs as experiments: {experiments.runs_created} runs registered (replicates, a "
            f"whole-discussion run), {experiments.discussion_extractions_created} discussions "
            f"extracted whole{'; ' + frozen if frozen else ''}"
        )
        triage = demo_triage_seed()
        self.stdout.write(
            f"review-triage example: {triage} discussions created; triage on for the second run"
        )
        self.stdout.write("demo users:")
        for username, password, role in summary.users:
            self.stdout.write(f"  {username:<9} password {password:<18} ({role})")
