import AppexWire

#if canImport(Glibc)
import Glibc
#endif

/// One end of an Appex connection: a Unix SOCK_SEQPACKET socket carrying one frame per record.
///
/// SEQPACKET rather than STREAM: the kernel keeps record boundaries, so a frame is read whole
/// by one recvmsg together with its descriptors, a peer cannot leave a half frame behind, and
/// the decoder needs no reassembly state. It works with socketpair (the extension channel) and
/// with a listening socket (the control channel).
///
/// A value, not an owner: copies refer to the same descriptor, and `close()` is explicit.
/// Sends may come from several threads (each record is atomic); receive from one thread.
public struct WireSocket: Hashable, Sendable {
    public let fd: Int32

    public init(adopting fd: Int32) { self.fd = fd }

    /// A connected pair, both ends close-on-exec: appexd keeps one and hands the other to the
    /// extension (the launcher places it at fd 3, without close-on-exec there).
    public static func pair() throws(SocketError) -> (WireSocket, WireSocket) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw SocketError.last("socketpair(AF_UNIX, SOCK_SEQPACKET)")
        }
        return (WireSocket(adopting: fds[0]), WireSocket(adopting: fds[1]))
    }

    /// The extension's end, as the launcher left it: the descriptor named by APPEX_SOCKET_FD
    /// (3 when unset). Checked to be a Unix SOCK_SEQPACKET socket, then made close-on-exec so
    /// that the extension's own children do not inherit it.
    public static func inherited() throws(SocketError) -> WireSocket {
        var fd = WireProtocol.extensionSocketFD
        if let raw = getenv(WireProtocol.extensionSocketEnvironment) {
            let text = String(cString: raw)
            guard let n = Int32(text), n >= 0 else {
                throw SocketError(
                    "\(WireProtocol.extensionSocketEnvironment)", errno: EINVAL,
                    context: "\"\(text)\" is not a descriptor number")
            }
            fd = n
        }
        let socket = WireSocket(adopting: fd)
        let context = "fd \(fd) from \(WireProtocol.extensionSocketEnvironment)"
        var type: Int32 = 0, domain: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0 else {
            throw SocketError.last("getsockopt(SO_TYPE)", context)
        }
        length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) == 0 else {
            throw SocketError.last("getsockopt(SO_DOMAIN)", context)
        }
        guard domain == AF_UNIX, type == Int32(SOCK_SEQPACKET.rawValue) else {
            throw SocketError(
                "inherited socket", errno: ENOTSOCK,
                context: "\(context) is domain \(domain) type \(type), expected AF_UNIX SOCK_SEQPACKET")
        }
        guard fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else { throw SocketError.last("fcntl(F_SETFD)", context) }
        return socket
    }

    public func close() { _ = Glibc.close(fd) }

    // MARK: sending

    /// Encodes and sends `message` with `descriptors` (those its attachments refer to, in index
    /// order). Returns false when `blocking` is false and the socket buffer is full (nothing sent).
    /// The descriptors stay the caller's: the kernel duplicates them into the peer.
    @discardableResult
    public func send(_ message: Message, descriptors: [Int32] = [], blocking: Bool = true) throws -> Bool {
        let frame = try WireCodec.encode(message)
        let announced = Int(frame[10]) | Int(frame[11]) << 8
        guard announced == descriptors.count else {
            throw WireError(
                .descriptorCountMismatch, field: message.type.name,
                "attachments refer to \(announced) descriptors, \(descriptors.count) given")
        }
        return try send(frame: frame, descriptors: descriptors, blocking: blocking)
    }

    /// Sends one encoded frame as one record (atomic on SEQPACKET: all of it or nothing).
    @discardableResult
    public func send(frame: [UInt8], descriptors: [Int32] = [], blocking: Bool = true) throws(SocketError) -> Bool {
        let flags = Int32(MSG_NOSIGNAL) | (blocking ? 0 : Int32(MSG_DONTWAIT))
        var control = descriptors.isEmpty ? [] : ControlMessage.rights(descriptors)
        while true {
            // sendmsg only reads the frame: no mutable (copied) buffer of it.
            let n = frame.withUnsafeBytes { payload in
                control.withUnsafeMutableBytes { cbuf in
                    var iov = iovec(iov_base: UnsafeMutableRawPointer(mutating: payload.baseAddress), iov_len: payload.count)
                    return withUnsafeMutablePointer(to: &iov) { iovp in
                        var msg = msghdr()
                        msg.msg_iov = iovp
                        msg.msg_iovlen = 1
                        msg.msg_control = cbuf.count == 0 ? nil : cbuf.baseAddress
                        msg.msg_controllen = cbuf.count
                        return sendmsg(fd, &msg, flags)
                    }
                }
            }
            if n >= 0 {
                guard n == frame.count else {
                    throw SocketError("sendmsg", errno: EMSGSIZE, context: "sent \(n) of \(frame.count) bytes")
                }
                return true
            }
            switch Glibc.errno {
            case EINTR: continue
            case EAGAIN where !blocking: return false
            default: throw SocketError.last("sendmsg", "frame of \(frame.count) bytes, \(descriptors.count) descriptors")
            }
        }
    }

    // MARK: receiving

    public enum Received {
        case frame(ReceivedFrame)
        /// The peer closed its end (or sent an empty record, which no valid frame is).
        case endOfStream
        /// Non-blocking receive and nothing to read.
        case wouldBlock
    }

    /// Receives one frame with its descriptors (close-on-exec). A frame that is oversized,
    /// carries more descriptors than announced or allowed, or does not decode is consumed, its
    /// descriptors are closed, and the WireError is thrown; the caller closes the connection.
    /// Syscall failures throw SocketError.
    public func receive(blocking: Bool = true) throws -> Received {
        let wait = blocking ? 0 : Int32(MSG_DONTWAIT)
        // One recvmsg into this thread's buffer, which holds any frame; MSG_TRUNC has it
        // return the record's real length, so an oversized one shows as such.
        let buffer = ReceiveBuffer.forThisThread()
        var length = 0
        var msgFlags: Int32 = 0
        var fds: [Int32] = []
        while true {
            // Room for one descriptor more than allowed, so "too many" is told apart from the limit.
            let space = ControlMessage.space(descriptors: WireLimits.descriptorsPerFrame + 1)
            let n = withUnsafeTemporaryAllocation(byteCount: space, alignment: MemoryLayout<cmsghdr>.alignment) { cbuf in
                var iov = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
                return withUnsafeMutablePointer(to: &iov) { iovp in
                    var msg = msghdr()
                    msg.msg_iov = iovp
                    msg.msg_iovlen = 1
                    msg.msg_control = cbuf.baseAddress
                    msg.msg_controllen = cbuf.count
                    let n = recvmsg(fd, &msg, Int32(MSG_CMSG_CLOEXEC) | Int32(MSG_TRUNC) | wait)
                    if n >= 0 {
                        msgFlags = msg.msg_flags
                        fds = ControlMessage.descriptors(in: UnsafeRawBufferPointer(cbuf), length: msg.msg_controllen)
                    }
                    return n
                }
            }
            if n >= 0 {
                length = n
                break
            }
            switch Glibc.errno {
            case EINTR: continue
            case EAGAIN where !blocking: return .wouldBlock
            default: throw SocketError.last("recvmsg")
            }
        }
        if length == 0 {
            // The peer closed its end, or sent an empty record, which no frame is.
            for fd in fds { _ = Glibc.close(fd) }
            return .endOfStream
        }
        func reject(_ error: WireError) -> WireError {
            for fd in fds { _ = Glibc.close(fd) }
            return error
        }
        if length > WireProtocol.maxFrameSize {
            throw reject(
                WireError(
                    .frameTooLarge, field: "frame", offset: 0,
                    "a record of \(length) bytes, at most \(WireProtocol.maxFrameSize)"))
        }
        if msgFlags & Int32(MSG_CTRUNC) != 0 {
            throw reject(
                WireError(
                    .tooManyDescriptors, field: "control", offset: 0,
                    "the peer sent more than \(WireLimits.descriptorsPerFrame) descriptors with one frame"))
        }
        let frame = [UInt8](UnsafeRawBufferPointer(rebasing: buffer[..<length]))
        do throws(WireError) {
            let header = try FrameHeader.decode(frame)
            guard header.descriptorCount == fds.count else {
                throw WireError(
                    .descriptorCountMismatch, field: "header.fdCount", offset: 10,
                    "header announces \(header.descriptorCount) descriptors, \(fds.count) arrived")
            }
            let message = try WireCodec.decode(frame)
            return .frame(ReceivedFrame(message: message, descriptors: fds, size: length))
        } catch {
            throw reject(error)
        }
    }
}

/// A decoded message and the descriptors that came with it. Attachment `.descriptor(index: i)`
/// is `descriptors[i]`. The receiver owns the descriptors and closes them.
public struct ReceivedFrame: Sendable {
    public var message: Message
    public var descriptors: [Int32]
    /// Bytes on the wire, header included.
    public var size: Int

    public init(message: Message, descriptors: [Int32], size: Int) {
        self.message = message
        self.descriptors = descriptors
        self.size = size
    }

    public func closeDescriptors() {
        for fd in descriptors { _ = Glibc.close(fd) }
    }
}
