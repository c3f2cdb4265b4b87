"""hetsched: scheduling heuristics for heterogeneous HPC systems, for the Batsim ecosystem."""

__version__ = "0.1.0"
