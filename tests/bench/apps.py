from django.apps import AppConfig


class BenchConfig(AppConfig):
    """The benchmark commands (docs/performance.md): a dev-only app, installed by the settings
    only where tests/ is present (never in the production image)."""

    name = "tests.bench"
    label = "bench"
