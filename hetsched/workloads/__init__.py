"""Workloads: SWF traces and synthetic generators to annotated Batsim workloads.

* :mod:`.swf` streams Standard Workload Format traces; :mod:`.traces` finds them by name;
* :mod:`.selection` picks a day window and cleans it; :mod:`.convert` builds the workload
  (:mod:`.etc_matrix`, :mod:`.value_annotation`, :mod:`.utility_annotation`);
* :mod:`.schema` validates (Batsim 4.2.1's rules and the annotation schema v1) and
  :mod:`.batsim_workload` reads and writes workload files; :mod:`.show` summarises them;
* :mod:`.generators` draws the papers' synthetic workloads.

See ``docs/workloads.md`` and ``docs/workload-schema.md``.
"""
