import AppexKillReason
import AppexPolicy
import Foundation

/// Every mistake found in a test file (checking goes on past the first one).
package struct PolicyTestErrors: Error, CustomStringConvertible {
    package var errors: [PolicyError]
    init(_ errors: [PolicyError]) { self.errors = errors }
    package var description: String { errors.map(\.description).joined(separator: "\n") }
}

/// Reads policy test files (Docs/policy-tests.md) with the policy files' rules: every mistake
/// is a `PolicyError` with file, line and dotted key, an unknown key is an error, and checking
/// goes on past the first mistake so one run lists them all.
package struct PolicyTestParser {
    let catalog: PolicyTestCatalog

    package init(catalog: PolicyTestCatalog) { self.catalog = catalog }

    static let topKeys: Set<String> = ["title", "extensionPoint", "extensionPoints", "policy", "bystander", "cases"]
    static let caseKeys: Set<String> = [
        "name", "extensionPoint", "extensionPoints", "policy", "action", "request", "probeConf", "limits",
        "expect", "errno", "by", "reason", "within", "output", "path", "timeout", "arch",
    ]
    /// Kill reasons `appex run` reports, and those only the supervisor gives.
    static let runReasons: [KillReason] = [.perProcessLimit, .seccompViolation, .crashed, .runTimeout]
    static let supervisorReasons: [KillReason] = [
        .perProcessLimit, .seccompViolation, .crashed, .launchTimeout,
        .requestTimeout, .unresponsive, .memoryPressure, .protocolError,
    ]
    /// probe.conf keys of the probe extension (Docs/probe-extension.md) and their ranges.
    static let probeConfKeys: [String: ClosedRange<Int>] = [
        "sleep-before-checkin-ms": 0...3_600_000, "crash-before-checkin": 0...1,
        "exit-before-checkin": 0...255, "ignore-pings": 0...1,
    ]
    static let defaultTimeout: Duration = .seconds(10)
    /// Test files are a few kilobytes; anything this big is the wrong file.
    static let maxSize = 1 << 20

    /// The test files among `paths`: files as given, and the `.yaml`/`.yml` files directly
    /// in each directory, sorted. A path that is neither is an error.
    package static func files(in paths: [String]) throws -> [String] {
        var out: [String] = []
        for path in paths {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
                throw PolicyError(file: path, message: "no such file or directory")
            }
            if isDir.boolValue {
                let names = try FileManager.default.contentsOfDirectory(atPath: path)
                    .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted()
                if names.isEmpty { throw PolicyError(file: path, message: "no .yaml test files in this directory") }
                out += names.map { (path as NSString).appendingPathComponent($0) }
            } else {
                out.append(path)
            }
        }
        return out.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
    }

    /// Parses one file; throws `PolicyTestErrors` listing every mistake.
    package func parse(file: String) throws -> PolicyTestFile {
        let text = try Self.read(file)
        let root = try YAMLNode.parse(text, file: file)
        var errors: [PolicyError] = []
        func attempt<T>(_ body: () throws -> T) -> T? {
            do { return try body() } catch let e as PolicyError { errors.append(e) } catch let e as PolicyErrors { errors += e.errors } catch let e
                as PolicyTestErrors
            { errors += e.errors } catch {
                errors.append(PolicyError(file: file, message: "\(error)"))
            }
            return nil
        }

        var title: String?
        var bystander = false
        var defaults = Defaults()
        var caseNodes: [YAMLNode] = []
        var casesNode: YAMLNode?
        for (key, node) in try root.mapping(allowed: Self.topKeys) {
            attempt {
                switch key {
                case "title": title = try node.string()
                case "bystander": bystander = try node.bool()
                case "extensionPoint":
                    defaults.points = [try node.string()]
                    defaults.pointsNode = node
                case "extensionPoints":
                    defaults.points = try pointList(node)
                    defaults.pointsNode = node
                case "policy":
                    defaults.policy = try policyPath(node, relativeTo: file)
                    defaults.policyNode = node
                case "cases":
                    casesNode = node
                    caseNodes = try node.sequence()
                default: break
                }
            }
        }
        guard let casesNode else { throw PolicyTestErrors(errors + [root.error("missing required key \"cases\"")]) }
        if caseNodes.isEmpty && errors.isEmpty { errors.append(casesNode.error("no cases")) }

        var cases: [PolicyTestCase] = []
        var names: [String: Int] = [:]
        for node in caseNodes {
            guard let c = attempt({ try parseCase(node, file: file, defaults: defaults, bystander: bystander) }) else { continue }
            if let first = names[c.name] {
                let nameNode = (try? node.mapping(allowed: Self.caseKeys))?.first { $0.0 == "name" }?.1 ?? node
                errors.append(nameNode.error("duplicate case name \"\(c.name)\" (first at line \(first))"))
                continue
            }
            names[c.name] = c.line ?? 0
            cases.append(c)
        }
        if !errors.isEmpty {
            // A file-level mistake (a policy file that does not load) shows up once per case.
            var seen = Set<String>()
            throw PolicyTestErrors(errors.filter { seen.insert($0.description).inserted })
        }
        return PolicyTestFile(path: file, title: title, bystander: bystander, cases: cases)
    }

    /// File-level defaults each case inherits unless it names its own.
    struct Defaults {
        var points: [String] = []
        var pointsNode: YAMLNode?
        var policy: String?
        var policyNode: YAMLNode?
    }

    func parseCase(_ node: YAMLNode, file: String, defaults: Defaults, bystander: Bool) throws -> PolicyTestCase {
        var errors: [PolicyError] = []
        func attempt(_ body: () throws -> Void) {
            do { try body() } catch let e as PolicyError { errors.append(e) } catch let e as PolicyErrors { errors += e.errors } catch let e
                as PolicyTestErrors
            { errors += e.errors } catch {
                errors.append(node.error("\(error)"))
            }
        }
        var fields: [String: YAMLNode] = [:]
        for (key, value) in try node.mapping(allowed: Self.caseKeys) { fields[key] = value }

        var name = ""
        var action: [String]?
        var request: [String]?
        var probeConf: [(key: String, value: Int)] = []
        var limits = PolicyTestLimits()
        var timeout = Self.defaultTimeout
        var architectures: [String]?
        attempt {
            guard let n = fields["name"] else { throw node.error("missing required key \"name\"") }
            name = try n.string()
            if name.trimmingCharacters(in: .whitespaces).isEmpty { throw n.error("a case needs a name") }
        }
        attempt { if let n = fields["action"] { action = try words(n) } }
        attempt { if let n = fields["request"] { request = try requestWords(n) } }
        attempt { if let n = fields["probeConf"] { probeConf = try parseProbeConf(n) } }
        attempt { if let n = fields["limits"] { limits = try parseLimits(n) } }
        attempt {
            if let n = fields["timeout"] {
                timeout = try n.duration()
                if timeout <= .zero { throw n.error("must be longer than 0ms") }
            }
        }
        attempt {
            if let n = fields["arch"] {
                architectures = (try? n.sequence()) != nil ? try n.strings() : [try n.string()]
            }
        }

        // Where it runs: its own extension points or policy file, else the file's.
        var points = defaults.points
        var pointsNode = defaults.pointsNode
        var policy = defaults.policy
        if fields["extensionPoint"] != nil || fields["extensionPoints"] != nil || fields["policy"] != nil {
            points = []
            pointsNode = nil
            policy = nil
        }
        attempt {
            if fields["extensionPoint"] != nil && fields["extensionPoints"] != nil {
                throw fields["extensionPoints"]!.error("give extensionPoint or extensionPoints, not both")
            }
            if let n = fields["extensionPoint"] {
                points = [try n.string()]
                pointsNode = n
            }
            if let n = fields["extensionPoints"] {
                points = try pointList(n)
                pointsNode = n
            }
            if let n = fields["policy"] { policy = try policyPath(n, relativeTo: file) }
        }
        attempt {
            points = try resolvePoints(
                points, node: pointsNode, policy: policy,
                policyNode: fields["policy"] ?? defaults.policyNode, caseNode: node)
        }

        var expectation = PolicyTestExpectation.allowed(output: nil)
        attempt { expectation = try parseExpectation(fields, node: node) }

        // Which probe: appex-probe (`action`) through `appex run`'s machinery, or the probe
        // extension (`request`, `probeConf`) through a supervisor.
        attempt {
            let supervisorKeys = ["request", "probeConf"].filter { fields[$0] != nil }
            if action != nil, let k = supervisorKeys.first {
                throw fields[k]!.error("\(k) is for the probe extension (through the supervisor); this case already has an action for appex-probe")
            }
            let supervisor = !supervisorKeys.isEmpty || expectation.needsSupervisor
            if supervisor {
                switch expectation {
                case .denied, .invisible, .readOnly:
                    throw (fields["expect"] ?? node).error("expect: \(expectation.kind) needs an action for appex-probe, not the probe extension")
                case .warned where request == nil:
                    throw node.error("expect: warned needs a request that uses memory, e.g. request: allocate 20")
                default: break
                }
                if case .killed(let reason, _) = expectation, !Self.supervisorReasons.contains(reason) {
                    throw fields["reason"]!.error(
                        "\"\(reason)\" is not a reason the supervisor gives (known: \(Self.supervisorReasons.map(\.rawValue).joined(separator: ", ")))"
                    )
                }
            } else {
                if action == nil {
                    switch expectation {
                    case .invisible, .readOnly: break  // `path` stands in for the action
                    default: throw node.error("missing required key \"action\" (appex-probe's arguments)")
                    }
                }
                if case .killed(let reason, _) = expectation, !Self.runReasons.contains(reason) {
                    throw fields["reason"]!.error(
                        "\"\(reason)\" needs the supervisor (a request); appex-probe runs report: \(Self.runReasons.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                if let n = fields["limits"], limits.launchDeadline != nil {
                    throw n.error("launchDeadline applies only to cases through the supervisor (request, probeConf, launch-timeout, warned)")
                }
            }
        }

        // The path shorthand: the probe attempt that shows invisibility or a read-only mount.
        attempt {
            if let n = fields["path"] {
                let path = try n.string()
                guard path.hasPrefix("/") else { throw n.error("\"\(path)\" must be an absolute path") }
                switch expectation {
                case .invisible: action = ["exists", path]
                case .readOnly: action = PolicyTestProbeRunner.readOnlyAttempt(path)
                default: throw n.error("path is only for expect: invisible or read-only")
                }
                if fields["action"] != nil { throw n.error("give path or action, not both") }
            } else if action == nil, expectation == .invisible || expectation == .readOnly {
                throw node.error("expect: \(expectation.kind) needs a path (or an action)")
            }
        }

        // Variables: known names only, and the bystander's only where the file runs one.
        attempt {
            let c = PolicyTestCase(
                file: file, line: node.line, name: name, extensionPoints: [], policyFile: nil,
                action: action, request: request, probeConf: [], limits: limits,
                expectation: expectation, timeout: timeout, architectures: nil)
            for v in c.variables.sorted() {
                let at = fields["action"] ?? fields["request"] ?? fields["output"] ?? node
                guard PolicyTestVariables.isKnown(v) else {
                    throw at.error("unknown variable ${\(v)} (known: \(PolicyTestVariables.known.map(\.name).joined(separator: ", ")))")
                }
                if PolicyTestVariables.needsBystander.contains(v) && !bystander {
                    throw at.error("${\(v)} needs a bystander: set bystander: true at the top of the file")
                }
            }
        }

        if !errors.isEmpty { throw PolicyTestErrors(errors) }
        return PolicyTestCase(
            file: file, line: node.line, name: name, extensionPoints: points, policyFile: policy,
            action: action, request: request, probeConf: probeConf, limits: limits,
            expectation: expectation, timeout: timeout, architectures: architectures)
    }

    // MARK: pieces

    /// Arguments as a list, or as one string split at spaces.
    func words(_ node: YAMLNode) throws -> [String] {
        let list: [String]
        if (try? node.sequence()) != nil {
            list = try node.strings()
        } else {
            list = try node.string().split(whereSeparator: \.isWhitespace).map(String.init)
        }
        guard !list.isEmpty, !list[0].isEmpty else { throw node.error("expected the probe's action and its arguments") }
        return list
    }

    func requestWords(_ node: YAMLNode) throws -> [String] {
        let list = try words(node)
        guard list.count <= 2 else {
            throw node.error("a request is probe.action and at most one probe.arg, found \(list.count) words")
        }
        return list
    }

    func pointList(_ node: YAMLNode) throws -> [String] {
        if (try? node.sequence()) == nil, try node.string() == "all" { return ["all"] }
        let list = try node.strings()
        if list.isEmpty { throw node.error("an empty list runs nothing") }
        return list
    }

    func policyPath(_ node: YAMLNode, relativeTo file: String) throws -> String {
        let p = try node.string()
        let base = (file as NSString).deletingLastPathComponent
        let path = p.hasPrefix("/") ? p : (base as NSString).appendingPathComponent(p)
        let full = URL(fileURLWithPath: path).standardizedFileURL.path
        guard FileManager.default.fileExists(atPath: full) else { throw node.error("policy file \(full) does not exist") }
        return full
    }

    /// The extension points a case runs under: `all` expanded, each checked against the
    /// policies (a typo must not silently run under the defaults).
    func resolvePoints(
        _ points: [String], node: YAMLNode?, policy: String?, policyNode: YAMLNode?,
        caseNode: YAMLNode
    ) throws -> [String] {
        var known = Set(catalog.base.byExtensionPoint.keys)
        var fileFirst: String?
        if let policy {
            do {
                let loaded = try catalog.load(policyFile: policy)
                known = Set(loaded.set.byExtensionPoint.keys)
                fileFirst = loaded.points.first
                guard fileFirst != nil else {
                    throw (policyNode ?? caseNode).error("\(policy) names no extension point (extensionPoints)")
                }
            } catch let e as PolicyErrors {
                throw PolicyTestErrors([(policyNode ?? caseNode).error("policy file \(policy) does not load:")] + e.errors)
            } catch let e as PolicyError {
                throw PolicyTestErrors([(policyNode ?? caseNode).error("policy file \(policy) does not load:"), e])
            }
        }
        if points == ["all"] { return catalog.allExtensionPoints }
        if points.isEmpty {
            if let fileFirst { return [fileFirst] }
            throw caseNode.error("name an extensionPoint, extensionPoints or a policy file (here or at the top of the file)")
        }
        for p in points where !known.contains(p) {
            throw (node ?? caseNode).error("no policy covers extension point \"\(p)\"")
        }
        return points
    }

    func parseExpectation(_ fields: [String: YAMLNode], node: YAMLNode) throws -> PolicyTestExpectation {
        guard let n = fields["expect"] else { throw node.error("missing required key \"expect\"") }
        let kind = try n.string()
        guard PolicyTestExpectation.kinds.contains(kind) else {
            throw n.error("unknown outcome \"\(kind)\" (known: \(PolicyTestExpectation.kinds.joined(separator: ", ")))")
        }
        // Keys that qualify one outcome only.
        let owners: [String: [String]] = [
            "errno": ["denied"], "by": ["denied"], "reason": ["killed"], "within": ["killed", "launch-timeout"],
            "output": ["allowed"],
        ]
        for (key, kinds) in owners.sorted(by: { $0.key < $1.key }) where fields[key] != nil && !kinds.contains(kind) {
            throw fields[key]!.error("\(key) is only for expect: \(kinds.joined(separator: " or "))")
        }
        let within = try fields["within"].map { try $0.duration() }
        switch kind {
        case "allowed": return .allowed(output: try fields["output"].map { try $0.string() })
        case "denied":
            guard let e = fields["errno"] else { throw n.error("expect: denied needs errno (a name such as EPERM, or a list)") }
            let names = (try? e.sequence()) != nil ? try e.strings() : [try e.string()]
            if names.isEmpty { throw e.error("name at least one errno") }
            for name in names where ProbeErrno.value(name) == nil {
                throw e.error("unknown errno \"\(name)\" (the names appex-probe prints: EPERM, ENOENT, EACCES, …)")
            }
            var by = PolicyTestExpectation.Attribution.filter
            if let b = fields["by"] {
                let s = try b.string()
                guard let a = PolicyTestExpectation.Attribution(rawValue: s) else {
                    throw b.error("expected filter, kernel or any, found \"\(s)\"")
                }
                by = a
            }
            return .denied(errnos: names, by: by)
        case "killed":
            guard let r = fields["reason"] else { throw n.error("expect: killed needs reason (e.g. seccomp-violation, per-process-limit)") }
            let reason = KillReason(rawValue: try r.string())
            guard (Self.runReasons + Self.supervisorReasons).contains(reason) else {
                let known = Set((Self.runReasons + Self.supervisorReasons).map(\.rawValue)).sorted()
                throw r.error("unknown kill reason \"\(reason)\" (known: \(known.joined(separator: ", ")))")
            }
            return .killed(reason: reason, within: within)
        case "launch-timeout": return .launchTimeout(within: within)
        case "warned": return .warned
        case "invisible": return .invisible
        default: return .readOnly
        }
    }

    func parseLimits(_ node: YAMLNode) throws -> PolicyTestLimits {
        var l = PolicyTestLimits()
        for (key, v) in try node.mapping(allowed: PolicyTestLimits.keys) {
            switch key {
            case "memory":
                l.memory = try v.byteSize()
                if l.memory!.bytes < 1 << 20 { throw v.error("\(l.memory!) is below 1MiB; no process can start in that") }
            case "memorySoft": l.memorySoft = try v.byteSize()
            case "pids": l.pids = try v.int(in: 1...65536)
            case "files": l.files = try v.int(in: 16...1_048_576)
            case "launchDeadline": l.launchDeadline = try v.duration()
            default: break
            }
        }
        if let soft = l.memorySoft, let hard = l.memory, soft > hard {
            throw node.error("memorySoft \(soft) is above memory \(hard)")
        }
        return l
    }

    func parseProbeConf(_ node: YAMLNode) throws -> [(key: String, value: Int)] {
        var out: [(key: String, value: Int)] = []
        for (key, v) in try node.mapping(allowed: Set(Self.probeConfKeys.keys)) {
            out.append((key, try v.int(in: Self.probeConfKeys[key]!)))
        }
        return out
    }

    static func read(_ file: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw PolicyError(file: file, message: "cannot read")
        }
        guard data.count <= maxSize else { throw PolicyError(file: file, message: "larger than \(maxSize) bytes; not a test file") }
        guard let text = String(data: data, encoding: .utf8) else { throw PolicyError(file: file, message: "not UTF-8 text") }
        return text
    }
}

extension PolicyTestExpectation {
    /// The outcome's name as test files write it.
    var kind: String {
        switch self {
        case .allowed: "allowed"
        case .denied: "denied"
        case .killed: "killed"
        case .launchTimeout: "launch-timeout"
        case .warned: "warned"
        case .invisible: "invisible"
        case .readOnly: "read-only"
        }
    }
}
