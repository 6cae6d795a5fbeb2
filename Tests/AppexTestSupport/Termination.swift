/// A wait status, readable in expectations: `#expect(Termination(try ext.waitForExit()) == .exited(0))`.
public enum Termination: Equatable, CustomStringConvertible, Sendable {
    case exited(Int32)
    case signalled(Int32)

    public init(_ status: Int32) {
        if status & 0x7f == 0 { self = .exited((status >> 8) & 0xff) } else { self = .signalled(status & 0x7f) }
    }

    public var description: String {
        switch self {
        case .exited(let code): "exit \(code)"
        case .signalled(let signal): "signal \(signal)"
        }
    }
}
