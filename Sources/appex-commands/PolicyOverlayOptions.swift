import ArgumentParser

/// `--policy-dir DIR` (repeatable), the policy overlays every command takes under one name.
/// `--policies` was its name on appexd, request, profile and report: still read, not shown.
struct PolicyOverlayOptions: ParsableArguments {
    @Option(name: .customLong("policy-dir"), help: "A directory of policy files layered over the shipped ones (repeatable).")
    var policyDirs: [String] = []

    @Option(name: .customLong("policies"), help: .hidden)
    var oldName: [String] = []

    func validate() throws {
        // The layers' order matters; two names would hide it.
        if !policyDirs.isEmpty && !oldName.isEmpty {
            throw ValidationError("--policies is the old name of --policy-dir: give every overlay with --policy-dir")
        }
    }

    /// The overlays, in the order given.
    var directories: [String] { policyDirs + oldName }
}
