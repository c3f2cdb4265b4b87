"""Scheduling core: tasks, clusters, per-node schedules and mapping events.

Nothing in here knows about ZeroMQ or pybatsim: the adapter in
:mod:`hetsched.schedulers` turns Batsim events into calls on this package.
"""
