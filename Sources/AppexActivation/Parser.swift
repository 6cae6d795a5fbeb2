/// Limits that keep compiling and evaluating a rule cheap whatever the bundle wrote.
public enum PredicateLimits {
    /// Longest predicate accepted, in UTF-8 bytes. Real rules are under 2 KiB.
    public static let maximumLength = 16 * 1024
    /// Deepest predicate tree accepted (parentheses, NOT, AND/OR chains, SUBQUERY bodies).
    public static let maximumDepth = 64
    /// Most SUBQUERYs nested inside each other: each level multiplies evaluation cost.
    public static let maximumSubqueryNesting = 4
}

/// A compiled predicate: the syntax tree (for printing) and the checked form (for evaluating).
struct ParsedPredicate: Sendable {
    var ast: ActivationPredicate
    var node: Node
    var slotCount: Int
    /// Non-fatal remarks, e.g. a UTI literal that no declaration knows.
    var warnings: [(RuleLocation, String)]
}

/// Recursive-descent parser for the predicate subset, type-checking as it goes.
///
/// Grammar (keywords case-insensitive):
///     predicate  := and ( (OR | "||") and )*
///     and        := unary ( (AND | "&&") unary )*
///     unary      := (NOT | "!") unary | "(" predicate ")" | TRUEPREDICATE | FALSEPREDICATE | comparison
///     comparison := [ANY | ALL | NONE | SOME] expr operator expr
///     expr       := primary ( "." key | "." "@count" )*
///     primary    := key | $variable | string | number | NIL | NULL
///                 | SUBQUERY "(" expr "," $variable "," predicate ")"
struct Parser {
    private var tokens: [Token]
    private var i = 0
    private let types: UTTypeGraph
    private var scope: [(name: String, slot: Int, element: ElementType)] = []
    private var slotCount = 0
    private var recursion = 0
    private var subqueryNesting = 0
    private var warnings: [(RuleLocation, String)] = []

    static func parse(_ source: String, types: UTTypeGraph) throws(RuleError) -> ParsedPredicate {
        let length = source.utf8.count
        guard length <= PredicateLimits.maximumLength else {
            throw RuleError(
                .limit, at: RuleLocation(offset: PredicateLimits.maximumLength, line: 1, column: 1),
                "predicate is \(length) bytes; the limit is \(PredicateLimits.maximumLength)")
        }
        var lexer = Lexer(source)
        let tokens = try lexer.tokenize()
        if case .end = tokens.first?.kind {
            throw RuleError(
                .syntax, at: RuleLocation(offset: 0, line: 1, column: 1),
                "empty predicate: expected a comparison, TRUEPREDICATE or FALSEPREDICATE")
        }
        var parser = Parser(tokens: tokens, types: types)
        let (ast, node, _) = try parser.predicate()
        let t = parser.current
        guard case .end = t.kind else {
            throw RuleError(.syntax, at: t.location, "expected AND, OR or the end of the predicate, found \(describe(t))")
        }
        return ParsedPredicate(ast: ast, node: node, slotCount: parser.slotCount, warnings: parser.warnings)
    }

    private init(tokens: [Token], types: UTTypeGraph) {
        self.tokens = tokens
        self.types = types
    }

    private var current: Token { tokens[min(i, tokens.count - 1)] }
    private mutating func advance() { if i < tokens.count - 1 { i += 1 } }

    static func describe(_ t: Token) -> String {
        switch t.kind {
        case .identifier(let s): "\"\(s)\""
        case .variable(let s): "\"$\(s)\""
        case .string(let s): "the string \"\(s.count > 30 ? String(s.prefix(30)) + "…" : s)\""
        case .number(let n): "the number \(Printer.number(n))"
        case .keyword(let k): k.rawValue
        case .op(let o): "\"\(o.rawValue)\""
        case .and: "\"&&\""
        case .or: "\"||\""
        case .not: "\"!\""
        case .lparen: "\"(\""
        case .rparen: "\")\""
        case .comma: "\",\""
        case .dot: "\".\""
        case .at(let s): "\"@\(s)\""
        case .end: "the end of the predicate"
        }
    }

    private func fail(_ expected: String, _ t: Token? = nil) -> RuleError {
        let tok = t ?? current
        return RuleError(.syntax, at: tok.location, "expected \(expected), found \(Self.describe(tok))")
    }

    private mutating func enter(_ at: RuleLocation) throws(RuleError) {
        recursion += 1
        if recursion > PredicateLimits.maximumDepth {
            throw RuleError(.limit, at: at, "predicate nests deeper than \(PredicateLimits.maximumDepth) levels")
        }
    }

    private func checkDepth(_ depth: Int, _ at: RuleLocation) throws(RuleError) {
        if depth > PredicateLimits.maximumDepth {
            throw RuleError(
                .limit, at: at, "predicate nests deeper than \(PredicateLimits.maximumDepth) levels (long AND/OR chains count one level per operator)"
            )
        }
    }

    // MARK: boolean structure

    private mutating func predicate() throws(RuleError) -> (ActivationPredicate, Node, Int) {
        var (ast, node, depth) = try conjunction()
        while true {
            let t = current
            let isOr: Bool
            switch t.kind {
            case .or, .keyword(.or): isOr = true
            default: isOr = false
            }
            guard isOr else { return (ast, node, depth) }
            advance()
            let (rast, rnode, rdepth) = try conjunction()
            depth = max(depth, rdepth) + 1
            try checkDepth(depth, t.location)
            ast = .or(ast, rast)
            node = .or(node, rnode)
        }
    }

    private mutating func conjunction() throws(RuleError) -> (ActivationPredicate, Node, Int) {
        var (ast, node, depth) = try unary()
        while true {
            let t = current
            let isAnd: Bool
            switch t.kind {
            case .and, .keyword(.and): isAnd = true
            default: isAnd = false
            }
            guard isAnd else { return (ast, node, depth) }
            advance()
            let (rast, rnode, rdepth) = try unary()
            depth = max(depth, rdepth) + 1
            try checkDepth(depth, t.location)
            ast = .and(ast, rast)
            node = .and(node, rnode)
        }
    }

    private mutating func unary() throws(RuleError) -> (ActivationPredicate, Node, Int) {
        let t = current
        try enter(t.location)
        defer { recursion -= 1 }
        switch t.kind {
        case .not, .keyword(.not):
            advance()
            let (a, n, d) = try unary()
            try checkDepth(d + 1, t.location)
            return (.not(a), .not(n), d + 1)
        case .lparen:
            advance()
            let inner = try predicate()
            guard case .rparen = current.kind else { throw fail("\")\" to close the \"(\" at \(t.location.line):\(t.location.column)") }
            advance()
            return inner
        case .keyword(.truePredicate):
            advance()
            return (.constant(true), .constant(true), 1)
        case .keyword(.falsePredicate):
            advance()
            return (.constant(false), .constant(false), 1)
        default:
            return try comparison()
        }
    }

    // MARK: comparisons

    private mutating func comparison() throws(RuleError) -> (ActivationPredicate, Node, Int) {
        let start = current
        var aggregate: Aggregate?
        switch start.kind {
        case .keyword(.any): aggregate = .any
        case .keyword(.all): aggregate = .all
        case .keyword(.none): aggregate = Aggregate.none
        case .keyword(.some): aggregate = .some
        default: break
        }
        if aggregate != nil { advance() }
        let lhsTok = current
        let (lexpr, lop, ltype, ldepth) = try expression(
            expecting: aggregate == nil
                ? "a comparison, NOT, \"(\", TRUEPREDICATE or FALSEPREDICATE" : "a collection key path after \(aggregate!.rawValue)")
        let opTok = current
        let op: ComparisonOperator
        switch opTok.kind {
        case .op(let o): op = o
        case .keyword(.utiConformsTo): op = .utiConformsTo
        case .keyword(.utiEquals): op = .utiEquals
        default:
            throw fail("a comparison operator (==, =, !=, <>, <, <=, =<, >, >=, =>, UTI-CONFORMS-TO, UTI-EQUALS)", opTok)
        }
        advance()
        let rhsTok = current
        let (rexpr, rop, rtype, rdepth) = try expression(expecting: "a value after \(op.rawValue)")

        // Type rules: a collection on the left needs a quantifier; none on the right.
        var left = ltype
        if let aggregate {
            guard case .collection(let element, _) = ltype else {
                throw RuleError(.type, at: lhsTok.location, "\(aggregate.rawValue) needs a collection on its left; this is \(ltype.name)")
            }
            left = element.asValueType
        } else if case .collection = ltype {
            throw RuleError(.type, at: lhsTok.location, "the left side is \(ltype.name); prefix the comparison with ANY, ALL, NONE or SOME")
        }
        if case .collection = rtype {
            throw RuleError(.type, at: rhsTok.location, "the right side of \(op.rawValue) cannot be a collection (\(rtype.name))")
        }
        try Self.checkOperands(left, op, rtype, lhsTok.location, rhsTok.location)

        var rhsOperand = rop
        if op == .utiConformsTo || op == .utiEquals, case .string(let uti, _) = rop {
            let node = types.node(uti)
            rhsOperand = .string(uti, node: node)
            if node == nil {
                warnings.append(
                    (rhsTok.location, "\"\(uti)\" is not a declared type: only attachments registered with exactly this identifier match it"))
            }
        }
        let cmp = RuleComparison(aggregate, lexpr, op, rexpr)
        let depth = max(ldepth, rdepth) + 1
        try checkDepth(depth, start.location)
        return (.comparison(cmp), .compare(CompareNode(aggregate: aggregate, lhs: lop, op: op, rhs: rhsOperand)), depth)
    }

    private static func checkOperands(
        _ l: ValueType, _ op: ComparisonOperator, _ r: ValueType,
        _ la: RuleLocation, _ ra: RuleLocation
    ) throws(RuleError) {
        if case .object = l {
            throw RuleError(.type, at: la, "cannot compare \(l.name); name one of its keys")
        }
        if case .object = r {
            throw RuleError(.type, at: ra, "cannot compare \(r.name); name one of its keys")
        }
        switch op {
        case .utiConformsTo, .utiEquals:
            guard l == .string else { throw RuleError(.type, at: la, "\(op.rawValue) needs a type identifier string on its left; this is \(l.name)") }
            guard r == .string else {
                throw RuleError(.type, at: ra, "\(op.rawValue) needs a type identifier string on its right; this is \(r.name)")
            }
        case .equal, .notEqual:
            switch (l, r) {
            case (.number, .number), (.string, .string), (.string, .null), (.null, .string), (.null, .null): break
            default: throw RuleError(.type, at: ra, "cannot compare \(l.name) with \(r.name) using \(op.rawValue)")
            }
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            switch (l, r) {
            case (.number, .number), (.string, .string): break
            default: throw RuleError(.type, at: ra, "cannot order \(l.name) against \(r.name) with \(op.rawValue)")
            }
        }
    }

    // MARK: expressions

    private mutating func expression(expecting: String) throws(RuleError) -> (RuleExpression, Operand, ValueType, Int) {
        let t = current
        var expr: RuleExpression
        var operand: Operand
        var type: ValueType
        var depth = 1
        // Key path under construction (while no @count has been applied).
        var pathSlot: Int?
        var pathSteps: [Step] = []
        var pathVariable: String?
        var pathKeys: [String] = []
        var isPath = false

        switch t.kind {
        case .string(let s):
            advance()
            return (.string(s), .string(s, node: nil), .string, 1)
        case .number(let n):
            advance()
            return (.number(n), .number(n), .number, 1)
        case .keyword(.nilLiteral), .keyword(.nullLiteral):
            advance()
            return (.null, .null, .null, 1)
        case .identifier(let key):
            advance()
            guard let (step, ty) = Schema.property(key, of: .request) else {
                throw RuleError(
                    .unknownKey, at: t.location, "unknown key \"\(key)\"; the request has: \(Schema.keys(of: .request).joined(separator: ", "))")
            }
            pathSteps = [step]
            pathKeys = [key]
            type = ty
            isPath = true
            expr = .keyPath(variable: nil, keys: pathKeys)
            operand = .path(PathNode(slot: nil, steps: pathSteps))
        case .variable(let name):
            advance()
            guard let bound = scope.last(where: { $0.name == name }) else {
                throw RuleError(
                    .unboundVariable, at: t.location, "$\(name) is not bound here; variables are bound by SUBQUERY(collection, $\(name), …)")
            }
            pathSlot = bound.slot
            pathVariable = name
            type = bound.element.asValueType
            isPath = true
            expr = .keyPath(variable: name, keys: [])
            operand = .path(PathNode(slot: pathSlot, steps: []))
        case .keyword(.subquery):
            (expr, operand, type, depth) = try subquery()
        default:
            throw fail(expecting, t)
        }

        // Postfix: .key and .@count
        while case .dot = current.kind {
            let dot = current
            advance()
            let k = current
            switch k.kind {
            case .identifier(let key):
                guard isPath else {
                    throw RuleError(.type, at: k.location, "a key cannot follow \(Self.exprKind(expr)); only .@count can")
                }
                advance()
                let (element, flattened): (ElementType?, Bool) = {
                    switch type {
                    case .object(let kind): return (.object(kind), false)
                    case .collection(let e, _): return (e, true)
                    default: return (nil, false)
                    }
                }()
                guard case .object(let kind) = element else {
                    throw RuleError(.unknownKey, at: k.location, "unknown key \"\(key)\": \(type.name) has no keys")
                }
                guard let (step, ty) = Schema.property(key, of: kind) else {
                    throw RuleError(
                        .unknownKey, at: k.location,
                        "unknown key \"\(key)\"; \(Self.article(kind)) \(kind.rawValue) has: \(Schema.keys(of: kind).joined(separator: ", "))")
                }
                pathSteps.append(step)
                pathKeys.append(key)
                if flattened {
                    switch ty {
                    case .collection(let e, _): type = .collection(e, flattened: true)
                    case .string: type = .collection(.string, flattened: true)
                    default: type = ty
                    }
                } else {
                    type = ty
                }
                expr = .keyPath(variable: pathVariable, keys: pathKeys)
                operand = .path(PathNode(slot: pathSlot, steps: pathSteps))
            case .at(let name):
                advance()
                guard name.lowercased() == "count" else {
                    throw RuleError(.syntax, at: k.location, "unsupported collection operator @\(name); only @count is supported")
                }
                guard case .collection(_, let flattened) = type else {
                    throw RuleError(.type, at: k.location, "@count needs a collection; this is \(type.name)")
                }
                if flattened {
                    throw RuleError(
                        .type, at: k.location,
                        "@count after a path through a collection is ambiguous (Foundation counts the outer collection); count with SUBQUERY instead")
                }
                switch operand {
                case .path(let p): operand = .count(.path(p))
                case .count(let c): operand = .count(c)
                default: break
                }
                expr = .count(expr)
                type = .number
                isPath = false
            default:
                throw fail("a key or @count after \".\"", dot.location == k.location ? dot : k)
            }
        }
        if case .subquery = expr {
            throw RuleError(.type, at: t.location, "SUBQUERY yields a collection; compare its .@count")
        }
        return (expr, operand, type, depth)
    }

    private static func article(_ k: ObjectKind) -> String { k == .attachment || k == .item ? "an" : "a" }

    private static func exprKind(_ e: RuleExpression) -> String {
        switch e {
        case .count: "@count"
        case .subquery: "SUBQUERY"
        default: "this value"
        }
    }

    private mutating func subquery() throws(RuleError) -> (RuleExpression, Operand, ValueType, Int) {
        let start = current
        advance()
        try enter(start.location)
        defer { recursion -= 1 }
        subqueryNesting += 1
        defer { subqueryNesting -= 1 }
        if subqueryNesting > PredicateLimits.maximumSubqueryNesting {
            throw RuleError(.limit, at: start.location, "more than \(PredicateLimits.maximumSubqueryNesting) nested SUBQUERYs")
        }
        guard case .lparen = current.kind else { throw fail("\"(\" after SUBQUERY") }
        advance()
        let collTok = current
        let (cexpr, cop, ctype, _) = try expression(expecting: "a collection key path as the first argument of SUBQUERY")
        guard case .collection(let element, _) = ctype, case .path(let cpath) = cop else {
            throw RuleError(.type, at: collTok.location, "SUBQUERY needs a collection key path as its first argument; this is \(ctype.name)")
        }
        guard case .comma = current.kind else { throw fail("\",\" after the SUBQUERY collection") }
        advance()
        guard case .variable(let name) = current.kind else { throw fail("a $variable as the second argument of SUBQUERY") }
        advance()
        guard case .comma = current.kind else { throw fail("\",\" after the SUBQUERY variable") }
        advance()
        let slot = slotCount
        slotCount += 1
        scope.append((name, slot, element))
        let (past, pnode, pdepth) = try predicate()
        scope.removeLast()
        guard case .rparen = current.kind else { throw fail("\")\" to close SUBQUERY") }
        advance()
        return (
            .subquery(collection: cexpr, variable: name, predicate: past),
            .count(.subquery(cpath, slot: slot, pnode)),
            .collection(element, flattened: false), pdepth + 1
        )
    }
}

extension ElementType {
    var asValueType: ValueType {
        switch self {
        case .string: .string
        case .object(let k): .object(k)
        }
    }
}
