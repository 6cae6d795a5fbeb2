/// Every message of the protocol, one case per message type (admin commands share one case).
public enum Message: Equatable, Sendable {
    case hello(Hello)
    case refusal(Refusal)
    case ping(sequence: UInt64)
    case pong(sequence: UInt64)

    case beginRequest(BeginRequest)
    case completeRequest(CompleteRequest)
    case cancelRequest(CancelRequest)
    case openURL(OpenURL)
    case openURLResult(OpenURLResult)
    case memoryWarning(MemoryWarning)
    case requestWillExpire(RequestWillExpire)
    case terminate(Terminate)
    case scheduleTransfer(ScheduleTransfer)
    case transferScheduled(TransferScheduled)
    case transferEvents(TransferEvents)
    case cancelSession(CancelSession)

    case hostBeginRequest(HostBeginRequest)
    case requestOutcome(RequestOutcome)
    case hostCancelRequest(HostCancelRequest)
    case interruption(Interruption)

    case admin(AdminRequest)
    case adminResult(AdminResult)

    public var type: MessageType {
        switch self {
        case .hello: .hello
        case .refusal: .refusal
        case .ping: .ping
        case .pong: .pong
        case .beginRequest: .beginRequest
        case .completeRequest: .completeRequest
        case .cancelRequest: .cancelRequest
        case .openURL: .openURL
        case .openURLResult: .openURLResult
        case .memoryWarning: .memoryWarning
        case .requestWillExpire: .requestWillExpire
        case .terminate: .terminate
        case .scheduleTransfer: .scheduleTransfer
        case .transferScheduled: .transferScheduled
        case .transferEvents(let m): m.requestID == 0 ? .hostTransferEvents : .transferEvents
        case .cancelSession: .cancelSession
        case .hostBeginRequest: .hostBeginRequest
        case .requestOutcome: .requestOutcome
        case .hostCancelRequest: .hostCancelRequest
        case .interruption: .interruption
        case .admin(let a): a.messageType
        case .adminResult: .adminResult
        }
    }

    /// The request (or admin operation) the message is about, if any.
    public var requestID: UInt64? {
        switch self {
        case .hello, .ping, .pong, .memoryWarning, .terminate, .cancelSession: nil
        case .refusal(let m): m.requestID
        case .beginRequest(let m): m.requestID
        case .completeRequest(let m): m.requestID
        case .cancelRequest(let m): m.requestID
        case .openURL(let m): m.requestID
        case .openURLResult(let m): m.requestID
        case .requestWillExpire(let m): m.requestID
        case .scheduleTransfer(let m): m.requestID
        case .transferScheduled(let m): m.requestID
        case .transferEvents(let m): m.requestID == 0 ? nil : m.requestID
        case .hostBeginRequest(let m): m.requestID
        case .requestOutcome(let m): m.requestID
        case .hostCancelRequest(let m): m.requestID
        case .interruption(let m): m.requestID
        case .admin(let m): m.requestID
        case .adminResult(let m): m.requestID
        }
    }
}
