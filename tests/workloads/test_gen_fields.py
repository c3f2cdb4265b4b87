"""The generators' annotation validators: one table, which the generators re-export and the
schema registers without importing the generators."""

from __future__ import annotations

import subprocess
import sys

from hetsched.workloads import gen_fields, gen_hansen, gen_hwang, generators, schema


def test_the_table_is_the_generators_validators() -> None:
    assert generators.FIELD_VALIDATORS is gen_fields.FIELD_VALIDATORS
    assert gen_fields.FIELD_VALIDATORS == {**gen_hansen.FIELD_VALIDATORS,
                                           **gen_hwang.FIELD_VALIDATORS}


def test_the_schema_registers_every_one() -> None:
    for name, validator in gen_fields.FIELD_VALIDATORS.items():
        assert schema.FIELD_VALIDATORS[name] is validator


def test_reading_a_workload_does_not_import_the_generators() -> None:
    code = ("import sys, hetsched.workloads.batsim_workload\n"
            "print(sorted(m for m in sys.modules if m in {'hetsched.workloads.generators',"
            " 'hetsched.workloads.gen_machovec', 'hetsched.workloads.gen_tarplee',"
            " 'hetsched.workloads.gen_hwang', 'hetsched.platforms.presets'}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, timeout=120)
    assert result.stdout.strip() == "[]"
