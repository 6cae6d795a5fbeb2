import AppexActivation
import AppexWire

/// Whether a host's request may reach an extension at all, before anything is launched:
/// the extension must be installed and enabled (installed extensions start disabled, as on
/// iOS), and the request's items must satisfy its activation rule.
enum RequestAdmission {
    static func refusal(for request: HostBeginRequest, entry: CatalogEntry?) -> Refusal? {
        let id = request.requestID
        guard let entry else {
            return Refusal(
                reason: .unknownExtension, message: "no extension \(request.bundleIdentifier) is installed",
                requestID: id)
        }
        guard entry.installed.isEnabled else {
            return Refusal(
                reason: .disabled, message: "\(entry.identifier) is disabled (appex enable \(entry.identifier))",
                requestID: id)
        }
        guard let rule = entry.rule else {
            return Refusal(
                reason: .notActivated,
                message: "\(entry.identifier)'s activation rule is invalid: \(entry.ruleProblem ?? "unknown")",
                requestID: id)
        }
        let items = activationItems(request.items)
        do {
            try items.validate()
            if case .notActivated(let why) = try rule.evaluate(items) {
                return Refusal(reason: .notActivated, message: why, requestID: id)
            }
        } catch {
            return Refusal(reason: .notActivated, message: "the items cannot be matched: \(error)", requestID: id)
        }
        return nil
    }

    /// The wire's items as the activation rules see them: text, title and each attachment's
    /// registered type identifiers (an attachment's bytes never matter to activation).
    static func activationItems(_ items: [AppexWire.ExtensionItem]) -> ActivationItems {
        ActivationItems(
            extensionItems: items.map { item in
                ActivationItem(
                    attachments: item.attachments.map {
                        ActivationAttachment(registeredTypeIdentifiers: $0.typeIdentifiers, suggestedName: $0.suggestedName)
                    },
                    attributedContentText: item.attributedContentText,
                    attributedTitle: item.attributedTitle)
            })
    }
}
