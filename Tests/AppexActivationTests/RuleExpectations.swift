import AppexActivation
import AppexBundle
import AppexTestSupport
import Foundation
import Testing

/// Expected activation per item set, one letter per set in `ItemSets.all` order:
/// empty, oneImage, tenImages, fileURL, webURL, textContent, textAttachment, mixed, twoItems,
/// manyImages, pdf, movie, safariPage. Rows are worked out by hand from each rule's text and
/// Docs/activation.md, not from the implementation.
func expectations(_ row: String) -> [Bool] { row.filter { $0 != " " }.map { $0 == "T" } }

/// Every predicate in `directory`'s predicates.json against every item set; `rows` by index.
/// Shared by the fixture and corpus suites.
func expectPredicatesActivate(in directory: ManifestDirectory, as rows: [String]) throws {
    let predicates = try directory.predicates()
    #expect(predicates.count == rows.count, "one row per predicate in \(directory.path("predicates.json"))")
    for (index, text) in predicates.enumerated() where index < rows.count {
        let rule = try ActivationRule.compile(predicate: text)
        let expected = expectations(rows[index])
        #expect(expected.count == ItemSets.all.count, "row \(index)")
        for (column, set) in ItemSets.all.enumerated() where column < expected.count {
            let result = try rule.evaluate(set.items)
            #expect(result.isActivated == expected[column], "predicate \(index) on \(set.name): \(result)")
            if !result.isActivated { #expect(result.reason?.isEmpty == false) }
        }
    }
}

/// Every plist in `directory/plists` compiles without errors; those with a rule activate as
/// `rows` (by file name) says, and those without one activate for anything.
func expectPlistRulesActivate(in directory: ManifestDirectory, as rows: [String: String]) throws {
    var withRules = 0
    for file in directory.files(in: "plists") where file.hasSuffix(".plist") {
        let info = try InfoPlist.load(path: directory.path(file))
        let spec = info.extensionInfo?.activationRule ?? .none
        let (rule, findings) = ActivationRule.compile(spec)
        #expect(!findings.hasErrors, "\(file): \(findings)")
        let compiled = try #require(rule, "\(file) did not compile")
        guard case .none = spec else {
            withRules += 1
            let name = (file as NSString).lastPathComponent
            let row = try #require(rows[name], "no expectation row for \(name)")
            let expected = expectations(row)
            #expect(expected.count == ItemSets.all.count, "row for \(name)")
            for (column, set) in ItemSets.all.enumerated() where column < expected.count {
                let result = try compiled.evaluate(set.items)
                #expect(result.isActivated == expected[column], "\(name) on \(set.name): \(result)")
            }
            continue
        }
        // No rule: the extension point does not filter on items.
        #expect(try compiled.evaluate(ItemSets.all[0].items).isActivated)
    }
    #expect(withRules == rows.count)
}
