"""A fake ``batsim`` for ``test_run.py``: plays Batsim 4.2.1's side of the protocol (ZeroMQ REQ).

Not a simulator one can trust for numbers: it supports what the run tests need
(``delay`` and ``parallel_homogeneous`` profiles without communication,
EXECUTE_JOB, REJECT_JOB, CALL_ME_LATER, REGISTER_PROFILE/REGISTER_JOB,
SET_RESOURCE_STATE, NOTIFY registration_finished) and writes ``<export>_jobs.csv``
and, with ``-E``, ``<export>_consumed_energy.csv`` with Batsim's columns. Power of a
host, as SimGrid's energy plugin computes it: ``idle + (full - idle) x load`` watts of its
current P-state (``wattage_per_state``), the load being one core out of the host's
``core`` while it computes a ``parallel_homogeneous`` job (a ptask runs at one core's speed
on each host), 0 otherwise (a ``delay`` job computes nothing).

Environment knobs: ``FAKE_BATSIM_ARGV`` (file where the command line is saved as
JSON), ``FAKE_BATSIM_FAIL`` (exit 3 at once with a Batsim-like error),
``FAKE_BATSIM_EARLY`` (write every execution that many seconds too early),
``FAKE_BATSIM_CRASH_AFTER`` (exit 6 right after sending that many messages).
"""

from __future__ import annotations

import argparse
import csv
import heapq
import json
import os
import sys
import xml.etree.ElementTree as ET

import zmq


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="batsim")
    parser.add_argument("-p", "--platform", required=True)
    parser.add_argument("-w", "--workload", action="append", required=True)
    parser.add_argument("-e", "--export", default="out")
    parser.add_argument("-E", "--energy", action="store_true")
    parser.add_argument("-s", "--socket-endpoint", default="tcp://localhost:28000")
    parser.add_argument("--enable-dynamic-jobs", action="store_true")
    parser.add_argument("-q", "--quiet", action="store_true")
    parser.add_argument("-v", "--verbosity")
    return parser.parse_args()


def read_hosts(path: str) -> list[dict]:
    hosts = []
    for host in ET.parse(path).getroot().iter("host"):
        props = {p.get("id"): p.get("value") for p in host.findall("prop")}
        if props.get("role", "") not in ("", "compute_node"):
            continue
        speeds = [float(s.strip().rstrip("f")) for s in host.get("speed").split(",")]
        watts = [
            tuple(float(w) for w in pair.split(":"))
            for pair in props.get("wattage_per_state", "0:0").split(",")
        ]
        hosts.append({
            "name": host.get("id"), "props": props, "speeds": speeds, "watts": watts,
            "cores": int(host.get("core", "1")),
        })
    hosts.sort(key=lambda h: h["name"])
    return hosts


def interval_set(ids: list[int]) -> str:
    ids = sorted(ids)
    parts, start = [], None
    for i, node in enumerate(ids):
        if start is None:
            start = node
        if i + 1 == len(ids) or ids[i + 1] != node + 1:
            parts.append(str(start) if start == node else f"{start}-{node}")
            start = None
    return " ".join(parts)


def parse_ids(text: str) -> list[int]:
    ids = []
    for part in text.split():
        a, _, b = part.partition("-")
        ids.extend(range(int(a), int(b or a) + 1))
    return ids


def main() -> int:
    args = parse_args()
    if os.environ.get("FAKE_BATSIM_ARGV"):
        with open(os.environ["FAKE_BATSIM_ARGV"], "w") as stream:
            json.dump(sys.argv[1:], stream)
    if os.environ.get("FAKE_BATSIM_FAIL"):
        print(f"[batsim] Invalid platform file '{args.platform}': fake failure", file=sys.stderr)
        return 3
    early = float(os.environ.get("FAKE_BATSIM_EARLY", "0"))
    crash_after = int(os.environ.get("FAKE_BATSIM_CRASH_AFTER", "0"))
    sent = 0
    hosts = read_hosts(args.platform)
    pstate = [0] * len(hosts)
    with open(args.workload[0]) as stream:
        workload = json.load(stream)
    profiles = {"w0": dict(workload["profiles"])}
    jobs = {}
    arrivals = []
    for job in workload["jobs"]:
        job_id = f"w0!{job['id']}"
        record = {**job, "id": job_id, "workload": "w0", "profile_name": job["profile"]}
        jobs[job_id] = record
        arrivals.append((float(job["subtime"]), job_id))
    arrivals.sort()

    context = zmq.Context()
    socket = context.socket(zmq.REQ)
    socket.connect(args.socket_endpoint)

    now = 0.0
    running: list[tuple[float, str]] = []  # heap of (finish, job id)
    calls: list[float] = []
    energy_rows: list[tuple[float, float, str]] = []
    energy = 0.0
    last_time = 0.0
    busy: set[int] = set()
    registration_finished = not args.enable_dynamic_jobs
    no_more_static_sent = False

    def power() -> float:
        """SimGrid's model: idle + (full - idle) x load; a ptask loads one core of a host."""
        total = 0.0
        for i, host in enumerate(hosts):
            idle, full = host["watts"][pstate[i]]
            total += idle + ((full - idle) / host["cores"] if i in busy else 0.0)
        return total

    def advance(to: float) -> None:
        nonlocal energy, last_time
        energy += power() * (to - last_time)
        last_time = to

    def energy_row(kind: str) -> None:
        energy_rows.append((now, energy, kind))

    events = [
        {
            "timestamp": 0.0,
            "type": "SIMULATION_BEGINS",
            "data": {
                "nb_resources": len(hosts),
                "nb_compute_resources": len(hosts),
                "nb_storage_resources": 0,
                "allow_compute_sharing": False,
                "allow_storage_sharing": True,
                "config": {
                    "redis-enabled": False,
                    "redis-hostname": "127.0.0.1",
                    "redis-port": 6379,
                    "redis-prefix": "default",
                    "profiles-forwarded-on-submission": False,
                    "dynamic-jobs-enabled": args.enable_dynamic_jobs,
                    "dynamic-jobs-acknowledged": False,
                    "profile-reuse-enabled": False,
                    "forward-unknown-events": False,
                },
                "compute_resources": [
                    {"id": i, "name": h["name"], "state": "idle", "properties": h["props"],
                     "zone_properties": {}}
                    for i, h in enumerate(hosts)
                ],
                "storage_resources": [],
                "workloads": {"w0": os.path.abspath(args.workload[0])},
                "profiles": profiles,
            },
        }
    ]
    ended = False
    begun = False  # Batsim sends SIMULATION_BEGINS alone, before any submission
    while True:
        while begun and arrivals and arrivals[0][0] <= now:
            _, job_id = arrivals.pop(0)
            job = jobs[job_id]
            events.append({
                "timestamp": now,
                "type": "JOB_SUBMITTED",
                "data": {"job_id": job_id, "job": {
                    k: v for k, v in job.items() if k not in ("workload", "profile_name")
                }},
            })
        if begun and not arrivals and not no_more_static_sent:
            no_more_static_sent = True
            events.append({"timestamp": now, "type": "NOTIFY",
                           "data": {"type": "no_more_static_job_to_submit"}})
        socket.send_string(json.dumps({"now": now, "events": events}))
        sent += 1
        if sent == crash_after:
            os._exit(6)  # crash without waiting for the reply, without any clean-up
        reply = json.loads(socket.recv_string())
        if ended:
            break
        events = []
        begun = True
        for event in reply["events"]:
            kind, data = event["type"], event.get("data", {})
            if kind == "EXECUTE_JOB":
                job = jobs[data["job_id"]]
                nodes = parse_ids(data["alloc"])
                profile = profiles[job["workload"]][job["profile_name"]]
                if profile["type"] == "delay":
                    duration = float(profile["delay"])
                elif profile["type"] == "parallel_homogeneous":
                    duration = float(profile["cpu"]) / hosts[nodes[0]]["speeds"][pstate[nodes[0]]]
                else:
                    print(f"fake batsim: profile type {profile['type']}", file=sys.stderr)
                    return 4
                advance(now)
                if profile["type"] != "delay":  # a delay job leaves its hosts idle
                    busy.update(nodes)
                job.update(start=now, finish=now + duration, nodes=nodes, state="RUNNING")
                energy_row("s")
                heapq.heappush(running, (now + duration, job["id"]))
            elif kind == "REJECT_JOB":
                jobs[data["job_id"]]["state"] = "REJECTED"
            elif kind == "CALL_ME_LATER":
                heapq.heappush(calls, float(data["timestamp"]))
            elif kind == "REGISTER_PROFILE":
                registered = profiles.setdefault(data["workload_name"], {})
                registered[data["profile_name"]] = data["profile"]
            elif kind == "REGISTER_JOB":
                workload_name = data["job_id"].partition("!")[0]
                jobs[data["job_id"]] = {
                    **data["job"], "id": data["job_id"], "workload": workload_name,
                    "profile_name": data["job"]["profile"], "subtime": now,
                }
            elif kind == "SET_RESOURCE_STATE":
                nodes = parse_ids(data["resources"])
                advance(now)
                for node in nodes:
                    pstate[node] = int(data["state"])
                energy_row("p")
                events.append({"timestamp": now, "type": "RESOURCE_STATE_CHANGED",
                               "data": {"resources": data["resources"], "state": data["state"]}})
            elif kind == "NOTIFY" and data["type"] == "registration_finished":
                registration_finished = True
            else:
                print(f"fake batsim: unsupported event {kind}", file=sys.stderr)
                return 4
        if events:
            continue
        candidates = [t for t in (
            running[0][0] if running else None,
            arrivals[0][0] if arrivals else None,
            calls[0] if calls else None,
        ) if t is not None]
        waiting = any(j.get("state") is None for j in jobs.values())
        if not candidates:
            if waiting or not registration_finished:
                print("fake batsim: deadlock", file=sys.stderr)
                return 5
            events = [{"timestamp": now, "type": "SIMULATION_ENDS", "data": {}}]
            ended = True
            continue
        now = max(now, min(candidates))
        while running and running[0][0] <= now:
            _, job_id = heapq.heappop(running)
            job = jobs[job_id]
            advance(now)
            busy.difference_update(job["nodes"])
            job["state"] = "COMPLETED_SUCCESSFULLY"
            energy_row("e")
            events.append({"timestamp": now, "type": "JOB_COMPLETED", "data": {
                "job_id": job_id, "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0,
                "alloc": interval_set(job["nodes"]),
            }})
        while calls and calls[0] <= now:
            heapq.heappop(calls)
            events.append({"timestamp": now, "type": "REQUESTED_CALL", "data": {}})

    with open(f"{args.export}_jobs.csv", "w", newline="") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow([
            "job_id", "workload_name", "profile", "submission_time",
            "requested_number_of_resources", "requested_time", "success", "final_state",
            "starting_time", "execution_time", "finish_time", "waiting_time",
            "turnaround_time", "stretch", "allocated_resources", "consumed_energy", "metadata",
        ])
        for job in jobs.values():
            name = job["id"].partition("!")[2]
            head = [name, job["workload"], job["profile_name"], f"{float(job['subtime']):f}",
                    job["res"], f"{float(job.get('walltime', -1)):f}"]
            if job["state"] == "REJECTED":
                writer.writerow([*head, 0, "REJECTED", "", "", "", "", "", "", "", "", ""])
                continue
            start, finish = job["start"] - early, job["finish"] - early
            run = finish - start
            writer.writerow([
                *head, 1, job["state"], f"{start:f}", f"{run:f}", f"{finish:f}",
                f"{start - float(job['subtime']):f}", f"{finish - float(job['subtime']):f}",
                "1.0", interval_set(job["nodes"]), "0.0", "",
            ])
    if args.energy:
        with open(f"{args.export}_consumed_energy.csv", "w") as stream:
            stream.write("time,energy,event_type,wattmin,epower\n")
            for time, joules, kind in energy_rows:
                stream.write(f"{time:f},{joules:f},{kind},0.000000,NA\n")
    socket.close()
    context.term()
    return 0


if __name__ == "__main__":
    sys.exit(main())
