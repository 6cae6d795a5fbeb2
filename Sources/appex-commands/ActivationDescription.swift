import AppexActivation
import AppexBundle

/// The compiled form of a bundle's activation rule for `appex info`: the predicate printed
/// back in canonical form, or the dictionary rule's effective limits.
enum ActivationDescription {
    static func describe(_ info: InfoPlist) -> [String: Any] {
        guard let rule = Activation.rule(for: ExtensionBundle(path: "", info: info)).rule else {
            return ["compiled": false]
        }
        switch rule.form {
        case .none:
            return ["compiled": true]
        case .predicate(let predicate):
            return ["compiled": true, "canonical": predicate.description]
        case .dictionary(let d):
            var limits: [String: Int] = [:]
            for (category, count) in d.maxCounts { limits[category.key] = count }
            var out: [String: Any] = ["compiled": true, "maxCounts": limits, "version": d.version, "strict": d.strict]
            if let max = d.attachmentsMaxCount { out["attachmentsMaxCount"] = max }
            if let min = d.attachmentsMinCount { out["attachmentsMinCount"] = min }
            return out
        }
    }
}
