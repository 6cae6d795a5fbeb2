import AppexPolicy
import AppexTestSupport
import Foundation
import Testing

@testable import AppexPolicyTesting

/// Reading policy test files (Docs/policy-tests.md): the shipped ones read clean, and a file
/// with mistakes gets every one of them listed with its line, before anything runs.
@Suite struct PolicyTestParserTests {
    static let shippedTests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Policies/tests").standardizedFileURL.path

    /// A catalog of the shipped policies, and a scratch directory for test files.
    final class Setup {
        let catalog: PolicyTestCatalog
        let dir: ScratchDirectory
        var parser: PolicyTestParser { PolicyTestParser(catalog: catalog) }

        init(_ tag: String) throws {
            catalog = try PolicyTestCatalog(overlays: [])
            dir = try ScratchDirectory(tag)
        }

        deinit { catalog.removeScratch() }

        func write(_ name: String, _ text: String) throws -> String {
            let path = dir.path + "/" + name
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }

        /// The mistakes `parse` lists for `text`; empty when it parses.
        func mistakes(_ text: String) throws -> [PolicyError] {
            do {
                _ = try parser.parse(file: try write("case.yaml", text))
                return []
            } catch let e as PolicyTestErrors {
                return e.errors
            } catch let e as PolicyError {
                return [e]
            }
        }
    }

    @Test func theShippedTestFilesReadClean() throws {
        let setup = try Setup("ptp-shipped")
        let files = try PolicyTestParser.files(in: [Self.shippedTests])
        #expect(files.count >= 2)
        for file in files {
            let parsed = try setup.parser.parse(file: file)
            #expect(!parsed.cases.isEmpty, "\(file)")
        }
        let limits = try setup.parser.parse(file: Self.shippedTests + "/limits.yaml")
        let all = setup.catalog.allExtensionPoints
        #expect(all.count > 1)
        let memory = try #require(limits.cases.first { $0.name == "memory past the hard limit" })
        #expect(memory.extensionPoints == all, "the file's extensionPoints: all is every policy")
        #expect(memory.expectation == .killed(reason: "per-process-limit", within: nil))
        #expect(!memory.throughSupervisor)
        #expect(memory.variables == ["cgroupMemoryMaxMiB"])
        let request = try #require(limits.cases.first { $0.name == "a request completes" })
        #expect(request.throughSupervisor && request.request == ["echo"])
    }

    @Test func everyMistakeIsListedWithItsLine() throws {
        let setup = try Setup("ptp-mistakes")
        let errors = try setup.mistakes(
            """
            extensionPoint: com.apple.share-services
            cases:
              - name: one
                action: getpid
                expect: allowed
              - name: one
                action: getpid
                expect: allowed
              - name: unknown errno
                action: getpid
                expect: denied
                errno: ENOTANERRNO
              - name: unknown variable
                action: read ${nope}
                expect: allowed
              - name: a supervisor reason
                action: getpid
                expect: killed
                reason: request-timeout
              - name: no bystander
                action: kill ${bystanderPID}
                expect: allowed
            """)
        let found = errors.map { ($0.line ?? 0, $0.message) }
        #expect(found.count == 5, "\(errors)")
        func has(line: Int, _ text: String) -> Bool { found.contains { $0.0 == line && $0.1.contains(text) } }
        #expect(has(line: 6, "duplicate case name \"one\" (first at line 3)"))
        #expect(has(line: 12, "unknown errno \"ENOTANERRNO\""))
        #expect(has(line: 14, "unknown variable ${nope}"))
        #expect(has(line: 19, "\"request-timeout\" needs the supervisor"))
        #expect(has(line: 21, "${bystanderPID} needs a bystander"))
    }

    @Test func theFileLevelMistakesAreNamed() throws {
        let setup = try Setup("ptp-file")
        #expect(try setup.mistakes("title: nothing\n").map(\.message) == ["missing required key \"cases\""])
        #expect(try setup.mistakes("extensionPoint: com.apple.share-services\ncases: []\n").map(\.message) == ["no cases"])
        let unknownPoint = try setup.mistakes("extensionPoint: com.example.nowhere\ncases:\n  - name: a\n    action: getpid\n    expect: allowed\n")
        #expect(unknownPoint.map(\.message) == ["no policy covers extension point \"com.example.nowhere\""])
        let unknownKey = try setup.mistakes("extensionPoint: com.apple.share-services\nflavour: x\ncases: []\n")
        #expect(unknownKey.count == 1 && unknownKey[0].line == 2)
    }

    @Test func aPathStandsInForTheAttemptOfInvisibleAndReadOnly() throws {
        let setup = try Setup("ptp-path")
        let file = try setup.parser.parse(
            file: try setup.write(
                "paths.yaml",
                """
                extensionPoint: com.apple.share-services
                cases:
                  - name: hidden
                    path: /etc/shadow
                    expect: invisible
                  - name: sealed
                    path: /usr
                    expect: read-only
                """))
        #expect(file.cases[0].action == ["exists", "/etc/shadow"])
        #expect(file.cases[1].expectation == .readOnly)
        #expect(file.cases[1].action?.contains { $0.hasPrefix("str:/usr/.appex-test-policy-absent-") } == true)
        let relative = try setup.mistakes(
            """
            extensionPoint: com.apple.share-services
            cases:
              - name: relative
                path: etc/shadow
                expect: invisible
            """)
        #expect(relative.map(\.message) == ["\"etc/shadow\" must be an absolute path"])
    }

    @Test func limitsAreCheckedAgainstEachOtherAndTheirFloor() throws {
        let setup = try Setup("ptp-limits")
        func limits(_ body: String) throws -> [String] {
            try setup.mistakes(
                """
                extensionPoint: com.apple.share-services
                cases:
                  - name: limited
                    action: getpid
                    expect: allowed
                    limits: {\(body)}
                """
            ).map(\.message)
        }
        #expect(try limits("memory: 512KiB").first?.contains("is below 1MiB") == true)
        #expect(try limits("memory: 16MiB, memorySoft: 32MiB").first?.contains("memorySoft 32MiB is above memory 16MiB") == true)
        #expect(try limits("launchDeadline: 2s").first?.contains("launchDeadline applies only to cases through the supervisor") == true)
        #expect(try limits("memory: 16MiB, pids: 8").isEmpty)
    }

    @Test func testFilesAreTheYAMLFilesOfADirectorySorted() throws {
        let dir = try ScratchDirectory("ptp-files")
        for name in ["b.yaml", "a.yml", "notes.txt"] {
            try Data().write(to: URL(fileURLWithPath: dir.path + "/" + name))
        }
        let real = URL(fileURLWithPath: dir.path).standardizedFileURL.path
        #expect(try PolicyTestParser.files(in: [dir.path]) == [real + "/a.yml", real + "/b.yaml"])
        #expect(try PolicyTestParser.files(in: [dir.path + "/notes.txt"]) == [real + "/notes.txt"], "a file named is taken as it is")
        #expect(throws: PolicyError.self) { try PolicyTestParser.files(in: [dir.path + "/missing"]) }
        let empty = try ScratchDirectory("ptp-files-empty")
        #expect(throws: PolicyError.self) { try PolicyTestParser.files(in: [empty.path]) }
    }
}
