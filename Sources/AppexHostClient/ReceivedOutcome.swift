import AppexWire

#if canImport(Glibc)
import Glibc
#endif

/// How a request ended: appexd's RequestOutcome, and the descriptors its returned items'
/// attachments refer to (attachment `.descriptor(index: i)` is `descriptors[i]`).
///
/// The outcome's fields read straight through: `result.outcome`, `result.items`,
/// `result.error`, `result.reason`, `result.cold`, `result.phases`.
///
/// The descriptors belong to the caller, who closes them (`closeDescriptors()`) when done.
@dynamicMemberLookup
public struct ReceivedOutcome: Sendable, Equatable {
    /// The RequestOutcome as appexd sent it.
    public var message: RequestOutcome
    /// Close-on-exec descriptors received with the outcome, in index order.
    public var descriptors: [Int32]

    public init(message: RequestOutcome, descriptors: [Int32] = []) {
        self.message = message
        self.descriptors = descriptors
    }

    public subscript<T>(dynamicMember field: KeyPath<RequestOutcome, T>) -> T {
        message[keyPath: field]
    }

    public func closeDescriptors() {
        for fd in descriptors { _ = Glibc.close(fd) }
    }
}
