from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from audit.services.demo import (
    demo_experiments_seed,
    demo_seed,
    demo_triage_seed,
    demo_users_ensure,
)


class Command(BaseCommand):
    help = "Load the deterministic demo data set and demo users (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--migrate",
            action="store_true",
            help="apply the migrations not yet applied first (make run: one process, not two)",
        )

    def handle(self, *args, **options):
        if options["migrate"]:
            self._migrate()
        users = demo_users_ensure()
        summary = demo_seed(users=users)
        self.stdout.write(
            f"demo data: {summary.discussions_created} discussions created "
            f"({summary.statements_created} statements); existing ones left unchanged"
        )
        experiments = demo_experiments_seed(users=users)
        frozen = f"snapshot {experiments.snapshot.name} frozen" if experiments.snapshot else ""
        self.stdout.write(
            f"runs as experiments: {experiments.runs_created} runs registered (replicates, a "
            f"whole-discussion run), {experiments.discussion_extractions_created} discussions "
            f"extracted whole{'; ' + frozen if frozen else ''}"
        )
        triage = demo_triage_seed(users=users)
        self.stdout.write(
            f"review-triage example: {triage} discussions created; triage on for the second run"
        )
        self.stdout.write("demo users:")
        for username, password, role in summary.users:
            self.stdout.write(f"  {username:<9} password {password:<18} ({role})")

    def _migrate(self) -> None:
        executor = MigrationExecutor(connection)
        if executor.migration_plan(executor.loader.graph.leaf_nodes()):
            self.stdout.write("Applying the database migrations ...")
            call_command("migrate", interactive=False, verbosity=0)
            self.stdout.write("Migrations applied.")
