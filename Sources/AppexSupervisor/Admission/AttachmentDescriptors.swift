import AppexWire
import CAppexLinux

#if canImport(Glibc)
import Glibc
#endif

/// The descriptors appexd forwards between a host and an extension: read-only regular files
/// (memfds included) and pipes. Anything else would hand the other side more than bytes to
/// read: a directory descriptor is a way out of the sandbox's view (`openat(fd, "../..")`),
/// a socket is a channel to whoever holds its peer, a writable file lets the receiver change
/// the sender's data, and namespace, pidfd and O_PATH descriptors are capabilities.
enum AttachmentDescriptors {
    /// What is wrong with the first descriptor that may not travel, naming the attachment
    /// that refers to it; nil when every one may.
    static func problem(_ descriptors: [Int32], items: [AppexWire.ExtensionItem]) -> String? {
        for (index, fd) in descriptors.enumerated() {
            guard let fault = fault(of: fd) else { continue }
            return "\(attachmentPath(referringTo: index, in: items)) is \(fault); attachments must be regular files opened read-only, or pipes"
        }
        return nil
    }

    /// Why `fd` may not travel, or nil.
    static func fault(of fd: Int32) -> String? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return "a descriptor that cannot be examined (\(String(cString: strerror(errno))))" }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0 else { return "a descriptor whose flags cannot be read" }
        if flags & Self.pathOnly != 0 { return "an O_PATH descriptor" }
        // Namespace and pid descriptors call themselves regular files: their file system tells.
        var fileSystem = 0
        guard appex_descriptor_filesystem_type(fd, &fileSystem) == 0 else { return "a descriptor whose file system cannot be read" }
        if let kind = Self.capabilityFileSystems[Int64(fileSystem)] { return kind }
        switch st.st_mode & S_IFMT {
        case S_IFIFO:
            return nil
        case S_IFREG:
            return flags & O_ACCMODE == O_RDONLY ? nil : "a regular file open for writing"
        case S_IFDIR: return "a directory"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFLNK: return "a symbolic link"
        default: return "a descriptor of an unknown kind (a pidfd, an eventfd or a namespace)"
        }
    }

    /// File systems whose files are capabilities rather than data, by statfs magic.
    private static let capabilityFileSystems: [Int64: String] = [
        0x6e73_6673: "a namespace descriptor",
        0x5049_4446: "a pidfd",
        0x0904_1934: "an anonymous-inode descriptor (eventfd, signalfd, timerfd, epoll, io_uring or an older pidfd)",
        0xcafe_4a11: "a BPF object",
        0x534f_434b: "a socket",
    ]

    /// O_PATH, which Glibc's Swift overlay does not export on every version.
    private static let pathOnly: Int32 = 0o10000000

    private static func attachmentPath(referringTo index: Int, in items: [AppexWire.ExtensionItem]) -> String {
        for (i, item) in items.enumerated() {
            for (j, attachment) in item.attachments.enumerated() {
                if case .descriptor(index) = attachment.content { return "items[\(i)].attachments[\(j)] (descriptor \(index))" }
            }
        }
        return "descriptor \(index)"
    }
}
