"""What ``tests/test_forkserver.py``'s gradings run: a JSON request on stdin, a
JSON answer on stdout (what the process is and holds), a line on stderr."""

import json
import os
import sys
import time

REMEMBERED = []   # what earlier requests left here: nothing, in a fresh fork


def main(argv):
    request = json.loads(sys.stdin.buffer.read())
    REMEMBERED.append(request.get("remember"))
    time.sleep(request.get("sleep", 0))
    print(json.dumps({
        "pid": os.getpid(), "ppid": os.getppid(), "sid": os.getsid(0),
        "cwd": os.getcwd(), "argv": argv, "remembered": REMEMBERED,
        "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
        "echo": request.get("echo"),
    }))
    sys.stderr.write("a line on stderr\n")
    return request.get("exit", 0)
