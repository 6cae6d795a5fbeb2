import AppexTestSupport
import Foundation
import Testing

/// The compile-time half of the extension-safe API check: code built as extension code
/// (`APPEX_EXTENSION`) that uses a host-only API does not compile, and the error quotes why;
/// the same code built for a host compiles. Real compilers, real SDK sources.
@Suite struct ExtensionUnavailableMarkerTests {
    static let include = Corpus.packageRoot + "/Sources/AppexExtensionUnavailable/include"

    static let cSource = """
        #include <appex/extension_unavailable.h>
        int notes_open_main_window(void) APPEX_EXTENSION_UNAVAILABLE("extensions have no windows");
        int handle_request(void) { return notes_open_main_window(); }
        """

    static func compileC(_ compiler: String, defines: [String]) throws -> CProgram.Output {
        let scratch = try ScratchDirectory("marker-c")
        defer { scratch.remove() }
        let dir = scratch.path
        try cSource.write(toFile: dir + "/ext.c", atomically: true, encoding: .utf8)
        return try CProgram.run(compiler, ["-c", "-I", include, "-o", dir + "/ext.o", dir + "/ext.c"] + defines)
    }

    @Test(arguments: [CProgram.cc, TestBinaries.clang])
    func cExtensionCodeCallingAHostOnlyFunctionFails(compiler: String) throws {
        let r = try Self.compileC(compiler, defines: ["-DAPPEX_EXTENSION=1"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("is unavailable: unavailable in app extensions: extensions have no windows"), "\(r.stderr)")
    }

    @Test(arguments: [CProgram.cc, TestBinaries.clang])
    func cHostCodeCallingItCompiles(compiler: String) throws {
        for defines in [[], ["-DAPPEX_EXTENSION=0"]] {
            let r = try Self.compileC(compiler, defines: defines)
            #expect(r.status == 0, "\(defines): \(r.stderr)")
        }
    }

    // MARK: Swift: AppexHostClient built as extension code

    /// The products directory of this test build: Modules/ and the C targets' module maps.
    static let products: String = {
        var dir = URL(fileURLWithPath: BuiltProducts.directory)
        for _ in 0..<4 {
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Modules/AppexWireIO.swiftmodule").path) { return dir.path }
            dir = dir.deletingLastPathComponent()
        }
        return Corpus.packageRoot + "/.build/debug"
    }()

    static let swiftc: String = URL(fileURLWithPath: TestBinaries.clang).deletingLastPathComponent().appendingPathComponent("swiftc").path

    /// Flags that let swiftc see the package's built modules (AppexWire, AppexWireIO and its C module).
    static var moduleFlags: [String] {
        ["-I", products + "/Modules", "-Xcc", "-fmodule-map-file=\(products)/CAppexLinux.build/module.modulemap"]
    }

    static let client = """
        import AppexHostClient
        func ask() throws { _ = try HostClient.connect(identifier: "com.example.share") }
        """

    /// Emits AppexHostClient from its sources into `dir`, with `defines`.
    static func emitHostClient(into dir: String, defines: [String]) throws {
        let sources = Corpus.packageRoot + "/Sources/AppexHostClient"
        let files = try FileManager.default.contentsOfDirectory(atPath: sources).filter { $0.hasSuffix(".swift") }.sorted().map { sources + "/" + $0 }
        let r = try CProgram.run(
            swiftc,
            [
                "-emit-module", "-module-name", "AppexHostClient", "-parse-as-library", "-swift-version", "6",
                "-emit-module-path", dir + "/AppexHostClient.swiftmodule",
            ] + defines + moduleFlags + files)
        try #require(r.status == 0, "emitting AppexHostClient failed: \(r.stderr)")
    }

    static func typecheckClient(against dir: String) throws -> CProgram.Output {
        try client.write(toFile: dir + "/client.swift", atomically: true, encoding: .utf8)
        return try CProgram.run(swiftc, ["-typecheck", "-swift-version", "6", "-I", dir] + moduleFlags + [dir + "/client.swift"])
    }

    @Test func swiftExtensionCodeCallingHostClientConnectFails() throws {
        let scratch = try ScratchDirectory("marker-swift-ext")
        defer { scratch.remove() }
        let dir = scratch.path
        try Self.emitHostClient(into: dir, defines: ["-D", "APPEX_EXTENSION"])
        let r = try Self.typecheckClient(against: dir)
        #expect(r.status != 0)
        #expect(
            r.stderr.contains(
                "'connect(socketPath:identifier:openURL:)' is unavailable: unavailable in app extensions: HostClient is for host applications"),
            "\(r.stderr)")
    }

    @Test func swiftHostCodeCallingItCompiles() throws {
        let scratch = try ScratchDirectory("marker-swift-host")
        defer { scratch.remove() }
        let dir = scratch.path
        try Self.emitHostClient(into: dir, defines: [])
        let r = try Self.typecheckClient(against: dir)
        #expect(r.status == 0, "\(r.stderr)")
    }
}
