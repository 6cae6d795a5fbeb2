/// The binary property-list format, `bplist00`: a header, objects, an offset table and a
/// 32-byte trailer. Every size and offset is the file author's, so each is checked before
/// use; objects may be shared (keys usually are) but not contain themselves, and every copy
/// of a shared object is charged to the budget before it is made.
struct BinaryPropertyListParser {
    private let b: [UInt8]
    private var offsetSize = 0
    private var referenceSize = 0
    private var objectCount = 0
    private var tableStart = 0
    private var budget: PropertyListBudget
    private var open: [Bool] = []

    init(_ bytes: [UInt8], budget: PropertyListBudget = PropertyListBudget()) {
        b = bytes
        self.budget = budget
    }

    mutating func parse() throws(PropertyListSyntaxError) -> PlistValue {
        guard b.count >= 8 + 32 else { throw PropertyListSyntaxError("binary property list: \(b.count) bytes is too short") }
        guard b[6] == UInt8(ascii: "0"), b[7] == UInt8(ascii: "0") else {
            throw PropertyListSyntaxError("binary property list: version \"\(String(decoding: b[6..<8], as: UTF8.self))\" is not 00")
        }
        let trailer = b.count - 32
        offsetSize = Int(b[trailer + 6])
        referenceSize = Int(b[trailer + 7])
        let count = unsigned(at: trailer + 8, size: 8)
        let top = unsigned(at: trailer + 16, size: 8)
        let table = unsigned(at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw PropertyListSyntaxError("binary property list: trailer sizes \(offsetSize)/\(referenceSize) out of range")
        }
        guard count >= 1, count <= UInt64(b.count), top < count, table >= 8, table < UInt64(trailer),
            count * UInt64(offsetSize) <= UInt64(trailer) - table
        else {
            throw PropertyListSyntaxError("binary property list: trailer (objects \(count), top \(top), table at \(table)) does not fit the file")
        }
        objectCount = Int(count)
        tableStart = Int(table)
        open = Array(repeating: false, count: objectCount)
        return try object(Int(top), depth: 0)
    }

    private mutating func object(_ ref: Int, depth: Int) throws(PropertyListSyntaxError) -> PlistValue {
        guard ref < objectCount else { throw fault("object reference \(ref) out of range", at: nil) }
        guard depth <= PropertyListReader.maximumDepth else {
            throw fault("nested deeper than \(PropertyListReader.maximumDepth) levels", at: nil)
        }
        let raw = unsigned(at: tableStart + ref * offsetSize, size: offsetSize)
        guard raw >= 8, raw < UInt64(tableStart) else { throw fault("object \(ref) has offset \(raw) outside the objects", at: nil) }
        let at = Int(raw)
        if let refusal = budget.chargeValue() { throw fault(refusal, at: at) }
        let marker = b[at]
        let low = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            default: throw fault("null or fill object (marker 0x\(String(marker, radix: 16))) is not a plist value", at: at)
            }
        case 0x1:
            return .integer(try integer(at: at))
        case 0x2:
            guard low == 2 || low == 3 else { throw fault("real of \(1 << low) bytes", at: at) }
            try need(at + 1, 1 << low, at)
            let bits = unsigned(at: at + 1, size: 1 << low)
            return .real(low == 2 ? Double(Float(bitPattern: UInt32(bits))) : Double(bitPattern: bits))
        case 0x3:
            guard marker == 0x33 else { throw fault("unknown marker 0x\(String(marker, radix: 16))", at: at) }
            try need(at + 1, 8, at)
            return .date(PlistDate(secondsSinceReferenceDate: Double(bitPattern: unsigned(at: at + 1, size: 8))))
        case 0x4:
            let (n, start) = try length(low, at: at)
            try need(start, n, at)
            if let refusal = budget.chargeBytes(n) { throw fault(refusal, at: at) }
            return .data(Array(b[start..<(start + n)]))
        case 0x5:
            let (n, start) = try length(low, at: at)
            try need(start, n, at)
            if let refusal = budget.chargeBytes(n) { throw fault(refusal, at: at) }
            let bytes = b[start..<(start + n)]
            guard bytes.allSatisfy({ $0 < 0x80 }) else { throw fault("ASCII string holds a byte over 0x7F", at: at) }
            return .string(String(decoding: bytes, as: UTF8.self))
        case 0x6:
            let (n, start) = try length(low, at: at)
            guard n <= (b.count - start) / 2 else { throw fault("UTF-16 string of \(n) units runs past the objects", at: at) }
            try need(start, n * 2, at)
            // Charged as the most UTF-8 its units can make.
            if let refusal = budget.chargeBytes(n * 3) { throw fault(refusal, at: at) }
            var units: [UInt16] = []
            units.reserveCapacity(n)
            for k in 0..<n { units.append(UInt16(b[start + 2 * k]) << 8 | UInt16(b[start + 2 * k + 1])) }
            guard let s = String(validating: units, as: UTF16.self) else { throw fault("UTF-16 string is not valid UTF-16", at: at) }
            return .string(s)
        case 0x8:
            var error = fault("holds a keyed-archiver UID, which is not a property-list value", at: at)
            error.unsupportedValue = true
            throw error
        case 0xA, 0xD:
            let (n, start) = try length(low, at: at)
            let refs = marker >> 4 == 0xD ? 2 * n : n
            guard refs <= (tableStart - start) / referenceSize else { throw fault("collection of \(n) runs past the objects", at: at) }
            guard !open[ref] else { throw fault("object \(ref) contains itself", at: at) }
            open[ref] = true
            defer { open[ref] = false }
            func child(_ k: Int) -> Int { Int(clamping: unsigned(at: start + k * referenceSize, size: referenceSize)) }
            if marker >> 4 == 0xA {
                var out: [PlistValue] = []
                out.reserveCapacity(n)
                for k in 0..<n { out.append(try object(child(k), depth: depth + 1)) }
                return .array(out)
            }
            var out: [String: PlistValue] = [:]
            out.reserveCapacity(n)
            for k in 0..<n {
                guard case .string(let key) = try object(child(k), depth: depth + 1) else {
                    throw fault("dictionary key \(k) is not a string", at: at)
                }
                out[key] = try object(child(n + k), depth: depth + 1)
            }
            return .dictionary(out)
        default:
            throw fault("unknown or unsupported object marker 0x\(String(marker, radix: 16))", at: at)
        }
    }

    /// An integer object: 1, 2 and 4 bytes unsigned, 8 bytes signed, 16 bytes only when its
    /// value fits a signed 64-bit integer.
    private func integer(at offset: Int) throws(PropertyListSyntaxError) -> Int64 {
        let low = Int(b[offset] & 0x0F)
        guard low <= 4 else { throw fault("integer of \(1 << low) bytes", at: offset) }
        let size = 1 << low
        try need(offset + 1, size, offset)
        if size == 16 {
            guard unsigned(at: offset + 1, size: 8) == 0, let v = Int64(exactly: unsigned(at: offset + 9, size: 8)) else {
                throw fault("integer out of the signed 64-bit range", at: offset)
            }
            return v
        }
        let v = unsigned(at: offset + 1, size: size)
        return size == 8 ? Int64(bitPattern: v) : Int64(v)
    }

    /// A collection's or string's count: in the marker, or in an integer object after it.
    private func length(_ low: Int, at offset: Int) throws(PropertyListSyntaxError) -> (Int, Int) {
        if low != 0x0F { return (low, offset + 1) }
        try need(offset + 1, 1, offset)
        guard b[offset + 1] >> 4 == 0x1 else { throw fault("length is not an integer", at: offset) }
        let n = try integer(at: offset + 1)
        guard n >= 0, n < Int64(b.count) else { throw fault("length \(n) out of range", at: offset) }
        return (Int(n), offset + 2 + (1 << Int(b[offset + 1] & 0x0F)))
    }

    private func need(_ start: Int, _ count: Int, _ object: Int) throws(PropertyListSyntaxError) {
        guard count >= 0, start <= tableStart, count <= tableStart - start else {
            throw fault("object runs past the end of the objects", at: object)
        }
    }

    private func unsigned(at offset: Int, size: Int) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<size { v = v << 8 | UInt64(b[offset + k]) }
        return v
    }

    private func fault(_ message: String, at offset: Int?) -> PropertyListSyntaxError {
        PropertyListSyntaxError("binary property list" + (offset.map { " at byte \($0)" } ?? "") + ": " + message)
    }
}
