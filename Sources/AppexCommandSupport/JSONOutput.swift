import Foundation

/// Prints JSON the same way everywhere: sorted keys, so output diffs cleanly.
package enum JSONOutput {
    package static func print(_ object: Any) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        Swift.print(String(decoding: data, as: UTF8.self))
    }
}

extension Optional {
    /// `NSNull` for nil, so JSON shows the key with `null` instead of dropping it.
    package var jsonOrNull: Any { self.map { $0 as Any } ?? NSNull() }
}
