extension Supervisor {
    /// `appex transfers cancel SELECTOR`: a transfer id in decimal, a bundle identifier (every
    /// transfer of that extension), or `bundle/session` (bundle identifiers hold no `/`).
    public func cancelTransfers(selector: String, by who: String) async -> Int {
        if let id = Int64(selector) { return await cancelTransfers(bundleIdentifier: nil, transferID: id, by: who) }
        if let slash = selector.firstIndex(of: "/") {
            return await cancelTransfers(bundleIdentifier: String(selector[..<slash]),
                                         sessionIdentifier: String(selector[selector.index(after: slash)...]), by: who)
        }
        return await cancelTransfers(bundleIdentifier: selector, by: who)
    }
}
