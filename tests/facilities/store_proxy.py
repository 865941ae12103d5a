"""A TCP proxy between one facility's ranks and the federation's store, on loopback, that can go
silent for that facility alone: the store stops answering it while it answers every other facility
(the link between one facility and the store cut, the others' links up). Used by
run_unknown_outcome.py.

arm(pattern): the next bytes a client sends that hold `pattern` (e.g. the key of the facility's ack)
are forwarded, then that connection goes silent (nothing more is forwarded either way), and so does
every connection accepted from then on, until release(), which closes the silent connections (their
clients see the link drop and connect again) and forwards new connections again. Connections
accepted before the trigger (the facility's lease) are left alone. Threads, no timing of its own."""
import socket
import threading


class StoreProxy:
    def __init__(self, target_host, target_port):
        self.target = (target_host, target_port)
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.pattern = None
        self.silent = False  # after the trigger, until release()
        self.silenced = []   # the connections (client, server) made silent
        self.triggered = threading.Event()
        self.connections = 0
        self.closing = False
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, pattern):
        with self.lock:
            self.pattern = pattern

    def release(self):
        with self.lock:
            self.silent = False
            self.pattern = None
            silenced, self.silenced = self.silenced, []
        for pair in silenced:
            for sock in pair:
                self._close(sock)

    def stop(self):
        self.closing = True
        self._close(self.listener)
        self.release()

    @staticmethod
    def _close(sock):
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()

    def _accept(self):
        while not self.closing:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            pair = (client, server)
            with self.lock:
                self.connections += 1
                if self.silent:  # accepted while silent: never forwarded
                    self.silenced.append(pair)
                    continue
            gate = threading.Event()  # set once the pair is silenced: both directions stop forwarding
            threading.Thread(target=self._pump, args=(client, server, pair, gate, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, pair, gate, False), daemon=True).start()

    def _pump(self, source, sink, pair, gate, from_client):
        tail = b""
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if gate.is_set():
                return  # silent: what arrives is dropped; release() closes the sockets
            if not data:
                for sock in pair:
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return
            trigger = False
            with self.lock:
                # tail: the pattern's length less one of what came before, so that only an occurrence
                # reaching into these bytes matches (not one sent before arm()).
                if from_client and self.pattern is not None and self.pattern in tail[-(len(self.pattern) - 1):] + data:
                    # Silent before the bytes go: no answer to them (or to what came with them) gets back.
                    trigger = True
                    self.silent = True
                    self.pattern = None
                    self.silenced.append(pair)
                    gate.set()
            try:
                sink.sendall(data)
            except OSError:
                return
            if trigger:
                self.triggered.set()
                return
            if from_client:
                tail = (tail + data)[-256:]
