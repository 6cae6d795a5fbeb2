import AppexCommandSupport
import AppexPolicy
import ArgumentParser
import Foundation

/// `appex policy check [DIR]` and `appex policy show POINT`.
struct PolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Check and show extension-point policies.",
        subcommands: [Check.self, Show.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Load a policy tree (the shipped one by default) and report every error with file, line and key.")

        @Argument(help: "A policy directory (defaults.yaml, extension-points/, syscall-groups/). Without one, the shipped policies.")
        var directory: String?

        @Flag(name: .customLong("overlay"), help: "Check DIR layered over the shipped policies instead of on its own.")
        var overlay = false

        func run() throws {
            if let directory, !FileManager.default.fileExists(atPath: directory) {
                throw CommandFailure(.noInput, "appex policy check: \(directory): no such file or directory")
            }
            let dirs: [String]
            if let directory, !overlay {
                dirs = [directory]
            } else {
                guard let shipped = PolicyLocator.shippedDirectory() else { throw ValidationError("shipped policies not found") }
                dirs = [shipped] + (directory.map { [$0] } ?? [])
            }
            do {
                let set = try PolicySet.load(directories: dirs)
                let points = set.byExtensionPoint.count
                print(
                    "\(dirs.joined(separator: " + ")): ok: \(set.extensionPointPolicies.count) policies covering \(points) extension points, \(set.groups.count) syscall groups"
                )
            } catch let errors as PolicyErrors {
                for e in errors.errors { print("error: \(e)") }
                throw ExitCode(1)
            } catch let error as PolicyError {
                print("error: \(error)")
                throw ExitCode(1)
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Print the resolved policy of an extension point as JSON.")

        @Argument(help: "An NSExtensionPointIdentifier, e.g. com.apple.share-services.")
        var extensionPoint: String

        @OptionGroup var policyOverlays: PolicyOverlayOptions

        func run() throws {
            let set = try PolicyLocator.load(overlays: policyOverlays.directories)
            guard set.byExtensionPoint[extensionPoint] != nil else {
                throw CommandFailure(
                    .noInput,
                    "appex policy show: no policy covers extension point \(extensionPoint); "
                        + "the policies cover: \(set.byExtensionPoint.keys.sorted().joined(separator: ", "))")
            }
            try JSONOutput.print(EffectivePolicy(extensionPoint: extensionPoint, in: set).jsonObject)
        }
    }
}
