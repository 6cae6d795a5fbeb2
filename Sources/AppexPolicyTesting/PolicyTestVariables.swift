import Foundation

/// `${NAME}` in a case's arguments: values known only when the case runs (its policy's
/// limits, the extension's uid, the bystander's pid), so one case can run under every
/// extension point. Docs/policy-tests.md lists them.
enum PolicyTestVariables {
    /// Every name, with what it stands for (for the docs and the error for an unknown one).
    static let known: [(name: String, meaning: String)] = [
        ("memoryLimitMiB", "the policy's footprint hard limit (memory.activeHardLimit), MiB"),
        ("cgroupMemoryMaxMiB", "the cgroup's hard limit (footprint limit + page-cache allowance), MiB"),
        ("pidsLimit", "the policy's pidsLimit"),
        ("openFilesLimit", "the policy's openFilesLimit"),
        ("uid", "the extension's uid"),
        ("testPID", "the pid of appex test-policy itself, a host pid"),
        ("bystanderPID", "the bystander extension's host pid (needs bystander: true)"),
        ("bystanderContainer", "the host path of the bystander's data container (needs bystander: true)"),
        ("hostLoopbackPort", "a TCP port listening on the host's 127.0.0.1 during the run"),
        ("setuidProbe", "a root-owned setuid-root copy of the probe in its bundle, by its path in the view"),
    ]

    static let needsBystander: Set<String> = ["bystanderPID", "bystanderContainer"]

    static func isKnown(_ name: String) -> Bool { known.contains { $0.name == name } }

    /// The names used in `text`, in order; an unterminated `${` yields the rest as a name
    /// (which is then unknown and reported).
    static func names(in text: String) -> [String] {
        var out: [String] = []
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            let after = rest[start.upperBound...]
            guard let end = after.firstIndex(of: "}") else {
                out.append(String(after))
                break
            }
            out.append(String(after[..<end]))
            rest = after[after.index(after: end)...]
        }
        return out
    }

    /// `text` with every `${NAME}` replaced from `values`; unknown names stay as written
    /// (the parser refuses them before anything runs).
    static func substitute(_ text: String, _ values: [String: String]) -> String {
        var result = text
        for name in names(in: text) {
            if let v = values[name] { result = result.replacingOccurrences(of: "${\(name)}", with: v) }
        }
        return result
    }
}
