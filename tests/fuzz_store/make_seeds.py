#!/usr/bin/env python3
"""Writes the seed inputs of fuzz_store into seeds/ (committed; rerun after a protocol change)."""
import os
import struct

MAGIC, VERSION = 0x58465354, 1
HELLO, PUBLISH, FETCH, BARRIER, DEPARTED, CLAIM, RELEASE = 1, 16, 17, 18, 19, 20, 21


def frame(kind, payload):
    return struct.pack(">IHHI", MAGIC, VERSION, kind, len(payload)) + payload


def text(s):
    b = s.encode()
    return struct.pack(">I", len(b)) + b


def step(connection, data):
    """Bytes arriving on a connection, in pieces of at most 255."""
    out = b""
    for i in range(0, len(data), 255):
        piece = data[i:i + 255]
        out += bytes([connection, len(piece)]) + piece
    return out


def tick(units):
    return bytes([0x80, units])


def claim(creation, first, count, members):
    key = struct.pack(">III", creation, first, count)
    return frame(CLAIM, struct.pack(">I", len(key)) + key + struct.pack(">I", members))


def hang_up(connection):
    return bytes([0x40 | connection, 0])


seeds = {
    "publish_fetch": bytes([0x06]) + step(0, frame(PUBLISH, text("k") + text("value")))
    + step(1, frame(FETCH, text("k") + struct.pack(">I", 100))),
    "fetch_then_timeout": bytes([0x06]) + step(1, frame(FETCH, text("never") + struct.pack(">I", 50))) + tick(20),
    "barrier": bytes([0x06]) + step(0, frame(BARRIER, text("b#0") + struct.pack(">I", 100)))
    + step(1, frame(BARRIER, text("b#0") + struct.pack(">I", 100))),
    "barrier_peer_leaves": bytes([0x06]) + step(0, frame(BARRIER, text("b#0") + struct.pack(">I", 900)))
    + hang_up(1),
    "departed_after_leave": bytes([0x06]) + step(0, frame(DEPARTED, b"")) + hang_up(1)
    + step(0, frame(DEPARTED, b"")),
    "hello_by_hand": bytes([0x00]) + step(2, frame(HELLO, struct.pack(">II", 2, 1) + text("fuzz") + bytes(32))),
    "with_token": bytes([0x07]) + step(0, frame(PUBLISH, text("a") + text("b"))),
    "group_claims": bytes([0x06]) + step(0, claim(0, 0, 2, 2)) + step(1, claim(0, 0, 2, 2))
    + step(0, frame(RELEASE, struct.pack(">I", 0))) + step(0, claim(0, 0, 1, 1)) + step(1, claim(0, 1, 1, 1))
    + step(1, claim(1, 1, 1, 1)) + step(1, claim(2, 1, 1, 1)) + hang_up(1) + step(0, claim(1, 0, 1, 1)),
    "slow_hello": bytes([0x00]) + step(2, frame(HELLO, struct.pack(">II", 2, 1))[:9]) + tick(100),
}

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds")
os.makedirs(here, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
