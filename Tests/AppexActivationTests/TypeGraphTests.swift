import AppexActivation
import AppexBundle
import Testing

@Suite("UTI graph")
struct TypeGraphTests {
    let g = UTTypeGraph.system

    @Test func appleDeclaredConformances() {
        let yes: [(String, String)] = [
            ("public.url", "public.data"), ("public.file-url", "public.url"), ("public.file-url", "public.item"),
            ("com.adobe.pdf", "public.data"), ("com.adobe.pdf", "public.composite-content"), ("com.adobe.pdf", "public.content"),
            ("public.jpeg", "public.image"), ("public.jpeg", "public.data"), ("public.jpeg", "public.content"), ("public.jpeg", "public.item"),
            ("public.plain-text", "public.text"), ("public.plain-text", "public.data"), ("public.plain-text", "public.content"),
            ("public.vcard", "public.contact"), ("public.vcard", "public.text"),
            ("com.apple.pkpass", "public.data"), ("com.apple.pkpass", "public.content"),
            ("public.mpeg-4", "public.movie"), ("public.movie", "public.audiovisual-content"), ("public.mp3", "public.audio"),
            ("public.html", "public.text"), ("public.json", "public.text"), ("public.png", "public.png"),
            ("PUBLIC.JPEG", "public.IMAGE"),
            ("org.openxmlformats.wordprocessingml.document", "public.zip-archive"),
        ]
        for (a, b) in yes { #expect(g.conforms(a, to: b), "\(a) → \(b)") }
        let no: [(String, String)] = [
            ("public.url", "public.content"), ("public.image", "public.jpeg"), ("public.data", "public.url"),
            ("public.audio", "public.movie"), ("public.url", "public.file-url"), ("public.folder", "public.data"),
            ("com.example.unknown", "public.data"),
        ]
        for (a, b) in no { #expect(!g.conforms(a, to: b), "\(a) ↛ \(b)") }
        #expect(g.conforms("com.example.unknown", to: "com.example.unknown"))
    }

    @Test func systemTableIsComplete() {
        for id in [
            "public.item", "public.content", "public.data", "public.text", "public.plain-text", "public.url",
            "public.file-url", "public.image", "public.jpeg", "public.png", "public.movie", "public.audio",
            "public.audiovisual-content", "public.html", "public.vcard", "public.json", "com.adobe.pdf", "com.apple.pkpass",
        ] {
            #expect(g.contains(id), "\(id)")
        }
        // Every declared parent exists, so no type hangs off an undeclared identifier.
        for id in g.identifiers {
            for p in g.parents(of: id) { #expect(g.contains(p)) }
        }
        #expect(g.count > 100)
    }

    @Test func extensionsAndMIMETypes() {
        #expect(g.type(forFilenameExtension: "JPG") == "public.jpeg")
        #expect(g.type(forFilenameExtension: ".pdf") == "com.adobe.pdf")
        #expect(g.type(forMIMEType: "text/plain; charset=utf-8") == "public.plain-text")
        #expect(g.type(forMIMEType: "application/vnd.apple.pkpass") == "com.apple.pkpass")
        #expect(g.types(forFileName: "/tmp/photo.jpeg") == ["public.jpeg"])
        #expect(g.types(forFileName: "archive.unknownext") == ["public.data"])
        #expect(g.types(forFileName: ".hidden") == ["public.data"])
        #expect(g.filenameExtensions(of: "public.jpeg").contains("jpg"))
    }

    @Test func cyclesAreRejectedAndGraphUnchanged() throws {
        var graph = UTTypeGraph.system
        try graph.declare(UTTypeDeclaration("com.example.a", conformsTo: ["public.data"]))
        try graph.declare(UTTypeDeclaration("com.example.b", conformsTo: ["com.example.a"]))
        #expect(throws: UTTypeGraphError.self) {
            try graph.declare(UTTypeDeclaration("com.example.a", conformsTo: ["com.example.b"]))
        }
        #expect(throws: UTTypeGraphError.self) { try graph.declare(UTTypeDeclaration("com.example.c", conformsTo: ["com.example.c"])) }
        #expect(throws: UTTypeGraphError.self) { try graph.declare(UTTypeDeclaration("public.data", conformsTo: ["public.jpeg"])) }
        #expect(!graph.conforms("com.example.a", to: "com.example.b"))
        #expect(graph.conforms("com.example.b", to: "public.item"))
        #expect(throws: UTTypeGraphError.self) { try graph.declare(UTTypeDeclaration("bad id!")) }
    }

    @Test func multipleParentsAndExtension() throws {
        var graph = UTTypeGraph.system
        try graph.declare(UTTypeDeclaration("com.example.notebook", conformsTo: ["public.json", "public.composite-content"], extensions: ["ipynb"]))
        #expect(graph.conforms("com.example.notebook", to: "public.text"))
        #expect(graph.conforms("com.example.notebook", to: "public.composite-content"))
        #expect(graph.type(forFilenameExtension: "ipynb") == "com.example.notebook")
        // A later declaration cannot steal a system extension.
        try graph.declare(UTTypeDeclaration("com.example.jpeg-ish", conformsTo: ["public.data"], extensions: ["jpg"]))
        #expect(graph.type(forFilenameExtension: "jpg") == "public.jpeg")
    }

    @Test func bundleDeclarations() throws {
        var graph = UTTypeGraph.system
        let entries: [[String: PlistValue]] = [
            [
                "UTTypeIdentifier": .string("com.example.doc"),
                "UTTypeConformsTo": .array([.string("public.data"), .string("public.content")]),
                "UTTypeTagSpecification": .dictionary([
                    "public.filename-extension": .array([.string("exdoc")]),
                    "public.mime-type": .string("application/x-exdoc"),
                ]),
            ],
            ["UTTypeConformsTo": .array([.string("public.data")])],
            ["UTTypeIdentifier": .string("com.example.bad"), "UTTypeConformsTo": .integer(3)],
        ]
        let findings = graph.declare(bundleDeclarations: entries, at: "UTExportedTypeDeclarations")
        #expect(graph.conforms("com.example.doc", to: "public.content"))
        #expect(graph.type(forFilenameExtension: "exdoc") == "com.example.doc")
        #expect(graph.type(forMIMEType: "application/x-exdoc") == "com.example.doc")
        #expect(
            findings.map(\.keyPath.description) == ["UTExportedTypeDeclarations:1:UTTypeIdentifier", "UTExportedTypeDeclarations:2:UTTypeConformsTo"])

        // A rule compiled against the extended graph sees the new type.
        let rule = try ActivationRule.compile(
            predicate: "ANY extensionItems.attachments.registeredTypeIdentifiers UTI-CONFORMS-TO \"public.content\"", types: graph)
        let items = ActivationItems(extensionItems: [
            ActivationItem(attachments: [ActivationAttachment(registeredTypeIdentifiers: ["com.example.doc"])])
        ])
        #expect(try rule.evaluate(items).isActivated)
        #expect(
            try !ActivationRule.compile(predicate: "ANY extensionItems.attachments.registeredTypeIdentifiers UTI-CONFORMS-TO \"public.content\"")
                .evaluate(items).isActivated)
    }
}
