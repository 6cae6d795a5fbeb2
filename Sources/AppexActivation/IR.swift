/// The compiled, type-checked form of a predicate that the evaluator runs. Variables are
/// resolved to slots and UTI literals to graph nodes, so evaluation does no name lookups.
indirect enum Node: Sendable {
    case constant(Bool)
    case not(Node)
    case and(Node, Node)
    case or(Node, Node)
    case compare(CompareNode)
}

struct CompareNode: Sendable {
    var aggregate: Aggregate?
    var lhs: Operand
    var op: ComparisonOperator
    var rhs: Operand
}

indirect enum Operand: Sendable {
    case number(Double)
    /// A string literal and, when it names a declared type, its graph node.
    case string(String, node: Int?)
    case null
    case path(PathNode)
    case count(CountNode)
}

struct PathNode: Sendable {
    /// nil: the request; otherwise the variable slot.
    var slot: Int?
    var steps: [Step]
}

indirect enum CountNode: Sendable {
    case path(PathNode)
    case subquery(PathNode, slot: Int, Node)
}
