#!/usr/bin/env python3
# Writes the binary fixtures with Python's plistlib, an encoder independent of the Foundation
# parser under test. Run from this directory after editing action-strict.plist.
import plistlib

with open("plists/action-strict.plist", "rb") as f:
    strict = plistlib.load(f)
binary = plistlib.dumps(strict, fmt=plistlib.FMT_BINARY)
with open("plists/action-strict-binary.plist", "wb") as f:
    f.write(binary)
# Cut in half: the header is intact, the object table and trailer are gone.
with open("malformed/truncated-binary.plist", "wb") as f:
    f.write(binary[: len(binary) // 2])

groups = {
    "com.apple.security.app-sandbox": True,
    "com.apple.security.application-groups": ["group.com.example.notes", "group.com.example.shared"],
    "com.apple.security.network.server": False,
}
with open("entitlements/binary-groups.entitlements", "wb") as f:
    plistlib.dump(groups, f, fmt=plistlib.FMT_BINARY)
