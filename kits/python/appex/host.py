"""A host's connection to appexd's control socket (Docs/protocol.md sections 1, 6 and 8)."""

from __future__ import annotations

import os
import socket
import stat
from dataclasses import dataclass, field
from typing import Callable

from . import wire
from .wire import (Attachment, Frame, Interruption, Item, Message, OpenURL, Ping, Pong, Refusal, RequestOutcome,
                   WireError)

DEFAULT_SOCKET = "/run/appex/appexd.sock"


class AppexError(Exception):
    """appexd refused, went away, or broke the protocol. `reason` is a section-7 token."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


@dataclass
class Result:
    """How one request ended: its RequestOutcome, or the Refusal that answered it."""

    request_id: int
    outcome: str  # completed, cancelled, failed, refused
    items: list[Item] = field(default_factory=list)
    outcome_message: RequestOutcome | None = None
    refusal: Refusal | None = None
    interruption: Interruption | None = None

    @property
    def reason(self) -> str | None:
        if self.refusal:
            return self.refusal.reason
        return self.outcome_message.reason if self.outcome_message else None


# Type identifiers for a file as `appex request --file` picks them, by the name's extension.
_FILE_TYPES: dict[str, list[str]] = {
    "txt": ["public.plain-text", "public.text"], "md": ["net.daringfireball.markdown", "public.plain-text"],
    "jpg": ["public.jpeg", "public.image"], "jpeg": ["public.jpeg", "public.image"],
    "png": ["public.png", "public.image"], "gif": ["com.compuserve.gif", "public.image"],
    "pdf": ["com.adobe.pdf"], "html": ["public.html", "public.text"], "json": ["public.json", "public.text"],
}


def file_attachment(fd: int, name: str) -> Attachment:
    """An attachment sending descriptor `fd` (the caller keeps and closes it)."""
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return Attachment(_FILE_TYPES.get(extension, []) + ["public.data"], fd=fd, suggested_name=name)


def open_file(path: str) -> int:
    """Opens a regular file read-only, as appexd accepts it (section 2), or raises ValueError."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValueError(f"{path} is not a regular file")
    return fd


class HostClient:
    """One control connection. Not thread-safe: use it from one thread."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._next_id = 1
        self._open: set[int] = set()

    # ---- connection ----

    @classmethod
    def connect(cls, path: str | None = None, identifier: str = "dev.appex.python-host",
                timeout: float | None = 10.0) -> "HostClient":
        """Connects and checks in: `path`, else $APPEX_SOCKET, else /run/appex/appexd.sock."""
        path = path or os.environ.get("APPEX_SOCKET") or DEFAULT_SOCKET
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            sock.connect(path)
        except OSError as e:
            sock.close()
            raise AppexError("io", f"connect to {path}: {e.strerror}") from None
        client = cls(sock)
        client._send(wire.hello(identifier, os.getpid()))
        first = client._receive(timeout)
        if isinstance(first, Refusal):
            client.close()
            raise AppexError(first.reason, f"appexd refused: {first.message or first.reason}")
        if not isinstance(first, wire.Hello):
            client._refuse("protocol-error", f"{type(first).__name__} before appexd's Hello")
        if first.protocol_version != wire.PROTOCOL_VERSION:
            client._refuse("version-mismatch",
                           f"appexd speaks protocol version {first.protocol_version}, this host {wire.PROTOCOL_VERSION}")
        return client

    def fileno(self) -> int:
        return self._sock.fileno()

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> "HostClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- requests ----

    def begin(self, bundle_identifier: str, items: list[Item], band: int | None = None) -> int:
        """Sends HostBeginRequest; returns its request id. Descriptors in attachments are sent."""
        request_id = self._next_id
        frame = Frame(wire.HOST_BEGIN_REQUEST).integer(1, "<Q", request_id).string(2, bundle_identifier)
        frame.items(3, items)
        if band is not None:
            frame.integer(4, "<I", band)
        self._send(frame)
        self._next_id += 1
        self._open.add(request_id)
        return request_id

    def cancel(self, request_id: int) -> None:
        if request_id in self._open:
            self._send(Frame(wire.HOST_CANCEL_REQUEST).integer(1, "<Q", request_id))

    def open_url_result(self, request_id: int, accepted: bool) -> None:
        self._send(Frame(wire.OPEN_URL_RESULT).integer(1, "<Q", request_id).field(2, bytes([accepted])))

    def next(self, timeout: float | None = None) -> Message | None:
        """The next message for the host (RequestOutcome, Refusal, Interruption, OpenURL), or
        None on timeout. Pings are answered here."""
        while True:
            message = self._receive(timeout)
            if message is None:
                return None
            if isinstance(message, Ping):
                self._send(Frame(wire.PONG).integer(1, "<Q", message.sequence))
                continue
            if isinstance(message, Pong) or isinstance(message, wire.Hello):
                self._refuse("protocol-error", f"an unexpected {type(message).__name__}")
            if isinstance(message, Refusal) and message.request_id is None:
                self.close()
                raise AppexError(message.reason, f"appexd refused the connection: {message.message or message.reason}")
            request_id = getattr(message, "request_id")
            if request_id not in self._open:
                self._refuse("protocol-error", f"{type(message).__name__} names request {request_id}, not in flight")
            if isinstance(message, (RequestOutcome, Refusal)):
                self._open.discard(request_id)
            return message

    def request(self, bundle_identifier: str, items: list[Item], band: int | None = None,
                open_url: Callable[[str], bool] = lambda url: False, timeout: float | None = None) -> Result:
        """Sends one request and waits for how it ended. `open_url` decides each OpenURL."""
        request_id = self.begin(bundle_identifier, items, band)
        interruption: Interruption | None = None
        while True:
            message = self.next(timeout)
            if message is None:
                raise AppexError("timeout", f"request {request_id} had no outcome within {timeout} s")
            if isinstance(message, OpenURL):
                self.open_url_result(message.request_id, open_url(message.url))
            elif isinstance(message, Interruption):
                interruption = message
            elif isinstance(message, Refusal) and message.request_id == request_id:
                return Result(request_id, "refused", refusal=message)
            elif isinstance(message, RequestOutcome) and message.request_id == request_id:
                return Result(request_id, message.outcome, message.items, message, interruption=interruption)

    # ---- the socket ----

    def _send(self, frame: Frame) -> None:
        data = frame.encode()
        try:
            if frame.fds:
                socket.send_fds(self._sock, [data], frame.fds)
            else:
                self._sock.send(data)
        except OSError as e:
            raise AppexError("io", f"send: {e.strerror}") from None

    def _refuse(self, reason: str, message: str) -> None:
        try:
            self._sock.send(wire.refusal(reason, message).encode(), socket.MSG_DONTWAIT)
        except OSError:
            pass
        self.close()
        raise AppexError(reason, message)

    def _receive(self, timeout: float | None) -> Message | None:
        self._sock.settimeout(timeout)
        try:
            # The record's length first (MSG_TRUNC reports it whole), so the buffer fits it.
            size = self._sock.recv_into(bytearray(1), 1, socket.MSG_PEEK | socket.MSG_TRUNC)
            capacity = min(max(size, 1), wire.MAX_FRAME + 1)
            data, ancillary, flags, _ = self._sock.recvmsg(
                capacity, socket.CMSG_SPACE((wire.MAX_FDS + 1) * 4), socket.MSG_CMSG_CLOEXEC)
        except TimeoutError:
            return None
        except OSError as e:
            raise AppexError("io", f"recvmsg: {e.strerror}") from None
        finally:
            self._sock.settimeout(None)
        fds: list[int] = []
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                usable = len(payload) - len(payload) % 4
                fds += [int.from_bytes(payload[i:i + 4], "little", signed=True) for i in range(0, usable, 4)]
        if not data:
            for fd in fds:
                os.close(fd)
            self.close()
            raise AppexError("closed", "appexd closed the connection")
        try:
            if flags & socket.MSG_TRUNC:
                raise WireError(f"oversized-frame: a record of more than {wire.MAX_FRAME} bytes")
            if flags & socket.MSG_CTRUNC or len(fds) > wire.MAX_FDS:
                raise WireError(f"too-many-descriptors: more than {wire.MAX_FDS} with one frame")
            message = wire.decode(data, len(fds))
        except WireError as e:
            for fd in fds:
                os.close(fd)
            self._refuse(e.reason, str(e))
            raise  # not reached: _refuse raises
        if isinstance(message, RequestOutcome):
            for item in message.items:
                for attachment in item.attachments:
                    if attachment.fd is not None:
                        attachment.fd = fds[attachment.fd]  # the caller's to read and close
        return message
