"""Benchmark commands and the workloads they seed: dev-only, one `manage.py benchmark_*` each
(docs/performance.md). Their tests sit beside them."""
