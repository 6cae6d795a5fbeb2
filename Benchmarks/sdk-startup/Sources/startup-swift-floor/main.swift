// The Swift floor: what the Swift runtime alone costs before a Hello is on the wire. No SDK,
// no codec: it sends the C floor's prebuilt Hello frame to fd 3 with Glibc and exits.
#if canImport(Glibc)
import Glibc
#endif

let hello: [UInt8] =
    Array("APXW".utf8) + [1, 0, 1, 0, 0, 0, 0, 0, 41, 0, 0, 0]
    + [1, 0, 4, 0, 0, 0, 1, 0, 0, 0]
    + [2, 0, 15, 0, 0, 0] + Array("dev.appex.bench".utf8)
    + [3, 0, 4, 0, 0, 0, 0, 0, 0, 0]
exit(send(3, hello, hello.count, Int32(MSG_NOSIGNAL)) == hello.count ? 0 : 1)
