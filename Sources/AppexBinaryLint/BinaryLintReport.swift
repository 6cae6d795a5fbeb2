/// One warning about an object in the bundle.
public struct BinaryFinding: Sendable, Hashable {
    public enum Code: String, Sendable {
        /// An import makes a system call the policy denies.
        case unavailableAPI = "binary.unavailable-api"
        /// `syscall(2)` is imported: what it calls cannot be read from the file.
        case rawSyscall = "binary.raw-syscall"
        /// A static executable imports nothing, so nothing could be checked.
        case staticExecutable = "binary.static-executable"
        /// A library in the bundle was refused (a link, not a regular file) and not checked.
        case libraryUnchecked = "binary.library-unchecked"
    }

    public var code: Code
    /// The object's path inside the bundle (`probe`, `lib/libfoo.so`).
    public var object: String
    public var symbol: String?
    public var syscall: String?
    public var group: String?
    /// The seccomp action (`errno`, `kill`, `notify`), for a denied call.
    public var action: String?
    public var message: String
}

/// A DT_NEEDED entry and what became of it.
public struct LibraryLink: Sendable, Hashable {
    public var name: String
    public var neededBy: String
    /// Its path inside the bundle, when it was found there.
    public var path: String?
    /// Whether its imports were checked.
    public var checked: Bool
    /// Why it was not checked.
    public var note: String?
}

/// An object that could not be checked, and why.
public struct BinaryLintError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// Missing, a link, not a regular file, or a read failed.
        case unreadable
        /// Not ELF at all (a script, a Mach-O file).
        case notELF = "not-elf"
        /// ELF, but wrong or beyond the reader's limits; the message says what and where.
        case malformed
        /// More libraries than the check follows.
        case tooManyLibraries = "too-many-libraries"
    }

    public var object: String
    public var kind: Kind
    public var message: String
    public var description: String { "\(object): \(message)" }

    public init(object: String, kind: Kind, message: String) {
        self.object = object
        self.kind = kind
        self.message = message
    }
}

/// Everything the check found in one executable and the libraries it bundles.
public struct BinaryLintReport: Sendable {
    public var policy: BinaryLintPolicy
    /// Objects whose imports were read, executable first.
    public var objects: [String] = []
    public var libraries: [LibraryLink] = []
    public var findings: [BinaryFinding] = []
    public var errors: [BinaryLintError] = []

    public init(policy: BinaryLintPolicy) { self.policy = policy }
}
