"""Timeouts against real sockets on 127.0.0.1, and the client's lifecycle."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Callable, List, Optional, Type

import httpx
import pytest

from architecture_portfolio import Client, NetworkError, NetworkTimeoutError
from support import Server, ok


Answer = Callable[[socket.socket, threading.Event], None]


class LocalServer:
    """A TCP server on 127.0.0.1 that reads each request, then does what `answer` does with the socket."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.connections: List[socket.socket] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/api/v1"

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(connection)
            connection.recv(65536)
            self.answer(connection, self.stopped)

    def __enter__(self) -> LocalServer:
        self.thread.start()
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.stopped.set()
        self.listener.close()
        for connection in self.connections:
            connection.close()
        self.thread.join(timeout=5)


def never_answer(connection: socket.socket, stopped: threading.Event) -> None:
    stopped.wait(10)


def trickle(connection: socket.socket, stopped: threading.Event) -> None:
    connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n[")
    while not stopped.wait(0.05):
        try:
            connection.sendall(b" ")
        except OSError:
            return


def test_a_server_that_never_answers_gives_a_network_timeout_error_after_the_timeout() -> None:
    with LocalServer(never_answer) as server, Client("ap_pat_test", base_url=server.base_url, timeout=0.2) as client:
        started = time.monotonic()
        with pytest.raises(NetworkTimeoutError) as raised:
            client.functions.tree()
        elapsed = time.monotonic() - started
    assert 0.2 <= elapsed < 2.0
    assert isinstance(raised.value, NetworkError)
    assert isinstance(raised.value.__cause__, httpx.ReadTimeout)
    assert len(server.connections) == 1, "a timeout is not retried"


def test_an_answer_trickling_in_past_the_timeout_is_cut_off() -> None:
    # Every byte comes within the timeout, so only a bound on the whole attempt stops this.
    with LocalServer(trickle) as server, Client("ap_pat_test", base_url=server.base_url, timeout=0.3) as client:
        started = time.monotonic()
        with pytest.raises(NetworkTimeoutError):
            client.functions.tree()
        elapsed = time.monotonic() - started
    assert 0.3 <= elapsed < 2.0
    assert len(server.connections) == 1, "a timeout is not retried"


def test_a_transport_timeout_is_a_network_timeout_error() -> None:
    server = Server(httpx.ReadTimeout("The read operation timed out"))
    with server.client() as client, pytest.raises(NetworkTimeoutError, match="took more than 30.0 s"):
        client.applications.get("CRM-01")


def test_a_refused_connection_is_a_network_error_retried_for_a_get(sleeps: List[float]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with Client("ap_pat_test", base_url=f"http://127.0.0.1:{port}/api/v1", max_retries=1) as client:
        with pytest.raises(NetworkError) as raised:
            client.functions.stats()
    assert not isinstance(raised.value, NetworkTimeoutError)
    assert isinstance(raised.value.__cause__, httpx.ConnectError)
    assert len(sleeps) == 1


@pytest.mark.parametrize("timeout", [0, -1.0])
def test_the_timeout_must_be_positive(timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout"):
        Client("ap_pat_test", timeout=timeout)


def test_the_context_manager_closes_the_client() -> None:
    server = Server(ok([]))
    with server.client() as client:
        client.functions.tree()
        assert not client.is_closed
    assert client.is_closed
    with pytest.raises(RuntimeError):
        client.functions.tree()
    assert len(server.requests) == 1


def test_the_context_manager_closes_the_client_when_the_block_raises() -> None:
    with pytest.raises(KeyError):
        with Server().client() as client:
            raise KeyError("boom")
    assert client.is_closed


def test_the_context_manager_closes_the_transports_connections() -> None:
    closed: List[bool] = []

    class Transport(httpx.MockTransport):
        def close(self) -> None:
            closed.append(True)

    with Client("ap_pat_test", transport=Transport(Server(ok([])))) as client:
        client.functions.tree()
        assert closed == []
    assert closed == [True]


def test_close_closes_the_client() -> None:
    client = Server().client()
    client.close()
    assert client.is_closed


@pytest.mark.parametrize("token", ["", "   "])
def test_a_token_is_required(token: str) -> None:
    with pytest.raises(ValueError, match="token"):
        Client(token)


def test_the_token_stays_out_of_the_clients_repr() -> None:
    client = Client("ap_pat_secret", base_url="https://gw.example.test/api/v1")
    assert "secret" not in repr(client) and "gw.example.test" in repr(client)
    client.close()
