"""An example package adding a heuristic to hetsched through the entry-point group
``hetsched.heuristics`` (see pyproject.toml and docs/your-heuristic.md)."""
