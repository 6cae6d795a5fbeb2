/// Message -> payload bytes. The encoder refuses what the decoder would refuse (NUL in strings,
/// counts over the limits, descriptor indices with gaps), so whatever it produces decodes.
struct MessageEncoder {
    var w = TLVWriter()
    /// Descriptor indices the attachments referenced, in the order met.
    var descriptors: [Int] = []

    mutating func encode(_ message: Message) throws(WireError) {
        let name = message.type.name
        switch message {
        case .hello(let m):
            w.u32(Tag.Hello.protocolVersion, m.protocolVersion)
            try w.string(Tag.Hello.bundleIdentifier, m.bundleIdentifier, field: name + ".bundleIdentifier")
            w.i32(Tag.Hello.pid, m.pid)
        case .refusal(let m):
            try w.string(Tag.Refusal.reason, m.reason.rawValue, field: name + ".reason")
            if let v = m.message { try w.string(Tag.Refusal.message, v, field: name + ".message") }
            if let v = m.requestID { w.u64(Tag.Refusal.requestID, v) }
            try limit(m.details.count, WireLimits.detailsPerRefusal, name + ".details")
            for d in m.details { try w.string(Tag.Refusal.detail, d, field: name + ".details") }
        case .ping(let s), .pong(let s):
            w.u64(Tag.Ping.sequence, s)
        case .beginRequest(let m):
            w.u64(Tag.Request.requestID, m.requestID)
            try items(m.items, Tag.Request.item, name)
        case .completeRequest(let m):
            w.u64(Tag.Request.requestID, m.requestID)
            try items(m.items, Tag.Request.item, name)
        case .cancelRequest(let m):
            w.u64(Tag.CancelRequest.requestID, m.requestID)
            try requestError(m.error, Tag.CancelRequest.error, name + ".error")
        case .openURL(let m):
            w.u64(Tag.OpenURL.requestID, m.requestID)
            try w.string(Tag.OpenURL.url, m.url, field: name + ".url")
        case .openURLResult(let m):
            w.u64(Tag.OpenURLResult.requestID, m.requestID)
            w.bool(Tag.OpenURLResult.accepted, m.accepted)
        case .memoryWarning(let m):
            w.u8(Tag.MemoryWarning.level, m.level.rawValue)
        case .requestWillExpire(let m):
            w.u64(Tag.RequestWillExpire.requestID, m.requestID)
            w.u32(Tag.RequestWillExpire.millisecondsLeft, m.millisecondsLeft)
        case .terminate(let m):
            try w.string(Tag.Terminate.reason, m.reason.rawValue, field: name + ".reason")
            if let g = m.graceMilliseconds { w.u32(Tag.Terminate.graceMilliseconds, g) }
        case .scheduleTransfer(let m):
            w.u64(Tag.ScheduleTransfer.requestID, m.requestID)
            w.u64(Tag.ScheduleTransfer.token, m.token)
            try w.string(Tag.ScheduleTransfer.sessionIdentifier, m.sessionIdentifier, field: name + ".sessionIdentifier")
            w.u8(Tag.ScheduleTransfer.kind, m.transfer.kind.rawValue)
            try w.string(Tag.ScheduleTransfer.url, m.transfer.url, field: name + ".url")
            try w.string(Tag.ScheduleTransfer.appGroup, m.transfer.appGroup, field: name + ".appGroup")
            try w.string(Tag.ScheduleTransfer.fileName, m.transfer.fileName, field: name + ".fileName")
            if let v = m.transfer.method { try w.string(Tag.ScheduleTransfer.method, v, field: name + ".method") }
            try limit(m.transfer.headers.count, WireLimits.headersPerTransfer, name + ".headers")
            for h in m.transfer.headers { try w.string(Tag.ScheduleTransfer.header, h, field: name + ".headers") }
        case .cancelSession(let m):
            try w.string(Tag.CancelSession.sessionIdentifier, m.sessionIdentifier, field: name + ".sessionIdentifier")
        case .transferScheduled(let m):
            w.u64(Tag.TransferScheduled.requestID, m.requestID)
            w.u64(Tag.TransferScheduled.token, m.token)
            if let v = m.transferID { w.u64(Tag.TransferScheduled.transferID, v) }
            if let v = m.reason { try w.string(Tag.TransferScheduled.reason, v.rawValue, field: name + ".reason") }
            if let v = m.message { try w.string(Tag.TransferScheduled.message, v, field: name + ".message") }
        case .transferEvents(let m):
            if m.requestID != 0 { w.u64(Tag.TransferEvents.requestID, m.requestID) }
            try w.string(Tag.TransferEvents.sessionIdentifier, m.sessionIdentifier, field: name + ".sessionIdentifier")
            try w.string(Tag.TransferEvents.bundleIdentifier, m.bundleIdentifier, field: name + ".bundleIdentifier")
            try limit(m.results.count, WireLimits.resultsPerEvent, name + ".results")
            for r in m.results {
                try w.nested(Tag.TransferEvents.result) { (w: inout TLVWriter) throws(WireError) in
                    let n = name + ".results"
                    w.u64(Tag.TransferResult.transferID, r.transferID)
                    w.u8(Tag.TransferResult.kind, r.kind.rawValue)
                    try w.string(Tag.TransferResult.fileName, r.fileName, field: n + ".fileName")
                    w.u8(Tag.TransferResult.outcome, r.outcome.rawValue)
                    if let v = r.reason { try w.string(Tag.TransferResult.reason, v.rawValue, field: n + ".reason") }
                    if let v = r.message { try w.string(Tag.TransferResult.message, v, field: n + ".message") }
                    w.u64(Tag.TransferResult.bytes, r.bytes)
                    if let v = r.httpStatus { w.u32(Tag.TransferResult.httpStatus, v) }
                }
            }
        case .hostBeginRequest(let m):
            w.u64(Tag.HostBeginRequest.requestID, m.requestID)
            try w.string(Tag.HostBeginRequest.bundleIdentifier, m.bundleIdentifier, field: name + ".bundleIdentifier")
            try items(m.items, Tag.HostBeginRequest.item, name)
            if let b = m.band { w.u32(Tag.HostBeginRequest.band, b) }
        case .requestOutcome(let m):
            w.u64(Tag.RequestOutcome.requestID, m.requestID)
            w.u8(Tag.RequestOutcome.outcome, m.outcome.rawValue)
            try items(m.items, Tag.RequestOutcome.item, name)
            if let e = m.error { try requestError(e, Tag.RequestOutcome.error, name + ".error") }
            if let r = m.reason { try w.string(Tag.RequestOutcome.reason, r.rawValue, field: name + ".reason") }
            if m.cold { w.bool(Tag.RequestOutcome.cold, true) }
            try limit(m.phases.count, WireLimits.phasesPerOutcome, name + ".phases")
            var seen = Set<String>()
            for p in m.phases {
                if !seen.insert(p.name).inserted {
                    throw WireError(.duplicateField, field: name + ".phases", "phase \(p.name) appears twice")
                }
                try w.nested(Tag.RequestOutcome.phase) { (w: inout TLVWriter) throws(WireError) in
                    try w.string(Tag.Phase.name, p.name, field: name + ".phases.name")
                    w.u64(Tag.Phase.microseconds, p.microseconds)
                }
            }
            if let peak = m.peakMemoryBytes { w.u64(Tag.RequestOutcome.peakMemoryBytes, peak) }
        case .hostCancelRequest(let m):
            w.u64(Tag.HostCancelRequest.requestID, m.requestID)
        case .interruption(let m):
            w.u64(Tag.Interruption.requestID, m.requestID)
            try w.string(Tag.Interruption.bundleIdentifier, m.bundleIdentifier, field: name + ".bundleIdentifier")
            try w.string(Tag.Interruption.reason, m.reason.rawValue, field: name + ".reason")
            if let v = m.message { try w.string(Tag.Interruption.message, v, field: name + ".message") }
            if let s = m.signal { w.i32(Tag.Interruption.signal, s) }
            if let v = m.band { w.u32(Tag.Interruption.band, v) }
            if let v = m.footprintBytes { w.u64(Tag.Interruption.footprintBytes, v) }
            if let v = m.triggerToDeathMicros { w.u64(Tag.Interruption.triggerToDeathMicros, v) }
        case .admin(let m):
            w.u64(Tag.Admin.requestID, m.requestID)
            switch m.command {
            case .install(let path):
                try w.string(Tag.Admin.argument, path, field: name + ".path")
            case .list, .jetsam, .status:
                break
            case .enable(let id), .disable(let id):
                try w.string(Tag.Admin.argument, id, field: name + ".bundleIdentifier")
            case .cancelTransfers(let selector):
                try w.string(Tag.Admin.argument, selector, field: name + ".selector")
            case .uninstall(let id, let removeData):
                try w.string(Tag.Admin.argument, id, field: name + ".bundleIdentifier")
                if removeData { w.bool(Tag.Admin.removeData, true) }
            }
        case .adminResult(let m):
            w.u64(Tag.AdminResult.requestID, m.requestID)
            try limit(m.extensions.count, WireLimits.extensionsPerResult, name + ".extensions")
            for e in m.extensions {
                try w.nested(Tag.AdminResult.extensionInfo) { (w: inout TLVWriter) throws(WireError) in
                    let f = name + ".extensions"
                    try w.string(Tag.ExtensionInfo.bundleIdentifier, e.bundleIdentifier, field: f + ".bundleIdentifier")
                    try w.string(Tag.ExtensionInfo.extensionPoint, e.extensionPoint, field: f + ".extensionPoint")
                    w.bool(Tag.ExtensionInfo.enabled, e.enabled)
                    if let v = e.displayName { try w.string(Tag.ExtensionInfo.displayName, v, field: f + ".displayName") }
                    if let v = e.version { try w.string(Tag.ExtensionInfo.version, v, field: f + ".version") }
                    if let v = e.containingApp { try w.string(Tag.ExtensionInfo.containingApp, v, field: f + ".containingApp") }
                }
            }
            if let v = m.stateDirectory { try w.string(Tag.AdminResult.stateDirectory, v, field: name + ".stateDirectory") }
            if let j = m.jetsam {
                try limit(j.entries.count, WireLimits.extensionsPerResult, name + ".jetsam.entries")
                try w.nested(Tag.AdminResult.jetsam) { (w: inout TLVWriter) throws(WireError) in
                    let f = name + ".jetsam"
                    try w.string(Tag.JetsamReport.level, j.level, field: f + ".level")
                    if let v = j.budgetBytes { w.u64(Tag.JetsamReport.budgetBytes, v) }
                    w.u64(Tag.JetsamReport.footprintBytes, j.footprintBytes)
                    if let v = j.availableBytes { w.u64(Tag.JetsamReport.availableBytes, v) }
                    for e in j.entries {
                        try w.nested(Tag.JetsamReport.entry) { (w: inout TLVWriter) throws(WireError) in
                            try w.string(Tag.JetsamEntry.bundleIdentifier, e.bundleIdentifier, field: f + ".entries.bundleIdentifier")
                            w.u64(Tag.JetsamEntry.instance, e.instance)
                            w.i32(Tag.JetsamEntry.pid, e.pid)
                            w.u32(Tag.JetsamEntry.band, e.band)
                            try w.string(Tag.JetsamEntry.state, e.state, field: f + ".entries.state")
                            w.u64(Tag.JetsamEntry.footprintBytes, e.footprintBytes)
                            w.u64(Tag.JetsamEntry.activeSoft, e.activeSoftLimitBytes)
                            w.u64(Tag.JetsamEntry.activeHard, e.activeHardLimitBytes)
                            w.u64(Tag.JetsamEntry.inactiveSoft, e.inactiveSoftLimitBytes)
                            w.u64(Tag.JetsamEntry.inactiveHard, e.inactiveHardLimitBytes)
                            w.bool(Tag.JetsamEntry.active, e.active)
                            w.bool(Tag.JetsamEntry.overSoftLimit, e.overSoftLimit)
                            w.u64(Tag.JetsamEntry.timeInBandMicros, e.timeInBandMicros)
                            if let v = e.cpuMicros { w.u64(Tag.JetsamEntry.cpuMicros, v) }
                            if let v = e.lastLaunchMicros { w.u64(Tag.JetsamEntry.lastLaunchMicros, v) }
                        }
                    }
                }
            }
        }
    }

    private func limit(_ count: Int, _ max: Int, _ field: String) throws(WireError) {
        if count > max { throw WireError(.tooManyElements, field: field, "\(count) elements, at most \(max)") }
    }

    private mutating func requestError(_ e: RequestError, _ tag: UInt16, _ field: String) throws(WireError) {
        try w.nested(tag) { (w: inout TLVWriter) throws(WireError) in
            try w.string(Tag.Error.domain, e.domain, field: field + ".domain")
            w.i64(Tag.Error.code, e.code)
            if let m = e.message { try w.string(Tag.Error.message, m, field: field + ".message") }
        }
    }

    private mutating func items(_ items: [ExtensionItem], _ tag: UInt16, _ message: String) throws(WireError) {
        try limit(items.count, WireLimits.itemsPerMessage, message + ".items")
        for (i, item) in items.enumerated() {
            let path = "\(message).items[\(i)]"
            // The closure cannot capture `self` mutably while `w` is borrowed: collect indices aside.
            var seen: [Int] = []
            try w.nested(tag) { (w: inout TLVWriter) throws(WireError) in
                try Self.item(item, &w, &seen, path)
            }
            descriptors.append(contentsOf: seen)
        }
    }

    private static func item(_ item: ExtensionItem, _ w: inout TLVWriter, _ fds: inout [Int], _ path: String) throws(WireError) {
        if let t = item.attributedTitle { try w.string(Tag.Item.title, t, field: path + ".attributedTitle") }
        if let t = item.attributedContentText { try w.string(Tag.Item.contentText, t, field: path + ".attributedContentText") }
        if item.attachments.count > WireLimits.attachmentsPerItem {
            throw WireError(
                .tooManyElements, field: path + ".attachments",
                "\(item.attachments.count) attachments, at most \(WireLimits.attachmentsPerItem)")
        }
        for (i, a) in item.attachments.enumerated() {
            let ap = "\(path).attachments[\(i)]"
            if a.typeIdentifiers.isEmpty || a.typeIdentifiers.count > WireLimits.typeIdentifiersPerAttachment {
                throw WireError(
                    .tooManyElements, field: ap + ".typeIdentifiers",
                    "\(a.typeIdentifiers.count) type identifiers, 1 to \(WireLimits.typeIdentifiersPerAttachment) allowed")
            }
            try w.nested(Tag.Item.attachment) { (w: inout TLVWriter) throws(WireError) in
                for t in a.typeIdentifiers { try w.string(Tag.Attachment.typeIdentifier, t, field: ap + ".typeIdentifiers") }
                switch a.content {
                case .inline(let bytes):
                    try w.data(Tag.Attachment.inlineData, bytes)
                case .descriptor(let index):
                    guard index >= 0, index < WireLimits.descriptorsPerFrame else {
                        throw WireError(
                            .badDescriptorIndex, field: ap + ".fdIndex",
                            "index \(index), descriptors are numbered 0..<\(WireLimits.descriptorsPerFrame)")
                    }
                    w.u32(Tag.Attachment.fdIndex, UInt32(index))
                    fds.append(index)
                }
                if let n = a.suggestedName { try w.string(Tag.Attachment.suggestedName, n, field: ap + ".suggestedName") }
            }
        }
        if item.userInfo.count > WireLimits.userInfoEntriesPerItem {
            throw WireError(
                .tooManyElements, field: path + ".userInfo",
                "\(item.userInfo.count) entries, at most \(WireLimits.userInfoEntriesPerItem)")
        }
        // Sorted keys: the same item always encodes to the same bytes.
        for key in item.userInfo.keys.sorted() {
            let value = item.userInfo[key]!
            let vp = "\(path).userInfo[\(key)]"
            try w.nested(Tag.Item.userInfo) { (w: inout TLVWriter) throws(WireError) in
                try w.string(Tag.UserInfo.key, key, field: vp + ".key")
                switch value {
                case .string(let s): try w.string(Tag.UserInfo.string, s, field: vp)
                case .integer(let i): w.i64(Tag.UserInfo.integer, i)
                case .bool(let b): w.bool(Tag.UserInfo.bool, b)
                case .double(let d): w.f64(Tag.UserInfo.double, d)
                case .data(let d): try w.data(Tag.UserInfo.data, d)
                }
            }
        }
    }

    /// The frame's descriptor count: indices must be exactly 0..<n, each used once.
    func descriptorCount(_ message: MessageType) throws(WireError) -> Int {
        let n = descriptors.count
        let field = message.name + ".attachments.fdIndex"
        if n > WireLimits.descriptorsPerFrame {
            throw WireError(.tooManyDescriptors, field: field, "\(n) descriptors, at most \(WireLimits.descriptorsPerFrame)")
        }
        var used = [Bool](repeating: false, count: n)
        for i in descriptors {
            guard i < n, !used[i] else {
                throw WireError(
                    .badDescriptorIndex, field: field,
                    "descriptor indices must be 0..<\(n), each used once; got \(descriptors)")
            }
            used[i] = true
        }
        return n
    }
}
