import ConsoleKitTerminal

#if canImport(Glibc)
import Glibc
#endif

/// The terminal while `appex top` owns it, the way top(1) and htop leave it: keys arrive one
/// at a time without echo (so `q` quits at once, and Ctrl-C is a key too), the frame is drawn
/// on the alternate screen with the cursor hidden, and `restore()` puts back the saved
/// termios, the cursor and the screen the user had.
///
/// ConsoleKit styles the text and knows the window's size; it has no raw-key input or
/// alternate screen, so those few escape sequences and the termios change are written here.
final class TopTerminal {
    let console = Terminal()
    private var saved: termios?
    private var restored = false

    /// Takes the terminal: raw keys on standard input (when it is a terminal), the alternate
    /// screen and a hidden cursor on standard output.
    init() {
        if isatty(STDIN_FILENO) == 1 {
            var t = termios()
            if tcgetattr(STDIN_FILENO, &t) == 0 {
                saved = t
                t.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
                withUnsafeMutableBytes(of: &t.c_cc) { cc in
                    cc[Int(VMIN)] = 1
                    cc[Int(VTIME)] = 0
                }
                _ = tcsetattr(STDIN_FILENO, TCSANOW, &t)
            }
        }
        write(Self.enterAlternateScreen + Self.hideCursor)
    }

    /// Draws `lines` over the previous frame: home, each line then clear to its end, then
    /// clear below; one write, so the frame never shows half drawn.
    func draw(_ lines: [ConsoleText]) {
        var frame: ConsoleText = Self.home.consoleText()
        for (i, line) in lines.enumerated() {
            frame += line
            frame += (Self.clearToEndOfLine + (i == lines.count - 1 ? "" : "\r\n")).consoleText()
        }
        frame += Self.clearBelow.consoleText()
        console.output(frame, newLine: false)
    }

    /// Puts the terminal back as it was. Idempotent.
    func restore() {
        guard !restored else { return }
        restored = true
        write(Self.showCursor + Self.leaveAlternateScreen)
        if var t = saved { _ = tcsetattr(STDIN_FILENO, TCSANOW, &t) }
    }

    /// Waits up to `milliseconds` for a key; nil when none came (or standard input ended).
    func key(within milliseconds: Int32) -> UInt8? {
        var p = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, milliseconds) == 1, p.revents & Int16(POLLIN) != 0 else { return nil }
        var byte: UInt8 = 0
        return Glibc.read(STDIN_FILENO, &byte, 1) == 1 ? byte : nil
    }

    private func write(_ s: String) {
        var bytes = Array(s.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            done += n
        }
    }

    static let enterAlternateScreen = "\u{1B}[?1049h", leaveAlternateScreen = "\u{1B}[?1049l"
    static let hideCursor = "\u{1B}[?25l", showCursor = "\u{1B}[?25h"
    static let home = "\u{1B}[H", clearToEndOfLine = "\u{1B}[K", clearBelow = "\u{1B}[J"
}
