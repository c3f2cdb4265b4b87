"""The one check of a run's inputs before any simulation (``preflight.py``): the workload as
Batsim 4.2.1 loads it, its annotations, and the workload against its platform."""
