import AppexBundle

/// The answer to "do these items activate this extension?".
public enum ActivationResult: Sendable, Hashable, CustomStringConvertible {
    case activated
    /// Not activated, with a sentence a person (or the supervisor's refusal) can show.
    case notActivated(String)

    public var isActivated: Bool { if case .activated = self { true } else { false } }

    /// Why not, or nil when activated.
    public var reason: String? { if case .notActivated(let r) = self { r } else { nil } }

    public var description: String { reason.map { "not activated: \($0)" } ?? "activated" }
}

/// A compiled `NSExtensionActivationRule`: immutable, Sendable, reusable for any number of
/// requests. Compile once when a bundle is installed; evaluate per request.
public struct ActivationRule: Sendable {
    public enum Form: Sendable {
        /// No rule: the extension point does not match on items (widgets, keyboards…); any
        /// request activates.
        case none
        case dictionary(DictionaryRule)
        case predicate(ActivationPredicate)
    }

    public let form: Form
    let program: Program?
    /// The type graph literals were resolved against; items are resolved against it too.
    public let types: UTTypeGraph

    /// Compiles the rule a bundle declares. Errors (bad syntax, unknown key, wrong value type)
    /// give `rule == nil`; warnings (TRUEPREDICATE, numeric string count, unknown dictionary
    /// key, undeclared UTI literal) leave a usable rule. `keyPath` is where the rule lives, used
    /// in every finding (normally `ActivationRuleSpec.keyPath`).
    public static func compile(
        _ spec: ActivationRuleSpec, at keyPath: PlistKeyPath = ActivationRuleSpec.keyPath,
        types: UTTypeGraph = .system
    ) -> (rule: ActivationRule?, findings: [Finding]) {
        switch spec {
        case .none:
            return (ActivationRule(form: .none, program: nil, types: types), [])
        case .dictionary(let dict):
            let (rule, findings) = DictionaryRule.compile(dict, at: keyPath)
            return (rule.map { ActivationRule(form: .dictionary($0), program: nil, types: types) }, findings)
        case .predicate(let text):
            do {
                let parsed = try Parser.parse(text, types: types)
                var findings = parsed.warnings.map { loc, message in
                    Finding.warning("activation.unknown-type", at: keyPath, "at \(loc.line):\(loc.column): \(message)")
                }
                if case .constant(true) = parsed.ast {
                    findings.append(
                        .warning(
                            "activation.truepredicate", at: keyPath,
                            "TRUEPREDICATE activates for every request; it is for development only and App Store review rejects it"))
                }
                let rule = ActivationRule(form: .predicate(parsed.ast), program: Program(parsed.node, slotCount: parsed.slotCount), types: types)
                return (rule, findings)
            } catch {
                return (
                    nil,
                    [
                        .error(
                            error.code, at: keyPath,
                            "\(error.location.line):\(error.location.column) (offset \(error.location.offset)): \(error.message)")
                    ]
                )
            }
        }
    }

    /// Compiles a predicate string, throwing the located error (for `--rule` and tests).
    public static func compile(predicate text: String, types: UTTypeGraph = .system) throws(RuleError) -> ActivationRule {
        let parsed = try Parser.parse(text, types: types)
        return ActivationRule(form: .predicate(parsed.ast), program: Program(parsed.node, slotCount: parsed.slotCount), types: types)
    }

    /// Whether the items activate the rule; throws for a payload over the limits or an
    /// evaluation over its step budget (never for an ordinary "no").
    public func evaluate(_ items: ActivationItems) throws -> ActivationResult {
        try evaluate(PreparedItems(items, types: types))
    }

    /// Same, for items already resolved against this rule's type graph (share sheets prepare the
    /// request once and evaluate every installed extension's rule against it).
    public func evaluate(_ items: PreparedItems) throws(EvaluationLimitError) -> ActivationResult {
        switch form {
        case .none:
            return .activated
        case .dictionary(let d):
            return d.evaluate(items)
        case .predicate(let p):
            guard let program else { return .notActivated("rule did not compile") }
            let evaluator = PredicateEvaluator(program: program, items: items)
            if try evaluator.evaluate(program.root) { return .activated }
            return .notActivated(try explain(p, program.root, evaluator))
        }
    }

    /// Yes or no without building a reason: the cheapest check, for listing many extensions.
    public func activates(_ items: PreparedItems) throws(EvaluationLimitError) -> Bool {
        switch form {
        case .none: return true
        case .dictionary(let d): return d.evaluate(items).isActivated
        case .predicate:
            guard let program else { return false }
            return try PredicateEvaluator(program: program, items: items).evaluate(program.root)
        }
    }

    /// The rule printed back: canonical predicate text, a dictionary summary, or nil for none.
    public var printed: String? {
        switch form {
        case .none: nil
        case .predicate(let p): p.description
        case .dictionary(let d):
            d.summary.sorted { $0.key < $1.key }.map { key, value -> String in
                switch value {
                case .integer(let n): "\(key) = \(n)"
                case .bool(let b): "\(key) = \(b)"
                default: "\(key)"
                }
            }.joined(separator: "; ")
        }
    }

    /// Names the failing part of a false predicate: the first false conjunct of an AND chain,
    /// with the values a count comparison saw. The AST and the program have the same shape.
    func explain(_ p: ActivationPredicate, _ index: Int32, _ evaluator: PredicateEvaluator) throws(EvaluationLimitError) -> String {
        guard let program else { return "the predicate is false" }
        let instr = program.instrs[Int(index)]
        switch p {
        case .and(let lp, let rp):
            if try !evaluator.evaluate(instr.a) { return try explain(lp, instr.a, evaluator) }
            return try explain(rp, instr.b, evaluator)
        case .constant(false):
            return "the rule is FALSEPREDICATE"
        case .comparison(let c) where c.aggregate == nil:
            let lk = program.operands[Int(instr.a)].kind, rk = program.operands[Int(instr.b)].kind
            let isCount = { (k: Program.OperandKind) in k == .countPath || k == .countSubquery }
            if isCount(lk), case .number(let got) = try evaluator.scalar(instr.a) {
                if rk == .number, case .number(let want) = try evaluator.scalar(instr.b) {
                    return "\(c.lhs) is \(Printer.number(got)), the rule requires \(c.op.rawValue) \(Printer.number(want))"
                }
                if isCount(rk), case .number(let other) = try evaluator.scalar(instr.b) {
                    return "\(c.lhs) is \(Printer.number(got)) and \(c.rhs) is \(Printer.number(other)); the rule requires \(c.op.rawValue)"
                }
            }
            return "\(p) is false for these items"
        default:
            let text = p.description
            return "the predicate is false for these items: \(text.count > 200 ? String(text.prefix(200)) + "…" : text)"
        }
    }
}
