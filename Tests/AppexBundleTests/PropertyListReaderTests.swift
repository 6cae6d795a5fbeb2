import AppexBundle
import AppexTestSupport
import Foundation
import Testing

/// Appex's own property-list reader against Foundation's (`PropertyListSerialization`, which
/// Appex used before `appex run` stopped linking Foundation): the same files accepted and
/// refused, with the same values; and the attacks a reader of hostile files must survive.
@Suite struct PropertyListReaderTests {
    /// Foundation's untyped result, typed the way the reader types it.
    static func typed(_ value: Any) -> PlistValue? {
        switch value {
        case let b as Bool where type(of: value) == Bool.self: return .bool(b)
        case let s as String: return .string(s)
        case let n as NSNumber:
            let kind = String(cString: n.objCType)
            if kind == "c" || kind == "B" { return .bool(n.boolValue) }
            if kind == "d" || kind == "f" { return .real(n.doubleValue) }
            return .integer(n.int64Value)
        case let d as Date: return .date(PlistDate(secondsSinceReferenceDate: d.timeIntervalSinceReferenceDate))
        case let d as Data: return .data(Array(d))
        case let a as [Any]:
            var out: [PlistValue] = []
            for e in a {
                guard let v = typed(e) else { return nil }
                out.append(v)
            }
            return .array(out)
        case let d as [String: Any]:
            var out: [String: PlistValue] = [:]
            for (k, e) in d {
                guard let v = typed(e) else { return nil }
                out[k] = v
            }
            return .dictionary(out)
        default: return nil
        }
    }

    static func foundation(_ bytes: [UInt8]) -> PlistValue? {
        guard let object = try? PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil) else { return nil }
        return typed(object)
    }

    static func ours(_ bytes: [UInt8]) -> PlistValue? { try? PropertyListReader.parse(bytes) }

    static func expectSame(_ bytes: [UInt8], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = foundation(bytes)
        let got = ours(bytes)
        #expect(
            got == expected, "\(what): Foundation read \(expected.map { "\($0)" } ?? "nothing"), Appex \(got.map { "\($0)" } ?? "nothing")",
            sourceLocation: sourceLocation)
    }

    static func files(in directory: ManifestDirectory, _ subdirectories: [String]) -> [String] {
        subdirectories.flatMap { sub in directory.files(in: sub).map { directory.path($0) } }
    }

    @Test func everyFixtureReadsAsFoundationReadsIt() throws {
        let paths = Self.files(in: Fixtures.directory, ["plists", "entitlements", "malformed"])
        #expect(paths.count >= 20)
        for path in paths {
            Self.expectSame(Array(try Data(contentsOf: URL(fileURLWithPath: path))), path)
        }
    }

    @Test(.corpus) func everyCorpusFileReadsAsFoundationReadsIt() throws {
        let paths = Self.files(in: Corpus.directory, ["plists", "entitlements"])
        #expect(paths.count >= 46)
        for path in paths {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(Self.ours(bytes) != nil, "\(path) refused")
            Self.expectSame(bytes, path)
        }
    }

    /// Random trees written by Foundation in both formats read back equal.
    @Test func randomTreesWrittenByFoundationReadBack() throws {
        var rng = SeededRandom(seed: 0x5EED_0F_A99E)
        for round in 0..<300 {
            let tree = PlistValue.dictionary(Self.randomDictionary(&rng, depth: 0))
            let object = Self.foundationObject(tree)
            for format in [PropertyListSerialization.PropertyListFormat.xml, .binary] {
                let data = try PropertyListSerialization.data(fromPropertyList: object, format: format, options: 0)
                let back = try PropertyListReader.parse(Array(data))
                #expect(back == Self.foundation(Array(data)), "round \(round), \(format)")
                #expect(back == tree, "round \(round), \(format)")
            }
        }
    }

    @Test func xmlCornersMatchFoundation() {
        let cases: [(String, String)] = [
            ("entities", "<string>a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos; &#65;&#x42;&#x1F600;</string>"),
            ("CDATA", "<string><![CDATA[<not> & markup]]>!</string>"),
            ("comment inside text", "<string>a<!-- c -->b</string>"),
            ("empty forms", "<array><string/><string></string><dict/><array/><true></true><false/></array>"),
            (
                "integers",
                "<array><integer> 42</integer><integer>-7</integer><integer>+3</integer><integer>0x1F</integer><integer>-0x10</integer><integer>-9223372036854775808</integer></array>"
            ),
            ("integer with a trailing space", "<integer>42 </integer>"),
            ("empty integer", "<integer/>"),
            ("reals", "<array><real>1.5</real><real>-0.25e3</real><real>\t2</real><real>.5</real><real>INF</real><real>-infinity</real></array>"),
            ("hexadecimal real", "<real>0x1p3</real>"),
            ("true with content", "<true> </true>"),
            ("date with spaces", "<date> 2024-02-29T23:59:58Z </date>"),
            ("comment between elements", "<dict> <!-- c --> <key>a</key><!-- d --><string>x</string></dict>"),
            ("empty plist", ""),
            ("date", "<date>2024-02-29T23:59:58Z</date>"),
            ("old date", "<date>1969-07-20T20:17:40Z</date>"),
            ("data", "<data>\n\tAAEC\n\tA/8=\n</data>"),
            ("duplicate key", "<dict><key>k</key><string>1</string><key>k</key><string>2</string></dict>"),
            ("unicode", "<dict><key>ключ</key><string>值 ✓</string></dict>"),
            ("key without value", "<dict><key>k</key></dict>"),
            ("value without key", "<dict><string>v</string></dict>"),
            ("unknown element", "<dict><key>k</key><number>1</number></dict>"),
            ("unclosed", "<dict><key>k</key><string>v</dict>"),
            ("bad integer", "<integer>12abc</integer>"),
            ("bad entity", "<string>&nope;</string>"),
            ("bare ampersand", "<string>a & b</string>"),
            ("element in string", "<string>a<b/>c</string>"),
            ("trailing junk", "<string>x</string> junk"),
        ]
        for (name, body) in cases {
            let doc = """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">\(body)</plist>
                """
            Self.expectSame(Array(doc.utf8), name)
        }
    }

    @Test func openStepTextMatchesFoundation() {
        let cases: [(String, String)] = [
            ("dictionary", "{ CFBundleIdentifier = com.example.share; Name = \"Two words\"; List = (a, \"b c\", d,); Data = <0fbd 7799>; }"),
            ("nested with comments", "// header\n{ /* block */ NSExtension = { NSExtensionPointIdentifier = \"com.apple.share-services\"; }; }"),
            ("escapes", "{ s = \"tab\\tnl\\nq\\\"\\\\ \\U00e9\"; }"),
            ("strings file", "\"a\" = \"1\";\nb = 2;\n"),
            ("unclosed", "{ a = b; "),
            ("missing semicolon", "{ a = b }"),
            ("odd hex", "{ d = <abc>; }"),
            ("white space only", "  \n "),
            ("empty", ""),
            ("trailing junk", "{ a = b; } junk"),
        ]
        for (name, text) in cases { Self.expectSame(Array(text.utf8), name) }
    }

    @Test func faultsNameTheLine() throws {
        let doc = "<?xml version=\"1.0\"?>\n<plist version=\"1.0\">\n<dict>\n\t<key>A</key>\n\t<strin>x</strin>\n</dict>\n</plist>\n"
        #expect(throws: PropertyListSyntaxError("line 5: unknown element <strin>")) { try PropertyListReader.parse(Array(doc.utf8)) }
    }

    // MARK: Hostile files

    @Test func deepNestingIsRefusedNotRecursedInto() {
        let depth = 100_000
        let xml = "<plist>" + String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth) + "</plist>"
        #expect(throws: PropertyListSyntaxError.self) { try PropertyListReader.parse(Array(xml.utf8)) }
        let text = String(repeating: "(", count: depth) + String(repeating: ")", count: depth)
        #expect(throws: PropertyListSyntaxError.self) { try PropertyListReader.parse(Array(text.utf8)) }
    }

    /// A binary plist by hand: objects, then the offset table and trailer for them.
    static func binary(_ objects: [[UInt8]], top: Int = 0) -> [UInt8] {
        var out = Array("bplist00".utf8)
        var offsets: [Int] = []
        for o in objects {
            offsets.append(out.count)
            out += o
        }
        let table = out.count
        for o in offsets { out += [UInt8(o >> 8), UInt8(o & 0xFF)] }
        out += [0, 0, 0, 0, 0, 0, 2, 1]
        for v in [objects.count, top, table] { out += (0..<8).reversed().map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }
        return out
    }

    @Test func binaryObjectsThatContainThemselvesAreRefused() {
        // An array whose one element is itself, and a dictionary whose value is itself.
        #expect(throws: PropertyListSyntaxError.self) { try PropertyListReader.parse(Self.binary([[0xA1, 0]])) }
        #expect(throws: PropertyListSyntaxError.self) { try PropertyListReader.parse(Self.binary([[0xD1, 1, 0], [0x51, 0x6B]])) }
    }

    @Test func sharedObjectsMayNotExpandWithoutBound() {
        // 40 arrays, each holding the next one twice: 2^40 values from a few hundred bytes.
        var objects: [[UInt8]] = (0..<40).map { [0xA2, UInt8($0 + 1), UInt8($0 + 1)] }
        objects.append([0x09])
        let refusal = ExpandingPlistTests.refusal(Self.binary(objects))
        #expect(refusal?.hasSuffix("expands past the limit of \(PropertyListReader.maximumValues) values (PropertyListReader.maximumValues)") == true)
        // Sharing within the bound is fine: a key used by many dictionaries.
        let shared = Self.binary([[0xA3, 1, 1, 1], [0xD1, 2, 3], [0x51, 0x6B], [0x08]])
        #expect(Self.ours(shared) == .array(Array(repeating: .dictionary(["k": .bool(false)]), count: 3)))
        #expect(Self.foundation(shared) == Self.ours(shared))
    }

    @Test func everyTruncationAndCorruptionOfABinaryPlistFailsCleanly() throws {
        let data = try PropertyListSerialization.data(
            fromPropertyList: ["NSExtension": ["NSExtensionPointIdentifier": "com.apple.share-services", "n": 7, "l": [1.5, true, "é"]]],
            format: .binary, options: 0)
        let bytes = Array(data)
        for n in 0..<bytes.count {
            let prefix = Array(bytes.prefix(n))
            if n < 6 {
                Self.expectSame(prefix, "first \(n) bytes")  // "bpl": an OpenStep string; "": an error
            } else {
                #expect(throws: PropertyListSyntaxError.self) { try PropertyListReader.parse(prefix) }
            }
        }
        // Every single byte set to each of a few values: a value or an error, never a crash.
        for k in 8..<bytes.count {
            for v: UInt8 in [0x00, 0x0F, 0x5F, 0x7F, 0xAF, 0xDF, 0xFF] {
                var b = bytes
                b[k] = v
                _ = Self.ours(b)
            }
        }
    }

    @Test func aKeyedArchiverUIDIsAnUnsupportedValue() throws {
        let path = NSTemporaryDirectory() + "appex-uid-\(getpid()).plist"
        defer { unlink(path) }
        try Data(Self.binary([[0xD1, 1, 2], [0x51, 0x6B], [0x80, 0x01]])).write(to: URL(fileURLWithPath: path))
        #expect(throws: PropertyListFileError.unsupportedValue(path: path)) { try PropertyListFile.readDictionary(at: path) }
    }

    // MARK: Random trees

    static func randomDictionary(_ rng: inout SeededRandom, depth: Int) -> [String: PlistValue] {
        var out: [String: PlistValue] = [:]
        for _ in 0..<Int(rng.next() % 6) { out[randomString(&rng)] = randomValue(&rng, depth: depth + 1) }
        return out
    }

    static func randomValue(_ rng: inout SeededRandom, depth: Int) -> PlistValue {
        switch rng.next() % (depth > 3 ? 6 : 8) {
        case 0: return .string(randomString(&rng))
        case 1:
            let r = rng.next()
            return .integer(r % 3 == 0 ? Int64(bitPattern: r) : Int64(r % 1000) - 500)
        case 2: return .real(Double(Int64(rng.next() % 100_000) - 50_000) / 64)
        case 3: return .bool(rng.next() % 2 == 0)
        case 4: return .date(PlistDate(secondsSinceReferenceDate: Double(Int64(rng.next() % 4_000_000_000) - 2_000_000_000)))
        case 5: return .data((0..<Int(rng.next() % 40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        case 6: return .array((0..<Int(rng.next() % 5)).map { _ in randomValue(&rng, depth: depth + 1) })
        default: return .dictionary(randomDictionary(&rng, depth: depth))
        }
    }

    static func randomString(_ rng: inout SeededRandom) -> String {
        let alphabet = Array("abcXYZ019 .-_$()<>&;\"'\t\néü✓中😀")
        return String((0..<Int(rng.next() % 12)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
    }

    static func foundationObject(_ v: PlistValue) -> Any {
        switch v {
        case .string(let s): s
        case .integer(let i): NSNumber(value: i)
        case .real(let d): NSNumber(value: d)
        case .bool(let b): b
        case .date(let d): Date(timeIntervalSinceReferenceDate: d.secondsSinceReferenceDate)
        case .data(let d): Data(d)
        case .array(let a): a.map(foundationObject)
        case .dictionary(let d): d.mapValues(foundationObject)
        }
    }
}
