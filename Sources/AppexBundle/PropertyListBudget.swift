/// What reading one property list may build, counted as each value is made: values, and
/// bytes (a slot per value, plus the bytes of each string and data, keys included).
///
/// A binary plist's shared objects are copied at every reference, and each copy is charged,
/// so a small file cannot describe a large tree. The text formats share nothing and are
/// bounded by their own length, but they are charged the same way: one bound for every
/// reader, so what appexd holds for a bundle does not depend on the format its author chose.
public struct PropertyListBudget: Sendable {
    /// Bytes a value costs before its payload: roughly its slot in an array or dictionary.
    public static let bytesPerValue = 16

    public let maximumValues: Int
    public let maximumBytes: Int
    public private(set) var values = 0
    public private(set) var bytes = 0

    public init(
        maximumValues: Int = PropertyListReader.maximumValues,
        maximumBytes: Int = PropertyListReader.maximumExpandedBytes
    ) {
        self.maximumValues = maximumValues
        self.maximumBytes = maximumBytes
    }

    /// Charges one value about to be made; returns the refusal when it does not fit, for the
    /// reader to place in the file.
    mutating func chargeValue() -> String? {
        values += 1
        guard values <= maximumValues else {
            return "expands past the limit of \(maximumValues) values (PropertyListReader.maximumValues)"
        }
        return chargeBytes(Self.bytesPerValue)
    }

    /// Charges `count` bytes of string or data, before they are copied out of the file.
    mutating func chargeBytes(_ count: Int) -> String? {
        guard count <= maximumBytes - bytes else {
            bytes = maximumBytes
            return "expands past the limit of \(maximumBytes) bytes (PropertyListReader.maximumExpandedBytes)"
        }
        bytes += count
        return nil
    }

    /// What `value` costs by the same count: at most what a reader charged to build it.
    /// Tests and the fuzzer check accepted files with it.
    public static func cost(of value: PlistValue) -> (values: Int, bytes: Int) {
        var values = 0
        var bytes = 0
        var pending = [value]
        while let v = pending.popLast() {
            values += 1
            bytes += bytesPerValue
            switch v {
            case .string(let s): bytes += s.utf8.count
            case .data(let d): bytes += d.count
            case .array(let a): pending += a
            case .dictionary(let d):
                for (k, x) in d {
                    values += 1
                    bytes += bytesPerValue + k.utf8.count
                    pending.append(x)
                }
            default: break
            }
        }
        return (values, bytes)
    }
}
