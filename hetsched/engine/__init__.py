"""The embedded Batsim 4.2.1-compatible engine (see ``docs/engine.md``).

:func:`hetsched.engine.simulation.simulate` runs a simulation with an unchanged pybatsim
scheduler, in process or over ZeroMQ; :func:`hetsched.engine.batsim_cli.batsim_command` gives
the matching ``batsim`` command line.
"""
