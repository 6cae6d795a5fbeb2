/// Payload bytes -> Message. Reads only inside the frame, refuses every structural fault with a
/// WireError naming the field and offset, and allocates at most in proportion to the frame
/// (which is bounded), so hostile bytes cost little and crash nothing.
struct MessageDecoder {
    let frame: [UInt8]
    let header: FrameHeader
    /// Bit i set once an attachment has referenced descriptor i.
    private var usedDescriptors: UInt32 = 0

    init(frame: [UInt8], header: FrameHeader) {
        self.frame = frame
        self.header = header
    }

    mutating func decode() throws(WireError) -> Message {
        var r = FieldReader(
            frame: frame, start: WireProtocol.headerSize, end: frame.count,
            path: header.type.name, offset: WireProtocol.headerSize)
        let message = try decodeMessage(&r)
        let all: UInt32 = header.descriptorCount == 0 ? 0 : (1 << UInt32(header.descriptorCount)) - 1
        if usedDescriptors != all {
            let unused = (0..<header.descriptorCount).filter { usedDescriptors & (1 << UInt32($0)) == 0 }
            throw WireError(
                .unusedDescriptor, field: "header.fdCount", offset: 10,
                "the frame carries \(header.descriptorCount) descriptors; no attachment refers to \(unused)")
        }
        return message
    }

    private mutating func decodeMessage(_ r: inout FieldReader) throws(WireError) -> Message {
        switch header.type {
        case .hello:
            var version: UInt32?, id: String?, pid: Int32?
            while let f = try r.next() {
                switch f.tag {
                case Tag.Hello.protocolVersion: try r.once(&version, f, "protocolVersion") { f throws(WireError) in try f.u32("protocolVersion") }
                case Tag.Hello.bundleIdentifier: try r.once(&id, f, "bundleIdentifier") { f throws(WireError) in try f.string("bundleIdentifier") }
                case Tag.Hello.pid: try r.once(&pid, f, "pid") { f throws(WireError) in try f.i32("pid") }
                default: try r.unknown(f)
                }
            }
            return .hello(
                Hello(
                    protocolVersion: try r.required(version, "protocolVersion"),
                    bundleIdentifier: try r.required(id, "bundleIdentifier"),
                    pid: try r.required(pid, "pid")))

        case .refusal:
            var reason: String?, message: String?, id: UInt64?
            var details: [String] = []
            while let f = try r.next() {
                switch f.tag {
                case Tag.Refusal.reason: try r.once(&reason, f, "reason") { f throws(WireError) in try f.string("reason") }
                case Tag.Refusal.message: try r.once(&message, f, "message") { f throws(WireError) in try f.string("message") }
                case Tag.Refusal.requestID: try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
                case Tag.Refusal.detail:
                    try r.append(&details, limit: WireLimits.detailsPerRefusal, f, "details") { f, n throws(WireError) in try f.string(n) }
                default: try r.unknown(f)
                }
            }
            return .refusal(
                Refusal(
                    reason: Reason(try r.required(reason, "reason")), message: message,
                    requestID: id, details: details))

        case .ping, .pong:
            var seq: UInt64?
            while let f = try r.next() {
                switch f.tag {
                case Tag.Ping.sequence: try r.once(&seq, f, "sequence") { f throws(WireError) in try f.u64("sequence") }
                default: try r.unknown(f)
                }
            }
            let s = try r.required(seq, "sequence")
            return header.type == .ping ? .ping(sequence: s) : .pong(sequence: s)

        case .beginRequest, .completeRequest:
            var id: UInt64?
            var items: [ExtensionItem] = []
            while let f = try r.next() {
                switch f.tag {
                case Tag.Request.requestID: try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
                case Tag.Request.item: try appendItem(&items, &r, f)
                default: try r.unknown(f)
                }
            }
            let rid = try r.required(id, "requestID")
            return header.type == .beginRequest
                ? .beginRequest(BeginRequest(requestID: rid, items: items))
                : .completeRequest(CompleteRequest(requestID: rid, items: items))

        case .cancelRequest:
            var id: UInt64?, error: RequestError?
            while let f = try r.next() {
                switch f.tag {
                case Tag.CancelRequest.requestID: try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
                case Tag.CancelRequest.error: try r.once(&error, f, "error") { f throws(WireError) in try Self.requestError(f, "error") }
                default: try r.unknown(f)
                }
            }
            return .cancelRequest(
                CancelRequest(
                    requestID: try r.required(id, "requestID"),
                    error: try r.required(error, "error")))

        case .openURL:
            var id: UInt64?, url: String?
            while let f = try r.next() {
                switch f.tag {
                case Tag.OpenURL.requestID: try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
                case Tag.OpenURL.url: try r.once(&url, f, "url") { f throws(WireError) in try f.string("url") }
                default: try r.unknown(f)
                }
            }
            return .openURL(OpenURL(requestID: try r.required(id, "requestID"), url: try r.required(url, "url")))

        case .scheduleTransfer:
            return .scheduleTransfer(try Self.scheduleTransfer(&r))
        case .transferScheduled:
            return .transferScheduled(try Self.transferScheduled(&r))
        case .cancelSession:
            var session: String?
            while let f = try r.next() {
                switch f.tag {
                case Tag.CancelSession.sessionIdentifier:
                    try r.once(&session, f, "sessionIdentifier") { f throws(WireError) in try f.string("sessionIdentifier") }
                default: try r.unknown(f)
                }
            }
            return .cancelSession(CancelSession(sessionIdentifier: try r.required(session, "sessionIdentifier")))
        case .transferEvents, .hostTransferEvents:
            return .transferEvents(try Self.transferEvents(&r, host: header.type == .hostTransferEvents))

        case .openURLResult:
            var id: UInt64?, accepted: Bool?
            while let f = try r.next() {
                switch f.tag {
                case Tag.OpenURLResult.requestID: try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
                case Tag.OpenURLResult.accepted: try r.once(&accepted, f, "accepted") { f throws(WireError) in try f.bool("accepted") }
                default: try r.unknown(f)
                }
            }
            return .openURLResult(
                OpenURLResult(
                    requestID: try r.required(id, "requestID"),
                    accepted: try r.required(accepted, "accepted")))

        case .memoryWarning:
            var level: MemoryWarning.Level?
            while let f = try r.next() {
                switch f.tag {
                case Tag.MemoryWarning.level:
                    try r.once(&level, f, "level") { f throws(WireError) in
                        let v = try f.u8("level")
                        guard let l = MemoryWarning.Level(rawValue: v) else {
                            throw f.error(.invalidValue, "level", "level \(v), expected 1 (warning) or 2 (critical)")
                        }
                        return l
                    }
                default: try r.unknown(f)
                }
            }
            return .memoryWarning(MemoryWarning(level: try r.required(level, "level")))

        case .requestWillExpire:
            var id: UInt64?, ms: UInt32?
            while let f = try r.next() {
                switch f.tag {
                case Tag.RequestWillExpire.requestID: try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
                case Tag.RequestWillExpire.millisecondsLeft:
                    try r.once(&ms, f, "millisecondsLeft") { f throws(WireError) in try f.u32("millisecondsLeft") }
                default: try r.unknown(f)
                }
            }
            return .requestWillExpire(
                RequestWillExpire(
                    requestID: try r.required(id, "requestID"),
                    millisecondsLeft: try r.required(ms, "millisecondsLeft")))

        case .terminate:
            var reason: String?, grace: UInt32?
            while let f = try r.next() {
                switch f.tag {
                case Tag.Terminate.reason: try r.once(&reason, f, "reason") { f throws(WireError) in try f.string("reason") }
                case Tag.Terminate.graceMilliseconds:
                    try r.once(&grace, f, "graceMilliseconds") { f throws(WireError) in try f.u32("graceMilliseconds") }
                default: try r.unknown(f)
                }
            }
            return .terminate(Terminate(reason: Reason(try r.required(reason, "reason")), graceMilliseconds: grace))

        case .hostBeginRequest:
            var id: UInt64?, bundle: String?, band: UInt32?
            var items: [ExtensionItem] = []
            while let f = try r.next() {
                switch f.tag {
                case Tag.HostBeginRequest.requestID: try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
                case Tag.HostBeginRequest.bundleIdentifier:
                    try r.once(&bundle, f, "bundleIdentifier") { f throws(WireError) in try f.string("bundleIdentifier") }
                case Tag.HostBeginRequest.item: try appendItem(&items, &r, f)
                case Tag.HostBeginRequest.band: try r.once(&band, f, "band") { f throws(WireError) in try f.u32("band") }
                default: try r.unknown(f)
                }
            }
            return .hostBeginRequest(
                HostBeginRequest(
                    requestID: try r.required(id, "requestID"),
                    bundleIdentifier: try r.required(bundle, "bundleIdentifier"),
                    items: items, band: band))

        case .requestOutcome:
            var id: UInt64?, outcome: RequestOutcome.Kind?, error: RequestError?, reason: String?, cold: Bool?
            var peak: UInt64?
            var items: [ExtensionItem] = []
            var phases: [RequestOutcome.Phase] = []
            while let f = try r.next() {
                switch f.tag {
                case Tag.RequestOutcome.requestID: try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
                case Tag.RequestOutcome.outcome:
                    try r.once(&outcome, f, "outcome") { f throws(WireError) in
                        let v = try f.u8("outcome")
                        guard let k = RequestOutcome.Kind(rawValue: v) else {
                            throw f.error(.invalidValue, "outcome", "outcome \(v), expected 1 (completed), 2 (cancelled) or 3 (failed)")
                        }
                        return k
                    }
                case Tag.RequestOutcome.item: try appendItem(&items, &r, f)
                case Tag.RequestOutcome.error: try r.once(&error, f, "error") { f throws(WireError) in try Self.requestError(f, "error") }
                case Tag.RequestOutcome.reason: try r.once(&reason, f, "reason") { f throws(WireError) in try f.string("reason") }
                case Tag.RequestOutcome.cold: try r.once(&cold, f, "cold") { f throws(WireError) in try f.bool("cold") }
                case Tag.RequestOutcome.phase:
                    try r.append(&phases, limit: WireLimits.phasesPerOutcome, f, "phases") { f, n throws(WireError) in try Self.phase(f, n) }
                    if phases.dropLast().contains(where: { $0.name == phases.last!.name }) {
                        throw f.error(.duplicateField, "phases[\(phases.count - 1)]", "phase \(phases.last!.name) appears twice")
                    }
                case Tag.RequestOutcome.peakMemoryBytes:
                    try r.once(&peak, f, "peakMemoryBytes") { f throws(WireError) in try f.u64("peakMemoryBytes") }
                default: try r.unknown(f)
                }
            }
            return .requestOutcome(
                RequestOutcome(
                    requestID: try r.required(id, "requestID"),
                    outcome: try r.required(outcome, "outcome"),
                    items: items, error: error, reason: reason.map { Reason($0) },
                    cold: cold ?? false, phases: phases, peakMemoryBytes: peak))

        case .hostCancelRequest:
            var id: UInt64?
            while let f = try r.next() {
                switch f.tag {
                case Tag.HostCancelRequest.requestID: try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
                default: try r.unknown(f)
                }
            }
            return .hostCancelRequest(HostCancelRequest(requestID: try r.required(id, "requestID")))

        case .interruption:
            var id: UInt64?, bundle: String?, reason: String?, message: String?, signal: Int32?
            var band: UInt32?, footprint: UInt64?, triggerToDeath: UInt64?
            while let f = try r.next() {
                switch f.tag {
                case Tag.Interruption.requestID: try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
                case Tag.Interruption.bundleIdentifier:
                    try r.once(&bundle, f, "bundleIdentifier") { f throws(WireError) in try f.string("bundleIdentifier") }
                case Tag.Interruption.reason: try r.once(&reason, f, "reason") { f throws(WireError) in try f.string("reason") }
                case Tag.Interruption.message: try r.once(&message, f, "message") { f throws(WireError) in try f.string("message") }
                case Tag.Interruption.signal: try r.once(&signal, f, "signal") { f throws(WireError) in try f.i32("signal") }
                case Tag.Interruption.band: try r.once(&band, f, "band") { f throws(WireError) in try f.u32("band") }
                case Tag.Interruption.footprintBytes:
                    try r.once(&footprint, f, "footprintBytes") { f throws(WireError) in try f.u64("footprintBytes") }
                case Tag.Interruption.triggerToDeathMicros:
                    try r.once(&triggerToDeath, f, "triggerToDeathMicros") { f throws(WireError) in try f.u64("triggerToDeathMicros") }
                default: try r.unknown(f)
                }
            }
            return .interruption(
                Interruption(
                    requestID: try r.required(id, "requestID"),
                    bundleIdentifier: try r.required(bundle, "bundleIdentifier"),
                    reason: Reason(try r.required(reason, "reason")),
                    message: message, signal: signal, band: band, footprintBytes: footprint,
                    triggerToDeathMicros: triggerToDeath))

        case .install, .list, .enable, .disable, .uninstall, .jetsam, .status, .cancelTransfers:
            return .admin(try decodeAdmin(&r))

        case .adminResult:
            var id: UInt64?
            var extensions: [ExtensionInfo] = []
            var jetsam: JetsamReport?
            var stateDirectory: String?
            while let f = try r.next() {
                switch f.tag {
                case Tag.AdminResult.stateDirectory:
                    try r.once(&stateDirectory, f, "stateDirectory") { f throws(WireError) in try f.string("stateDirectory") }
                case Tag.AdminResult.requestID: try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
                case Tag.AdminResult.jetsam: try r.once(&jetsam, f, "jetsam") { f throws(WireError) in try Self.jetsamReport(f, "jetsam") }
                case Tag.AdminResult.extensionInfo:
                    try r.append(&extensions, limit: WireLimits.extensionsPerResult, f, "extensions") { f, n throws(WireError) in
                        try Self.extensionInfo(f, n)
                    }
                default: try r.unknown(f)
                }
            }
            return .adminResult(
                AdminResult(
                    requestID: try r.required(id, "requestID"), extensions: extensions, jetsam: jetsam,
                    stateDirectory: stateDirectory))
        }
    }

    private func decodeAdmin(_ r: inout FieldReader) throws(WireError) -> AdminRequest {
        let type = header.type
        // Install's argument is a path, the others' a bundle identifier; List has none.
        let argumentName = type == .install ? "path" : type == .cancelTransfers ? "selector" : "bundleIdentifier"
        var id: UInt64?, argument: String?, removeData: Bool?
        while let f = try r.next() {
            switch f.tag {
            case Tag.Admin.requestID: try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
            case Tag.Admin.argument where type != .list && type != .jetsam && type != .status:
                try r.once(&argument, f, argumentName) { f throws(WireError) in try f.string(argumentName) }
            case Tag.Admin.removeData where type == .uninstall:
                try r.once(&removeData, f, "removeData") { f throws(WireError) in try f.bool("removeData") }
            default: try r.unknown(f)
            }
        }
        let rid = try r.required(id, "requestID")
        let command: AdminRequest.Command
        switch type {
        case .install: command = .install(path: try r.required(argument, argumentName))
        case .list: command = .list
        case .jetsam: command = .jetsam
        case .status: command = .status
        case .enable: command = .enable(bundleIdentifier: try r.required(argument, argumentName))
        case .disable: command = .disable(bundleIdentifier: try r.required(argument, argumentName))
        case .cancelTransfers: command = .cancelTransfers(selector: try r.required(argument, argumentName))
        default: command = .uninstall(bundleIdentifier: try r.required(argument, argumentName), removeData: removeData ?? false)
        }
        return AdminRequest(requestID: rid, command: command)
    }

    // MARK: nested structures

    private mutating func appendItem(_ items: inout [ExtensionItem], _ r: inout FieldReader, _ f: Field) throws(WireError) {
        if items.count >= WireLimits.itemsPerMessage {
            throw f.error(.tooManyElements, "items", "more than \(WireLimits.itemsPerMessage) items")
        }
        items.append(try item(f, "items[\(items.count)]"))
    }

    private mutating func item(_ field: Field, _ name: String) throws(WireError) -> ExtensionItem {
        var r = field.nested(name)
        var title: String?, text: String?
        var attachments: [Attachment] = []
        var userInfo: [String: UserInfoValue] = [:]
        while let f = try r.next() {
            switch f.tag {
            case Tag.Item.title: try r.once(&title, f, "attributedTitle") { f throws(WireError) in try f.string("attributedTitle") }
            case Tag.Item.contentText: try r.once(&text, f, "attributedContentText") { f throws(WireError) in try f.string("attributedContentText") }
            case Tag.Item.attachment:
                if attachments.count >= WireLimits.attachmentsPerItem {
                    throw f.error(.tooManyElements, "attachments", "more than \(WireLimits.attachmentsPerItem) attachments")
                }
                attachments.append(try attachment(f, "attachments[\(attachments.count)]"))
            case Tag.Item.userInfo:
                let name = "userInfo[\(userInfo.count)]"
                if userInfo.count >= WireLimits.userInfoEntriesPerItem {
                    throw f.error(.tooManyElements, "userInfo", "more than \(WireLimits.userInfoEntriesPerItem) entries")
                }
                let (key, value) = try Self.userInfoEntry(f, name)
                if userInfo[key] != nil { throw f.error(.duplicateField, name, "key \"\(key)\" appears twice") }
                userInfo[key] = value
            default: try r.unknown(f)
            }
        }
        return ExtensionItem(attributedTitle: title, attributedContentText: text, attachments: attachments, userInfo: userInfo)
    }

    private mutating func attachment(_ field: Field, _ name: String) throws(WireError) -> Attachment {
        var r = field.nested(name)
        var types: [String] = []
        var inline: [UInt8]?, index: UInt32?, suggested: String?
        var contentField: Field?
        while let f = try r.next() {
            switch f.tag {
            case Tag.Attachment.typeIdentifier:
                try r.append(&types, limit: WireLimits.typeIdentifiersPerAttachment, f, "typeIdentifiers") { f, n throws(WireError) in try f.string(n)
                }
            case Tag.Attachment.inlineData:
                try r.once(&inline, f, "inlineData") { f in f.data("inlineData") }
                contentField = f
            case Tag.Attachment.fdIndex:
                try r.once(&index, f, "fdIndex") { f throws(WireError) in try f.u32("fdIndex") }
                contentField = f
            case Tag.Attachment.suggestedName: try r.once(&suggested, f, "suggestedName") { f throws(WireError) in try f.string("suggestedName") }
            default: try r.unknown(f)
            }
        }
        if types.isEmpty {
            throw WireError(
                .missingField, field: r.path + ".typeIdentifiers", offset: field.offset, "an attachment needs at least one type identifier")
        }
        let content: Attachment.Content
        switch (inline, index) {
        case (let bytes?, nil):
            content = .inline(bytes)
        case (nil, let i?):
            guard Int(i) < header.descriptorCount else {
                throw contentField!.error(
                    .badDescriptorIndex, "fdIndex",
                    "index \(i), the frame carries \(header.descriptorCount) descriptors")
            }
            let bit: UInt32 = 1 << i
            if usedDescriptors & bit != 0 {
                throw contentField!.error(.badDescriptorIndex, "fdIndex", "descriptor \(i) is already used by another attachment")
            }
            usedDescriptors |= bit
            content = .descriptor(index: Int(i))
        case (nil, nil):
            throw WireError(.missingField, field: r.path + ".inlineData", offset: field.offset, "an attachment needs inlineData or fdIndex")
        case (_?, _?):
            throw contentField!.error(.conflictingFields, "fdIndex", "inlineData and fdIndex are exclusive")
        }
        return Attachment(typeIdentifiers: types, content: content, suggestedName: suggested)
    }

    private static func userInfoEntry(_ field: Field, _ name: String) throws(WireError) -> (String, UserInfoValue) {
        var r = field.nested(name)
        var key: String?, value: UserInfoValue?
        while let f = try r.next() {
            let v: UserInfoValue
            switch f.tag {
            case Tag.UserInfo.key:
                try r.once(&key, f, "key") { f throws(WireError) in try f.string("key") }
                continue
            case Tag.UserInfo.string: v = .string(try f.string("string"))
            case Tag.UserInfo.integer: v = .integer(try f.i64("integer"))
            case Tag.UserInfo.bool: v = .bool(try f.bool("bool"))
            case Tag.UserInfo.double: v = .double(try f.f64("double"))
            case Tag.UserInfo.data: v = .data(f.data("data"))
            default:
                try r.unknown(f)
                continue
            }
            if value != nil { throw f.error(.conflictingFields, "value", "an entry holds exactly one value") }
            value = v
        }
        return (try r.required(key, "key"), try r.required(value, "value"))
    }

    private static func requestError(_ field: Field, _ name: String) throws(WireError) -> RequestError {
        var r = field.nested(name)
        var domain: String?, code: Int64?, message: String?
        while let f = try r.next() {
            switch f.tag {
            case Tag.Error.domain: try r.once(&domain, f, "domain") { f throws(WireError) in try f.string("domain") }
            case Tag.Error.code: try r.once(&code, f, "code") { f throws(WireError) in try f.i64("code") }
            case Tag.Error.message: try r.once(&message, f, "message") { f throws(WireError) in try f.string("message") }
            default: try r.unknown(f)
            }
        }
        return RequestError(domain: try r.required(domain, "domain"), code: try r.required(code, "code"), message: message)
    }

    private static func phase(_ field: Field, _ name: String) throws(WireError) -> RequestOutcome.Phase {
        var r = field.nested(name)
        var n: String?, us: UInt64?
        while let f = try r.next() {
            switch f.tag {
            case Tag.Phase.name: try r.once(&n, f, "name") { f throws(WireError) in try f.string("name") }
            case Tag.Phase.microseconds: try r.once(&us, f, "microseconds") { f throws(WireError) in try f.u64("microseconds") }
            default: try r.unknown(f)
            }
        }
        return RequestOutcome.Phase(try r.required(n, "name"), microseconds: try r.required(us, "microseconds"))
    }

    private static func jetsamReport(_ field: Field, _ name: String) throws(WireError) -> JetsamReport {
        var r = field.nested(name)
        var level: String?, budget: UInt64?, footprint: UInt64?, available: UInt64?
        var entries: [JetsamEntry] = []
        while let f = try r.next() {
            switch f.tag {
            case Tag.JetsamReport.level: try r.once(&level, f, "level") { f throws(WireError) in try f.string("level") }
            case Tag.JetsamReport.budgetBytes: try r.once(&budget, f, "budgetBytes") { f throws(WireError) in try f.u64("budgetBytes") }
            case Tag.JetsamReport.footprintBytes: try r.once(&footprint, f, "footprintBytes") { f throws(WireError) in try f.u64("footprintBytes") }
            case Tag.JetsamReport.availableBytes: try r.once(&available, f, "availableBytes") { f throws(WireError) in try f.u64("availableBytes") }
            case Tag.JetsamReport.entry:
                try r.append(&entries, limit: WireLimits.extensionsPerResult, f, "entries") { f, n throws(WireError) in
                    try Self.jetsamEntry(f, n)
                }
            default: try r.unknown(f)
            }
        }
        return JetsamReport(
            level: try r.required(level, "level"), budgetBytes: budget,
            footprintBytes: try r.required(footprint, "footprintBytes"), availableBytes: available, entries: entries)
    }

    private static func jetsamEntry(_ field: Field, _ name: String) throws(WireError) -> JetsamEntry {
        var r = field.nested(name)
        var id: String?, instance: UInt64?, pid: Int32?, band: UInt32?, state: String?, footprint: UInt64?
        var aSoft: UInt64?, aHard: UInt64?, iSoft: UInt64?, iHard: UInt64?, active: Bool?, over: Bool?, inBand: UInt64?
        var cpu: UInt64?, launch: UInt64?
        while let f = try r.next() {
            switch f.tag {
            case Tag.JetsamEntry.bundleIdentifier: try r.once(&id, f, "bundleIdentifier") { f throws(WireError) in try f.string("bundleIdentifier") }
            case Tag.JetsamEntry.instance: try r.once(&instance, f, "instance") { f throws(WireError) in try f.u64("instance") }
            case Tag.JetsamEntry.pid: try r.once(&pid, f, "pid") { f throws(WireError) in try f.i32("pid") }
            case Tag.JetsamEntry.band: try r.once(&band, f, "band") { f throws(WireError) in try f.u32("band") }
            case Tag.JetsamEntry.state: try r.once(&state, f, "state") { f throws(WireError) in try f.string("state") }
            case Tag.JetsamEntry.footprintBytes: try r.once(&footprint, f, "footprintBytes") { f throws(WireError) in try f.u64("footprintBytes") }
            case Tag.JetsamEntry.activeSoft:
                try r.once(&aSoft, f, "activeSoftLimitBytes") { f throws(WireError) in try f.u64("activeSoftLimitBytes") }
            case Tag.JetsamEntry.activeHard:
                try r.once(&aHard, f, "activeHardLimitBytes") { f throws(WireError) in try f.u64("activeHardLimitBytes") }
            case Tag.JetsamEntry.inactiveSoft:
                try r.once(&iSoft, f, "inactiveSoftLimitBytes") { f throws(WireError) in try f.u64("inactiveSoftLimitBytes") }
            case Tag.JetsamEntry.inactiveHard:
                try r.once(&iHard, f, "inactiveHardLimitBytes") { f throws(WireError) in try f.u64("inactiveHardLimitBytes") }
            case Tag.JetsamEntry.active: try r.once(&active, f, "active") { f throws(WireError) in try f.bool("active") }
            case Tag.JetsamEntry.overSoftLimit: try r.once(&over, f, "overSoftLimit") { f throws(WireError) in try f.bool("overSoftLimit") }
            case Tag.JetsamEntry.timeInBandMicros: try r.once(&inBand, f, "timeInBandMicros") { f throws(WireError) in try f.u64("timeInBandMicros") }
            case Tag.JetsamEntry.cpuMicros: try r.once(&cpu, f, "cpuMicros") { f throws(WireError) in try f.u64("cpuMicros") }
            case Tag.JetsamEntry.lastLaunchMicros: try r.once(&launch, f, "lastLaunchMicros") { f throws(WireError) in try f.u64("lastLaunchMicros") }
            default: try r.unknown(f)
            }
        }
        return JetsamEntry(
            bundleIdentifier: try r.required(id, "bundleIdentifier"), instance: try r.required(instance, "instance"),
            pid: try r.required(pid, "pid"), band: try r.required(band, "band"), state: try r.required(state, "state"),
            footprintBytes: try r.required(footprint, "footprintBytes"),
            activeSoftLimitBytes: try r.required(aSoft, "activeSoftLimitBytes"),
            activeHardLimitBytes: try r.required(aHard, "activeHardLimitBytes"),
            inactiveSoftLimitBytes: try r.required(iSoft, "inactiveSoftLimitBytes"),
            inactiveHardLimitBytes: try r.required(iHard, "inactiveHardLimitBytes"),
            active: try r.required(active, "active"), overSoftLimit: try r.required(over, "overSoftLimit"),
            timeInBandMicros: try r.required(inBand, "timeInBandMicros"), cpuMicros: cpu, lastLaunchMicros: launch)
    }

    private static func extensionInfo(_ field: Field, _ name: String) throws(WireError) -> ExtensionInfo {
        var r = field.nested(name)
        var id: String?, point: String?, enabled: Bool?, display: String?, version: String?, app: String?
        while let f = try r.next() {
            switch f.tag {
            case Tag.ExtensionInfo.bundleIdentifier:
                try r.once(&id, f, "bundleIdentifier") { f throws(WireError) in try f.string("bundleIdentifier") }
            case Tag.ExtensionInfo.extensionPoint: try r.once(&point, f, "extensionPoint") { f throws(WireError) in try f.string("extensionPoint") }
            case Tag.ExtensionInfo.enabled: try r.once(&enabled, f, "enabled") { f throws(WireError) in try f.bool("enabled") }
            case Tag.ExtensionInfo.displayName: try r.once(&display, f, "displayName") { f throws(WireError) in try f.string("displayName") }
            case Tag.ExtensionInfo.version: try r.once(&version, f, "version") { f throws(WireError) in try f.string("version") }
            case Tag.ExtensionInfo.containingApp: try r.once(&app, f, "containingApp") { f throws(WireError) in try f.string("containingApp") }
            default: try r.unknown(f)
            }
        }
        return ExtensionInfo(
            bundleIdentifier: try r.required(id, "bundleIdentifier"),
            extensionPoint: try r.required(point, "extensionPoint"),
            enabled: try r.required(enabled, "enabled"),
            displayName: display, version: version, containingApp: app)
    }
}
