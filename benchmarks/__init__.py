"""Scale and speed benchmarks: ``python -m benchmarks`` (loader, cache, re-plan); ``benchmarks.bench_replan`` (what-if planner)."""
