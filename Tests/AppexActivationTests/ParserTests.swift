import AppexActivation
import Testing

/// Byte offset of the first occurrence of `needle` in `text` (for error-location expectations).
private func offset(of needle: String, in text: String) -> Int {
    guard let r = text.range(of: needle) else { return -1 }
    return text.utf8.distance(from: text.startIndex, to: r.lowerBound)
}

private func compileError(_ text: String) -> RuleError? {
    do {
        _ = try ActivationRule.compile(predicate: text)
        return nil
    } catch {
        return error
    }
}

private let image = ActivationItems(extensionItems: [ActivationItem(attachments: [ActivationAttachment(registeredTypeIdentifiers: ["public.jpeg"])])])

private func eval(_ text: String, _ items: ActivationItems = image) throws -> Bool {
    try ActivationRule.compile(predicate: text).evaluate(items).isActivated
}

@Suite("ActivationPredicate syntax")
struct ParserTests {
    @Test func allComparisonSpellings() throws {
        let cases: [(String, Bool)] = [
            ("== 1", true), ("= 1", true), ("!= 1", false), ("<> 1", false), ("< 2", true), ("<= 1", true),
            ("=< 1", true), ("> 0", true), (">= 1", true), ("=> 2", false), ("> 1", false), ("< 1", false),
        ]
        for (tail, expected) in cases {
            #expect(try eval("extensionItems.@count \(tail)") == expected, "\(tail)")
        }
    }

    @Test func keywordsAreCaseInsensitiveAndSymbolsWork() throws {
        #expect(try eval("truepredicate"))
        #expect(try !eval("FalsePredicate"))
        #expect(try eval("TRUEPREDICATE and not FALSEPREDICATE"))
        #expect(try eval("TRUEPREDICATE && !FALSEPREDICATE"))
        #expect(try eval("FALSEPREDICATE || TRUEPREDICATE"))
        #expect(try eval("FALSEPREDICATE Or TRUEPREDICATE"))
        #expect(try eval("subquery(extensionItems, $i, any $i.attachments.registeredTypeIdentifiers uti-conforms-to 'public.image').@COUNT == 1"))
    }

    @Test func aggregatesOverCollections() throws {
        let mixed = ActivationItems(extensionItems: [
            ActivationItem(attachments: [
                ActivationAttachment(registeredTypeIdentifiers: ["public.jpeg", "public.file-url"]),
                ActivationAttachment(registeredTypeIdentifiers: ["public.png"]),
            ])
        ])
        let path = "extensionItems.attachments.registeredTypeIdentifiers"
        #expect(try eval("ANY \(path) UTI-CONFORMS-TO \"public.image\"", mixed))
        #expect(try eval("SOME \(path) UTI-CONFORMS-TO \"public.url\"", mixed))
        #expect(try !eval("ALL \(path) UTI-CONFORMS-TO \"public.image\"", mixed))
        #expect(try eval("ALL \(path) UTI-CONFORMS-TO \"public.data\"", mixed))
        #expect(try eval("NONE \(path) UTI-CONFORMS-TO \"public.movie\"", mixed))
        #expect(try !eval("NONE \(path) UTI-EQUALS \"public.png\"", mixed))
        #expect(try eval("ANY \(path) UTI-EQUALS \"PUBLIC.PNG\"", mixed), "UTIs compare case-insensitively")
        #expect(try !eval("ANY \(path) UTI-EQUALS \"public.image\"", mixed), "UTI-EQUALS does not follow conformance")
        #expect(try eval("ANY \(path) == \"public.png\"", mixed))
        // ALL over an empty collection holds; ANY does not.
        let empty = ActivationItems(extensionItems: [])
        #expect(try eval("ALL \(path) UTI-CONFORMS-TO \"public.image\"", empty))
        #expect(try !eval("ANY \(path) UTI-CONFORMS-TO \"public.image\"", empty))
    }

    @Test func stringsNumbersAndEscapes() throws {
        let text = ActivationItems(extensionItems: [ActivationItem(attachments: [], attributedContentText: "say \"hi\"\n", attributedTitle: "it's")])
        #expect(try eval(#"ANY extensionItems.attributedContentText == "say \"hi\"\n""#, text))
        #expect(try eval(#"ANY extensionItems.attributedTitle == 'it\'s'"#, text))
        #expect(try eval(#"ANY extensionItems.attributedTitle == "it\u0027s""#, text))
        #expect(try eval(#"ANY extensionItems.attributedTitle == "\x69t's""#, text))
        #expect(try eval("ANY extensionItems.attributedTitle != nil", text))
        #expect(try eval("NONE extensionItems.attributedTitle == NULL", text))
        #expect(
            try eval(
                "extensionItems.@count == 1.0 AND extensionItems.@count < 1.5e0 AND extensionItems.@count > -1 AND extensionItems.@count == 0x1", text
            ))
    }

    @Test func freeWhitespace() throws {
        #expect(try eval("\n\t SUBQUERY (\r\n extensionItems ,\t$x ,\n TRUEPREDICATE\n) . @count\t==\n1 \n"))
    }

    @Test func nestedSubqueryWithVariableCollections() throws {
        let text = """
            SUBQUERY(extensionItems, $item,
                SUBQUERY($item.attachments, $a,
                    SUBQUERY($a.registeredTypeIdentifiers, $t, $t UTI-CONFORMS-TO "public.image").@count > 0
                ).@count == $item.attachments.@count
            ).@count == 1
            """
        #expect(try eval(text))
    }

    // MARK: errors, with locations

    @Test func syntaxErrorsNameOffsetAndExpectation() throws {
        let cases: [(text: String, at: String?, offset: Int?, contains: String)] = [
            ("extensionItems.@count ==", nil, 24, "expected a value after =="),
            ("extensionItems.@count > 0 AND", nil, 29, "expected a comparison"),
            ("TRUEPREDICATE)", ")", nil, "expected AND, OR or the end"),
            ("(TRUEPREDICATE", nil, 14, "\")\" to close"),
            ("\"abc", nil, 0, "unterminated string"),
            ("extensionItems.@count # 1", "#", nil, "unexpected \"#\""),
            ("extensionItems.@count > 0 & TRUEPREDICATE", "&", nil, "expected \"&&\""),
            ("SUBQUERY(extensionItems, x, TRUEPREDICATE).@count > 0", "x,", nil, "$variable"),
            ("extensionItems.@sum > 1", "@sum", nil, "only @count"),
            (#"ANY extensionItems.attributedTitle == "\q""#, #"\q"#, nil, "unknown escape"),
            ("", nil, 0, "empty predicate"),
            ("extensionItems.@count 1", "1", nil, "comparison operator"),
        ]
        for c in cases {
            let error = try #require(compileError(c.text), "\(c.text) compiled")
            #expect(error.kind == .syntax || error.kind == .type, "\(c.text): \(error)")
            let want = c.offset ?? offset(of: c.at ?? "", in: c.text)
            #expect(error.location.offset == want, "\(c.text): \(error)")
            #expect(error.message.contains(c.contains), "\(c.text): \(error.message)")
        }
    }

    @Test func lineAndColumn() throws {
        let text = "TRUEPREDICATE\n  AND\n    )"
        let error = try #require(compileError(text))
        #expect(error.location.line == 3)
        #expect(error.location.column == 5)
        #expect(error.location.offset == 24)
    }

    @Test func unknownKeysAndUnboundVariablesFailAtCompileTime() throws {
        let typo = "SUBQUERY(extensionItems, $x, $x.attachmentz.@count > 0).@count > 0"
        let e1 = try #require(compileError(typo))
        #expect(e1.kind == .unknownKey)
        #expect(e1.code == "activation.unknown-key")
        #expect(e1.location.offset == offset(of: "attachmentz", in: typo))
        #expect(e1.message.contains("attachments"), "suggests the real keys")

        let e2 = try #require(compileError("extensionItem.@count > 0"))
        #expect(e2.kind == .unknownKey)
        #expect(e2.location.offset == 0)

        let unbound = "ANY $attachment.registeredTypeIdentifiers UTI-CONFORMS-TO \"public.url\""
        let e3 = try #require(compileError(unbound))
        #expect(e3.kind == .unboundVariable)
        #expect(e3.location.offset == 4)

        // Out of scope after its SUBQUERY closes.
        let scoped = "SUBQUERY(extensionItems, $i, TRUEPREDICATE).@count > 0 AND ANY $i.attachments.registeredTypeIdentifiers == \"x\""
        let e4 = try #require(compileError(scoped))
        #expect(e4.kind == .unboundVariable)
        #expect(e4.location.offset == offset(of: "$i.att", in: scoped))
    }

    @Test func typeErrors() throws {
        let cases: [(String, String)] = [
            ("extensionItems.attachments.registeredTypeIdentifiers UTI-CONFORMS-TO \"public.image\"", "ANY, ALL, NONE or SOME"),
            ("ANY extensionItems.@count > 1", "needs a collection"),
            ("extensionItems.@count UTI-CONFORMS-TO \"public.image\"", "type identifier string"),
            ("extensionItems.@count == \"1\"", "cannot compare"),
            ("extensionItems.attachments.@count > 1", "ambiguous"),
            ("SUBQUERY(extensionItems, $i, TRUEPREDICATE) == 1", "compare its .@count"),
            ("SUBQUERY(extensionItems, $i, $i == 1).@count == 1", "cannot compare"),
        ]
        for (text, fragment) in cases {
            let error = try #require(compileError(text), "\(text) compiled")
            #expect(error.kind == .type, "\(text): \(error)")
            #expect(error.message.contains(fragment), "\(text): \(error.message)")
        }
    }

    @Test func limits() throws {
        let long = "TRUEPREDICATE" + String(repeating: " ", count: PredicateLimits.maximumLength)
        #expect(compileError(long)?.kind == .limit)

        let deep = String(repeating: "(", count: 200) + "TRUEPREDICATE" + String(repeating: ")", count: 200)
        #expect(compileError(deep)?.kind == .limit)

        let nots = String(repeating: "NOT ", count: 200) + "TRUEPREDICATE"
        #expect(compileError(nots)?.kind == .limit)

        let chain = Array(repeating: "TRUEPREDICATE", count: 200).joined(separator: " OR ")
        #expect(compileError(chain)?.kind == .limit)

        var nested = "TRUEPREDICATE"
        for _ in 0..<6 { nested = "SUBQUERY(extensionItems, $v, \(nested)).@count > 0" }
        #expect(compileError(nested)?.kind == .limit)

        // Within limits: a corpus-sized chain compiles.
        let ok = Array(repeating: "TRUEPREDICATE", count: 40).joined(separator: " OR ")
        #expect(compileError(ok) == nil)
    }

    @Test func unknownTypeLiteralIsAWarning() {
        let (rule, findings) = ActivationRule.compile(
            .predicate("ANY extensionItems.attachments.registeredTypeIdentifiers UTI-CONFORMS-TO \"public.jpg\""))
        #expect(rule != nil)
        #expect(findings.map(\.code) == ["activation.unknown-type"])
    }

    @Test func syntaxErrorBecomesLocatedFinding() {
        let (rule, findings) = ActivationRule.compile(.predicate("SUBQUERY(extensionItems, $x, ).@count > 0"))
        #expect(rule == nil)
        #expect(findings.count == 1)
        #expect(findings.first?.code == "activation.syntax")
        #expect(findings.first?.severity == .error)
        #expect(findings.first?.message.contains("offset 29") == true)
    }

    @Test func printsCanonicalForm() throws {
        let rule = try ActivationRule.compile(
            predicate:
                "subquery ( extensionItems , $e , any $e.attachments.registeredTypeIdentifiers uti-conforms-to 'public.url' || !(TRUEPREDICATE && FALSEPREDICATE) ).@count => 1"
        )
        #expect(
            rule.printed
                == "SUBQUERY(extensionItems, $e, ANY $e.attachments.registeredTypeIdentifiers UTI-CONFORMS-TO \"public.url\" OR NOT (TRUEPREDICATE AND FALSEPREDICATE)).@count >= 1"
        )
    }

    @Test func reasonsNameTheFailingPart() throws {
        let rule = try ActivationRule.compile(predicate: "SUBQUERY(extensionItems, $i, TRUEPREDICATE).@count == 1")
        let result = try rule.evaluate(ActivationItems(extensionItems: []))
        #expect(result.reason == "SUBQUERY(extensionItems, $i, TRUEPREDICATE).@count is 0, the rule requires == 1")
    }
}
