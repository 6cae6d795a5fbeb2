import Testing

@testable import AppexSandbox

/// The view's path normalization: `.` and empty components dropped, one leading slash.
@Suite struct FilesystemViewPathTests {
    @Test func normalizeDropsDotsAndEmptyComponents() {
        #expect(FilesystemView.normalize("") == "/")
        #expect(FilesystemView.normalize("/") == "/")
        #expect(FilesystemView.normalize("usr/lib") == "/usr/lib")
        #expect(FilesystemView.normalize("//usr/./lib//") == "/usr/lib")
        #expect(FilesystemView.normalize("/./.") == "/")
        // `..` is kept for isReserved to refuse, not resolved.
        #expect(FilesystemView.normalize("/usr/../etc") == "/usr/../etc")
        #expect(FilesystemView.isReserved(FilesystemView.normalize("/usr/../etc")))
    }
}
