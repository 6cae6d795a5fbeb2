extension Array where Element == String {
    /// The lines joined by "\n", by a loop. `joined(separator:)` would do, but its generic
    /// first use costs a conformance scan in a fresh process, and `appex run` joins
    /// lines several times (the policy cache's file name, the seccomp rule list's canonical
    /// form, its report).
    package var newlineJoined: String {
        var out = ""
        for (i, line) in enumerated() {
            if i > 0 { out += "\n" }
            out += line
        }
        return out
    }
}
