/// Items resolved against a type graph once, so that every rule evaluated against them (a share
/// sheet evaluates one per installed extension) tests conformance with bit lookups only.
///
/// Stored flat, as plain integers indexing into a few arrays, so the evaluator walks them
/// without copying strings or reference counting.
public struct PreparedItems: Sendable {
    struct ItemRecord: Sendable {
        var firstAttachment: Int32
        var endAttachment: Int32
        /// Index into `texts`, -1 when absent.
        var contentText: Int32
        var title: Int32
    }
    struct AttachmentRecord: Sendable {
        var firstType: Int32
        var endType: Int32
        var suggestedName: Int32
    }

    var itemRecords: [ItemRecord] = []
    var attachmentRecords: [AttachmentRecord] = []
    /// Every attachment's type identifiers, concatenated.
    var typeIdentifiers: [String] = []
    /// Graph node of each identifier, -1 when undeclared.
    var typeNodes: [Int32] = []
    var texts: [String] = []
    let graph: UTTypeGraph
    public let source: ActivationItems

    /// Checks the payload limits, then resolves every type identifier.
    public init(_ items: ActivationItems, types: UTTypeGraph) throws(ItemsError) {
        try items.validate()
        self.source = items
        self.graph = types
        var texts: [String] = []
        func text(_ s: String?) -> Int32 {
            guard let s else { return -1 }
            texts.append(s)
            return Int32(texts.count - 1)
        }
        for item in items.extensionItems {
            let first = Int32(attachmentRecords.count)
            for a in item.attachments {
                let firstType = Int32(typeIdentifiers.count)
                for t in a.registeredTypeIdentifiers {
                    typeIdentifiers.append(t)
                    typeNodes.append(Int32(types.node(t) ?? -1))
                }
                attachmentRecords.append(
                    AttachmentRecord(
                        firstType: firstType, endType: Int32(typeIdentifiers.count),
                        suggestedName: text(a.suggestedName)))
            }
            itemRecords.append(
                ItemRecord(
                    firstAttachment: first, endAttachment: Int32(attachmentRecords.count),
                    contentText: text(item.attributedContentText), title: text(item.attributedTitle)))
        }
        self.texts = texts
    }

    var attachmentCount: Int { attachmentRecords.count }

    func text(_ index: Int32) -> String? { index >= 0 ? texts[Int(index)] : nil }
}

/// Evaluation ran past its step budget (a pathological rule over a large payload).
public struct EvaluationLimitError: Error, Sendable, Hashable, CustomStringConvertible {
    public var steps: Int
    public var description: String { "evaluation stopped after \(steps) steps (limit \(PredicateEvaluator.maximumSteps))" }
}

/// A value met while walking a key path: indices into the prepared or program arrays.
enum RValue {
    case request
    case item(Int32)
    case attachment(Int32)
    case type(Int32)
    /// Index into the prepared texts, -1 for an absent value.
    case text(Int32)
    /// Index into the program's string literals.
    case literal(Int32)
    case number(Double)
    case null
}

/// Receives each value a key path reaches; returns false to stop the walk.
protocol PathVisitor {
    mutating func visit(_ v: RValue, _ e: PredicateEvaluator) throws(EvaluationLimitError) -> Bool
}

/// Runs a compiled `Program` over prepared items. One instance per evaluation (it holds the
/// variable slots and the step counter); not shared between threads.
final class PredicateEvaluator {
    /// Upper bound on elements visited and comparisons made by one evaluation.
    static let maximumSteps = 1_000_000

    private var slots: [RValue]
    private var stepCount = 0
    private let instrs: [Program.Instr]
    private let operands: [Program.Operand]
    private let steps: [Step]
    private let strings: [String]
    private let itemRecords: [PreparedItems.ItemRecord]
    private let attachmentRecords: [PreparedItems.AttachmentRecord]
    private let typeIdentifiers: [String]
    private let typeNodes: [Int32]
    private let texts: [String]
    private let ancestors: [UInt64]
    private let stride: Int
    private let graph: UTTypeGraph

    init(program: Program, items: PreparedItems) {
        instrs = program.instrs
        operands = program.operands
        steps = program.steps
        strings = program.strings
        itemRecords = items.itemRecords
        attachmentRecords = items.attachmentRecords
        typeIdentifiers = items.typeIdentifiers
        typeNodes = items.typeNodes
        texts = items.texts
        graph = items.graph
        ancestors = items.graph.flatAncestors
        stride = items.graph.ancestorStride
        slots = Array(repeating: .request, count: program.slotCount)
    }

    @inline(__always) func tick() throws(EvaluationLimitError) {
        stepCount &+= 1
        if stepCount > Self.maximumSteps { throw EvaluationLimitError(steps: stepCount) }
    }

    func evaluate(_ index: Int32) throws(EvaluationLimitError) -> Bool {
        let instr = instrs[Int(index)]
        switch instr.kind {
        case .constant: return instr.value
        case .not: return try !evaluate(instr.a)
        case .and:
            if try !evaluate(instr.a) { return false }
            return try evaluate(instr.b)
        case .or:
            if try evaluate(instr.a) { return true }
            return try evaluate(instr.b)
        case .compare: return try compare(instr)
        }
    }

    private struct AggregateVisitor: PathVisitor {
        var aggregate: Int8
        var op: ComparisonOperator
        var rhs: RValue
        var rNode: Int32
        var found = false
        var allHold = true
        mutating func visit(_ v: RValue, _ e: PredicateEvaluator) throws(EvaluationLimitError) -> Bool {
            try e.tick()
            let ok = e.holds(v, op, rhs, rNode)
            if aggregate == 1 {  // ALL stops at the first miss
                if !ok {
                    allHold = false
                    return false
                }
            } else if ok {  // ANY, SOME, NONE stop at the first match
                found = true
                return false
            }
            return true
        }
    }

    private func compare(_ instr: Program.Instr) throws(EvaluationLimitError) -> Bool {
        try tick()
        let rhs = try scalar(instr.b)
        let rOperand = operands[Int(instr.b)]
        let rNode = rOperand.kind == .string ? rOperand.typeNode : node(of: rhs)
        guard instr.aggregate >= 0 else {
            return try holds(scalar(instr.a), instr.op, rhs, rNode)
        }
        var visitor = AggregateVisitor(aggregate: instr.aggregate, op: instr.op, rhs: rhs, rNode: rNode)
        try walk(operand: instr.a, &visitor)
        switch instr.aggregate {
        case 1: return visitor.allHold
        case 2: return !visitor.found
        default: return visitor.found
        }
    }

    private func node(of v: RValue) -> Int32 {
        switch v {
        case .type(let t): return typeNodes[Int(t)]
        default:
            guard let s = text(v) else { return -1 }
            return Int32(graph.node(s) ?? -1)
        }
    }

    private struct FirstVisitor: PathVisitor {
        var value: RValue = .null
        mutating func visit(_ v: RValue, _ e: PredicateEvaluator) throws(EvaluationLimitError) -> Bool {
            value = v
            return false
        }
    }

    private struct CountVisitor: PathVisitor {
        var n = 0
        mutating func visit(_ v: RValue, _ e: PredicateEvaluator) throws(EvaluationLimitError) -> Bool {
            n += 1
            return true
        }
    }

    private struct SubqueryVisitor: PathVisitor {
        var slot: Int
        var body: Int32
        var n = 0
        mutating func visit(_ v: RValue, _ e: PredicateEvaluator) throws(EvaluationLimitError) -> Bool {
            try e.tick()
            let saved = e.slots[slot]
            e.slots[slot] = v
            if try e.evaluate(body) { n += 1 }
            e.slots[slot] = saved
            return true
        }
    }

    /// Evaluates a non-collection operand.
    func scalar(_ index: Int32) throws(EvaluationLimitError) -> RValue {
        let o = operands[Int(index)]
        switch o.kind {
        case .number: return .number(o.number)
        case .string: return .literal(o.string)
        case .null: return .null
        case .path:
            var v = FirstVisitor()
            try walk(operand: index, &v)
            return v.value
        case .countPath:
            var v = CountVisitor()
            try walk(operand: index, &v)
            return .number(Double(v.n))
        case .countSubquery:
            var v = SubqueryVisitor(slot: Int(o.boundSlot), body: o.body)
            try walk(operand: index, &v)
            return .number(Double(v.n))
        }
    }

    private func walk<V: PathVisitor>(operand index: Int32, _ visitor: inout V) throws(EvaluationLimitError) {
        let o = operands[Int(index)]
        let start: RValue = o.slot >= 0 ? slots[Int(o.slot)] : .request
        _ = try walk(start, Int(o.firstStep), Int(o.endStep), &visitor)
    }

    /// Visits each value the steps reach from `v` (every element, flattened, through collections).
    private func walk<V: PathVisitor>(_ v: RValue, _ step: Int, _ end: Int, _ visitor: inout V) throws(EvaluationLimitError) -> Bool {
        guard step < end else { return try visitor.visit(v, self) }
        let next = step + 1
        switch (v, steps[step]) {
        case (.request, .extensionItems):
            for i in 0..<itemRecords.count {
                try tick()
                if try !walk(.item(Int32(i)), next, end, &visitor) { return false }
            }
            return true
        case (.item(let i), .attachments):
            let r = itemRecords[Int(i)]
            var a = r.firstAttachment
            while a < r.endAttachment {
                try tick()
                if try !walk(.attachment(a), next, end, &visitor) { return false }
                a += 1
            }
            return true
        case (.item(let i), .attributedContentText):
            return try walk(.text(itemRecords[Int(i)].contentText), next, end, &visitor)
        case (.item(let i), .attributedTitle):
            return try walk(.text(itemRecords[Int(i)].title), next, end, &visitor)
        case (.attachment(let a), .registeredTypeIdentifiers):
            let r = attachmentRecords[Int(a)]
            var t = r.firstType
            while t < r.endType {
                try tick()
                if try !walk(.type(t), next, end, &visitor) { return false }
                t += 1
            }
            return true
        case (.attachment(let a), .suggestedName):
            return try walk(.text(attachmentRecords[Int(a)].suggestedName), next, end, &visitor)
        default:
            // The checker rules this out; treat as an absent value.
            return try walk(.null, next, end, &visitor)
        }
    }

    /// One comparison between two scalars; `rNode` is the right side's graph node or -1.
    func holds(_ l: RValue, _ op: ComparisonOperator, _ r: RValue, _ rNode: Int32) -> Bool {
        switch op {
        case .utiConformsTo, .utiEquals:
            let lNode: Int32
            switch l {
            case .type(let t): lNode = typeNodes[Int(t)]
            case .text, .literal: lNode = node(of: l)
            default: return false
            }
            if lNode >= 0 && rNode >= 0 {
                if op == .utiEquals { return lNode == rNode }
                let b = Int(rNode)
                return ancestors[Int(lNode) &* stride &+ (b >> 6)] & (1 << UInt64(b & 63)) != 0
            }
            // An undeclared identifier matches only itself.
            guard let a = text(l), let b = text(r) else { return false }
            return a.caseInsensitiveEquals(b)
        default:
            break
        }
        if case .number(let a) = l, case .number(let b) = r {
            switch op {
            case .equal: return a == b
            case .notEqual: return a != b
            case .less: return a < b
            case .lessOrEqual: return a <= b
            case .greater: return a > b
            case .greaterOrEqual: return a >= b
            default: return false
            }
        }
        let a = text(l), b = text(r)
        switch op {
        case .equal: return a == b
        case .notEqual: return a != b
        default:
            // Ordering with nil is false, as in NSPredicate.
            guard let a, let b else { return false }
            switch op {
            case .less: return a < b
            case .lessOrEqual: return a <= b
            case .greater: return a > b
            case .greaterOrEqual: return a >= b
            default: return false
            }
        }
    }

    private func text(_ v: RValue) -> String? {
        switch v {
        case .text(let i): i >= 0 ? texts[Int(i)] : nil
        case .literal(let i): strings[Int(i)]
        case .type(let t): typeIdentifiers[Int(t)]
        default: nil
        }
    }
}
