"""Running a graph over cases: the engine, its schedule, cases, tallies, Dask and shards."""
