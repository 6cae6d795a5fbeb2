import AppexSandbox
import AppexStateDirectory

/// What `appex run` was asked to do: RunCommand's options as plain values.
///
/// `parseCommon` reads the common shapes of an `appex run` command line without
/// argument-parser. argument-parser finds a command's options by reflection, and each first
/// question the Swift runtime is asked about a type's conformances scans every conformance
/// record of the executable: a quarter of an `appex run` went to parsing its arguments
/// (Docs/decisions/0003-static-executable-run-without-reflection.md). It accepts only what it reads exactly as
/// argument-parser does and returns nil for anything else (help, an unknown or repeated
/// option, a value that looks like an option, a second positional argument), which then goes
/// through argument-parser as before: so errors and help stay argument-parser's.
/// `RunRequestTests` checks both agree on every line it accepts.
public struct RunRequest: Equatable, Sendable {
    public static let defaultStateDir = "/var/lib/appex"
    public static let defaultUIDRange = "\(UIDAllocator.defaultRange.lowerBound)-\(UIDAllocator.defaultRange.upperBound)"

    public var bundle: String
    public var arguments: [String] = []
    public var json = false
    /// The extension's stdout and stderr on ours too (the report then goes to stderr): `--stdio`,
    /// `--no-stdio`; nil: when our stdout is a terminal, as bwrap and `systemd-run --pty` show
    /// a command's output to the person who ran it.
    public var stdio: Bool?
    public var extensionPoint: String?
    public var policyDirs: [String] = []
    public var stateDir = Self.defaultStateDir
    public var uidRange = Self.defaultUIDRange
    public var timeout: Double?
    public var launches = 1

    public init(
        bundle: String, arguments: [String] = [], json: Bool = false, extensionPoint: String? = nil,
        policyDirs: [String] = [], stateDir: String = Self.defaultStateDir, uidRange: String = Self.defaultUIDRange,
        timeout: Double? = nil, launches: Int = 1, stdio: Bool? = nil
    ) {
        self.bundle = bundle
        self.arguments = arguments
        self.json = json
        self.extensionPoint = extensionPoint
        self.policyDirs = policyDirs
        self.stateDir = stateDir
        self.uidRange = uidRange
        self.timeout = timeout
        self.launches = launches
        self.stdio = stdio
    }

    /// The request for `arguments` (the command line without the program's name) when it is
    /// `run` in a shape read here; nil to leave it to argument-parser.
    public static func parseCommon(_ arguments: [String]) -> RunRequest? {
        guard arguments.first == "run" else { return nil }
        var bundle: String?
        var request = RunRequest(bundle: "")
        var seen: [String] = []  // not a Set: its first use is a conformance scan
        var i = 1
        while i < arguments.count {
            let token = arguments[i]
            i += 1
            if token == "--" {
                request.arguments = Array(arguments[i...])
                break
            }
            guard token.hasPrefix("-") else {
                guard bundle == nil else { return nil }  // a second positional argument
                bundle = token
                continue
            }
            // `--name value` or `--name=value`; anything with one dash (-h) is not read here.
            guard token.hasPrefix("--") else { return nil }
            var name = token
            var value: String?
            if let eq = token.firstIndex(of: "=") {
                name = String(token[..<eq])
                value = String(token[token.index(after: eq)...])
            }
            if name == "--json" || name == "--stdio" || name == "--no-stdio" {
                // argument-parser takes the last of --stdio/--no-stdio; a repeat is left to it.
                let key = name == "--json" ? name : "--stdio"
                guard value == nil, !seen.contains(key) else { return nil }
                seen.append(key)
                if name == "--json" { request.json = true } else { request.stdio = name == "--stdio" }
                continue
            }
            guard Self.valued.contains(name) else { return nil }
            if value == nil {
                guard i < arguments.count, !arguments[i].hasPrefix("-") else { return nil }
                value = arguments[i]
                i += 1
            }
            guard let value, !value.isEmpty else { return nil }
            if name == "--policy-dir" {
                request.policyDirs.append(value)
                continue
            }
            guard !seen.contains(name) else { return nil }  // repeated single-valued option
            seen.append(name)
            switch name {
            case "--extension-point": request.extensionPoint = value
            case "--state-dir": request.stateDir = value
            case "--uid-range": request.uidRange = value
            case "--timeout":
                guard let t = Double(value) else { return nil }
                request.timeout = t
            case "--launches":
                guard let n = Int(value) else { return nil }
                request.launches = n
            default: return nil
            }
        }
        guard let bundle else { return nil }
        request.bundle = bundle
        return request
    }

    /// RunCommand's options that take a value (an Array: six names, and no Set's first use).
    private static let valued: [String] = [
        "--extension-point", "--policy-dir", "--state-dir", "--uid-range", "--timeout", "--launches",
    ]
}
