import AppexActivation
import AppexTestSupport
import Testing

/// Bounded fuzzing in the unit suite: mutated fixture predicates (and the corpus's, when it is
/// there) and token soup must never crash the lexer, parser or evaluator; every input is within
/// the length limit or refused.
@Suite("Fuzz")
struct FuzzTests {
    static let fragments = [
        "SUBQUERY", "(", ")", ",", "$x", "$attachment", ".", "@count", "ANY", "ALL", "NONE", "SOME",
        "NOT", "!", "AND", "&&", "OR", "||", "==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>",
        "UTI-CONFORMS-TO", "UTI-EQUALS", "\"public.image\"", "'public.url'", "\"unterminated", "1", "-2.5",
        "0x1F", "1e3", "extensionItems", "attachments", "registeredTypeIdentifiers", "attributedTitle",
        "TRUEPREDICATE", "FALSEPREDICATE", "NIL", "\\", "\"\\u00e9\"", "\n", "\t", " ", "é", "@", "#", "-",
    ]

    @Test func mutatedAndRandomInputsNeverCrash() throws {
        var rng = SplitMix(20_261_121)
        let seeds = try Fixtures.directory.predicates() + (Corpus.isPresent ? Corpus.directory.predicates() : [])
        let itemSets = ItemSets.all.map(\.items)
        var compiled = 0
        for round in 0..<3_000 {
            let text: String
            if round % 2 == 0, let base = seeds.randomElement(using: &rng) {
                var bytes = Array(base.utf8)
                for _ in 0..<(1 + rng.int(4)) where !bytes.isEmpty {
                    let at = rng.int(bytes.count)
                    switch rng.int(4) {
                    case 0: bytes.remove(at: at)
                    case 1: bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
                    case 2: bytes[at] = UInt8(truncatingIfNeeded: rng.next())
                    default:
                        let frag = Array(rng.pick(Self.fragments).utf8)
                        bytes.insert(contentsOf: frag, at: at)
                    }
                }
                text = String(decoding: bytes, as: UTF8.self)
            } else {
                text = (0..<rng.int(40)).map { _ in rng.pick(Self.fragments) }.joined(separator: rng.chance(0.5) ? " " : "")
            }
            if Self.check(text, itemSets) { compiled += 1 }
        }
        #expect(compiled > 0)
    }
}

extension FuzzTests {
    /// Compiles one input; true when it compiled. Never throws: every failure must be a
    /// located `RuleError`.
    static func check(_ text: String, _ itemSets: [ActivationItems]) -> Bool {
        let rule: ActivationRule
        do {
            rule = try ActivationRule.compile(predicate: text)
        } catch {
            let offset = error.location.offset
            #expect(offset >= 0 && offset <= text.utf8.count, "\(error) for \(text.debugDescription)")
            #expect(!error.message.isEmpty)
            return false
        }
        for items in itemSets { _ = try? rule.evaluate(items) }
        // Whatever compiles prints to something that compiles to the same tree.
        if case .predicate(let p) = rule.form {
            let again = try? ActivationRule.compile(predicate: p.description)
            if case .predicate(let q)? = again?.form { #expect(p == q) } else { Issue.record("reprint of \(text.debugDescription) failed") }
        }
        return true
    }
}

extension SplitMix: RandomNumberGenerator {}
