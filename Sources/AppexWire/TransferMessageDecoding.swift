// Decoding of the background-transfer messages (TransferMessages.swift), beside the others'.

extension MessageDecoder {
    static func transferKind(_ f: Field, _ name: String) throws(WireError) -> TransferKind {
        let v = try f.u8(name)
        guard let k = TransferKind(rawValue: v) else { throw f.error(.invalidValue, name, "kind \(v) is not 1 (download) or 2 (upload)") }
        return k
    }

    static func scheduleTransfer(_ r: inout FieldReader) throws(WireError) -> ScheduleTransfer {
        var id: UInt64?, token: UInt64?, session: String?, kind: TransferKind?, url: String?
        var group: String?, file: String?, method: String?
        var headers: [String] = []
        while let f = try r.next() {
            switch f.tag {
            case Tag.ScheduleTransfer.requestID: try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
            case Tag.ScheduleTransfer.token: try r.once(&token, f, "token") { f throws(WireError) in try f.u64("token") }
            case Tag.ScheduleTransfer.sessionIdentifier:
                try r.once(&session, f, "sessionIdentifier") { f throws(WireError) in try f.string("sessionIdentifier") }
            case Tag.ScheduleTransfer.kind: try r.once(&kind, f, "kind") { f throws(WireError) in try transferKind(f, "kind") }
            case Tag.ScheduleTransfer.url: try r.once(&url, f, "url") { f throws(WireError) in try f.string("url") }
            case Tag.ScheduleTransfer.appGroup: try r.once(&group, f, "appGroup") { f throws(WireError) in try f.string("appGroup") }
            case Tag.ScheduleTransfer.fileName: try r.once(&file, f, "fileName") { f throws(WireError) in try f.string("fileName") }
            case Tag.ScheduleTransfer.method: try r.once(&method, f, "method") { f throws(WireError) in try f.string("method") }
            case Tag.ScheduleTransfer.header:
                try r.append(&headers, limit: WireLimits.headersPerTransfer, f, "headers") { f, n throws(WireError) in try f.string(n) }
            default: try r.unknown(f)
            }
        }
        return ScheduleTransfer(
            requestID: try r.required(id, "requestID"), token: try r.required(token, "token"),
            sessionIdentifier: try r.required(session, "sessionIdentifier"),
            transfer: TransferRequest(
                kind: try r.required(kind, "kind"), url: try r.required(url, "url"),
                appGroup: try r.required(group, "appGroup"),
                fileName: try r.required(file, "fileName"), method: method, headers: headers))
    }

    static func transferScheduled(_ r: inout FieldReader) throws(WireError) -> TransferScheduled {
        var id: UInt64?, token: UInt64?, transfer: UInt64?, reason: String?, message: String?
        while let f = try r.next() {
            switch f.tag {
            case Tag.TransferScheduled.requestID: try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
            case Tag.TransferScheduled.token: try r.once(&token, f, "token") { f throws(WireError) in try f.u64("token") }
            case Tag.TransferScheduled.transferID: try r.once(&transfer, f, "transferID") { f throws(WireError) in try f.u64("transferID") }
            case Tag.TransferScheduled.reason: try r.once(&reason, f, "reason") { f throws(WireError) in try f.string("reason") }
            case Tag.TransferScheduled.message: try r.once(&message, f, "message") { f throws(WireError) in try f.string("message") }
            default: try r.unknown(f)
            }
        }
        return TransferScheduled(
            requestID: try r.required(id, "requestID"), token: try r.required(token, "token"),
            transferID: transfer, reason: reason.map(Reason.init(rawValue:)), message: message)
    }

    /// `host`: the control channel's form, which names no request.
    static func transferEvents(_ r: inout FieldReader, host: Bool) throws(WireError) -> TransferEvents {
        var id: UInt64?, session: String?, bundle: String?
        var results: [TransferResult] = []
        while let f = try r.next() {
            switch f.tag {
            case Tag.TransferEvents.requestID where !host:
                try r.once(&id, f, "requestID") { f throws(WireError) in try f.u64("requestID") }
            case Tag.TransferEvents.sessionIdentifier:
                try r.once(&session, f, "sessionIdentifier") { f throws(WireError) in try f.string("sessionIdentifier") }
            case Tag.TransferEvents.bundleIdentifier:
                try r.once(&bundle, f, "bundleIdentifier") { f throws(WireError) in try f.string("bundleIdentifier") }
            case Tag.TransferEvents.result:
                try r.append(&results, limit: WireLimits.resultsPerEvent, f, "results") { f, n throws(WireError) in try transferResult(f, n) }
            default: try r.unknown(f)
            }
        }
        let rid: UInt64 = host ? 0 : try r.required(id, "requestID")
        if !host && rid == 0 { throw WireError(.invalidValue, field: "TransferEvents.requestID", "request ids start above 0") }
        return TransferEvents(
            requestID: rid, sessionIdentifier: try r.required(session, "sessionIdentifier"),
            bundleIdentifier: try r.required(bundle, "bundleIdentifier"), results: results)
    }

    private static func transferResult(_ field: Field, _ name: String) throws(WireError) -> TransferResult {
        var r = field.nested(name)
        var id: UInt64?, kind: TransferKind?, file: String?, outcome: TransferResult.Outcome?
        var reason: String?, message: String?, bytes: UInt64?, status: UInt32?
        while let f = try r.next() {
            switch f.tag {
            case Tag.TransferResult.transferID: try r.once(&id, f, "transferID") { f throws(WireError) in try f.u64("transferID") }
            case Tag.TransferResult.kind: try r.once(&kind, f, "kind") { f throws(WireError) in try transferKind(f, "kind") }
            case Tag.TransferResult.fileName: try r.once(&file, f, "fileName") { f throws(WireError) in try f.string("fileName") }
            case Tag.TransferResult.outcome:
                try r.once(&outcome, f, "outcome") { f throws(WireError) in
                    let v = try f.u8("outcome")
                    guard let o = TransferResult.Outcome(rawValue: v) else {
                        throw f.error(.invalidValue, "outcome", "outcome \(v) is not 1, 2 or 3")
                    }
                    return o
                }
            case Tag.TransferResult.reason: try r.once(&reason, f, "reason") { f throws(WireError) in try f.string("reason") }
            case Tag.TransferResult.message: try r.once(&message, f, "message") { f throws(WireError) in try f.string("message") }
            case Tag.TransferResult.bytes: try r.once(&bytes, f, "bytes") { f throws(WireError) in try f.u64("bytes") }
            case Tag.TransferResult.httpStatus: try r.once(&status, f, "httpStatus") { f throws(WireError) in try f.u32("httpStatus") }
            default: try r.unknown(f)
            }
        }
        return TransferResult(
            transferID: try r.required(id, "transferID"), kind: try r.required(kind, "kind"),
            fileName: try r.required(file, "fileName"), outcome: try r.required(outcome, "outcome"),
            reason: reason.map(Reason.init(rawValue:)), message: message,
            bytes: try r.required(bytes, "bytes"), httpStatus: status)
    }
}
