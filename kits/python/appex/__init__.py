"""A host for Appex extensions: appexd's control protocol in pure Python (Docs/libappex.md, "Python")."""

from .host import AppexError, HostClient, Result, file_attachment, open_file
from .wire import (Attachment, ErrorValue, Hello, Interruption, Item, OpenURL, Phase, Refusal, RequestOutcome,
                   WireError, decode)

__all__ = [
    "AppexError", "Attachment", "ErrorValue", "Hello", "HostClient", "Interruption", "Item", "OpenURL", "Phase",
    "Refusal", "RequestOutcome", "Result", "WireError", "decode", "file_attachment", "open_file",
]
