extension Supervisor {
    /// `appex transfers cancel SELECTOR`: a transfer id in decimal, a bundle identifier (every
    /// transfer of that extension), or `bundle/session` (bundle identifiers hold no `/`).
    /// `app`: only that containing app's extensions' transfers.
    public func cancelTransfers(selector: String, ofApp app: String? = nil, by who: String) async -> Int {
        if let id = Int64(selector) { return await cancelTransfers(bundleIdentifier: nil, transferID: id, ofApp: app, by: who) }
        if let slash = selector.firstIndex(of: "/") {
            return await cancelTransfers(bundleIdentifier: String(selector[..<slash]),
                                         sessionIdentifier: String(selector[selector.index(after: slash)...]), ofApp: app, by: who)
        }
        return await cancelTransfers(bundleIdentifier: selector, ofApp: app, by: who)
    }
}
