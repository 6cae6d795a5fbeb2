import AppexWire

#if canImport(Glibc)
import Glibc
#endif

/// Each thread's buffer for `recvmsg`, as large as the largest frame plus one byte, so that one
/// call reads any frame whole and still shows one that is too large. Allocated on a thread's
/// first receive and freed when the thread ends. The pages are touched only as far as the
/// frames a thread receives reach, so what stays resident follows those frames, not the bound.
enum ReceiveBuffer {
    static let size = WireProtocol.maxFrameSize + 1

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let made = pthread_key_create(&key) { free($0) }
        precondition(made == 0, "pthread_key_create: \(made)")
        return key
    }()

    /// This thread's buffer.
    static func forThisThread() -> UnsafeMutableRawBufferPointer {
        if let existing = pthread_getspecific(key) {
            return UnsafeMutableRawBufferPointer(start: existing, count: size)
        }
        guard let made = malloc(size) else { fatalError("cannot allocate a \(size)-byte receive buffer") }
        pthread_setspecific(key, made)
        return UnsafeMutableRawBufferPointer(start: made, count: size)
    }
}
