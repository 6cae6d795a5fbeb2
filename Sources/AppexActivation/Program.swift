/// The compiled predicate flattened into arrays of plain values, so the evaluator walks it by
/// index without reference counting (the tree form spent most of its time retaining nodes).
struct Program: Sendable {
    enum InstrKind: UInt8, Sendable { case constant, not, and, or, compare }

    /// One boolean node. `a`/`b`: children (not/and/or) or operand indices (compare).
    struct Instr: Sendable {
        var kind: InstrKind
        var value: Bool = false
        var a: Int32 = -1
        var b: Int32 = -1
        var op: ComparisonOperator = .equal
        /// -1: no quantifier; otherwise an `Aggregate` ordinal.
        var aggregate: Int8 = -1
    }

    enum OperandKind: UInt8, Sendable { case number, string, null, path, countPath, countSubquery }

    struct Operand: Sendable {
        var kind: OperandKind
        var number: Double = 0
        /// String literal index into `strings`.
        var string: Int32 = -1
        /// Type-graph node of a string literal, -1 when undeclared or not a UTI.
        var typeNode: Int32 = -1
        /// Path start: -1 for the request, else a variable slot.
        var slot: Int32 = -1
        var firstStep: Int32 = 0
        var endStep: Int32 = 0
        /// SUBQUERY: the slot it binds and its body instruction.
        var boundSlot: Int32 = -1
        var body: Int32 = -1
    }

    var instrs: [Instr] = []
    var operands: [Operand] = []
    var steps: [Step] = []
    var strings: [String] = []
    var root: Int32 = 0
    var slotCount = 0

    init(_ node: Node, slotCount: Int) {
        self.slotCount = slotCount
        root = lower(node)
    }

    private mutating func lower(_ node: Node) -> Int32 {
        var instr: Instr
        switch node {
        case .constant(let b):
            instr = Instr(kind: .constant, value: b)
        case .not(let n):
            instr = Instr(kind: .not, a: lower(n))
        case .and(let l, let r):
            let a = lower(l), b = lower(r)
            instr = Instr(kind: .and, a: a, b: b)
        case .or(let l, let r):
            let a = lower(l), b = lower(r)
            instr = Instr(kind: .or, a: a, b: b)
        case .compare(let c):
            let a = lower(c.lhs), b = lower(c.rhs)
            let agg: Int8 =
                switch c.aggregate {
                case nil: -1
                case .any?: 0
                case .all?: 1
                case .none?: 2
                case .some?: 3
                }
            instr = Instr(kind: .compare, a: a, b: b, op: c.op, aggregate: agg)
        }
        instrs.append(instr)
        return Int32(instrs.count - 1)
    }

    private mutating func lower(_ o: AppexActivation.Operand) -> Int32 {
        var rec: Operand
        switch o {
        case .number(let n):
            rec = Operand(kind: .number, number: n)
        case .string(let s, let node):
            strings.append(s)
            rec = Operand(kind: .string, string: Int32(strings.count - 1), typeNode: Int32(node ?? -1))
        case .null:
            rec = Operand(kind: .null)
        case .path(let p):
            rec = Operand(kind: .path)
            lowerPath(p, into: &rec)
        case .count(.path(let p)):
            rec = Operand(kind: .countPath)
            lowerPath(p, into: &rec)
        case .count(.subquery(let p, let slot, let body)):
            rec = Operand(kind: .countSubquery)
            lowerPath(p, into: &rec)
            rec.boundSlot = Int32(slot)
            rec.body = lower(body)
        }
        operands.append(rec)
        return Int32(operands.count - 1)
    }

    private mutating func lowerPath(_ p: PathNode, into rec: inout Operand) {
        rec.slot = Int32(p.slot ?? -1)
        rec.firstStep = Int32(steps.count)
        steps.append(contentsOf: p.steps)
        rec.endStep = Int32(steps.count)
    }
}
