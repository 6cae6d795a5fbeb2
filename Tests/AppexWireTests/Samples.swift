@testable import AppexWire

/// One filled-in example of every message type, every optional field set somewhere.
enum Samples {
    static let richItem = ExtensionItem(
        attributedTitle: "Trip notes",
        attributedContentText: "Zürich → Genève, 2 nights ✓",
        attachments: [
            Attachment(typeIdentifiers: ["public.url"], content: .inline(Array("https://example.com/a?b=c".utf8))),
            Attachment(
                typeIdentifiers: ["public.jpeg", "public.image", "public.data"],
                content: .descriptor(index: 1), suggestedName: "photo.jpg"),
            Attachment(typeIdentifiers: ["com.adobe.pdf"], content: .descriptor(index: 0)),
        ],
        userInfo: [
            "source": .string("clipboard"),
            "count": .integer(-42),
            "pinned": .bool(true),
            "ratio": .double(0.625),
            "blob": .data([0, 1, 2, 255]),
        ]
    )

    static let plainItem = ExtensionItem(attributedContentText: "hello")

    static let all: [Message] = [
        .hello(Hello(bundleIdentifier: "com.example.share", pid: 4242)),
        .refusal(
            Refusal(
                reason: .invalidBundle, message: "bundle is invalid", requestID: 9,
                details: ["Info.plist: CFBundleIdentifier missing", "NSExtension: no point"])),
        .ping(sequence: 7),
        .pong(sequence: 7),
        .beginRequest(BeginRequest(requestID: 1, items: [richItem, plainItem])),
        .completeRequest(
            CompleteRequest(
                requestID: 1,
                items: [
                    ExtensionItem(
                        attributedTitle: "Summary",
                        attachments: [Attachment(typeIdentifiers: ["public.plain-text"], content: .descriptor(index: 0))])
                ])),
        .cancelRequest(CancelRequest(requestID: 2, error: RequestError(domain: "NSCocoaErrorDomain", code: 3072, message: "user cancelled"))),
        .openURL(OpenURL(requestID: 3, url: "https://example.com/")),
        .openURLResult(OpenURLResult(requestID: 3, accepted: true)),
        .memoryWarning(MemoryWarning(level: .critical)),
        .requestWillExpire(RequestWillExpire(requestID: 4, millisecondsLeft: 1500)),
        .terminate(Terminate(reason: .idleExit, graceMilliseconds: 2000)),
        .hostBeginRequest(HostBeginRequest(requestID: 5, bundleIdentifier: "com.example.share", items: [richItem], band: 100)),
        .requestOutcome(
            RequestOutcome(
                requestID: 5, outcome: .failed, items: [plainItem],
                error: RequestError(domain: "appex", code: 1),
                reason: .launchTimeout, cold: true,
                phases: [.init("spawn", microseconds: 812), .init("checkIn", microseconds: 1_000_000)],
                peakMemoryBytes: 31_457_280)),
        .hostCancelRequest(HostCancelRequest(requestID: 6)),
        .interruption(
            Interruption(
                requestID: 6, bundleIdentifier: "com.example.share", reason: .crashed,
                message: "killed by SIGSEGV", signal: 11)),
        .admin(AdminRequest(requestID: 10, command: .install(path: "/srv/apps/Example.app"))),
        .admin(AdminRequest(requestID: 11, command: .list)),
        .admin(AdminRequest(requestID: 12, command: .enable(bundleIdentifier: "com.example.share"))),
        .admin(AdminRequest(requestID: 13, command: .disable(bundleIdentifier: "com.example.share"))),
        .admin(AdminRequest(requestID: 14, command: .uninstall(bundleIdentifier: "com.example.share", removeData: true))),
        .adminResult(
            AdminResult(
                requestID: 10,
                extensions: [
                    ExtensionInfo(
                        bundleIdentifier: "com.example.share", extensionPoint: "com.apple.share-services", enabled: false,
                        displayName: "Share", version: "1.0", containingApp: "com.example.app"),
                    ExtensionInfo(bundleIdentifier: "com.example.widget", extensionPoint: "com.apple.widget-extension", enabled: true),
                ])),
        .interruption(
            Interruption(
                requestID: 7, bundleIdentifier: "com.example.widget", reason: .memoryPressure,
                message: "memory pressure critical", signal: 9, band: 0, footprintBytes: 16_777_216,
                triggerToDeathMicros: 1_840)),
        .admin(AdminRequest(requestID: 15, command: .jetsam)),
        .admin(AdminRequest(requestID: 16, command: .status)),
        .adminResult(AdminResult(requestID: 16, extensions: [], stateDirectory: "/var/lib/appex")),
        .adminResult(
            AdminResult(
                requestID: 15, extensions: [],
                jetsam: JetsamReport(
                    level: "warning", budgetBytes: 536_870_912, footprintBytes: 440_401_920, availableBytes: 8_589_934_592,
                    entries: [
                        JetsamEntry(
                            bundleIdentifier: "com.example.widget", instance: 3, pid: 4242, band: 10, state: "idle",
                            footprintBytes: 9_437_184, activeSoftLimitBytes: 12_582_912, activeHardLimitBytes: 16_777_216,
                            inactiveSoftLimitBytes: 8_388_608, inactiveHardLimitBytes: 16_777_216, active: false,
                            overSoftLimit: true, timeInBandMicros: 1_500_000, cpuMicros: 23_000, lastLaunchMicros: 1_870),
                        JetsamEntry(
                            bundleIdentifier: "com.example.share", instance: 1, pid: 4243, band: 100, state: "serving",
                            footprintBytes: 1_048_576, activeSoftLimitBytes: 12_582_912, activeHardLimitBytes: 16_777_216,
                            inactiveSoftLimitBytes: 8_388_608, inactiveHardLimitBytes: 16_777_216, active: true,
                            overSoftLimit: false, timeInBandMicros: 20),
                    ]))),
        .scheduleTransfer(
            ScheduleTransfer(
                requestID: 16, token: 1, sessionIdentifier: "com.example.share.background",
                transfer: TransferRequest(
                    kind: .upload, url: "https://example.com/notes/1", appGroup: "group.example",
                    fileName: "note-1.txt", method: "POST",
                    headers: ["Content-Type: text/plain", "X-Note: 1"]))),
        .transferScheduled(TransferScheduled(requestID: 16, token: 1, transferID: 42)),
        .transferScheduled(TransferScheduled(requestID: 16, token: 2, reason: .sessionBusy, message: "in use by pid 7")),
        .transferEvents(
            TransferEvents(
                requestID: 17, sessionIdentifier: "com.example.share.background", bundleIdentifier: "com.example.share",
                results: [
                    TransferResult(
                        transferID: 42, kind: .upload, fileName: "note-1.txt", outcome: .completed,
                        bytes: 120, httpStatus: 201),
                    TransferResult(
                        transferID: 43, kind: .download, fileName: "a.bin", outcome: .failed,
                        reason: .transferQuota, message: "over the quota", bytes: 9, httpStatus: 200),
                ])),
        .transferEvents(TransferEvents(requestID: 0, sessionIdentifier: "s", bundleIdentifier: "com.example.share", results: [])),
        .admin(AdminRequest(requestID: 18, command: .cancelTransfers(selector: "com.example.share/s"))),
        .cancelSession(CancelSession(sessionIdentifier: "com.example.share.background")),
    ]

    /// Minimal forms: optional fields absent, defaults used.
    static let minimal: [Message] = [
        .refusal(Refusal(reason: "disabled")),
        .beginRequest(BeginRequest(requestID: 1, items: [])),
        .completeRequest(CompleteRequest(requestID: 1)),
        .cancelRequest(CancelRequest(requestID: 1, error: RequestError(domain: "d", code: 0))),
        .terminate(Terminate(reason: .shutdown)),
        .hostBeginRequest(HostBeginRequest(requestID: 1, bundleIdentifier: "x", items: [])),
        .requestOutcome(RequestOutcome(requestID: 1, outcome: .completed)),
        .interruption(Interruption(requestID: 1, bundleIdentifier: "x", reason: .unresponsive)),
        .admin(AdminRequest(requestID: 1, command: .uninstall(bundleIdentifier: "x", removeData: false))),
        .adminResult(AdminResult(requestID: 1, extensions: [])),
        .openURLResult(OpenURLResult(requestID: 1, accepted: false)),
        .memoryWarning(MemoryWarning(level: .warning)),
        .scheduleTransfer(
            ScheduleTransfer(
                requestID: 1, token: 1, sessionIdentifier: "s",
                transfer: TransferRequest(kind: .download, url: "http://h/", appGroup: "g", fileName: "f"))),
        .transferScheduled(TransferScheduled(requestID: 1, token: 1)),
    ]
}

/// Builds frames by hand, the way a C author would from Docs/protocol.md.
struct FrameBuilder {
    var type: UInt16
    var fdCount: UInt16 = 0
    var flags: UInt16 = 0
    var format: UInt16 = 1
    var magic: [UInt8] = [0x41, 0x50, 0x58, 0x57]
    var payload: [UInt8] = []
    /// Overrides the payload length in the header.
    var announcedLength: UInt32?

    init(_ type: MessageType) { self.type = type.rawValue }
    init(rawType: UInt16) { self.type = rawType }

    static func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] {
        withUnsafeBytes(of: v.littleEndian) { Array($0) }
    }

    static func tlv(_ tag: UInt16, _ value: [UInt8]) -> [UInt8] {
        le(tag) + le(UInt32(value.count)) + value
    }
    static func u64(_ tag: UInt16, _ v: UInt64) -> [UInt8] { tlv(tag, le(v)) }
    static func u32(_ tag: UInt16, _ v: UInt32) -> [UInt8] { tlv(tag, le(v)) }
    static func str(_ tag: UInt16, _ s: String) -> [UInt8] { tlv(tag, Array(s.utf8)) }

    func field(_ tag: UInt16, _ value: [UInt8]) -> FrameBuilder {
        var b = self
        b.payload += Self.tlv(tag, value)
        return b
    }

    var bytes: [UInt8] {
        magic + Self.le(format) + Self.le(type) + Self.le(flags) + Self.le(fdCount)
            + Self.le(announcedLength ?? UInt32(payload.count)) + payload
    }
}
