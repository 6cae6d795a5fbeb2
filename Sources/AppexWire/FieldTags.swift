// Field tags of every message and nested structure: the tables of Docs/protocol.md, in code.
// Tags are local to their message or structure. Tags 0x8000 and above are reserved for
// optional extensions a receiver may skip; every tag below that must be understood.

enum Tag {
    static let optionalBit: UInt16 = 0x8000

    enum Hello { static let protocolVersion: UInt16 = 1, bundleIdentifier: UInt16 = 2, pid: UInt16 = 3 }
    enum Refusal { static let reason: UInt16 = 1, message: UInt16 = 2, requestID: UInt16 = 3, detail: UInt16 = 4 }
    enum Ping { static let sequence: UInt16 = 1 }

    enum Request { static let requestID: UInt16 = 1, item: UInt16 = 2 }  // Begin/CompleteRequest
    enum CancelRequest { static let requestID: UInt16 = 1, error: UInt16 = 2 }
    enum OpenURL { static let requestID: UInt16 = 1, url: UInt16 = 2 }
    enum OpenURLResult { static let requestID: UInt16 = 1, accepted: UInt16 = 2 }
    enum MemoryWarning { static let level: UInt16 = 1 }
    enum RequestWillExpire { static let requestID: UInt16 = 1, millisecondsLeft: UInt16 = 2 }
    enum Terminate { static let reason: UInt16 = 1, graceMilliseconds: UInt16 = 2 }
    enum ScheduleTransfer {
        static let requestID: UInt16 = 1, token: UInt16 = 2, sessionIdentifier: UInt16 = 3, kind: UInt16 = 4
        static let url: UInt16 = 5, appGroup: UInt16 = 6, fileName: UInt16 = 7, method: UInt16 = 8, header: UInt16 = 9
    }
    enum TransferScheduled {
        static let requestID: UInt16 = 1, token: UInt16 = 2, transferID: UInt16 = 3, reason: UInt16 = 4, message: UInt16 = 5
    }
    enum TransferEvents {
        static let requestID: UInt16 = 1, sessionIdentifier: UInt16 = 2, bundleIdentifier: UInt16 = 3, result: UInt16 = 4
    }
    enum CancelSession { static let sessionIdentifier: UInt16 = 1 }
    enum TransferResult {
        static let transferID: UInt16 = 1, kind: UInt16 = 2, fileName: UInt16 = 3, outcome: UInt16 = 4, reason: UInt16 = 5
        static let message: UInt16 = 6, bytes: UInt16 = 7, httpStatus: UInt16 = 8
    }

    enum HostBeginRequest {
        static let requestID: UInt16 = 1, bundleIdentifier: UInt16 = 2, item: UInt16 = 3, band: UInt16 = 4
    }
    enum RequestOutcome {
        static let requestID: UInt16 = 1, outcome: UInt16 = 2, item: UInt16 = 3, error: UInt16 = 4
        static let reason: UInt16 = 5, cold: UInt16 = 6, phase: UInt16 = 7, peakMemoryBytes: UInt16 = 8
    }
    enum HostCancelRequest { static let requestID: UInt16 = 1 }
    enum Interruption {
        static let requestID: UInt16 = 1, bundleIdentifier: UInt16 = 2, reason: UInt16 = 3
        static let message: UInt16 = 4, signal: UInt16 = 5
        static let band: UInt16 = 6, footprintBytes: UInt16 = 7, triggerToDeathMicros: UInt16 = 8
    }

    enum Admin { static let requestID: UInt16 = 1, argument: UInt16 = 2, removeData: UInt16 = 3 }
    enum AdminResult { static let requestID: UInt16 = 1, extensionInfo: UInt16 = 2, jetsam: UInt16 = 3, stateDirectory: UInt16 = 4 }
    enum JetsamReport {
        static let level: UInt16 = 1, budgetBytes: UInt16 = 2, footprintBytes: UInt16 = 3, availableBytes: UInt16 = 4
        static let entry: UInt16 = 5
    }
    enum JetsamEntry {
        static let bundleIdentifier: UInt16 = 1, instance: UInt16 = 2, pid: UInt16 = 3, band: UInt16 = 4, state: UInt16 = 5
        static let footprintBytes: UInt16 = 6, activeSoft: UInt16 = 7, activeHard: UInt16 = 8, inactiveSoft: UInt16 = 9
        static let inactiveHard: UInt16 = 10, active: UInt16 = 11, overSoftLimit: UInt16 = 12, timeInBandMicros: UInt16 = 13
        static let cpuMicros: UInt16 = 14, lastLaunchMicros: UInt16 = 15
    }

    // Nested structures.
    enum Item { static let title: UInt16 = 1, contentText: UInt16 = 2, attachment: UInt16 = 3, userInfo: UInt16 = 4 }
    enum Attachment { static let typeIdentifier: UInt16 = 1, inlineData: UInt16 = 2, fdIndex: UInt16 = 3, suggestedName: UInt16 = 4 }
    enum UserInfo {
        static let key: UInt16 = 1, string: UInt16 = 2, integer: UInt16 = 3, bool: UInt16 = 4
        static let double: UInt16 = 5, data: UInt16 = 6
    }
    enum Error { static let domain: UInt16 = 1, code: UInt16 = 2, message: UInt16 = 3 }
    enum Phase { static let name: UInt16 = 1, microseconds: UInt16 = 2 }
    enum ExtensionInfo {
        static let bundleIdentifier: UInt16 = 1, extensionPoint: UInt16 = 2, enabled: UInt16 = 3
        static let displayName: UInt16 = 4, version: UInt16 = 5, containingApp: UInt16 = 6
    }
}
