"""python3 -m appex BUNDLE_ID [--socket PATH] [--text T] [--url U] [--file F] [--band N] [--json]

Sends one request through appexd and prints the returned items and the outcome. The item is
built as `appex request` builds it: the texts joined by newlines as its content text, then every
URL, then every file, as attachments. Exit status 0 when the request completed, 1 otherwise,
3 when appexd could not be reached.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .host import AppexError, HostClient, Result, file_attachment, open_file
from .wire import Attachment, Item


def _describe(result: Result) -> dict:
    out: dict = {"outcome": result.outcome, "items": []}
    for item in result.items:
        entry: dict = {"title": item.title, "contentText": item.content_text, "attachments": []}
        for a in item.attachments:
            shown: dict = {"typeIdentifiers": a.type_identifiers}
            if a.fd is not None:
                shown["descriptor"] = True
            else:
                shown["text"] = (a.inline_data or b"").decode("utf-8", "replace")
            entry["attachments"].append(shown)
        out["items"].append(entry)
    if result.reason:
        out["reason"] = result.reason
    o = result.outcome_message
    if result.refusal and result.refusal.message:
        out["message"] = result.refusal.message
    if o and o.error:
        out["error"] = {"domain": o.error.domain, "code": o.error.code, "message": o.error.message}
    if o:
        out["cold"] = o.cold
        out["phases"] = {p.name: p.microseconds for p in o.phases}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m appex", description="Send one request through appexd.")
    parser.add_argument("bundle", help="the extension's bundle identifier")
    parser.add_argument("--socket", help="appexd's control socket ($APPEX_SOCKET, else /run/appex/appexd.sock)")
    parser.add_argument("--text", action="append", default=[])
    parser.add_argument("--url", action="append", default=[])
    parser.add_argument("--file", action="append", default=[])
    parser.add_argument("--band", type=int)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)

    attachments: list[Attachment] = [Attachment.url(u) for u in args.url]
    fds: list[int] = []
    try:
        for path in args.file:
            fds.append(open_file(path))
            attachments.append(file_attachment(fds[-1], os.path.basename(path)))
    except (OSError, ValueError) as e:
        print(f"appex: {e}", file=sys.stderr)
        return 2
    item = Item(content_text="\n".join(args.text) if args.text else None, attachments=attachments)
    try:
        with HostClient.connect(args.socket) as host:
            result = host.request(args.bundle, [item], band=args.band)
    except AppexError as e:
        print(f"appex: {e}", file=sys.stderr)
        return 3 if e.reason == "io" else 1
    finally:
        for fd in fds:
            os.close(fd)
    described = _describe(result)
    if args.json:
        print(json.dumps(described, indent=2, ensure_ascii=False))
    else:
        for index, item_out in enumerate(described["items"]):
            print(f"item {index}")
            for key in ("title", "contentText"):
                if item_out[key] is not None:
                    print(f"  {key}: {item_out[key]}")
            for a in item_out["attachments"]:
                print(f"  attachment: {a['typeIdentifiers'][0]} {a.get('text', '(descriptor)')}")
        extra = f" ({described['reason']})" if "reason" in described else ""
        print(f"outcome: {result.outcome}{extra}")
    return 0 if result.outcome == "completed" else 1


if __name__ == "__main__":
    sys.exit(main())
