"""Validators of the job annotations the synthetic generators add beyond workload schema v1.

Hansen et al.'s moldable and stochastic parameters (:mod:`hetsched.workloads.gen_hansen`:
``downey``, ``serial_time``, ``slowdown``, ``makespan_goal``) and Hwang et al.'s co-runner
annotations (:mod:`hetsched.workloads.gen_hwang`: ``corunner_affinity``, ``corunner_model``).
The schema (:mod:`hetsched.workloads.schema`) registers them from here, without the
generators' own module (:mod:`hetsched.workloads.generators`, which re-exports them), so that
reading a workload does not import every generator and the platform presets they draw.

>>> sorted(FIELD_VALIDATORS)[:3]
['corunner_affinity', 'corunner_model', 'downey']
"""

from __future__ import annotations

from collections.abc import Callable

from hetsched.workloads import gen_hansen, gen_hwang

FIELD_VALIDATORS: dict[str, Callable[[object, str], None]] = {
    **gen_hansen.FIELD_VALIDATORS,
    **gen_hwang.FIELD_VALIDATORS,
}
"""Validators of the job annotations the generators emit beyond schema v1's table: each takes
the value and its location (e.g. ``"w.json: job 3"``) and raises ValueError naming it."""
