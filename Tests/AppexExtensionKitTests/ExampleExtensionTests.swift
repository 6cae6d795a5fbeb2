import AppexTestSupport
import AppexWire
import AppexWireIO
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The shipped Swift examples (Share, Action, Widget), run as the real executables with a
/// temporary HOME standing in for their container.
@Suite struct ExampleExtensionTests {
    // MARK: Share

    @Test func shareSavesTextURLsAndFilesAsANote() throws {
        let scratch = try ScratchDirectory("sdk-share")
        defer { scratch.remove() }
        let home = scratch.path
        let ext = try ExtensionProcess.checkedIn(
            BuiltProducts.path("AppexExampleShare"), bundleIdentifier: "dev.appex.examples.host.share", home: home)
        defer { ext.stop() }

        let file = try AttachmentSource.file([UInt8](repeating: 0x2a, count: 1234))
        defer { close(file) }
        let item = ExtensionItem(
            attributedContentText: "Hello, world",
            attachments: [
                AppexWire.Attachment(typeIdentifiers: ["public.url"], content: .inline(Array("https://example.com/page".utf8))),
                AppexWire.Attachment(
                    typeIdentifiers: ["com.adobe.pdf", "public.data"], content: .descriptor(index: 0),
                    suggestedName: "report.pdf"),
            ])
        let id = try ext.begin([item], descriptors: [file])
        let answer = try ext.receive()
        #expect(
            answer.message
                == .completeRequest(
                    CompleteRequest(
                        requestID: id,
                        items: [
                            ExtensionItem(
                                attributedTitle: "Note 1",
                                attributedContentText: "saved note 1: 12 characters, 1 URL, 1 file (1234 bytes)",
                                userInfo: ["note": .string("Documents/notes/001.txt")]
                            )
                        ])))
        let note = try String(contentsOfFile: home + "/Documents/notes/001.txt", encoding: .utf8)
        #expect(note == "Note 1\n\nHello, world\n\nURLs:\nhttps://example.com/page\n\nFiles:\nreport.pdf (1234 bytes)\n")

        // The next note takes the next number; text alone is enough.
        let second = try ext.request("second note")
        #expect(completedTexts(second) == ["saved note 2: 11 characters, 0 URLs, 0 files"])
        #expect(FileManager.default.fileExists(atPath: home + "/Documents/notes/002.txt"))
    }

    @Test func shareCancelsWhenThereIsNothingToSave() throws {
        let scratch = try ScratchDirectory("sdk-share-empty")
        defer { scratch.remove() }
        let home = scratch.path
        let ext = try ExtensionProcess.checkedIn(
            BuiltProducts.path("AppexExampleShare"), bundleIdentifier: "dev.appex.examples.host.share", home: home)
        defer { ext.stop() }
        let id = try ext.begin([ExtensionItem()])
        guard case .cancelRequest(let cancel) = try ext.receive().message else {
            Issue.record("expected CancelRequest")
            return
        }
        #expect(cancel.requestID == id)
        #expect(cancel.error.domain == "dev.appex.examples.share" && cancel.error.code == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: home).isEmpty)
    }

    // MARK: Action

    @Test func actionReturnsTheTextTransformed() throws {
        let ext = try ExtensionProcess.checkedIn(BuiltProducts.path("AppexExampleAction"), bundleIdentifier: "dev.appex.examples.host.action")
        defer { ext.stop() }
        let id = try ext.begin([
            ExtensionItem(attributedContentText: "Grüße aus Zürich"),
            ExtensionItem(attachments: [AppexWire.Attachment(typeIdentifiers: ["public.plain-text"], content: .inline(Array("attached text".utf8)))]),
        ])
        #expect(
            try ext.receive().message
                == .completeRequest(
                    CompleteRequest(
                        requestID: id,
                        items: [
                            ExtensionItem(attributedContentText: "GRÜSSE AUS ZÜRICH"),
                            ExtensionItem(attributedContentText: "ATTACHED TEXT"),
                        ])))
    }

    @Test func actionCancelsWithoutText() throws {
        let ext = try ExtensionProcess.checkedIn(BuiltProducts.path("AppexExampleAction"), bundleIdentifier: "dev.appex.examples.host.action")
        defer { ext.stop() }
        let url = AppexWire.Attachment(typeIdentifiers: ["public.url"], content: .inline(Array("https://example.com/".utf8)))
        let id = try ext.begin([ExtensionItem(attachments: [url])])
        guard case .cancelRequest(let cancel) = try ext.receive().message else {
            Issue.record("expected CancelRequest")
            return
        }
        #expect(cancel.requestID == id)
        #expect(cancel.error.domain == "dev.appex.examples.action")
        #expect(cancel.error.code == 1)
    }

    // MARK: Widget

    @Test func widgetCountsRefreshesAcrossLaunches() throws {
        let scratch = try ScratchDirectory("sdk-widget")
        defer { scratch.remove() }
        let home = scratch.path
        for (launch, expected) in [["refreshed 1 time", "refreshed 2 times"], ["refreshed 3 times"]].enumerated() {
            let ext = try ExtensionProcess.checkedIn(
                BuiltProducts.path("AppexExampleWidget"), bundleIdentifier: "dev.appex.examples.host.widget", home: home)
            defer { ext.stop() }
            for text in expected {
                let answer = try ext.request("")
                guard case .completeRequest(let snapshot) = answer.message else {
                    Issue.record("launch \(launch): expected CompleteRequest, got \(answer.message)")
                    return
                }
                #expect(snapshot.items.map(\.attributedTitle) == ["Example Widget"])
                #expect(snapshot.items.map(\.attributedContentText) == [text])
            }
            try ext.connection.send(.terminate(Terminate(reason: .idleExit)))
            #expect(Termination(try ext.waitForExit()) == .exited(0))
        }
        #expect(try String(contentsOfFile: home + "/Documents/widget/refresh-count", encoding: .utf8) == "3\n")
    }
}
