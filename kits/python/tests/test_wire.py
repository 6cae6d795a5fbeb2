"""The Python host's codec and client against frames built here (python3 -m unittest)."""

from __future__ import annotations

import os
import socket
import struct
import threading
import unittest

from appex import wire
from appex.host import AppexError, HostClient, file_attachment
from appex.wire import Attachment, Frame, Item, WireError


def outcome_frame(request_id: int, text: str) -> Frame:
    frame = Frame(wire.REQUEST_OUTCOME).integer(1, "<Q", request_id).integer(2, "<B", 1)
    frame.items(3, [Item(content_text=text, attachments=[Attachment.url("https://example.com/")])])
    return frame.nested(7, Frame(0).string(1, "roundTrip").integer(2, "<Q", 42))


class CodecTests(unittest.TestCase):
    def test_documented_hello(self) -> None:
        expected = bytes.fromhex("41505857010001000000000027000000010004000000010000000200"
                                 "0d000000636f6d2e6578616d706c652e63030004000000d2040000")
        self.assertEqual(wire.hello("com.example.c", 1234).encode(), expected)

    def test_outcome_round_trip(self) -> None:
        message = wire.decode(outcome_frame(3, "héllo").encode())
        self.assertIsInstance(message, wire.RequestOutcome)
        assert isinstance(message, wire.RequestOutcome)
        self.assertEqual((message.request_id, message.outcome), (3, "completed"))
        self.assertEqual(message.items[0].content_text, "héllo")
        self.assertEqual(message.items[0].attachments[0].inline_data, b"https://example.com/")
        self.assertEqual(message.phases[0].microseconds, 42)

    def test_user_info_and_descriptors_encode(self) -> None:
        item = Item(user_info={"s": "v", "n": -3, "b": True, "d": 2.5, "x": b"\x00"},
                    attachments=[file_attachment(7, "a.txt")])
        frame = Frame(wire.HOST_BEGIN_REQUEST).integer(1, "<Q", 1).string(2, "x").items(3, [item])
        self.assertEqual(frame.fds, [7])
        self.assertEqual(struct.unpack_from("<H", frame.encode(), 10)[0], 1)

    def test_malformed_frames_are_refused(self) -> None:
        good = bytearray(Frame(wire.PING).integer(1, "<Q", 5).encode())
        cases = {0: (ord("X"), "bad-magic"), 4: (2, "unknown-format"), 8: (1, "reserved-flags"),
                 6: (0x7F, "unknown-type"), 12: (9, "bad-payload-length"), 16: (9, "unknown-tag"),
                 18: (9, "truncated-field")}
        for offset, (value, kind) in cases.items():
            frame = bytearray(good)
            frame[offset] = value
            with self.assertRaises(WireError, msg=kind) as caught:
                wire.decode(bytes(frame))
            self.assertIn(kind, str(caught.exception))
        with self.assertRaisesRegex(WireError, "bad-field-length"):
            wire.decode(Frame(wire.PING).integer(1, "<I", 5).encode())
        with self.assertRaisesRegex(WireError, "duplicate-field"):
            wire.decode(Frame(wire.PING).integer(1, "<Q", 5).integer(1, "<Q", 6).encode())
        with self.assertRaisesRegex(WireError, "bad-string"):
            wire.decode(Frame(wire.REFUSAL).field(1, b"\xff").encode())
        with self.assertRaisesRegex(WireError, "missing-field"):
            wire.decode(Frame(wire.REFUSAL).encode())
        with self.assertRaisesRegex(WireError, "bad-enum"):
            wire.decode(Frame(wire.REQUEST_OUTCOME).integer(1, "<Q", 1).integer(2, "<B", 9).encode())
        with self.assertRaisesRegex(WireError, "unused-descriptor|descriptor-count"):
            wire.decode(outcome_frame(1, "x").encode(), fd_count=1)
        # A tag from 0x8000 up is skipped.
        self.assertEqual(wire.decode(Frame(wire.PING).integer(1, "<Q", 5).string(0x8001, "new").encode()),
                         wire.Ping(5))


class ClientTests(unittest.TestCase):
    """HostClient over a socketpair, this test playing appexd."""

    def play(self, script) -> HostClient:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.addCleanup(theirs.close)
        self.appexd = threading.Thread(target=script, args=(theirs,))
        self.appexd.start()
        self.addCleanup(self.appexd.join)
        return HostClient(ours)

    def test_ping_then_outcome(self) -> None:
        seen: list[object] = []

        def script(sock: socket.socket) -> None:
            begin = sock.recv(65536)
            seen.append(struct.unpack_from("<H", begin, 6)[0])
            sock.send(Frame(wire.PING).integer(1, "<Q", 1).encode())
            sock.send(outcome_frame(1, "answer").encode())
            seen.append(wire.decode(sock.recv(65536)))  # a Pong decodes on either end

        client = self.play(script)
        result = client.request("dev.appex.x", [Item(content_text="q")], timeout=5)
        self.assertEqual((result.outcome, result.items[0].content_text), ("completed", "answer"))
        self.appexd.join()
        client.close()
        self.assertEqual(seen[0], wire.HOST_BEGIN_REQUEST)
        self.assertEqual(seen[1], wire.Pong(1))

    def test_bad_frame_is_refused_and_closes(self) -> None:
        replies: list[bytes] = []

        def script(sock: socket.socket) -> None:
            sock.recv(65536)
            sock.send(b"APXW\x01\x00\x03\x00\x00\x00\x00\x00\x01\x00\x00\x00!")  # payload is not a field
            replies.append(sock.recv(65536))

        client = self.play(script)
        with self.assertRaises(AppexError) as caught:
            client.request("dev.appex.x", [Item(content_text="q")], timeout=5)
        self.assertEqual(caught.exception.reason, "protocol-error")
        self.appexd.join()
        refusal = wire.decode(replies[0])
        self.assertIsInstance(refusal, wire.Refusal)

    def test_descriptors_in_an_outcome_reach_the_host(self) -> None:
        r, w = os.pipe()
        os.write(w, b"bytes")
        os.close(w)

        def script(sock: socket.socket) -> None:
            sock.recv(65536)
            frame = Frame(wire.REQUEST_OUTCOME).integer(1, "<Q", 1).integer(2, "<B", 1)
            frame.items(3, [Item(attachments=[file_attachment(r, "out.txt")])])
            socket.send_fds(sock, [frame.encode()], frame.fds)
            os.close(r)

        client = self.play(script)
        result = client.request("dev.appex.x", [], timeout=5)
        fd = result.items[0].attachments[0].fd
        assert fd is not None
        self.assertEqual(os.read(fd, 16), b"bytes")
        os.close(fd)
        client.close()


if __name__ == "__main__":
    unittest.main()
