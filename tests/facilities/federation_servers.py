"""What the facility tests start besides the jobs: the federation's store (the built-in xffl-federation,
one etcd member, or a cluster of etcd members), each on loopback and removed on exit. Shared by
run_facilities.py and run_continue.py."""
import os
import queue
import threading
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


class EtcdCluster:
    """A cluster of etcd members on loopback with the job's user "xffl" (its password the job secret,
    self.secret): tests/federation's start_etcd_cluster, as the process federation_etcd_cluster, which
    kills and restarts members on command; the members and their data removed on exit. skipped is True
    (and nothing runs) when etcd is not installed. extra: more arguments of the tool (tests/netns:
    --hosts H0,H1,H2 --netns NS0,NS1,NS2, each member on its facility's address in its namespace)."""

    def __init__(self, tool, members, extra=()):
        self.process = subprocess.Popen([tool, str(members)] + list(extra), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        self.answers = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.members, self.skipped, said = {}, False, []
        while True:
            line = self._answer("the etcd cluster starting", 90)
            said.append(line)
            if line is None:
                self.process.wait()
                self.skipped = self.process.returncode == 77
                if self.skipped:
                    return
                fail(f"the etcd cluster did not start (exit {self.process.returncode}): {said}")
            words = line.split()
            if words[:1] == ["endpoint"]:
                self.endpoint = words[1]
            elif words[:1] == ["secret"]:
                self.secret = words[1]
            elif words[:1] == ["member"]:
                self.members[int(words[1])] = words[2]
            elif words == ["ready"]:
                return

    def _read(self):
        for line in self.process.stdout:
            self.answers.put(line.strip())
        self.answers.put(None)

    def _answer(self, what, bound):
        try:
            return self.answers.get(timeout=bound)
        except queue.Empty:
            self.stop()
            fail(f"{what}: no answer from federation_etcd_cluster within {bound} s")

    def _command(self, verb, member):
        self.process.stdin.write(f"{verb} {member}\n")
        self.process.stdin.flush()
        answer = self._answer(f"{verb} of etcd member {member}", 60)
        if answer is None or not answer.startswith(("killed", "restarted")):
            fail(f"{verb} of etcd member {member}: {answer}")

    def kill(self, member):
        """SIGKILL of one member (its data kept)."""
        self._command("kill", member)

    def restart(self, member):
        """A killed member started again with its data; returns once it answers."""
        self._command("restart", member)

    def stop(self):
        if self.process.poll() is None:
            self.process.stdin.close()  # the end of its commands: it stops the members, removes their data
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()  # the members die with it
                self.process.wait()
