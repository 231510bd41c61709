from django.core.management.base import BaseCommand

from metrics.families.bench_bootstrap import run_benchmark


class Command(BaseCommand):
    help = "Time the vectorised participant bootstrap of AURC against a plain loop (same seed)."

    def add_arguments(self, parser):
        parser.add_argument("--participants", type=int, default=41)
        parser.add_argument("--items", type=int, default=8, help="items per participant")
        parser.add_argument("--resamples", type=int, default=10_000)
        parser.add_argument("--seed", type=int, default=42)
        parser.add_argument("--repeats", type=int, default=5, help="vectorised timing repeats")

    def handle(self, *args, participants, items, resamples, seed, repeats, **options):
        figures = run_benchmark(
            n_participants=participants,
            items_per_participant=items,
            n_resamples=resamples,
            seed=seed,
            repeats=repeats,
        )
        self.stdout.write(
            f"AURC bootstrap, {figures['n_participants']} participants x "
            f"{figures['items_per_participant']} items, {figures['n_resamples']} resamples, "
            f"seed {figures['seed']}"
        )
        self.stdout.write(
            f"  vectorised: {figures['vectorised_ms']:.1f} ms wall, "
            f"{figures['vectorised_cpu_ms']:.1f} ms CPU (target < {figures['target_ms']:.0f} ms)"
        )
        self.stdout.write(
            f"  plain loop: {figures['loop_ms']:.1f} ms wall, {figures['loop_cpu_ms']:.1f} ms CPU"
        )
        self.stdout.write(
            f"  speed ratio {figures['speedup']:.1f}x; identical replicates: "
            f"{figures['identical_replicates']} (max |difference| "
            f"{figures['max_abs_difference']:.3g}); identical results: "
            f"{figures['identical_results']}"
        )
