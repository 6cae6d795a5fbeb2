import Foundation

/// Reading policy directories: YAML (Yams, which needs Foundation), so not in AppexPolicyCore.
extension PolicySet {
    /// Loads `directories` in order: each holds optional `defaults.yaml`, `extension-points/*.yaml`
    /// and `syscall-groups/*.yaml`. Throws `PolicyErrors` listing every problem found.
    public static func load(directories: [String]) throws -> PolicySet {
        try PolicyDirectoryTrust.check(directories)
        var errors: [PolicyError] = []
        var defaultLayers: [PolicyLayer] = []
        var pointLayers: [PolicyLayer] = []
        var groups: [String: SyscallGroup] = [:]
        var brokenGroups = Set<String>()

        func collect(_ body: () throws -> Void) {
            do { try body() } catch let e as PolicyError { errors.append(e) } catch let e as PolicyErrors { errors += e.errors } catch {
                errors.append(PolicyError(file: "?", message: "\(error)"))
            }
        }

        for dir in directories {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
                errors.append(PolicyError(file: dir, message: "policy directory does not exist"))
                continue
            }
            let defaultsFile = (dir as NSString).appendingPathComponent("defaults.yaml")
            if FileManager.default.fileExists(atPath: defaultsFile) {
                collect {
                    let layer = try PolicyLayer.parse(try read(defaultsFile), file: defaultsFile)
                    errors += layer.errors
                    defaultLayers.append(layer)
                }
            }
            var pointsInThisDir: [String: String] = [:]
            for file in yamlFiles(in: (dir as NSString).appendingPathComponent("extension-points")) {
                collect {
                    let layer = try PolicyLayer.parse(try read(file), file: file)
                    errors += layer.errors
                    guard let points = layer.extensionPoints, !points.isEmpty else {
                        throw PolicyError(
                            file: file, key: "extensionPoints", message: "an extension-point policy must name at least one extension point")
                    }
                    for point in points {
                        if let other = pointsInThisDir[point] {
                            throw PolicyError(file: file, key: "extensionPoints", message: "\"\(point)\" is already covered by \(other)")
                        }
                        pointsInThisDir[point] = file
                    }
                    pointLayers.append(layer)
                }
            }
            for file in yamlFiles(in: (dir as NSString).appendingPathComponent("syscall-groups")) {
                let errorsBefore = errors.count
                defer {
                    // A group file that failed names no group; references to it by its file
                    // name would only repeat the same mistake.
                    if errors.count > errorsBefore { brokenGroups.insert(((file as NSString).lastPathComponent as NSString).deletingPathExtension) }
                }
                collect {
                    let group = try SyscallGroup.parse(try read(file), file: file)
                    if let existing = groups[group.name],
                        (existing.file as NSString).deletingLastPathComponent == (file as NSString).deletingLastPathComponent
                    {
                        throw PolicyError(file: file, key: "name", message: "group \"\(group.name)\" is already defined in \(existing.file)")
                    }
                    groups[group.name] = group  // a later directory redefines a group
                }
            }
        }

        // Every named group must exist (checked on every layer that parsed, so one broken
        // file does not hide the mistakes in the others).
        for layer in defaultLayers + pointLayers {
            for (denial, node) in layer.deny where groups[denial.group] == nil && !brokenGroups.contains(denial.group) {
                errors.append(node.error("unknown syscall group \"\(denial.group)\" (known: \(groups.keys.sorted().joined(separator: ", ")))"))
            }
            for (name, node) in layer.allow where groups[name] == nil && !brokenGroups.contains(name) {
                errors.append(node.error("unknown syscall group \"\(name)\""))
            }
        }

        var defaults: ExtensionPointPolicy?
        if defaultLayers.isEmpty {
            errors.append(PolicyError(file: directories.first ?? "?", message: "no defaults.yaml in any policy directory"))
        } else {
            collect { defaults = try completeDefaults(defaultLayers) }
        }
        guard let defaults, errors.isEmpty else { throw PolicyErrors(errors: errors) }

        var byPoint: [String: ExtensionPointPolicy] = [:]
        for layer in pointLayers {
            for point in layer.extensionPoints ?? [] {
                var policy = byPoint[point] ?? defaults
                policy = layer.apply(to: policy)
                policy.extensionPoints = layer.extensionPoints ?? [point]
                byPoint[point] = policy
            }
        }
        for policy in [defaults] + Array(byPoint.values) {
            errors += limitErrors(policy)
        }
        if !errors.isEmpty { throw PolicyErrors(errors: errors) }
        return PolicySet(defaults: defaults, byExtensionPoint: byPoint, groups: groups, directories: directories)
    }

    static func completeDefaults(_ layers: [PolicyLayer]) throws -> ExtensionPointPolicy {
        let first = layers[0]
        func need<T>(_ value: T?, _ key: String) throws -> T {
            guard let value else { throw PolicyError(file: first.file, key: key, message: "defaults must set this key") }
            return value
        }
        var policy = ExtensionPointPolicy(
            extensionPoints: [], title: try need(first.title, "title"),
            memory: MemoryPolicy(
                activeHardLimit: try need(first.activeHardLimit, "memory.activeHardLimit"),
                activeSoftLimit: try need(first.activeSoftLimit, "memory.activeSoftLimit"),
                inactiveHardLimit: try need(first.inactiveHardLimit, "memory.inactiveHardLimit"),
                inactiveSoftLimit: try need(first.inactiveSoftLimit, "memory.inactiveSoftLimit"),
                pageCacheAllowance: try need(first.pageCacheAllowance, "memory.pageCacheAllowance"),
                source: first.memorySource ?? ""),
            jetsamBand: try need(first.jetsamBand, "jetsamBand"),
            idleBand: try need(first.idleBand, "idleBand"),
            launchDeadline: try need(first.launchDeadline, "launchDeadline"),
            requestTimeout: try need(first.requestTimeout, "requestTimeout"),
            idleTimeout: try need(first.idleTimeout, "idleTimeout"),
            maxInstances: try need(first.maxInstances, "maxInstances"),
            pingInterval: try need(first.pingInterval, "pingInterval"),
            // Optional: without it idle instances are pinged as often as busy ones.
            idlePingInterval: try first.idlePingInterval ?? need(first.pingInterval, "pingInterval"),
            unresponsiveTimeout: try need(first.unresponsiveTimeout, "unresponsiveTimeout"),
            pidsLimit: try need(first.pidsLimit, "pidsLimit"),
            openFilesLimit: try need(first.openFilesLimit, "openFilesLimit"),
            grantableEntitlements: first.grantableEntitlements ?? [],
            readOnlyPaths: try need(first.readOnlyPaths, "filesystem.readOnly"),
            network: first.network ?? .none,
            deniedSyscalls: [], files: [])
        for layer in layers { policy = layer.apply(to: policy) }
        return policy
    }

    static func limitErrors(_ p: ExtensionPointPolicy) -> [PolicyError] {
        var out: [PolicyError] = []
        let file = p.files.last ?? "?"
        if p.memory.activeSoftLimit > p.memory.activeHardLimit {
            out.append(
                PolicyError(
                    file: file, key: "memory.activeSoftLimit",
                    message: "\(p.memory.activeSoftLimit) is above the hard limit \(p.memory.activeHardLimit)"))
        }
        if p.memory.inactiveSoftLimit > p.memory.inactiveHardLimit {
            out.append(
                PolicyError(
                    file: file, key: "memory.inactiveSoftLimit",
                    message: "\(p.memory.inactiveSoftLimit) is above the hard limit \(p.memory.inactiveHardLimit)"))
        }
        if p.memory.activeHardLimit.bytes < 1 << 20 {
            out.append(
                PolicyError(
                    file: file, key: "memory.activeHardLimit", message: "\(p.memory.activeHardLimit) is below 1MiB; no process can start in that"))
        }
        return out
    }

    static func read(_ file: String) throws -> String {
        do { return try String(contentsOfFile: file, encoding: .utf8) } catch {
            throw PolicyError(file: file, message: "cannot read: \((error as NSError).localizedDescription)")
        }
    }

    static func yamlFiles(in dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [])
            .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
            .sorted()
            .map { (dir as NSString).appendingPathComponent($0) }
    }
}
