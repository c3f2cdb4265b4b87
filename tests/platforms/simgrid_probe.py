"""What SimGrid 3.32 itself (Debian's python3-simgrid, under /usr/bin/python3) reads of a
platform file: every host in ``Engine.all_hosts`` order with its core count, P-state speeds,
the energy plugin's idle and full watts per P-state (when the host has
``wattage_per_state``) and the properties asked for. The venv cannot import SimGrid, so the
probe runs in a subprocess; :data:`SIMGRID` says whether it can run here.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

SYSTEM_PYTHON = "/usr/bin/python3"


def _simgrid_available() -> bool:
    try:
        return subprocess.run([SYSTEM_PYTHON, "-c", "import simgrid"], capture_output=True,
                              timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


SIMGRID = pytest.mark.skipif(
    not _simgrid_available(),
    reason="SimGrid's Python module is not installed for /usr/bin/python3 (Debian's"
           " python3-simgrid: make system-deps)",
)

PROBE = r'''
import ctypes
import json
import sys

import simgrid

engine = simgrid.Engine(["probe", "--cfg=plugin:host_energy", "--log=root.thres:critical"])
engine.load_platform(sys.argv[1])
lib = None
with open("/proc/self/maps") as maps:
    for line in maps:
        if "libsimgrid.so" in line:
            lib = ctypes.CDLL(line.split()[-1])
            break
lib.sg_host_by_name.restype = ctypes.c_void_p
lib.sg_host_by_name.argtypes = [ctypes.c_char_p]
lib.sg_host_get_property_value.restype = ctypes.c_char_p
lib.sg_host_get_property_value.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
for name in ("sg_host_get_idle_consumption_at", "sg_host_get_wattmax_at"):
    getattr(lib, name).restype = ctypes.c_double
    getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_int]
hosts = []
for host in engine.all_hosts:
    pointer = lib.sg_host_by_name(host.name.encode())
    properties = {}
    for key in sys.argv[2].split(","):
        value = lib.sg_host_get_property_value(pointer, key.encode())
        if value is not None:
            properties[key] = value.decode()
    count = host.pstate_count
    powered = "wattage_per_state" in properties
    hosts.append({
        "name": host.name,
        "cores": host.core_count,
        "speeds": [host.pstate_speed(i) for i in range(count)],
        "idle_watts": [lib.sg_host_get_idle_consumption_at(pointer, i) for i in range(count)]
                      if powered else None,
        "full_watts": [lib.sg_host_get_wattmax_at(pointer, i) for i in range(count)]
                      if powered else None,
        "properties": properties,
    })
json.dump(hosts, sys.stdout)
'''

PROPERTIES = ("role", "cluster", "node_type", "cores_per_node", "node_index",
              "speed_per_pstate", "wattage_per_state", "wattage_off", "sleep_pstates")


def simgrid_hosts(path: Path) -> list[dict]:
    """The hosts SimGrid 3.32 reads from ``path`` (module docstring)."""
    result = subprocess.run(
        [SYSTEM_PYTHON, "-c", PROBE, str(path), ",".join(PROPERTIES)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)
