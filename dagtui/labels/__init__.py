"""Human labels: checking them against the graph (and, later, writing them)."""
