import AppexSandbox
import AppexTestSupport
import Foundation
import Testing

/// `appex run` makes its paths absolute with AbsolutePath instead of Foundation's URL: the same
/// answers, links not followed.
@Suite struct AbsolutePathTests {
    static let paths = [
        "/usr/bin/true", "/usr/bin/", "/usr//bin///true", "/usr/./bin/./true", "/usr/lib/../bin/true",
        "/a/b/c/../../d", "/", "relative/file", "./relative", "../up/one", "a/./b/../c", "x//y/",
        "name.appex", "Dir.appex/", ".", "..",
    ]

    @Test(arguments: paths)
    func agreesWithFoundationsStandardizedURL(_ path: String) {
        #expect(AbsolutePath.of(path) == URL(fileURLWithPath: path).standardizedFileURL.path, "\(path)")
    }

    @Test func relativePathsStartAtTheWorkingDirectory() {
        let cwd = FileManager.default.currentDirectoryPath
        #expect(AbsolutePath.of("x") == (cwd == "/" ? "/x" : cwd + "/x"))
    }

    @Test func linksAreNotFollowed() throws {
        let scratch = try ScratchDirectory("abspath")
        defer { scratch.remove() }
        let dir = scratch.path
        try FileManager.default.createDirectory(atPath: dir + "/real", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir + "/link", withDestinationPath: dir + "/real")
        #expect(AbsolutePath.of(dir + "/link/x") == dir + "/link/x")
    }
}
