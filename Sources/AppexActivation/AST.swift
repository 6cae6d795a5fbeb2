/// A parsed activation predicate: the NSPredicate subset Appex understands.
///
/// AND/OR are binary and left-associative as written; the printer keeps that shape so
/// `parse(print(p)) == p`.
public indirect enum ActivationPredicate: Sendable, Hashable {
    /// TRUEPREDICATE / FALSEPREDICATE.
    case constant(Bool)
    case not(ActivationPredicate)
    case and(ActivationPredicate, ActivationPredicate)
    case or(ActivationPredicate, ActivationPredicate)
    case comparison(RuleComparison)
}

/// `[ANY|ALL|NONE|SOME] lhs op rhs`.
public struct RuleComparison: Sendable, Hashable {
    public var aggregate: Aggregate?
    public var lhs: RuleExpression
    public var op: ComparisonOperator
    public var rhs: RuleExpression

    public init(_ aggregate: Aggregate? = nil, _ lhs: RuleExpression, _ op: ComparisonOperator, _ rhs: RuleExpression) {
        self.aggregate = aggregate
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
    }
}

/// Quantifier over a collection on the left of a comparison.
public enum Aggregate: String, Sendable, Hashable, CaseIterable {
    case any = "ANY", all = "ALL", none = "NONE", some = "SOME"
}

public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case utiConformsTo = "UTI-CONFORMS-TO"
    case utiEquals = "UTI-EQUALS"
}

/// A value in a comparison.
public indirect enum RuleExpression: Sendable, Hashable {
    /// `extensionItems`, `$attachment.registeredTypeIdentifiers`: an optional variable, then keys.
    case keyPath(variable: String?, keys: [String])
    /// `SUBQUERY(collection, $variable, predicate)`.
    case subquery(collection: RuleExpression, variable: String, predicate: ActivationPredicate)
    /// `expression.@count`.
    case count(RuleExpression)
    case string(String)
    case number(Double)
    /// `nil` / `NULL`.
    case null
}
