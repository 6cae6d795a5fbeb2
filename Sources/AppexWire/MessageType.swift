/// The message type in a frame header. Values are fixed by Docs/protocol.md; ranges group the
/// channel a message belongs to (0x0_ both, 0x1_ appexd<->extension, 0x2_ host<->appexd,
/// 0x3_ administration).
public enum MessageType: UInt16, Sendable, CaseIterable {
    case hello = 0x01
    case refusal = 0x02
    case ping = 0x03
    case pong = 0x04

    case beginRequest = 0x10
    case completeRequest = 0x11
    case cancelRequest = 0x12
    case openURL = 0x13
    case openURLResult = 0x14
    case memoryWarning = 0x15
    case requestWillExpire = 0x16
    case terminate = 0x17
    case scheduleTransfer = 0x18
    case transferScheduled = 0x19
    case transferEvents = 0x1A
    case cancelSession = 0x1B

    case hostBeginRequest = 0x20
    case requestOutcome = 0x21
    case hostCancelRequest = 0x22
    case interruption = 0x23
    case hostTransferEvents = 0x24

    case install = 0x30
    case list = 0x31
    case enable = 0x32
    case disable = 0x33
    case uninstall = 0x34
    case adminResult = 0x35
    case jetsam = 0x36
    case status = 0x3E
    case cancelTransfers = 0x37

    /// The name used in Docs/protocol.md and in error paths.
    public var name: String {
        switch self {
        case .hello: "Hello"
        case .refusal: "Refusal"
        case .ping: "Ping"
        case .pong: "Pong"
        case .beginRequest: "BeginRequest"
        case .completeRequest: "CompleteRequest"
        case .cancelRequest: "CancelRequest"
        case .openURL: "OpenURL"
        case .openURLResult: "OpenURLResult"
        case .memoryWarning: "MemoryWarning"
        case .requestWillExpire: "RequestWillExpire"
        case .terminate: "Terminate"
        case .scheduleTransfer: "ScheduleTransfer"
        case .transferScheduled: "TransferScheduled"
        case .transferEvents: "TransferEvents"
        case .cancelSession: "CancelSession"
        case .hostTransferEvents: "HostTransferEvents"
        case .hostBeginRequest: "HostBeginRequest"
        case .requestOutcome: "RequestOutcome"
        case .hostCancelRequest: "HostCancelRequest"
        case .interruption: "Interruption"
        case .install: "Install"
        case .list: "List"
        case .enable: "Enable"
        case .disable: "Disable"
        case .uninstall: "Uninstall"
        case .adminResult: "AdminResult"
        case .jetsam: "Jetsam"
        case .status: "Status"
        case .cancelTransfers: "CancelTransfers"
        }
    }
}
