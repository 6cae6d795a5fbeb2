// The example widget extension (Widget.appex): answers each request at once with a snapshot,
// a title and one line of content, keeping a refresh counter in its container.
import AppexExtensionKit

AppexExtension.main(handler: SnapshotProvider())
