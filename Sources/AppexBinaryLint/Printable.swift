/// Names from a file (symbols, library names, search paths) made safe to print: control
/// characters and bytes that are not UTF-8 are shown as `\xNN`, so a hostile name cannot
/// drive the terminal or forge a line of output.
enum Printable {
    static func escape(_ bytes: [UInt8]) -> String {
        guard let text = String(validating: bytes, as: UTF8.self),
            !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f || ($0.value >= 0x80 && $0.value < 0xa0) })
        else {
            return bytes.map { b in
                b >= 0x20 && b < 0x7f ? String(UnicodeScalar(b)) : "\\x" + (b < 16 ? "0" : "") + String(b, radix: 16)
            }.joined()
        }
        return text
    }
}
