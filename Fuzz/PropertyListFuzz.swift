// libFuzzer harness for the property-list readers (binary, XML, OpenStep). Built with the
// reader's sources and FuzzEntry.swift into one module by `make fuzz-plist` (see
// Docs/bundles.md, "Limits on a property list"). Any input must read to a value that fits the
// budget it was read with, or fail with a message; a crash, a trap, a sanitizer report or a
// run past libFuzzer's memory limit is a bug.

/// A smaller budget than appexd's, so an input that expands is refused in a few milliseconds
/// and the fuzzer stays fast; the accounting is the same.
private let budget = PropertyListBudget(maximumValues: 1 << 14, maximumBytes: 1 << 20)

/// Inputs to start from: a plain dictionary in each format, and the expanding shapes (one
/// string or data referenced from several levels of arrays, and a chain of arrays each
/// holding the next twice), written with the tests' `BinaryPlistBuilder`.
func fuzzSeeds() -> [[UInt8]] {
    var b = BinaryPlistBuilder()
    let string = b.add(.ascii(String(repeating: "x", count: 1024)))
    let data = b.add(.data(Array(repeating: 7, count: 1024)))
    let wide = b.add(.utf16(Array(repeating: 0x4E2D, count: 512)))
    var expanding: [[UInt8]] = []
    for leaf in [string, data, wide] {
        let fan = b.add(.array(Array(repeating: leaf, count: 100)))
        let top = b.add(.array(Array(repeating: fan, count: 100)))
        expanding.append(b.bytes(top: top))
    }
    var chain = b.add(.bool(true))
    for _ in 0..<30 { chain = b.add(.array([chain, chain])) }
    expanding.append(b.bytes(top: chain))
    let key = b.add(.ascii("k"))
    let dictionary = b.add(.dictionary([(key, string)]))
    return [
        Array("<plist><dict><key>k</key><array><string>v</string><integer>1</integer><true/></array></dict></plist>".utf8),
        Array("{ k = ( v, <0fbd>, \"q\\n\" ); }".utf8),
        b.bytes(top: dictionary),
    ] + expanding
}

func fuzzInput(_ bytes: [UInt8]) {
    do {
        let value = try PropertyListReader.parse(bytes, budget: budget)
        let cost = PropertyListBudget.cost(of: value)
        precondition(
            cost.values <= budget.maximumValues && cost.bytes <= budget.maximumBytes,
            "a value past the budget was accepted: \(cost)")
    } catch {
        precondition(!error.message.isEmpty)
    }
}
