import AppexBundle
import AppexELF
import AppexPolicy

#if canImport(Glibc)
import Glibc
#endif

/// The extension-safe API check: reads an executable's imports, and those of the libraries
/// it bundles, and reports each one that makes a system call its policy denies.
///
/// The libraries are walked breadth-first from a work list (never by recursion), each file
/// once (by device and inode), at most `maxObjects` of them.
public enum BinaryLinter {
    public static let maxObjects = 256

    /// Checks `executable` (one file name) inside the bundle directory `bundle`.
    public static func lint(
        bundle: String, executable: String, policy: BinaryLintPolicy,
        limits: ELFLimits = ELFLimits()
    ) -> BinaryLintReport {
        lint(root: bundle, scope: "the bundle", executable: executable, policy: policy, limits: limits)
    }

    static func lint(
        root bundle: String, scope: String, executable: String, policy: BinaryLintPolicy,
        limits: ELFLimits
    ) -> BinaryLintReport {
        var report = BinaryLintReport(policy: policy)
        let tree: BundleTree
        do { tree = try BundleTree(path: bundle) } catch {
            report.errors.append(BinaryLintError(object: bundle, kind: .unreadable, message: "cannot open the directory: it \(error)"))
            return report
        }
        walk(tree, scope: scope, executable: [executable], into: &report, limits: limits)
        return report
    }

    /// Checks a bare executable; libraries are looked for only inside its directory.
    public static func lint(file path: String, policy: BinaryLintPolicy, limits: ELFLimits = ELFLimits()) -> BinaryLintReport {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        let slash = trimmed.lastIndex(of: "/")
        let directory = slash.map { $0 == trimmed.startIndex ? "/" : String(trimmed[..<$0]) } ?? "."
        let name = slash.map { String(trimmed[trimmed.index(after: $0)...]) } ?? trimmed
        return lint(root: directory, scope: "the executable's directory", executable: name, policy: policy, limits: limits)
    }

    private struct Object {
        var path: [String]
        var file: BundleFileAccess.OpenFile
    }

    static func walk(_ tree: BundleTree, scope: String, executable: [String], into report: inout BinaryLintReport, limits: ELFLimits) {
        let exeName = display(executable)
        let exeFile: BundleFileAccess.OpenFile
        switch tree.open(executable) {
        case .file(let f): exeFile = f
        case .missing:
            report.errors.append(BinaryLintError(object: exeName, kind: .unreadable, message: "does not exist"))
            return
        case .refused(let why):
            report.errors.append(BinaryLintError(object: exeName, kind: .unreadable, message: "refused: \(why)"))
            return
        }
        var queue = [Object(path: executable, file: exeFile)]
        var seen: Set<[UInt64]> = [[exeFile.device, exeFile.inode]]
        var next = 0
        var exe: ELFDynamicInfo?
        let resolver = LibraryResolver(tree: tree, scope: scope)
        var overflowReported = false
        while next < queue.count {
            let object = queue[next]
            next += 1
            let name = display(object.path)
            let info: ELFDynamicInfo
            do throws(ELFError) {
                defer { close(object.file.fd) }
                info = try ELFDynamicInfo.read(FileDescriptorSource(fd: object.file.fd, size: UInt64(object.file.size)), limits: limits)
            } catch {
                report.errors.append(
                    error.notELF
                        ? BinaryLintError(object: name, kind: .notELF, message: "not an ELF file")
                        : BinaryLintError(object: name, kind: .malformed, message: "malformed ELF: \(error)"))
                continue
            }
            if let exe, exe.header.layout != info.header.layout || exe.header.machine != info.header.machine {
                report.findings.append(
                    BinaryFinding(
                        code: .libraryUnchecked, object: name,
                        message: "\(name) is built for another machine or word size than the executable; the loader would not use it"))
                continue
            }
            report.objects.append(name)
            if exe == nil {
                exe = info
                if info.isStaticallyLinked {
                    report.findings.append(
                        BinaryFinding(
                            code: .staticExecutable, object: name,
                            message: "\(name) is statically linked: it makes its system calls without importing them, so none could be checked"))
                }
            }
            report.findings += findings(info.imports, in: name, policy: report.policy)

            // RUNPATH replaces RPATH; without its own RUNPATH a library also inherits the
            // executable's RPATH (when the executable has no RUNPATH), as ld.so searches.
            var searchPaths = info.runpath.isEmpty ? info.rpath : info.runpath
            if info.runpath.isEmpty, object.path != executable, let exe, exe.runpath.isEmpty { searchPaths += exe.rpath }
            for needed in info.needed {
                let shown = Printable.escape(needed)
                switch resolver.resolve(needed, neededBy: object.path, searchPaths: searchPaths) {
                case .outside(let why):
                    report.libraries.append(LibraryLink(name: shown, neededBy: name, path: nil, checked: false, note: why))
                case .refused(let path, let why):
                    let p = display(path)
                    report.libraries.append(LibraryLink(name: shown, neededBy: name, path: p, checked: false, note: why))
                    report.findings.append(
                        BinaryFinding(
                            code: .libraryUnchecked, object: p,
                            message: "\(p), which \(name) needs, is in \(scope) but was not checked: \(why)"))
                case .found(let path, let file):
                    let p = display(path)
                    report.libraries.append(LibraryLink(name: shown, neededBy: name, path: p, checked: true, note: nil))
                    if !seen.insert([file.device, file.inode]).inserted {
                        close(file.fd)
                    } else if queue.count >= maxObjects {
                        close(file.fd)
                        if !overflowReported {
                            overflowReported = true
                            report.errors.append(
                                BinaryLintError(
                                    object: p, kind: .tooManyLibraries,
                                    message: "more than \(maxObjects) libraries in \(scope); from this one on, none was checked"))
                        }
                    } else {
                        queue.append(Object(path: path, file: file))
                    }
                }
            }
        }
    }

    /// A path in the bundle for messages: its names come from the file (RUNPATH, DT_NEEDED)
    /// and the plist, so they are escaped.
    static func display(_ path: [String]) -> String { Printable.escape(Array(path.joined(separator: "/").utf8)) }

    /// The warnings for one object's imports, one per (symbol, system call), in import order.
    static func findings(_ imports: [ELFImport], in object: String, policy: BinaryLintPolicy) -> [BinaryFinding] {
        var out: [BinaryFinding] = []
        var reported = Set<String>()
        for imported in imports {
            let symbol = imported.name
            switch SyscallWrappers.meaning(of: symbol) {
            case .rawSyscall:
                guard reported.insert(symbol).inserted else { continue }
                out.append(
                    BinaryFinding(
                        code: .rawSyscall, object: object, symbol: symbol,
                        message: "\(object) imports \(symbol): the system calls it makes are chosen at run time and cannot be checked here"))
            case .syscalls(let calls):
                for call in calls {
                    guard let rule = policy.denied[call], reported.insert(symbol + "\u{0}" + call).inserted else { continue }
                    let shown = Printable.escape(imported.nameBytes)
                    let via = shown == call ? "" : ", which makes the \(call) system call"
                    out.append(
                        BinaryFinding(
                            code: .unavailableAPI, object: object, symbol: shown, syscall: call,
                            group: rule.group, action: rule.action.name,
                            message:
                                "\(object) imports \(shown)\(via): the \(policy.title) policy denies it (syscall group \(rule.group)); \(BinaryLintPolicy.consequence(rule.action))"
                        ))
                }
            }
        }
        return out
    }
}
