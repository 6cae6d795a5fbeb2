/// Extension points Apple defines, by `NSExtensionPointIdentifier`.
///
/// An identifier outside this list is refused at validation (Apple would not install it).
/// Whether Appex *runs* a known point with its own rules is up to `Policies/`; a known point
/// without a shipped policy runs under the defaults.
public enum ExtensionPointCatalog {
    public struct Entry: Sendable, Hashable {
        public var identifier: String
        /// What Apple calls it in Xcode's template list.
        public var title: String
        /// Whether Apple's share sheet machinery evaluates an activation rule for it.
        public var usesActivationRule: Bool
    }

    public static let entries: [Entry] = [
        .init(identifier: "com.apple.share-services", title: "Share", usesActivationRule: true),
        .init(identifier: "com.apple.ui-services", title: "Action", usesActivationRule: true),
        .init(identifier: "com.apple.services", title: "Action (macOS)", usesActivationRule: true),
        .init(identifier: "com.apple.widget-extension", title: "Today widget", usesActivationRule: false),
        .init(identifier: "com.apple.widgetkit-extension", title: "WidgetKit widget", usesActivationRule: false),
        .init(identifier: "com.apple.keyboard-service", title: "Custom keyboard", usesActivationRule: false),
        .init(identifier: "com.apple.photo-editing", title: "Photo editing", usesActivationRule: false),
        .init(identifier: "com.apple.fileprovider-nonui", title: "File provider", usesActivationRule: false),
        .init(identifier: "com.apple.fileprovider-ui", title: "File provider UI", usesActivationRule: false),
        .init(identifier: "com.apple.fileprovider-actionsui", title: "File provider actions UI", usesActivationRule: false),
        .init(identifier: "com.apple.usernotifications.service", title: "Notification service", usesActivationRule: false),
        .init(identifier: "com.apple.usernotifications.content-extension", title: "Notification content", usesActivationRule: false),
        .init(identifier: "com.apple.intents-service", title: "Intents", usesActivationRule: false),
        .init(identifier: "com.apple.intents-ui-service", title: "Intents UI", usesActivationRule: false),
        .init(identifier: "com.apple.appintents-extension", title: "App Intents", usesActivationRule: false),
        .init(identifier: "com.apple.networkextension.packet-tunnel", title: "Packet tunnel", usesActivationRule: false),
        .init(identifier: "com.apple.networkextension.app-proxy", title: "App proxy", usesActivationRule: false),
        .init(identifier: "com.apple.networkextension.dns-proxy", title: "DNS proxy", usesActivationRule: false),
        .init(identifier: "com.apple.networkextension.filter-data", title: "Content filter (data)", usesActivationRule: false),
        .init(identifier: "com.apple.networkextension.filter-control", title: "Content filter (control)", usesActivationRule: false),
        .init(identifier: "com.apple.networkextension.app-push", title: "Local push connectivity", usesActivationRule: false),
        .init(identifier: "com.apple.Safari.content-blocker", title: "Safari content blocker", usesActivationRule: false),
        .init(identifier: "com.apple.Safari.web-extension", title: "Safari web extension", usesActivationRule: false),
        .init(identifier: "com.apple.Safari.extension", title: "Safari app extension", usesActivationRule: false),
        .init(identifier: "com.apple.Safari.sharedlinks-service", title: "Safari shared links", usesActivationRule: false),
        .init(identifier: "com.apple.broadcast-services-upload", title: "Broadcast upload", usesActivationRule: false),
        .init(identifier: "com.apple.broadcast-services-setupui", title: "Broadcast setup UI", usesActivationRule: false),
        .init(identifier: "com.apple.message-payload-provider", title: "iMessage", usesActivationRule: false),
        .init(identifier: "com.apple.callkit.call-directory", title: "Call directory", usesActivationRule: false),
        .init(
            identifier: "com.apple.authentication-services-credential-provider-ui", title: "AutoFill credential provider", usesActivationRule: false),
        .init(
            identifier: "com.apple.authentication-services-account-authentication-modification-ui", title: "Account authentication modification",
            usesActivationRule: false),
        .init(identifier: "com.apple.spotlight.index", title: "Spotlight index", usesActivationRule: false),
        .init(identifier: "com.apple.quicklook.preview", title: "Quick Look preview", usesActivationRule: false),
        .init(identifier: "com.apple.quicklook.thumbnail", title: "Thumbnail", usesActivationRule: false),
        .init(identifier: "com.apple.tv-top-shelf", title: "TV top shelf", usesActivationRule: false),
        .init(identifier: "com.apple.identitylookup.message-filter", title: "Message filter", usesActivationRule: false),
        .init(identifier: "com.apple.classkit.context-provider", title: "ClassKit context provider", usesActivationRule: false),
        .init(identifier: "com.apple.deviceactivity.monitor-extension", title: "Device activity monitor", usesActivationRule: false),
        .init(identifier: "com.apple.ManagedSettingsUI.shield-configuration-service", title: "Shield configuration", usesActivationRule: false),
        .init(identifier: "com.apple.FinderSync", title: "Finder Sync", usesActivationRule: false),
        .init(identifier: "com.apple.AudioUnit-UI", title: "Audio unit", usesActivationRule: false),
        .init(identifier: "com.apple.dt.Xcode.extension.source-editor", title: "Xcode source editor", usesActivationRule: false),
        .init(identifier: "com.apple.location.push.service", title: "Location push service", usesActivationRule: false),
    ]

    private static let byIdentifier: [String: Entry] = Dictionary(entries.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })

    public static func entry(for identifier: String) -> Entry? { byIdentifier[identifier] }
    public static func isKnown(_ identifier: String) -> Bool { byIdentifier[identifier] != nil }
}
