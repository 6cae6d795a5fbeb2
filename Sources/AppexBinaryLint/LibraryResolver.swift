import AppexBundle

/// Finds a DT_NEEDED library inside the bundle, as the dynamic loader would search for it,
/// but only ever inside the bundle: `$ORIGIN` entries resolve against the needing object's
/// directory, and an entry that is absolute, relative to the working directory, or climbs
/// out of the bundle with `..` is not followed. A library found nowhere in the bundle is a
/// system library (or one the sandbox would not show): its imports are not the bundle's.
struct LibraryResolver {
    let tree: BundleTree
    /// What the root is, for messages: "the bundle", or "the executable's directory".
    var scope = "the bundle"

    enum Outcome {
        /// In the bundle: its path there, and the open file (the caller closes it).
        case found([String], BundleFileAccess.OpenFile)
        /// Not in the bundle, with why.
        case outside(String)
        /// In the bundle, but refused (a link, not a regular file).
        case refused([String], String)
    }

    /// `name` as needed by the object at `object` (components in the bundle), searching
    /// `searchPaths` (the RUNPATH, or RPATH, entries that apply).
    func resolve(_ name: [UInt8], neededBy object: [String], searchPaths: [[UInt8]]) -> Outcome {
        let directory = Array(object.dropLast())
        let text = String(decoding: name, as: UTF8.self)
        if text.contains("/") {
            // A path, not a name: no search.
            switch Self.place(text, origin: directory, scope: scope) {
            case .inside(let path): return open(path) ?? .outside("\(Printable.escape(name)) does not exist in \(scope)")
            case .outside(let why): return .outside(why)
            }
        }
        var notes: [String] = []
        for entry in searchPaths {
            let dir = String(decoding: entry, as: UTF8.self)
            switch Self.place(dir, origin: directory, scope: scope) {
            case .inside(let path):
                if let found = open(path + [text]) { return found }
            case .outside(let why):
                notes.append(why)
            }
        }
        if notes.isEmpty { return .outside("not in \(scope): a system library") }
        return .outside("not in \(scope) (\(notes.joined(separator: "; ")))")
    }

    private func open(_ path: [String]) -> Outcome? {
        switch tree.open(path) {
        case .file(let file): return .found(path, file)
        case .missing: return nil
        case .refused(let why): return .refused(path, why)
        }
    }

    enum Place: Equatable {
        case inside([String])
        case outside(String)
    }

    /// Where a search-path entry or a needed path lies, lexically: inside the bundle (as
    /// components from its root) or outside it (with why). Only `$ORIGIN` reaches the bundle.
    static func place(_ entry: String, origin: [String], scope: String = "the bundle") -> Place {
        let shown = Printable.escape(Array(entry.utf8))
        var rest: Substring
        if entry.hasPrefix("$ORIGIN") {
            rest = entry.dropFirst("$ORIGIN".count)
        } else if entry.hasPrefix("${ORIGIN}") {
            rest = entry.dropFirst("${ORIGIN}".count)
        } else if entry.hasPrefix("/") {
            return .outside("\"\(shown)\" is outside \(scope)")
        } else if entry.contains("$") {
            return .outside("\"\(shown)\" uses a substitution other than $ORIGIN")
        } else {
            return .outside("\"\(shown)\" is relative to the working directory, not \(scope)")
        }
        guard rest.isEmpty || rest.hasPrefix("/") else {
            return .outside("\"\(shown)\" is not $ORIGIN followed by a path")
        }
        if rest.contains("$") { return .outside("\"\(shown)\" uses a substitution other than $ORIGIN") }
        var path = origin
        for part in rest.split(separator: "/") {
            switch part {
            case ".": continue
            case "..":
                if path.isEmpty { return .outside("\"\(shown)\" climbs out of \(scope)") }
                path.removeLast()
            default: path.append(String(part))
            }
        }
        return .inside(path)
    }
}
