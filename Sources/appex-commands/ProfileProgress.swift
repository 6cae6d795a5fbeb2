import ConsoleKitTerminal

#if canImport(Glibc)
import Glibc
#endif

/// The progress bar `appex profile` draws while it launches: ConsoleKit's activity indicator
/// (redrawn in place from its own timer) over a bar that shows launches done of N. Drawn only
/// when standard output is a terminal: a pipe or a file gets the results alone.
final class ProfileProgress {
    private let indicator: ActivityIndicator<ProfileProgressBar>?

    init(title: String, total: Int) {
        guard isatty(STDOUT_FILENO) == 1 else {
            indicator = nil
            return
        }
        let bar = ProfileProgressBar(title: title, done: 0, total: total)
        let indicator = bar.newActivity(for: Terminal())
        indicator.start(refreshRate: 100)
        self.indicator = indicator
    }

    func update(done: Int) {
        indicator?.activity.done = done
    }

    /// Removes the bar; the results take its place.
    func finish() {
        indicator?.succeed()
    }
}

/// `title [=====     ] 37/100`; nothing once finished, so the bar leaves no trace.
struct ProfileProgressBar: ActivityIndicatorType {
    var title: String
    var done: Int
    var total: Int

    static let width = 30

    func outputActivityIndicator(to console: any Console, state: ActivityIndicatorState) {
        guard case .active = state else { return }
        let filled = total > 0 ? min(done, total) * Self.width / total : 0
        let bar = "[" + String(repeating: "=", count: filled) + String(repeating: " ", count: Self.width - filled) + "]"
        console.output(title.consoleText() + " " + bar.consoleText(.info) + " \(done)/\(total)".consoleText())
    }
}
