// The numbers every implementation of the Appex wire protocol shares. Docs/protocol.md is the
// reference; a change here is a change there.

public enum WireProtocol {
    /// The protocol version a peer announces in `Hello`. A peer announcing another version is
    /// refused with `version-mismatch`: version 1 has no negotiation.
    public static let version: UInt32 = 1

    /// The layout of the frame header and the TLV rules. It changes only if the header does, so a
    /// peer of another protocol version can still decode a `Hello` and send a clear refusal.
    public static let frameFormat: UInt16 = 1

    /// "APXW", the first four bytes of every frame.
    public static let magic: [UInt8] = [0x41, 0x50, 0x58, 0x57]

    public static let headerSize = 16

    /// Largest frame, header included. A SOCK_SEQPACKET record must fit in the sender's socket
    /// send buffer (Linux default 212,992 bytes, less 32 of overhead), and an unprivileged
    /// extension cannot raise it past `net.core.wmem_max`; 128 KiB fits everywhere. Bulk data
    /// travels as file descriptors, not inline.
    public static let maxFrameSize = 131_072
    public static let maxPayloadSize = maxFrameSize - headerSize

    /// The descriptor number at which a launched extension finds its end of the socketpair.
    public static let extensionSocketFD: Int32 = 3
    /// The environment variable that names that descriptor (its value is "3").
    public static let extensionSocketEnvironment = "APPEX_SOCKET_FD"

    /// Where appexd listens for hosts and the `appex` CLI unless told otherwise (`appexd
    /// --socket`, the configuration's `socket`).
    public static let defaultControlSocketPath = "/run/appex/appexd.sock"
    /// The environment variable a client reads for another control socket path.
    public static let controlSocketEnvironment = "APPEX_SOCKET"
}

/// Hard bounds on counts, enforced by the encoder and the decoder alike.
public enum WireLimits {
    public static let descriptorsPerFrame = 16
    public static let itemsPerMessage = 16
    public static let attachmentsPerItem = 16
    public static let typeIdentifiersPerAttachment = 16
    public static let userInfoEntriesPerItem = 64
    public static let phasesPerOutcome = 32
    public static let detailsPerRefusal = 64
    public static let extensionsPerResult = 4096
    /// Requests (and admin operations) begun and not yet answered, per connection.
    public static let requestsInFlight = 64
    /// Open-URL messages awaiting their result, per request.
    public static let openURLsPerRequest = 8
    /// ScheduleTransfer messages awaiting their answer, per request.
    public static let schedulesPerRequest = 16
    /// Headers of one ScheduleTransfer.
    public static let headersPerTransfer = 32
    /// Results in one TransferEvents.
    public static let resultsPerEvent = 256
    /// Pings awaiting their pong, per direction.
    public static let pingsOutstanding = 16
}
