import AppexRun
import ArgumentParser

/// A command that ends with a status from the table (ExitStatus) and lines for people on
/// stderr; AppexMain prints them and exits.
struct CommandFailure: Error {
    var status: ExitStatus
    var lines: [String]

    init(_ status: ExitStatus, _ lines: String...) {
        self.status = status
        self.lines = lines
    }

    init(_ status: ExitStatus, lines: [String]) {
        self.status = status
        self.lines = lines
    }
}
