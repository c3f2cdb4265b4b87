"""The run path: ``hetsched run`` (one scheduler, one platform, one workload; checked schedule;
summary), its engines (embedded, a local ``batsim``, Docker), stock contestants (pybatsim,
batsched) and ``hetsched plot``."""
