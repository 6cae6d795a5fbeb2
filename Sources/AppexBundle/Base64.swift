/// Base64 for `<data>`: decoding with white space between the groups allowed, as plists are
/// line-wrapped; any other stray character is refused rather than skipped.
enum Base64 {
    static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var group: UInt32 = 0
        var count = 0
        var padding = 0
        for c in text.utf8 {
            let v: UInt32
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"): v = 62
            case UInt8(ascii: "/"): v = 63
            case UInt8(ascii: "="):
                padding += 1
                continue
            case 0x20, 0x09, 0x0A, 0x0D:
                continue
            default:
                return nil
            }
            guard padding == 0 else { return nil }
            group = group << 6 | v
            count += 1
            if count == 4 {
                out += [UInt8(group >> 16 & 0xFF), UInt8(group >> 8 & 0xFF), UInt8(group & 0xFF)]
                group = 0
                count = 0
            }
        }
        switch count {
        case 0: break
        case 2: out.append(UInt8(group >> 4 & 0xFF))
        case 3: out += [UInt8(group >> 10 & 0xFF), UInt8(group >> 2 & 0xFF)]
        default: return nil
        }
        return padding <= 2 ? out : nil
    }
}
