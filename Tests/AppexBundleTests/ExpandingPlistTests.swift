import AppexBundle
import AppexTestSupport
import Foundation
import Testing

/// Files that are small but describe a large tree (issue 30, finding 3): a binary plist whose
/// shared objects are copied at every reference, and text files near the size limit. Every
/// reader charges what it builds to one `PropertyListBudget`, and refuses past it, naming the
/// limit and where in the file.
@Suite struct ExpandingPlistTests {
    static let bytesLimit = "expands past the limit of \(PropertyListReader.maximumExpandedBytes) bytes (PropertyListReader.maximumExpandedBytes)"

    static func refusal(_ bytes: [UInt8], budget: PropertyListBudget = PropertyListBudget()) -> String? {
        do {
            _ = try PropertyListReader.parse(bytes, budget: budget)
            return nil
        } catch {
            return error.message
        }
    }

    /// The shape found: a 16 KiB string referenced from a few levels of arrays. A file of some
    /// kilobytes, well under the value limit, that expanded to gigabytes before.
    @Test func oneLargeStringReferencedAtManyLevelsIsRefused() throws {
        for (fanOut, levels) in [(4096, 1), (64, 2), (16, 4), (2, 17)] {
            let file = BinaryPlistBuilder.expandingInfoPlist(
                identifier: "com.example.big", executable: "big", extensionPoint: "com.apple.share-services",
                stringBytes: 16 << 10, fanOut: fanOut, levels: levels)
            #expect(file.count < 100 << 10)
            let message = try #require(Self.refusal(file), "\(fanOut)^\(levels) was read")
            #expect(message.hasPrefix("binary property list at byte "), "\(message)")
            #expect(message.hasSuffix(Self.bytesLimit), "\(message)")
            // Through the file reader, as `appex validate` and the installer read it.
            #expect(throws: PropertyListFileError.malformed(path: "Info.plist", reason: message)) {
                try PropertyListFile.parseDictionary(file, path: "Info.plist")
            }
        }
    }

    @Test func sharedDataKeysAndUTF16StringsAreChargedAtEveryReference() throws {
        var b = BinaryPlistBuilder()
        let data = b.add(.data(Array(repeating: 7, count: 1 << 16)))
        let wide = b.add(.utf16(Array(repeating: 0x4E2D, count: 1 << 15)))
        let longKey = b.add(.ascii(String(repeating: "k", count: 1 << 16)))
        let dataArray = b.add(.array(Array(repeating: data, count: 200)))
        let wideArray = b.add(.array(Array(repeating: wide, count: 200)))
        // Dictionaries that share one long key: each copy of it is charged too.
        let dict = b.add(.dictionary([(longKey, b.add(.bool(true)))]))
        let keyArray = b.add(.array(Array(repeating: dict, count: 200)))
        for top in [dataArray, wideArray, keyArray] {
            let message = try #require(Self.refusal(b.bytes(top: top)))
            #expect(message.hasSuffix(Self.bytesLimit), "\(message)")
        }
    }

    @Test func theValueLimitNamesItselfToo() throws {
        var b = BinaryPlistBuilder()
        let leaf = b.add(.bool(true))
        var shared = leaf
        for _ in 0..<20 { shared = b.add(.array([shared, shared])) }
        let message = try #require(Self.refusal(b.bytes(top: shared)))
        #expect(
            message.hasSuffix("expands past the limit of \(PropertyListReader.maximumValues) values (PropertyListReader.maximumValues)"),
            "\(message)")
    }

    /// XML and OpenStep share nothing, but the same budget bounds them, and names the line.
    @Test func textFormatsTakeTheSameBudget() throws {
        let big = String(repeating: "y", count: PropertyListReader.maximumExpandedBytes / 2)
        let xml = "<plist><array>\n<string>\(big)</string>\n<string>\(big)</string>\n<string>\(big)</string>\n</array></plist>"
        // The second string passes the limit, with the values before it.
        #expect(Self.refusal(Array(xml.utf8)) == "line 3: " + Self.bytesLimit)
        let openStep = "(\n\(big),\n\(big),\n\"\(big)\"\n)"
        #expect(Self.refusal(Array(openStep.utf8)) == "line 3: " + Self.bytesLimit + " (OpenStep-format property list)")
        let data = "<plist><array><data>\(Data(Array(repeating: UInt8(1), count: 1 << 20)).base64EncodedString())</data></array></plist>"
        let small = PropertyListBudget(maximumBytes: 1 << 19)
        #expect(
            Self.refusal(Array(data.utf8), budget: small)?.hasSuffix(
                "expands past the limit of \(1 << 19) bytes (PropertyListReader.maximumExpandedBytes)") == true)
        let values = "<plist><array>" + String(repeating: "<true/>", count: PropertyListReader.maximumValues) + "</array></plist>"
        #expect(Self.refusal(Array(values.utf8))?.hasSuffix("(PropertyListReader.maximumValues)") == true)
    }

    /// A file that shares nothing and fits the file-size limit is never refused for its bytes.
    @Test func aLargeFileThatSharesNothingIsRead() throws {
        let chunk = String(repeating: "z", count: 1 << 16)
        let count = PropertyListFile.maximumSize / (1 << 16) - 1
        let xml = "<plist><array>" + String(repeating: "<string>\(chunk)</string>", count: count) + "</array></plist>"
        #expect(xml.utf8.count <= PropertyListFile.maximumSize)
        #expect(Self.refusal(Array(xml.utf8)) == nil)
    }

    // MARK: Property: what is accepted fits the budget; what is refused for it does not

    /// Random acyclic binary plists in which every object may be shared by any later one:
    /// expansions from none to exponential. Each is read with a small budget and again with a
    /// budget many times larger. Accepted files cost no more than their budget; a file refused
    /// for its budget costs more (or is refused by the larger one too).
    @Test func acceptedTreesFitTheirBudgetAndRefusedOnesDoNot() throws {
        var rng = SeededRandom(seed: 0x3017_b0d6)
        let small = PropertyListBudget(maximumValues: 4096, maximumBytes: 64 << 10)
        let large = PropertyListBudget(maximumValues: 1 << 17, maximumBytes: 4 << 20)
        var refused = 0, accepted = 0
        for round in 0..<300 {
            let file = Self.randomSharedPlist(&rng)
            let smallResult = Result { () throws(PropertyListSyntaxError) in try PropertyListReader.parse(file, budget: small) }
            let largeResult = Result { () throws(PropertyListSyntaxError) in try PropertyListReader.parse(file, budget: large) }
            switch (smallResult, largeResult) {
            case (.success(let value), _):
                accepted += 1
                let cost = PropertyListBudget.cost(of: value)
                #expect(cost.values <= small.maximumValues && cost.bytes <= small.maximumBytes, "round \(round)")
                #expect(largeResult.map { $0 == value } == .success(true), "round \(round)")
            case (.failure(let error), .success(let value)):
                refused += 1
                #expect(error.message.contains("expands past the limit"), "round \(round): \(error)")
                let cost = PropertyListBudget.cost(of: value)
                #expect(cost.values > small.maximumValues || cost.bytes > small.maximumBytes, "round \(round): \(cost)")
            case (.failure(let s), .failure(let l)):
                refused += 1
                #expect(s.message.contains("expands past the limit") && l.message.contains("expands past the limit"), "round \(round): \(s), \(l)")
            }
        }
        // Both outcomes occur, or the property says little.
        #expect(refused > 30 && accepted > 30, "refused \(refused), accepted \(accepted)")
    }

    /// Objects built bottom-up, each collection referring only to earlier objects; dictionary
    /// keys distinct within a dictionary, so what is charged is exactly what is built.
    static func randomSharedPlist(_ rng: inout SeededRandom) -> [UInt8] {
        var b = BinaryPlistBuilder()
        let keys = (0..<6).map { b.add(.ascii("key\($0)" + String(repeating: "k", count: Int(rng.next() % 40)))) }
        var pool = [b.add(.bool(true))]
        for _ in 0..<Int(4 + rng.next() % 24) {
            let object: BinaryPlistBuilder.Object
            switch rng.next() % 5 {
            case 0: object = .ascii(String(repeating: "s", count: Int(rng.next() % (rng.next() % 3 == 0 ? 20_000 : 40))))
            case 1: object = .data(Array(repeating: 1, count: Int(rng.next() % 3000)))
            case 2:
                let n = Int(rng.next() % 4)
                object = .dictionary((0..<n).map { (keys[$0], pool[Int(rng.next() % UInt64(pool.count))]) })
            default:
                // Mostly the newest objects: sharing that compounds level by level.
                let recent = UInt64(min(pool.count, 4))
                object = .array((0..<Int(rng.next() % 9)).map { _ in pool[pool.count - 1 - Int(rng.next() % recent)] })
            }
            pool.append(b.add(object))
        }
        let top = b.add(.array(Array(pool.suffix(3))))
        return b.bytes(top: top)
    }
}
