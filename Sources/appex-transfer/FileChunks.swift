import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// An upload's body read from its descriptor as it is sent, 64 KiB at a time with `pread`, so
/// a worker holds a chunk, not the file (which the quota alone would let reach hundreds of
/// MiB). Each attempt makes a new one and starts from the beginning.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let fd: Int32
    let size: Int64

    struct ReadError: Error, CustomStringConvertible {
        var description: String
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let fd: Int32
        let size: Int64
        var offset: Int64 = 0

        mutating func next() async throws -> ByteBuffer? {
            guard offset < size else { return nil }
            let want = Int(Swift.min(65_536, size - offset))
            var buffer = ByteBufferAllocator().buffer(capacity: want)
            let at = offset
            let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { raw in
                var got = 0
                while got < want {
                    let r = pread(fd, raw.baseAddress! + got, want - got, off_t(at) + off_t(got))
                    if r < 0 && errno == EINTR { continue }
                    if r <= 0 { break }
                    got += r
                }
                return got
            }
            // The file shrank under us: the length promised to the server no longer holds.
            if n < want { throw ReadError(description: "the file shrank to \(offset + Int64(n)) bytes while it was sent") }
            offset += Int64(n)
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(fd: fd, size: size) }
}
