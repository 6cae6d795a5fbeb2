#if canImport(Glibc)
import Glibc
#endif

// Host-only, like `connect`: absent from extension builds (APPEX_EXTENSION), where `connect`
// is unavailable and so could not be called from here.
#if !APPEX_EXTENSION
extension HostClient {
    /// Waits until appexd answers a Hello on `socketPath`, for a host (or a script, test or
    /// benchmark) that has just started it: a socket file alone may be a dead predecessor's.
    /// Tries every `interval` up to `attempts` times, and stops early once `keepWaiting` says
    /// there is no point (appexd has exited). Returns whether it answered.
    public static func waitUntilServing(
        socketPath: String, attempts: Int = 250, interval: Duration = .milliseconds(20),
        keepWaiting: () -> Bool = { true }
    ) -> Bool {
        for _ in 0..<attempts where keepWaiting() {
            if let client = try? connect(socketPath: socketPath, identifier: "readiness") {
                client.close()
                return true
            }
            usleep(useconds_t(interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000))
        }
        return false
    }
}
#endif
