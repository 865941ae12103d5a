#!/usr/bin/env python3
"""xffl-relay as a client sees it, on loopback (label tools).

usage: check_xffl_relay.py XFFL_RELAY CASE
  usage    --help exits 0; bad input exits 2 with "xffl-relay: error: <why>", nothing served.
  pairing  an owner's hello waits; while it waits, a scanner's garbage, a silent client, half a hello
           (a slow loris) and a duplicate owner come: the duplicate is refused (status 1), the others
           are dropped (closed) within the hello timeout, and none disturbs the owner: the caller's
           hello pairs both (status 0), bytes go both ways unchanged, a FIN on one side reaches the
           other after what it sent, and the relay logs the pair. An unpaired hello is answered
           status 2 after the pair timeout and closed; with the relay's connections full, status 3.
Prints "relay check passed" and exits 0, or "FAIL: ..." and exits 1.
"""
import hashlib
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time

RELAY, CASE = sys.argv[1:3]
HELLO = struct.Struct("<8sIIIQQII16s")  # src/comm/wan/relay_hello.h
JOB = hashlib.sha256(b"relay-check").digest()[:16]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def hello(side, caller=0, owner=1, tag=7, serial=1, stream=0, streams=2):
    return HELLO.pack(b"XFFLRLY1", side, caller, owner, tag, serial, stream, streams, JOB)


class Relay:
    def __init__(self, *options):
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen([RELAY, "--listen", "127.0.0.1:0"] + list(options), stdout=subprocess.PIPE,
                                        stderr=self.log, text=True)
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.process.stdout.readline())
        if not found:
            self.stop()
            fail("xffl-relay did not say where it listens")
        self.port = int(found.group(1))

    def connect(self, payload=b""):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        s.sendall(payload)
        return s

    def text(self):
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                fail("xffl-relay did not end on SIGTERM within 10 s")


def read_exact(s, size, what):
    data = b""
    while len(data) < size:
        chunk = s.recv(size - len(data))
        if not chunk:
            fail(f"{what}: closed after {len(data)} of {size} bytes")
        data += chunk
    return data


def status_of(s, what):
    status, seconds = struct.unpack("<II", read_exact(s, 8, what))
    return status, seconds


def closed_within(s, seconds, what):
    s.settimeout(seconds)
    try:
        while s.recv(4096):
            pass
    except socket.timeout:
        fail(f"{what}: still open after {seconds} s")
    except ConnectionResetError:
        pass


def case_usage():
    run = subprocess.run([RELAY, "--help"], capture_output=True, text=True, timeout=10)
    if run.returncode != 0 or "usage: xffl-relay --listen HOST:PORT" not in run.stdout:
        fail(f"--help: exit {run.returncode}, {run.stdout!r}")
    for args, pattern in (([], r"--listen HOST:PORT is required"),
                          (["--listen", "127.0.0.1"], r"'127.0.0.1' is not HOST:PORT"),
                          (["--listen", "127.0.0.1:70000"], r"port 70000 is outside"),
                          (["--listen", "127.0.0.1:0", "--pair-timeout", "0"], r"--pair-timeout '0' is not"),
                          (["--listen", "127.0.0.1:0", "--buffer", "12"], r"--buffer '12' is not a whole number"),
                          (["--listen", "127.0.0.1:0", "--log-level", "loud"], r"--log-level 'loud' is none of"),
                          (["--listen", "127.0.0.1:0", "--frobnicate", "1"], r"unknown argument '--frobnicate'"),
                          (["--listen"], r"--listen needs a value"),
                          (["--listen", "198.18.0.254:1"], r"cannot listen on 198.18.0.254:1")):
        run = subprocess.run([RELAY] + args, capture_output=True, text=True, timeout=10)
        expected = 1 if "cannot listen" in pattern else 2
        if run.returncode != expected or not re.search("xffl-relay: error: .*" + pattern, run.stderr):
            fail(f"{args}: exit {run.returncode}, stderr {run.stderr!r}; expected {expected} and /{pattern}/")


def case_pairing():
    relay = Relay("--hello-timeout", "1", "--pair-timeout", "2", "--buffer", "65536", "--log-level", "info")
    try:
        owner = relay.connect(hello(1))
        time.sleep(0.2)  # the owner waits
        garbage = relay.connect(b"GET / HTTP/1.1\r\nHost: relay\r\nUser-Agent: scanner\r\n\r\n" + bytes(20))
        silent = relay.connect()
        loris = relay.connect(hello(0)[:30])
        duplicate = relay.connect(hello(1))
        if status_of(duplicate, "the duplicate owner")[0] != 1:
            fail("a second owner of the same stream was not refused with status 1")
        closed_within(garbage, 5, "the garbage client")
        closed_within(silent, 5, "the silent client")
        closed_within(loris, 5, "the slow loris")
        caller = relay.connect(hello(0))
        for s, who in ((owner, "owner"), (caller, "caller")):
            if status_of(s, who) != (0, 0):
                fail(f"the {who} was not told it was paired")
        # Both ways at once, more than the relay's buffer, so that flow control has to hold it back.
        payload = os.urandom(3 << 20)
        caller.setblocking(False)
        owner.setblocking(False)
        sent = {caller: 0, owner: 0}
        got = {caller: bytearray(), owner: bytearray()}
        deadline = time.time() + 30
        while any(len(g) < len(payload) for g in got.values()):
            if time.time() > deadline:
                fail(f"forwarding stalled: {[len(g) for g in got.values()]} of {len(payload)} bytes")
            for s in (caller, owner):
                if sent[s] < len(payload):
                    try:
                        sent[s] += s.send(payload[sent[s]:sent[s] + 65536])
                    except BlockingIOError:
                        pass
                try:
                    chunk = s.recv(1 << 16)
                    if chunk == b"":
                        fail("a side was closed in the middle of the transfer")
                    got[s] += chunk
                except BlockingIOError:
                    pass
            time.sleep(0)
        if bytes(got[caller]) != payload or bytes(got[owner]) != payload:
            fail("the bytes forwarded differ from the bytes sent")
        # A FIN from the caller after a last message: the owner reads the message, then the end.
        caller.setblocking(True)
        owner.setblocking(True)
        caller.sendall(b"last words")
        caller.shutdown(socket.SHUT_WR)
        owner.settimeout(10)
        if read_exact(owner, 10, "the owner") != b"last words" or owner.recv(1) != b"":
            fail("the caller's half-close did not reach the owner after its last bytes")
        owner.close()
        caller.settimeout(10)
        if caller.recv(1) != b"":
            fail("the owner's close did not reach the caller")
        caller.close()
        # A hello that nobody pairs: status 2 after the pair timeout, then closed.
        lonely = relay.connect(hello(0, stream=1))
        began = time.time()
        lonely.settimeout(10)
        status, seconds = status_of(lonely, "the unpaired caller")
        if status != 2 or seconds != 2:
            fail(f"an unpaired hello got status {status} ({seconds} s), not 2 after the pair timeout")
        closed_within(lonely, 5, "the unpaired caller")
        print(f"unpaired hello answered after {time.time() - began:.1f} s")
    finally:
        relay.stop()
    log = relay.text()
    for pattern in (r"\[info\] paired job [0-9a-f]{8} group 7/1 rank 0 -> rank 1 stream 0/2",
                    r"dropped the connection from .*: bad hello: not an xffl-relay hello",
                    r"dropped the connection from .*: no whole hello within 1 s",
                    r"is waiting already \(duplicate\)",
                    r"closed job [0-9a-f]{8} group 7/1 rank 0 -> rank 1 stream 0/2 after .* s: 3145738 bytes caller -> "
                    r"owner, 3145728 bytes owner -> caller \(both ends closed\)",
                    r"did not come within 2 s \(--pair-timeout\)"):
        if not re.search(pattern, log):
            fail(f"no /{pattern}/ in the relay's log:\n{log}")

    full = Relay("--max-connections", "2")
    try:
        held = [full.connect(), full.connect()]
        time.sleep(0.2)
        third = full.connect()
        if status_of(third, "the third connection")[0] != 3:
            fail("a connection past --max-connections was not refused with status 3")
        for s in held + [third]:
            s.close()
    finally:
        full.stop()


{"usage": case_usage, "pairing": case_pairing}[CASE]()
print("relay check passed")
