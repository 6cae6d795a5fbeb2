import AppexBundle
import Testing

@testable import AppexPolicy
@testable import AppexPolicyCore

@Suite struct ShippedPolicyTests {
    let set: PolicySet

    init() throws { set = try PolicySet.load(directories: [shippedPolicies]) }

    /// Limits Apple is reported to enforce, per extension point (Docs/policies.md lists sources).
    @Test(arguments: [
        ("com.apple.share-services", 120), ("com.apple.widget-extension", 16), ("com.apple.widgetkit-extension", 30),
        ("com.apple.keyboard-service", 48), ("com.apple.usernotifications.service", 24),
        ("com.apple.networkextension.packet-tunnel", 50),
    ])
    func reportedAppleLimits(point: String, mebibytes: Int64) throws {
        let policy = try #require(set.policy(for: point))
        #expect(policy.memory.activeHardLimit == .mebibytes(mebibytes))
        #expect(policy.memory.activeSoftLimit < policy.memory.activeHardLimit)
        #expect(!policy.memory.source.isEmpty)
    }

    @Test(arguments: [
        "com.apple.share-services", "com.apple.ui-services", "com.apple.widget-extension",
        "com.apple.widgetkit-extension", "com.apple.keyboard-service", "com.apple.photo-editing",
        "com.apple.fileprovider-nonui", "com.apple.usernotifications.service",
        "com.apple.usernotifications.content-extension", "com.apple.intents-service",
        "com.apple.networkextension.packet-tunnel",
    ])
    func requiredExtensionPointsHavePolicies(point: String) {
        #expect(set.policy(for: point) != nil)
        #expect(ExtensionPointCatalog.isKnown(point))
    }

    @Test func defaultsApplyWhereNoFileOverrides() throws {
        let share = try #require(set.policy(for: "com.apple.share-services"))
        #expect(share.launchDeadline == .seconds(1))
        #expect(share.pidsLimit == set.defaults.pidsLimit)
        #expect(share.deniedSyscalls == set.defaults.deniedSyscalls)
        #expect(share.files.count == 2 && share.files[0].hasSuffix("defaults.yaml"))
    }

    @Test func everyGroupNamesRealSyscalls() {
        #expect(set.groups.count >= 12)
        for group in set.groups.values {
            for call in group.syscalls { #expect(SyscallNames.number(call) != nil, "\(group.name): \(call)") }
        }
        for name in [
            "process-tracing", "mounting", "kernel-modules", "reboot", "raw-io", "keyrings", "bpf",
            "namespaces", "clock-setting", "swap", "app-extension-unavailable", "file-handles",
        ] {
            #expect(set.groups[name] != nil, "missing group \(name)")
        }
    }

    @Test func effectivePolicyExpandsGroupsWithActions() throws {
        let eff = EffectivePolicy(extensionPoint: "com.apple.share-services", in: set)
        #expect(!eff.usesDefaults)
        #expect(eff.syscallRules.first { $0.name == "ptrace" }?.action == .errno(1))
        #expect(eff.syscallRules.first { $0.name == "reboot" }?.action == .kill)
        #expect(eff.syscallRules.first { $0.name == "init_module" }?.group == "kernel-modules")
        #expect(eff.syscallRules.map(\.name) == eff.syscallRules.map(\.name).sorted())
        #expect(eff.cgroupMemoryMax == (120 << 20) + set.defaults.memory.pageCacheAllowance.bytes)
    }

    @Test func entitlementsNarrowToWhatThePolicyGrants() {
        let requested = Entitlements([
            Entitlements.applicationGroupsKey: .array([.string("group.com.example")]),
            Entitlements.networkClientKey: .bool(true),
            "com.apple.developer.healthkit": .bool(true),
        ])
        let share = EffectivePolicy(extensionPoint: "com.apple.share-services", entitlements: requested, in: set)
        #expect(share.appGroups == ["group.com.example"])
        #expect(share.hostNetwork)
        #expect(share.refusedEntitlements == ["com.apple.developer.healthkit"])

        let widget = EffectivePolicy(extensionPoint: "com.apple.widget-extension", entitlements: requested, in: set)
        #expect(widget.appGroups == ["group.com.example"])
        #expect(!widget.hostNetwork, "the widget policy grants no network")
        #expect(widget.refusedEntitlements.contains(Entitlements.networkClientKey))
    }

    @Test func unknownPointFallsBackToDefaults() {
        let eff = EffectivePolicy(extensionPoint: "com.apple.message-payload-provider", in: set)
        #expect(eff.usesDefaults)
        #expect(eff.policy.memory.activeHardLimit == set.defaults.memory.activeHardLimit)
    }
}
