/// What an extension point allows of background transfers (Docs/transfers.md, "Limits"):
/// the policy file's `backgroundTransfers:` mapping.
public struct TransferPolicy: Sendable, Hashable {
    /// Whether its extensions may hand appexd transfers at all (they also need the host
    /// network: `network: entitled` and the entitlement).
    public var allowed = true
    /// One extension's transfers running at once; the others wait.
    public var concurrent = 2
    /// One extension's transfers not yet over; a further one is refused (`transfer-limit`).
    public var pending = 16
    /// Bytes one extension's transfers may move in a day; past it, `transfer-quota`.
    public var quotaBytes: Int64 = 256 << 20
    /// How long one transfer may take, restarts included; past it, `transfer-timeout`.
    public var timeLimit: Duration = .seconds(3600)

    /// The span the quota counts over.
    public static let quotaWindow: Duration = .seconds(86_400)

    public init() {}

    /// Keys of `backgroundTransfers:`.
    public static let keys: Set<String> = ["allowed", "concurrent", "pending", "quota", "timeLimit"]
}
