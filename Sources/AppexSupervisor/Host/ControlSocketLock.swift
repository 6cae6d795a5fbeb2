import Foundation

/// The right to a control socket path: a `flock` on `<socket>.lock`, taken before the socket
/// is touched and held while it is served. Only its holder replaces a stale socket file or
/// removes the socket; a second appexd on the same path is refused with the holder's pid
/// instead of rebinding it and leaving the first unreachable.
public final class ControlSocketLock: Sendable {
    public let socketPath: String
    private let file: PIDLockFile

    public init(socketPath: String) throws {
        let dir = (socketPath as NSString).deletingLastPathComponent
        if !dir.isEmpty { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
        do {
            file = try PIDLockFile(path: socketPath + ".lock")
        } catch let held as PIDLockFile.Held {
            throw SupervisorError.inUse("bind \(socketPath)", "the control socket is served by \(held.holder) (\(held.path))")
        }
        self.socketPath = socketPath
    }
}
