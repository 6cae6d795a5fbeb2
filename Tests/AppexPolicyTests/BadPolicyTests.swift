import Testing

@testable import AppexPolicy
@testable import AppexPolicyCore

/// Each broken policy is refused with the file, the line and the key that are wrong.
@Suite struct BadPolicyTests {
    @Test func unknownSyscallIsRefusedWithFileLineAndKey() throws {
        let tree = try PolicyTree()
        try tree.write(
            "syscall-groups/reboot.yaml",
            """
            name: reboot
            summary: Rebooting.
            syscalls:
              - reboot
              - reboot_harder
            """)
        let errors = tree.errors()
        #expect(errors.count == 1)
        let e = try #require(errors.first)
        #expect(e.file == tree.file("syscall-groups/reboot.yaml"))
        #expect(e.line == 5)
        #expect(e.key == "syscalls[1]")
        #expect(e.message.contains("reboot_harder"))
    }

    @Test func badSizeIsRefused() throws {
        let tree = try PolicyTree()
        try tree.write(
            "extension-points/share.yaml",
            """
            extensionPoints: [com.apple.share-services]
            title: Share
            memory:
              activeHardLimit: 120 apples
            """)
        let e = try #require(tree.errors().first)
        #expect(e.file.hasSuffix("extension-points/share.yaml"))
        #expect(e.line == 4)
        #expect(e.key == "memory.activeHardLimit")
        #expect(e.message.contains("120 apples"))
    }

    @Test func unknownBandIsRefusedAndListsKnownOnes() throws {
        let tree = try PolicyTree()
        try tree.write(
            "extension-points/widget.yaml",
            """
            extensionPoints: [com.apple.widget-extension]
            title: Today
            jetsamBand: very-important
            """)
        let e = try #require(tree.errors().first)
        #expect(e.line == 3 && e.key == "jetsamBand")
        #expect(e.message.contains("very-important") && e.message.contains("foreground (100)"))
    }

    @Test func wrongTypeIsRefused() throws {
        let tree = try PolicyTree()
        try tree.write(
            "extension-points/keyboard.yaml",
            """
            extensionPoints: [com.apple.keyboard-service]
            title: Keyboard
            pidsLimit:
              - 12
            """)
        let e = try #require(tree.errors().first)
        #expect(e.key == "pidsLimit" && e.line == 4)
        #expect(e.message.contains("whole number"))
    }

    @Test func unknownKeyIsRefusedNotIgnored() throws {
        let tree = try PolicyTree()
        try tree.write(
            "extension-points/share.yaml",
            """
            extensionPoints: [com.apple.share-services]
            title: Share
            memroy:
              activeHardLimit: 1MiB
            """)
        let e = try #require(tree.errors().first)
        #expect(e.key == "memroy" && e.line == 3)
        #expect(e.message.contains("unknown key"))
    }

    @Test func unknownGroupAndActionAndErrno() throws {
        let tree = try PolicyTree()
        try tree.write(
            "extension-points/share.yaml",
            """
            extensionPoints: [com.apple.share-services]
            title: Share
            syscalls:
              deny:
                - group: time-travel
                - group: reboot
                  action: explode
                - group: bpf
                  errno: EWHATEVER
            """)
        let errors = tree.errors()
        #expect(errors.count == 3, "\(errors)")
        #expect(errors.contains { $0.line == 5 && $0.message.contains("unknown syscall group \"time-travel\"") })
        #expect(errors.contains { $0.line == 7 && $0.key == "syscalls.deny[1].action" })
        #expect(errors.contains { $0.line == 9 && $0.key == "syscalls.deny[2].errno" })
    }

    @Test func softAboveHardIsRefused() throws {
        let tree = try PolicyTree()
        try tree.write(
            "extension-points/widget.yaml",
            """
            extensionPoints: [com.apple.widget-extension]
            title: Today
            memory:
              activeHardLimit: 16MiB
              activeSoftLimit: 20MiB
            """)
        let e = try #require(tree.errors().first)
        #expect(e.key == "memory.activeSoftLimit" && e.message.contains("above the hard limit"))
    }

    @Test func invalidYAMLGivesTheLine() throws {
        let tree = try PolicyTree()
        try tree.write("extension-points/share.yaml", "extensionPoints: [com.apple.share-services\ntitle: Share\n  bad: [\n")
        let e = try #require(tree.errors().first)
        #expect(e.file.hasSuffix("share.yaml") && e.line != nil && e.message.contains("not valid YAML"))
    }

    @Test func twoFilesClaimingOnePointIsRefused() throws {
        let tree = try PolicyTree()
        try tree.write("extension-points/share-copy.yaml", "extensionPoints: [com.apple.share-services]\ntitle: Again\n")
        let e = try #require(tree.errors().first)
        #expect(e.message.contains("already covered"))
    }

    @Test func overlayLayersOverShipped() throws {
        let overlay = try PolicyTree(copyShipped: false)
        try overlay.write(
            "extension-points/share.yaml",
            """
            extensionPoints: [com.apple.share-services]
            memory:
              activeHardLimit: 8MiB
              activeSoftLimit: 4MiB
            syscalls:
              allow: [namespaces]
              deny:
                - group: app-extension-unavailable
                  action: notify
            """)
        #expect(overlay.errors(overlaying: true).isEmpty)
        let set = try PolicySet.load(directories: [shippedPolicies, overlay.path])
        let share = try #require(set.policy(for: "com.apple.share-services"))
        #expect(share.memory.activeHardLimit == .mebibytes(8))
        #expect(share.title == "Share", "title comes from the shipped layer")
        #expect(!share.deniedSyscalls.contains { $0.group == "namespaces" })
        #expect(share.deniedSyscalls.first { $0.group == "app-extension-unavailable" }?.action == .notify(errno: 1))
        #expect(share.files.count == 3)
    }

    @Test func stricterActionWinsWhenGroupsOverlap() throws {
        let overlay = try PolicyTree(copyShipped: false)
        try overlay.write("syscall-groups/extra.yaml", "name: extra\nsummary: overlap\nsyscalls: [ptrace, reboot]\n")
        try overlay.write(
            "extension-points/share.yaml",
            """
            extensionPoints: [com.apple.share-services]
            syscalls:
              deny:
                - group: extra
                  action: log
            """)
        let set = try PolicySet.load(directories: [shippedPolicies, overlay.path])
        let eff = EffectivePolicy(extensionPoint: "com.apple.share-services", in: set)
        #expect(eff.syscallRules.first { $0.name == "reboot" }?.action == .kill)
        #expect(eff.syscallRules.first { $0.name == "ptrace" }?.action == .errno(1))
    }

    @Test func sizesAndDurationsParse() {
        #expect(ByteSize(parsing: "120MiB")?.bytes == 120 << 20)
        #expect(ByteSize(parsing: "16 MiB")?.bytes == 16 << 20)
        #expect(ByteSize(parsing: "1MB")?.bytes == 1_000_000)
        #expect(ByteSize(parsing: "4096")?.bytes == 4096)
        #expect(ByteSize(parsing: "-1MiB") == nil)
        #expect(ByteSize(parsing: "99999999999999GiB") == nil)
        #expect(ByteSize(bytes: 120 << 20).description == "120MiB")
        #expect(PolicyDuration.parse("500ms") == .milliseconds(500))
        #expect(PolicyDuration.parse("10m") == .seconds(600))
        #expect(PolicyDuration.parse("10") == nil)
    }
}
