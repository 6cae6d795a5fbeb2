/// One policy file as written: every field optional, applied over the layer beneath it
/// (`defaults.yaml`, then an extension point's file, then a `--policy-dir` overlay).
struct PolicyLayer {
    var file: String
    var extensionPoints: [String]?
    var title: String?
    var activeHardLimit: ByteSize?
    var activeSoftLimit: ByteSize?
    var inactiveHardLimit: ByteSize?
    var inactiveSoftLimit: ByteSize?
    var pageCacheAllowance: ByteSize?
    var memorySource: String?
    var jetsamBand: JetsamBand?
    var idleBand: JetsamBand?
    var launchDeadline: Duration?
    var requestTimeout: Duration?
    var idleTimeout: Duration?
    var maxInstances: Int?
    var pingInterval: Duration?
    var idlePingInterval: Duration?
    var unresponsiveTimeout: Duration?
    var pidsLimit: Int?
    var openFilesLimit: Int?
    var grantableEntitlements: [String]?
    var readOnlyPaths: [String]?
    var network: NetworkAccess?
    var transfersAllowed: Bool?
    var transfersConcurrent: Int?
    var transfersPending: Int?
    var transfersQuota: ByteSize?
    var transfersTimeLimit: Duration?
    /// Denials added or re-actioned by this layer, with the node that named each group.
    var deny: [(SyscallDenial, YAMLNode)] = []
    /// Groups this layer lifts from the layers beneath.
    var allow: [(String, YAMLNode)] = []
    /// Problems found in this file. A layer with problems is still returned, so the checks
    /// across files (unknown groups) can report on the parts that did parse.
    var errors: [PolicyError] = []

    static let topKeys: Set<String> = [
        "extensionPoints", "title", "memory", "jetsamBand", "idleBand", "launchDeadline", "requestTimeout",
        "idleTimeout", "maxInstances", "pingInterval", "idlePingInterval", "unresponsiveTimeout", "pidsLimit", "openFilesLimit", "entitlements",
        "filesystem", "network", "syscalls",
        "backgroundTransfers",
    ]
    static let memoryKeys: Set<String> = [
        "activeHardLimit", "activeSoftLimit", "inactiveHardLimit", "inactiveSoftLimit", "pageCacheAllowance", "source",
    ]

    /// Parses a file, collecting every error into `errors`; throws only when the file is not
    /// a YAML mapping at all.
    static func parse(_ text: String, file: String) throws -> PolicyLayer {
        let root = try YAMLNode.parse(text, file: file)
        var layer = PolicyLayer(file: file)
        var errors: [PolicyError] = []
        func attempt(_ body: () throws -> Void) {
            do { try body() } catch let e as PolicyError { errors.append(e) } catch let e as PolicyErrors { errors += e.errors } catch {
                errors.append(PolicyError(file: file, message: "\(error)"))
            }
        }
        for (key, node) in try root.mapping(allowed: topKeys) {
            attempt {
                switch key {
                case "extensionPoints": layer.extensionPoints = try node.strings()
                case "title": layer.title = try node.string()
                case "memory":
                    for (mk, mn) in try node.mapping(allowed: memoryKeys) {
                        attempt {
                            switch mk {
                            case "activeHardLimit": layer.activeHardLimit = try mn.byteSize()
                            case "activeSoftLimit": layer.activeSoftLimit = try mn.byteSize()
                            case "inactiveHardLimit": layer.inactiveHardLimit = try mn.byteSize()
                            case "inactiveSoftLimit": layer.inactiveSoftLimit = try mn.byteSize()
                            case "pageCacheAllowance": layer.pageCacheAllowance = try mn.byteSize()
                            case "source": layer.memorySource = try mn.string()
                            default: break
                            }
                        }
                    }
                case "jetsamBand": layer.jetsamBand = try band(node)
                case "idleBand": layer.idleBand = try band(node)
                case "launchDeadline": layer.launchDeadline = try node.duration()
                case "requestTimeout": layer.requestTimeout = try node.duration()
                case "idleTimeout": layer.idleTimeout = try node.duration()
                case "maxInstances": layer.maxInstances = try node.int(in: 1...1024)
                case "pingInterval": layer.pingInterval = try node.duration()
                case "idlePingInterval": layer.idlePingInterval = try node.duration()
                case "unresponsiveTimeout": layer.unresponsiveTimeout = try node.duration()
                case "pidsLimit": layer.pidsLimit = try node.int(in: 1...65536)
                case "openFilesLimit": layer.openFilesLimit = try node.int(in: 16...1_048_576)
                case "entitlements":
                    for (ek, en) in try node.mapping(allowed: ["grantable"]) where ek == "grantable" {
                        layer.grantableEntitlements = try en.strings()
                    }
                case "filesystem":
                    for (fk, fn) in try node.mapping(allowed: ["readOnly"]) where fk == "readOnly" {
                        var paths: [String] = []
                        for entry in try fn.sequence() {
                            let p = try entry.string()
                            guard p.hasPrefix("/"), !p.split(separator: "/").contains(".."), !p.contains("\0") else {
                                throw entry.error("\"\(p)\" must be an absolute path without \"..\"")
                            }
                            paths.append(p)
                        }
                        layer.readOnlyPaths = paths
                    }
                case "network":
                    let s = try node.string()
                    guard let n = NetworkAccess(rawValue: s) else { throw node.error("expected none or entitled, found \"\(s)\"") }
                    layer.network = n
                case "backgroundTransfers":
                    for (tk, tn) in try node.mapping(allowed: TransferPolicy.keys) {
                        attempt {
                            switch tk {
                            case "allowed": layer.transfersAllowed = try tn.bool()
                            case "concurrent": layer.transfersConcurrent = try tn.int(in: 1...64)
                            case "pending": layer.transfersPending = try tn.int(in: 1...4096)
                            case "quota": layer.transfersQuota = try tn.byteSize()
                            case "timeLimit": layer.transfersTimeLimit = try tn.duration()
                            default: break
                            }
                        }
                    }
                case "syscalls":
                    for (sk, sn) in try node.mapping(allowed: ["deny", "allow"]) {
                        if sk == "deny" {
                            for entry in try sn.sequence() {
                                attempt { layer.deny.append(try denial(entry)) }
                            }
                        } else {
                            for entry in try sn.sequence() { layer.allow.append((try entry.string(), entry)) }
                        }
                    }
                default: break
                }
            }
        }
        layer.errors = errors
        return layer
    }

    static func band(_ node: YAMLNode) throws -> JetsamBand {
        let s = try node.string()
        if let b = JetsamBand(name: s) { return b }
        if let v = Int(s), let b = JetsamBand(value: v) { return b }
        throw node.error("unknown jetsam band \"\(s)\" (known: \(JetsamBand.named.map { "\($0.0) (\($0.1))" }.joined(separator: ", ")))")
    }

    static func denial(_ node: YAMLNode) throws -> (SyscallDenial, YAMLNode) {
        var group: (String, YAMLNode)?
        var actionName = "errno"
        var actionNode = node
        var errnoValue: Int32 = 1  // EPERM: "this API is unavailable to extensions"
        for (k, v) in try node.mapping(allowed: ["group", "action", "errno"]) {
            switch k {
            case "group": group = (try v.string(), v)
            case "action":
                actionName = try v.string()
                actionNode = v
            case "errno":
                let name = try v.string()
                guard let e = ErrnoNames.value(name) else {
                    throw v.error("unknown errno \"\(name)\" (known: \(ErrnoNames.allNames.joined(separator: ", ")))")
                }
                errnoValue = e
            default: break
            }
        }
        guard let group else { throw node.error("missing required key \"group\"") }
        let action: SyscallAction
        switch actionName {
        case "errno": action = .errno(errnoValue)
        case "kill": action = .kill
        case "log": action = .log
        case "notify": action = .notify(errno: errnoValue)
        default: throw actionNode.error("unknown action \"\(actionName)\" (known: errno, kill, log, notify)")
        }
        return (SyscallDenial(group: group.0, action: action), group.1)
    }

    /// This layer applied over `base`.
    func apply(to base: ExtensionPointPolicy) -> ExtensionPointPolicy {
        var p = base
        if let v = extensionPoints { p.extensionPoints = v }
        if let v = title { p.title = v }
        if let v = activeHardLimit { p.memory.activeHardLimit = v }
        if let v = activeSoftLimit { p.memory.activeSoftLimit = v }
        if let v = inactiveHardLimit { p.memory.inactiveHardLimit = v }
        if let v = inactiveSoftLimit { p.memory.inactiveSoftLimit = v }
        if let v = pageCacheAllowance { p.memory.pageCacheAllowance = v }
        if let v = memorySource { p.memory.source = v }
        if let v = jetsamBand { p.jetsamBand = v }
        if let v = idleBand { p.idleBand = v }
        if let v = launchDeadline { p.launchDeadline = v }
        if let v = requestTimeout { p.requestTimeout = v }
        if let v = idleTimeout { p.idleTimeout = v }
        if let v = maxInstances { p.maxInstances = v }
        if let v = pingInterval { p.pingInterval = v }
        if let v = idlePingInterval { p.idlePingInterval = v }
        if let v = unresponsiveTimeout { p.unresponsiveTimeout = v }
        if let v = pidsLimit { p.pidsLimit = v }
        if let v = openFilesLimit { p.openFilesLimit = v }
        if let v = grantableEntitlements { p.grantableEntitlements = v }
        if let v = readOnlyPaths { p.readOnlyPaths = v }
        if let v = network { p.network = v }
        if let v = transfersAllowed { p.transfers.allowed = v }
        if let v = transfersConcurrent { p.transfers.concurrent = v }
        if let v = transfersPending { p.transfers.pending = v }
        if let v = transfersQuota { p.transfers.quotaBytes = v.bytes }
        if let v = transfersTimeLimit { p.transfers.timeLimit = v }
        let lifted = Set(allow.map(\.0))
        p.deniedSyscalls.removeAll { lifted.contains($0.group) }
        for (d, _) in deny {
            p.deniedSyscalls.removeAll { $0.group == d.group }
            p.deniedSyscalls.append(d)
        }
        p.files.append(file)
        return p
    }
}
