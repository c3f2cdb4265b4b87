"""A stand-in ``batsched`` (batsched 1.4.0's command line) for the tests: batsched is in no
package registry reachable here.

``batsched -v VARIANT -s ENDPOINT [--queue_order O] [--variant_options JSON] ...`` binds a ZeroMQ
REP socket at ENDPOINT and plays the scheduler, in one of two ways:

* ``FAKE_BATSCHED_TRANSCRIPT`` set: the recorded replies of real batsched
  (:class:`hetsched.engine.replay.Replayer`), each Batsim message checked against the recorded
  one; a difference exits 3 naming the message and the field;
* otherwise a tiny FCFS: jobs in submission order, each started as soon as the head of the
  queue fits on the lowest free resources (EXECUTE_JOB), nothing else.

It prints batsched's own error and exits 1 for a variant it does not know, as batsched does.
Other knobs: ``FAKE_BATSCHED_ARGV`` (file where the command line is saved as JSON),
``FAKE_BATSCHED_CRASH_AFTER`` (exit 6 on receiving that message number).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import zmq

VARIANTS = ("conservative_bf", "easy_bf", "fcfs", "fcfs_fast")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="batsched")
    parser.add_argument("-v", "--variant", default="filler")
    parser.add_argument("-s", "--socket-endpoint", default="tcp://*:28000")
    parser.add_argument("-o", "--queue_order", default="fcfs")
    parser.add_argument("-p", "--policy", default="basic")
    parser.add_argument("-d", "--rjms_delay", default="5")
    parser.add_argument("--variant_options", default="{}")
    return parser.parse_args()


def parse_ids(text: str) -> list[int]:
    ids = []
    for part in text.split():
        low, _, high = part.partition("-")
        ids.extend(range(int(low), int(high or low) + 1))
    return ids


class Fcfs:
    """First come, first served on the lowest free resources."""

    def __init__(self) -> None:
        self.free: list[int] = []
        self.queue: list[tuple[str, int]] = []
        self.allocations: dict[str, list[int]] = {}

    def answer(self, message: dict) -> tuple[dict, bool]:
        now = message["now"]
        ended = False
        for event in message["events"]:
            kind, data = event["type"], event.get("data", {})
            if kind == "SIMULATION_BEGINS":
                self.free = list(range(data["nb_resources"]))
            elif kind == "JOB_SUBMITTED":
                self.queue.append((data["job_id"], int(data["job"]["res"])))
            elif kind == "JOB_COMPLETED":
                self.free = sorted(self.free + self.allocations.pop(data["job_id"]))
            elif kind == "SIMULATION_ENDS":
                ended = True
        decisions = []
        while self.queue and self.queue[0][1] <= len(self.free):
            job_id, size = self.queue.pop(0)
            chosen, self.free = self.free[:size], self.free[size:]
            self.allocations[job_id] = chosen
            alloc = " ".join(str(i) for i in chosen)  # an interval set, one id at a time
            decisions.append({"timestamp": now, "type": "EXECUTE_JOB",
                              "data": {"job_id": job_id, "alloc": alloc}})  # fmt: skip
        return {"now": now, "events": decisions}, ended


def main() -> int:
    args = parse_args()
    if os.environ.get("FAKE_BATSCHED_ARGV"):
        with open(os.environ["FAKE_BATSCHED_ARGV"], "w") as stream:
            json.dump(sys.argv[1:], stream)
    if args.variant not in VARIANTS:
        print(f"Invalid 'variant' value ({args.variant}): Not in {{{', '.join(VARIANTS)}}}")
        return 1
    crash_after = int(os.environ.get("FAKE_BATSCHED_CRASH_AFTER", "0"))
    replayer = None
    if os.environ.get("FAKE_BATSCHED_TRANSCRIPT"):
        from hetsched.engine.replay import Replayer, load_transcript

        replayer = Replayer(load_transcript(os.environ["FAKE_BATSCHED_TRANSCRIPT"]), "batsched")
    fcfs = Fcfs()
    context = zmq.Context()
    socket = context.socket(zmq.REP)
    socket.bind(args.socket_endpoint)
    received = 0
    try:
        while True:
            text = socket.recv_string()
            received += 1
            if received == crash_after:
                print(f"fake batsched: crashing on message {received}", flush=True)
                return 6
            if replayer is not None:
                try:
                    socket.send_string(replayer.answer(text))
                except ValueError as error:
                    print(f"fake batsched: {error}", flush=True)
                    return 3
                if replayer.position == len(replayer.exchanges):
                    return 0
                continue
            reply, ended = fcfs.answer(json.loads(text))
            socket.send_string(json.dumps(reply))
            if ended:
                return 0
    finally:
        socket.close(linger=1000)
        context.term()


if __name__ == "__main__":
    sys.exit(main())
