"""The papers' heuristics and the baselines: one :class:`~hetsched.core.mapping.Heuristic` each.

One sub-package per family, named for what it is about; the registry and what every family
shares stay at this level (the conformance suite, which also runs each heuristic through the
pybatsim adapter, is :mod:`hetsched.schedulers.conformance`):

* :mod:`.baselines` -- FCFS, EASY and conservative backfilling, Conservative Multiple Queues
  (Khemka et al., MIC 2015, sec. 4.3) and Random (Machovec et al., 2017, sec. III.D);
* :mod:`.value` -- Max Value, Max VPR and their place-holder variants (Khemka et al., MIC 2015);
* :mod:`.utility` -- Max Util/UPT/UPR/UPE, DVFS and the daily energy constraint (Machovec et
  al., 2017);
* :mod:`.bags` -- the LP makespan bound and recovery, batch and online mappers of a bag of tasks
  (Tarplee et al., JPDC 2015);
* :mod:`.robust` -- robust allocation of moldable applications under stochastic run times
  (Hansen et al.);
* :mod:`.fairness` -- two-level fairness with co-runner interference (Hwang et al., IEEE TSC
  2018);
* :mod:`.registry` -- every heuristic by the name users type; :mod:`.common` and :mod:`.minmin`
  -- what the families share (slots on whole nodes, zero-value drop, the two-stage Min-Min of
  Khemka et al. sec. 3.3).
"""
