"""What the facility tests start besides the jobs: the federation's store (the built-in xffl-federation,
or one etcd member), each on loopback and removed on exit. Shared by run_facilities.py and
run_continue.py."""
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def end_process(process):
    """SIGTERM, then SIGKILL after 5 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


class Server:
    """The built-in xffl-federation on loopback, a port the kernel picks; removed on exit."""

    def __init__(self, server, secret):
        env = dict(os.environ, XFFL_AUTH_TOKEN=secret)
        self.process = subprocess.Popen([server, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, env=env,
                                        text=True)
        line = self.process.stdout.readline()
        found = re.search(r"listening on (\S+)", line)
        if not found:
            self.stop()
            fail("xffl-federation did not say where it listens: " + repr(line))
        self.endpoint = "xffl://" + found.group(1)

    def stop(self):
        end_process(self.process)


def free_port():
    """A loopback port free now, drawn below the kernel's ephemeral range (as xffl-run draws
    MASTER_PORT): no outgoing connection of another test takes it before its server binds it."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low = int(f.read().split()[0])
    for _ in range(64):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", random.randrange(20000, low) if low > 20064 else 0))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError("no free loopback port")


class Etcd:
    """One etcd member on loopback, without authentication; its data directory removed on exit."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="xffl-facilities-etcd-")
        client, peer = free_port(), free_port()
        self.endpoint = f"etcd://127.0.0.1:{client}"
        log = open(os.path.join(self.dir, "etcd.log"), "w")
        self.process = subprocess.Popen(
            ["etcd", "--name", "f0", "--data-dir", os.path.join(self.dir, "data"),
             "--listen-client-urls", f"http://127.0.0.1:{client}", "--advertise-client-urls",
             f"http://127.0.0.1:{client}", "--listen-peer-urls", f"http://127.0.0.1:{peer}",
             "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}", "--initial-cluster",
             f"f0=http://127.0.0.1:{peer}"], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while time.time() < deadline:
            health = subprocess.run(["etcdctl", f"--endpoints=127.0.0.1:{client}", "--command-timeout=2s",
                                     "endpoint", "health"], capture_output=True)
            if health.returncode == 0:
                return
            time.sleep(0.3)
        self.stop()
        fail("etcd did not become healthy within 30 s")

    def stop(self):
        end_process(self.process)
        shutil.rmtree(self.dir, ignore_errors=True)
