import Foundation

/// Prints JSON the same way everywhere: sorted keys, so output diffs cleanly.
package enum JSONOutput {
    package static func print(_ object: Any) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        Swift.print(String(decoding: data, as: UTF8.self))
    }

    /// One object on one line, written at once to standard output (not buffered): for output
    /// that follows (`--follow`, events), whose reader sees each line as it comes.
    package static func writeLine(_ object: Any) throws {
        var data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        data.append(UInt8(ascii: "\n"))
        FileHandle.standardOutput.write(data)
    }
}

extension Optional {
    /// `NSNull` for nil, so JSON shows the key with `null` instead of dropping it.
    package var jsonOrNull: Any { self.map { $0 as Any } ?? NSNull() }
}
