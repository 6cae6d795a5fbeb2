import AppexActivation
import PropertyBased
import Testing

/// Deterministic generator so one `Int` seed from PropertyBased reproduces a whole predicate.
struct SplitMix {
    var state: UInt64
    init(_ seed: Int) { state = UInt64(bitPattern: Int64(seed)) &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func int(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
    mutating func pick<T>(_ xs: [T]) -> T { xs[int(xs.count)] }
    mutating func chance(_ p: Double) -> Bool { Double(next() % 10_000) / 10_000 < p }
}

/// Builds well-typed random predicates over the item schema.
struct PredicateGenerator {
    enum Bound { case item, attachment, type }
    var rng: SplitMix
    var counter = 0
    var subqueries = 0

    static let utis = [
        "public.image", "public.jpeg", "public.url", "public.file-url", "public.data", "public.content",
        "public.text", "com.adobe.pdf", "public.movie", "com.example.custom",
    ]
    static let strings = ["", "a", "say \"hi\"", "back\\slash", "line\nbreak", "tab\tx", "é ü", "it's", "\u{1}"]

    mutating func predicate(_ depth: Int, _ scope: [(String, Bound)]) -> ActivationPredicate {
        if depth <= 0 || rng.chance(0.3) { return leaf(depth, scope) }
        switch rng.int(4) {
        case 0: return .not(predicate(depth - 1, scope))
        case 1: return .and(predicate(depth - 1, scope), predicate(depth - 1, scope))
        case 2: return .or(predicate(depth - 1, scope), predicate(depth - 1, scope))
        default: return leaf(depth, scope)
        }
    }

    mutating func leaf(_ depth: Int, _ scope: [(String, Bound)]) -> ActivationPredicate {
        switch rng.int(5) {
        case 0: return .constant(rng.chance(0.5))
        case 1, 2:
            let op = rng.pick([ComparisonOperator.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual])
            let rhs: RuleExpression =
                rng.chance(0.7) ? .number(rng.chance(0.8) ? Double(rng.int(12)) : Double(rng.int(40)) / 4 - 2) : count(depth, scope)
            return .comparison(RuleComparison(nil, count(depth, scope), op, rhs))
        case 3:
            let op = rng.pick([ComparisonOperator.utiConformsTo, .utiEquals])
            let uti = RuleExpression.string(rng.pick(Self.utis))
            if let t = scope.last(where: { $0.1 == .type }), rng.chance(0.5) {
                return .comparison(RuleComparison(nil, .keyPath(variable: t.0, keys: []), op, uti))
            }
            return .comparison(RuleComparison(rng.pick(Aggregate.allCases), typePath(scope), op, uti))
        default:
            let key = rng.pick(["attributedContentText", "attributedTitle"])
            let path: RuleExpression
            if let item = scope.last(where: { $0.1 == .item }), rng.chance(0.5) {
                // A scalar string: compare without a quantifier.
                path = .keyPath(variable: item.0, keys: [key])
                return .comparison(
                    RuleComparison(nil, path, rng.pick([.equal, .notEqual]), rng.chance(0.3) ? .null : .string(rng.pick(Self.strings))))
            }
            path = .keyPath(variable: nil, keys: ["extensionItems", key])
            return .comparison(
                RuleComparison(
                    rng.pick(Aggregate.allCases), path, rng.pick([.equal, .notEqual, .less, .greaterOrEqual]), .string(rng.pick(Self.strings))))
        }
    }

    mutating func typePath(_ scope: [(String, Bound)]) -> RuleExpression {
        var options: [RuleExpression] = [.keyPath(variable: nil, keys: ["extensionItems", "attachments", "registeredTypeIdentifiers"])]
        for (name, bound) in scope {
            switch bound {
            case .item: options.append(.keyPath(variable: name, keys: ["attachments", "registeredTypeIdentifiers"]))
            case .attachment: options.append(.keyPath(variable: name, keys: ["registeredTypeIdentifiers"]))
            case .type: break
            }
        }
        return rng.pick(options)
    }

    mutating func count(_ depth: Int, _ scope: [(String, Bound)]) -> RuleExpression {
        var collections: [(RuleExpression, Bound)] = [
            (.keyPath(variable: nil, keys: ["extensionItems"]), .item),
            (.keyPath(variable: nil, keys: ["extensionItems", "attachments"]), .attachment),
        ]
        for (name, bound) in scope {
            switch bound {
            case .item: collections.append((.keyPath(variable: name, keys: ["attachments"]), .attachment))
            case .attachment: collections.append((.keyPath(variable: name, keys: ["registeredTypeIdentifiers"]), .type))
            case .type: break
            }
        }
        let (collection, bound) = rng.pick(collections)
        if subqueries < 3, depth > 0, rng.chance(0.6) {
            subqueries += 1
            defer { subqueries -= 1 }
            counter += 1
            let name = "v\(counter)"
            let body = predicate(depth - 1, scope + [(name, bound)])
            return .count(.subquery(collection: collection, variable: name, predicate: body))
        }
        // @count straight on a path is allowed only when no earlier step was a collection.
        if case .keyPath(_, let keys) = collection, keys.count == 2, keys[0] == "extensionItems" {
            return .count(.keyPath(variable: nil, keys: ["extensionItems"]))
        }
        return .count(collection)
    }

    mutating func items() -> ActivationItems {
        let pool = [
            "public.jpeg", "public.png", "public.url", "public.file-url", "com.adobe.pdf", "public.plain-text",
            "public.mpeg-4", "com.example.custom", "public.html",
        ]
        return ActivationItems(
            extensionItems: (0..<rng.int(4)).map { _ in
                ActivationItem(
                    attachments: (0..<rng.int(5)).map { _ in
                        ActivationAttachment(registeredTypeIdentifiers: (0..<rng.int(3)).map { _ in rng.pick(pool) })
                    }, attributedContentText: rng.chance(0.5) ? rng.pick(Self.strings) : nil,
                    attributedTitle: rng.chance(0.3) ? rng.pick(Self.strings) : nil)
            })
    }
}

@Suite("Properties")
struct PropertyTests {
    @Test func printThenParseRoundTrips() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var gen = PredicateGenerator(rng: SplitMix(seed))
            let ast = gen.predicate(4, [])
            let text = ast.description
            do {
                let rule = try ActivationRule.compile(predicate: text)
                guard case .predicate(let parsed) = rule.form else {
                    Issue.record("not a predicate")
                    return
                }
                #expect(parsed == ast, "printed: \(text)")
                #expect(rule.printed == text)
            } catch {
                Issue.record("generated predicate did not parse: \(error)\n\(text)")
            }
        }
    }

    @Test func notIsTheComplement() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var gen = PredicateGenerator(rng: SplitMix(seed))
            let ast = gen.predicate(4, [])
            do {
                let p = try ActivationRule.compile(predicate: ast.description)
                let notP = try ActivationRule.compile(predicate: ActivationPredicate.not(ast).description)
                for _ in 0..<4 {
                    let items = gen.items()
                    let a = try p.evaluate(items).isActivated
                    let b = try notP.evaluate(items).isActivated
                    #expect(a != b, "\(ast) on \(items)")
                }
            } catch {
                Issue.record("\(error)\n\(ast)")
            }
        }
    }
}
