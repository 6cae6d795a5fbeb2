"""Frames and messages of Appex's wire protocol, version 1 (Docs/protocol.md sections 2-5).

Pure: bytes in, messages out, and back. Every fault is a WireError naming the rule, the field
and the byte offset. Only what a host sends and receives on the control channel is modelled.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Callable, Union

PROTOCOL_VERSION = 1
FRAME_FORMAT = 1
HEADER_SIZE = 16
MAX_FRAME = 131072
MAX_FDS = 16
MAX_ITEMS = 16
MAX_ATTACHMENTS = 16
MAX_TYPE_IDS = 16
MAX_USER_INFO = 64
MAX_PHASES = 32
MAX_DETAILS = 64

HELLO, REFUSAL, PING, PONG = 0x01, 0x02, 0x03, 0x04
OPEN_URL, OPEN_URL_RESULT = 0x13, 0x14
HOST_BEGIN_REQUEST, REQUEST_OUTCOME, HOST_CANCEL_REQUEST, INTERRUPTION = 0x20, 0x21, 0x22, 0x23

OUTCOMES = {1: "completed", 2: "cancelled", 3: "failed"}


class WireError(Exception):
    """A frame that breaks the protocol (section 8); `reason` is the Refusal's."""

    def __init__(self, message: str, reason: str = "protocol-error") -> None:
        super().__init__(message)
        self.reason = reason


UserInfoValue = Union[str, int, bool, float, bytes]


@dataclass
class Attachment:
    """An NSItemProvider: inline data, or a descriptor (`fd`) sent with the frame."""

    type_identifiers: list[str]
    inline_data: bytes | None = None
    fd: int | None = None
    suggested_name: str | None = None

    @staticmethod
    def url(url: str) -> "Attachment":
        return Attachment(["public.url"], inline_data=url.encode())


@dataclass
class Item:
    title: str | None = None
    content_text: str | None = None
    attachments: list[Attachment] = field(default_factory=list)
    user_info: dict[str, UserInfoValue] = field(default_factory=dict)


@dataclass
class ErrorValue:
    domain: str
    code: int
    message: str | None = None


@dataclass
class Phase:
    name: str
    microseconds: int


@dataclass
class Hello:
    protocol_version: int
    bundle_identifier: str
    pid: int


@dataclass
class Refusal:
    reason: str
    message: str | None = None
    request_id: int | None = None
    details: list[str] = field(default_factory=list)


@dataclass
class Ping:
    sequence: int


@dataclass
class Pong:
    sequence: int


@dataclass
class OpenURL:
    request_id: int
    url: str


@dataclass
class RequestOutcome:
    request_id: int
    outcome: str
    items: list[Item] = field(default_factory=list)
    error: ErrorValue | None = None
    reason: str | None = None
    cold: bool = False
    phases: list[Phase] = field(default_factory=list)
    peak_memory_bytes: int | None = None


@dataclass
class Interruption:
    request_id: int
    bundle_identifier: str
    reason: str
    message: str | None = None
    signal: int | None = None
    band: int | None = None
    footprint_bytes: int | None = None
    trigger_to_death_micros: int | None = None


Message = Union[Hello, Refusal, Ping, Pong, OpenURL, RequestOutcome, Interruption]

# ---- decoding ----------------------------------------------------------------------------

U8, BOOL, U32, I32, U64, I64, F64, STRING, BYTES, NESTED = range(10)
_SIZES = {U8: 1, BOOL: 1, U32: 4, I32: 4, U64: 8, I64: 8, F64: 8}
_FORMATS = {U8: "<B", U32: "<I", I32: "<i", U64: "<Q", I64: "<q", F64: "<d"}


@dataclass(frozen=True)
class Rule:
    tag: int
    name: str
    kind: int
    required: bool = False
    most: int = 1  # more than 1: repeated, decoded as a list
    nested: "Schema | None" = None


@dataclass(frozen=True)
class Schema:
    name: str
    rules: tuple[Rule, ...]
    build: Callable[[dict, str, int], object]


def _fail(kind: str, path: str, offset: int, detail: str) -> WireError:
    return WireError(f"{kind} in {path} at offset {offset}: {detail}")


def _value(frame: bytes, rule: Rule, start: int, length: int, path: str) -> object:
    raw = frame[start:start + length]
    if rule.kind == BOOL:
        if raw[0] > 1:
            raise _fail("bad-bool", path, start - 6, f"{raw[0]} (0 or 1)")
        return raw[0] == 1
    if rule.kind in _FORMATS:
        return struct.unpack(_FORMATS[rule.kind], raw)[0]
    if rule.kind == STRING:
        if b"\0" in raw:
            raise _fail("bad-string", path, start - 6, "a NUL byte")
        try:
            return raw.decode("utf-8", "strict")
        except UnicodeDecodeError:
            raise _fail("bad-string", path, start - 6, "invalid UTF-8") from None
    if rule.kind == BYTES:
        return bytes(raw)
    assert rule.nested is not None
    return _decode_struct(frame, rule.nested, start, start + length, path)


def _decode_struct(frame: bytes, schema: Schema, start: int, end: int, path: str) -> object:
    values: dict[str, object] = {}
    at = start
    by_tag = {r.tag: r for r in schema.rules}
    while at < end:
        if end - at < 6:
            raise _fail("truncated-field", path, at, f"{end - at} bytes left, a field header is 6")
        tag, length = struct.unpack_from("<HI", frame, at)
        if length > end - at - 6:
            raise _fail("truncated-field", path, at, f"tag {tag} says {length} bytes, {end - at - 6} remain")
        rule = by_tag.get(tag)
        if rule is None:
            if tag < 0x8000:
                raise _fail("unknown-tag", path, at, f"tag {tag}")
        else:
            size = _SIZES.get(rule.kind)
            if size is not None and length != size:
                raise _fail("bad-field-length", path, at, f"{rule.name} is {length} bytes, this field is {size}")
            value = _value(frame, rule, at + 6, length, f"{path}.{rule.name}")
            if rule.most == 1:
                if rule.name in values:
                    raise _fail("duplicate-field", path, at, f"{rule.name} appears twice")
                values[rule.name] = value
            else:
                bucket = values.setdefault(rule.name, [])
                assert isinstance(bucket, list)
                if len(bucket) == rule.most:
                    raise _fail("too-many", path, at, f"more than {rule.most} {rule.name} fields")
                bucket.append(value)
        at += 6 + length
    for rule in schema.rules:
        if rule.required and rule.name not in values:
            raise _fail("missing-field", path, start, f"{rule.name} is required")
    return schema.build(values, path, start)


def _attachment(v: dict, path: str, offset: int) -> Attachment:
    if ("inlineData" in v) == ("fdIndex" in v):
        raise _fail("bad-attachment", path, offset, "exactly one of inlineData and fdIndex is required")
    return Attachment(v["typeIdentifier"], v.get("inlineData"), v.get("fdIndex"), v.get("suggestedName"))


def _user_info(v: dict, path: str, offset: int) -> tuple[str, UserInfoValue]:
    present = [k for k in ("string", "integer", "bool", "double", "data") if k in v]
    if len(present) != 1:
        raise _fail("bad-user-info", path, offset, f"{len(present)} values, exactly one is required")
    return v["key"], v[present[0]]


def _item(v: dict, path: str, offset: int) -> Item:
    info: dict[str, UserInfoValue] = {}
    for key, value in v.get("userInfo", []):
        if key in info:
            raise _fail("duplicate-key", path, offset, f'userInfo key "{key}" appears twice')
        info[key] = value
    return Item(v.get("attributedTitle"), v.get("attributedContentText"), v.get("attachment", []), info)


ATTACHMENT = Schema("attachment", (
    Rule(1, "typeIdentifier", STRING, True, MAX_TYPE_IDS), Rule(2, "inlineData", BYTES),
    Rule(3, "fdIndex", U32), Rule(4, "suggestedName", STRING)), _attachment)
USER_INFO = Schema("userInfo", (
    Rule(1, "key", STRING, True), Rule(2, "string", STRING), Rule(3, "integer", I64), Rule(4, "bool", BOOL),
    Rule(5, "double", F64), Rule(6, "data", BYTES)), _user_info)
ITEM = Schema("item", (
    Rule(1, "attributedTitle", STRING), Rule(2, "attributedContentText", STRING),
    Rule(3, "attachment", NESTED, most=MAX_ATTACHMENTS, nested=ATTACHMENT),
    Rule(4, "userInfo", NESTED, most=MAX_USER_INFO, nested=USER_INFO)), _item)
ERROR = Schema("error", (Rule(1, "domain", STRING, True), Rule(2, "code", I64, True), Rule(3, "message", STRING)),
               lambda v, p, o: ErrorValue(v["domain"], v["code"], v.get("message")))
PHASE = Schema("phase", (Rule(1, "name", STRING, True), Rule(2, "microseconds", U64, True)),
               lambda v, p, o: Phase(v["name"], v["microseconds"]))


def _outcome(v: dict, path: str, offset: int) -> RequestOutcome:
    if v["outcome"] not in OUTCOMES:
        raise _fail("bad-enum", path, offset, f"outcome {v['outcome']} (1, 2 or 3)")
    names = [p.name for p in v.get("phase", [])]
    if len(set(names)) != len(names):
        raise _fail("duplicate-phase", path, offset, "a phase name appears twice")
    return RequestOutcome(v["requestID"], OUTCOMES[v["outcome"]], v.get("item", []), v.get("error"), v.get("reason"),
                          v.get("cold", False), v.get("phase", []), v.get("peakMemoryBytes"))


MESSAGES: dict[int, Schema] = {
    HELLO: Schema("Hello", (Rule(1, "protocolVersion", U32, True), Rule(2, "bundleIdentifier", STRING, True),
                            Rule(3, "pid", I32, True)),
                  lambda v, p, o: Hello(v["protocolVersion"], v["bundleIdentifier"], v["pid"])),
    REFUSAL: Schema("Refusal", (Rule(1, "reason", STRING, True), Rule(2, "message", STRING), Rule(3, "requestID", U64),
                                Rule(4, "detail", STRING, most=MAX_DETAILS)),
                    lambda v, p, o: Refusal(v["reason"], v.get("message"), v.get("requestID"), v.get("detail", []))),
    PING: Schema("Ping", (Rule(1, "sequence", U64, True),), lambda v, p, o: Ping(v["sequence"])),
    PONG: Schema("Pong", (Rule(1, "sequence", U64, True),), lambda v, p, o: Pong(v["sequence"])),
    OPEN_URL: Schema("OpenURL", (Rule(1, "requestID", U64, True), Rule(2, "url", STRING, True)),
                     lambda v, p, o: OpenURL(v["requestID"], v["url"])),
    REQUEST_OUTCOME: Schema("RequestOutcome", (
        Rule(1, "requestID", U64, True), Rule(2, "outcome", U8, True),
        Rule(3, "item", NESTED, most=MAX_ITEMS, nested=ITEM), Rule(4, "error", NESTED, nested=ERROR),
        Rule(5, "reason", STRING), Rule(6, "cold", BOOL), Rule(7, "phase", NESTED, most=MAX_PHASES, nested=PHASE),
        Rule(8, "peakMemoryBytes", U64)), _outcome),
    INTERRUPTION: Schema("Interruption", (
        Rule(1, "requestID", U64, True), Rule(2, "bundleIdentifier", STRING, True), Rule(3, "reason", STRING, True),
        Rule(4, "message", STRING), Rule(5, "signal", I32), Rule(6, "band", U32), Rule(7, "footprintBytes", U64),
        Rule(8, "triggerToDeathMicros", U64)),
        lambda v, p, o: Interruption(v["requestID"], v["bundleIdentifier"], v["reason"], v.get("message"),
                                     v.get("signal"), v.get("band"), v.get("footprintBytes"),
                                     v.get("triggerToDeathMicros"))),
}


def _check_descriptors(items: list[Item], fd_count: int) -> None:
    named: set[int] = set()
    for i, item in enumerate(items):
        for j, attachment in enumerate(item.attachments):
            index = attachment.fd
            if index is None:
                continue
            if index >= fd_count or index in named:
                raise WireError(f"bad-descriptor-index in items[{i}].attachments[{j}]: descriptor {index} of {fd_count}"
                                " is out of range or named twice")
            named.add(index)
    if len(named) != fd_count:
        raise WireError(f"unused-descriptor: {fd_count} descriptors arrived, {len(named)} are named by attachments")


def decode(frame: bytes, fd_count: int = 0) -> Message:
    """Decodes one frame a host may receive. Attachments' `fd` fields hold descriptor indexes."""
    if len(frame) < HEADER_SIZE:
        raise WireError(f"truncated-header: a {len(frame)}-byte record, the header is {HEADER_SIZE}")
    if len(frame) > MAX_FRAME:
        raise WireError(f"oversized-frame: {len(frame)} bytes, the limit is {MAX_FRAME}")
    magic, fmt, kind, flags, fds, payload = struct.unpack_from("<4sHHHHI", frame)
    if magic != b"APXW":
        raise WireError("bad-magic at offset 0")
    if fmt != FRAME_FORMAT:
        raise WireError(f"unknown-format {fmt} at offset 4")
    if flags:
        raise WireError(f"reserved-flags 0x{flags:04x} at offset 8")
    if fds > MAX_FDS or fds != fd_count:
        raise WireError(f"descriptor-count at offset 10: the header says {fds}, {fd_count} arrived")
    if payload != len(frame) - HEADER_SIZE:
        raise WireError(f"bad-payload-length at offset 12: {payload}, the record has {len(frame) - HEADER_SIZE}")
    schema = MESSAGES.get(kind)
    if schema is None:
        raise WireError(f"unknown-type 0x{kind:02x} at offset 6: not a message appexd sends a host")
    if fd_count and kind != REQUEST_OUTCOME:
        raise WireError(f"descriptors-not-allowed: {schema.name} carries {fd_count} descriptors")
    message = _decode_struct(frame, schema, HEADER_SIZE, len(frame), schema.name)
    if isinstance(message, RequestOutcome):
        _check_descriptors(message.items, fd_count)
    return message  # type: ignore[return-value]

# ---- encoding ----------------------------------------------------------------------------


class Frame:
    """A frame being built, with the descriptors its attachments send."""

    def __init__(self, kind: int) -> None:
        self.kind = kind
        self.payload = bytearray()
        self.fds: list[int] = []

    def field(self, tag: int, value: bytes) -> "Frame":
        self.payload += struct.pack("<HI", tag, len(value)) + value
        return self

    def string(self, tag: int, value: str) -> "Frame":
        if "\0" in value:
            raise ValueError(f"tag {tag}: a string may not hold a NUL")
        return self.field(tag, value.encode("utf-8"))

    def integer(self, tag: int, fmt: str, value: int) -> "Frame":
        return self.field(tag, struct.pack(fmt, value))

    def nested(self, tag: int, inner: "Frame") -> "Frame":
        return self.field(tag, bytes(inner.payload))

    def items(self, tag: int, items: list[Item]) -> "Frame":
        if len(items) > MAX_ITEMS:
            raise ValueError(f"{len(items)} items, the limit is {MAX_ITEMS}")
        for item in items:
            self.nested(tag, self._item(item))
        return self

    def _item(self, item: Item) -> "Frame":
        inner = Frame(0)
        if item.title is not None:
            inner.string(1, item.title)
        if item.content_text is not None:
            inner.string(2, item.content_text)
        if len(item.attachments) > MAX_ATTACHMENTS or len(item.user_info) > MAX_USER_INFO:
            raise ValueError("too many attachments or user-info entries in one item")
        for attachment in item.attachments:
            a = Frame(0)
            if not 1 <= len(attachment.type_identifiers) <= MAX_TYPE_IDS:
                raise ValueError("an attachment has 1 to 16 type identifiers")
            for type_id in attachment.type_identifiers:
                a.string(1, type_id)
            if attachment.fd is not None:
                if len(self.fds) == MAX_FDS:
                    raise ValueError(f"more than {MAX_FDS} descriptors in one frame")
                a.integer(3, "<I", len(self.fds))
                self.fds.append(attachment.fd)
            else:
                a.field(2, attachment.inline_data or b"")
            if attachment.suggested_name is not None:
                a.string(4, attachment.suggested_name)
            inner.nested(3, a)
        for key, value in item.user_info.items():
            entry = Frame(0).string(1, key)
            if isinstance(value, bool):
                entry.field(4, bytes([value]))
            elif isinstance(value, int):
                entry.integer(3, "<q", value)
            elif isinstance(value, float):
                entry.field(5, struct.pack("<d", value))
            elif isinstance(value, bytes):
                entry.field(6, value)
            else:
                entry.string(2, value)
            inner.nested(4, entry)
        return inner

    def encode(self) -> bytes:
        frame = struct.pack("<4sHHHHI", b"APXW", FRAME_FORMAT, self.kind, 0, len(self.fds), len(self.payload))
        frame += bytes(self.payload)
        if len(frame) > MAX_FRAME:
            raise ValueError(f"the message is {len(frame)} bytes, over the {MAX_FRAME}-byte frame: send bulk data as a file")
        return frame


def hello(identifier: str, pid: int) -> Frame:
    return Frame(HELLO).integer(1, "<I", PROTOCOL_VERSION).string(2, identifier).integer(3, "<i", pid)


def refusal(reason: str, message: str) -> Frame:
    return Frame(REFUSAL).string(1, reason).string(2, message)
